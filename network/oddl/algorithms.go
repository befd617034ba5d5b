package oddl

import (
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// HD is halving-doubling on ODDL (ODDL §3, Fig. 4; Rabenseifner): the all-reduce is a recursive-
// halving reduce-scatter (partners p/2, p/4, …, 1 members away, S/2, S/4, … S/p each) and a
// recursive-doubling all-gather (partners 1, 2, …, p/2), 2·log2 p steps; reduce-scatter and
// all-gather are one half each. Every partner differs in one bit of the node id: one hop through
// one dimension's WSS on the wavelength the per-job table gives the pair.
type HD struct{}

func (HD) Name() string { return "hd" }
func (HD) Summary() string {
	return "oddl: halving-doubling, one one-hop circuit per step, 2·log2 p steps for an all-reduce (ODDL §3)"
}
func (HD) Implements(op network.Op) bool {
	return op == network.AllReduce || op == network.ReduceScatter || op == network.AllGather
}

func (HD) steps(_ *model, op network.Op, s units.Bytes, g network.Group, out []step) ([]step, error) {
	if err := cube(g, "hd"); err != nil {
		return nil, err
	}
	p := int32(g.Size)
	if op != network.AllGather { // recursive halving: S/2, S/4, …
		b := s
		for d := p / 2; d >= 1; d /= 2 {
			b /= 2
			out = append(out, step{partner: d, bytes: b, reduce: true})
		}
	}
	if op != network.ReduceScatter { // recursive doubling: S/p, 2S/p, …
		b := s / units.Bytes(p)
		for d := int32(1); d < p; d *= 2 {
			out = append(out, step{partner: d, bytes: b})
			b *= 2
		}
	}
	return out, nil
}

// Ring is the ring all-reduce on a fixed ring circuit (ODDL §3: "ODDL can be reconfigured into
// ring topology"): the members in Gray-code order, each neighbour one bit and so one hop away, the
// laser tuned once; 2(p−1) steps of S/p, each with the handshake.
type Ring struct{}

func (Ring) Name() string { return "ring" }
func (Ring) Summary() string {
	return "oddl: ring on a fixed ring circuit (Gray-code order, one hop per neighbour), tuned once, 2(p−1) steps of S/p"
}
func (Ring) Implements(op network.Op) bool {
	return op == network.AllReduce || op == network.ReduceScatter || op == network.AllGather
}

func (Ring) steps(_ *model, op network.Op, s units.Bytes, g network.Group, out []step) ([]step, error) {
	if err := cube(g, "ring"); err != nil {
		return nil, err
	}
	p := g.Size
	b := s / units.Bytes(p)
	n := p - 1
	if op == network.AllReduce {
		n = 2 * (p - 1)
	}
	for i := 0; i < n; i++ {
		out = append(out, step{bytes: b, reduce: op != network.AllGather && i < p-1})
	}
	return out, nil
}

// A2A is the per-dimension (hierarchical) all-to-all of ODDL §6 (DeepSpeed-MoE's, ref. [51]):
// dimension by dimension, each member sends to its G−1 peers of the dimension one after another,
// each time the data of every destination sharing that peer's coordinate, S/G; Σ(G_d − 1) steps,
// the laser retuned every step. Not evaluated in the paper. Each dimension's table needs G−1
// wavelengths (a proper colouring of the complete graph on G nodes).
type A2A struct{}

func (A2A) Name() string { return "a2a" }
func (A2A) Summary() string {
	return "oddl: per-dimension all-to-all, Σ(G_d − 1) one-hop steps of S/G_d (ODDL §6, not evaluated in the paper)"
}
func (A2A) Implements(op network.Op) bool { return op == network.AllToAll }

func (A2A) steps(m *model, _ network.Op, s units.Bytes, g network.Group, out []step) ([]step, error) {
	if err := cube(g, "a2a"); err != nil {
		return nil, err
	}
	// The group's member bits, split by the dimension each lands in.
	var size, first [4]int
	lo := log2(g.Stride)
	for b := 0; b < log2(g.Size); b++ {
		d := m.dimOfBit[lo+b]
		if size[d] == 0 {
			size[d], first[d] = 1, b
		}
		size[d] *= 2
	}
	for d := len(m.dims) - 1; d >= 0; d-- {
		G := size[d]
		if G < 2 {
			continue
		}
		if m.cfg.Lambdas != 0 && m.cfg.Lambdas < G-1 {
			return nil, collective.Decline("an all-to-all among %d nodes of one dimension needs %d wavelengths, the laser has %d", G, G-1, m.cfg.Lambdas)
		}
		for t := 1; t < G; t++ {
			out = append(out, step{partner: int32(t) << first[d], bytes: s / units.Bytes(G)})
		}
	}
	return out, nil
}

// P2P is a point-to-point send on its own circuit: one step.
type P2P struct{}

func (P2P) Name() string { return "p2p" }
func (P2P) Summary() string {
	return "oddl: a send on its own one-hop circuit (the pipeline's neighbours in the per-job table)"
}
func (P2P) Implements(op network.Op) bool { return op == network.SendRecv }

func (P2P) steps(_ *model, _ network.Op, s units.Bytes, _ network.Group, out []step) ([]step, error) {
	return append(out, step{bytes: s}), nil
}

var _ = []collective.Algorithm{HD{}, Ring{}, A2A{}, P2P{}}
