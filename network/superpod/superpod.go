package superpod

import (
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/network/nccl"
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
	Strategy         string  `json:"strategy" help:"collective algorithm: best, one this network offers (ddlest nets), or op=name pairs" source:"[P] RAMP §7.6: ring, 2D-torus and hierarchical ring; the best is chosen per collective"`
	IBGbit           float64 `json:"ib_gbps" help:"InfiniBand rate per GPU (Gb/s; 0: node_tbps/oversubscription): fixes the inter-node bandwidth while node_tbps (NVLink) is swept" source:"[P] SiPAC §VI-A-1: inter-node bandwidth fixed at 8 × 200 Gb/s per DGX-A100 while the NVLink per-CU bandwidth is swept"`
	Routed           bool    `json:"routed" help:"price every collective flow by flow on the fat tree's graph instead of per tier: adds mesh, hring (SiPAC Table II, k = gpus_per_node) and linear, whose traffic shares links the tiers do not see; slower" source:"[D] off: the tiers are exact for the level strategies (the flow pricer's test); SiPAC §VI-A-4 runs mesh and H-Ring on its SuperPod baseline"`
	nccl.Params
	ExtendedA2A bool `json:"extended_alltoall" help:"let all-to-all use Bruck (rhd) and per-level phases (hierarchical, torus2d), not only the ring's pairwise exchange" source:"[D] off: RAMP §7.6 compares ring-based strategies, and Fig. 18's 171× all-to-all speed-up needs the pairwise baseline (Bruck would give 121×)"`
}

// DefaultConfig is the RAMP paper's realistic SuperPod.
func DefaultConfig() *Config {
	return &Config{NodeTbps: 2.4, Oversubscription: 12, GPUsPerNode: 8, NodesPerLeaf: 20, LeavesPerSpine: 20,
		NVSwitchNs: 100, IBSwitchNs: 350, PropNodeNs: 20, PropLeafNs: 10, PropSpineNs: 50, PropCoreNs: 1250,
		IONs: 100, MaxGPUs: 65536, Strategy: "best", Params: nccl.DefaultParams()}
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
	p.NonNegative("ib_gbps", c.IBGbit)
	for _, f := range []struct {
		k string
		v float64
	}{{"nvswitch_ns", c.NVSwitchNs}, {"ib_switch_ns", c.IBSwitchNs}, {"prop_node_ns", c.PropNodeNs}, {"prop_leaf_ns", c.PropLeafNs},
		{"prop_spine_ns", c.PropSpineNs}, {"prop_core_ns", c.PropCoreNs}, {"io_ns", c.IONs}} {
		p.NonNegative(f.k, f.v)
	}
	_, err := offered.Parse(c.Strategy, c.Routed)
	p.Check(err)
	c.Params.Check(&p)
	if c.Routed && c.Params.NCCL != nccl.ArchNames[nccl.Off] {
		p.Addf("nccl=%s prices collectives per tier: it needs routed=false", c.Params.NCCL)
	}
	return p.Err("network superpod")
}

// algorithms is what the fat tree runs (RAMP §7.6 plus recursive halving/doubling and trees).
var (
	algorithms = []collective.Algorithm{collective.Ring, collective.Hierarchical, collective.Torus2D, collective.RHD, collective.Tree}
	ringOnly   = []collective.Algorithm{collective.Ring}
)

// offered is what the fat tree runs on its tiers and flow by flow on its graph (routed=true): the level
// strategies, and those whose traffic shares links tiers do not see: the mesh, SiPAC Table II's
// hierarchical ring (k = a DGX) and the linear all-to-all (SiPAC's baselines, §VI-A-4).
var offered = collective.Routable{Levels: algorithms,
	Graph: append(append([]collective.Algorithm(nil), algorithms...), collective.Mesh, collective.HRingTableII(0), collective.Linear)}

// Algorithms lists the algorithms the network offers (more when routed).
func (c *Config) Algorithms() []collective.Algorithm { return offered.List(c.Routed) }

// routedOffer is Offer on the graph.
func (c *Config) routedOffer(op network.Op) []collective.Algorithm { return c.offer(op, offered.Graph) }

// Offer is what runs op: all-to-all only on the ring's pairwise exchange unless extended_alltoall.
func (c *Config) Offer(op network.Op) []collective.Algorithm { return c.offer(op, algorithms) }

func (c *Config) offer(op network.Op, all []collective.Algorithm) []collective.Algorithm {
	if op == network.AllToAll && !c.ExtendedA2A {
		return ringOnly
	}
	return all
}

// ib is one GPU's InfiniBand rate.
func (c *Config) ib() units.BytesPerSecond {
	if c.IBGbit > 0 {
		return units.Gbps(c.IBGbit)
	}
	return units.Tbps(c.NodeTbps) / units.BytesPerSecond(c.Oversubscription)
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
	ib := c.ib()
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
			choice, _ := offered.Parse(c.Strategy, c.Routed)
			if !c.Routed {
				// The first tier is the DGX's NVSwitch: NCCL's node.
				return topology.NewLibraryModel(Name, c.Tiers(), c.Offer, choice, env, c.MaxGPUs, topology.Library{NCCL: c.Params.Config(), NodeTiers: 1})
			}
			if err := topology.Fits(Name, env.GPUs, c.MaxGPUs); err != nil {
				return nil, err
			}
			g, err := c.Fabric(env.GPUs)
			if err != nil {
				return nil, err
			}
			return fabric.NewModel(g, env, fabric.Options{Name: Name, Routing: fabric.Split, Choice: choice, Offer: c.routedOffer, Tiers: c.Tiers()})
		},
	}
}

// Fabric is the fat tree as a routed graph for a job of gpus ranks: per DGX an NVSwitch (each GPU
// on it at node_tbps), per GPU an InfiniBand port to its leaf (node_tbps/oversubscription), and
// non-blocking leaf → spine → core bundles. NVLink hops weigh 1 and InfiniBand hops 2, so a flow
// inside a DGX takes NVLink. Its per-hop latencies add up to the tiers' (Tiers): the endpoint
// overhead is io_ns, each switch charges its latency once, each cable its propagation. The level
// model is exact on it (the flow pricer's test), so the model keeps using the levels.
func (c *Config) Fabric(gpus int) (*fabric.Graph, error) {
	nv := units.Tbps(c.NodeTbps)
	ib := c.ib()
	ns := units.Ns
	node, leaf := c.GPUsPerNode, c.GPUsPerNode*c.NodesPerLeaf
	spine := leaf * c.LeavesPerSpine
	b := fabric.NewBuilder(gpus, 0)
	nvs := b.Switches(ceil(gpus, node), ns(c.NVSwitchNs))
	leaves := b.Switches(ceil(gpus, leaf), ns(c.IBSwitchNs))
	spines := b.Switches(ceil(gpus, spine), ns(c.IBSwitchNs))
	core := b.Switch(ns(c.IBSwitchNs))
	for g := 0; g < gpus; g++ {
		b.Duplex(int32(g), nvs+int32(g/node), fabric.Spec{Class: "nvlink", Rate: nv, Latency: ns(c.PropNodeNs)})
		b.Duplex(int32(g), leaves+int32(g/leaf), fabric.Spec{Class: "leaf port", Rate: ib, Latency: ns(c.PropLeafNs), Weight: 2})
	}
	for l := 0; l < ceil(gpus, leaf); l++ {
		b.Duplex(leaves+int32(l), spines+int32(l*leaf/spine), fabric.Spec{Class: "spine uplink", Width: leaf, Rate: ib, Latency: ns(c.PropSpineNs), Weight: 2})
	}
	for s := 0; s < ceil(gpus, spine); s++ {
		b.Duplex(spines+int32(s), core, fabric.Spec{Class: "core uplink", Width: spine, Rate: ib, Latency: ns(c.PropCoreNs), Weight: 2})
	}
	d := treeDist{gpus: int32(gpus), node: int32(node), leaf: int32(leaf), spine: int32(spine), nvs: nvs, leaves: leaves, spines: spines, core: core}
	return b.Build(fabric.Endpoint{Overhead: ns(c.IONs)}, func(*fabric.Graph) (fabric.Distancer, error) { return d, nil })
}

// treeDist is Fabric's routing distance in closed form (NVLink hops weigh 1, InfiniBand hops 2),
// equal to the exact search's (TestTreeDist) and free of its per-destination tables and lock:
// down from a leaf, spine or the core to a GPU below it 2, 4, 6; up from a switch to the lowest
// one above both 2 per level; a GPU reaches its DGX's others over the NVSwitch (2) and the rest
// through its leaf (2 + the leaf's distance); an NVSwitch its own GPUs in 1, the rest through one
// of them (1 + 2 + their leaf's distance).
type treeDist struct {
	gpus, node, leaf, spine   int32 // GPUs, and GPUs per DGX, leaf and spine
	nvs, leaves, spines, core int32 // first node of each switch level, the core
}

func (d treeDist) Dist(u, t int32) int32 {
	switch {
	case u == t:
		return 0
	case u < d.gpus:
		if u/d.node == t/d.node {
			return 2
		}
		return 2 + d.fromLeaf(u/d.leaf, t)
	case u < d.leaves: // an NVSwitch
		n := u - d.nvs
		if t/d.node == n {
			return 1
		}
		return 3 + d.fromLeaf(n*d.node/d.leaf, t)
	case u < d.spines:
		return d.fromLeaf(u-d.leaves, t)
	case u < d.core:
		if t/d.spine == u-d.spines {
			return 4
		}
		return 8 // up to the core, down a spine and a leaf
	default:
		return 6
	}
}

// fromLeaf is leaf l's distance to GPU t: down (2), over its spine (6) or over the core (10).
func (d treeDist) fromLeaf(l, t int32) int32 {
	switch {
	case t/d.leaf == l:
		return 2
	case t/d.spine == l*d.leaf/d.spine:
		return 6
	default:
		return 10
	}
}

func ceil(a, b int) int { return (a + b - 1) / b }
