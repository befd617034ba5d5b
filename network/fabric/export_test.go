package fabric

import (
	"math"
	"slices"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Sublattice is the steps of the subgroup H that one round of pt over the concurrent groups of
// shape g is routed under (nil: every flow routed).
func (m *Model) Sublattice(pt collective.Pattern, g network.Group) []int32 {
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	h := m.sublattice(r, pt, g, g.Groups(m.env.GPUs))
	if h == nil {
		return nil
	}
	return h.step[:len(m.g.sym.Factors)]
}

// SublatticeCollected is Sublattice found as a typed round finds it: from the round's collected
// flows (sublatticeOf, invariantUnder over the flows list), the flows then routed and the
// router cleared as a round leaves it.
func (m *Model) SublatticeCollected(pt collective.Pattern, g network.Group) []int32 {
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	n := g.Groups(m.env.GPUs)
	m.collect(r, pt, g, n)
	h := m.sublatticeOf(r, pt, n)
	var steps []int32
	var sym *Symmetry
	if h != nil {
		steps, sym, r.sub = slices.Clone(h.step[:len(m.g.sym.Factors)]), m.g.sym, h
	}
	r.routeCollected(h, period{}, false)
	r.finish(sym)
	return steps
}

// SublatticeWhole is Sublattice found as a round of one group in rank order finds it
// (sublatticeWhole: from each part's partners, without collecting the flows); false where that
// path does not apply.
func (m *Model) SublatticeWhole(pt collective.Pattern, g network.Group) ([]int32, bool) {
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	if !m.wholeGroup(r, g, g.Groups(m.env.GPUs)) || !m.latticeKinds(pt, 1) {
		return nil, false
	}
	r.rows.list(r, pt, g)
	h := m.sublatticeWhole(r, pt, g, &r.rows)
	r.rows = partnerRows{}
	if h == nil {
		return nil, true
	}
	return slices.Clone(h.step[:len(m.g.sym.Factors)]), true
}

// TorusRepFlows is, for each part of the first round of the torus all-reduce (collective.HMTorus)
// over the group g, its flows into the representatives of the round's sub-lattice as routeWhole
// lists them from the part's inverse table (nil: the part has none) and as a scan of the part's
// table finds them, (source, destination) pairs.
func (m *Model) TorusRepFlows(g network.Group) (fromInverse, scanned [][]int32) {
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	m.view.g = g
	m.flows.Rounds = m.flows.Rounds[:0]
	if err := collective.HMTorus.Rounds(network.AllReduce, 1e9, &m.view, &m.flows); err != nil || len(m.flows.Rounds) == 0 {
		return nil, nil
	}
	pt := m.flows.Rounds[0].Pattern
	r.rows.list(r, pt, g)
	h := m.sublatticeWhole(r, pt, g, &r.rows)
	if h == nil {
		return nil, nil
	}
	reps := h.appendReps(nil)
	for i := 0; i < pt.N; i++ {
		var via, scan []int32
		if inv, ok := invertible(pt.Parts[i], g.Size); ok {
			via = r.repsFrom(inv.Successors(), reps, []int32{})
		}
		for s, t := range pt.Parts[i].Successors() {
			if t >= 0 && h.rep(t) {
				scan = append(scan, int32(s), t)
			}
		}
		fromInverse, scanned = append(fromInverse, via), append(scanned, scan)
	}
	return fromInverse, scanned
}

// Reps is the representatives of the sub-lattice of the given steps, as appendReps lists them,
// as a scan of every endpoint's element finds them (repOf) and as the table repsOf marks them.
func (m *Model) Reps(steps []int32) (listed, scanned, marked []int32) {
	h := lattice{sym: m.g.sym, cosets: 1}
	for f := range m.g.sym.Factors {
		h.step[f] = steps[f]
		h.cosets *= steps[f]
	}
	isRep := m.g.sym.repsOf(&h)
	for e := range int32(m.g.Endpoints) {
		if h.repOf(e) {
			scanned = append(scanned, e)
		}
		if isRep[e] {
			marked = append(marked, e)
		}
	}
	return h.appendReps(nil), scanned, marked
}

// Moved is every endpoint moved by d along factor f (whose digits are stride apart), as the
// table mover builds and as act finds each.
func (m *Model) Moved(f int, stride, d int32) (table, acted []int32) {
	s := m.g.sym
	for e := range int32(m.g.Endpoints) {
		acted = append(acted, s.act(e, f, stride, d))
	}
	return s.mover(f, stride, d), acted
}

// Period is the period (in flows) and the element τ (its digits along the non-trivial factors)
// that one round of pt over the concurrent groups of shape g is routed by (0, nil: none).
func (m *Model) Period(pt collective.Pattern, g network.Group) (int, []uint16) {
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	r.lastQ = 0
	sym, err := m.load(r, pt, g)
	r.finish(sym)
	if err != nil || r.lastQ == 0 {
		return 0, nil
	}
	return r.lastQ, append([]uint16(nil), r.lastTau[:m.g.sym.nf]...)
}

// Runs are the runs (start group, groups repeated, copies, τ's digits along the non-trivial
// factors) that the first period of one round of pt over the concurrent groups of shape g is
// routed by (runs.go).
func (m *Model) Runs(pt collective.Pattern, g network.Group) [][4]int {
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	r.lastRuns = r.lastRuns[:0]
	sym, _ := m.load(r, pt, g)
	r.finish(sym)
	var out [][4]int
	for _, x := range r.lastRuns {
		out = append(out, [4]int{x.at, x.q, x.n, int(x.tau[0])<<16 | int(x.tau[1])})
	}
	return out
}

// BoundOf is best's lower bound on algorithm a's price of c (bound.go; false: none).
func (m *Model) BoundOf(a collective.Algorithm, c network.Collective) (units.Seconds, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.view.g = c.Group
	m.resetBounds()
	return m.bound(a, c)
}

// PriceWith prices c with algorithm a (declined or not).
func (m *Model) PriceWith(a collective.Algorithm, c network.Collective) (network.Cost, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.view.g = c.Group
	return m.priceWith(a, c, units.Seconds(math.Inf(1)))
}

// Unbounded is the same job on the graph without best's bounds (WithoutBounds).
func (m *Model) Unbounded() *Model {
	return m.on(WithoutBounds(m.g))
}

// Fresh is the same job on a copy of the graph with empty caches (so best's bounds are computed,
// not read from routed rounds); memberwise: the bounds divide member by member even where every
// endpoint has the same rates.
func (m *Model) Fresh(memberwise bool) *Model {
	h := WithoutSymmetry(m.g)
	h.sym, h.memberwise = m.g.sym, memberwise
	u, err := NewModel(h, m.env, m.opt)
	if err != nil {
		panic(err)
	}
	return u
}

// Again is a new model of the same job on the same graph (its routed rounds shared).
func (m *Model) Again() *Model {
	u, err := NewModel(m.g, m.env, m.opt)
	if err != nil {
		panic(err)
	}
	return u
}

// RemainderLoads routes one round of pt over the concurrent groups of shape g as pricing does
// and returns the loads that windows read on the links the flows after the last whole period
// load (their window's sum plus those flows' loads), where the round is read by windows (nil: it
// is not), whether those loads were read from the first period's first stretches
// (tailAsPrefix) rather than routed, and every link's load when the copies are added link by
// link (WithoutWindows).
func (m *Model) RemainderLoads(pt collective.Pattern, g network.Group) (map[int32]float64, bool, []float64) {
	var rem map[int32]float64
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	r.lone = true
	sym, _ := m.load(r, canonical(pt), g)
	prefix := false
	if r.win.on {
		rem = map[int32]float64{}
		for _, x := range r.rem {
			p, _ := r.windowOf(x.l)
			rem[x.l] = p.v + x.v
		}
		// Where those flows were read from the first stretches (tailAsPrefix): the links K
		// positions on from the entries they load, read by their windows.
		w := &r.win
		for ci, c := range w.cycles {
			for _, e := range slices.Clone(r.cycleEntries(int32(ci))) { // windowOf reuses the scratch
				if e.pre > 0 {
					prefix = true
					l := r.linkAtPos(c.base, (e.pos+w.k)%w.n)
					if p, ok := r.windowOf(l); ok {
						rem[l] = p.v
					}
				}
			}
		}
	}
	r.finish(sym)
	m.g.release(r)
	u, err := NewModel(WithoutWindows(m.g), m.env, m.opt)
	if err != nil {
		panic(err)
	}
	r = u.g.router(u.opt.Routing, u.opt.Seed)
	defer u.g.release(r)
	sym, _ = u.load(r, canonical(pt), g)
	all := make([]float64, len(u.g.links))
	for _, l := range r.usedIdx {
		all[l] = r.load[l]
	}
	r.finish(sym)
	return rem, prefix, all
}

// Placed is the same job on the graph with ranks placed by p (a placement given: every flow
// collected, no period's flows left out).
func (m *Model) Placed(p []int32) *Model {
	opt := m.opt
	opt.Placement = p
	u, err := NewModel(m.g, m.env, opt)
	if err != nil {
		panic(err) // the job fits: it was placed on the same graph
	}
	return u
}

// NoSublattice reports whether a few flows of one round of pt over the concurrent groups of
// shape g rule out every sub-lattice (noSublattice).
func (m *Model) NoSublattice(pt collective.Pattern, g network.Group) bool {
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	return m.noSublattice(r, pt, g, g.Groups(m.env.GPUs))
}

// linkAtPos is the link at position pos of the τ-cycle whose first link's number is base (the
// inverse of cycleOf): the digit x along τ's factor with x ≡ c (mod g), c the first link's digit,
// at position pos.
func (r *router) linkAtPos(base, pos int32) int32 {
	w, sym := &r.win, r.g.sym
	fs, m := sym.fs[w.f], sym.fm[w.f]
	g, c := m/w.n, base/fs%m
	for x := c; x < m; x += g {
		if w.digit[x].pos == pos {
			return sym.linkAt[base+(x-c)*fs]
		}
	}
	panic("fabric: no link at that position of the cycle")
}

// PeriodLoads routes one round of pt over the concurrent groups of shape g with its copies added
// link by link (windows off: the links in the order they were first loaded, and their loads).
func (m *Model) PeriodLoads(pt collective.Pattern, g network.Group) ([]int32, []float64) {
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	sym, _ := m.load(r, canonical(pt), g)
	links := append([]int32(nil), r.usedIdx...)
	loads := make([]float64, len(links))
	for i, l := range links {
		loads[i] = r.load[l]
	}
	r.finish(sym)
	return links, loads
}

// Along is the same job on the graph with runs' copies added copy by copy (WithoutRunCycles).
func (m *Model) Along() *Model {
	return m.on(WithoutRunCycles(m.g))
}

// MovedLink is the link replay loads for link l moved by element x (types.go: linkAt read at
// l's orbit and its element's digits plus x's), or −1 where the graph has no flow types.
func (g *Graph) MovedLink(l, x int32) int32 {
	s := g.sym
	if s == nil || s.linkAt == nil {
		return -1
	}
	xd := s.endDig[0] // (only its length: the digits are set below)
	for f := 0; f < s.nf; f++ {
		xd[f] = uint16(x / s.fs[f] % s.fm[f])
	}
	y := s.orbitIx[l] * int32(s.Order)
	for f := 0; f < s.nf; f++ {
		y += s.shift[f][s.linkDig[l][f]+xd[f]]
	}
	return s.linkAt[y]
}

// Back is endpoint t moved by the inverse of endpoint s's element, as flow types read it (back)
// and as moving t by the inverse element (move, inverse), or −1, −1 without flow types.
func (g *Graph) Back(t, s int32) (int32, int32) {
	if g.sym == nil || g.sym.linkAt == nil {
		return -1, -1
	}
	inv := g.sym.inverse(&g.sym.endDig[s])
	return g.sym.back(t, s), g.sym.move(t, &inv)
}

// MovesTo reports, for endpoints a and b and element x, whether movesTo says a moved by x is b,
// and whether move finds b; false, false without flow types.
func (g *Graph) MovesTo(a, b, x int32) (bool, bool) {
	s := g.sym
	if s == nil || s.linkAt == nil {
		return false, false
	}
	xd := s.endDig[0]
	for f := 0; f < s.nf; f++ {
		xd[f] = uint16(x / s.fs[f] % s.fm[f])
	}
	return s.movesTo(a, b, &xd), s.move(a, &xd) == b
}

// Order is |Γ| (0: no symmetry).
func (g *Graph) Order() int {
	if g.sym == nil {
		return 0
	}
	return g.sym.Order
}

// Unimaged is the same job on the graph with every run routed and copied (WithoutRunImages).
func (m *Model) Unimaged() *Model {
	return m.on(WithoutRunImages(m.g))
}

// RunImages are the runs of the first period of one round of pt over the concurrent groups of
// shape g that are read from an earlier run moved (runs.go, Images): each run's start group, the
// earlier run's, and σ's digits along the non-trivial factors written as Runs writes τ.
func (m *Model) RunImages(pt collective.Pattern, g network.Group) [][3]int {
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	r.lastRuns = r.lastRuns[:0]
	sym, _ := m.load(r, canonical(pt), g)
	r.finish(sym)
	var out [][3]int
	for i, x := range r.plan {
		if im := r.images[i]; im.src >= 0 {
			out = append(out, [3]int{x.at, r.plan[im.src].at, int(im.sigma[0])<<16 | int(im.sigma[1])})
		}
	}
	return out
}

// ShapePlans collects one round of pt over the concurrent groups of shape g as pricing does
// (where it collects the periodic flows alone) and reports whether its plans are read from the
// groups' members (shapePlans), and whether they (the first period's and the tail's, with their
// runs' images) equal those read from the flows (planRuns, runImages).
func (m *Model) ShapePlans(pt collective.Pattern, g network.Group) (given, same bool) {
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	n := g.Groups(m.env.GPUs)
	gp, ok := m.groupPeriod(r, g, n)
	if !m.skipsPeriods(g, n) || !ok || n/gp.q < 2 || !m.noSublattice(r, pt, g, n) {
		return false, false
	}
	m.collectPeriodic(r, pt, g, n, gp.q)
	defer func() { r.fl, r.starts, r.gap = r.fl[:0], r.starts[:0], 0 }()
	sp := m.shapePlans(r, g, n, gp)
	if sp == nil {
		return false, false
	}
	c := int(r.starts[1])
	q := gp.q * c
	k := (len(r.fl) + r.gap) / q
	same = true
	for _, part := range []struct {
		fl     []flowRec
		plan   []run
		images []runImage
	}{{r.fl[:q], sp.first, sp.images}, {r.fl[k*q-r.gap:], sp.tail, sp.tails}} {
		groups := len(part.fl) / c
		if !r.runsPlanned(part.fl, groups) {
			same = same && part.plan == nil
			continue
		}
		plan := r.planRuns(part.fl, groups, nil)
		r.runImages(part.fl, c, plan)
		same = same && slices.Equal(plan, part.plan) && slices.Equal(r.images, part.images)
	}
	return true, same
}

// Unshifted is the same job on the graph with periods checked member by member (WithoutShifts).
func (m *Model) Unshifted() *Model {
	return m.on(WithoutShifts(m.g))
}

// Shifted is how many endpoints from 0 the element with digits tau (along the non-trivial
// factors) moves delta on (Symmetry.shifted); −1 without flow types.
func (g *Graph) Shifted(delta int32, tau []uint16) int32 {
	if g.sym == nil || g.sym.linkAt == nil {
		return -1
	}
	var t [maxFactors]uint16
	copy(t[:], tau)
	return g.sym.shifted(delta, &t)
}

// ScaledType records the canonical flow of s → t as a type at weight w1, then at w2 copied
// scaled from it (scaledType) and routed itself (record), and reports whether it was copied and
// whether the copy's shares, links and latency equal the routed ones bit for bit.
func (g *Graph) ScaledType(s, t int32, w1, w2 float64) (copied, same bool) {
	r := g.router(Split, 0)
	defer g.release(r)
	ft, sym := &r.ft, g.sym
	ft.reset()
	defer ft.reset()
	ct := sym.back(t, s)
	rc := uint64(sym.EndRep[s])*uint64(g.Endpoints) + uint64(ct)
	ft.weights = append(ft.weights[:0], w1, w2)
	i := r.record(sym.Reps[sym.EndRep[s]], ct, w1)
	ft.index.put(1<<48|rc, i+1)
	c := r.scaledType(rc, 1, w2)
	if c < 0 {
		return false, false
	}
	d := r.record(sym.Reps[sym.EndRep[s]], ct, w2)
	a, b := ft.start[c], ft.start[d]
	n := ft.start[c+1] - a
	same = n == ft.start[d+1]-b && ft.lat[c] == ft.lat[d]
	for k := int32(0); same && k < n; k++ {
		same = ft.base[a+k] == ft.base[b+k] && ft.dig[a+k] == ft.dig[b+k] && ft.share[a+k] == ft.share[b+k]
	}
	return true, same
}

// Unscaled is the same job on the graph with each weight's flow types routed
// (WithoutScaledTypes).
func (m *Model) Unscaled() *Model {
	return m.on(WithoutScaledTypes(m.g))
}

// Unpermuted is the same job on the graph with permuted rounds off (WithoutPermutedRounds).
func (m *Model) Unpermuted() *Model {
	return m.on(WithoutPermutedRounds(m.g))
}

// PermutedRounds is how many rounds models of jobs on the model's graph have read from a routed
// round with its parts in another order (permuted.go).
func (m *Model) PermutedRounds() int {
	c := m.g.perms
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.m {
		n += e.read
	}
	return n
}

// on is the same job on graph h (g with a shortcut switched off).
func (m *Model) on(h *Graph) *Model {
	u, err := NewModel(h, m.env, m.opt)
	if err != nil {
		panic(err) // the job fits: it was placed on the same graph
	}
	return u
}

// askCutter records the bounds a round routed with it asks about (Cut short) and cuts at the
// yes-th ask (0: never).
type askCutter struct {
	asked []Load
	yes   int
}

func (c *askCutter) cuts(ld Load) bool {
	c.asked = append(c.asked, ld)
	return len(c.asked) == c.yes
}

// CutRoute routes one round of pt over the concurrent groups of shape g as progress does where
// best has a price, on a fresh copy of the job, cut at the yes-th bound it asks about (0:
// never): the Load it leaves, whether it was cut (not kept as routed), the bounds asked about,
// and the round routed again in full on the same model (its router's scratch as the cut left
// it).
func (m *Model) CutRoute(pt collective.Pattern, g network.Group, yes int) (ld Load, cut bool, asked []Load, again Load) {
	ld, cut, asked, again, _ = m.cutRoute(pt, g, yes)
	return
}

// CutRead is what a new model of the job on the same graph reads of the round as best's bound
// (lowerOf) after the cut at ask yes and after the round is routed in full; the second read
// again after an older bound (the first ask's) is offered once more (putBound keeps the load).
func (m *Model) CutRead(pt collective.Pattern, g network.Group, yes int) (afterCut, afterFull, afterOffer Load, exact [3]bool) {
	_, _, _, _, reads := m.cutRoute(pt, g, yes)
	return reads[0].ld, reads[1].ld, reads[2].ld, [3]bool{reads[0].exact, reads[1].exact, reads[2].exact}
}

func (m *Model) cutRoute(pt collective.Pattern, g network.Group, yes int) (ld Load, cut bool, asked []Load, again Load, reads [3]lowerLoadOf) {
	a := m.Fresh(false)
	a.mu.Lock()
	defer a.mu.Unlock()
	c := &askCutter{yes: yes}
	a.view.g, a.cutting, a.g.cutBy = g, true, c
	ld, err := a.route(pt, g)
	a.cutting = false
	if err != nil {
		panic(err)
	}
	e, _, shared, ok := a.routed(canonical(pt), g)
	routed := ok && !e.bound
	read := func() lowerLoadOf {
		b := a.Again()
		b.view.g = g
		return b.lowerOf(pt)
	}
	reads[0] = read()
	if again, err = a.route(pt, g); err != nil {
		panic(err)
	}
	reads[1] = read()
	if !routed && len(c.asked) > 0 {
		putBound(a.g.loads, shared, c.asked[0])
	}
	reads[2] = read()
	return ld, !routed, c.asked, again, reads
}

// Unwindowed routes one round of pt over the concurrent groups of shape g on the graph without
// windows (every copy added link by link).
func (m *Model) Unwindowed(pt collective.Pattern, g network.Group) Load {
	u, err := NewModel(WithoutWindows(m.g), m.env, m.opt)
	if err != nil {
		panic(err)
	}
	ld, err := u.route(pt, g)
	if err != nil {
		panic(err)
	}
	return ld
}
