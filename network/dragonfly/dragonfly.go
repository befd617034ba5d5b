package dragonfly

import (
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/network/topology"
)

// Name is the registry key.
const Name = "dragonfly"

// Config is a Dragonfly (Kim et al. 2008): groups of a routers, fully connected inside a group,
// p endpoints and h global links per router.
type Config struct {
	A          int     `json:"routers_per_group" help:"routers per group (a)" source:"[P] HammingMesh App. A-C: a = 16 (small), 32 (large)"`
	P          int     `json:"endpoints_per_router" help:"endpoints per router (p)" source:"[P] HammingMesh App. A-C: p = 8 (small), 17 (large)"`
	H          int     `json:"global_per_router" help:"global links per router (h)" source:"[P] HammingMesh App. A-C: h = 8 (small), 16 (large); canonical a = 2p = 2h"`
	Groups     int     `json:"groups" help:"groups (at most a·h + 1)" source:"[P] HammingMesh App. A-C: 8 groups (1,024 endpoints), 30 groups (16,320)"`
	Radix      int     `json:"radix" help:"ports of a physical switch; routers of p + a − 1 + h ports pack into it" source:"[P] HammingMesh App. A-C: two 31-port virtual routers per 64-port switch (small)"`
	LinkGbit   float64 `json:"link_gbit_per_s" help:"link rate, every simulated plane as one (Gb/s)" source:"[P] HammingMesh §III-D, Table III: 1,600 Gb/s"`
	CostPlanes int     `json:"cost_planes" help:"planes the cost counts" source:"[P] HammingMesh §III-C: 16 planes for Dragonfly"`
	fabric.Common
	network.Prices
}

// DefaultConfig is the small Dragonfly of HammingMesh Table II.
func DefaultConfig() *Config {
	return &Config{A: 16, P: 8, H: 8, Groups: 8, Radix: 64, LinkGbit: 1600, CostPlanes: 16, Common: fabric.DefaultCommon(), Prices: network.DefaultPrices()}
}

// Endpoints is groups · a · p.
func (c *Config) Endpoints() int { return c.Groups * c.A * c.P }

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p params.Problems
	p.AtLeast("routers_per_group", c.A, 1)
	p.AtLeast("endpoints_per_router", c.P, 1)
	p.AtLeast("global_per_router", c.H, 0)
	p.AtLeast("groups", c.Groups, 1)
	p.AtLeast("radix", c.Radix, 1)
	p.Positive("link_gbit_per_s", c.LinkGbit)
	p.AtLeast("cost_planes", c.CostPlanes, 1)
	c.Common.Check(&p, algorithms)
	if c.A >= 1 && c.H >= 0 && c.Groups > c.A*c.H+1 {
		p.Addf("a Dragonfly with %d groups needs a global link from every group to each of the %d others, but a group has only a·h = %d·%d = %d global links (at most %d groups)",
			c.Groups, c.Groups-1, c.A, c.H, c.A*c.H, c.A*c.H+1)
	}
	if ports := c.P + c.A - 1 + c.H; c.Radix >= 1 && ports > c.Radix {
		p.Addf("a router needs p + a − 1 + h = %d ports, more than the %d-port switch", ports, c.Radix)
	}
	return p.Err("network dragonfly")
}

var algorithms = []collective.Algorithm{collective.Ring, collective.BiRing, collective.Hierarchical, collective.Torus2D,
	collective.RHD, collective.Tree, collective.Linear}

// Algorithms lists the algorithms the network offers.
func (c *Config) Algorithms() []collective.Algorithm { return algorithms }

// Globals is the consecutive ("absolute", Kim et al. 2008) arrangement of the global links:
// global port l = 0 … a·h−1 of a group sits on router ⌊l/h⌋ and leads to the group δ = (l mod
// (g−1)) + 1 ahead, to that group's port m·(g−1) + (g−1−δ), m = ⌊l/(g−1)⌋ — the port that leads
// δ groups back. A router's h ports reach h consecutive offsets; a port whose partner would lie
// beyond a·h stays unused, so every pair of groups gets ⌊a·h/(g−1)⌋ links (one more where the
// ports allow).
func (c *Config) Globals() [][2]int32 {
	g, ports := c.Groups, c.A*c.H
	var out [][2]int32
	if g < 2 {
		return nil
	}
	for i := 0; i < g; i++ {
		for l := 0; l < ports; l++ {
			m, d := l/(g-1), l%(g-1)+1
			j, lp := (i+d)%g, m*(g-1)+(g-1-d)
			if lp >= ports || j < i {
				continue // no partner port, or the pair was added from j's side
			}
			out = append(out, [2]int32{int32(i*c.A + l/c.H), int32(j*c.A + lp/c.H)})
		}
	}
	return out
}

// Structure is HammingMesh App. A-C's bill: routers packed ⌊radix/(p + a − 1 + h)⌋ to a physical
// switch, DAC for endpoints and links inside a group (less those inside one physical switch), AoC
// for global links; the diameter counts every cable of the longest minimal path, endpoint cables
// included (§III-B): 2 + the routers' diameter, local-global-local = 3 when a router must first
// reach the group's router with the link (5 in all), 2 when every router has a link to every
// other group (4).
func (c *Config) Structure() (network.Structure, error) {
	if err := c.Validate(); err != nil {
		return network.Structure{}, err
	}
	per := max(1, c.Radix/(c.P+c.A-1+c.H)) // routers per physical switch
	routers := c.Groups * c.A
	local := c.Groups * c.A * (c.A - 1) / 2
	internal := c.Groups * (c.A / per) * per * (per - 1) / 2
	b := network.Bill{Planes: c.CostPlanes, Switches: ceil(routers, per), DAC: c.Endpoints() + local - internal,
		AoC: c.Groups * c.A * c.H / 2, Prices: c.Prices}
	g, err := c.Fabric()
	if err != nil {
		return network.Structure{}, err
	}
	far := int32(0)
	for _, x := range g.Distancer().(*dist).routers.D {
		far = max(far, x)
	}
	return network.Structure{Endpoints: c.Endpoints(), Bill: b, Diameter: 2 + int(far), InjectionBps: float64(units.Gbps(c.LinkGbit))}, nil
}

// routerEdges are the local and global links between routers (numbered group·a + router).
func (c *Config) routerEdges() [][3]int32 {
	var edges [][3]int32
	for g := 0; g < c.Groups; g++ {
		for x := 0; x < c.A; x++ {
			for y := x + 1; y < c.A; y++ {
				u, v := int32(g*c.A+x), int32(g*c.A+y)
				edges = append(edges, [3]int32{u, v, 1}, [3]int32{v, u, 1})
			}
		}
	}
	for _, gl := range c.Globals() {
		edges = append(edges, [3]int32{gl[0], gl[1], 1}, [3]int32{gl[1], gl[0], 1})
	}
	return edges
}

// Fabric builds the Dragonfly: endpoints, routers (a per group, all-to-all local links) and the
// global links of Globals; routers forward with switch_ns. Distances come from a router table.
func (c *Config) build() (*fabric.Graph, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	rate := units.Gbps(c.LinkGbit)
	e := c.Endpoints()
	b := fabric.NewBuilder(e, 0)
	routers := c.Groups * c.A
	first := b.Switches(routers, c.Forward())
	for i := 0; i < e; i++ {
		b.Duplex(int32(i), first+int32(i/c.P), fabric.Spec{Class: "endpoint link", Rate: rate, Latency: c.Cable()})
	}
	for g := 0; g < c.Groups; g++ {
		for x := 0; x < c.A; x++ {
			for y := x + 1; y < c.A; y++ {
				b.Duplex(first+int32(g*c.A+x), first+int32(g*c.A+y), fabric.Spec{Class: "local link", Rate: rate, Latency: c.Cable()})
			}
		}
	}
	for _, gl := range c.Globals() {
		b.Duplex(first+gl[0], first+gl[1], fabric.Spec{Class: "global link", Rate: rate, Latency: c.Cable()})
	}
	t := fabric.AllPairs(routers, c.routerEdges())
	d := &dist{routers: t, first: first, p: int32(c.P), endpoints: int32(e)}
	return b.Build(c.EndpointCosts(), func(*fabric.Graph) (fabric.Distancer, error) { return d, nil })
}

// dist: an endpoint is one cable from its router; routers use the all-pairs router table, read
// by destination row (the table is symmetric: every cable is duplex), so the neighbours of a
// router inside its group sit next to each other in memory. It is the router's Stepper too.
type dist struct {
	routers   fabric.Table
	first, p  int32
	endpoints int32
	// Per router: its links to other routers (nbLink) and their heads (nbRouter), from nbOff;
	// per endpoint: its up link and the link down into it.
	nbOff, nbLink, nbRouter []int32
	up, down                []int32
}

func (d *dist) Dist(u, t int32) int32 {
	row := int(t/d.p) * d.routers.N
	if u < d.endpoints {
		if u == t {
			return 0
		}
		return 2 + d.routers.D[row+int(u/d.p)]
	}
	return 1 + d.routers.D[row+int(u-d.first)]
}

// Index collects every router's router links and every endpoint's two links.
func (d *dist) Index(g *fabric.Graph) error {
	n := d.routers.N
	d.up, d.down = make([]int32, d.endpoints), make([]int32, d.endpoints)
	d.nbOff = make([]int32, n+1)
	for i, l := range g.Links() {
		switch {
		case l.From < d.endpoints:
			d.up[l.From] = int32(i)
		case l.To < d.endpoints:
			d.down[l.To] = int32(i)
		default:
			d.nbOff[l.From-d.first+1]++
		}
	}
	for r := 0; r < n; r++ {
		d.nbOff[r+1] += d.nbOff[r]
	}
	d.nbLink, d.nbRouter = make([]int32, d.nbOff[n]), make([]int32, d.nbOff[n])
	next := append([]int32(nil), d.nbOff[:n]...)
	for i, l := range g.Links() { // links are sorted by tail, so each router's stay ascending
		if l.From >= d.endpoints && l.To >= d.endpoints {
			r := l.From - d.first
			d.nbLink[next[r]], d.nbRouter[next[r]] = int32(i), l.To-d.first
			next[r]++
		}
	}
	return nil
}

// Next: an endpoint's only link; at the destination's router the link down; otherwise the
// router links whose head is one hop closer in the router table.
func (d *dist) Next(u, t int32, buf []int32) []int32 {
	if u < d.endpoints {
		return append(buf, d.up[u])
	}
	r, rt := u-d.first, t/d.p
	if r == rt {
		return append(buf, d.down[t])
	}
	row := d.routers.D[int(rt)*d.routers.N : int(rt+1)*d.routers.N]
	want := row[r] - 1
	for k := d.nbOff[r]; k < d.nbOff[r+1]; k++ {
		if row[d.nbRouter[k]] == want {
			buf = append(buf, d.nbLink[k])
		}
	}
	return buf
}

func ceil(a, b int) int { return (a + b - 1) / b }

// Tiers are the levels a hierarchical algorithm runs on: a router's endpoints, a group's, all.
func (c *Config) Tiers() []topology.Tier {
	return []topology.Tier{{Name: "router", Span: c.P}, {Name: "group", Span: c.P * c.A}, {Name: "global", Span: c.Endpoints()}}
}

// Spec registers the model.
func Spec() network.Spec {
	return network.Spec{
		Name:      Name,
		Summary:   "Dragonfly: groups of fully connected routers joined by global links (HammingMesh App. A-C), routed flows",
		Source:    "[P] Kim et al. 2008; HammingMesh §III-C, App. A-C, Table II; latencies Table III",
		NewConfig: func() network.Config { return DefaultConfig() },
		New: func(cfg network.Config, env network.Env) (network.Model, error) {
			c := cfg.(*Config)
			g, err := c.Fabric()
			if err != nil {
				return nil, err
			}
			if env.GPUs > c.Endpoints() {
				return nil, errs.Usage("a job of %d GPUs does not fit network dragonfly: it has %d endpoints", env.GPUs, c.Endpoints())
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
