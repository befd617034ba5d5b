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
	routing Routing
	seed    uint64

	mass    []float64 // per node, towards the current destination
	lat     []float64 // per node: latest arrival from any source
	queued  []bool
	touched []int32
	buckets [][]int32
	hi      int // highest bucket in use

	load    []float64 // per link (Split) or per physical link (Hash)
	used    []bool
	usedIdx []int32
	maxLat  float64
	flows   bool
	cand    []int32
}

func newRouter(g *Graph, routing Routing, seed uint64) *router {
	r := &router{g: g, routing: routing, seed: seed}
	n := g.Nodes()
	r.mass = make([]float64, n)
	r.lat = make([]float64, n)
	r.queued = make([]bool, n)
	size := len(g.links)
	if routing == Hash {
		size = g.phys
	}
	r.load = make([]float64, size)
	r.used = make([]bool, size)
	return r
}

// source adds weight w leaving node u towards the destination of the next toward call.
func (r *router) source(u int32, d int32, w float64) {
	if d >= Unreachable {
		return
	}
	if !r.queued[u] {
		r.queued[u] = true
		r.touched = append(r.touched, u)
		r.push(u, d)
		r.lat[u] = 0
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
	r.source(s, d, w)
	r.toward(t)
	return true
}

// toward moves the queued sources' traffic to endpoint t, hop by hop in decreasing distance: a
// node forwards all it holds over the links whose head is one link weight closer to t (Split:
// in proportion to their widths; Hash: all of it over one hashed physical link).
func (r *router) toward(t int32) {
	g := r.g
	for d := r.hi; d > 0; d-- {
		for i := 0; i < len(r.buckets[d]); i++ {
			u := r.buckets[d][i]
			m := r.mass[u]
			r.cand = r.cand[:0]
			total := int32(0)
			for li := g.first[u]; li < g.first[u+1]; li++ {
				l := &g.links[li]
				if g.dist.Dist(l.To, t) == int32(d)-l.Weight {
					r.cand = append(r.cand, li)
					total += l.Width
				}
			}
			if total == 0 {
				continue // a dead end cannot occur on a connected fabric's shortest-path DAG
			}
			if r.routing == Hash {
				pick := int32(mix(r.seed, uint64(t), uint64(u)) % uint64(total))
				for _, li := range r.cand {
					l := &g.links[li]
					if pick < l.Width {
						r.carry(l, l.phys+pick, m, t)
						break
					}
					pick -= l.Width
				}
				continue
			}
			for _, li := range r.cand {
				l := &g.links[li]
				r.carry(l, li, m*float64(l.Width)/float64(total), t)
			}
		}
		r.buckets[d] = r.buckets[d][:0]
	}
	r.buckets[0] = r.buckets[0][:0]
	r.hi = 0
	if r.queued[t] {
		r.flows = true
		r.maxLat = max(r.maxLat, r.lat[t])
	}
	for _, u := range r.touched {
		r.mass[u], r.lat[u], r.queued[u] = 0, 0, false
	}
	r.touched = r.touched[:0]
}

// carry puts share on link l (load slot k) and hands it to the link's head.
func (r *router) carry(l *Link, k int32, share float64, t int32) {
	if !r.used[k] {
		r.used[k] = true
		r.usedIdx = append(r.usedIdx, k)
	}
	r.load[k] += share
	v := l.To
	arrive := r.lat[l.From] + float64(l.Latency)
	if v != t {
		arrive += float64(r.g.forward[v])
	}
	if !r.queued[v] {
		r.queued[v] = true
		r.touched = append(r.touched, v)
		r.push(v, r.g.dist.Dist(v, t))
		r.lat[v] = arrive
	} else if arrive > r.lat[v] {
		r.lat[v] = arrive
	}
	r.mass[v] += share
}

// finish reads the round's load and clears the link loads.
func (r *router) finish() Load {
	out := Load{Flows: r.flows}
	if r.flows {
		out.Latency = r.g.Overhead + units.Seconds(r.maxLat)
	}
	for _, k := range r.usedIdx {
		var rate float64
		var class uint16
		if r.routing == Hash {
			l := r.physLink(k)
			rate, class = float64(l.Rate), l.Class
		} else {
			l := &r.g.links[k]
			rate, class = float64(l.Rate)*float64(l.Width), l.Class
		}
		if pb := r.load[k] / rate; pb > out.PerByte {
			out.PerByte, out.Class = pb, class
		}
		r.load[k], r.used[k] = 0, false
	}
	r.usedIdx = r.usedIdx[:0]
	r.maxLat, r.flows = 0, false
	return out
}

// physLink is the link a physical slot belongs to.
func (r *router) physLink(k int32) *Link {
	ls := r.g.links
	lo, hi := 0, len(ls)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ls[mid].phys <= k {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return &ls[lo]
}

// mix is a 64-bit hash of (seed, a, b) (splitmix64 finaliser).
func mix(seed, a, b uint64) uint64 {
	x := seed ^ (a * 0x9e3779b97f4a7c15) ^ (b * 0xbf58476d1ce4e5b9)
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ (x >> 31)
}
