package wdmring

import (
	"math"
	"math/bits"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// BT is the paper's binary tree (WRHT §3.3, Fig. 2a; MXNet's tree all-reduce, ref. [33]),
// unpipelined: in reduce step i = 1 … ⌈log2 p⌉ the member at offset 2^(i−1) of every run of 2^i
// sends the whole buffer to the run's first member, one wavelength each; the broadcast reverses
// it. All-reduce takes 2⌈log2 p⌉ steps of S (Table 1). Not the pipelined tree of the other
// networks (collective.Tree): the ring's reconfiguration before every step makes chunks cost.
type BT struct{}

func (BT) Name() string { return "tree" }
func (BT) Summary() string {
	return "wdmring: the paper's binary tree, unpipelined: 2⌈log2 p⌉ steps of the whole buffer (WRHT §3.3, Table 1)"
}
func (BT) Implements(op network.Op) bool {
	return op == network.AllReduce || op == network.Reduce || op == network.Broadcast
}

func (BT) steps(m *model, op network.Op, s units.Bytes, p int, out *[]ringStep) (string, error) {
	lg := bits.Len(uint(p - 1)) // ⌈log2 p⌉
	if op != network.Broadcast {
		for i := 1; i <= lg; i++ {
			*out = append(*out, ringStep{key: stepKey{kind: kBTUp, level: int32(i)}, bytes: s, fanIn: 2, reduce: s})
		}
	}
	if op != network.Reduce {
		for i := lg; i >= 1; i-- {
			*out = append(*out, ringStep{key: stepKey{kind: kBTDown, level: int32(i)}, bytes: s})
		}
	}
	return "binary tree", nil
}

// btPaths is reduce step i's lightpaths (down: the broadcast's, reversed).
func btPaths(p, i int, down bool, dst []Lightpath) []Lightpath {
	half := 1 << (i - 1)
	for m := half; m < p; m += 2 * half {
		if down {
			dst = append(dst, Lightpath{Src: int32(m - half), Dst: int32(m)})
		} else {
			dst = append(dst, Lightpath{Src: int32(m), Dst: int32(m - half)})
		}
	}
	return dst
}

// HRing is the hierarchical ring of Ueno & Yokota (CCGRID'19, WRHT ref. [28]) with h members per
// intra group (hring_group): reduce-scatter in each group's ring, all-reduce of each group's
// share across the p/h groups (h parallel rings), all-gather in each group. Its steps are Table
// 1's, S_H = 2(h² + p)/h − 3 when ⌈h/w⌉ = 1 and 2(2h² + p)/h − 6 otherwise, split as
// S_intra = 2(h−1) + 1 or 4(h−1) steps in the groups and S_inter = ⌈2(p/h − 1)⌉ across them:
// the rounding reproduces Table 1's 417 from 416.6 (reference/wrht.md §2.4, A8). Per-step sizes
// follow hring_size: i, every step S/p ("ring-based", WRHT §5.2); ii, S/h in the groups and S/p
// across (Ueno–Yokota's semantics).
type HRing struct{}

func (HRing) Name() string { return "hring" }
func (HRing) Summary() string {
	return "wdmring: hierarchical ring of Ueno & Yokota, h members per group (WRHT Table 1 steps)"
}
func (HRing) Implements(op network.Op) bool { return op == network.AllReduce }

// HRingSteps is Table 1's step split for p members in groups of h on w wavelengths.
func HRingSteps(p, h, w int) (intra, inter int) {
	if p <= 1 {
		return 0, 0
	}
	h = min(h, p)
	if (h+w-1)/w == 1 {
		intra = 2*(h-1) + 1
	} else {
		intra = 4 * (h - 1)
	}
	// ⌈·⌉ of a real count (416.6 → 417); the 1e-9 keeps an integral count from rounding up on a
	// last-bit error.
	inter = int(math.Ceil(2*(float64(p)/float64(h)-1) - 1e-9))
	return intra, inter
}

func (HRing) steps(m *model, op network.Op, s units.Bytes, p int, out *[]ringStep) (string, error) {
	h := min(m.cfg.HRingGroup, p)
	intra, inter := HRingSteps(p, h, m.cfg.Wavelengths)
	small := s / units.Bytes(p)
	in := small
	if m.cfg.HRingSize == sizeUenoYokota {
		in = s / units.Bytes(h)
	}
	// The first half of each phase reduces (reduce-scatter), the rest moves reduced shares.
	add := func(kind stepKind, n int, b units.Bytes) {
		red := n / 2
		if red > 0 {
			*out = append(*out, ringStep{key: stepKey{kind: kind, size: int32(h)}, bytes: b, fanIn: 2, reduce: b, repeat: red})
		}
		if n-red > 0 {
			*out = append(*out, ringStep{key: stepKey{kind: kind, size: int32(h)}, bytes: b, repeat: n - red})
		}
	}
	add(kIntra, intra, in)
	if inter > 0 {
		add(kInter, inter, small)
	}
	return "hierarchical ring", nil
}

// hringPaths is one intra-group round (every member to the next of its group of h, the last
// back to the first) or one inter-group round (member j of group g to member j of the next
// group; the rings of odd j run the other way, so the h parallel rings use ⌈h/2⌉ wavelengths on
// each fibre rather than h on one).
func hringPaths(p, h int, inter bool, dst []Lightpath) []Lightpath {
	groups := (p + h - 1) / h
	size := func(g int) int { return min(h, p-g*h) }
	for g := 0; g < groups; g++ {
		for j := 0; j < size(g); j++ {
			src := int32(g*h + j)
			if !inter {
				dst = append(dst, Lightpath{Src: src, Dst: int32(g*h + (j+1)%size(g))})
				continue
			}
			// The next group (previous for odd j) that has a member j.
			step := 1
			if j%2 == 1 {
				step = groups - 1
			}
			next := (g + step) % groups
			for size(next) <= j {
				next = (next + step) % groups
			}
			if next != g {
				dir := CW
				if j%2 == 1 {
					dir = CCW
				}
				dst = append(dst, Lightpath{Src: src, Dst: int32(next*h + j), Dir: dir})
			}
		}
	}
	return dst
}
