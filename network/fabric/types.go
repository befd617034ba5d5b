package fabric

import "math"

// Flow types. Where the fabric's symmetry names its elements and acts freely on the links (and,
// for the flows into a sub-lattice's representatives alone, where it fixes some links: typing)
// (Symmetry.Factors; lattice.go), a flow's routed shares depend on its source only through Γ:
// with s = g_s·R (R = Reps[EndRep[s]]), split routing is equivariant, so
//
//	c_{s→t}(g_s·l) = c_{R→g_s⁻¹·t}(l)
//
// for every link l. The pair (R, g_s⁻¹·t) is the flow's type (with its weight: shares are not
// scaled after routing, so a type is routed at the weight it carries). A round routes each
// type's canonical flow R → g_s⁻¹·t once, keeping its (link, share) list and its path latency,
// and every other flow of the type adds the list moved by its g_s: GPT-3's 4,080 rings of 4 at
// stride 96 on the large torus route 24 canonical flows instead of 16,320. The list persists in
// the router across rounds and algorithms (best's candidates share their types), bounded, and
// is dropped by Graph.Forget; a type at a weight a power of two from one routed is that one's
// shares scaled, bit for bit (scaledType: the bidirectional ring's halves take the ring's).
//
// Every link still receives one share per flow, in flow order, so a link's sum is the same
// floats added in the same order as routing each flow; a share equals the one the flow would
// compute itself when the graph's next hops come in the same order at every node of an orbit
// (the mass a node forwards is the sum of its in-shares, in the order its predecessors were
// reached). TestFlowTypesExact checks the prices bit for bit against routing every flow
// (WithoutFlowTypes), and TestSublatticeRouting against a fabric without symmetry (relative
// 1e-12). A type seen once is routed directly (a tree's offsets are all different): only its
// second flow records it, except in the first groups of a run (runs.go), whose types the rest of
// the run's flows are likely to share.

// maxTypeShares bounds the shares a router keeps (≈ 20 MB); beyond it the types start over.
const maxTypeShares = 1 << 20

// maxTypeWeights bounds the distinct flow weights typed at once (parts of a grid algorithm's
// rounds carry a few); flows of other weights are routed directly.
const maxTypeWeights = 16

// flowTypes is a router's record of the flow types it has routed.
type flowTypes struct {
	gen     uint64 // the graph's generation the record belongs to (Graph.Forget moves it)
	weights []float64
	// index: (weight, rep·E + canonical destination) → −1 seen once (routed directly), i + 1
	// type i.
	index typeIndex
	// Type i's shares are entries start[i] … start[i+1]−1; lat[i] its path latency.
	start []int32
	lat   []float64
	// Per share: the canonical link's orbit base (orbit index · |Γ|), its element's digits (the
	// non-trivial factors'), its share.
	base  []int32
	dig   [][maxFactors]uint16
	share []float64
	rec   bool // carry records shares instead of loading links
}

// typeIndex is an open-addressing table from a flow type's key (never 0) to its entry, grown
// to twice the keys it holds: no allocation once warm, memory in proportion to the types.
type typeIndex struct {
	keys []uint64
	vals []int32
	n    int
}

// slot is where key k is, or the empty slot where it would go.
func (x *typeIndex) slot(k uint64) int {
	mask := len(x.keys) - 1
	i := int((k*0x9e3779b97f4a7c15)>>32) & mask
	for x.keys[i] != 0 && x.keys[i] != k {
		i = (i + 1) & mask
	}
	return i
}

// get is key k's entry (0: none).
func (x *typeIndex) get(k uint64) int32 {
	if x.n == 0 {
		return 0
	}
	if i := x.slot(k); x.keys[i] == k {
		return x.vals[i]
	}
	return 0
}

// put sets key k's entry.
func (x *typeIndex) put(k uint64, v int32) {
	if 2*(x.n+1) > len(x.keys) {
		old, vals := x.keys, x.vals
		x.keys, x.vals, x.n = make([]uint64, max(1024, 2*len(old))), make([]int32, max(1024, 2*len(old))), 0
		for i, ok := range old {
			if ok != 0 {
				x.put(ok, vals[i])
			}
		}
	}
	i := x.slot(k)
	if x.keys[i] == 0 {
		x.keys[i] = k
		x.n++
	}
	x.vals[i] = v
}

// reset empties the table.
func (x *typeIndex) reset() {
	if x.n > 0 {
		clear(x.keys)
		x.n = 0
	}
}

// typed routes flow s → t of weight w through its type (false: route it directly). It is only
// called with Split routing on a fabric whose symmetry names its elements and acts freely.
func (r *router) typed(s, t int32, w float64) bool {
	ft, sym := &r.ft, r.g.sym
	if gen := r.g.gen.Load(); ft.gen != gen {
		ft.reset()
		ft.gen = gen
	}
	wi := -1
	for i, x := range ft.weights {
		if x == w {
			wi = i
			break
		}
	}
	if wi < 0 {
		if len(ft.weights) == maxTypeWeights {
			return false
		}
		wi = len(ft.weights)
		ft.weights = append(ft.weights, w)
	}
	gs := &sym.endDig[s]
	ct := sym.back(t, s) // g_s⁻¹·t
	key := uint64(wi+1)<<48 | uint64(sym.EndRep[s])*uint64(r.g.Endpoints) + uint64(ct)
	ti := ft.index.get(key)
	switch {
	case ti == 0 && !r.eager:
		ft.index.put(key, -1)
		return false
	case ti <= 0:
		if len(ft.share) >= maxTypeShares {
			ft.reset()
			return false
		}
		i := r.scaledType(key&(1<<48-1), wi, w)
		if i < 0 {
			i = r.record(sym.Reps[sym.EndRep[s]], ct, w)
		}
		if i < 0 {
			return false // unreachable (as its every flow: Γ keeps distances)
		}
		ti = i + 1
		ft.index.put(key, ti)
	}
	if r.perm.on {
		r.perm.mark(ti - 1)
	}
	if sym.nf == 4 {
		r.replay4(ti-1, gs)
	} else {
		r.replay(ti-1, gs)
	}
	return true
}

// scaledType is a new type of weight w for the canonical flow rc (its key without the weight)
// copied from its type at another weight w' with w = 2^e·w', its shares times 2^e, and returns
// its number (−1: none such, or a share off the normal range). Routing carries the source's
// weight through products and quotients with the links' widths and sums of shares, in an
// order that no weight changes (toward branches on no mass), and scaling an operand by a power
// of two scales an exact result and its rounding alike where every value stays normal: every
// intermediate lies between the least share and the weight times the widest bundle, so where
// both types' shares are normal the shares are 2^e times the other's, bit for bit, in the same
// order, with the same latency (TestScaledTypes against recording each weight). The
// bidirectional ring's halves (weight ½) take the ring's and the halving/doubling partners'
// types (weight 1).
func (r *router) scaledType(rc uint64, wi int, w float64) int32 {
	ft := &r.ft
	if r.g.unscaled {
		return -1
	}
	for j, x := range ft.weights {
		if j == wi || x == 0 {
			continue
		}
		f, e := math.Frexp(w / x)
		if f != 0.5 || math.Ldexp(x, e-1) != w {
			continue
		}
		tj := ft.index.get(uint64(j+1)<<48 | rc)
		if tj <= 0 {
			continue
		}
		lo, hi := ft.start[tj-1], ft.start[tj]
		scale := math.Ldexp(1, e-1)
		normal := true
		for _, v := range ft.share[lo:hi] {
			if y := v * scale; !(v >= minNormal && y >= minNormal && y <= math.MaxFloat64) {
				normal = false
				break
			}
		}
		if !normal {
			continue
		}
		i := int32(len(ft.lat))
		for k := lo; k < hi; k++ {
			ft.base = append(ft.base, ft.base[k])
			ft.dig = append(ft.dig, ft.dig[k])
			ft.share = append(ft.share, ft.share[k]*scale)
		}
		ft.lat = append(ft.lat, ft.lat[tj-1])
		ft.start = append(ft.start, int32(len(ft.share)))
		return i
	}
	return -1
}

// minNormal is the least positive normal float64.
const minNormal = 0x1p-1022

// record routes the canonical flow src → t of weight w as a new type and returns its number
// (−1: t is unreachable from src; no type).
func (r *router) record(src, t int32, w float64) int32 {
	ft := &r.ft
	d := r.g.dist.Dist(src, t)
	if d >= Unreachable {
		return -1
	}
	i := int32(len(ft.lat))
	if len(ft.start) == 0 {
		ft.start = append(ft.start, 0)
	}
	ft.rec = true
	r.source(src, d, w, 0)
	ft.lat = append(ft.lat, r.toward(t, -1))
	ft.rec = false
	ft.start = append(ft.start, int32(len(ft.share)))
	return i
}

// keep records share on link k of the canonical flow being routed.
func (ft *flowTypes) keep(sym *Symmetry, k int32, share float64) {
	ft.base = append(ft.base, sym.orbitIx[k]*int32(sym.Order))
	ft.dig = append(ft.dig, sym.linkDig[k])
	ft.share = append(ft.share, share)
}

// replay loads type i's shares moved by the element with digits gs, and notes its latency.
func (r *router) replay(i int32, gs *[maxFactors]uint16) {
	ft, sym := &r.ft, r.g.sym
	lo, hi := ft.start[i], ft.start[i+1]
	base, dig, share := ft.base[lo:hi], ft.dig[lo:hi], ft.share[lo:hi]
	// tab[f][d + g_f] = ((d + g_f) mod m_f)·stride_f: the moved digit's part of the element.
	var tab [maxFactors][]int32
	for f := 0; f < sym.nf; f++ {
		tab[f] = sym.shift[f][gs[f]:]
	}
	at := sym.linkAt
	// The router's slices held in locals: this loop is most of a large round's work.
	load, used, idx := r.load, r.used, r.usedIdx
	if sym.nf == 2 { // a torus, a mesh of single row and column switches
		t0, t1 := tab[0], tab[1]
		for j, d := range dig {
			k := at[base[j]+t0[d[0]]+t1[d[1]]]
			if !used[k] {
				used[k] = true
				idx = append(idx, k)
			}
			load[k] += share[j]
		}
	} else {
		for j := range dig {
			x := base[j]
			for f := 0; f < sym.nf; f++ {
				x += tab[f][dig[j][f]]
			}
			k := at[x]
			if !used[k] {
				used[k] = true
				idx = append(idx, k)
			}
			load[k] += share[j]
		}
	}
	r.usedIdx = idx
	r.note(ft.lat[i])
}

// replay4 is replay on four non-trivial factors (a HammingMesh whose rows and columns are
// trees of several leaves): each share's moved digits read straight from the shift tables, g_f
// added per share (a type has two or three), not a row of each table cut per flow.
func (r *router) replay4(i int32, gs *[maxFactors]uint16) {
	ft, sym := &r.ft, r.g.sym
	lo, hi := ft.start[i], ft.start[i+1]
	base, dig, share := ft.base[lo:hi], ft.dig[lo:hi], ft.share[lo:hi]
	at := sym.linkAt
	s0, s1, s2, s3 := sym.shift[0], sym.shift[1], sym.shift[2], sym.shift[3]
	g0, g1, g2, g3 := gs[0], gs[1], gs[2], gs[3]
	for j, d := range dig {
		r.add(at[base[j]+s0[d[0]+g0]+s1[d[1]+g1]+s2[d[2]+g2]+s3[d[3]+g3]], share[j])
	}
	r.note(ft.lat[i])
}

// reset forgets every type.
func (ft *flowTypes) reset() {
	ft.index.reset()
	ft.weights = ft.weights[:0]
	ft.start, ft.lat = ft.start[:0], ft.lat[:0]
	ft.base, ft.dig, ft.share = ft.base[:0], ft.dig[:0], ft.share[:0]
}

// typing derives the tables flow types read: each endpoint's and link's element as digits of
// the non-trivial factors, and the link of every (orbit, element). It leaves linkAt nil where
// the elements do not number each orbit's links one to one, or a factor exceeds a digit. Where
// Γ fixes some links (moved[o]: the factors along which orbit o's links have digits; fixers
// checked that its links are named one to one by the elements with zero digits along the
// others, G_o), the element x's entry of orbit o is the link of x's projection onto G_o (x's
// digits along the other factors set to 0): x = y + z with y ∈ G_o and z along the fixing
// factors only, z fixes o's links (fixers' naming: the links of o are y·o, y ∈ G_o, and z
// moves none of them), so x·(y'·o) = (y + y')·o, the projection of x + y'. Replay's moved link
// at[orbit·|Γ| + x + y'] is then the image of link y'·o under x, as on a fabric Γ acts freely on.
func (s *Symmetry) typing(links int, moved []uint8) {
	var stride int32 = 1
	s.nf = 0
	for _, m := range s.Factors {
		if m > 1 {
			if m > 1<<16 {
				return
			}
			s.fm[s.nf], s.fs[s.nf] = m, stride
			s.shift[s.nf] = make([]int32, 2*m)
			for v := range s.shift[s.nf] {
				s.shift[s.nf][v] = int32(v) % m * stride
			}
			s.nf++
		}
		stride *= m
	}
	digits := func(x int32) (d [maxFactors]uint16) {
		for f := 0; f < s.nf; f++ {
			d[f] = uint16(x / s.fs[f] % s.fm[f])
		}
		return d
	}
	at := make([]int32, s.orbits*s.Order)
	for i := range at {
		at[i] = -1
	}
	s.linkDig, s.linkIx = make([][maxFactors]uint16, links), make([]int32, links)
	for l := 0; l < links; l++ {
		x := s.orbitIx[l]*int32(s.Order) + s.LinkElem[l]
		if at[x] >= 0 {
			s.linkDig, s.linkIx = nil, nil
			return
		}
		at[x], s.linkIx[l] = int32(l), x
		s.linkDig[l] = digits(s.LinkElem[l])
	}
	if !s.free { // the other elements of each orbit: their projection's link
		for o, mv := range moved {
			row := at[o*s.Order : (o+1)*s.Order]
			for x := range row {
				if row[x] < 0 {
					row[x] = row[s.project(int32(x), mv)]
				}
			}
		}
	}
	s.endDig = make([][maxFactors]uint16, len(s.EndElem))
	for e, x := range s.EndElem {
		s.endDig[e] = digits(x)
	}
	s.linkAt = at
}

// project is element x with its digits along the factors not in moved (a bit per factor) set
// to 0.
func (s *Symmetry) project(x int32, moved uint8) int32 {
	y, w := int32(0), int32(1)
	for f, m := range s.Factors {
		if moved&(1<<f) != 0 {
			y += x % m * w
		}
		x /= m
		w *= m
	}
	return y
}

// move is endpoint e moved by the element with digits g.
func (s *Symmetry) move(e int32, g *[maxFactors]uint16) int32 {
	x := &s.endDig[e]
	y := int32(0)
	for f := 0; f < s.nf; f++ {
		y += s.shift[f][x[f]+g[f]]
	}
	return s.endAt[s.EndRep[e]*int32(s.Order)+y]
}

// movesTo reports whether endpoint a moved by the element with digits g (each below its
// factor's modulus) is endpoint b (move(a, g) == b) without looking the moved endpoint up: Γ
// acts freely on the endpoints, so an endpoint is named by its orbit and its element, and
// g·(x·R) = (g + x)·R has a's orbit and a's digits plus g's (each mod its factor's modulus). b
// is that endpoint exactly when it has the same orbit and those digits (TestMovesTo against
// move, every pair and element). Run images (runs.go) compare flows with it.
func (s *Symmetry) movesTo(a, b int32, g *[maxFactors]uint16) bool {
	if s.EndRep[a] != s.EndRep[b] {
		return false
	}
	x, y := &s.endDig[a], &s.endDig[b]
	for f := 0; f < s.nf; f++ {
		d := int32(x[f]) + int32(g[f])
		if d >= s.fm[f] {
			d -= s.fm[f]
		}
		if d != int32(y[f]) {
			return false
		}
	}
	return true
}

// back is endpoint t moved by the inverse of endpoint s's element (move(t, inverse(g_s)) in one
// pass, without a branch per digit: t's digit plus m − s's is below 2m, within shift's rows).
func (s *Symmetry) back(t, src int32) int32 {
	a, b := &s.endDig[src], &s.endDig[t]
	y := int32(0)
	for f := 0; f < s.nf; f++ {
		y += s.shift[f][int32(b[f])+s.fm[f]-int32(a[f])]
	}
	return s.endAt[s.EndRep[t]*int32(s.Order)+y]
}

// inverse is the element with digits g's inverse.
func (s *Symmetry) inverse(g *[maxFactors]uint16) (inv [maxFactors]uint16) {
	for f := 0; f < s.nf; f++ {
		if g[f] > 0 {
			inv[f] = uint16(s.fm[f]) - g[f]
		}
	}
	return inv
}

// WithoutFlowTypes is g with flow types off (every flow routed itself; the symmetry and its
// sub-lattice routing kept): the reference the flow types are tested against.
func WithoutFlowTypes(g *Graph) *Graph { return switchedOff(g, func(h *Graph) { h.untyped = true }) }

// WithoutPeriods is g with periods off (periods.go): flow types alone, every flow's shares added
// in flow order.
func WithoutPeriods(g *Graph) *Graph { return switchedOff(g, func(h *Graph) { h.unperiodic = true }) }

// WithoutScaledTypes is g with each weight's flow types routed (none copied scaled from
// another weight's: scaledType): the reference scaled types are tested against.
func WithoutScaledTypes(g *Graph) *Graph { return switchedOff(g, func(h *Graph) { h.unscaled = true }) }
