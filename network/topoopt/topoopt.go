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
}

// DefaultConfig is the paper's TopoOpt.
func DefaultConfig() *Config {
	return &Config{NodeTbps: 1.6, LatencyNs: 260, IONs: 100, MaxGPUs: 65536, Strategy: "best"}
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
			tiers := []topology.Tier{{Name: "circuit ring", Span: c.MaxGPUs, Ring: true,
				Link: collective.Link{Latency: units.Ns(c.IONs + c.LatencyNs), Bandwidth: units.Tbps(c.NodeTbps)}}}
			m, err := topology.NewModel(Name, tiers, strategies, st, env, c.MaxGPUs)
			if err != nil {
				return nil, err
			}
			return perGroupRing{m}, nil
		},
	}
}

// perGroupRing prices every group on its own circuit ring: TopoOpt sets up the circuits for the
// job, so a group's members are ring neighbours whatever their stride in the rank order (RAMP
// §7.4: "minimising the number of logical circuits needed such that the effective degree is one").
type perGroupRing struct{ *topology.Model }

func (m perGroupRing) Price(c network.Collective) (network.Cost, error) {
	if err := network.CheckGroup(c, m.Env); err != nil {
		return network.Cost{}, err
	}
	c.Group.Stride = 1
	return m.Model.Price(c)
}
