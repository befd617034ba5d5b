package collective

import (
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Mesh is the mesh all-reduce (SiPAC Table II, refs. [35], [72]): every member sends S/p to every
// other at once and reduces (a linear reduce-scatter), then sends its reduced S/p to every other
// (a linear all-gather): 2 steps, 2α + 2(p−1)/p·S·β through one port. Reduce-scatter and
// all-gather are one step each. Its all-to-all traffic shares links that levels do not see: it
// runs on routed fabrics.
var Mesh = NewFlow("mesh", "mesh: every member sends to all others at once, 2 steps for all-reduce (SiPAC Table II)",
	Ops(network.AllReduce, network.ReduceScatter, network.AllGather),
	func(op network.Op, s units.Bytes, g Members, out *Flows) error {
		p := g.P()
		out.Algorithm = "mesh"
		all := One(Part{Kind: Uniform})
		chunk := s / units.Bytes(p)
		if op != network.AllGather {
			out.Rounds = append(out.Rounds, Round{Pattern: all, Bytes: chunk, FanIn: p, ReduceBytes: chunk})
		}
		if op != network.ReduceScatter {
			out.Rounds = append(out.Rounds, Round{Pattern: all, Bytes: chunk})
		}
		return nil
	})

// HRingTableII is the hierarchical ring exactly as SiPAC Table II prices it (ref. [34]): groups
// of k members ("the number of CUs in a physical group"), 4(k−1) steps on the ring inside a
// group (an all-reduce before and one after) and 2(p/k−1) on the ring across groups, every step
// moving S/k: [4(k−1) + 2(p/k−1)]·(α + S/k·β). Pessimistic, documented as the paper's (a standard
// two-level ring, Hierarchical, sends S/p across groups and 2(k−1) steps inside;
// reference/sipac.md §2.5(3)). k = 0 takes the group's first level (a DGX on SuperPod, a torus
// row): a network without levels declines it.
func HRingTableII(k int) Flow {
	return NewFlow("hring", "hierarchical ring exactly as SiPAC Table II: 4(k−1)+2(p/k−1) steps of S/k, k = CUs per physical group (pessimistic)",
		Ops(network.AllReduce),
		func(_ network.Op, s units.Bytes, g Members, out *Flows) error {
			p, k := g.P(), k
			if k == 0 {
				if lv := g.Layout().Levels; len(lv) > 1 && lv[0].Size > 1 {
					k = lv[0].Size
				}
			}
			if k < 2 || p%k != 0 {
				return Decline("hring (Table II) needs a group that is a whole number (≥ 1) of physical groups of k ≥ 2 members (k = %d), not %d", k, p)
			}
			out.Algorithm = "hring (Table II)"
			x := s / units.Bytes(k)
			intra := One(Part{Kind: Shift, Stride: 1, Size: int32(k), K: 1})
			inter := One(Part{Kind: Shift, Stride: int32(k), Size: int32(p / k), K: 1})
			out.Rounds = append(out.Rounds,
				Round{Pattern: intra, Bytes: x, Repeat: k - 1, FanIn: 2, ReduceBytes: x},
				Round{Pattern: intra, Bytes: x, Repeat: k - 1})
			if q := p / k; q > 1 {
				out.Rounds = append(out.Rounds,
					Round{Pattern: inter, Bytes: x, Repeat: q - 1, FanIn: 2, ReduceBytes: x},
					Round{Pattern: inter, Bytes: x, Repeat: q - 1})
			}
			out.Rounds = append(out.Rounds, Round{Pattern: intra, Bytes: x, Repeat: 2 * (k - 1)})
			return nil
		})
}
