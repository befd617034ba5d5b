package oddl

import (
	"fmt"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/alphabeta"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/network/fattree"
	"github.com/ddlest/ddlest/network/wdmring"
)

// FatTreeConfig is the paper's electrical baseline for n nodes (ODDL §5A, Table 2): a 1:1 fat
// tree of ft_radix switches, two levels up to ft_two_level_max nodes and three above, links at
// the NIC rate, switch_us per switch, no cable or endpoint latency (the paper gives none), every
// flow on one ECMP-hashed path.
func (c *Config) FatTreeConfig(n int) *fattree.Config {
	ft := fattree.DefaultConfig()
	ft.Radix, ft.Endpoints, ft.Taper = c.FTRadix, n, 1
	ft.Levels = 3
	if n <= c.FTTwoMax {
		ft.Levels = 2
	}
	ft.LinkGbit = c.NICGbit
	ft.LinkNs, ft.SwitchNs, ft.OverheadNs, ft.GapNs = 0, 1000*c.SwitchUs, 0, 0
	ft.Routing, ft.Seed, ft.Strategy = "hash", c.Seed, c.Strategy
	return ft
}

func (c *Config) fatTree(n int, env network.Env) (network.Model, error) {
	return fattree.Spec().New(c.FatTreeConfig(n), env)
}

// SiPRingConfig is SiP-Ring (SiP-ML, Khani et al. SIGCOMM'21; ODDL §5A) on the WDM ring of
// network/wdmring: ring all-reduce only, one wavelength per neighbour at the NIC rate, and
// ring_alpha_us before every step (the paper gives no SiP-Ring parameters; fitted on V2).
func (c *Config) SiPRingConfig(n int) *wdmring.Config {
	r := wdmring.DefaultConfig()
	r.Nodes, r.WavelengthGbit, r.ReconfigUs, r.OEOFs = n, c.NICGbit, c.RingUs, 0
	r.Strategy = "ring"
	return r
}

func (c *Config) sipRing(n int, env network.Env) (network.Model, error) {
	return wdmring.Spec().New(c.SiPRingConfig(n), env)
}

// oneSwitch is the testbed's one-tier electrical network (ODDL §5B: "connects all nodes with one
// 100 GE switch, representing an ideal network condition"): every node on one non-blocking
// crossbar by a link at the NIC rate, switch_us per step.
func (c *Config) oneSwitch(n int, env network.Env) (network.Model, error) {
	ab := alphabeta.Config{BandwidthGbit: c.NICGbit, LatencyNs: 1000 * c.SwitchUs}
	g, err := ab.Fabric(n)
	if err != nil {
		return nil, err
	}
	choice, _ := collective.ParseFor(c.Strategy, electrical)
	return fabric.NewModel(g, env, fabric.Options{Name: Name, Choice: choice,
		Offer: func(network.Op) []collective.Algorithm { return electrical }})
}

// fatTreeInventory is the fat-tree baseline's equipment (FatTreeConfig's tree): its switches and
// links, counted as network/fattree's Structure counts them (a k-ary three-level tree of
// k = 16 has 5k²/4 = 320 switches for k³/4 = 1,024 hosts).
func (c *Config) fatTreeInventory(n int) (network.Inventory, error) {
	ft := c.FatTreeConfig(n)
	st, err := ft.Structure()
	if err != nil {
		return network.Inventory{}, err
	}
	rate := units.Gbps(c.NICGbit).Bits()
	return network.Inventory{Network: Name + " (" + c.Fabric + ")", Nodes: n,
		Items: []network.InventoryItem{
			{Name: "electrical switch", Count: st.Bill.Switches, Detail: fmt.Sprintf("%d ports, %g µs per hop", ft.Radix, c.SwitchUs),
				Source: "[P] ODDL §5A, Table 2: radix 16, 1:1, 1 µs switch process delay; [D] leaves + aggregation (+ core) switches of the tree"},
			{Name: "node link", Count: st.Bill.DAC, Detail: rate, Source: "[D] one link per node at the NIC rate"},
			{Name: "switch-to-switch link", Count: st.Bill.AoC, Detail: rate, Source: "[D] 1:1: as many links up as down at every level"},
		},
		Facts: []network.Fact{
			{Name: "levels", Value: float64(ft.Depth()), Source: "[P] ODDL §5A: 2 layers for 64 nodes or fewer, 3 above"},
			{Name: "diameter", Value: float64(st.Diameter), Unit: "links", Source: "[D] up to the lowest common level and down"},
		}}, nil
}

// sipRingInventory is SiP-Ring's ring (SiPRingConfig): a node per GPU, a wavelength to each
// neighbour at the NIC rate.
func (c *Config) sipRingInventory(n int) network.Inventory {
	return network.Inventory{Network: Name + " (" + c.Fabric + ")", Nodes: n,
		Items: []network.InventoryItem{
			{Name: "SiP ring node", Count: n, Detail: units.Gbps(c.NICGbit).Bits() + " to each neighbour",
				Source: "[P] ODDL §5A, Fig. 9(b): SiP-Ring (SiP-ML) configured as a ring for ring all-reduce; [D] one wavelength per neighbour at the NIC rate (the paper gives no SiP-Ring parameters)"},
		},
		Facts: []network.Fact{
			{Name: "ring all-reduce steps", Value: float64(2 * (n - 1)), Source: "[P] ODDL §3: ring all-reduce 'requires 2(N−1) steps'"},
			{Name: "latency per step", Value: c.RingUs, Unit: "µs", Source: "[D] ring_alpha_us, fitted once on V2 (doc.go)"},
		}}
}

// switchInventory is the testbed's one-tier network: one switch, a port per node.
func (c *Config) switchInventory(n int) network.Inventory {
	return network.Inventory{Network: Name + " (" + c.Fabric + ")", Nodes: n,
		Items: []network.InventoryItem{
			{Name: "electrical switch", Count: 1, Detail: fmt.Sprintf("%d ports at %s", n, units.Gbps(c.NICGbit).Bits()),
				Source: "[P] ODDL §5B: one 100 GE switch connects all nodes (RoCE)"},
			{Name: "node link", Count: n, Detail: units.Gbps(c.NICGbit).Bits(), Source: "[P] ODDL §5B: 100 Gbps RDMA"},
		}}
}
