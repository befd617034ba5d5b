package collective

import (
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Ring is a single logical ring through every member in rank order (Patarasuk & Yuan 2009 for
// reduce-scatter/all-gather/all-reduce; Thakur, Rabenseifner & Gropp 2005 for the rooted ops).
// On levels its steps run at the pace of the worst link the ring crosses (its wrap-around closes
// over every level). S is the nccl-tests size; p members.
//
//	reduce-scatter  p−1 rounds of S/p to the next member, each ending in a 2-to-1 reduction
//	all-gather      p−1 rounds of S/p
//	all-reduce      reduce-scatter + all-gather: 2(p−1) rounds of S/p
//	reduce          reduce-scatter + gather of the p−1 reduced chunks to the root (Rabenseifner)
//	scatter, gather p−1 rounds of S/p around the ring
//	all-to-all      pairwise exchange: p−1 rounds of S/p, round k to the member k away (XOR
//	                partner for powers of two); on levels each runs on the level its partner lies
//	                in (multi-hop on physical rings)
//	broadcast       pipelined chain of k chunks: p+k−2 rounds of S/k, k = PipelineChunks
//	barrier         a zero-byte all-reduce: 2(p−1) latency-only rounds
//	send-recv       one round of S
var Ring = Flow{name: "ring", summary: "single ring in rank order (pairwise exchange for all-to-all, pipelined chain for broadcast)",
	ops: allOps, rounds: ringRounds}

// BiRing is the bidirectional ring: half of the data travels each way round, so where members can
// drive both ring neighbours at once (torus dimensions, mesh boards) every round moves half the
// bytes; the rooted ops pipeline along both halves of the ring. On levels without duplex ports
// both halves share the link (the plain ring's time); a routed fabric finds out itself (a
// fat-tree NIC carries both halves).
var BiRing = Flow{name: "biring", summary: "bidirectional ring: half of the data each way round",
	ops: allOps, rounds: biringRounds}

// whole is a part over the whole group.
func whole(kind PartKind, p, k int) Part {
	return Part{Kind: kind, Stride: 1, Size: int32(p), K: int32(k)}
}

func ringRounds(op network.Op, s units.Bytes, g Members, out *Flows) error {
	p := g.P()
	out.Algorithm = "ring"
	if p <= 1 {
		return nil
	}
	if op == network.AllToAll {
		out.Algorithm = "pairwise exchange"
		pairwise(s/units.Bytes(p), 1, p, out)
		return nil
	}
	return RingOver(op, s, p, One(whole(RingNext, p, 1)), g, out)
}

// RingOver emits the ring schedule with pt as the neighbour exchange (one direction, or both
// at half weight).
func RingOver(op network.Op, s units.Bytes, p int, pt Pattern, g Members, out *Flows) error {
	chunk := s / units.Bytes(p)
	reduce := Round{Pattern: pt, Bytes: chunk, Repeat: p - 1, FanIn: 2, ReduceBytes: chunk}
	move := Round{Pattern: pt, Bytes: chunk, Repeat: p - 1}
	switch op {
	case network.ReduceScatter:
		out.add(reduce)
	case network.AllGather, network.Scatter, network.Gather, network.AllToAll:
		out.add(move)
	case network.AllReduce, network.Reduce:
		out.add(reduce)
		out.add(move)
	case network.Barrier:
		out.add(Round{Pattern: pt, Repeat: 2 * (p - 1)})
	case network.SendRecv:
		out.Algorithm = "direct"
		out.add(Round{Pattern: One(whole(Chain, p, 1)), Bytes: s})
	case network.Broadcast:
		chain := One(whole(Chain, p, 1))
		l, err := g.Link(chain)
		if err != nil {
			return err
		}
		k := PipelineChunks(s, p-1, l)
		out.Algorithm = "pipelined chain"
		out.add(Round{Pattern: chain, Bytes: s / units.Bytes(k), Repeat: k + p - 2})
	}
	return nil
}

func biringRounds(op network.Op, s units.Bytes, g Members, out *Flows) error {
	p := g.P()
	if p <= 2 || op == network.AllToAll {
		// All-to-all already sends each block the shorter way round.
		err := ringRounds(op, s, g, out)
		out.Algorithm = "bidirectional ring"
		return err
	}
	out.Algorithm = "bidirectional ring"
	if op == network.Broadcast {
		hops := p / 2 // two chains of ⌈(p−1)/2⌉ hops, each carrying half the message
		half := s / 2
		two := One(Part{Kind: TwoChains, K: int32(hops)})
		l, err := g.Link(two)
		if err != nil {
			return err
		}
		k := PipelineChunks(half, hops, l)
		out.add(Round{Pattern: two, Bytes: half / units.Bytes(k), Repeat: k + hops - 1})
		return nil
	}
	fwd, back := whole(RingNext, p, 1), whole(RingNext, p, -1)
	fwd.Weight, back.Weight = 0.5, 0.5 // the other half travels the other way at the same time
	return RingOver(op, s, p, One(fwd).With(back), g, out)
}

// pairwise emits the pairwise exchange (Thakur et al. 2005) on one digit (stride, size) of a
// p-member group: in round k = 1 … size−1 the member with digit d sends its block to d ⊕ k
// (powers of two) or d + k. On levels, the rounds whose partner lies inside a level-i unit run
// on level i, and on a physical ring a partner j positions away is min(j, n−j) hops.
func pairwise(block units.Bytes, stride, size int, out *Flows) {
	kind := Shift
	if size&(size-1) == 0 {
		kind = XOR
	}
	if size > 1 {
		out.add(Round{Pattern: One(Part{Kind: kind, Stride: int32(stride), Size: int32(size), K: 1}), Bytes: block, Repeat: size - 1, Vary: 1})
	}
}
