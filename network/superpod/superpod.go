package superpod

import (
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/topology"
)

// Name is the registry key.
const Name = "superpod"

// Config is the fat tree's parameters.
type Config struct {
	NodeTbps         float64 `json:"node_tbps" help:"per-GPU NVLink bandwidth inside a DGX, each direction (Tb/s)" source:"[P] RAMP §7.5: intra-node GPUs unidirectional bandwidth of up to 2.4 Tbps"`
	Oversubscription float64 `json:"oversubscription" help:"intra-node over inter-node bandwidth per GPU: InfiniBand runs at node_tbps/oversubscription (12: 200 Gb/s; 1: bandwidth-matched)" source:"[P] RAMP §7.5: 2.4 Tbps vs 200 Gbps, 'an effective over-subscription ratio of 1:12'; §8.4 uses 1:1"`
	GPUsPerNode      int     `json:"gpus_per_node" help:"GPUs per DGX on one NVSwitch" source:"[X] DGX A100: 8 GPUs (RAMP ref. [54])"`
	NodesPerLeaf     int     `json:"nodes_per_leaf" help:"DGX nodes under one leaf switch (rail-optimised: one leaf per rail)" source:"[X] 40-port QM8790, non-blocking: 20 ports down; DGX SuperPod scalable unit of 20 nodes (RAMP ref. [54])"`
	LeavesPerSpine   int     `json:"leaves_per_spine" help:"leaf groups under one spine group" source:"[X] 40-port spine, 20 ports down"`
	NVSwitchNs       float64 `json:"nvswitch_ns" help:"NVSwitch latency (ns)" source:"[P] RAMP §7.5: 100 ns"`
	IBSwitchNs       float64 `json:"ib_switch_ns" help:"InfiniBand switch latency, QM8790 (ns)" source:"[P] RAMP §7.5: 350 ns"`
	PropNodeNs       float64 `json:"prop_node_ns" help:"propagation GPU–NVSwitch (ns)" source:"[P] RAMP §7.5: intra-node 20 ns"`
	PropLeafNs       float64 `json:"prop_leaf_ns" help:"propagation node–leaf (ns)" source:"[P] RAMP §7.5: 10 ns"`
	PropSpineNs      float64 `json:"prop_spine_ns" help:"propagation leaf–spine (ns)" source:"[P] RAMP §7.5: 50 ns"`
	PropCoreNs       float64 `json:"prop_core_ns" help:"propagation spine–core (ns)" source:"[P] RAMP §7.5: 1.25 µs"`
	IONs             float64 `json:"io_ns" help:"in-out latency per node and step (ns)" source:"[P] RAMP §7.5: 'minimum in-out latency per node (intra-GPU) is considered to be 100ns'"`
	MaxGPUs          int     `json:"max_gpus" help:"largest job the fat tree is built for" source:"[P] RAMP §7.5: scaled to RAMP's 65,536 nodes with 4 tiers"`
	Strategy         string  `json:"strategy" help:"collective strategy: best, ring, hierarchical, torus2d, rhd, tree" source:"[P] RAMP §7.6: ring, 2D-torus and hierarchical ring; the best is chosen per collective"`
	ExtendedA2A      bool    `json:"extended_alltoall" help:"let all-to-all use Bruck (rhd) and per-level phases (hierarchical, torus2d), not only the ring's pairwise exchange" source:"[D] off: RAMP §7.6 compares ring-based strategies, and Fig. 18's 171× all-to-all speed-up needs the pairwise baseline (Bruck would give 121×)"`
}

// DefaultConfig is the RAMP paper's realistic SuperPod.
func DefaultConfig() *Config {
	return &Config{NodeTbps: 2.4, Oversubscription: 12, GPUsPerNode: 8, NodesPerLeaf: 20, LeavesPerSpine: 20,
		NVSwitchNs: 100, IBSwitchNs: 350, PropNodeNs: 20, PropLeafNs: 10, PropSpineNs: 50, PropCoreNs: 1250,
		IONs: 100, MaxGPUs: 65536, Strategy: "best"}
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p params.Problems
	p.Positive("node_tbps", c.NodeTbps)
	if !(c.Oversubscription >= 1) {
		p.Addf("oversubscription %g must be ≥ 1 (1 = bandwidth-matched)", c.Oversubscription)
	}
	p.AtLeast("gpus_per_node", c.GPUsPerNode, 1)
	p.AtLeast("nodes_per_leaf", c.NodesPerLeaf, 1)
	p.AtLeast("leaves_per_spine", c.LeavesPerSpine, 1)
	p.AtLeast("max_gpus", c.MaxGPUs, 1)
	for _, f := range []struct {
		k string
		v float64
	}{{"nvswitch_ns", c.NVSwitchNs}, {"ib_switch_ns", c.IBSwitchNs}, {"prop_node_ns", c.PropNodeNs}, {"prop_leaf_ns", c.PropLeafNs},
		{"prop_spine_ns", c.PropSpineNs}, {"prop_core_ns", c.PropCoreNs}, {"io_ns", c.IONs}} {
		p.NonNegative(f.k, f.v)
	}
	_, err := collective.ParseStrategy(c.Strategy)
	p.Check(err)
	return p.Err("network superpod")
}

// Strategies is what the fat tree runs (RAMP §7.6 plus recursive halving/doubling and trees).
func (c *Config) Strategies() collective.Strategies {
	return collective.Strategies{
		Allowed: []collective.Strategy{collective.StrategyRing, collective.StrategyHierarchical, collective.StrategyTorus2D,
			collective.StrategyRHD, collective.StrategyTree},
		Skip: func(st collective.Strategy, op network.Op) bool {
			return op == network.AllToAll && !c.ExtendedA2A && st != collective.StrategyRing
		},
	}
}

// Tiers are the four levels: NVSwitch, leaf, spine, core. One-way latencies (reference/ramp.md
// §4.1, plus the in-out latency):
//
//	NVLink  io + 2·prop_node + nvswitch                                  (240 ns)
//	leaf    io + 2·prop_leaf + ib_switch                                 (470 ns)
//	spine   io + 2·prop_leaf + 2·prop_spine + 3·ib_switch                (1.27 µs)
//	core    io + 2·prop_leaf + 2·prop_spine + 2·prop_core + 5·ib_switch  (4.47 µs)
func (c *Config) Tiers() []topology.Tier {
	nv := units.Tbps(c.NodeTbps)
	ib := nv / units.BytesPerSecond(c.Oversubscription)
	ns := units.Ns
	node := c.GPUsPerNode
	leaf := node * c.NodesPerLeaf
	spine := leaf * c.LeavesPerSpine
	return []topology.Tier{
		{Name: "nvlink", Span: node, Link: collective.Link{Latency: ns(c.IONs + 2*c.PropNodeNs + c.NVSwitchNs), Bandwidth: nv}},
		{Name: "leaf", Span: leaf, Link: collective.Link{Latency: ns(c.IONs + 2*c.PropLeafNs + c.IBSwitchNs), Bandwidth: ib}},
		{Name: "spine", Span: spine, Link: collective.Link{Latency: ns(c.IONs + 2*c.PropLeafNs + 2*c.PropSpineNs + 3*c.IBSwitchNs), Bandwidth: ib}},
		{Name: "core", Span: max(spine, c.MaxGPUs), Link: collective.Link{Latency: ns(c.IONs + 2*c.PropLeafNs + 2*c.PropSpineNs + 2*c.PropCoreNs + 5*c.IBSwitchNs), Bandwidth: ib}},
	}
}

// Spec registers the model.
func Spec() network.Spec {
	return network.Spec{
		Name:      Name,
		Summary:   "DGX-A100 SuperPod-like fat tree: 8 GPUs per node on NVSwitch, InfiniBand leaf/spine/core tiers",
		Source:    "[P] RAMP §7.5 (after NVIDIA DGX SuperPod, ref. [54]); strategies §7.6",
		NewConfig: func() network.Config { return DefaultConfig() },
		New: func(cfg network.Config, env network.Env) (network.Model, error) {
			c := cfg.(*Config)
			if err := c.Validate(); err != nil {
				return nil, err
			}
			st, _ := collective.ParseStrategy(c.Strategy)
			return topology.NewModel(Name, c.Tiers(), c.Strategies(), st, env, c.MaxGPUs)
		},
	}
}
