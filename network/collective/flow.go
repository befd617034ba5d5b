package collective

import (
	"slices"
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
	Repeat  int         // consecutive rounds (0 counts as 1)
	// Vary > 0: the repetitions differ, the pattern's (single) part moving its K by Vary each
	// time (the pairwise exchange: partners 1, 2, …, p−1 away). Levels fold the repetitions that
	// land on one level into one step; a fabric routes each.
	Vary int
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
	// Table: member m sends to Successors(K).Next[m] (negative: nothing); K is the table's id.
	Table
	// Peers: every member sends to each of the Size − 1 members whose digit (Stride, Size) alone
	// differs from its own (the linear all-to-all of one level: a BCube or SiPAC switch's peers,
	// SiPAC's multicast to a WSS's r − 1 CUs).
	Peers
	// FromRoot: member K sends to every other member (a raw one-to-all, no algorithm);
	// ToRoot: every other member sends to member K (a raw all-to-one, an incast).
	FromRoot
	ToRoot
)

// Part is one component of a pattern.
type Part struct {
	Kind PartKind
	// Stride, Size: the digit (Shift, Chain, XOR); Size = p and Stride = 1 for the whole group.
	Stride, Size int32
	K            int32
	// Limit > 0: only members m < Limit take part (recursive halving among the first 2^⌊log2 p⌋).
	Limit  int32
	Weight float64 // bytes of each flow = Round.Bytes × Weight (0 counts as 1)
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
		n = min(n, int(q.Limit))
	}
	stride, size, K := int(q.Stride), int(q.Size), int(q.K)
	switch q.Kind {
	case RingNext, Shift:
		if size <= 1 {
			return
		}
		k := ((K % size) + size) % size
		if k == 0 {
			return
		}
		// Member m's digit is ⌊m/stride⌋ mod size; it sends to the member k digits on, wrapping
		// within its digit's cycle (stepped, not divided, member by member).
		for m, d, run := 0, 0, 0; m < n; m++ {
			dst := m + k*stride
			if d+k >= size {
				dst -= size * stride
			}
			if dst < n {
				f(m, dst, w)
			}
			if run++; run == stride {
				if run, d = 0, d+1; d == size {
					d = 0
				}
			}
		}
	case Chain:
		for m, d, run := 0, 0, 0; m < n; m++ {
			if d < size-1 && m+stride < n {
				f(m, m+stride, w)
			}
			if run++; run == stride {
				if run, d = 0, d+1; d == size {
					d = 0
				}
			}
		}
	case TwoChains:
		for m := 0; m < K && m+1 < n; m++ {
			f(m, m+1, w)
		}
		if K+1 < n {
			f(0, n-1, w)
			for m := n - 1; m > K+1; m-- {
				f(m, m-1, w)
			}
		}
	case XOR:
		digit := func(m int) int { return (m / stride) % size }
		for m := 0; m < n; m++ {
			d := digit(m)
			if e := d ^ K; e != d && e < size {
				if dst := m + (e-d)*stride; dst < n {
					f(m, dst, w)
				}
			}
		}
	case FoldIn:
		for m := K; m < n; m++ {
			f(m, m-K, w)
		}
	case FoldOut:
		for m := 0; m+K < n; m++ {
			f(m, m+K, w)
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
	case Peers:
		digit := func(m int) int { return (m / stride) % size }
		for m := 0; m < n; m++ {
			d := digit(m)
			for e := 0; e < size; e++ {
				if dst := m + (e-d)*stride; e != d && dst < n {
					f(m, dst, w)
				}
			}
		}
	case FromRoot:
		for m := 0; m < n; m++ {
			if m != K {
				f(K, m, w)
			}
		}
	case ToRoot:
		for m := 0; m < n; m++ {
			if m != K {
				f(m, K, w)
			}
		}
	case Table:
		for m, d := range tableOf(q.K).Next {
			if d >= 0 && m < n {
				f(m, int(d), w)
			}
		}
	}
}

// Successors is a Table part's table (member m sends to Next[m] where it is ≥ 0 and m is below
// the members Each lists), nil for any other kind: a fabric may read a large group's flows from
// it without a call per flow.
func (q Part) Successors() []int32 {
	if q.Kind != Table {
		return nil
	}
	return tableOf(q.K).Next
}

// Permutes reports whether the part's flows in a group of p members are a permutation without
// fixed points: every member sends exactly one flow and receives exactly one, none to itself
// (what Each yields then has every member's sends and receives equal to W). It is decided from
// the part's shape, without listing the flows: a shift or ring step by K ≢ 0 (mod Size) or an
// XOR partner 0 < K < Size (Size a power of two) whose digit blocks tile the group (p a multiple
// of Stride·Size), or a successor table that is such a permutation of exactly p members; any
// other part reports false (a weaker answer, never a wrong one).
func (q Part) Permutes(p int) bool {
	if q.Limit > 0 && int(q.Limit) < p {
		return false
	}
	stride, size, K := int(q.Stride), int(q.Size), int(q.K)
	switch q.Kind {
	case RingNext, Shift:
		return stride >= 1 && size > 1 && ((K%size)+size)%size != 0 && p%(stride*size) == 0
	case XOR:
		return stride >= 1 && size > 1 && size&(size-1) == 0 && K > 0 && K < size && p%(stride*size) == 0
	case Table:
		t := tableOf(q.K)
		return len(t.Next) == p && t.derangement()
	}
	return false
}

// Fan is the most weight one member sends and the most one receives in a binary tree's part
// (TreeDown, TreeUp) over a group of p members, decided from its shape without listing the
// flows: in a heap of n = min(p, Limit) members, member i ≥ 1 has the one parent ⌊(i−1)/2⌋ and
// member 0 the children 1 and 2 (only 1 where n = 2), none more. So TreeUp's members send W at
// most and member 0 receives 2W (n ≥ 3; W where n = 2); TreeDown the reverse. False for any
// other kind or n < 2 (no flow).
func (q Part) Fan(p int) (out, in float64, ok bool) {
	n := p
	if q.Limit > 0 {
		n = min(n, int(q.Limit))
	}
	if n < 2 || (q.Kind != TreeUp && q.Kind != TreeDown) {
		return 0, 0, false
	}
	one, most := q.W(), q.W()
	if n >= 3 {
		most += q.W() // member 0's second child, added as Each's flows add it
	}
	if q.Kind == TreeUp {
		return one, most, true
	}
	return most, one, true
}

// Successors is an explicit member-to-member map (a Hamiltonian cycle, a representative tree).
// Register it once per group geometry (Grid.Memo) and use its id in a Table part: patterns hold
// no pointers, so fabrics cache them by value and rounds copy cheaply.
type Successors struct {
	Next []int32
	// perm: Next is a permutation of its members without fixed points (derangement; decided
	// once, on first use).
	once sync.Once
	perm bool
	// inverse: 1 + the id of the table that undoes this one (registerInverses), 0: none known.
	inverse int32
}

// derangement reports whether Next maps its members one to one onto themselves, none to itself.
func (s *Successors) derangement() bool {
	s.once.Do(func() {
		seen := make([]bool, len(s.Next))
		for m, d := range s.Next {
			if d < 0 || int(d) >= len(s.Next) || int(d) == m || seen[d] {
				return
			}
			seen[d] = true
		}
		s.perm = true
	})
	return s.perm
}

var tables struct {
	sync.RWMutex
	list   []*Successors
	byHash map[uint64][]int32
}

// Register returns the id of a successor table (for Part.K of a Table part). Tables are interned
// by content: the same walk registered again (by another model of the same job) gets the same
// id, so patterns that use it stay equal and caches keyed by them hit.
func Register(s *Successors) int32 {
	h := tableHash(s.Next)
	tables.Lock()
	defer tables.Unlock()
	if id := registered(h, s.Next); id >= 0 {
		return id
	}
	if tables.byHash == nil {
		tables.byHash = map[uint64][]int32{}
	}
	id := int32(len(tables.list))
	tables.list = append(tables.list, s)
	tables.byHash[h] = append(tables.byHash[h], id)
	return id
}

// registered is the id of the table registered with successors next (of hash h), −1 if none;
// the caller holds tables' lock.
func registered(h uint64, next []int32) int32 {
	for _, id := range tables.byHash[h] {
		if slices.Equal(tables.list[id].Next, next) {
			return id
		}
	}
	return -1
}

// tableHash is FNV-1a over next in four interleaved lanes (entry i in lane i mod 4, the lanes
// then folded in order), so the multiplications of one table's 16,384 entries do not wait on each
// other; it only buckets tables, which Register then compares entry by entry.
func tableHash(next []int32) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := [4]uint64{offset, offset, offset, offset}
	i := 0
	for ; i+4 <= len(next); i += 4 {
		h[0] = (h[0] ^ uint64(uint32(next[i]))) * prime
		h[1] = (h[1] ^ uint64(uint32(next[i+1]))) * prime
		h[2] = (h[2] ^ uint64(uint32(next[i+2]))) * prime
		h[3] = (h[3] ^ uint64(uint32(next[i+3]))) * prime
	}
	for k := 0; i < len(next); i, k = i+1, k+1 {
		h[k] = (h[k] ^ uint64(uint32(next[i]))) * prime
	}
	x := uint64(offset)
	for _, v := range h {
		x = (x ^ v) * prime
	}
	return x ^ uint64(len(next))
}

// registerInverses registers two tables that undo each other (b.Next[a.Next[m]] = m and
// a.Next[b.Next[m]] = m for every member m: permutations of the same members, as shiftedPair
// builds them) and records each as the other's inverse.
func registerInverses(a, b *Successors) (int32, int32) {
	ia, ib := Register(a), Register(b)
	tables.Lock()
	defer tables.Unlock()
	tables.list[ia].inverse, tables.list[ib].inverse = ib+1, ia+1
	return ia, ib
}

// Inverse is the part along the table that undoes this Table part's (a permutation of the
// members; the torus steps' −x of +x), with the same weight, where one is known.
func (q Part) Inverse() (Part, bool) {
	if q.Kind != Table {
		return Part{}, false
	}
	tables.RLock()
	inv := tables.list[q.K].inverse
	tables.RUnlock()
	if inv == 0 {
		return Part{}, false
	}
	q.K = inv - 1
	return q, true
}

func tableOf(id int32) *Successors {
	tables.RLock()
	defer tables.RUnlock()
	return tables.list[id]
}

// TablePart is a part that sends along a registered successor table.
func TablePart(id int32) Part { return Part{Kind: Table, K: id} }

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
	At         []int32 // member at grid position r·Cols + c (each member at one position)
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

// memoized reports whether Memo has built the value for key.
func (g *Grid) memoized(key any) bool {
	_, ok := g.memo.Load(key)
	return ok
}

// Member is the member at grid position (r, c), wrapping both coordinates.
func (g *Grid) Member(r, c int) int32 {
	if r < 0 || r >= g.Rows { // positions on the grid (most calls) need no division
		r = ((r % g.Rows) + g.Rows) % g.Rows
	}
	if c < 0 || c >= g.Cols {
		c = ((c % g.Cols) + g.Cols) % g.Cols
	}
	return g.At[r*g.Cols+c]
}

// Shifted is the successors of the walk one step of (dr, dc) ∈ {−1, 0, 1}² around the torus (the
// member at (r, c) sends to the one at (r + dr, c + dc), both wrapped): Successors' table, read
// row by row without a call or a wrap test per member.
func (g *Grid) Shifted(dr, dc int) *Successors {
	return &Successors{Next: g.shifted(dr, dc, make([]int32, len(g.At)), nil)}
}

// shiftedPair is Shifted(dr, dc) and Shifted(−dr, −dc), built in one pass: the step sends the
// member at (r, c) to the one at (r + dr, c + dc) and the reverse step sends that one back, so
// each table undoes the other (every member at one position: permutations of the members).
func (g *Grid) shiftedPair(dr, dc int) (fwd, back *Successors) {
	back = &Successors{Next: make([]int32, len(g.At))}
	return &Successors{Next: g.shifted(dr, dc, make([]int32, len(g.At)), back.Next)}, back
}

// shifted writes Shifted(dr, dc)'s successors into next (one per member) and returns it, with
// the reverse step written into back where it is not nil.
func (g *Grid) shifted(dr, dc int, next, back []int32) []int32 {
	R, C := g.Rows, g.Cols
	for r := 0; r < R; r++ {
		from := g.At[r*C : (r+1)*C]
		nr := (r + dr + R) % R
		to := g.At[nr*C : (nr+1)*C]
		for c, m := range from {
			nc := c + dc
			if nc < 0 {
				nc += C
			} else if nc >= C {
				nc -= C
			}
			x := to[nc]
			next[m] = x
			if back != nil {
				back[x] = m
			}
		}
	}
	return next
}

// registerShifted registers Shifted(dr, dc) and Shifted(−dr, −dc) as each other's inverse
// (registerInverses) and returns their ids. Where the first is registered already with its
// inverse (by another model of the same job), that inverse is the second: a permutation has one
// inverse, and the reverse step undoes the step. So the reverse table is then neither built,
// hashed nor compared; and the step, written into scratch to be looked up, is not kept (nor
// allocated) either. Else both are built and registered as inverses.
func (g *Grid) registerShifted(dr, dc int) (int32, int32) {
	buf, _ := stepScratch.Get().(*[]int32)
	if buf == nil || cap(*buf) < len(g.At) {
		buf = new([]int32)
		*buf = make([]int32, len(g.At))
	}
	next := g.shifted(dr, dc, (*buf)[:len(g.At)], nil)
	h := tableHash(next)
	tables.RLock()
	id, inv := registered(h, next), int32(0)
	if id >= 0 {
		inv = tables.list[id].inverse
	}
	tables.RUnlock()
	stepScratch.Put(buf)
	if inv != 0 {
		return id, inv - 1
	}
	return registerInverses(g.shiftedPair(dr, dc))
}

// stepScratch holds the buffers registerShifted looks a step up in.
var stepScratch sync.Pool

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
