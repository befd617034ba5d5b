package fabric

import (
	"math"
	"sync"
)

// Distancer is a fabric's routing distance: the least total link weight from node u to endpoint
// t (Unreachable when there is no path). Every fabric family supplies a closed form or a table
// (a fat tree's leaf/pod/core levels, a HammingMesh's sum of row and column distances); the exact
// per-destination search (LazyDist) checks them in tests and serves small fabrics.
type Distancer interface {
	Dist(u, t int32) int32
}

// Unreachable is the distance to an endpoint no path reaches.
const Unreachable = math.MaxInt32 / 4

// LazyDist computes the exact weighted distances to a destination the first time it is asked
// for (a reverse shortest-path search over the in-links), and keeps them: memory is nodes ×
// destinations asked for, so it suits fabrics of a few thousand nodes.
type LazyDist struct {
	g    *Graph
	in   [][]int32 // in-links (indices into g.links) per node
	mu   sync.Mutex
	to   map[int32][]int32
	last int32
	cur  []int32
}

func newLazyDist(g *Graph) *LazyDist {
	d := &LazyDist{g: g, to: map[int32][]int32{}, last: -1}
	d.in = make([][]int32, g.Nodes())
	for i, l := range g.links {
		d.in[l.To] = append(d.in[l.To], int32(i))
	}
	return d
}

// NewLazyDist is the exact distance oracle of g (for tests of a family's closed form).
func NewLazyDist(g *Graph) Distancer { return newLazyDist(g) }

// Dist is the exact distance from u to t.
func (d *LazyDist) Dist(u, t int32) int32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t != d.last {
		tab, ok := d.to[t]
		if !ok {
			tab = d.search(t)
			d.to[t] = tab
		}
		d.last, d.cur = t, tab
	}
	return d.cur[u]
}

// search is Dijkstra from t over reversed links with a bucket queue (weights are small integers).
func (d *LazyDist) search(t int32) []int32 {
	n := d.g.Nodes()
	dist := make([]int32, n)
	for i := range dist {
		dist[i] = Unreachable
	}
	dist[t] = 0
	buckets := [][]int32{{t}}
	for b := 0; b < len(buckets); b++ {
		for i := 0; i < len(buckets[b]); i++ {
			v := buckets[b][i]
			if dist[v] != int32(b) {
				continue
			}
			for _, li := range d.in[v] {
				l := d.g.links[li]
				nd := int32(b) + l.Weight
				if nd < dist[l.From] {
					dist[l.From] = nd
					for int(nd) >= len(buckets) {
						buckets = append(buckets, nil)
					}
					buckets[nd] = append(buckets[nd], l.From)
				}
			}
		}
	}
	return dist
}

// Table is an all-pairs distance table of a small graph (one dimension of a product fabric:
// the accelerators of one row and its row network).
type Table struct {
	N int
	D []int32 // D[u·N + v]
}

// AllPairs computes the table of a graph of n nodes given as weighted directed edges.
func AllPairs(n int, edges [][3]int32) Table {
	out := make([][]int32, n) // edge indices by tail
	for i, e := range edges {
		out[e[0]] = append(out[e[0]], int32(i))
	}
	t := Table{N: n, D: make([]int32, n*n)}
	for s := 0; s < n; s++ {
		row := t.D[s*n : (s+1)*n]
		for i := range row {
			row[i] = Unreachable
		}
		row[s] = 0
		buckets := [][]int32{{int32(s)}}
		for b := 0; b < len(buckets); b++ {
			for i := 0; i < len(buckets[b]); i++ {
				v := buckets[b][i]
				if row[v] != int32(b) {
					continue
				}
				for _, ei := range out[v] {
					e := edges[ei]
					nd := int32(b) + e[2]
					if nd < row[e[1]] {
						row[e[1]] = nd
						for int(nd) >= len(buckets) {
							buckets = append(buckets, nil)
						}
						buckets[nd] = append(buckets[nd], e[1])
					}
				}
			}
		}
	}
	return t
}

// Product is the distance of a fabric that is the product of two one-dimensional networks (a 2D
// torus, a HammingMesh: rows of boards joined by row networks × columns joined by column
// networks): every node has a coordinate in each, every link moves along one of them, and a
// shortest path is a shortest row path plus a shortest column path, so
//
//	dist(u, t) = H(h_u, h_t) + V(v_u, v_t).
type Product struct {
	H, V     Table
	HOf, VOf []int32 // per node
	h, v     *axis   // next-hop index per dimension (Stepper), built with the graph
}

// Dist is H + V.
func (p *Product) Dist(u, t int32) int32 {
	return p.H.D[int(p.HOf[u])*p.H.N+int(p.HOf[t])] + p.V.D[int(p.VOf[u])*p.V.N+int(p.VOf[t])]
}
