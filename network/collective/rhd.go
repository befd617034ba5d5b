package collective

import (
	"math/bits"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// RHD is recursive halving/doubling (Rabenseifner 2004; Thakur, Rabenseifner & Gropp 2005): in
// step k members 2^k apart in rank order exchange, and the level that distance crosses sets the
// step's link (on a physical ring the message also travels min(k, n−k) hops). The largest
// messages go to the nearest, fastest partners (RAMP §7.4). With p' = 2^⌊log2 p⌋:
//
//	reduce-scatter  log2 p' halving steps, S/2, S/4, … at distances 1, 2, 4, …, with reductions
//	all-gather      the doubling steps in reverse
//	all-reduce      reduce-scatter + all-gather (Rabenseifner)
//	reduce          reduce-scatter + binomial gather
//	broadcast       binomial scatter + doubling all-gather (van de Geijn)
//	scatter, gather binomial trees, S/2, S/4, … per step
//	all-to-all      Bruck: ⌈log2 p⌉ steps of S/2 at distances 1, 2, 4, …
//	barrier         dissemination: ⌈log2 p⌉ latency-only steps
//
// When p is not a power of two, the p − p' extra members fold in before the halving (one step of
// S with a reduction) and out after the doubling (one step of S).
//
// Step k is an XOR of the member index with 2^k among the first p' members (a shift by 2^k for
// Bruck and dissemination), and the fold steps pair member m ≥ p' with m − p' (on levels: the
// critical link).
var RHD = Flow{name: "rhd", summary: "recursive halving/doubling (Rabenseifner; Bruck all-to-all, dissemination barrier)",
	ops: allOps, rounds: rhdRounds}

func rhdRounds(op network.Op, s units.Bytes, g Members, out *Flows) error {
	return halvingDoubling(op, s, g, out, false)
}

// HD is halving-doubling with the farthest partner first (ODDL §3, Fig. 4: node 1 meets 5, 3, 2,
// then 2, 3, 5): the reduce-scatter halves at distances p'/2, p'/4, …, 1 and the all-gather
// doubles back out, so the largest messages travel the farthest — the order ODDL's circuits are
// built for, and the one whose long steps collide on a fat tree (ODDL §5A). Otherwise as RHD.
var HD = Flow{name: "hd", summary: "halving-doubling, farthest partner first: S/2 to the member p/2 away, … (ODDL Fig. 4; RHD mirrored)",
	ops: Ops(network.AllReduce, network.ReduceScatter, network.AllGather), rounds: hdRounds}

func hdRounds(op network.Op, s units.Bytes, g Members, out *Flows) error {
	return halvingDoubling(op, s, g, out, true)
}

// halvingDoubling emits RHD's rounds, the halving at distances 1, 2, 4, … (far: p'/2, …, 1)
// and the doubling in the reverse order.
func halvingDoubling(op network.Op, s units.Bytes, g Members, out *Flows, far bool) error {
	out.Algorithm = "recursive halving/doubling"
	if far {
		out.Algorithm = "halving-doubling, far first"
	}
	p := g.P()
	if p <= 1 {
		return nil
	}
	lg := bits.Len(uint(p)) - 1
	pp := 1 << lg
	pow2 := pp == p
	xor := func(k int) Pattern {
		if far {
			k = lg - 1 - k
		}
		return xorPartners(pp, k)
	}
	halving := func(reduce bool) {
		if !pow2 {
			out.add(foldIn(pp, s))
		}
		b := s
		for k := 0; k < lg; k++ {
			b /= 2
			r := Round{Pattern: xor(k), Bytes: b}
			if reduce {
				r.FanIn, r.ReduceBytes = 2, b
			}
			out.add(r)
		}
	}
	doubling := func() {
		b := s / units.Bytes(pp)
		for k := lg - 1; k >= 0; k-- {
			out.add(Round{Pattern: xor(k), Bytes: b})
			b *= 2
		}
		if !pow2 {
			out.add(foldOut(pp, s))
		}
	}
	ceilLg := bits.Len(uint(p - 1))
	switch op {
	case network.ReduceScatter:
		halving(true)
	case network.AllGather, network.Gather:
		doubling()
	case network.AllReduce, network.Reduce:
		halving(true)
		doubling()
	case network.Scatter:
		halving(false)
	case network.Broadcast:
		out.Algorithm = "binomial scatter + recursive doubling"
		halving(false)
		doubling()
	case network.AllToAll:
		out.Algorithm = "Bruck"
		for k := 0; k < ceilLg; k++ {
			out.add(Round{Pattern: One(whole(Shift, p, 1<<k)), Bytes: s / 2})
		}
	case network.Barrier:
		out.Algorithm = "dissemination"
		for k := 0; k < ceilLg; k++ {
			out.add(Round{Pattern: One(whole(Shift, p, 1<<k))})
		}
	case network.SendRecv:
		out.Algorithm = "direct"
		out.add(Round{Pattern: One(whole(Chain, p, 1)), Bytes: s})
	}
	return nil
}

// RD is full-vector recursive doubling all-reduce (Thakur, Rabenseifner & Gropp 2005 §4.4: the
// MPICH choice for short messages): in step k members 2^k apart exchange the whole buffer S and
// each reduces it, ⌈log2 p'⌉ steps with p' = 2^⌊log2 p⌋, the p − p' extra members folding in
// before (S with a reduction) and out after (S). The WRHT paper's electrical baseline "RD"
// (reference/wrht.md A9; Rabenseifner's halving/doubling is RHD).
var RD = Flow{name: "rd", summary: "recursive doubling all-reduce: log2 p exchanges of the whole buffer (MPICH short messages)",
	ops: Ops(network.AllReduce), rounds: rdRounds}

func rdRounds(op network.Op, s units.Bytes, g Members, out *Flows) error {
	out.Algorithm = "recursive doubling"
	p := g.P()
	if p <= 1 {
		return nil
	}
	lg := bits.Len(uint(p)) - 1
	pp := 1 << lg
	if pp != p {
		out.add(foldIn(pp, s))
	}
	for k := 0; k < lg; k++ {
		out.add(Round{Pattern: xorPartners(pp, k), Bytes: s, FanIn: 2, ReduceBytes: s})
	}
	if pp != p {
		out.add(foldOut(pp, s))
	}
	return nil
}

// xorPartners pairs each of the first pp members with the one whose index differs in bit k.
func xorPartners(pp, k int) Pattern {
	return One(Part{Kind: XOR, Stride: 1, Size: int32(pp), K: 1 << k, Limit: int32(pp)})
}

// foldIn is the round in which the p − pp extra members send their s bytes to a partner among the
// first pp, which reduces them; foldOut returns the result.
func foldIn(pp int, s units.Bytes) Round {
	return Round{Pattern: One(Part{Kind: FoldIn, K: int32(pp)}), Bytes: s, FanIn: 2, ReduceBytes: s}
}

func foldOut(pp int, s units.Bytes) Round {
	return Round{Pattern: One(Part{Kind: FoldOut, K: int32(pp)}), Bytes: s}
}
