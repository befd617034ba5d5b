package fabric

import (
	"github.com/ddlest/ddlest/internal/units"
)

// Routing is how flows spread over the minimal paths.
type Routing int

const (
	// Split divides each node's traffic towards a destination equally over its minimal next
	// hops (physical links, so a bundle of w links takes w shares): the fluid limit of adaptive
	// routing or of ECMP with many flows.
	Split Routing = iota
	// Hash sends all traffic towards a destination through one minimal next hop per node, chosen
	// by a seeded hash of (destination, node): per-destination forwarding tables (InfiniBand) or
	// ECMP whose hashes collide. Flows to different destinations may land on the same link.
	Hash
)

// Load is what routing one round left on the links: per unit of flow weight, the slowest path's
// latency (with the endpoint overhead), the busiest physical link's time per byte and its class.
type Load struct {
	Latency units.Seconds
	PerByte float64 // seconds per byte of unit weight on the busiest link (0: nothing sent)
	Class   uint16
	Flows   bool
}

// router routes flows on a graph and accumulates link loads; its scratch is reused (not safe for
// concurrent use).
type router struct {
	g       *Graph
	step    Stepper // the graph's next-hop oracle, nil: scan the out-links
	routing Routing
	seed    uint64

	mass    []float64 // per node, towards the current destination
	lat     []float64 // per node: latest arrival from any source
	queued  []bool
	touched []int32
	buckets [][]int32
	hi      int // highest bucket in use

	dist    []int32  // distances to the destination of a multi-source propagation (fill)
	stamp   []uint32 // dist[u] is valid when stamp[u] == epoch
	epoch   uint32
	distTo  int32     // its destination, −1 when dist is not in use
	load    []float64 // per link (Split) or per physical link (Hash)
	used    []bool
	usedIdx []int32
	nicOut  []float64 // per endpoint: weight injected this round (NIC accounting)
	nicIn   []float64
	nicUsed []int32
	nicMax  float64 // set directly by symmetric aggregation
	maxLat  float64
	extra   float64 // serialised message overheads beyond the first
	flows   bool
	cand    []int32

	// Scratch of the aggregated all-to-all (per node: group members on a switch, their latest
	// injection and ejection) and of the port count of linear all-to-alls.
	count   []int32
	inj, ej []float64
	swCount []int32
	perPort []float64

	// Sub-lattice routing (lattice.go): the subgroup H the round was routed under (nil: none),
	// each endpoint's flows per part and a group map (invariance checks), and the loads summed
	// per H-orbit of links (ksum, a link of each + 1 in klink, 0: none yet, the orbits in use in
	// keys: no pass over every orbit to mark it empty when first sized).
	sub    *lattice
	subLat lattice
	folded bool
	inv    []int32
	invSet []int32
	gmap   []int32
	ksum   []float64
	klink  []int32
	keys   []int32
	pairs  []uint64 // a table's flows into the representatives (router.repsFrom)
	mark   []int32  // per member: its flow's representative + 1 (repsFrom; 0 between calls)
	hreps  []int32  // a sub-lattice's representatives (lattice.appendReps)
	ktab   []int32  // the storage of its key tables (lattice.keyTables)
	rows   partnerRows

	// Flow types (types.go): on when the fabric's symmetry supports them and routing splits;
	// eager: a type is recorded at its first flow (the first groups of runs, whose flows the
	// copies repeat).
	typing, eager bool
	// subTypes: flow types for the flows into a sub-lattice's representatives only (routeWhole),
	// on a fabric whose symmetry fixes some links (periods, runs and windows need Γ free).
	subTypes bool
	ft       flowTypes
	// perm: what routeWhole records of a round's parts for a later permuted one (permuted.go).
	perm permTrack
	// Periods (periods.go): a round's flows collected in group order, where each group's start,
	// and the flows where candidate periods failed.
	fl    []flowRec
	proto []memberFlow // one group's flows, between member indices (Model.collect)
	gap   int          // flows of whole periods left out of fl after the first (collectPeriodic)
	// One group's partners per part and member (Model.noSublattice).
	dest    []int32
	starts  []int32
	pts     []int32 // the groups' members, for their period
	witness []int
	lastQ   int // the last collected round's period (0: none) and τ, for tests
	lastTau [maxFactors]uint16
	// Windows (windows.go): lone is set while a round is routed for finish alone (no spill), so
	// a periodic round may leave its first period's loads for finish to read by windows (win).
	lone bool
	win  periodWindows
	cut  cutter     // where set, a round read by windows may stop on a lower bound (windows.go: Cut short)
	rem  []linkLoad // a periodic round's loads after its last whole period (R), held apart
	// Runs (runs.go): the sums of the stretches routed so far, the links they load.
	acc      []float64
	accUsed  []bool
	accIdx   []int32
	lastRuns []run // the last round's runs, for tests
	plan     []run // the stretches routeRuns routes a round's first period by (planRuns)
	runs     runCycles
	tailPlan []run // those of the flows after its last whole period
	// images: per run of the plan being routed, the earlier run it is moved from, if any; kept:
	// the sums of the runs whose images follow, in the order they loaded their links
	// (routePlan).
	images []runImage
	kept   []linkLoad
	// given: the plans of the round's shape, read from its groups' members (Model.shapePlans;
	// nil: each plan is read from the flows); members: their groups' members as flows (e → e),
	// and cover a mark per member of a group (Model.covered).
	given   *shapePlans
	members []flowRec
	cover   []bool
	// pre: the first period's sums up to the stretch ending where the flows after the last
	// whole period end, on acc's first len(pre) links (routePlan), when windows read those
	// flows' loads from them.
	pre []float64
}

// newRouter allocates a router's scratch for g (loads sized for either routing: a link slot per
// physical link covers the bundles too).
func newRouter(g *Graph) *router {
	r := &router{g: g}
	r.step, _ = g.dist.(Stepper)
	n := g.Nodes()
	r.mass = make([]float64, n)
	r.lat = make([]float64, n)
	r.queued = make([]bool, n)
	r.load = make([]float64, g.phys)
	r.used = make([]bool, g.phys)
	r.distTo = -1
	if g.NIC > 0 {
		r.nicOut, r.nicIn = make([]float64, g.Endpoints), make([]float64, g.Endpoints)
	}
	return r
}

// perNode allocates the aggregated all-to-all's scratch on first use.
func (r *router) perNode() {
	if r.count == nil {
		n := r.g.Nodes()
		r.count, r.inj, r.ej = make([]int32, n), make([]float64, n), make([]float64, n)
	}
}

// nic counts weight w leaving endpoint s and reaching endpoint t (when the fabric caps NICs).
func (r *router) nic(s, t int32, w float64) {
	if r.nicOut == nil {
		return
	}
	for _, e := range [2]int32{s, t} {
		if r.nicOut[e] == 0 && r.nicIn[e] == 0 {
			r.nicUsed = append(r.nicUsed, e)
		}
	}
	r.nicOut[s] += w
	r.nicIn[t] += w
}

// fill starts memoising distances to t, for a propagation that will touch most of the fabric
// (a uniform all-to-all): one oracle call per node instead of one per link scanned.
func (r *router) fill(t int32) {
	if r.dist == nil {
		r.dist, r.stamp = make([]int32, r.g.Nodes()), make([]uint32, r.g.Nodes())
	}
	r.epoch++
	if r.epoch == 0 { // wrapped: forget every stamp
		clear(r.stamp)
		r.epoch = 1
	}
	r.distTo = t
}

// d is the distance from u to t.
func (r *router) d(u, t int32) int32 {
	if t != r.distTo {
		return r.g.dist.Dist(u, t)
	}
	if r.stamp[u] != r.epoch {
		r.dist[u], r.stamp[u] = r.g.dist.Dist(u, t), r.epoch
	}
	return r.dist[u]
}

// source adds weight w leaving node u (at distance d from the next destination), whose traffic
// sets off at time lat0 (0 for an endpoint; the injection hop for traffic gathered at a switch).
func (r *router) source(u int32, d int32, w, lat0 float64) {
	if d >= Unreachable {
		return
	}
	if !r.queued[u] {
		r.queued[u] = true
		r.touched = append(r.touched, u)
		r.push(u, d)
		r.lat[u] = lat0
	} else if lat0 > r.lat[u] {
		r.lat[u] = lat0
	}
	r.mass[u] += w
}

func (r *router) push(u, d int32) {
	for int(d) >= len(r.buckets) {
		r.buckets = append(r.buckets, nil)
	}
	r.buckets[d] = append(r.buckets[d], u)
	r.hi = max(r.hi, int(d))
}

// flow routes weight w from endpoint s to endpoint t. It reports false when t is unreachable.
func (r *router) flow(s, t int32, w float64) bool {
	d := r.g.dist.Dist(s, t)
	if d >= Unreachable {
		return false
	}
	r.nic(s, t, w)
	if r.routing == Hash {
		r.note(r.path(s, t, w))
		return true
	}
	r.split(s, t, d, w)
	return true
}

// split routes flow s → t (at distance d) of weight w by Split routing, through its type where
// the fabric has them.
func (r *router) split(s, t, d int32, w float64) {
	if r.typing && r.typed(s, t, w) {
		return
	}
	r.direct(s, t, d, w)
}

// direct routes flow s → t (at distance d) of weight w by Split routing itself.
func (r *router) direct(s, t, d int32, w float64) {
	r.source(s, d, w, 0)
	r.note(r.toward(t, -1))
}

// path carries weight w from s to t along its one hashed path (what toward does for a lone
// source under Hash routing, without the distance buckets) and returns its latency.
func (r *router) path(s, t int32, w float64) float64 {
	lat := 0.0
	for u := s; u != t; {
		total := r.next(u, t)
		if total == 0 {
			return lat // a dead end cannot occur on a connected fabric's shortest-path DAG
		}
		h, k := r.hashed(u, t, total)
		if !r.used[k] {
			r.used[k] = true
			r.usedIdx = append(r.usedIdx, k)
		}
		r.load[k] += w
		lat += h.latency
		if h.to != t {
			lat += h.forward
		}
		u = h.to
	}
	return lat
}

// hashed is the physical link (its bundle and load slot) that u sends all its traffic towards t
// over, among the candidates r.next left (total wide), by a seeded hash of (t, u).
func (r *router) hashed(u, t, total int32) (*hop, int32) {
	pick := int32(mix(r.seed, uint64(t), uint64(u)) % uint64(total))
	for _, li := range r.cand {
		h := &r.g.hot[li]
		if pick < h.width {
			return h, h.phys + pick
		}
		pick -= h.width
	}
	panic("fabric: hashed pick beyond the candidates' width") // total is their width
}

// note records a flow's path latency.
func (r *router) note(lat float64) {
	r.flows = true
	r.maxLat = max(r.maxLat, lat)
}

// add puts amount on link li directly (traffic whose path is known: an endpoint's injection or
// ejection link). Split routing only.
func (r *router) add(li int32, amount float64) {
	if !r.used[li] {
		r.used[li] = true
		r.usedIdx = append(r.usedIdx, li)
	}
	r.load[li] += amount
}

// next puts in r.cand the out-links of u on minimal paths to endpoint t (from the oracle's
// Stepper, or a scan of the out-links with the memoised distances), without those into an
// endpoint other than t on an indirect fabric (endpoints there do not forward), and returns
// their total width.
func (r *router) next(u, t int32) int32 {
	g := r.g
	if r.step != nil {
		r.cand = r.step.Next(u, t, r.cand[:0])
	} else {
		r.cand = scanNext(g, u, t, r.d, r.cand[:0])
	}
	ends, indirect := int32(g.Endpoints), g.home != nil
	total, k := int32(0), 0
	for _, li := range r.cand {
		if h := g.hot[li]; h.to >= ends || !indirect || h.to == t {
			r.cand[k] = li
			k++
			total += h.width
		}
	}
	r.cand = r.cand[:k]
	return total
}

// toward moves the queued sources' traffic to endpoint t, hop by hop in decreasing distance: a
// node forwards all it holds over the links whose head is one link weight closer to t (Split:
// in proportion to their widths; Hash: all of it over one hashed physical link). With stop ≥ 0
// the traffic is held at node stop (t's switch, for traffic aggregated over its endpoints). It
// returns the latest arrival at t (or stop) and clears the nodes.
func (r *router) toward(t, stop int32) float64 {
	g := r.g
	for d := r.hi; d > 0; d-- {
		for i := 0; i < len(r.buckets[d]); i++ {
			u := r.buckets[d][i]
			if u == stop {
				continue
			}
			m := r.mass[u]
			total := r.next(u, t)
			if total == 0 {
				continue // a dead end cannot occur on a connected fabric's shortest-path DAG
			}
			if r.routing == Hash {
				h, k := r.hashed(u, t, total)
				r.carry(h, u, k, m, t)
				continue
			}
			for _, li := range r.cand {
				h := &g.hot[li]
				r.carry(h, u, li, m*float64(h.width)/float64(total), t)
			}
		}
		r.buckets[d] = r.buckets[d][:0]
	}
	r.buckets[0] = r.buckets[0][:0]
	r.hi = 0
	end := t
	if stop >= 0 {
		end = stop
	}
	arrive := r.lat[end]
	for _, u := range r.touched {
		r.mass[u], r.lat[u], r.queued[u] = 0, 0, false
	}
	r.touched = r.touched[:0]
	return arrive
}

// carry puts share on link h out of u (load slot k) and hands it to the link's head.
func (r *router) carry(h *hop, u, k int32, share float64, t int32) {
	switch {
	case r.ft.rec:
		r.ft.keep(r.g.sym, k, share)
	case !r.used[k]:
		r.used[k] = true
		r.usedIdx = append(r.usedIdx, k)
		fallthrough
	default:
		r.load[k] += share
	}
	v := h.to
	arrive := r.lat[u] + h.latency
	if v != t {
		arrive += h.forward
	}
	if !r.queued[v] {
		r.queued[v] = true
		r.touched = append(r.touched, v)
		r.push(v, r.d(v, t))
		r.lat[v] = arrive
	} else if arrive > r.lat[v] {
		r.lat[v] = arrive
	}
	r.mass[v] += share
}

// spill appends each loaded link slot's load, times scale, to vols (before finish clears the
// loads); with a symmetry, every link of an orbit gets its share of the orbit's load.
func (r *router) spill(vols []slotVolume, sym *Symmetry, scale float64) []slotVolume {
	if r.sub != nil {
		return r.spillSub(vols, scale)
	}
	if sym == nil {
		for _, k := range r.usedIdx {
			vols = append(vols, slotVolume{k, r.load[k] * scale})
		}
		return vols
	}
	orbit := r.orbits(sym)
	for k := range sym.LinkOrbit {
		if x := orbitLoad(orbit, sym, int32(k)); x > 0 {
			vols = append(vols, slotVolume{int32(k), x * scale})
		}
	}
	return vols
}

// orbits sums the loads of the representatives' routes per link orbit.
func (r *router) orbits(sym *Symmetry) map[int32]float64 {
	orbit := make(map[int32]float64)
	for _, k := range r.usedIdx {
		orbit[sym.LinkOrbit[k]] += r.load[k]
	}
	return orbit
}

// orbitLoad is link k's load when every element of the symmetry group Γ moves the
// representatives' routes: each link of an orbit O carries |Γ|/|O| of what they put on O.
func orbitLoad(orbit map[int32]float64, sym *Symmetry, k int32) float64 {
	o := sym.LinkOrbit[k]
	return orbit[o] * float64(sym.Order) / float64(sym.OrbitSize[o])
}

// slot is the rate and class of a load slot (a bundle for Split, a physical link for Hash).
func (r *router) slot(k int32) (float64, uint16) {
	if r.routing == Hash {
		l := r.g.physLink(k)
		return float64(l.Rate), l.Class
	}
	return r.g.rate[k], r.g.links[k].Class
}

// rate is the rate of load slot k.
func (r *router) rate(k int32) float64 {
	if r.routing == Hash {
		return float64(r.g.physLink(k).Rate)
	}
	return r.g.rate[k]
}

// busiest raises out's time per byte to x/rate(k) where that is more, with slot k's class.
func (r *router) busiest(out *Load, k int32, x float64) {
	if pb := x / r.rate(k); pb > out.PerByte {
		out.PerByte = pb
		_, out.Class = r.slot(k)
	}
}

// finish reads the round's load and clears the link loads. With a symmetry, the loads are
// those of the representative destinations, and a link's load is |Γ|/|O| times its orbit's.
func (r *router) finish(sym *Symmetry) Load {
	out := r.headLoad()
	r.extra = 0
	if r.g.NIC > 0 {
		busiest := r.nicMax
		for _, e := range r.nicUsed {
			busiest = max(busiest, r.nicOut[e], r.nicIn[e])
			r.nicOut[e], r.nicIn[e] = 0, 0
		}
		r.nicUsed, r.nicMax = r.nicUsed[:0], 0
		if pb := busiest / float64(r.g.NIC); pb > out.PerByte {
			out.PerByte, out.Class = pb, nicClass
		}
	}
	r.lone = false
	if r.sub != nil {
		return r.finishSub(out)
	}
	if r.win.on {
		return r.finishWindows(out)
	}
	if sym != nil {
		orbit := r.orbits(sym)
		for _, k := range r.usedIdx {
			r.busiest(&out, k, orbitLoad(orbit, sym, k))
			r.load[k], r.used[k] = 0, false
		}
		r.usedIdx = r.usedIdx[:0]
		r.maxLat, r.flows = 0, false
		return out
	}
	if r.routing == Split { // busiest, with the slot rates read directly
		load, used, rate := r.load, r.used, r.g.rate
		hi, at := out.PerByte, int32(-1)
		for _, k := range r.usedIdx {
			if pb := load[k] / rate[k]; pb > hi {
				hi, at = pb, k
			}
			load[k], used[k] = 0, false
		}
		if at >= 0 {
			out.PerByte, out.Class = hi, r.g.links[at].Class
		}
	} else {
		for _, k := range r.usedIdx {
			r.busiest(&out, k, r.load[k])
			r.load[k], r.used[k] = 0, false
		}
	}
	r.usedIdx = r.usedIdx[:0]
	r.maxLat, r.flows = 0, false
	return out
}

// cutter says whether a round may stop on a lower bound ld of its load (Model.cuts).
type cutter interface{ cuts(ld Load) bool }

// headLoad is the round's Load as finish starts it: whether it has flows and their latency,
// nothing on a link yet.
func (r *router) headLoad() Load {
	out := Load{Flows: r.flows}
	if r.flows {
		out.Latency = r.g.Overhead + units.Seconds(r.extra+r.maxLat)
	}
	return out
}

// nicClass marks the NIC as the bottleneck (classes index the graph's names; this one is
// registered by every Builder as class 0).
const nicClass = 0

// mix is a 64-bit hash of (seed, a, b) (splitmix64 finaliser).
func mix(seed, a, b uint64) uint64 {
	x := seed ^ (a * 0x9e3779b97f4a7c15) ^ (b * 0xbf58476d1ce4e5b9)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ (x >> 31)
}
