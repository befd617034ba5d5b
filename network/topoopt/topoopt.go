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
	Strategy  string  `json:"strategy" help:"collective strategy: best or ring" source:"[P] RAMP §7.6: only single-ring strategies; >10 ms reconfiguration rules out the others"`
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
	_, err := collective.ParseStrategy(c.Strategy)
	p.Check(err)
	p.OneOf("alltoall", c.AllToAll, []string{"direct", "relay"})
	return p.Err("network topoopt")
}

var strategies = collective.Strategies{Allowed: []collective.Strategy{collective.StrategyRing}}

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
			st, _ := collective.ParseStrategy(c.Strategy)
			link := collective.Link{Latency: units.Ns(c.IONs + c.LatencyNs), Bandwidth: units.Tbps(c.NodeTbps)}
			ring, err := topology.NewModel(Name, []topology.Tier{{Name: "circuit ring", Span: c.MaxGPUs, Ring: true, Link: link}},
				strategies, st, env, c.MaxGPUs)
			if err != nil {
				return nil, err
			}
			m := perGroupRing{ring: ring, a2a: ring}
			if c.AllToAll == "direct" {
				// Each pairwise-exchange step sets up a circuit to its partner.
				m.a2a, err = topology.NewModel(Name, []topology.Tier{{Name: "circuit to partner", Span: c.MaxGPUs, Link: link}},
					strategies, st, env, c.MaxGPUs)
			}
			return m, err
		},
	}
}

// perGroupRing prices every group on its own circuit ring: TopoOpt sets up the circuits for the
// job, so a group's members are ring neighbours whatever their stride in the rank order (RAMP
// §7.4: "minimising the number of logical circuits needed such that the effective degree is one").
// All-to-alls use a2a: the ring itself (relay) or a circuit per partner (direct).
type perGroupRing struct{ ring, a2a *topology.Model }

func (m perGroupRing) Name() string { return Name }

func (m perGroupRing) Price(c network.Collective) (network.Cost, error) {
	if err := network.CheckGroup(c, m.ring.Env); err != nil {
		return network.Cost{}, err
	}
	c.Group.Stride = 1
	if c.Op == network.AllToAll {
		return m.a2a.Price(c)
	}
	return m.ring.Price(c)
}
