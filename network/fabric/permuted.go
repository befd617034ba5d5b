package fabric

import (
	"cmp"
	"math"

	"github.com/ddlest/ddlest/network/collective"
)

// Permuted rounds. A round routed towards a sub-lattice's representatives over a whole group
// (routeWhole) leaves, on every link, the shares of its parts' flows summed part by part in the
// pattern's order; a later round of the same group whose parts are the same parts in another
// order, every weight times one power of two 2^d (the torus all-reduce's phase 2,
// [+y, −y, +x, −x] of weight 1, after phases 1 and 3, [+x, −x, +y, −y] of weight R = C on a
// square grid), routes the same flows into the same representatives: the sub-lattice is the
// largest whose steps keep every part, whatever their order and weights (sublatticeWhole), and
// each part's flows into it are its own. Where two parts load no common link orbit of Γ (their
// flow types' shares: routeWhole records a type for every flow, and a type's orbits are those
// of every flow of it, moved), no link and no H-orbit of links (lattice.key: within one Γ-orbit)
// receives shares of both; so each H-orbit's sum is its own parts' shares in their order, and
// where every pair of parts that do share an orbit keeps its order, every sum is the same
// floats added in the same order, each times 2^d (routing at a weight 2^d larger scales every
// intermediate exactly while all stay normal: types.go, scaledType; the least share and the
// least and greatest time per byte and sum are checked), so every H-orbit's time per byte is
// 2^d times the routed round's, bit for bit, the slowest path the same (a path's latency does not
// depend on its weight). finishSub takes the first busiest H-orbit in the order they were first
// loaded: the links a part loads first are the same in either order (the parts loading a link
// keep their order), so that order is the parts' stretches of it in the new order, and the
// busiest is read from each part's stretch's busiest (its first, with its class), taken in the
// new order, strictly greater winning (finishParts). Such a round is read from the routed one, not
// routed (TestPermutedRoundsExact against WithoutPermutedRounds).

// permEntry is a round routed by routeWhole with its parts' shares recorded: its load, the
// exponent E of its weights, each of its parts' place in the sorted key (at), the pairs of
// sorted parts that load a common link orbit (meet: bit a·MaxParts + b for a < b), per sorted
// part the busiest time per byte of the H-orbits it loaded first and the first such one's class,
// the least share routed and the least and greatest time per byte and load of an H-orbit.
type permEntry struct {
	ld            Load
	exp           int
	at            [collective.MaxParts]int8
	meet          uint16
	top           [collective.MaxParts]float64
	cls           [collective.MaxParts]uint16
	least, lo, hi float64
	sum           float64
	read          int // rounds read from it (tests)
}

// (This fails to compile where a pair's bit (a·MaxParts + b, a < b < MaxParts) would not fit
// permEntry.meet's 16 bits.)
const _ = uint16(1 << ((collective.MaxParts-2)*collective.MaxParts + collective.MaxParts - 1))

// permKeyOf is the pattern the graph's permuted records are kept under (with the group shape
// and the job, as loadKey names a routed round): pt's parts with their weights divided by 2^E
// (E the exponent of the largest: math.Frexp), sorted; its weights' exponent E and each part's
// place in the sorted
// parts; false where it has fewer than two parts, two equal ones, or a weight beyond 2^±64.
func permKeyOf(pt collective.Pattern) (key collective.Pattern, e int, at [collective.MaxParts]int8, ok bool) {
	if pt.N < 2 {
		return key, 0, at, false
	}
	hi := 0.0
	for i := 0; i < pt.N; i++ {
		w := pt.Parts[i].W()
		if !(w >= 0x1p-64 && w <= 0x1p64) {
			return key, 0, at, false
		}
		hi = max(hi, w)
	}
	_, e = math.Frexp(hi)
	var order [collective.MaxParts]int8 // part indices in sorted order (insertion sort)
	for i := 0; i < pt.N; i++ {
		q := pt.Parts[i]
		q.Weight = math.Ldexp(q.W(), -e) // (exact: within 2^±128 of 1)
		key.Parts[i] = q
		j := i
		for ; j > 0 && comparePart(key.Parts[order[j-1]], q) > 0; j-- {
			order[j] = order[j-1]
		}
		order[j] = int8(i)
	}
	sorted := collective.Pattern{N: pt.N}
	for k := 0; k < pt.N; k++ {
		sorted.Parts[k] = key.Parts[order[k]]
		at[order[k]] = int8(k)
		if k > 0 && sorted.Parts[k] == sorted.Parts[k-1] {
			return key, 0, at, false
		}
	}
	return sorted, e, at, true
}

// comparePart orders parts field by field.
func comparePart(a, b collective.Part) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Stride, b.Stride), cmp.Compare(a.Size, b.Size),
		cmp.Compare(a.K, b.K), cmp.Compare(a.Limit, b.Limit), cmp.Compare(a.Weight, b.Weight))
}

// permuted is the load of a round whose sorted parts (permKeyOf) are an entry's, its weights' exponent e and its
// parts' places at, read from the entry; false where the order or the range forbids (Permuted
// rounds).
func (p *permEntry) permuted(e int, at [collective.MaxParts]int8, n int) (Load, bool) {
	d := e - p.exp
	if d < -64 || d > 64 {
		return Load{}, false
	}
	if at != p.at {
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				// (sorted parts a and b: their places in the entry's pattern and in this one)
				if p.meet&(1<<(a*collective.MaxParts+b)) != 0 && (place(p.at, a, n) < place(p.at, b, n)) != (place(at, a, n) < place(at, b, n)) {
					return Load{}, false
				}
			}
		}
	}
	down, up := math.Ldexp(1, min(d, 0)), math.Ldexp(1, max(d, 0))
	if !(p.least >= minNormal && p.least*down >= minNormal) || !(p.lo >= minNormal && p.lo*down >= minNormal) ||
		!(p.hi*up <= 0x1p1000 && p.sum*up <= 0x1p1000) {
		return Load{}, false
	}
	ld := p.ld
	ld.PerByte, ld.Class = 0, 0 // (as headLoad starts a round without a NIC: entry checks the load is its parts')
	for i := 0; i < n; i++ {
		if pb := math.Ldexp(p.top[at[i]], d); pb > ld.PerByte {
			ld.PerByte, ld.Class = pb, p.cls[at[i]]
		}
	}
	return ld, true
}

// place is the index in its pattern of the part at sorted place k.
func place(at [collective.MaxParts]int8, k, n int) int {
	for i := 0; i < n; i++ {
		if int(at[i]) == k {
			return i
		}
	}
	return -1
}

// permTrack is what routeWhole records of a round's parts for a later permuted one: the parts
// (bits) whose flows are of each flow type, the types marked, and the parts loading each link
// orbit; ok until a flow is routed without its type.
type permTrack struct {
	want   bool // routeNew asks for the record (a round of several parts)
	on, ok bool // routeWhole is recording; the record holds
	part   uint8
	gen    uint64
	meet   uint16 // r.meet's answers
	least  float64
	types  []uint8 // per flow type: the parts with flows of it
	list   []int32 // the types marked
	orbits []uint8 // per link orbit: the parts loading it (scratch)
	olist  []int32
	// n parts; part i's links first loaded are usedIdx[seg[i]:seg[i+1]].
	n   int
	seg [collective.MaxParts + 1]int32
	// Read by finishParts: per part, the busiest time per byte of the H-orbits it loaded first
	// and the first such one's class; the least and greatest time per byte and the greatest
	// load of an H-orbit.
	top    [collective.MaxParts]float64
	cls    [collective.MaxParts]uint16
	lo, hi float64
	sum    float64
}

// most is the busiest time per byte of every part's.
func (t *permTrack) most() float64 {
	x := 0.0
	for i := 0; i < t.n; i++ {
		x = max(x, t.top[i])
	}
	return x
}

// entry is the record of a round routed with load ld, its weights' exponent exp and its parts'
// sorted places at.
func (t *permTrack) entry(ld Load, exp int, at [collective.MaxParts]int8) permEntry {
	e := permEntry{ld: ld, exp: exp, at: at, meet: sortedMeet(t.meet, at, t.n), least: t.least, lo: t.lo, hi: t.hi, sum: t.sum}
	for i := 0; i < t.n; i++ {
		e.top[at[i]], e.cls[at[i]] = t.top[i], t.cls[i]
	}
	return e
}

// finishParts is finishSub's reading of a round routeWhole recorded: H-orbits folded part by
// part (each part's stretch of usedIdx in turn: the same sums in the same order), the busiest
// read per part's stretch of keys and over all, the first strictly greater winning, as busiest.
func (r *router) finishParts(out *Load) {
	t := &r.perm
	r.folded = true
	var kseg [collective.MaxParts + 1]int
	for i := 0; i < t.n; i++ {
		kseg[i] = len(r.keys)
		r.foldLinks(r.usedIdx[t.seg[i]:t.seg[i+1]])
	}
	kseg[t.n] = len(r.keys)
	lo, hi, sum := math.Inf(1), 0.0, 0.0
	rate, links, ksum, klink := r.g.rate, r.g.links, r.ksum, r.klink // (Split: a load slot per bundle, busiest's rate and class)
	for i := 0; i < t.n; i++ {
		top, cls := 0.0, uint16(0)
		for _, key := range r.keys[kseg[i]:kseg[i+1]] {
			k, x := klink[key]-1, ksum[key]
			pb := x / rate[k]
			if pb > top { // (out's time per byte is at least top: a greater one is greater than top)
				top, cls = pb, links[k].Class
				if pb > out.PerByte {
					out.PerByte, out.Class = pb, cls
				}
			}
			lo, hi, sum = min(lo, pb), max(hi, pb), max(sum, x)
			ksum[key], klink[key] = 0, 0
		}
		t.top[i], t.cls[i] = top, cls
	}
	t.lo, t.hi, t.sum = lo, hi, sum
}

// mark notes that the current part has a flow of type i.
func (t *permTrack) mark(i int32) {
	if int(i) >= len(t.types) {
		t.types = append(t.types, make([]uint8, int(i)+1-len(t.types))...)
	}
	if t.types[i] == 0 {
		t.list = append(t.list, i)
	}
	t.types[i] |= 1 << t.part
}

// meet reads the marked types' shares: the pairs of parts (pattern indices) that load a common
// link orbit (bit a·MaxParts + b, a < b) and the least share; it clears the marks.
func (r *router) meet() (meet uint16, least float64) {
	t, ft, sym := &r.perm, &r.ft, r.g.sym
	least = math.Inf(1)
	if len(t.orbits) < sym.orbits {
		t.orbits = make([]uint8, sym.orbits)
	}
	order := int32(sym.Order)
	for _, i := range t.list {
		mk := t.types[i]
		t.types[i] = 0
		if int(i)+1 >= len(ft.start) {
			continue // (types started over: not ok)
		}
		for j := ft.start[i]; j < ft.start[i+1]; j++ {
			o := ft.base[j] / order
			if t.orbits[o] == 0 {
				t.olist = append(t.olist, o)
			}
			t.orbits[o] |= mk
			least = min(least, ft.share[j])
		}
	}
	for _, o := range t.olist {
		mk := t.orbits[o]
		t.orbits[o] = 0
		for a := 0; a < collective.MaxParts; a++ {
			for b := a + 1; b < collective.MaxParts; b++ {
				if mk&(1<<a) != 0 && mk&(1<<b) != 0 {
					meet |= 1 << (a*collective.MaxParts + b)
				}
			}
		}
	}
	t.list, t.olist = t.list[:0], t.olist[:0]
	return meet, least
}

// sortedMeet is meet (pattern indices) over the parts' sorted places at.
func sortedMeet(meet uint16, at [collective.MaxParts]int8, n int) uint16 {
	var out uint16
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			if meet&(1<<(a*collective.MaxParts+b)) != 0 {
				x, y := int(at[a]), int(at[b])
				out |= 1 << (min(x, y)*collective.MaxParts + max(x, y))
			}
		}
	}
	return out
}

// WithoutPermutedRounds is g with permuted rounds off (every round routed, none read from a routed
// one with its parts in another order): the reference they are tested against.
func WithoutPermutedRounds(g *Graph) *Graph {
	return switchedOff(g, func(h *Graph) { h.unpermuted = true })
}
