package torus

import (
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/network/topology"
)

// Name is the registry key.
const Name = "torus"

// Config is the 2D torus's parameters.
type Config struct {
	DimX     int     `json:"dim_x" help:"nodes along the first dimension" source:"[P] RAMP §7.5: 128 nodes per dimension"`
	DimY     int     `json:"dim_y" help:"nodes along the second dimension" source:"[P] RAMP §7.5: 512 nodes per dimension"`
	NodeTbps float64 `json:"node_tbps" help:"total unidirectional node capacity (Tb/s), split over the ports" source:"[P] RAMP §7.5: total node capacity of 2.4 Tbps"`
	Ports    int     `json:"ports" help:"ports sharing the node capacity (±x, ±y)" source:"[X] a 2D torus node has 4 neighbours; the paper does not give the split (reference/ramp.md §4.2)"`
	PropXNs  float64 `json:"prop_x_ns" help:"propagation of a link along x (ns)" source:"[P] RAMP §7.5: worst-case propagation 156 ns"`
	PropYNs  float64 `json:"prop_y_ns" help:"propagation of a link along y (ns)" source:"[P] RAMP §7.5: worst-case propagation 520 ns"`
	IONs     float64 `json:"io_ns" help:"in-out latency per node and step (ns)" source:"[P] RAMP §7.5: 100 ns"`
	Strategy string  `json:"strategy" help:"collective algorithm: best, one this network offers (ddlest nets), or op=name pairs" source:"[P] RAMP §7.6: ring and 2D-torus (Mikami et al. 2018)"`
	Routed   bool    `json:"routed" help:"price every collective flow by flow on the torus graph instead of per dimension: adds mesh, hring (SiPAC Table II, k = dim_x) and linear, whose traffic shares links the dimensions do not see; slower" source:"[D] off: the per-dimension levels are exact for ring, biring and torus2d; SiPAC §VI-A-4 runs mesh and H-Ring on its torus baseline"`
}

// DefaultConfig is the paper's 128 × 512 torus.
func DefaultConfig() *Config {
	return &Config{DimX: 128, DimY: 512, NodeTbps: 2.4, Ports: 4, PropXNs: 156, PropYNs: 520, IONs: 100, Strategy: "best"}
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p params.Problems
	p.AtLeast("dim_x", c.DimX, 1)
	p.AtLeast("dim_y", c.DimY, 1)
	p.Positive("node_tbps", c.NodeTbps)
	p.AtLeast("ports", c.Ports, 1)
	p.NonNegative("prop_x_ns", c.PropXNs)
	p.NonNegative("prop_y_ns", c.PropYNs)
	p.NonNegative("io_ns", c.IONs)
	_, err := offered.Parse(c.Strategy, c.Routed)
	p.Check(err)
	return p.Err("network torus")
}

// port is one port's rate: node_tbps over the ports.
func (c *Config) port() units.BytesPerSecond {
	return units.Tbps(c.NodeTbps) / units.BytesPerSecond(c.Ports)
}

// Tiers: x then y, each a physical ring with ± ports at node_tbps/ports per port.
func (c *Config) Tiers() []topology.Tier {
	port := c.port()
	return []topology.Tier{
		{Name: "x", Span: c.DimX, Ring: true, Duplex: true, Link: collective.Link{Latency: units.Ns(c.IONs + c.PropXNs), Bandwidth: port}},
		{Name: "y", Span: c.DimX * c.DimY, Ring: true, Duplex: true, Link: collective.Link{Latency: units.Ns(c.IONs + c.PropYNs), Bandwidth: port}},
	}
}

var algorithms = []collective.Algorithm{collective.Ring, collective.BiRing, collective.Torus2D}

// Algorithms lists the algorithms the network offers (more when routed).
func (c *Config) Algorithms() []collective.Algorithm { return offered.List(c.Routed) }

func offer(network.Op) []collective.Algorithm { return algorithms }

// Spec registers the model.
func Spec() network.Spec {
	return network.Spec{
		Name:      Name,
		Summary:   "2D torus (128 × 512 by default), node capacity split over ±x/±y ports; ring, bidirectional ring and 2D-torus strategies",
		Source:    "[P] RAMP §7.5; 2D-torus all-reduce after Mikami et al. 2018",
		NewConfig: func() network.Config { return DefaultConfig() },
		New: func(cfg network.Config, env network.Env) (network.Model, error) {
			c := cfg.(*Config)
			if err := c.Validate(); err != nil {
				return nil, err
			}
			choice, _ := offered.Parse(c.Strategy, c.Routed)
			if !c.Routed {
				return topology.NewModel(Name, c.Tiers(), offer, choice, env, c.DimX*c.DimY)
			}
			g, err := c.Fabric(env.GPUs)
			if err != nil {
				return nil, err
			}
			return fabric.NewModel(g, env, fabric.Options{Name: Name, Routing: fabric.Split, Choice: choice, Offer: routedOffer, Tiers: c.Tiers()})
		},
	}
}
