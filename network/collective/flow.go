package collective

import (
	"sync"

	"github.com/ddlest/ddlest/internal/units"
)

// Round is one synchronised step of a flow algorithm: every member of every concurrent group
// sends what its Pattern says, each flow carrying Bytes per unit of its part's weight, and the
// round ends when the slowest flow and the receivers' reductions are done. A routed fabric turns
// a round into a Step (slowest path latency, busiest link) and Price sums the steps.
type Round struct {
	Pattern Pattern
	Bytes   units.Bytes // per unit weight
	Repeat  int         // identical consecutive rounds (0 counts as 1)
	// FanIn > 1: each member ends the round with a FanIn-to-1 reduction of ReduceBytes per input.
	FanIn       int
	ReduceBytes units.Bytes
	// Reconfig is circuit set-up time before the round.
	Reconfig units.Seconds
}

// PartKind is a shape of member-to-member traffic. Members are numbered 0 … p−1 in the group's
// rank order; a "digit" (Stride, Size) of member m is ⌊m/Stride⌋ mod Size, the member's position
// along one level of a hierarchical decomposition (Stride 1, Size p: the whole group).
type PartKind uint8

const (
	// RingNext: every member sends to the member K (±1) ahead on the logical ring through the
	// whole group. Its wrap-around crosses every level, so levels price it on the critical one.
	RingNext PartKind = iota
	// Shift: every member sends to the member whose digit is d + K mod Size (K may be negative).
	// On levels it runs on the level its distance spans (exact for XOR partners; for shifts the
	// members that wrap cross further, which the level form does not see).
	Shift
	// Chain: digit d sends to d + 1 for d < Size − 1 (a pipelined chain from digit 0).
	Chain
	// TwoChains: a chain 0 → 1 → … → K and a chain 0 → p−1 → p−2 → … → K+1 (bidirectional
	// broadcast).
	TwoChains
	// XOR: the member whose digit is d sends to the one whose digit is d ⊕ K.
	XOR
	// FoldIn: members m ≥ K send to m − K (the extra members of a non-power-of-two group, K the
	// largest power of two ≤ p); FoldOut is the reverse, m < p − K sends to m + K.
	FoldIn
	FoldOut
	// TreeDown: member i sends to 2i+1 and 2i+2 (a binary heap); TreeUp: children send to their
	// parent ⌊(i−1)/2⌋.
	TreeDown
	TreeUp
	// Uniform: every member sends to every other member (a linear all-to-all). A fabric loads it
	// from the aggregated traffic matrix, never flow by flow.
	Uniform
	// Table: member m sends to Table.Next[m] (negative: nothing).
	Table
)

// Part is one component of a pattern.
type Part struct {
	Kind         PartKind
	Stride, Size int // the digit (Shift, Chain, XOR); Size = p and Stride = 1 for the whole group
	K            int
	// Limit > 0: only members m < Limit take part (recursive halving among the first 2^⌊log2 p⌋).
	Limit  int
	Weight float64 // bytes of each flow = Round.Bytes × Weight (0 counts as 1)
	Table  *Successors
}

// W is the part's weight (0 counts as 1).
func (p Part) W() float64 {
	if p.Weight == 0 {
		return 1
	}
	return p.Weight
}

// MaxParts bounds the parts of one pattern.
const MaxParts = 4

// Pattern is who sends to whom in a round: up to MaxParts parts running at once (a bidirectional
// ring is a +1 and a −1 shift of half weight). It is comparable, so fabrics cache the routing of a
// pattern by value.
type Pattern struct {
	Parts [MaxParts]Part
	N     int
}

// One is a pattern of one part.
func One(p Part) Pattern { return Pattern{Parts: [MaxParts]Part{p}, N: 1} }

// With returns the pattern with one more part.
func (p Pattern) With(q Part) Pattern {
	p.Parts[p.N] = q
	p.N++
	return p
}

// Each calls f for every flow of the pattern in a group of n members: source, destination and
// weight. Uniform parts are not expanded (see Uniform).
func (p Pattern) Each(n int, f func(src, dst int, w float64)) {
	for i := 0; i < p.N; i++ {
		p.Parts[i].Each(n, f)
	}
}

// Each calls f for every flow of the part in a group of n members (none for Uniform).
func (q Part) Each(n int, f func(src, dst int, w float64)) {
	w := q.W()
	if q.Limit > 0 {
		n = min(n, q.Limit)
	}
	digit := func(m int) int { return (m / q.Stride) % q.Size }
	switch q.Kind {
	case RingNext, Shift:
		if q.Size <= 1 {
			return
		}
		k := ((q.K % q.Size) + q.Size) % q.Size
		if k == 0 {
			return
		}
		for m := 0; m < n; m++ {
			d := digit(m)
			if dst := m + (((d+k)%q.Size)-d)*q.Stride; dst < n {
				f(m, dst, w)
			}
		}
	case Chain:
		for m := 0; m < n; m++ {
			if digit(m) < q.Size-1 && m+q.Stride < n {
				f(m, m+q.Stride, w)
			}
		}
	case TwoChains:
		for m := 0; m < q.K && m+1 < n; m++ {
			f(m, m+1, w)
		}
		if q.K+1 < n {
			f(0, n-1, w)
			for m := n - 1; m > q.K+1; m-- {
				f(m, m-1, w)
			}
		}
	case XOR:
		for m := 0; m < n; m++ {
			d := digit(m)
			if e := d ^ q.K; e != d && e < q.Size {
				if dst := m + (e-d)*q.Stride; dst < n {
					f(m, dst, w)
				}
			}
		}
	case FoldIn:
		for m := q.K; m < n; m++ {
			f(m, m-q.K, w)
		}
	case FoldOut:
		for m := 0; m+q.K < n; m++ {
			f(m, m+q.K, w)
		}
	case TreeDown:
		for m := 0; m < n; m++ {
			for _, c := range [2]int{2*m + 1, 2*m + 2} {
				if c < n {
					f(m, c, w)
				}
			}
		}
	case TreeUp:
		for m := 1; m < n; m++ {
			f(m, (m-1)/2, w)
		}
	case Table:
		for m, d := range q.Table.Next {
			if d >= 0 && m < n {
				f(m, int(d), w)
			}
		}
	}
}

// Successors is an explicit member-to-member map (a Hamiltonian cycle, a representative tree).
// Fabrics cache by the pointer, so build one per group geometry and keep it.
type Successors struct{ Next []int32 }

// Members is what a flow algorithm may ask of the group it runs on.
type Members interface {
	// P is the number of members.
	P() int
	// Layout decomposes the group on the fabric's levels (innermost first), for hierarchical
	// algorithms; its P is exact or the hierarchical forms decline.
	Layout() Layout
	// Link is the effective link of one round of pattern pt with unit weight per flow: the
	// slowest path's latency and the bottleneck's rate per unit weight (an algorithm that sizes
	// pipeline chunks needs it).
	Link(pt Pattern) (Link, error)
	// Grid places the members on the fabric's two-dimensional grid (rows × cols, all positions
	// filled), for the grid algorithms; a *Declined error says why they are not a grid.
	Grid() (*Grid, error)
}

// Grid is a group's members on a rows × cols grid of a fabric, wrapping at the edges (a torus, or
// a HammingMesh whose row and column networks close each ring).
type Grid struct {
	Rows, Cols int
	At         []int32 // member at grid position r·Cols + c
	memo       sync.Map
}

// Memo returns the value built for key, building it once (algorithms keep their successor tables
// here, so that the same grid gives the same *Successors and fabrics cache their routing).
func (g *Grid) Memo(key any, build func() any) any {
	if v, ok := g.memo.Load(key); ok {
		return v
	}
	v, _ := g.memo.LoadOrStore(key, build())
	return v
}

// Member is the member at grid position (r, c), wrapping both coordinates.
func (g *Grid) Member(r, c int) int32 {
	r = ((r % g.Rows) + g.Rows) % g.Rows
	c = ((c % g.Cols) + g.Cols) % g.Cols
	return g.At[r*g.Cols+c]
}

// Successors of a grid walk: member at (r, c) sends to the member at next(r, c).
func (g *Grid) Successors(next func(r, c int) (int, int)) *Successors {
	s := &Successors{Next: make([]int32, len(g.At))}
	for r := 0; r < g.Rows; r++ {
		for c := 0; c < g.Cols; c++ {
			nr, nc := next(r, c)
			s.Next[g.At[r*g.Cols+c]] = g.Member(nr, nc)
		}
	}
	return s
}
