package fabric

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Link is a directed link of a fabric, or a bundle of Width parallel identical links between the
// same two nodes (a leaf's uplinks into an aggregated spine layer, the two ports of a HyperX
// accelerator into its row switch).
type Link struct {
	From, To int32
	Width    int32                // parallel physical links (≥ 1)
	Rate     units.BytesPerSecond // of one physical link, each direction
	Latency  units.Seconds        // propagation
	// Weight is the routing metric (hops, ≥ 1): flows take the paths of least total weight.
	Weight int32
	Class  uint16 // index of the link's class name (for the bottleneck report)
	phys   int32  // index of its first physical link
}

// Graph is a fabric: nodes 0 … Endpoints−1 are accelerators (which may forward traffic, as on a
// mesh board), the rest switches; directed links with rate and latency; a forwarding latency per
// node (buffering and crossbar of a switch, or of the accelerator's on-chip router); and the
// per-message overhead of an endpoint. It is immutable once built and shared by the models that
// place jobs on it.
type Graph struct {
	Endpoints int
	// Overhead is the endpoint's per-step overhead: charged once per round on top of the slowest
	// path. Gap is the time between two messages an endpoint posts at once through one port
	// (a linear all-to-all's p−1 sends leave one after another).
	Overhead, Gap units.Seconds
	// NIC caps what one endpoint injects and receives in all (0: only its links do).
	NIC     units.BytesPerSecond
	forward []units.Seconds // per node
	first   []int32         // out-links of u: links[first[u]:first[u+1]]
	links   []Link
	hot     []hop     // the routing view of links: compact, scanned per node and destination
	rate    []float64 // per link: its bundle's rate (Width · Rate), a Split load slot's
	classes []string
	phys    int
	// owner maps physical links to their links (hash routing loads physical links), built on
	// first use.
	owner *owners
	dist  Distancer
	// home[e] is endpoint e's only switch when every endpoint hangs off one switch and never
	// forwards (an indirect network: fat tree, Dragonfly); nil otherwise.
	home []int32
	sym  *Symmetry

	routers *sync.Pool // idle routers (scratch sized for this graph), shared by its models
	// Routed rounds and grid arrangements (with the successor tables built on them), shared by
	// the models of every job placed on the graph.
	// A round not routed in full may hold best's bound of its load instead (bound.go): one
	// lookup then finds the load or the bound (a new model of a job reads a cut round's bound
	// at the cost of a load).
	loads *cache[loadKey, routedLoad]
	grids *cache[gridKey, gridEntry]
	// Windows of concurrent collectives (PriceConcurrent): each one's drain time per call.
	windows *cache[windowKey, []drain]
	// Rounds routeWhole routed, keyed as loads but by their parts up to order and a power of two
	// in their weights (permKeyOf), for the rounds read from them (permuted.go).
	perms *cache[loadKey, permEntry]
	// gen counts Forget calls: routers drop the flow types of an older generation. untyped
	// turns flow types off (WithoutFlowTypes).
	gen                             *atomic.Uint64
	untyped, unperiodic, unwindowed bool
	unalong                         bool // runs' copies replayed copy by copy (WithoutRunCycles)
	unimaged                        bool // every run routed, none read from an earlier one (WithoutRunImages)
	unshifted                       bool // periods check every member moved (WithoutShifts)
	unscaled                        bool // every weight's types routed (WithoutScaledTypes)
	unpermuted                      bool // every round routed, none read permuted (WithoutPermutedRounds)
	// ends is the endpoints' link rates (bound.go); unbounded prices every candidate of best
	// (WithoutBounds).
	ends                  *endRates
	unbounded, memberwise bool // memberwise: bounds read every member's rates (tests)
	// cutBy, where set, is what a round cut short asks (a test's; else the model: Cut short).
	cutBy cutter
}

// Symmetry is a group Γ of automorphisms of a fabric that acts freely on its endpoints (the
// translations of a torus or of a HammingMesh's boards): Reps holds one endpoint per orbit,
// LinkOrbit the orbit of every link, OrbitSize how many links each orbit has, Order = |Γ|. A
// uniform all-to-all over every endpoint then needs the destinations in Reps only: the load of a
// link is |Γ|/|O| times the load Reps put on its orbit O.
type Symmetry struct {
	Reps      []int32
	LinkOrbit []int32
	OrbitSize []int32
	Order     int
	// Radix > 1 says that Γ is the digit-wise translations of the endpoint ids written in base
	// Radix (x ↦ x + a, each digit mod Radix: BCube, SiPAC), so that a round of Peers parts
	// along those digits over the whole job is also routed towards Reps only.
	Radix int
	// Factors, when the family sets them, name Γ's elements: Γ = Z_Factors[0] × Z_Factors[1] × …
	// (at most maxFactors; an element is numbered mixed-radix, the first factor's digit
	// fastest), endpoint e = EndElem[e]·Reps[EndRep[e]] and link l = LinkElem[l]·LinkOrbit[l].
	// Where Γ then acts freely on the links, a round whose flows some subgroup H of Γ maps onto
	// themselves is routed towards one destination per H-orbit only (lattice.go).
	Factors                   []int32
	EndRep, EndElem, LinkElem []int32

	// Derived by SetSymmetry from Factors.
	endAt   []int32 // [rep·Order + g]: the endpoint g·Reps[rep]
	orbitIx []int32 // per link: the index of its orbit among the orbits
	orbits  int
	free    bool // Factors set, Γ acts freely on the links and keeps their rate, class and latencies
	// lattice: Factors set, Γ keeps the links' rate, class and latencies, and the subgroups that
	// move along no factor of fixed (a bit per factor) act freely on the links (Symmetry.fixers;
	// fixed is 0 where free).
	lattice bool
	fixed   uint8
	// Flow types (types.go): the non-trivial factors (moduli fm, strides fs in an element's
	// number), each endpoint's and link's element as their digits, and the link at
	// [orbit index·Order + element] (nil: no flow types).
	nf              int
	fm, fs          [maxFactors]int32
	shift           [maxFactors][]int32 // [f][v] = (v mod fm[f])·fs[f], v < 2·fm[f]
	endDig, linkDig [][maxFactors]uint16
	linkAt          []int32
	linkIx          []int32     // per link: its number in linkAt (orbit index·Order + element)
	moves           *moveTables // endpoints moved along a factor (lattice.go)
}

// Nodes is the number of nodes.
func (g *Graph) Nodes() int { return len(g.forward) }

// Links returns the links (read-only).
func (g *Graph) Links() []Link { return g.links }

// Out returns the out-links of node u (read-only).
func (g *Graph) Out(u int32) []Link { return g.links[g.first[u]:g.first[u+1]] }

// ClassName is the name of a link class.
func (g *Graph) ClassName(c uint16) string { return g.classes[c] }

// Forwarding is the latency a flow pays to pass through node u.
func (g *Graph) Forwarding(u int32) units.Seconds { return g.forward[u] }

// Distancer is the graph's distance oracle.
func (g *Graph) Distancer() Distancer { return g.dist }

// Distance is the routing distance from node u to endpoint t.
func (g *Graph) Distance(u, t int32) int32 { return g.dist.Dist(u, t) }

// Physical is the number of physical links (bundles counted by width).
func (g *Graph) Physical() int { return g.phys }

// owners holds, per physical link, the index of its link.
type owners struct {
	once sync.Once
	link []int32
}

// physLink is the link physical link k belongs to.
func (g *Graph) physLink(k int32) *Link {
	o := g.owner
	o.once.Do(func() {
		o.link = make([]int32, g.phys)
		for i := range g.links {
			l := &g.links[i]
			for j := l.phys; j < l.phys+l.Width; j++ {
				o.link[j] = int32(i)
			}
		}
	})
	return &g.links[o.link[k]]
}

// hop is what routing reads of a link (its latency, and the forwarding latency of its head),
// packed so that a hop costs one cache line.
type hop struct {
	to, weight, width, phys int32
	latency, forward        float64
}

// Endpoint is what an accelerator's network interface adds to every round: a per-step overhead
// and a gap between messages posted at once.
type Endpoint struct{ Overhead, Gap units.Seconds }

// Builder assembles a Graph.
type Builder struct {
	g       Graph
	links   []Link
	classes map[string]uint16
}

// NewBuilder starts a fabric with the given number of endpoints (nodes 0 … endpoints−1), each
// forwarding with latency fwd (0 for endpoints that do not forward).
func NewBuilder(endpoints int, fwd units.Seconds) *Builder {
	b := &Builder{g: Graph{Endpoints: endpoints}, classes: map[string]uint16{}}
	b.Class("NIC") // class 0, the bottleneck name when a NIC cap binds
	b.g.forward = make([]units.Seconds, endpoints)
	for i := range b.g.forward {
		b.g.forward[i] = fwd
	}
	return b
}

// Switch adds a switch with forwarding latency fwd and returns its node.
func (b *Builder) Switch(fwd units.Seconds) int32 {
	b.g.forward = append(b.g.forward, fwd)
	return int32(len(b.g.forward) - 1)
}

// Switches adds n switches and returns the first one's node.
func (b *Builder) Switches(n int, fwd units.Seconds) int32 {
	first := int32(len(b.g.forward))
	for i := 0; i < n; i++ {
		b.Switch(fwd)
	}
	return first
}

// Class returns the index of a link class name.
func (b *Builder) Class(name string) uint16 {
	if c, ok := b.classes[name]; ok {
		return c
	}
	c := uint16(len(b.g.classes))
	b.g.classes = append(b.g.classes, name)
	b.classes[name] = c
	return c
}

// Spec is what a link or bundle is made of.
type Spec struct {
	Class   string
	Width   int
	Rate    units.BytesPerSecond
	Latency units.Seconds
	Weight  int // 0 counts as 1
}

// Link adds a directed link (or bundle) from → to.
func (b *Builder) Link(from, to int32, s Spec) {
	w, wt := max(1, s.Width), max(1, s.Weight)
	b.links = append(b.links, Link{From: from, To: to, Width: int32(w), Rate: s.Rate, Latency: s.Latency,
		Weight: int32(wt), Class: b.Class(s.Class)})
}

// Duplex adds the link in both directions.
func (b *Builder) Duplex(x, y int32, s Spec) {
	b.Link(x, y, s)
	b.Link(y, x, s)
}

// NIC caps each endpoint's injection and reception (an accelerator whose ports together exceed
// what its network interface can drive).
func (b *Builder) NIC(rate units.BytesPerSecond) { b.g.NIC = rate }

// Build sorts the links by tail, merges parallel identical links into bundles and returns the
// graph with its distance oracle (nil: the exact weighted distances, computed per destination on
// demand).
func (b *Builder) Build(ep Endpoint, dist func(*Graph) (Distancer, error)) (*Graph, error) {
	g := b.g
	n := len(g.forward)
	g.Overhead, g.Gap = ep.Overhead, ep.Gap
	b.merge()
	count := make([]int32, n+1)
	for _, l := range b.links {
		if l.From < 0 || int(l.From) >= n || l.To < 0 || int(l.To) >= n || l.From == l.To {
			return nil, fmt.Errorf("fabric: link %d → %d outside the %d nodes", l.From, l.To, n)
		}
		if !(l.Rate > 0) {
			return nil, fmt.Errorf("fabric: link %d → %d has rate %v", l.From, l.To, l.Rate)
		}
		count[l.From+1]++
	}
	for i := 1; i <= n; i++ {
		count[i] += count[i-1]
	}
	g.first = append([]int32(nil), count...)
	g.links = make([]Link, len(b.links))
	next := append([]int32(nil), count[:n]...)
	for _, l := range b.links {
		g.links[next[l.From]] = l
		next[l.From]++
	}
	phys := int32(0)
	g.hot = make([]hop, len(g.links))
	for i := range g.links {
		g.links[i].phys = phys
		phys += g.links[i].Width
		l := &g.links[i]
		g.hot[i] = hop{to: l.To, weight: l.Weight, width: l.Width, phys: l.phys, latency: float64(l.Latency), forward: float64(g.forward[l.To])}
	}
	g.rate = make([]float64, len(g.links))
	for i, l := range g.links {
		g.rate[i] = float64(l.Rate) * float64(l.Width)
	}
	g.phys, g.owner, g.ends = int(phys), &owners{}, &endRates{}
	g.home = homes(&g)
	g.routers, g.loads, g.grids = &sync.Pool{}, newCache[loadKey, routedLoad](1<<16), newCache[gridKey, gridEntry](256)
	g.windows, g.perms = newCache[windowKey, []drain](1<<12), newCache[loadKey, permEntry](1<<12)
	g.gen = new(atomic.Uint64)
	if dist == nil {
		g.dist = newLazyDist(&g)
	} else {
		d, err := dist(&g)
		if err != nil {
			return nil, err
		}
		g.dist = d
		if ix, ok := d.(Indexer); ok {
			if err := ix.Index(&g); err != nil {
				return nil, err
			}
		}
	}
	return &g, nil
}

// merge folds links with the same ends and attributes into one bundle.
func (b *Builder) merge() {
	same := func(x, y *Link) bool {
		return x.Rate == y.Rate && x.Latency == y.Latency && x.Weight == y.Weight && x.Class == y.Class
	}
	at := make(map[int64]int, len(b.links))
	out := b.links[:0]
	for _, l := range b.links {
		k := int64(l.From)<<32 | int64(l.To)
		if i, ok := at[k]; ok && same(&out[i], &l) {
			out[i].Width += l.Width
			continue
		}
		at[k] = len(out)
		out = append(out, l)
	}
	b.links = out
}

// homes finds each endpoint's only switch, or nil when some endpoint has links to two nodes or
// to another endpoint.
func homes(g *Graph) []int32 {
	h := make([]int32, g.Endpoints)
	for i := range h {
		h[i] = -1
	}
	for _, l := range g.links {
		for _, e := range [2]int32{l.From, l.To} {
			other := l.To
			if e == l.To {
				other = l.From
			}
			if int(e) >= g.Endpoints {
				continue
			}
			if int(other) < g.Endpoints || (h[e] >= 0 && h[e] != other) {
				return nil
			}
			h[e] = other
		}
	}
	for _, x := range h {
		if x < 0 {
			return nil
		}
	}
	return h
}

// SetSymmetry declares the fabric's symmetry (the family builder knows it); it is checked for
// consistency (orbit sizes sum to the links).
func (g *Graph) SetSymmetry(s *Symmetry) error {
	if len(s.LinkOrbit) != len(g.links) || s.Order < 1 || len(s.Reps)*s.Order != g.Endpoints {
		return fmt.Errorf("fabric: symmetry of order %d with %d representatives and %d link orbits does not fit %d endpoints and %d links",
			s.Order, len(s.Reps), len(s.LinkOrbit), g.Endpoints, len(g.links))
	}
	total := int32(0)
	for _, n := range s.OrbitSize {
		total += n
	}
	if int(total) != len(g.links) {
		return fmt.Errorf("fabric: link orbits hold %d links, the fabric has %d", total, len(g.links))
	}
	if s.Factors != nil {
		if err := s.elements(g); err != nil {
			return err
		}
	}
	g.sym = s
	return nil
}

// Link returns the index of the link from u to v, or −1.
func (g *Graph) Link(u, v int32) int32 {
	for i := g.first[u]; i < g.first[u+1]; i++ {
		if g.links[i].To == v {
			return i
		}
	}
	return -1
}

// WithoutSymmetry is g with its symmetry dropped (every destination routed: the reference the
// symmetric shortcut is tested against).
func WithoutSymmetry(g *Graph) *Graph {
	h := *g
	h.sym = nil
	h.routers, h.loads, h.grids = &sync.Pool{}, newCache[loadKey, routedLoad](1<<16), newCache[gridKey, gridEntry](256)
	h.windows, h.perms = newCache[windowKey, []drain](1<<12), newCache[loadKey, permEntry](1<<12)
	return &h
}

// switchedOff is g with empty caches and its symmetry kept, one of the engine's shortcuts turned
// off by off (the references the shortcuts are tested against: WithoutBounds, WithoutFlowTypes,
// WithoutPeriods, WithoutWindows).
func switchedOff(g *Graph, off func(*Graph)) *Graph {
	h := WithoutSymmetry(g)
	h.sym = g.sym
	off(h)
	return h
}

// router takes an idle router of the graph (or a new one) set up for a routing.
func (g *Graph) router(routing Routing, seed uint64) *router {
	r, _ := g.routers.Get().(*router)
	if r == nil {
		r = newRouter(g)
	}
	r.routing, r.seed = routing, seed
	typed := routing == Split && g.sym != nil && g.sym.linkAt != nil && !g.untyped
	r.typing = typed && g.sym.free
	r.subTypes = typed && !g.sym.free
	return r
}

// release hands a router back (its loads are clear: finish cleared them).
func (g *Graph) release(r *router) { g.routers.Put(r) }

// loadKey names a routed round: the pattern and group shape, the job size (how many groups
// tile it), the routing and its seed, and the placement.
type loadKey struct {
	route   routeKey
	gpus    int
	routing Routing
	seed    uint64
	place   uint64
}

// windowKey names a window of concurrent collectives on a placed job: the collectives, their
// calls and chosen algorithms (encoded by Model.windowKey), and the job as loadKey names it.
type windowKey struct {
	window  string
	gpus    int
	routing Routing
	seed    uint64
	place   uint64
}

// drain is what a window leaves one of its collectives: the time per call its links need to
// drain the window's bytes, and the class of the link that sets it (at false: it sends nothing).
type drain struct {
	perCall float64
	class   uint16
	at      bool
}

// gridKey names a group's arrangement on the grid: its shape, the job size and the placement
// (the grid map is the graph family's).
type gridKey struct {
	g     network.Group
	gpus  int
	place uint64
}

// cache is a graph's shared memo, so a new model of the same job (the next estimate of a sweep,
// another run of one process) does not route or arrange again. Bounded: it starts over when
// full.
type cache[K comparable, V any] struct {
	mu  sync.Mutex
	m   map[K]V
	max int
}

func newCache[K comparable, V any](max int) *cache[K, V] { return &cache[K, V]{m: map[K]V{}, max: max} }

func (c *cache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *cache[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store(k, v)
}

// store puts v under k, starting over where the cache is full; the caller holds c.mu.
func (c *cache[K, V]) store(k K, v V) {
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[k] = v
}

func (c *cache[K, V]) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}

// Forget drops the graph's routed rounds and grid arrangements (benchmarks of pricing from
// scratch).
func (g *Graph) Forget() {
	g.loads.forget()
	g.grids.forget()
	g.windows.forget()
	g.perms.forget()
	g.gen.Add(1)
}
