package collective

import (
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Ring is a single logical ring through every member in rank order (Patarasuk & Yuan 2009 for
// reduce-scatter/all-gather/all-reduce; Thakur, Rabenseifner & Gropp 2005 for the rooted ops). Its
// steps run at the pace of the worst link the ring crosses. S is the nccl-tests size; p members.
//
//	reduce-scatter  p−1 steps of S/p, each ending in a 2-to-1 reduction of S/p
//	all-gather      p−1 steps of S/p
//	all-reduce      reduce-scatter + all-gather: 2(p−1) steps of S/p
//	reduce          reduce-scatter + gather of the p−1 reduced chunks to the root (Rabenseifner)
//	scatter, gather p−1 steps of S/p through the root's link
//	all-to-all      pairwise exchange: p−1 steps of S/p, each on the level its partner lies in
//	                (multi-hop on physical rings; see pairwise)
//	broadcast       pipelined chain of k chunks: p+k−2 steps of S/k, k = PipelineChunks
//	barrier         a zero-byte all-reduce: 2(p−1) latency-only steps
//	send-recv       one step of S
func Ring(op network.Op, s units.Bytes, lay Layout) Schedule {
	if op == network.AllToAll {
		act := active(lay.Levels)
		sch := Schedule{Algorithm: "pairwise exchange"}
		if p := lay.members(); p > 1 {
			sch.Steps = pairwise(nil, s/units.Bytes(p), act, p)
		}
		return sch
	}
	return ringSchedule(op, s, lay.members(), critical(lay.Levels), "ring")
}

// BiRing is the bidirectional ring: half of the data travels each way round, so on levels whose
// members can drive both ring neighbours at once (torus dimensions) every step moves half the
// bytes; the rooted ops pipeline along both halves of the ring. Without such duplex levels it is
// the plain ring.
func BiRing(op network.Op, s units.Bytes, lay Layout) Schedule {
	m := merge(active(lay.Levels))
	if !m.Duplex || m.Size <= 2 || op == network.AllToAll {
		// All-to-all already sends each block the shorter way round.
		sch := Ring(op, s, lay)
		sch.Algorithm = "bidirectional ring"
		return sch
	}
	p := lay.members()
	if op == network.Broadcast {
		hops := p / 2 // two chains of ⌈(p−1)/2⌉ hops, each carrying half the message
		half := s / 2
		k := PipelineChunks(half, hops, m.Link)
		return Schedule{Algorithm: "bidirectional ring", Steps: []Step{{Link: m.Link, Bytes: half / units.Bytes(k), Repeat: k + hops - 1}}}
	}
	sch := ringSchedule(op, s, p, m.Link, "bidirectional ring")
	for i := range sch.Steps {
		sch.Steps[i].Bytes /= 2 // the other half travels the other way at the same time
	}
	return sch
}

func ringSchedule(op network.Op, s units.Bytes, p int, l Link, name string) Schedule {
	sch := Schedule{Algorithm: name}
	if p <= 1 {
		return sch
	}
	chunk := s / units.Bytes(p)
	steps := p - 1
	reduce := Step{Link: l, Bytes: chunk, FanIn: 2, ReduceBytes: chunk, Repeat: steps}
	move := Step{Link: l, Bytes: chunk, Repeat: steps}
	switch op {
	case network.ReduceScatter:
		sch.Steps = []Step{reduce}
	case network.AllGather, network.Scatter, network.Gather, network.AllToAll:
		sch.Steps = []Step{move}
	case network.AllReduce, network.Reduce:
		sch.Steps = []Step{reduce, move}
	case network.Barrier:
		sch.Steps = []Step{{Link: l, Repeat: 2 * steps}}
	case network.SendRecv:
		sch.Algorithm = "direct"
		sch.Steps = []Step{{Link: l, Bytes: s}}
	case network.Broadcast:
		k := PipelineChunks(s, p-1, l)
		sch.Algorithm = "pipelined chain"
		sch.Steps = []Step{{Link: l, Bytes: s / units.Bytes(k), Repeat: k + p - 2}}
	}
	return sch
}
