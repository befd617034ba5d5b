package oddl

import (
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
