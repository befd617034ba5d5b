package fabric

import "fmt"

// A Stepper is a distance oracle that also names a node's minimal next hops directly (from a
// closed form or small tables), so routing does not scan every out-link of a 64-port switch and
// ask the distance of each head. Next appends to buf, in ascending order, the out-links of u
// (indices into Links) whose head h is one link weight closer to endpoint t:
//
//	Dist(h, t) = Dist(u, t) − weight,
//
// exactly the links the scan keeps (CheckNext compares the two). u ≠ t.
type Stepper interface {
	Distancer
	Next(u, t int32, buf []int32) []int32
}

// An Indexer is an oracle that needs the built graph's link indices (Build calls Index once,
// before the graph is shared).
type Indexer interface {
	Index(g *Graph) error
}

// scanNext is the reference: every out-link of u whose head is one weight closer to t by the
// distance dist (the oracle's, or a memo of it).
func scanNext(g *Graph, u, t int32, dist func(u, t int32) int32, buf []int32) []int32 {
	d := dist(u, t)
	for li := g.first[u]; li < g.first[u+1]; li++ {
		h := g.hot[li]
		if dist(h.to, t) == d-h.weight {
			buf = append(buf, li)
		}
	}
	return buf
}

// CheckNext compares the graph's Stepper with the scan of out-links for every node u and every
// k-th endpoint t (k ≥ 1); nil when the oracle is not a Stepper. Families call it in tests.
func CheckNext(g *Graph, k int) error {
	s, ok := g.dist.(Stepper)
	if !ok {
		return nil
	}
	var a, b []int32
	for t := int32(0); int(t) < g.Endpoints; t += int32(max(1, k)) {
		for u := int32(0); int(u) < g.Nodes(); u++ {
			if u == t || g.dist.Dist(u, t) >= Unreachable {
				continue
			}
			a, b = scanNext(g, u, t, g.dist.Dist, a[:0]), s.Next(u, t, b[:0])
			if fmt.Sprint(a) != fmt.Sprint(b) {
				return fmt.Errorf("fabric: next hops from node %d to endpoint %d: stepper %v, scan %v", u, t, b, a)
			}
		}
	}
	return nil
}

// CheckDistances compares the graph's distance oracle with the exact search from every node to
// every endpoint. Families call it in tests.
func CheckDistances(g *Graph) error {
	exact := newLazyDist(g)
	for u := int32(0); int(u) < g.Nodes(); u++ {
		for t := int32(0); int(t) < g.Endpoints; t++ {
			if a, b := g.dist.Dist(u, t), exact.Dist(u, t); a != b {
				return fmt.Errorf("fabric: distance from node %d to endpoint %d: %d, the search finds %d", u, t, a, b)
			}
		}
	}
	return nil
}

// Next hops on a product fabric. A link of a product moves along one dimension (the other
// coordinate is unchanged) and lies on a minimal path iff it shortens that dimension's distance
// by its weight, which depends only on the dimension's coordinates: per dimension, the table
// cand[a·n + b] lists the neighbour slots of one-dimensional node a that lead towards b, and
// each node maps its slots to its own links (−1 where it lacks that neighbour: a row switch has
// no column links).
type axis struct {
	n     int
	nb    [][]int32 // per 1-D node: its distinct 1-D neighbours (slots)
	cand  []int32   // concatenated candidate slots
	start []int32   // cand[start[a·n+b]:start[a·n+b+1]]
	link  []int32   // per node u: link of slot j at link[off[u]+j], or −1
	off   []int32
}

// Index builds the next-hop tables of both dimensions.
func (p *Product) Index(g *Graph) error {
	var err error
	if p.h, err = buildAxis(g, p.H, p.HOf, p.VOf); err != nil {
		return err
	}
	p.v, err = buildAxis(g, p.V, p.VOf, p.HOf)
	return err
}

// buildAxis indexes the dimension whose coordinate is of (other: the unchanged one).
func buildAxis(g *Graph, tab Table, of, other []int32) (*axis, error) {
	ax := &axis{n: tab.N, nb: make([][]int32, tab.N)}
	weight := map[[2]int32]int32{}
	for li := range g.links {
		l := &g.links[li]
		if other[l.From] != other[l.To] {
			continue
		}
		a, c := of[l.From], of[l.To]
		if a == c {
			return nil, fmt.Errorf("fabric: product link %d → %d moves in neither dimension", l.From, l.To)
		}
		k := [2]int32{a, c}
		if w, ok := weight[k]; ok {
			if w != l.Weight {
				return nil, fmt.Errorf("fabric: product links between coordinates %d and %d weigh %d and %d", a, c, w, l.Weight)
			}
			continue
		}
		weight[k] = l.Weight
		ax.nb[a] = append(ax.nb[a], c)
	}
	n := tab.N
	ax.start = make([]int32, n*n+1)
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			ax.start[a*n+b] = int32(len(ax.cand))
			d := tab.D[a*n+b]
			if a == b || d >= Unreachable {
				continue
			}
			for j, c := range ax.nb[a] {
				if tab.D[int(c)*n+b] == d-weight[[2]int32{int32(a), c}] {
					ax.cand = append(ax.cand, int32(j))
				}
			}
		}
	}
	ax.start[n*n] = int32(len(ax.cand))
	ax.off = make([]int32, g.Nodes()+1)
	for u := 0; u < g.Nodes(); u++ {
		ax.off[u+1] = ax.off[u] + int32(len(ax.nb[of[u]]))
	}
	ax.link = make([]int32, ax.off[g.Nodes()])
	for i := range ax.link {
		ax.link[i] = -1
	}
	for li := range g.links {
		l := &g.links[li]
		if other[l.From] != other[l.To] {
			continue
		}
		for j, c := range ax.nb[of[l.From]] {
			if c == of[l.To] {
				ax.link[ax.off[l.From]+int32(j)] = int32(li)
				break
			}
		}
	}
	return ax, nil
}

// next appends u's links towards 1-D coordinate b.
func (ax *axis) next(u int32, a, b int32, buf []int32) []int32 {
	i := int(a)*ax.n + int(b)
	base := ax.off[u]
	for _, j := range ax.cand[ax.start[i]:ax.start[i+1]] {
		if li := ax.link[base+j]; li >= 0 {
			buf = append(buf, li)
		}
	}
	return buf
}

// Next is the product's Stepper: the row moves towards t's row coordinate and the column moves
// towards its column coordinate, in link order.
func (p *Product) Next(u, t int32, buf []int32) []int32 {
	n0 := len(buf)
	buf = p.h.next(u, p.HOf[u], p.HOf[t], buf)
	buf = p.v.next(u, p.VOf[u], p.VOf[t], buf)
	sortSmall(buf[n0:])
	return buf
}

// sortSmall is an insertion sort (a handful of next hops).
func sortSmall(s []int32) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
