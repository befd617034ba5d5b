package fabric

import (
	"fmt"

	"github.com/ddlest/ddlest/internal/units"
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
	// Overhead is the per-message endpoint overhead: charged once per round on top of the
	// slowest path.
	Overhead units.Seconds
	forward  []units.Seconds // per node
	first    []int32         // out-links of u: links[first[u]:first[u+1]]
	links    []Link
	classes  []string
	phys     int
	dist     Distancer
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

// Distance is the routing distance from node u to endpoint t.
func (g *Graph) Distance(u, t int32) int32 { return g.dist.Dist(u, t) }

// Physical is the number of physical links (bundles counted by width).
func (g *Graph) Physical() int { return g.phys }

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

// Build sorts the links by tail and returns the graph with its distance oracle (nil: the exact
// weighted distances, computed per destination on demand).
func (b *Builder) Build(overhead units.Seconds, dist func(*Graph) (Distancer, error)) (*Graph, error) {
	g := b.g
	n := len(g.forward)
	g.Overhead = overhead
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
	for i := range g.links {
		g.links[i].phys = phys
		phys += g.links[i].Width
	}
	g.phys = int(phys)
	if dist == nil {
		g.dist = newLazyDist(&g)
	} else {
		d, err := dist(&g)
		if err != nil {
			return nil, err
		}
		g.dist = d
	}
	return &g, nil
}
