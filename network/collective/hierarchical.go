package collective

import (
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Hierarchical runs one ring per level (Ueno & Yokota 2019, generalised to every collective as
// in RAMP §7.6). With levels p_1 (innermost) … p_h and chunk_i = S / (p_1 ⋯ p_i):
//
//	reduce-scatter  levels inner→outer: p_i − 1 steps of chunk_i with 2-to-1 reductions
//	all-gather      levels outer→inner: p_i − 1 steps of chunk_i
//	all-reduce      reduce-scatter + all-gather: 2 Σ (p_i − 1) steps
//	reduce          reduce-scatter + gather of the reduced chunks to the root
//	scatter         levels outer→inner: p_i − 1 steps of S / (p_i ⋯ p_h) from the level's leader
//	gather          the mirror of scatter
//	all-to-all      levels inner→outer: a pairwise exchange of S/p_i blocks per level (each phase
//	                redistributes the whole buffer)
//	broadcast       levels outer→inner: a pipelined chain per level
//	barrier         2(p_i − 1) latency steps per level
//
// The same bytes cross the network as with a single ring (except for all-to-all), but the number
// of steps falls from 2(p−1) to 2Σ(p_i−1) and the large chunks stay on the fast inner levels.
func Hierarchical(op network.Op, s units.Bytes, lay Layout) Schedule {
	return hierarchical(op, s, active(lay.Levels), "hierarchical ring")
}

// Torus2D is the 2D-torus algorithm (Mikami et al. 2018): the innermost level is one dimension,
// all outer levels together the other, and the hierarchical schedule runs on those two.
func Torus2D(op network.Op, s units.Bytes, lay Layout) Schedule {
	act := active(lay.Levels)
	if len(act) > 2 {
		act = []Level{act[0], merge(act[1:])}
	}
	return hierarchical(op, s, act, "2D-torus")
}

func hierarchical(op network.Op, s units.Bytes, act []Level, name string) Schedule {
	sch := Schedule{Algorithm: name}
	if len(act) == 0 {
		return sch
	}
	n := len(act)
	// chunk[i] = S / (p_0 ⋯ p_i); outer[i] = p_i ⋯ p_{n−1}.
	chunk := make([]units.Bytes, n)
	outer := make([]int, n)
	c := s
	for i, l := range act {
		c /= units.Bytes(l.Size)
		chunk[i] = c
	}
	o := 1
	for i := n - 1; i >= 0; i-- {
		o *= act[i].Size
		outer[i] = o
	}
	up := func(reduce bool) {
		for i, l := range act {
			st := Step{Link: l.Link, Bytes: chunk[i], Repeat: l.Size - 1}
			if reduce {
				st.FanIn, st.ReduceBytes = 2, chunk[i]
			}
			sch.Steps = append(sch.Steps, st)
		}
	}
	down := func() {
		for i := n - 1; i >= 0; i-- {
			sch.Steps = append(sch.Steps, Step{Link: act[i].Link, Bytes: chunk[i], Repeat: act[i].Size - 1})
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
			sch.Steps = append(sch.Steps, Step{Link: act[i].Link, Bytes: s / units.Bytes(outer[i]), Repeat: act[i].Size - 1})
		}
	case network.Gather:
		for i, l := range act {
			sch.Steps = append(sch.Steps, Step{Link: l.Link, Bytes: s / units.Bytes(outer[i]), Repeat: l.Size - 1})
		}
	case network.AllToAll:
		for _, l := range act {
			sch.Steps = pairwise(sch.Steps, s/units.Bytes(l.Size), []Level{l}, l.Size)
		}
	case network.Broadcast:
		for i := n - 1; i >= 0; i-- {
			l := act[i]
			k := PipelineChunks(s, l.Size-1, l.Link)
			sch.Steps = append(sch.Steps, Step{Link: l.Link, Bytes: s / units.Bytes(k), Repeat: k + l.Size - 2})
		}
	case network.Barrier:
		for _, l := range act {
			sch.Steps = append(sch.Steps, Step{Link: l.Link, Repeat: 2 * (l.Size - 1)})
		}
	case network.SendRecv:
		sch.Algorithm = "direct"
		sch.Steps = []Step{{Link: critical(act), Bytes: s}}
	}
	return sch
}
