package collective

import (
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Hierarchical runs one ring per level (Ueno & Yokota 2019, generalised to every collective as
// in RAMP §7.6). With levels p_1 (innermost) … p_h and chunk_i = S / (p_1 ⋯ p_i):
//
//	reduce-scatter  levels inner→outer: p_i − 1 rounds of chunk_i with 2-to-1 reductions
//	all-gather      levels outer→inner: p_i − 1 rounds of chunk_i
//	all-reduce      reduce-scatter + all-gather: 2 Σ (p_i − 1) rounds
//	reduce          reduce-scatter + gather of the reduced chunks to the root
//	scatter         levels outer→inner: p_i − 1 rounds of S / (p_i ⋯ p_h) from the level's leader
//	gather          the mirror of scatter
//	all-to-all      levels inner→outer: a pairwise exchange of S/p_i blocks per level (each phase
//	                redistributes the whole buffer)
//	broadcast       levels outer→inner: a pipelined chain per level
//	barrier         2(p_i − 1) latency rounds per level
//
// The same bytes cross the network as with a single ring (except for all-to-all), but the number
// of rounds falls from 2(p−1) to 2Σ(p_i−1) and the large chunks stay on the fast inner levels.
// Level i is the digit (p_1 ⋯ p_{i−1}, p_i) of the member index; each round shifts one digit.
// When the group does not fill its outermost unit evenly (65,536 GPUs as 8 × 20 × 20 × 20.48)
// the rounds keep the layout's sizes and the missing members send nothing.
var Hierarchical = Flow{name: "hierarchical", summary: "one ring per level of the topology (Ueno & Yokota 2019; RAMP §7.6)",
	ops: allOps, rounds: func(op network.Op, s units.Bytes, g Members, out *Flows) error {
		return hierarchical(op, s, g, active(g.Layout().Levels), "hierarchical ring", out)
	}}

// Torus2D is the 2D-torus algorithm (Mikami et al. 2018): the innermost level is one dimension,
// all outer levels together the other, and the hierarchical schedule runs on those two.
var Torus2D = Flow{name: "torus2d", summary: "2D-torus all-reduce (Mikami et al. 2018): inner level, then the outer levels merged",
	ops: allOps, rounds: func(op network.Op, s units.Bytes, g Members, out *Flows) error {
		act := active(g.Layout().Levels)
		if len(act) > 2 {
			act = []Level{act[0], merge(act[1:])}
		}
		return hierarchical(op, s, g, act, "2D-torus", out)
	}}

// maxLevels bounds the levels of a layout.
const maxLevels = 8

func hierarchical(op network.Op, s units.Bytes, g Members, act []Level, name string, out *Flows) error {
	out.Algorithm = name
	p := g.P()
	n := len(act)
	if p <= 1 || n == 0 {
		return nil
	}
	if n > maxLevels {
		return Decline("more than %d levels", maxLevels)
	}
	var chunk, outer [maxLevels]units.Bytes
	var stride [maxLevels]int
	c, st := s, 1
	for i, l := range act {
		c /= units.Bytes(l.Size)
		chunk[i], stride[i] = c, st
		st *= l.Size
	}
	o := 1
	for i := n - 1; i >= 0; i-- {
		o *= act[i].Size
		outer[i] = units.Bytes(o)
	}
	digit := func(i int, kind PartKind) Pattern {
		return One(Part{Kind: kind, Stride: int32(stride[i]), Size: int32(act[i].Size), K: 1})
	}
	up := func(reduce bool) {
		for i, l := range act {
			r := Round{Pattern: digit(i, Shift), Bytes: chunk[i], Repeat: l.Size - 1}
			if reduce {
				r.FanIn, r.ReduceBytes = 2, chunk[i]
			}
			out.add(r)
		}
	}
	down := func() {
		for i := n - 1; i >= 0; i-- {
			out.add(Round{Pattern: digit(i, Shift), Bytes: chunk[i], Repeat: act[i].Size - 1})
		}
	}
	switch op {
	case network.ReduceScatter:
		up(true)
	case network.AllGather:
		down()
	case network.AllReduce, network.Reduce:
		up(true)
		down()
	case network.Scatter:
		for i := n - 1; i >= 0; i-- {
			out.add(Round{Pattern: digit(i, Shift), Bytes: s / outer[i], Repeat: act[i].Size - 1})
		}
	case network.Gather:
		for i, l := range act {
			out.add(Round{Pattern: digit(i, Shift), Bytes: s / outer[i], Repeat: l.Size - 1})
		}
	case network.AllToAll:
		for i, l := range act {
			pairwise(s/units.Bytes(l.Size), stride[i], l.Size, out)
		}
	case network.Broadcast:
		for i := n - 1; i >= 0; i-- {
			chain := digit(i, Chain)
			link, err := g.Link(chain)
			if err != nil {
				return err
			}
			k := PipelineChunks(s, act[i].Size-1, link)
			out.add(Round{Pattern: chain, Bytes: s / units.Bytes(k), Repeat: k + act[i].Size - 2})
		}
	case network.Barrier:
		for i, l := range act {
			out.add(Round{Pattern: digit(i, Shift), Repeat: 2 * (l.Size - 1)})
		}
	case network.SendRecv:
		out.Algorithm = "direct"
		out.add(Round{Pattern: One(whole(Chain, p, 1)), Bytes: s})
	}
	return nil
}
