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
func RHD(op network.Op, s units.Bytes, lay Layout) Schedule {
	act := active(lay.Levels)
	p := lay.members()
	sch := Schedule{Algorithm: "recursive halving/doubling"}
	if p <= 1 {
		return sch
	}
	lg := bits.Len(uint(p)) - 1 // log2 p'
	pow2 := 1<<lg == p
	crit := critical(act)
	step := func(d int, b units.Bytes, reduce bool) Step {
		l, off := spans(act, d)
		link, load := shifted(l, off)
		st := Step{Link: link, Bytes: b, Load: load}
		if reduce {
			st.FanIn, st.ReduceBytes = 2, b
		}
		return st
	}
	halving := func(reduce bool) {
		if !pow2 {
			sch.Steps = append(sch.Steps, Step{Link: crit, Bytes: s, FanIn: 2, ReduceBytes: s})
		}
		b := s
		for k := 0; k < lg; k++ {
			b /= 2
			sch.Steps = append(sch.Steps, step(1<<k, b, reduce))
		}
	}
	doubling := func() {
		b := s / units.Bytes(int(1)<<lg)
		for k := lg - 1; k >= 0; k-- {
			sch.Steps = append(sch.Steps, step(1<<k, b, false))
			b *= 2
		}
		if !pow2 {
			sch.Steps = append(sch.Steps, Step{Link: crit, Bytes: s})
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
		sch.Algorithm = "binomial scatter + recursive doubling"
		halving(false)
		doubling()
	case network.AllToAll:
		sch.Algorithm = "Bruck"
		for k := 0; k < ceilLg; k++ {
			sch.Steps = append(sch.Steps, step(1<<k, s/2, false))
		}
	case network.Barrier:
		sch.Algorithm = "dissemination"
		for k := 0; k < ceilLg; k++ {
			sch.Steps = append(sch.Steps, step(1<<k, 0, false))
		}
	case network.SendRecv:
		sch.Algorithm = "direct"
		sch.Steps = []Step{{Link: crit, Bytes: s}}
	}
	return sch
}
