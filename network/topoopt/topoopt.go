package topoopt

import (
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/topology"
)

// Name is the registry key.
const Name = "topoopt"

// Config is TopoOpt's parameters.
type Config struct {
	NodeTbps  float64 `json:"node_tbps" help:"node bandwidth on the established circuit ring (Tb/s)" source:"[P] RAMP §7.5: 1.6 Tbps per node, the maximum considered by TopoOpt"`
	LatencyNs float64 `json:"latency_ns" help:"latency between circuit neighbours (ns)" source:"[P] RAMP §7.5: maximum latency between nodes 260 ns when the circuit is established"`
	IONs      float64 `json:"io_ns" help:"in-out latency per node and step (ns)" source:"[P] RAMP §7.5: 100 ns"`
	MaxGPUs   int     `json:"max_gpus" help:"largest job" source:"[P] RAMP §7.5: scaled to 65,536 nodes (beyond TopoOpt's 384)"`
	Strategy  string  `json:"strategy" help:"collective algorithm: best or ring" source:"[P] RAMP §7.6: only single-ring strategies; >10 ms reconfiguration rules out the others"`
	AllToAll  string  `json:"alltoall" help:"all-to-all: direct (a circuit to each partner in turn, reconfiguration not counted) or relay (around the fixed ring)" source:"[AMB] RAMP §7.6 allows TopoOpt single-ring strategies only (relay; reproduces Fig. 18's all-to-all speed-up); §7.5 discards circuit reconfiguration (direct; reproduces Fig. 17's DLRM overheads)"`
}

// DefaultConfig is the paper's TopoOpt.
func DefaultConfig() *Config {
	return &Config{NodeTbps: 1.6, LatencyNs: 260, IONs: 100, MaxGPUs: 65536, Strategy: "best", AllToAll: "relay"}
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p params.Problems
	p.Positive("node_tbps", c.NodeTbps)
	p.NonNegative("latency_ns", c.LatencyNs)
	p.NonNegative("io_ns", c.IONs)
	p.AtLeast("max_gpus", c.MaxGPUs, 1)
	_, err := collective.ParseFor(c.Strategy, algorithms)
	p.Check(err)
	p.OneOf("alltoall", c.AllToAll, []string{"direct", "relay"})
	return p.Err("network topoopt")
}

var algorithms = []collective.Algorithm{collective.Ring}

// Algorithms lists the algorithms the network offers.
func (c *Config) Algorithms() []collective.Algorithm { return algorithms }

func offer(network.Op) []collective.Algorithm { return algorithms }

// Spec registers the model.
func Spec() network.Spec {
	return network.Spec{
		Name:      Name,
		Summary:   "TopoOpt optical circuit ring with pre-established circuits; single-ring strategies only",
		Source:    "[P] RAMP §7.5–7.6 (TopoOpt, Wang et al. 2023)",
		NewConfig: func() network.Config { return DefaultConfig() },
		New: func(cfg network.Config, env network.Env) (network.Model, error) {
			c := cfg.(*Config)
			if err := c.Validate(); err != nil {
				return nil, err
			}
			choice, _ := collective.ParseFor(c.Strategy, algorithms)
			link := collective.Link{Name: "circuit", Latency: units.Ns(c.IONs + c.LatencyNs), Bandwidth: units.Tbps(c.NodeTbps)}
			// Every group gets its own circuit ring: TopoOpt sets up the circuits for the job, so a
			// group's members are ring neighbours whatever their stride in the rank order (RAMP
			// §7.4: "minimising the number of logical circuits needed such that the effective
			// degree is one"). All-to-alls relay around it, or (direct) get a circuit per partner.
			ring, err := topology.NewModel(Name, []topology.Tier{{Name: "circuit ring", Span: c.MaxGPUs, Ring: true, Circuit: true, Link: link}},
				offer, choice, env, c.MaxGPUs)
			if err != nil || c.AllToAll != "direct" {
				return ring, err
			}
			partner, err := topology.NewModel(Name, []topology.Tier{{Name: "circuit to partner", Span: c.MaxGPUs, Link: link}},
				offer, choice, env, c.MaxGPUs)
			return direct{ring: ring, a2a: partner}, err
		},
	}
}

// direct prices all-to-alls with a circuit set up to each partner in turn and everything else on
// the group's circuit ring.
type direct struct{ ring, a2a *topology.Model }

func (m direct) Name() string { return Name }

func (m direct) Price(c network.Collective) (network.Cost, error) {
	if c.Op == network.AllToAll {
		return m.a2a.Price(c)
	}
	return m.ring.Price(c)
}
