package fattree

import (
	"fmt"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/network/topology"
)

// Name is the registry key.
const Name = "fattree"

// Config is a fat tree of radix-port switches as HammingMesh App. A-C builds them.
type Config struct {
	Radix      int     `json:"radix" help:"ports per switch" source:"[P] HammingMesh §III-C: 64-port switches (Edgecore AS7816-64x)"`
	Endpoints  int     `json:"endpoints" help:"accelerators the tree is built for; leaves = ⌈endpoints / down ports⌉" source:"[P] HammingMesh App. A-C: 1,024 (non-blocking), 1,050 (50%), 1,071 (75% tapered) small; 16,384, 16,380, 16,422 large"`
	Taper      float64 `json:"taper" help:"share of a leaf's bandwidth kept towards the spines, in (0, 1]: 1 non-blocking, 0.5 '50% tapered', 0.25 '75% tapered'; a leaf has ⌊radix/(1+taper)⌋ down ports" source:"[D] HammingMesh App. A-C: 32/32, 42/22 and 51/13 down/up ports of a 64-port leaf are ⌊64/(1+t)⌋ for t = 1, 0.5, 0.25"`
	Levels     int     `json:"levels" help:"switch levels: 0 picks the fewest (2 while a spine reaches every leaf, else 3 with pods of radix/2 leaves)" source:"[P] HammingMesh App. A-C: two levels for ~1,000 accelerators, three for ~16,000"`
	LinkGbit   float64 `json:"link_gbit_per_s" help:"per-accelerator link, every plane the simulation models as one (Gb/s)" source:"[P] HammingMesh §III-D, Table III: four planes of 400 Gb/s simulated as one 1,600 Gb/s link"`
	CostPlanes int     `json:"cost_planes" help:"planes the cost counts (one per accelerator port)" source:"[P] HammingMesh §III-C: 16 planes for fat trees"`
	fabric.Common
	network.Prices
}

// DefaultConfig is the small non-blocking fat tree of HammingMesh Table II.
func DefaultConfig() *Config {
	return &Config{Radix: 64, Endpoints: 1024, Taper: 1, LinkGbit: 1600, CostPlanes: 16, Common: fabric.DefaultCommon(), Prices: network.DefaultPrices()}
}

// Down and Up are a leaf's ports towards accelerators and towards the next level.
func (c *Config) Down() int { return int(float64(c.Radix) / (1 + c.Taper)) }
func (c *Config) Up() int   { return c.Radix - c.Down() }

// Leaves is ⌈endpoints / down⌉.
func (c *Config) Leaves() int { return ceil(c.Endpoints, c.Down()) }

// Depth is the number of switch levels.
func (c *Config) Depth() int {
	if c.Levels > 0 {
		return c.Levels
	}
	if c.Leaves() <= c.Radix {
		return 2
	}
	return 3
}

// pod is the number of leaves under one set of second-level switches in a three-level tree.
func (c *Config) pod() int { return c.Radix / 2 }

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p params.Problems
	p.AtLeast("radix", c.Radix, 4)
	p.AtLeast("endpoints", c.Endpoints, 2)
	if !(c.Taper > 0 && c.Taper <= 1) {
		p.Addf("taper %g must be in (0, 1] (1 non-blocking, 0.5 for 50%% tapered, 0.25 for 75%%)", c.Taper)
	}
	if c.Levels != 0 && c.Levels != 2 && c.Levels != 3 {
		p.Addf("levels %d must be 0 (auto), 2 or 3", c.Levels)
	}
	p.Positive("link_gbit_per_s", c.LinkGbit)
	p.AtLeast("cost_planes", c.CostPlanes, 1)
	c.Common.Check(&p, algorithms)
	if len(p) == 0 {
		switch d, l := c.Depth(), c.Leaves(); {
		case c.Down() < 1 || c.Up() < 1:
			p.Addf("taper %g leaves a %d-port leaf %d down and %d up ports", c.Taper, c.Radix, c.Down(), c.Up())
		case d == 2 && l > c.Radix:
			p.Addf("a 2-level tree of %d-port switches reaches %d leaves, %d endpoints need %d", c.Radix, c.Radix, c.Endpoints, l)
		case d == 3 && l > c.pod()*c.Radix:
			p.Addf("a 3-level tree of %d-port switches reaches %d leaves (%d endpoints), %d endpoints need %d", c.Radix, c.pod()*c.Radix, c.pod()*c.Radix*c.Down(), c.Endpoints, l)
		}
	}
	return p.Err("network fattree")
}

var algorithms = []collective.Algorithm{collective.Ring, collective.BiRing, collective.Hierarchical, collective.Torus2D,
	collective.RHD, collective.HD, collective.RD, collective.Tree, collective.Linear}

// Algorithms lists the algorithms the network offers.
func (c *Config) Algorithms() []collective.Algorithm { return algorithms }

// Structure is HammingMesh App. A-C's bill per plane: leaves + second (+ third) level switches,
// a DAC cable per endpoint port and an AoC cable per inter-switch link, and the diameter: two
// cables per level, up and down (§III-B: 2(⌈log_{k/2}(q/k)⌉+1)).
func (c *Config) Structure() (network.Structure, error) {
	if err := c.Validate(); err != nil {
		return network.Structure{}, err
	}
	l, up := c.Leaves(), c.Up()
	links := l * up
	b := network.Bill{Planes: c.CostPlanes, Switches: l + ceil(links, c.Radix), DAC: l * c.Down(), AoC: links, Prices: c.Prices}
	if c.Depth() == 3 {
		b.Switches = l + ceil(links, c.Radix/2) + ceil(links, c.Radix)
		b.AoC = 2 * links
	}
	return network.Structure{Endpoints: c.Endpoints, Bill: b, Diameter: 2 * c.Depth(), InjectionBps: float64(units.Gbps(c.LinkGbit))}, nil
}

// Fabric builds the tree with the switches of each level above the leaves aggregated into one
// node per pod (three levels) or one spine node (two levels), joined by bundles: under split
// routing a leaf spreads its upward traffic evenly over its up links, so each spine of a level
// carries the same share and the bundle is exact.
func (c *Config) build() (*fabric.Graph, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	rate := units.Gbps(c.LinkGbit)
	b := fabric.NewBuilder(c.Endpoints, 0)
	down, l := c.Down(), c.Leaves()
	leaves := b.Switches(l, c.Forward())
	t := &tree{endpoints: int32(c.Endpoints), leaves: leaves, down: int32(down), pod: int32(c.pod()), depth: c.Depth()}
	for e := 0; e < c.Endpoints; e++ {
		b.Duplex(int32(e), leaves+int32(e/down), fabric.Spec{Class: "endpoint link", Rate: rate, Latency: c.Cable()})
	}
	if t.depth == 2 {
		t.spine = b.Switch(c.Forward())
		for i := 0; i < l; i++ {
			b.Duplex(leaves+int32(i), t.spine, fabric.Spec{Class: "leaf uplink", Width: c.Up(), Rate: rate, Latency: c.Cable()})
		}
	} else {
		pods := ceil(l, c.pod())
		t.pods = b.Switches(pods, c.Forward())
		t.spine = b.Switch(c.Forward())
		for i := 0; i < l; i++ {
			b.Duplex(leaves+int32(i), t.pods+int32(i/c.pod()), fabric.Spec{Class: "leaf uplink", Width: c.Up(), Rate: rate, Latency: c.Cable()})
		}
		for p := 0; p < pods; p++ {
			n := min(c.pod(), l-p*c.pod())
			b.Duplex(t.pods+int32(p), t.spine, fabric.Spec{Class: "pod uplink", Width: n * c.Up(), Rate: rate, Latency: c.Cable()})
		}
	}
	return b.Build(c.EndpointCosts(), func(*fabric.Graph) (fabric.Distancer, error) { return t, nil })
}

// tree is the distance oracle: cables up to the lowest common level and down again. It is also
// the router's Stepper: below the lowest common level the only next hop is the link up (a bundle
// to the aggregated level above), at or above it the one link down towards the destination.
type tree struct {
	endpoints, leaves, pods, spine int32
	down, pod                      int32
	depth                          int
	upLink, downLink               []int32 // per node: the link to its parent, the link into it from its parent
}

// parent is the node above u (−1 for the spine).
func (t *tree) parent(u int32) int32 {
	switch {
	case u < t.endpoints:
		return t.leaves + t.leafOf(u)
	case u == t.spine:
		return -1
	case u < t.leaves+ceilDiv32(t.endpoints, t.down):
		if t.depth == 2 {
			return t.spine
		}
		return t.pods + (u-t.leaves)/t.pod
	}
	return t.spine // a pod
}

// Index finds every node's up link and the link down into it.
func (t *tree) Index(g *fabric.Graph) error {
	t.upLink, t.downLink = make([]int32, g.Nodes()), make([]int32, g.Nodes())
	for i, l := range g.Links() {
		switch {
		case t.parent(l.From) == l.To:
			t.upLink[l.From] = int32(i)
		case t.parent(l.To) == l.From:
			t.downLink[l.To] = int32(i)
		default:
			return fmt.Errorf("fattree: link %d → %d joins no child to its parent", l.From, l.To)
		}
	}
	return nil
}

// Next is the one minimal next hop from u towards endpoint dst.
func (t *tree) Next(u, dst int32, buf []int32) []int32 {
	lt := t.leafOf(dst)
	var below int32 // the child of u on the way down, or −1: go up
	switch {
	case u < t.endpoints:
		below = -1
	case u == t.spine:
		below = t.leaves + lt
		if t.depth == 3 {
			below = t.pods + lt/t.pod
		}
	case u < t.leaves+ceilDiv32(t.endpoints, t.down):
		below = -1
		if u-t.leaves == lt {
			below = dst
		}
	default:
		below = -1
		if u-t.pods == lt/t.pod {
			below = t.leaves + lt
		}
	}
	if below < 0 {
		return append(buf, t.upLink[u])
	}
	return append(buf, t.downLink[below])
}

func (t *tree) leafOf(e int32) int32 { return e / t.down }

func (t *tree) Dist(u, dst int32) int32 {
	lt := t.leafOf(dst)
	switch {
	case u < t.endpoints:
		if u == dst {
			return 0
		}
		return 1 + t.Dist(t.leaves+t.leafOf(u), dst)
	case u < t.leaves+int32(ceilDiv32(t.endpoints, t.down)):
		l := u - t.leaves
		switch {
		case l == lt:
			return 1
		case t.depth == 2 || l/t.pod == lt/t.pod:
			return 3
		}
		return 5
	case u == t.spine:
		if t.depth == 2 {
			return 2
		}
		return 3
	default: // a pod's second level
		if u-t.pods == lt/t.pod {
			return 2
		}
		return 4
	}
}

func ceil(a, b int) int          { return (a + b - 1) / b }
func ceilDiv32(a, b int32) int32 { return (a + b - 1) / b }

// Tiers are the levels a hierarchical algorithm runs on: the leaf's accelerators, a pod's, all.
func (c *Config) Tiers() []topology.Tier {
	leaf := c.Down()
	tiers := []topology.Tier{{Name: "leaf", Span: leaf}}
	if c.Depth() == 3 {
		tiers = append(tiers, topology.Tier{Name: "pod", Span: leaf * c.pod()})
	}
	return append(tiers, topology.Tier{Name: "spine", Span: c.Endpoints})
}

// Spec registers the model.
func Spec() network.Spec {
	return network.Spec{
		Name:      Name,
		Summary:   "fat tree of 64-port switches, non-blocking or tapered at the leaves, 2 or 3 levels (HammingMesh App. A-C), routed flows",
		Source:    "[P] HammingMesh §III-C, App. A-C, Table II; latencies Table III",
		NewConfig: func() network.Config { return DefaultConfig() },
		New: func(cfg network.Config, env network.Env) (network.Model, error) {
			c := cfg.(*Config)
			g, err := c.Fabric()
			if err != nil {
				return nil, err
			}
			if env.GPUs > c.Endpoints {
				return nil, errs.Usage("a job of %d GPUs does not fit network fattree: it has %d endpoints", env.GPUs, c.Endpoints)
			}
			opt := c.Common.Options(Name, algorithms)
			opt.Tiers = c.Tiers()
			return fabric.NewModel(g, env, opt)
		},
	}
}

// Fabric is the routed graph (built once per configuration; see fabric.Cached).
func (c *Config) Fabric() (*fabric.Graph, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	key := *c // what shapes the graph: not the bill
	key.Common, key.CostPlanes, key.Prices = c.Common.GraphKey(), 0, network.Prices{}
	return fabric.Cached(key, c.build)
}
