package torus

import (
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/network/topology"
)

// offered is what the torus runs on its dimensions and, flow by flow on its graph (routed=true):
// the level strategies (the ring in snake order, as the levels assume), and those whose traffic
// shares links levels do not see: the mesh (every node to every other at once), SiPAC Table II's
// hierarchical ring (k = a row of dim_x nodes) and the linear all-to-all (SiPAC's baselines run
// mesh and H-Ring on the torus, §VI-A-4).
var offered = collective.Routable{Levels: algorithms, Graph: []collective.Algorithm{collective.SnakeRing,
	collective.BiRing, collective.Torus2D, collective.Mesh, collective.HRingTableII(0), collective.Linear}}

func routedOffer(network.Op) []collective.Algorithm { return offered.Graph }

// Fabric is the torus as a routed graph: dim_x × dim_y nodes (node x + dim_x·y), each linked to
// its ±x and ±y neighbours (wrapping) by one port of node_tbps/ports each way, prop_x_ns or
// prop_y_ns per link; a node in the way forwards in io_ns (store and forward through the CUs,
// SiPAC §VI-A-1) and the source spends io_ns once, so a path of h hops costs what h level hops
// do. Distances are closed-form and the translations of the torus are its symmetry. The graph is
// the whole torus whatever the job (a job of gpus ranks fills x first, then y).
func (c *Config) Fabric(gpus int) (*fabric.Graph, error) {
	if err := topology.Fits(Name, gpus, c.DimX*c.DimY); err != nil {
		return nil, err
	}
	key := graphKey{x: c.DimX, y: c.DimY, port: c.port(), px: c.PropXNs, py: c.PropYNs, io: c.IONs}
	return fabric.Cached(key, key.build)
}

type graphKey struct {
	x, y       int
	port       units.BytesPerSecond
	px, py, io float64
}

func (k graphKey) build() (*fabric.Graph, error) {
	n := k.x * k.y
	b := fabric.NewBuilder(n, units.Ns(k.io))
	for v := 0; v < n; v++ {
		x, y := v%k.x, v/k.x
		if k.x > 1 {
			b.Link(int32(v), int32((x+1)%k.x+y*k.x), fabric.Spec{Class: "x link", Rate: k.port, Latency: units.Ns(k.px)})
			b.Link(int32(v), int32((x+k.x-1)%k.x+y*k.x), fabric.Spec{Class: "x link", Rate: k.port, Latency: units.Ns(k.px)})
		}
		if k.y > 1 {
			b.Link(int32(v), int32(x+(y+1)%k.y*k.x), fabric.Spec{Class: "y link", Rate: k.port, Latency: units.Ns(k.py)})
			b.Link(int32(v), int32(x+(y+k.y-1)%k.y*k.x), fabric.Spec{Class: "y link", Rate: k.port, Latency: units.Ns(k.py)})
		}
	}
	d := dist{x: int32(k.x), y: int32(k.y), n: int32(n)}
	g, err := b.Build(fabric.Endpoint{Overhead: units.Ns(k.io)}, func(*fabric.Graph) (fabric.Distancer, error) { return d, nil })
	if err != nil {
		return nil, err
	}
	if err := g.SetSymmetry(d.symmetry(g)); err != nil {
		return nil, err
	}
	return g, nil
}

// dist is the torus's hop distance: the shorter way round in each dimension.
type dist struct{ x, y, n int32 }

func (d dist) Dist(u, t int32) int32 {
	return ring(u%d.x, t%d.x, d.x) + ring(u/d.x, t/d.x, d.y)
}

func ring(a, b, n int32) int32 {
	h := a - b
	if h < 0 {
		h = -h
	}
	return min(h, n-h)
}

// symmetry is the torus's translations: one orbit per link direction, node 0 the representative.
func (d dist) symmetry(g *fabric.Graph) *fabric.Symmetry {
	links := g.Links()
	// Γ = Z_x × Z_y: node v is the translation v·0 (its element is its number), and a link the
	// translation by its tail of its orbit's link out of node 0.
	s := &fabric.Symmetry{Reps: []int32{0}, LinkOrbit: make([]int32, len(links)), OrbitSize: make([]int32, len(links)), Order: int(d.n),
		Factors: []int32{d.x, d.y}, EndRep: make([]int32, d.n), EndElem: make([]int32, d.n), LinkElem: make([]int32, len(links))}
	for v := range s.EndElem {
		s.EndElem[v] = int32(v)
	}
	for i, ln := range links {
		// Translate the link so that its tail is node 0.
		dx, dy := ln.From%d.x, ln.From/d.x
		to := (ln.To%d.x-dx+d.x)%d.x + (ln.To/d.x-dy+d.y)%d.y*d.x
		img := g.Link(0, to)
		s.LinkOrbit[i], s.LinkElem[i] = img, ln.From
		s.OrbitSize[img]++
	}
	return s
}
