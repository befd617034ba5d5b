package fabric

import (
	"math"
	"sync"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/topology"
)

// GridMap places endpoints on a fabric's two-dimensional grid (a torus, a HammingMesh's global
// accelerator grid) for the grid algorithms.
type GridMap interface {
	Coord(endpoint int32) (row, col int)
}

// GridTable is a GridMap that also lists every endpoint's row and column (what Coord says,
// indexed by endpoint; part of the fabric's description, built with its graph), so a group is
// arranged on the grid without a call per member.
type GridTable interface {
	GridMap
	Positions() (rows, cols []int32)
}

// Options configure a model: a job placed on a fabric.
type Options struct {
	Name    string // the network's registry name
	Routing Routing
	Seed    uint64 // for Hash routing
	// Placement maps job rank r to its endpoint (nil: rank r on endpoint r).
	Placement []int32
	// Offer lists the flow algorithms the network runs for an op; Choice picks among them.
	Offer  func(network.Op) []collective.Algorithm
	Choice collective.Choice
	// Tiers decompose groups into levels for the hierarchical algorithms (spans in ranks; only
	// the sizes matter here). Nil: one level.
	Tiers []topology.Tier
	// Grid places endpoints on the fabric's grid (nil: no grid algorithms).
	Grid GridMap
}

// Model prices collectives on a fabric with a job placed on it: each algorithm's rounds are
// routed (every concurrent group at once), each round becomes a step (slowest path, busiest link,
// reduction, reconfiguration) and collective.Price sums them. Routed patterns and priced
// collectives are cached. A Model is safe for concurrent use (one lock).
type Model struct {
	opt Options
	g   *Graph
	env network.Env

	mu      sync.Mutex
	place   uint64 // hash of the placement (the graph's load cache tells jobs apart by it)
	view    members
	flows   collective.Flows
	steps   []collective.Step
	routes  map[routeKey]Load
	grids   map[network.Group]gridEntry
	periods map[network.Group]periodEntry
	// partSteps: whether a part's flows over a group map onto themselves under a step of the
	// symmetry (sublatticeWhole).
	partSteps map[partStep]bool
	// repFlows: a part's flows into a sub-lattice's representatives, source and destination
	// pairs in Each's order (routeWhole).
	repFlows map[partReps][]int32
	memo     network.Memo
	// PriceConcurrent's scratch: bytes per link slot of the window, each collective's, the
	// window's key.
	total []float64
	vols  []slotVolume
	key   []byte
	// The bounds' scratch (bound.go): what each member of a group sends and receives, the view
	// and closures the bounds use, the collective being chosen and what its bounds found.
	lbOut, lbIn []float64
	lbView      boundMembers
	lbLink      func(collective.Pattern) collective.Link
	lbBound     func(collective.Algorithm) (units.Seconds, bool)
	lbCol       network.Collective // the collective being chosen, for lbBound
	known       []outcome          // what the bounds found of the candidates: a decline, a price
	prog        []progRound        // the rounds of the algorithm being priced a pattern at a time
	above       collective.Above   // what progress returns when it stops
	// The cheapest price best's candidates have returned so far (hasBest), and the round
	// progress routes, which may stop on a bound (cutting; bound.go, Cut short): the heaviest
	// not routed of the rounds being priced.
	best     units.Seconds
	cutHeavy int32 // in m.prog
	hasBest  bool
	cutting  bool
	injOnce  sync.Once
	inj      bool // the placement puts distinct ranks on distinct endpoints (injective)
}

type routeKey struct {
	pt collective.Pattern
	g  network.Group
}

type periodEntry struct {
	p     period
	ok    bool
	plans *shapePlans // read once the first pattern over the shape is routed by them (nil: not yet)
}

type gridEntry struct {
	grid *collective.Grid
	err  error
}

// NewModel places a job of env.GPUs ranks on the fabric.
func NewModel(g *Graph, env network.Env, opt Options) (*Model, error) {
	slots := g.Endpoints
	if opt.Placement != nil {
		slots = len(opt.Placement)
	}
	if env.GPUs > slots {
		return nil, errs.Usage("a job of %d GPUs does not fit network %s: it has %d accelerators", env.GPUs, opt.Name, slots)
	}
	m := &Model{opt: opt, g: g, env: env, place: placementHash(opt.Placement),
		routes: map[routeKey]Load{}, grids: map[network.Group]gridEntry{}}
	m.view.m = m
	return m, nil
}

// Shareable: a placed job's model changes only its caches after construction, under its lock
// (and the graph's), so the estimates of a sweep's workers share it (network.Shareable).
func (*Model) Shareable() {}

// Name is the network's registry name.
func (m *Model) Name() string { return m.opt.Name }

// Graph is the fabric.
func (m *Model) Graph() *Graph { return m.g }

// Price prices c with the chosen algorithm (the cheapest offered one for best).
func (m *Model) Price(c network.Collective) (network.Cost, error) {
	return m.memo.Price(c, m.env, func() (network.Cost, error) { return m.choose(c, nil) })
}

// choose prices c (a group of more than one) with the chosen algorithm; with won ≠ nil it also
// says which algorithm that was (the first cheapest, as Choose picks).
func (m *Model) choose(c network.Collective, won *collective.Algorithm) (network.Cost, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.view.g = c.Group
	var bound func(collective.Algorithm) (units.Seconds, bool)
	if !m.g.unbounded {
		m.resetBounds()
		if m.lbBound == nil {
			m.lbBound = func(a collective.Algorithm) (units.Seconds, bool) { return m.bound(a, m.lbCol) }
		}
		bound, m.lbCol = m.lbBound, c
	}
	m.hasBest = false
	cost, a, err := collective.ChooseBounded(m.opt.Name, m.opt.Choice.For(c.Op), m.opt.Offer(c.Op), c.Op, bound,
		func(a collective.Algorithm, limit units.Seconds) (network.Cost, error) {
			cost, err := m.priceChosen(a, c, limit)
			if err == nil && (!m.hasBest || cost.Total < m.best) { // best's cheapest (chooseBest)
				m.best, m.hasBest = cost.Total, true
			}
			return cost, err
		})
	m.hasBest = false
	if err == nil && won != nil {
		*won = a
	}
	return cost, err
}

// priceWith runs one algorithm: its rounds, routed, as steps of the one cost function. Below a
// finite limit (best's, collective.ChooseBounded) the rounds' patterns are routed a pattern at a
// time (progress), and an *collective.Above returned where the rounds routed so far, with the
// others on their bounds, already price above it.
func (m *Model) priceWith(a collective.Algorithm, c network.Collective, limit units.Seconds) (network.Cost, error) {
	fa, ok := a.(collective.Flowing)
	if !ok {
		return network.Cost{}, collective.Decline("%s has no flow form", a.Name())
	}
	m.flows.Algorithm, m.flows.Rounds = "", m.flows.Rounds[:0]
	if err := fa.Rounds(c.Op, c.Bytes, &m.view, &m.flows); err != nil {
		return network.Cost{}, err
	}
	if err := m.affordable(c.Group); err != nil {
		return network.Cost{}, err
	}
	if !math.IsInf(float64(limit), 1) && !m.g.unbounded {
		if err := m.progress(c, limit); err != nil {
			return network.Cost{}, err
		}
	}
	m.steps = m.steps[:0]
	if err := m.eachRound(func(r *collective.Round, pt collective.Pattern, n int) error {
		return m.step(r, pt, n, c.Group)
	}); err != nil {
		return network.Cost{}, err
	}
	return m.schedulePrice(c), nil
}

// schedulePrice prices m.steps, the steps of m.flows, with the one cost function.
func (m *Model) schedulePrice(c network.Collective) network.Cost {
	return collective.Price(collective.Schedule{Algorithm: m.flows.Algorithm, Steps: m.steps}, m.env.Reducer, c.DType)
}

// roundStep is round r's step over link l, repeated n times.
func roundStep(r *collective.Round, l collective.Link, n int) collective.Step {
	return collective.Step{Link: l, Bytes: r.Bytes, Repeat: n, FanIn: r.FanIn, ReduceBytes: r.ReduceBytes, Reconfig: r.Reconfig}
}

// PricePattern prices one round of raw traffic, no algorithm (SiPAC Figs. 10–11's one-to-all,
// all-to-one and all-to-all): every flow of pt carries bytes, routed with every concurrent
// group of shape g, and priced by the one cost function as a one-step schedule named name.
func (m *Model) PricePattern(name string, pt collective.Pattern, bytes units.Bytes, g network.Group) (network.Cost, error) {
	c := network.Collective{Op: network.AllToAll, Bytes: bytes, Group: g}
	if err := network.CheckGroup(c, m.env); err != nil {
		return network.Cost{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ld, err := m.route(pt, g)
	if err != nil {
		return network.Cost{}, err
	}
	steps := []collective.Step{{Link: m.link(ld), Bytes: bytes, Repeat: 1}}
	return collective.Price(collective.Schedule{Algorithm: name, Steps: steps}, nil, 0), nil
}

// eachRound calls f for every routed round of m.flows: a round's pattern repeated n times, or
// each member of a family of partner distances (Vary) once, as its own routed round.
func (m *Model) eachRound(f func(r *collective.Round, pt collective.Pattern, n int) error) error {
	for i := range m.flows.Rounds {
		r := &m.flows.Rounds[i]
		if r.Vary == 0 {
			if err := f(r, r.Pattern, max(1, r.Repeat)); err != nil {
				return err
			}
			continue
		}
		pt := r.Pattern
		for k := 0; k < r.Repeat; k++ {
			if err := f(r, pt, 1); err != nil {
				return err
			}
			pt.Parts[0].K += int32(r.Vary)
		}
	}
	return nil
}

// maxRoutedFlows bounds the flows one collective may route (rounds × flows of every concurrent
// group); an algorithm beyond it is declined (a pairwise exchange over thousands of members: the
// linear all-to-all prices the same traffic from its aggregated matrix).
const maxRoutedFlows = 1 << 17

func (m *Model) affordable(g network.Group) error {
	rounds := 0
	_ = m.eachRound(func(*collective.Round, collective.Pattern, int) error { rounds++; return nil })
	if flows := rounds * g.Size * g.Groups(m.env.GPUs); flows > maxRoutedFlows {
		return collective.Decline("%d rounds over %d concurrent groups of %d would route %d flows (at most %d)", rounds, g.Groups(m.env.GPUs), g.Size, flows, maxRoutedFlows)
	}
	return nil
}

// step routes pattern pt and appends round r's step, repeated n times (merged into the previous
// step when they are alike).
func (m *Model) step(r *collective.Round, pt collective.Pattern, n int, g network.Group) error {
	ld, err := m.route(pt, g)
	if err != nil {
		return err
	}
	m.steps = collective.AppendStep(m.steps, roundStep(r, m.link(ld), n))
	return nil
}

// link is a routed round as a step's link: the slowest path and the busiest link's rate per unit
// weight.
func (m *Model) link(ld Load) collective.Link {
	l := collective.Link{Latency: ld.Latency, Bandwidth: units.BytesPerSecond(inf)}
	if ld.PerByte > 0 {
		l.Bandwidth = units.BytesPerSecond(1 / ld.PerByte)
		l.Name = m.g.classes[ld.Class]
	}
	return l
}

var inf = math.Inf(1)

// endpoint is the endpoint of job rank r.
func (m *Model) endpoint(r int) int32 {
	if m.opt.Placement != nil {
		return m.opt.Placement[r]
	}
	return int32(r)
}

// route loads the links with one round of pattern pt run by every concurrent group of shape g.
func (m *Model) route(pt collective.Pattern, g network.Group) (Load, error) {
	pt = canonical(pt)
	e, key, shared, ok := m.routed(pt, g)
	if ok && !e.bound {
		return e.ld, nil
	}
	return m.routeNew(pt, g, key, shared)
}

// routeNew routes a round not routed before and caches it under its keys.
func (m *Model) routeNew(pt collective.Pattern, g network.Group, key routeKey, shared loadKey) (Load, error) {
	// A round whose parts a round routed before has in another order (Permuted rounds).
	pk := shared // (the job's keys: route's lookup fills them for every round it leaves to routeNew)
	var exp int
	var at [collective.MaxParts]int8
	perm := false
	if pt.N > 1 && !m.g.unpermuted {
		pk.route.pt, exp, at, perm = permKeyOf(pt)
	}
	if perm {
		if e, ok := m.g.perms.get(pk); ok {
			if ld, ok := e.permuted(exp, at, pt.N); ok {
				e.read++
				m.g.perms.put(pk, e)
				m.routes[key] = ld
				m.g.loads.put(shared, routedLoad{ld: ld})
				return ld, nil
			}
		}
	}
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	r.lone = true // finish alone reads this round
	if m.cutting {
		r.cut = m
		if m.g.cutBy != nil { // (a test's)
			r.cut = m.g.cutBy
		}
	}
	r.perm.want = perm
	sym, err := m.load(r, pt, g)
	cut := r.win.cut
	ld := r.finish(sym)
	r.cut = nil
	pm := &r.perm
	ok := pm.ok && pm.most() == ld.PerByte
	pm.want, pm.ok = false, false
	if err != nil {
		return Load{}, err
	}
	if cut { // a bound, not the round's load (Cut short)
		putBound(m.g.loads, shared, ld)
		return ld, nil
	}
	m.routes[key] = ld
	m.g.loads.put(shared, routedLoad{ld: ld})
	if ok {
		m.g.perms.put(pk, pm.entry(ld, exp, at))
	}
	return ld, nil
}

// routedLoad is a round's entry in the graph's loads: the load its routing left, or (bound)
// best's lower bound on it where the round has not been routed in full (bound.go).
type routedLoad struct {
	ld    Load
	bound bool
}

// putBound keeps ld as best's bound on the load of the round shared names, unless the round's
// routed load is already there (another model of the job on the graph routed it meanwhile). A
// bound replaces an earlier one: a later cut routed more of the round, its bound no lower.
func putBound(c *cache[loadKey, routedLoad], shared loadKey, ld Load) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[shared]; ok && !e.bound {
		return
	}
	c.store(shared, routedLoad{ld: ld, bound: true})
}

// routed is what is known of one round of pt (canonical) over every concurrent group of shape
// g, if this model or another model of the same job on the graph has routed it or bounded it,
// and the keys it is cached under.
func (m *Model) routed(pt collective.Pattern, g network.Group) (routedLoad, routeKey, loadKey, bool) {
	key := routeKey{pt: pt, g: g}
	if ld, ok := m.routes[key]; ok {
		return routedLoad{ld: ld}, key, loadKey{}, true
	}
	shared := loadKey{route: key, gpus: m.env.GPUs, routing: m.opt.Routing, seed: m.opt.Seed, place: m.place}
	e, ok := m.g.loads.get(shared)
	if ok && !e.bound {
		m.routes[key] = e.ld
	}
	return e, key, shared, ok
}

// canonical is pt written so that patterns with the same flows in the same order are equal
// (their routing is cached once): a RingNext part is the Shift part of the same digit
// (Part.Each runs one code for both), its K taken mod Size. The hierarchical ring's one-level
// shift over a group of 4 is then the ring's (TestStepwiseDigits: both kinds, any K, give the
// flows of one definition).
func canonical(pt collective.Pattern) collective.Pattern {
	for i := 0; i < pt.N; i++ {
		q := &pt.Parts[i]
		if (q.Kind == collective.RingNext || q.Kind == collective.Shift) && q.Size > 0 {
			q.Kind, q.K = collective.Shift, (q.K%q.Size+q.Size)%q.Size
		}
	}
	return pt
}

// load routes one round of pattern pt of every concurrent group of shape g onto r's links (the
// caller finishes r); sym is the symmetry the loads are averaged over, if any.
func (m *Model) load(r *router, pt collective.Pattern, g network.Group) (*Symmetry, error) {
	n, p := g.Groups(m.env.GPUs), g.Size
	var sym *Symmetry
	lost := false
	if m.digitSymmetric(pt, g) {
		sym = m.g.sym
		lost = !m.peersSymmetric(r, pt)
		n = 0
	}
	var h *lattice // the round's flows are H-invariant: route those into H's representatives
	whole := n > 0 && !hasUniform(pt) && m.wholeGroup(r, g, n) && m.latticeKinds(pt, n)
	if whole { // one group in rank order: its sub-lattice read from its parts, not its flows
		r.rows.list(r, pt, g)
		if h = m.sublatticeWhole(r, pt, g, &r.rows); h != nil {
			sym, r.sub = m.g.sym, h
			lost = !m.routeWhole(r, pt, g, h, &r.rows)
			n = 0
		}
		r.rows = partnerRows{} // (no table held past the round)
	}
	if n > 0 && r.typing && !hasUniform(pt) {
		// Typed flows are collected once, tested for a sub-lattice, and routed into its
		// representatives or by period (periods.go). Where a few flows already rule out every
		// sub-lattice and the groups repeat, only the flows routing reads are collected: the
		// first period's and those after the last whole period.
		var gp period
		periodic := false
		if m.skipsPeriods(g, n) {
			if gp, periodic = m.groupPeriod(r, g, n); periodic && n/gp.q >= 2 && m.noSublattice(r, pt, g, n) {
				m.collectPeriodic(r, pt, g, n, gp.q)
				r.given = m.shapePlans(r, g, n, gp)
				lost = !r.routeCollected(nil, gp, periodic)
				r.given = nil
				n = 0
			}
		}
		if n > 0 {
			m.collect(r, pt, g, n)
			if !whole { // (else sublatticeWhole found none)
				h = m.sublatticeOf(r, pt, n)
			}
			if h != nil {
				sym, r.sub = m.g.sym, h
			}
			if h == nil {
				gp, periodic = m.groupPeriod(r, g, n)
			}
			lost = !r.routeCollected(h, gp, periodic)
			n = 0
		}
	} else if n > 0 && !whole && !m.wholeUniform(pt, g, n) { // (whole: sublatticeWhole found none)
		if h = m.sublattice(r, pt, g, n); h != nil {
			sym, r.sub = m.g.sym, h
		}
	}
	for gi := 0; gi < n; gi++ {
		if !g.Runs(gi) {
			continue
		}
		base := g.Base(gi)
		for i := 0; i < pt.N; i++ {
			part := pt.Parts[i]
			if part.Kind != collective.Uniform {
				part.Each(p, func(s, d int, w float64) {
					se, de := m.endpoint(base+s*g.Stride), m.endpoint(base+d*g.Stride)
					if h != nil && !h.rep(de) {
						r.nic(se, de, w) // an image of a routed flow: only its NIC share is its own
						return
					}
					if !r.flow(se, de, w) {
						lost = true
					}
				})
				continue
			}
			if gi == 0 {
				// A member posts p−1 messages at once; those through one port leave one after
				// another, each with the endpoint's per-message overhead.
				r.extra = max(r.extra, (m.portMessages(r, base, g)-1)*float64(m.g.Gap))
			}
			switch {
			case m.wholeUniform(pt, g, n):
				sym = m.g.sym
				lost = lost || !m.uniformSymmetric(r, part.W())
			case h == nil && m.g.home != nil && m.opt.Routing == Split:
				lost = lost || !m.uniformBySwitch(r, base, g, part.W())
			default:
				lost = lost || !m.uniform(r, base, g, part.W(), h)
			}
		}
	}
	if lost {
		return sym, errs.Usage("network %s: some members of a group of %d at stride %d cannot reach each other", m.opt.Name, g.Size, g.Stride)
	}
	return sym, nil
}

// collect notes every flow of one round of pt over the n concurrent groups of shape g in the
// router (in group order, each group's start marked).
func (m *Model) collect(r *router, pt collective.Pattern, g network.Group, n int) {
	if hint := n * g.Size * pt.N; cap(r.fl) < hint { // a flow per member and part, mostly
		r.fl = make([]flowRec, 0, hint)
	}
	if n == 1 && g.Runs(0) { // one group: place its flows as the pattern lists them
		base := g.Base(0)
		r.group()
		plain := m.opt.Placement == nil && r.nicOut == nil
		for i := 0; i < pt.N; i++ {
			if next := pt.Parts[i].Successors(); plain && next != nil && pt.Parts[i].Limit == 0 {
				// A successor table (a grid algorithm's cycles over a whole machine): its flows
				// as Each lists them, rank r on endpoint r, without a call per flow.
				b, st, w := int32(base), int32(g.Stride), pt.Parts[i].W()
				for s, d := range next[:min(len(next), g.Size)] {
					if d >= 0 {
						r.fl = append(r.fl, flowRec{b + int32(s)*st, b + d*st, int32(i), w})
					}
				}
				continue
			}
			pt.Parts[i].Each(g.Size, func(s, d int, w float64) {
				r.collect(m.endpoint(base+s*g.Stride), m.endpoint(base+d*g.Stride), i, w)
			})
		}
		return
	}
	// Every group sends the same flows between its members: list them once (in part and flow
	// order, as rank offsets from the group's base), then place them group by group.
	proto := r.groupFlows(pt, g)
	plain := m.opt.Placement == nil && r.nicOut == nil // rank r on endpoint r, no NIC to count
	for gi := 0; gi < n; gi++ {
		if !g.Runs(gi) {
			continue
		}
		base := int32(g.Base(gi))
		r.group()
		if plain {
			for _, f := range proto {
				r.fl = append(r.fl, flowRec{base + f.s, base + f.t, f.part, f.w})
			}
			continue
		}
		for _, f := range proto {
			r.collect(m.endpoint(int(base+f.s)), m.endpoint(int(base+f.t)), int(f.part), f.w)
		}
	}
}

// skipsPeriods reports whether a round over the n concurrent groups of shape g may collect only
// the flows its period's routing reads (collectPeriodic): rank r on endpoint r, no NIC to count,
// every group running, periods on.
func (m *Model) skipsPeriods(g network.Group, n int) bool {
	return n >= 2 && m.opt.Placement == nil && m.g.NIC == 0 && g.Every <= 1 && !m.g.unperiodic && m.g.sym != nil
}

// latticeSamples is how many groups' flows noSublattice moves per candidate subgroup.
const latticeSamples = 8

// noSublattice reports that no sub-lattice maps one round of pt over the n groups of shape g onto
// itself (sublatticeOf would find none), from a few flows: for every step d along every factor
// that sublatticeOf tries, some sampled flow's image is not a flow of the round (a group's member
// sends to no member or another in that part, as sublatticeOf's invariantUnder reads them).
// False: it may (collect every flow and look). Rank r on endpoint r (skipsPeriods).
func (m *Model) noSublattice(r *router, pt collective.Pattern, g network.Group, n int) bool {
	if !m.latticeKinds(pt, n) {
		return true
	}
	// One group's flows: per part, each member's partner (a member sending twice in a part:
	// sublatticeOf finds none).
	p := g.Size
	if cap(r.dest) < pt.N*p {
		r.dest = make([]int32, pt.N*p)
	}
	dest := r.dest[:pt.N*p]
	for i := range dest {
		dest[i] = -1
	}
	proto := r.proto[:0]
	twice := false
	for i := 0; i < pt.N; i++ {
		pt.Parts[i].Each(p, func(s, d int, w float64) {
			if dest[i*p+s] >= 0 {
				twice = true
			}
			dest[i*p+s] = int32(d)
			proto = append(proto, memberFlow{int32(s), int32(d), int32(i), w})
		})
	}
	r.proto = proto[:0]
	if twice {
		return true
	}
	if len(proto) == 0 {
		return false
	}
	sym, span := m.g.sym, g.Size*g.Stride
	// flowOf reports whether endpoints (ranks) s → t of part i is a flow of the round.
	flowOf := func(s, t int32, i int32) bool {
		if int(s) >= m.env.GPUs {
			return false
		}
		block, within := int(s)/span, int(s)%span
		k, gi := within/g.Stride, block*g.Stride+within%g.Stride
		if gi >= n {
			return false
		}
		j := int(i)*p + k
		return dest[j] >= 0 && int(t) == g.Base(gi)+int(dest[j])*g.Stride
	}
	stride := int32(1)
	for f, mf := range sym.Factors {
		for d := int32(1); d < mf; d++ {
			if mf%d != 0 || sym.fixed&(1<<f) != 0 {
				continue
			}
			move := sym.mover(f, stride, d)
			kept := true
			for k := 0; k < latticeSamples && kept; k++ {
				base := int32(g.Base(k * (n - 1) / (latticeSamples - 1)))
				x := proto[k%len(proto)]
				kept = flowOf(move[base+x.s*int32(g.Stride)], move[base+x.t*int32(g.Stride)], x.part)
			}
			if kept {
				return false
			}
		}
		stride *= mf
	}
	return true
}

// groupFlows lists one group's flows of pt in part and flow order, as rank offsets from the
// group's base (in the router's scratch).
func (r *router) groupFlows(pt collective.Pattern, g network.Group) []memberFlow {
	proto := r.proto[:0]
	stride := int32(g.Stride)
	for i := 0; i < pt.N; i++ {
		pt.Parts[i].Each(g.Size, func(s, d int, w float64) {
			proto = append(proto, memberFlow{int32(s) * stride, int32(d) * stride, int32(i), w})
		})
	}
	r.proto = proto
	return proto
}

// collectPeriodic is collect of the flows a periodic round's routing reads (routeCollected):
// those of the first q groups and of the groups after the last whole period of q, the K − 1
// periods between left out (router.gap). Rank r on endpoint r, every group running
// (skipsPeriods).
func (m *Model) collectPeriodic(r *router, pt collective.Pattern, g network.Group, n, q int) {
	proto := r.groupFlows(pt, g)
	k := n / q
	if hint := (n - (k-1)*q) * len(proto); cap(r.fl) < hint {
		r.fl = make([]flowRec, 0, hint)
	}
	for gi := 0; gi < n; gi++ {
		if gi == q {
			gi = k * q
			r.gap = (k - 1) * q * len(proto)
			if gi == n {
				break
			}
		}
		base := int32(g.Base(gi))
		r.group()
		for _, f := range proto {
			r.fl = append(r.fl, flowRec{base + f.s, base + f.t, f.part, f.w})
		}
	}
}

// groupPeriod is the period of the running groups of shape g (in groups): Q groups later every
// member, in order, is the earlier one moved by τ (periods.go). Once per model and shape.
func (m *Model) groupPeriod(r *router, g network.Group, n int) (period, bool) {
	if e, ok := m.periods[g]; ok {
		return e.p, e.ok
	}
	var p period
	var ok bool
	if m.opt.Placement == nil && g.Every <= 1 { // rank r on endpoint r, every group: not listed
		p, ok = r.periodOf(memberList{n: n * g.Size, unit: g.Size, stride: g.Stride})
	} else {
		pts := r.pts[:0]
		for gi := 0; gi < n; gi++ {
			if g.Runs(gi) {
				for k, base := 0, g.Base(gi); k < g.Size; k++ {
					pts = append(pts, m.endpoint(base+k*g.Stride))
				}
			}
		}
		p, ok = r.periodOf(memberList{pts: pts, n: len(pts), unit: g.Size})
		r.pts = pts[:0]
	}
	p.q /= g.Size
	if m.periods == nil {
		m.periods = map[network.Group]periodEntry{}
	}
	m.periods[g] = periodEntry{p: p, ok: ok}
	return p, ok
}

// shapePlans are the plans (runs.go, Plans per shape) of a periodic round over the n groups of
// shape g of period gp (in groups) whose pattern's one group's flows (r.proto, collectPeriodic's)
// join every member, read from the members once per model and shape; nil where some member is
// in no flow. Rank r on endpoint r, every group running (skipsPeriods).
func (m *Model) shapePlans(r *router, g network.Group, n int, gp period) *shapePlans {
	if !m.covered(r, g) {
		return nil
	}
	e := m.periods[g]
	if e.plans != nil {
		return e.plans
	}
	sp := &shapePlans{}
	k := n / gp.q
	for _, part := range [2]struct {
		from, to int
		plan     *[]run
		images   *[]runImage
	}{{0, gp.q, &sp.first, &sp.images}, {k * gp.q, n, &sp.tail, &sp.tails}} {
		groups := part.to - part.from
		mf := r.members[:0]
		for gi := part.from; gi < part.to; gi++ {
			for j, base := 0, g.Base(gi); j < g.Size; j++ {
				e := int32(base + j*g.Stride)
				mf = append(mf, flowRec{s: e, t: e})
			}
		}
		r.members = mf[:0]
		if !r.runsPlanned(mf, groups) {
			continue
		}
		*part.plan = r.planRuns(mf, groups, nil)
		r.runImages(mf, g.Size, *part.plan)
		*part.images = append([]runImage(nil), r.images...)
	}
	e.plans = sp
	m.periods[g] = e
	return sp
}

// covered reports whether one group's flows (r.proto: offsets of members, stride apart) join
// every member of the group.
func (m *Model) covered(r *router, g network.Group) bool {
	if cap(r.cover) < g.Size {
		r.cover = make([]bool, g.Size)
	}
	cover, left := r.cover[:g.Size], g.Size
	for _, f := range r.proto {
		for _, x := range [2]int32{f.s, f.t} {
			if i := x / int32(g.Stride); !cover[i] {
				cover[i] = true
				left--
			}
		}
	}
	clear(cover)
	return left == 0
}

// hasUniform reports whether pt has a uniform part.
func hasUniform(pt collective.Pattern) bool {
	for i := 0; i < pt.N; i++ {
		if pt.Parts[i].Kind == collective.Uniform {
			return true
		}
	}
	return false
}

// wholeUniform reports whether pt is a uniform all-to-all of one group over every endpoint,
// routed towards the symmetry's representatives only (uniformSymmetric).
func (m *Model) wholeUniform(pt collective.Pattern, g network.Group, n int) bool {
	return m.g.sym != nil && m.opt.Routing == Split && pt.N == 1 && pt.Parts[0].Kind == collective.Uniform && n == 1 &&
		g.Size == m.g.Endpoints
}

// digitSymmetric reports whether one round of pt is invariant under the fabric's digit-wise
// symmetry (Symmetry.Radix): the whole job in rank order on endpoints in order, every part a
// Peers part along a base-Radix digit of the endpoint id.
func (m *Model) digitSymmetric(pt collective.Pattern, g network.Group) bool {
	s := m.g.sym
	if s == nil || s.Radix < 2 || pt.N == 0 || m.opt.Routing != Split || m.opt.Placement != nil || g.Stride != 1 ||
		g.Size != m.g.Endpoints || g.Every > 1 || g.Groups(m.env.GPUs) != 1 {
		return false
	}
	for i := 0; i < pt.N; i++ {
		q := pt.Parts[i]
		if q.Kind != collective.Peers || int(q.Size) != s.Radix || q.Limit > 0 || q.Stride < 1 {
			return false
		}
		x := int(q.Stride)
		for x%s.Radix == 0 {
			x /= s.Radix
		}
		if x != 1 {
			return false
		}
	}
	return true
}

// peersSymmetric routes a round of Peers parts over every endpoint towards the symmetry's
// representatives only: each representative's peers along each part's digit send to it (finish
// scales the loads to the whole orbit).
func (m *Model) peersSymmetric(r *router, pt collective.Pattern) bool {
	ok := true
	out := 0.0
	for i := 0; i < pt.N; i++ {
		out += float64(pt.Parts[i].Size-1) * pt.Parts[i].W()
	}
	r.nicMax = max(r.nicMax, out)
	for _, t := range m.g.sym.Reps {
		r.fill(t)
		for i := 0; i < pt.N; i++ {
			q := pt.Parts[i]
			stride, size := int32(q.Stride), int32(q.Size)
			d := (t / stride) % size
			for e := int32(0); e < size; e++ {
				if e == d {
					continue
				}
				s := t + (e-d)*stride
				dist := r.d(s, t)
				if dist >= Unreachable {
					ok = false
					continue
				}
				r.source(s, dist, q.W(), 0)
			}
		}
		r.note(r.toward(t, -1))
	}
	r.distTo = -1
	return ok
}

// uniform routes a uniform all-to-all of one group destination by destination: every other
// member's weight w heads for t together (per-hop splitting depends only on the node and t).
// With a sub-lattice h, only towards h's representatives (each member sends and receives
// (p−1)·w through its NIC).
func (m *Model) uniform(r *router, base int, g network.Group, w float64, h *lattice) bool {
	ok := true
	if h != nil {
		r.nicMax = max(r.nicMax, float64(g.Size-1)*w)
	}
	for t := 0; t < g.Size; t++ {
		te := m.endpoint(base + t*g.Stride)
		if h != nil && !h.rep(te) {
			continue
		}
		for s := 0; s < g.Size; s++ {
			if s == t {
				continue
			}
			se := m.endpoint(base + s*g.Stride)
			d := m.g.dist.Dist(se, te)
			if d >= Unreachable {
				ok = false
				continue
			}
			r.source(se, d, w, 0)
			if h == nil {
				r.nic(se, te, w)
			}
		}
		r.note(r.toward(te, -1))
	}
	return ok
}

// uniformSymmetric routes a uniform all-to-all over every endpoint towards the symmetry's
// representatives only (finish scales their loads to the whole orbit).
func (m *Model) uniformSymmetric(r *router, w float64) bool {
	ok := true
	r.nicMax = max(r.nicMax, float64(m.g.Endpoints-1)*w) // every endpoint sends and receives that much
	for _, t := range m.g.sym.Reps {
		r.fill(t)
		for s := int32(0); int(s) < m.g.Endpoints; s++ {
			if s == t {
				continue
			}
			d := r.d(s, t)
			if d >= Unreachable {
				ok = false
				continue
			}
			r.source(s, d, w, 0)
		}
		r.note(r.toward(t, -1))
	}
	r.distTo = -1
	return ok
}

// uniformBySwitch routes a uniform all-to-all on an indirect fabric switch by switch: with
// split routing the traffic towards any endpoint of switch R follows the same paths up to R, so
// each source switch sends its members' traffic for all of R's members at once, and the
// endpoints' own links get their (members − 1)·w directly.
func (m *Model) uniformBySwitch(r *router, base int, g network.Group, w float64) bool {
	gr := m.g
	r.perNode()
	sw := r.swCount[:0]
	for i := 0; i < g.Size; i++ {
		e := m.endpoint(base + i*g.Stride)
		h := gr.home[e]
		if r.count[h] == 0 {
			sw = append(sw, h)
			r.inj[h], r.ej[h] = 0, 0
		}
		r.count[h]++
		// Its injection and ejection links carry (members − 1)·w each.
		up, down := gr.Link(e, h), gr.Link(h, e)
		r.add(up, float64(g.Size-1)*w)
		r.add(down, float64(g.Size-1)*w)
		r.inj[h] = max(r.inj[h], float64(gr.links[up].Latency)+float64(gr.forward[h]))
		r.ej[h] = max(r.ej[h], float64(gr.links[down].Latency))
	}
	ok := true
	for _, dst := range sw {
		if r.count[dst] > 1 { // members on the same switch reach each other through it
			r.note(r.inj[dst] + r.ej[dst])
		}
		rep := m.anyOn(base, g, dst)
		r.fill(rep)
		nd := float64(r.count[dst])
		sent := false
		for _, src := range sw {
			if src == dst {
				continue
			}
			d := r.d(src, rep)
			if d >= Unreachable {
				ok = false
				continue
			}
			r.source(src, d, float64(r.count[src])*nd*w, r.inj[src])
			sent = true
		}
		if sent {
			r.note(r.toward(rep, dst) + r.ej[dst])
		}
	}
	for _, h := range sw {
		r.count[h] = 0
	}
	r.swCount, r.distTo = sw, -1
	return ok
}

// portMessages is how many of the first member's p−1 messages of a uniform all-to-all leave
// through its busiest port (its first-hop links, shared as the routing shares them).
func (m *Model) portMessages(r *router, base int, g network.Group) float64 {
	gr := m.g
	s := m.endpoint(base)
	first := gr.first[s]
	per := r.perPort[:0]
	for range gr.first[s+1] - first {
		per = append(per, 0)
	}
	for t := 1; t < g.Size; t++ {
		if total := r.next(s, m.endpoint(base+t*g.Stride)); total > 0 {
			for _, li := range r.cand {
				per[li-first] += float64(gr.hot[li].width) / float64(total)
			}
		}
	}
	busiest := 1.0
	for _, x := range per {
		busiest = max(busiest, x)
	}
	r.perPort = per
	return busiest
}

// anyOn is a member of the group on switch h.
func (m *Model) anyOn(base int, g network.Group, h int32) int32 {
	for i := 0; i < g.Size; i++ {
		if e := m.endpoint(base + i*g.Stride); m.g.home[e] == h {
			return e
		}
	}
	return -1
}

// members is what flow algorithms see of the group being priced.
type members struct {
	m *Model
	g network.Group
}

func (v *members) P() int { return v.g.Size }

func (v *members) Layout() collective.Layout {
	if v.m.opt.Tiers == nil {
		return collective.Flat(v.g.Size, collective.Link{})
	}
	return topology.Levels(v.m.opt.Tiers, v.g)
}

func (v *members) Link(pt collective.Pattern) (collective.Link, error) {
	ld, err := v.m.route(pt, v.g)
	return v.m.link(ld), err
}

func (v *members) Grid() (*collective.Grid, error) { return v.m.grid(v.g) }

// grid arranges a group's members on the fabric's grid: they must fill a rectangle, and every
// concurrent group the same way (their rectangles are translates).
func (m *Model) grid(g network.Group) (*collective.Grid, error) {
	if e, ok := m.grids[g]; ok {
		return e.grid, e.err
	}
	key := gridKey{g: g, gpus: m.env.GPUs, place: m.place}
	e, ok := m.g.grids.get(key)
	if !ok {
		gr, err := m.buildGrid(g)
		e = gridEntry{gr, err}
		m.g.grids.put(key, e)
	}
	m.grids[g] = e
	return e.grid, e.err
}

func (m *Model) buildGrid(g network.Group) (*collective.Grid, error) {
	if m.opt.Grid == nil {
		return nil, collective.Decline("network %s has no grid", m.opt.Name)
	}
	var ref *collective.Grid
	for gi, n := 0, g.Groups(m.env.GPUs); gi < n; gi++ {
		if !g.Runs(gi) {
			continue
		}
		gr, err := m.arrange(g, g.Base(gi))
		if err != nil {
			return nil, err
		}
		if ref == nil {
			ref = gr
			continue
		}
		if gr.Rows != ref.Rows || gr.Cols != ref.Cols {
			return nil, collective.Decline("the concurrent groups fill different rectangles of the grid")
		}
		for k := range gr.At {
			if gr.At[k] != ref.At[k] {
				return nil, collective.Decline("the concurrent groups are laid out on the grid in different orders")
			}
		}
	}
	return ref, nil
}

// arrange puts the members of the group starting at rank base on the grid.
func (m *Model) arrange(g network.Group, base int) (*collective.Grid, error) {
	p := g.Size
	// Member i's position is (rowOf[off + i·step], colOf[…]): the listed positions of its
	// endpoint (rank r on endpoint r), else Coord's, written per member.
	var rowOf, colOf []int32
	off, step := 0, 1
	if t, ok := m.opt.Grid.(GridTable); ok && m.opt.Placement == nil {
		rowOf, colOf = t.Positions()
		off, step = base, g.Stride
	} else {
		rowOf, colOf = make([]int32, p), make([]int32, p)
		for i := 0; i < p; i++ {
			r, c := m.opt.Grid.Coord(m.endpoint(base + i*g.Stride))
			rowOf[i], colOf[i] = int32(r), int32(c)
		}
	}
	r0, c0, r1, c1 := int32(math.MaxInt32), int32(math.MaxInt32), int32(-1), int32(-1)
	for i, k := 0, off; i < p; i, k = i+1, k+step {
		r, c := rowOf[k], colOf[k]
		r0, c0, r1, c1 = min(r0, r), min(c0, c), max(r1, r), max(c1, c)
	}
	R, C := int(r1-r0+1), int(c1-c0+1)
	if R*C != p {
		return nil, collective.Decline("the group's %d members span %d×%d positions of the grid, not a filled rectangle", p, R, C)
	}
	pos := make([]int32, p)
	for i := range pos {
		pos[i] = -1
	}
	for i, k := 0, off; i < p; i, k = i+1, k+step {
		x := int(rowOf[k]-r0)*C + int(colOf[k]-c0)
		if pos[x] >= 0 {
			return nil, collective.Decline("two members share a grid position")
		}
		pos[x] = int32(i)
	}
	return &collective.Grid{Rows: R, Cols: C, At: pos}, nil
}

// placementHash tells placements apart (FNV-1a over the endpoints; 0 for rank r on endpoint r).
func placementHash(p []int32) uint64 {
	if p == nil {
		return 0
	}
	h := uint64(14695981039346656037)
	for _, e := range p {
		h = (h ^ uint64(uint32(e))) * 1099511628211
	}
	return h ^ uint64(len(p))<<1 | 1
}
