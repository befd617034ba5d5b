package sipac

import (
	"sync"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Algorithms lists what the network offers, as templates (the radix-dependent ones are built per
// radix, under the same names), for --strategy and `ddlest nets`. The slice is shared: read only.
func Algorithms() []collective.Algorithm { return templates }

var templates = offered(0)

func offered(r int) []collective.Algorithm {
	return []collective.Algorithm{SiPCO(r), RSAG(r), collective.Mesh, GrayRing(r), collective.HRingTableII(r), collective.RHD, collective.Tree, collective.Linear}
}

var byRadix sync.Map // r → []collective.Algorithm

// algorithms is what a network of radix r offers (built once per radix).
func algorithms(r int) []collective.Algorithm {
	if a, ok := byRadix.Load(r); ok {
		return a.([]collective.Algorithm)
	}
	a, _ := byRadix.LoadOrStore(r, offered(r))
	return a.([]collective.Algorithm)
}

// levelsOf is j when p = r^j, else 0.
func levelsOf(p, r int) int {
	if r < 2 {
		return 0
	}
	j := 0
	for n := 1; n < p; n *= r {
		j++
	}
	if pow(r, j) != p {
		return 0
	}
	return j
}

// allPeers is the pattern in which every member sends to each of its r − 1 peers on every one of
// the j levels its index spans (digit k: stride r^k, size r): all the group's WSS ports busy.
func allPeers(r, j int) collective.Pattern {
	var pt collective.Pattern
	for k, stride := 0, 1; k < j; k, stride = k+1, stride*r {
		pt = pt.With(collective.Part{Kind: collective.Peers, Stride: int32(stride), Size: int32(r)})
	}
	return pt
}

// SiPCO is Algorithm 1 (SiPAC §V-A) on a group of p = r^j members (j levels, j ≤ 4):
//
//	all-reduce  the message in r·j chunks of S/(rj), j groups of r; step 0 scatters group l on
//	            level l to the r − 1 peers (each the chunk of its digit) and reduces; steps
//	            1 … j−1 rotate the groups, s + l mod j on level l, and multicast the partial
//	            chunk to the level's peers, who reduce; step j multicasts the reduced chunks back
//	            on the level of step 0: j + 1 steps, every link carrying (r−1)·S/(rj) in each,
//	            (j+1)·α + (j+1)(r−1)/(jr)·S·β (Table II with L = j). At j = 1 it is the mesh.
//
// and, derived (reference/sipac.md §2.7, not from the paper), the message in j slices moved
// along the levels in rotated orders, every level busy in every step:
//
//	reduce-scatter  j steps of (S/j)/r^(s+1) per peer: j·α + (p−1)/(pj)·S·β
//	all-gather      the mirror image, j steps of (S/j)/r^(j−s): j·α + (p−1)/(pj)·S·β
//	all-to-all      BCube's dimension-ordered relay, j steps of (S/j)/r: j·α + (r−1)/r·S·β
//	broadcast       slice i multicast along levels i, i+1, … from the CUs that hold it, j steps
//	                of S/j: j·α + (r−1)·S·β (not pipelined)
//	reduce          the mirror image, the partial slices summed towards the root: the same
//
// The rooted ops' rounds are priced as if every CU sent on every level: the busiest link (a
// holder's port of the step's level) carries (r−1)·S/j either way, so the step costs the same.
//
// A group whose size is not a power of r is declined.
func SiPCO(r int) collective.Flow {
	return collective.NewFlow("sipco", "SiPCO (SiPAC Algorithm 1): all-reduce in L+1 steps on all L ports; reduce-scatter, all-gather, all-to-all, broadcast and reduce derived (not from the paper)",
		collective.Ops(network.AllReduce, network.ReduceScatter, network.AllGather, network.AllToAll, network.Broadcast, network.Reduce),
		func(op network.Op, s units.Bytes, g collective.Members, out *collective.Flows) error {
			p := g.P()
			j := levelsOf(p, r)
			if j == 0 || j > MaxLevels {
				return collective.Decline("sipco needs a group of r^j members (r = %d, j ≤ %d), not %d", r, MaxLevels, p)
			}
			pt := allPeers(r, j)
			out.Algorithm = "sipco"
			if op != network.AllReduce {
				out.Algorithm = "sipco (derived)"
			}
			slice := s / units.Bytes(j)
			rr := units.Bytes(r)
			switch op {
			case network.AllReduce:
				chunk := s / units.Bytes(r*j)
				out.Rounds = append(out.Rounds,
					collective.Round{Pattern: pt, Bytes: chunk, Repeat: j, FanIn: r, ReduceBytes: units.Bytes(j) * chunk},
					collective.Round{Pattern: pt, Bytes: chunk})
			case network.ReduceScatter:
				x := slice
				for range j {
					x /= rr
					out.Rounds = append(out.Rounds, collective.Round{Pattern: pt, Bytes: x, FanIn: r, ReduceBytes: units.Bytes(j) * x})
				}
			case network.AllGather:
				x := slice / units.Bytes(pow(r, j))
				for range j {
					out.Rounds = append(out.Rounds, collective.Round{Pattern: pt, Bytes: x})
					x *= rr
				}
			case network.AllToAll:
				out.Rounds = append(out.Rounds, collective.Round{Pattern: pt, Bytes: slice / rr, Repeat: j})
			case network.Broadcast:
				out.Rounds = append(out.Rounds, collective.Round{Pattern: pt, Bytes: slice, Repeat: j})
			case network.Reduce:
				out.Rounds = append(out.Rounds, collective.Round{Pattern: pt, Bytes: slice, Repeat: j, FanIn: r, ReduceBytes: s})
			}
			return nil
		})
}

// RSAG is the all-reduce as SiPCO's derived reduce-scatter then all-gather (reference/sipac.md
// §2.7, not from the paper): 2j steps, the j-port bandwidth bound 2(p−1)/(pj)·S·β; SiPCO has
// fewer steps, this fewer bytes (best picks per size).
func RSAG(r int) collective.Flow {
	sipco := SiPCO(r)
	return collective.NewFlow("sipco-rsag", "all-reduce as SiPCO-style reduce-scatter + all-gather on all L ports, 2L steps (derived, not from the paper)",
		collective.Ops(network.AllReduce),
		func(_ network.Op, s units.Bytes, g collective.Members, out *collective.Flows) error {
			if err := sipco.Rounds(network.ReduceScatter, s, g, out); err != nil {
				return err
			}
			if err := sipco.Rounds(network.AllGather, s, g, out); err != nil {
				return err
			}
			out.Algorithm = "sipco-rsag (derived)"
			return nil
		})
}

// GrayRing is the ring on SiPAC: members in reflected base-r Gray-code order, so that ring
// neighbours differ in one digit and are one WSS hop apart (for even r the wrap-around too; for
// odd r it crosses every level). A group whose size is not a power of r rings in rank order. The
// rooted ops, send/recv and all-to-all are the generic ring's.
func GrayRing(r int) collective.Flow {
	return collective.NewFlow("ring", "ring in reflected base-r Gray-code order: every neighbour one WSS hop away (the generic ring for the other ops)",
		func(network.Op) bool { return true },
		func(op network.Op, s units.Bytes, g collective.Members, out *collective.Flows) error {
			p := g.P()
			j := levelsOf(p, r)
			switch op {
			case network.AllReduce, network.ReduceScatter, network.AllGather, network.Barrier:
				if j > 1 && p > 1 {
					out.Algorithm = "ring (Gray order)"
					var rad [collective.MaxGrayDigits]int // j ≤ 31: p = r^j < 2^31
					for i := range j {
						rad[i] = r
					}
					pt := collective.One(collective.TablePart(collective.GrayTable(rad[:j]...)))
					return collective.RingOver(op, s, p, pt, g, out)
				}
			}
			return collective.Ring.Rounds(op, s, g, out)
		})
}
