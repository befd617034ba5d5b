package fabric

import (
	"fmt"
	"slices"
	"sync"

	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Sub-lattice routing. A fabric whose symmetry names its elements (Symmetry.Factors: Γ = Z_m0 ×
// Z_m1 × …, the translations of a torus or of a HammingMesh's boards) and acts freely on its
// links lets a round be routed towards a few destinations only when its flows are invariant
// under a subgroup
//
//	H = s_0·Z_m0 × s_1·Z_m1 × …   (s_i | m_i: the multiples of s_i along factor i)
//
// (every flow's image under H a flow of the same part with the same weight; a uniform part's
// groups mapped onto groups). Split routing is equivariant, c_{hf}(h·l) = c_f(l) for the share
// c_f(l) flow f puts on link l, so with R_H one destination per H-orbit of endpoints (the
// elements whose digits are below s_i),
//
//	load(l) = Σ_f c_f(l) = Σ_{l' ∈ H·l} Σ_{f : dst(f) ∈ R_H} c_f(l')
//
// (H acts freely on links, so k ↦ k⁻¹·l runs over the orbit H·l once; where Γ does not, H
// moves along none of the factors whose moves fix links, and then does: Symmetry.fixers): every
// link of an H-orbit carries the sum of what the flows into R_H put on the orbit, and the
// slowest path is among theirs. The work drops by |H|: a uniform all-to-all among 1,024 ranks of
// a 16,384-accelerator torus (16 concurrent groups, each four board rows) routes 16 destinations
// instead of 16,384;
// a ring over every accelerator of a HammingMesh in board order is invariant under the column
// translations. The sums are the same shares added in another order (per orbit, instead of
// flow by flow), so a price may differ from routing every flow in its last bits; the tests
// compare both on small and large fabrics (relative 1e-12). A round H does not map onto itself
// (the boundary of a job that does not fill the fabric, row ends that a rank order wraps over)
// is routed flow by flow as before.

// maxFactors bounds the cyclic factors of a symmetry group.
const maxFactors = 4

// elements checks the family's naming of Γ's elements and derives the tables sub-lattice
// routing reads.
func (s *Symmetry) elements(g *Graph) error {
	order := int32(1)
	for _, f := range s.Factors {
		if f < 1 {
			return fmt.Errorf("fabric: symmetry factor %d", f)
		}
		order *= f
	}
	if len(s.Factors) > maxFactors || int(order) != s.Order || len(s.EndRep) != g.Endpoints || len(s.EndElem) != g.Endpoints ||
		len(s.LinkElem) != len(g.links) {
		return fmt.Errorf("fabric: symmetry factors %v (order %d) do not name the elements of %d endpoints and %d links",
			s.Factors, s.Order, g.Endpoints, len(g.links))
	}
	s.endAt = make([]int32, len(s.Reps)*s.Order)
	for i := range s.endAt {
		s.endAt[i] = -1
	}
	for e := 0; e < g.Endpoints; e++ {
		rep, el := s.EndRep[e], s.EndElem[e]
		if rep < 0 || int(rep) >= len(s.Reps) || el < 0 || el >= order || s.endAt[int(rep)*s.Order+int(el)] >= 0 {
			return fmt.Errorf("fabric: symmetry names endpoint %d element %d of representative %d: not one to one", e, el, rep)
		}
		s.endAt[int(rep)*s.Order+int(el)] = int32(e)
	}
	idx := make([]int32, len(g.links))
	for i := range idx {
		idx[i] = -1
	}
	s.moves = &moveTables{at: map[int64][]int32{}}
	s.orbitIx, s.orbits, s.free, s.lattice = make([]int32, len(g.links)), 0, true, true
	var moved []uint8 // per orbit index: the factors along which some of its links' elements have a digit
	for l := range g.links {
		o := s.LinkOrbit[l]
		if idx[o] < 0 {
			idx[o] = int32(s.orbits)
			s.orbits++
			moved = append(moved, 0)
		}
		s.orbitIx[l] = idx[o]
		a, b := &g.links[l], &g.links[o]
		if a.Rate != b.Rate || a.Width != b.Width || a.Class != b.Class || a.Latency != b.Latency || a.Weight != b.Weight ||
			g.forward[a.To] != g.forward[b.To] || s.LinkElem[l] < 0 || s.LinkElem[l] >= order {
			s.free, s.lattice = false, false
			continue
		}
		if int(s.OrbitSize[o]) != s.Order {
			s.free = false
		}
		for f, x := range s.digits(s.LinkElem[l]) {
			if x != 0 {
				moved[idx[o]] |= 1 << f
			}
		}
	}
	if s.lattice {
		s.lattice = s.fixers(g, moved)
	}
	if s.lattice {
		s.typing(len(g.links), moved)
	}
	return nil
}

// fixers finds, where Γ does not act freely on the links, the factors whose moves a sub-lattice
// must leave out (Symmetry.fixed), and reports whether the naming bears that out. Let F(o) be
// the factors along which no link of orbit o has a digit and G_o = {g : g's digits along F(o)
// are 0}. Where o's links carry distinct elements, all in G_o, as many as |G_o| = |Γ|/Π_{F(o)} m_f,
// g ↦ g·o is one to one from G_o onto the orbit. A subgroup H with step m_f along every factor of
// F(o) (no move along them) lies in G_o, so for h ∈ H and links g·o, g'·o (g, g' ∈ G_o),
// h·g·o = g'·o iff h + g = g' (both sides name the link by an element of G_o): H acts freely
// on o, and two links are in one H-orbit iff their elements differ by an element of H, their
// digits equal modulo H's steps (lattice.key). So sub-lattice routing holds for the subgroups
// that leave out every factor of F = ∪ F(o). On a HammingMesh whose rows (columns) are fat trees
// of several leaves, moves of the boards within a leaf's block fix the leaf and its uplinks: F
// is the within-block factors, and the sub-lattices move blocks of boards only.
func (s *Symmetry) fixers(g *Graph, moved []uint8) bool {
	all := uint8(1)<<len(s.Factors) - 1
	seen, count := make([]uint64, (s.orbits*s.Order+63)/64), make([]int, s.orbits) // a bit per (orbit, element)
	for l := range g.links {
		o := s.orbitIx[l]
		k := int(o)*s.Order + int(s.LinkElem[l])
		if seen[k/64]&(1<<(k%64)) != 0 {
			return false // two links of one orbit named by one element
		}
		seen[k/64] |= 1 << (k % 64)
		count[o]++
	}
	for i := range moved {
		fixed, size := all&^moved[i], s.Order
		for f, m := range s.Factors {
			if fixed&(1<<f) != 0 {
				size /= int(m)
			}
		}
		if count[i] != size {
			return false
		}
		for f, m := range s.Factors {
			if fixed&(1<<f) != 0 && m > 1 {
				s.fixed |= 1 << f
			}
		}
	}
	return true
}

// digits is element x's digit along each factor.
func (s *Symmetry) digits(x int32) [maxFactors]int32 {
	var d [maxFactors]int32
	for f, m := range s.Factors {
		d[f], x = x%m, x/m
	}
	return d
}

// act is endpoint e moved by d along factor f (whose digits are stride apart in an element's
// number).
func (s *Symmetry) act(e int32, f int, stride, d int32) int32 {
	x := s.EndElem[e]
	m := s.Factors[f]
	dig := x / stride % m
	nd := dig + d
	if nd >= m {
		nd -= m
	}
	return s.endAt[int(s.EndRep[e])*s.Order+int(x+(nd-dig)*stride)]
}

// moveTables holds, per (factor, step), every endpoint moved by that step (Symmetry.mover),
// built on first use: the invariance checks of sub-lattice routing move every sender of a round
// once or twice per candidate step; and per sub-lattice, its orbits' representatives (a round
// routed under it reads one per flow).
type moveTables struct {
	mu   sync.Mutex
	at   map[int64][]int32
	reps map[[maxFactors]int32][]bool // per sub-lattice's steps: its representatives (repsOf)
	// shifts: per translation of the endpoint numbers and element, the endpoints it moves alike
	// (Symmetry.shifted).
	shifts map[shiftKey]int32
}

// shiftKey is a translation of the endpoint numbers by delta and an element of Γ (its digits).
type shiftKey struct {
	delta int32
	tau   [maxFactors]uint16
}

// maxShifts bounds the translations a symmetry keeps (a job's period names one per group
// shape); beyond it they start over.
const maxShifts = 256

// shifted is how many endpoints from 0 on the element with digits tau moves delta on, as their
// numbers go: every endpoint e below it has e + delta an endpoint and move(e, tau) = e + delta.
// It is a property of the fabric's numbering alone, built on first use per (delta, tau): a
// period of groups of ranks on endpoints in rank order reads it instead of moving every member
// (Model.groupPeriod).
func (s *Symmetry) shifted(delta int32, tau *[maxFactors]uint16) int32 {
	key := shiftKey{delta, *tau}
	s.moves.mu.Lock()
	defer s.moves.mu.Unlock()
	if n, ok := s.moves.shifts[key]; ok {
		return n
	}
	n, ends := int32(0), int32(len(s.EndElem))
	for delta >= 0 && n+delta < ends && s.move(n, tau) == n+delta {
		n++
	}
	if s.moves.shifts == nil || len(s.moves.shifts) >= maxShifts {
		s.moves.shifts = map[shiftKey]int32{}
	}
	s.moves.shifts[key] = n
	return n
}

// mover is the table of act(e, f, stride, d) for every endpoint e.
func (s *Symmetry) mover(f int, stride, d int32) []int32 {
	key := int64(f)<<32 | int64(d)
	s.moves.mu.Lock()
	defer s.moves.mu.Unlock()
	if t, ok := s.moves.at[key]; ok {
		return t
	}
	t := make([]int32, len(s.EndElem))
	m := s.Factors[f]
	for rep := range s.Reps { // act's answer for each element x in order, x's digit along f stepped
		row := s.endAt[rep*s.Order : (rep+1)*s.Order]
		dig, run := int32(0), int32(0)
		for x, e := range row {
			nd := dig + d
			if nd >= m {
				nd -= m
			}
			if e >= 0 {
				t[e] = row[int32(x)+(nd-dig)*stride]
			}
			if run++; run == stride {
				if run, dig = 0, dig+1; dig == m {
					dig = 0
				}
			}
		}
	}
	s.moves.at[key] = t
	return t
}

// lattice is a subgroup H of a symmetry Γ: the multiples of step[f] along each factor f, of
// cosets = Π step[f] cosets.
type lattice struct {
	sym    *Symmetry
	step   [maxFactors]int32
	cosets int32
	// isRep marks the representatives of every endpoint's H-orbit (Symmetry.repsOf, shared by
	// the lattices of the same steps).
	isRep []bool
	// kt[i][d] is digit d's part of a key along the i-th non-trivial factor (d mod its step,
	// times the steps before it; keyTables), where the links' digits are listed (nil: key).
	kt [maxFactors][]int32
}

// rep reports whether endpoint e is its H-orbit's representative (every digit below the step).
func (h *lattice) rep(e int32) bool {
	if h.isRep != nil {
		return h.isRep[e]
	}
	return h.repOf(e)
}

// repOf is rep from the endpoint's element.
func (h *lattice) repOf(e int32) bool {
	x := h.sym.EndElem[e]
	for f, m := range h.sym.Factors {
		if x%m >= h.step[f] {
			return false
		}
		x /= m
	}
	return true
}

// key numbers link l's H-orbit: its Γ-orbit and the coset of its element.
func (h *lattice) key(l int32) int32 {
	x, c, w := h.sym.LinkElem[l], int32(0), int32(1)
	for f, m := range h.sym.Factors {
		c += x % m % h.step[f] * w
		w *= h.step[f]
		x /= m
	}
	return h.sym.orbitIx[l]*h.cosets + c
}

// sublattice is the largest H of the fabric's symmetry that maps one round of pattern pt over
// the n concurrent groups of shape g onto itself, or nil: no such H but the identity, a fabric
// without named elements, hash routing, or a part in which a member sends to several others
// (besides a lone uniform part).
func (m *Model) sublattice(r *router, pt collective.Pattern, g network.Group, n int) *lattice {
	if !m.latticeKinds(pt, n) {
		return nil
	}
	inv, set := m.invScratch(r, pt)
	defer r.clearInv(inv, &set)
	E := int32(m.g.Endpoints)
	ok := true
	for gi := 0; gi < n && ok; gi++ {
		if !g.Runs(gi) {
			continue
		}
		base := g.Base(gi)
		for i := 0; i < pt.N; i++ {
			row := int32(i) * E
			if part := pt.Parts[i]; part.Kind != collective.Uniform {
				part.Each(g.Size, func(src, dst int, _ float64) {
					k := row + m.endpoint(base+src*g.Stride)
					if inv[k] >= 0 {
						ok = false
						return
					}
					inv[k] = m.endpoint(base + dst*g.Stride)
					set = append(set, k)
				})
				continue
			}
			for j := 0; j < g.Size; j++ {
				if k := row + m.endpoint(base+j*g.Stride); inv[k] < 0 {
					inv[k] = int32(gi)
					set = append(set, k)
				}
			}
		}
	}
	if !ok {
		return nil
	}
	return m.largest(r, inv, set, nil, pt, n)
}

// sublatticeOf is sublattice for a round collected flow by flow (router.fl; no uniform part).
func (m *Model) sublatticeOf(r *router, pt collective.Pattern, n int) *lattice {
	if !m.latticeKinds(pt, n) {
		return nil
	}
	inv, _ := m.invScratch(r, pt)
	E := int32(m.g.Endpoints)
	fl := r.fl
	defer func() { // set the entries in use back to −1 (the flows list them)
		if len(fl) > pt.N*int(E)/8 { // most of them: all at once
			for i := range inv[:pt.N*int(E)] {
				inv[i] = -1
			}
			return
		}
		for _, f := range fl {
			inv[f.part*E+f.s] = -1
		}
	}()
	for _, f := range fl {
		k := f.part*E + f.s
		if inv[k] >= 0 {
			return nil
		}
		inv[k] = f.t
	}
	return m.largest(r, inv, nil, fl, pt, n)
}

// sublatticeWhole is sublattice for a round of one group whose ranks are the first endpoints in
// order (wholeGroup), found without collecting its flows: in every part a member sends to one
// other at most (latticeKinds), so the part's flows are a partner per member (rows: partnerRows),
// and inv's row of the part is that list. A move keeps the round iff it keeps every part
// (invariantUnder compares each flow with its own part's row only), so each part's answer per
// step is read from its partners alone and kept per model: the torus all-reduce's two patterns
// send along the same four tables, and the second's search reads the first's answers. The
// largest H is the same as sublatticeOf's (the same steps tried in the same order, each with the
// same answer).
func (m *Model) sublatticeWhole(r *router, pt collective.Pattern, g network.Group, rows *partnerRows) *lattice {
	return m.largestBy(r, func(f int, stride, d int32) bool {
		move := m.g.sym.mover(f, stride, d)
		for i := 0; i < pt.N; i++ {
			key := partStep{part: pt.Parts[i], g: g, f: int8(f), d: d}
			key.part.Weight = 0
			if inv, ok := invertible(pt.Parts[i], g.Size); ok { // a table and its inverse: one answer
				key.part.K = min(key.part.K, inv.K)
			}
			kept, ok := m.partSteps[key]
			if !ok {
				kept = rowInvariant(rows[i], move)
				if m.partSteps == nil {
					m.partSteps = map[partStep]bool{}
				}
				m.partSteps[key] = kept
			}
			if !kept {
				return false
			}
		}
		return true
	})
}

// invertible is the part undoing q (collective.Part.Inverse) where q is a table over exactly the
// p members of a group. A move τ keeps such a table T (rowInvariant: every member's τs a member,
// T(τs) = τT(s)) iff it keeps its inverse U: τ maps the members onto themselves, and for a member
// s with x = U(s), T(τx) = τT(x) = τs, so U(τs) = τx = τU(s); the same from U to T.
func invertible(q collective.Part, p int) (collective.Part, bool) {
	if q.Kind != collective.Table || q.Limit != 0 || len(q.Successors()) != p {
		return collective.Part{}, false
	}
	return q.Inverse()
}

// partStep names a part's invariance under one step along a factor (Model.partSteps).
type partStep struct {
	part collective.Part // weight 0: the flows, not their size
	g    network.Group
	f    int8
	d    int32
}

// wholeGroup reports whether a round over the n groups of shape g is one group on the first
// endpoints in rank order (rank r on endpoint r, base 0, stride 1) and no NIC to count.
func (m *Model) wholeGroup(r *router, g network.Group, n int) bool {
	return n == 1 && g.Runs(0) && g.Base(0) == 0 && g.Stride == 1 && m.opt.Placement == nil && r.nicOut == nil
}

// partnerRows are, per part of a round over a whole group (wholeGroup: members are endpoints),
// each member's partner (−1: none).
type partnerRows [collective.MaxParts][]int32

// list fills the rows of pt over the members of g: a successor table as it is, any other part's
// flows written into the router's scratch. Each lists the flows of the kinds sub-lattices take
// (latticeKinds) one per source at most, in increasing order of sources, so a row read in order
// is Each's order.
func (rows *partnerRows) list(r *router, pt collective.Pattern, g network.Group) {
	p, listed := g.Size, 0
	for i := 0; i < pt.N; i++ {
		rows[i] = nil
		if next := pt.Parts[i].Successors(); next != nil && pt.Parts[i].Limit == 0 {
			rows[i] = next[:min(len(next), p)]
			continue
		}
		listed++
	}
	if cap(r.dest) < listed*p {
		r.dest = make([]int32, listed*p)
	}
	dest := r.dest[:listed*p]
	for i := 0; i < pt.N; i++ {
		if rows[i] != nil {
			continue
		}
		row := dest[:p:p]
		dest = dest[p:]
		q := pt.Parts[i]
		if b := int(q.Stride) * int(q.Size); (q.Kind == collective.Shift || q.Kind == collective.RingNext) && q.Limit == 0 && b > 0 && b < p {
			shiftRow(q, b, row)
		} else {
			for k := range row {
				row[k] = -1
			}
			q.Each(p, func(s, d int, _ float64) { row[s] = int32(d) })
		}
		rows[i] = row
	}
}

// shiftRow fills row (one entry per member) with the partners of Shift (or RingNext) part q,
// whose flows repeat every b = Stride·Size members, moved by b: member m's digit ⌊m/Stride⌋ mod
// Size is m + b's, so Each sends m + b to its partner + b, where that is a member (the first b
// members listed by Each, the rest read from the member b before; TestShiftRows against Each).
func shiftRow(q collective.Part, b int, row []int32) {
	first := row[:b]
	for k := range first {
		first[k] = -1
	}
	q.Each(b, func(s, d int, _ float64) { first[s] = int32(d) })
	p := int32(len(row))
	for m := b; m < len(row); m++ {
		d := row[m-b]
		if d >= 0 {
			if d += int32(b); d >= p {
				d = -1
			}
		}
		row[m] = d
	}
}

// rowInvariant reports whether the flows s → row[s] (row[s] ≥ 0) map onto themselves when every
// endpoint moves by move: each moved sender a member whose partner is the moved partner (what
// invariantUnder reads from inv's row of the part).
func rowInvariant(row, move []int32) bool {
	if len(move) < len(row) { // (members are endpoints: never)
		return false
	}
	move = move[:len(row)] // (the members' moves: no bounds check on move[s])
	for s, t := range row {
		if t < 0 {
			continue
		}
		ms, ti := int(move[s]), int(t)
		if uint(ms) >= uint(len(row)) || ti >= len(move) || row[ms] != move[ti] {
			return false
		}
	}
	return true
}

// routeWhole routes the flows of a round found H-invariant by sublatticeWhole into H's
// representatives, in the order routeCollected takes them from collect's list (part by part,
// each part's flows as Each lists them: its row in order); false when some cannot reach their
// destination. Each part's flows into the representatives are listed once per H and kept per
// model (the torus all-reduce's second pattern reads the first's); a table with an inverse finds
// them from the representatives (repsFrom).
func (m *Model) routeWhole(r *router, pt collective.Pattern, g network.Group, h *lattice, rows *partnerRows) bool {
	ok, reps := true, r.hreps[:0]
	if r.subTypes { // (types.go: equivariance holds where Γ fixes links too)
		r.typing = true
		defer func() { r.typing = false }()
	}
	pm := &r.perm
	if pm.want && r.typing { // every flow typed, its part marked on its type (permuted.go)
		pm.on, pm.ok, pm.gen = true, true, r.g.gen.Load()
		eager := r.eager
		r.eager = true
		defer func() {
			r.eager, pm.on = eager, false
			pm.n, pm.seg[pt.N] = pt.N, int32(len(r.usedIdx))
			pm.meet, pm.least = r.meet()
			pm.ok = pm.ok && r.ft.gen == pm.gen
		}()
	}
	for i := 0; i < pt.N; i++ {
		q := pt.Parts[i]
		pm.part, pm.seg[i] = uint8(i), int32(len(r.usedIdx))
		key := partReps{part: q, g: g, step: h.step}
		key.part.Weight = 0
		into, known := m.repFlows[key]
		if !known {
			into = []int32{}
			if inv, ok := invertible(q, g.Size); ok {
				if len(reps) == 0 {
					reps = h.appendReps(reps)
				}
				into = r.repsFrom(inv.Successors(), reps, make([]int32, 0, 2*len(reps))) // (one sender each)
			} else {
				isRep := h.isRep // (set: largestBy's H)
				for s, t := range rows[i] {
					if t >= 0 && isRep[t] {
						into = append(into, int32(s), t)
					}
				}
			}
			if m.repFlows == nil {
				m.repFlows = map[partReps][]int32{}
			}
			m.repFlows[key] = into
		}
		w := q.W()
		for k := 0; k < len(into); k += 2 { // (route, a typed flow's distance not looked up)
			s, t := into[k], into[k+1]
			if r.typing && r.typed(s, t, w) {
				continue
			}
			pm.ok = false
			if d := r.g.dist.Dist(s, t); d < Unreachable {
				r.direct(s, t, d, w)
			} else {
				ok = false
			}
		}
	}
	r.hreps = reps[:0]
	return ok
}

// appendReps appends H's representatives (the endpoints whose element's digits are below H's
// steps: Π step cosets of each of Γ's representatives), in no particular order.
func (h *lattice) appendReps(reps []int32) []int32 {
	s := h.sym
	var dig [maxFactors]int32
	for c := int32(0); c < h.cosets; c++ {
		x, w := int32(0), int32(1) // the element of digits dig
		for f, m := range s.Factors {
			x += dig[f] * w
			w *= m
		}
		for rep := range s.Reps {
			if e := s.endAt[rep*s.Order+int(x)]; e >= 0 {
				reps = append(reps, e)
			}
		}
		for f := range s.Factors { // the next digits, the first factor's fastest
			if dig[f]++; dig[f] < h.step[f] {
				break
			}
			dig[f] = 0
		}
	}
	return reps
}

// repsFrom appends the flows into the representatives reps of a table whose inverse is back, as
// (source, destination) pairs in source order (Each's): the one source of representative t (a
// member: t below the table's length) is back[t]. Where the representatives are many (at least
// one in repsScan of the members: sorting them would cost more than a pass over the members),
// each source is marked with its destination and the marks read in source order; else the
// pairs are sorted.
func (r *router) repsFrom(back, reps []int32, into []int32) []int32 {
	if len(reps)*repsScan >= len(back) {
		if cap(r.mark) < len(back) {
			r.mark = make([]int32, len(back)) // all 0 between calls
		}
		mark, lo, hi := r.mark[:len(back)], int32(len(back)), int32(-1)
		for _, t := range reps {
			if int(t) < len(back) {
				s := back[t]
				mark[s] = t + 1
				lo, hi = min(lo, s), max(hi, s)
			}
		}
		for s := lo; s <= hi; s++ {
			if t := mark[s]; t != 0 {
				into = append(into, s, t-1)
				mark[s] = 0
			}
		}
		return into
	}
	pairs := r.pairs[:0] // source·2³² + destination: in source order when sorted
	for _, t := range reps {
		if int(t) < len(back) {
			pairs = append(pairs, uint64(back[t])<<32|uint64(t))
		}
	}
	slices.Sort(pairs)
	for _, x := range pairs {
		into = append(into, int32(x>>32), int32(uint32(x)))
	}
	r.pairs = pairs[:0]
	return into
}

// repsScan is the members per representative up to which repsFrom reads marks instead of
// sorting (a sort of n pairs takes about n·log₂ n comparisons, a pass one read per member:
// 1,024 representatives of 16,384 members, 16 each, are read by marks; 16 of them, sorted).
const repsScan = 32

// partReps names a part's flows into the representatives of a sub-lattice (Model.repFlows).
type partReps struct {
	part collective.Part // weight 0: the flows, not their size
	g    network.Group
	step [maxFactors]int32
}

// latticeKinds reports whether sub-lattice routing may apply to rounds of pt over n groups: a
// fabric with named elements acting freely, split routing, and parts in which a member sends to
// one other (or a lone uniform part).
func (m *Model) latticeKinds(pt collective.Pattern, n int) bool {
	s := m.g.sym
	if s == nil || !s.lattice || m.opt.Routing != Split || pt.N == 0 || n < 1 {
		return false
	}
	for i := 0; i < pt.N; i++ {
		switch pt.Parts[i].Kind {
		case collective.Uniform:
			if pt.N > 1 {
				return false
			}
		case collective.RingNext, collective.Shift, collective.Chain, collective.XOR, collective.FoldIn, collective.FoldOut,
			collective.TreeUp, collective.Table, collective.ToRoot:
		default:
			return false
		}
	}
	return true
}

// invScratch is the router's inv (inv[i·E + e]: where endpoint e sends in part i, a uniform
// part: its group; −1 nowhere; all −1 between rounds) and its list of entries in use.
func (m *Model) invScratch(r *router, pt collective.Pattern) ([]int32, []int32) {
	if E := m.g.Endpoints; len(r.inv) < pt.N*E {
		r.inv = make([]int32, pt.N*E)
		for i := range r.inv {
			r.inv[i] = -1
		}
	}
	return r.inv, r.invSet[:0]
}

// clearInv sets the entries in use back to −1 and keeps the list's storage.
func (r *router) clearInv(inv []int32, set *[]int32) {
	for _, k := range *set {
		inv[k] = -1
	}
	r.invSet = (*set)[:0]
}

// largest is the largest H whose moves keep the flows in inv (entries set, or the flows fl
// that set them), or nil.
func (m *Model) largest(r *router, inv, set []int32, fl []flowRec, pt collective.Pattern, n int) *lattice {
	return m.largestBy(r, func(f int, stride, d int32) bool {
		return m.invariantUnder(r, inv, set, fl, pt, n, f, stride, d)
	})
}

// largestBy is the largest H whose every step d along each factor f (whose digits are stride
// apart) keeps the round, as kept says, or nil: per factor, the least step that divides it and
// keeps the round.
func (m *Model) largestBy(r *router, kept func(f int, stride, d int32) bool) *lattice {
	s := m.g.sym
	h := &r.subLat // the router's: a round's lattice lives until finish
	*h = lattice{sym: s, cosets: 1}
	trivial, stride := true, int32(1)
	for f, mf := range s.Factors {
		h.step[f] = mf
		for d := int32(1); d < mf && s.fixed&(1<<f) == 0; d++ { // (no move along a factor that fixes links)
			if mf%d == 0 && kept(f, stride, d) {
				h.step[f], trivial = d, false
				break
			}
		}
		h.cosets *= h.step[f]
		stride *= mf
	}
	if trivial {
		return nil
	}
	h.isRep = s.repsOf(h)
	r.ktab = h.keyTables(r.ktab)
	return h
}

// keyTables fills kt from buf's storage (grown if short) and returns it; kt stays nil where the
// links' digits are not listed (Symmetry.typing).
func (h *lattice) keyTables(buf []int32) []int32 {
	s := h.sym
	if s.linkDig == nil {
		return buf
	}
	n := int32(0)
	for f := 0; f < s.nf; f++ {
		n += s.fm[f]
	}
	if int32(cap(buf)) < n {
		buf = make([]int32, n)
	}
	buf = buf[:n]
	at, i, w := int32(0), 0, int32(1)
	for f, m := range s.Factors {
		if m > 1 {
			t := buf[at : at+m : at+m]
			for d := range t {
				t[d] = int32(d) % h.step[f] * w
			}
			h.kt[i], at, i = t, at+m, i+1
		}
		w *= h.step[f]
	}
	return buf
}

// keyOf is key(l), read from the key tables where there are some.
func (h *lattice) keyOf(l int32) int32 {
	if h.kt[0] == nil {
		return h.key(l)
	}
	s, c := h.sym, int32(0)
	d := &s.linkDig[l]
	for f := 0; f < s.nf; f++ {
		c += h.kt[f][d[f]]
	}
	return s.orbitIx[l]*h.cosets + c
}

// repsOf marks the representatives of H's orbits among the endpoints, built once per steps.
func (s *Symmetry) repsOf(h *lattice) []bool {
	s.moves.mu.Lock()
	defer s.moves.mu.Unlock()
	if t, ok := s.moves.reps[h.step]; ok {
		return t
	}
	t := make([]bool, len(s.EndElem))
	for _, e := range h.appendReps(make([]int32, 0, int(h.cosets)*len(s.Reps))) { // (the endpoints repOf marks, listed from H's steps)
		t[e] = true
	}
	if s.moves.reps == nil {
		s.moves.reps = map[[maxFactors]int32][]bool{}
	}
	s.moves.reps[h.step] = t
	return t
}

// invariantUnder reports whether the flows in inv (its entries in use listed in set, or set by
// the collected flows fl) map onto themselves when every endpoint moves by d along factor f. It
// checks the senders only: the move is one to one, so senders that all move onto senders are
// all of them.
func (m *Model) invariantUnder(r *router, inv, set []int32, fl []flowRec, pt collective.Pattern, n, f int, stride, d int32) bool {
	s, E := m.g.sym, int32(m.g.Endpoints)
	move := s.mover(f, stride, d)
	if pt.Parts[0].Kind == collective.Uniform { // then the only part
		if len(r.gmap) < n {
			r.gmap = make([]int32, n)
		}
		for k := range r.gmap[:n] {
			r.gmap[k] = -1
		}
		for _, k := range set {
			x, y := inv[k], inv[move[k]]
			if y < 0 || (r.gmap[x] >= 0 && r.gmap[x] != y) {
				return false
			}
			r.gmap[x] = y
		}
		return true
	}
	if fl != nil { // each flow's entry, read without dividing it into part and sender
		for _, x := range fl {
			if inv[x.part*E+move[x.s]] != move[x.t] {
				return false
			}
		}
		return true
	}
	for _, k := range set {
		row, e := k/E*E, k%E
		if inv[row+move[e]] != move[inv[k]] {
			return false
		}
	}
	return true
}

// fold sums the routed loads per H-orbit of links (H = r.sub), once per round.
func (r *router) fold() {
	if r.folded {
		return
	}
	r.folded = true
	r.foldLinks(r.usedIdx)
}

// foldLinks adds the loads of links idx (a stretch of usedIdx, in its order) to their H-orbits'.
func (r *router) foldLinks(idx []int32) {
	h := r.sub
	if len(r.ksum) < len(r.g.links) {
		r.ksum, r.klink = make([]float64, len(r.g.links)), make([]int32, len(r.g.links)) // (all 0: none)
	}
	if s := h.sym; s.nf == 4 && h.kt[0] != nil { // (keyOf unrolled: a HammingMesh of trees of several leaves)
		kt0, kt1, kt2, kt3, dig, oix, cosets := h.kt[0], h.kt[1], h.kt[2], h.kt[3], s.linkDig, s.orbitIx, h.cosets
		klink, ksum, load, keys := r.klink, r.ksum, r.load, r.keys
		for _, k := range idx {
			d := &dig[k]
			key := oix[k]*cosets + kt0[d[0]] + kt1[d[1]] + kt2[d[2]] + kt3[d[3]]
			if klink[key] == 0 {
				klink[key] = k + 1
				keys = append(keys, key)
			}
			ksum[key] += load[k]
		}
		r.keys = keys
		return
	}
	for _, k := range idx {
		key := h.keyOf(k)
		if r.klink[key] == 0 {
			r.klink[key] = k + 1
			r.keys = append(r.keys, key)
		}
		r.ksum[key] += r.load[k]
	}
}

// finishSub reads a round routed towards H's representatives: every link carries its H-orbit's
// sum. It clears the loads.
func (r *router) finishSub(out Load) Load {
	if pm := &r.perm; pm.ok && r.routing == Split && !r.folded && pm.seg[0] == 0 && int(pm.seg[pm.n]) == len(r.usedIdx) {
		r.finishParts(&out)
	} else {
		pm.ok = false
		r.fold()
		for _, key := range r.keys {
			r.busiest(&out, r.klink[key]-1, r.ksum[key])
			r.ksum[key], r.klink[key] = 0, 0
		}
	}
	r.keys = r.keys[:0]
	for _, k := range r.usedIdx {
		r.load[k], r.used[k] = 0, false
	}
	r.usedIdx = r.usedIdx[:0]
	r.maxLat, r.flows, r.sub, r.folded = 0, false, nil, false
	return out
}

// spillSub appends every link's load (its H-orbit's sum), times scale, to vols.
func (r *router) spillSub(vols []slotVolume, scale float64) []slotVolume {
	r.fold()
	for k := range r.g.links {
		if x := r.ksum[r.sub.keyOf(int32(k))]; x > 0 {
			vols = append(vols, slotVolume{int32(k), x * scale})
		}
	}
	return vols
}
