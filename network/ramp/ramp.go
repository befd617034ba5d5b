package ramp

import (
	"fmt"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Name is the registry key.
const Name = "ramp"

// Config is RAMP's parameters (RAMP §3, §4, §7.5).
type Config struct {
	X          int     `json:"x" help:"communication groups = transceiver groups per node = splitter fan-out" source:"[P] RAMP §3, §4.2: x = 32 at maximum scale"`
	J          int     `json:"racks" help:"racks per communication group (J ≤ x)" source:"[P] RAMP §3, §4.2: J = x = 32"`
	Lambda     int     `json:"lambda" help:"nodes per rack = wavelength channels (Λ)" source:"[P] RAMP §3, §4.2: Λ = 64"`
	B          int     `json:"b" help:"transceivers per transceiver group" source:"[P] RAMP §4.2: b = 1"`
	TrxGbps    float64 `json:"trx_gbps" help:"line rate per transceiver B (Gb/s)" source:"[P] RAMP §4.1–4.2: 400 Gbps (SOH modulators, ref. [77])"`
	NodeTbps   float64 `json:"node_tbps" help:"node capacity x·b·B (Tb/s); when > 0 it sets B = node/(x·b) (the paper's 2.4 Tb/s algorithmic comparison)" source:"[P] RAMP §7.5: 12.8 Tbps for the system analysis, 2.4 Tbps for the algorithmic comparison"`
	Subnet     string  `json:"subnet" help:"subnet type: bs (broadcast and select), rb (route and broadcast) or rs (route and switch)" source:"[P] RAMP §3.1; the scalability analysis uses B&S, the lossiest"`
	PropNs     float64 `json:"prop_ns" help:"propagation between any two nodes (ns)" source:"[P] RAMP §7.5: 1.3 µs"`
	IONs       float64 `json:"io_ns" help:"in-out latency per node and step (ns)" source:"[P] RAMP §7.5: 100 ns"`
	SlotNs     float64 `json:"slot_ns" help:"time slot (ns)" source:"[P] RAMP §3.1: minimum data-transfer slot of 20 ns"`
	ReconfNs   float64 `json:"reconfig_ns" help:"circuit reconfiguration time (ns); hidden behind the in-out latency when shorter" source:"[P] RAMP §3.1: < 1 ns (laser and SOA), at most 5% of the 20 ns slot; §1.4: no overhead when smaller than the node I/O time"`
	TrxRule    string  `json:"trx_rule" help:"transceiver groups per peer: corrected, t(d) = max(1, ⌊x/(d−1)⌋), or paper (Eq. 3 as printed)" source:"[D] reference/ramp.md §2.7: Eq. 3 as printed is non-monotone; the corrected rule uses all x groups"`
	TxDbm      float64 `json:"tx_dbm" help:"transmitter launch power (dBm)" source:"[P] RAMP Fig. 6: 8 dBm"`
	SOAGain    float64 `json:"soa_gain_db" help:"SOA gain (dB)" source:"[D] RAMP Fig. 6: −7 → 15 dBm and −18 → 4 dBm, 22 dB"`
	AWGRLoss   float64 `json:"awgr_loss_db" help:"AWGR insertion loss for rb/rs subnets (dB)" source:"[X] typical AWGR insertion loss; the paper gives none"`
	MinPath    float64 `json:"min_path_dbm" help:"lowest power allowed anywhere on the path (dBm)" source:"[P] RAMP §4.2: above −20 dBm for good SNR"`
	MinRx      float64 `json:"min_rx_dbm" help:"lowest power at the receiver (dBm)" source:"[P] RAMP §4.2: above −15 dBm for direct detection"`
	Contention string  `json:"contention" help:"step-3 contention: paper (every step in one round, as RAMP §5 states) or exact (the corrected step-3 subgroups share subnets when gcd(1+⌊λ/x⌋, x)·J > x and need that many rounds)" source:"[D] engine.go CheckSchedule: at x = J = 32, Λ = 64 step 3 reuses each (subnet, wavelength) twice"`
	Strategy   string  `json:"strategy" help:"collective algorithm: best or ramp (RAMP-x); ring or rhd also run on the all-to-all fabric; or op=name pairs" source:"[P] RAMP §5–6 (RAMP-x); §6.3.1: ring and recursive halving/doubling are possible but slower"`
}

// DefaultConfig is RAMP at maximum scale: 65,536 nodes at 12.8 Tb/s.
func DefaultConfig() *Config {
	return &Config{X: 32, J: 32, Lambda: 64, B: 1, TrxGbps: 400, Subnet: "bs", PropNs: 1300, IONs: 100, SlotNs: 20,
		ReconfNs: 1, Contention: "paper", TrxRule: "corrected", TxDbm: 8, SOAGain: 22, AWGRLoss: 5, MinPath: -20, MinRx: -15, Strategy: "best"}
}

var (
	subnets     = []string{"bs", "rb", "rs"}
	contentions = []string{"paper", "exact"}
	trxRules    = []string{"corrected", "paper"}
)

// Nodes is N = Λ·J·x (RAMP §3: Λx² with J = x).
func (c *Config) Nodes() int { return c.Lambda * c.J * c.X }

// TrxRate is the line rate of one transceiver.
func (c *Config) TrxRate() units.BytesPerSecond {
	if c.NodeTbps > 0 {
		return units.Tbps(c.NodeTbps) / units.BytesPerSecond(c.X*c.B)
	}
	return units.Gbps(c.TrxGbps)
}

// NodeCapacity is x·b·B (12.8 Tb/s at maximum scale).
func (c *Config) NodeCapacity() units.BytesPerSecond {
	return c.TrxRate() * units.BytesPerSecond(c.X*c.B)
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p params.Problems
	p.AtLeast("x", c.X, 1)
	p.AtLeast("racks", c.J, 1)
	p.AtLeast("lambda", c.Lambda, 1)
	p.AtLeast("b", c.B, 1)
	if c.X >= 1 && c.J > c.X {
		p.Addf("racks %d must be ≤ x %d (RAMP §3: at most J = x racks per communication group)", c.J, c.X)
	}
	if c.X >= 1 && c.Lambda >= 1 && c.Lambda%c.X != 0 {
		p.Addf("lambda %d must be a multiple of x %d (device groups of x nodes, RAMP §3)", c.Lambda, c.X)
	}
	if !(c.TrxGbps > 0) && !(c.NodeTbps > 0) {
		p.Addf("trx_gbps %g must be > 0", c.TrxGbps)
	}
	p.NonNegative("node_tbps", c.NodeTbps)
	p.OneOf("subnet", c.Subnet, subnets)
	p.OneOf("contention", c.Contention, contentions)
	p.OneOf("trx_rule", c.TrxRule, trxRules)
	p.NonNegative("prop_ns", c.PropNs)
	p.NonNegative("io_ns", c.IONs)
	p.Positive("slot_ns", c.SlotNs)
	p.NonNegative("reconfig_ns", c.ReconfNs)
	_, err := collective.ParseFor(c.Strategy, c.Algorithms())
	p.Check(err)
	return p.Err("network ramp")
}

// Algorithms lists what RAMP runs: RAMP-x, and a full-capacity ring or recursive halving/doubling
// over the all-to-all fabric (§6.3.1).
func (c *Config) Algorithms() []collective.Algorithm {
	return []collective.Algorithm{Algorithm{cfg: c}, collective.Ring, collective.RHD}
}

// PowerBudget follows the most constrained optical path (RAMP §4.2, Fig. 6): transmitter → 1:x
// splitter → SOA → subnet → SOA → x:1 combiner → receiver. The lowest point is after the subnet:
//
//	P_min = P_tx − 10·log10(x) + G_soa − L_subnet ≥ min_path_dbm     (−20 dBm)
//	P_rx  = P_min + G_soa − 10·log10(x)          ≥ min_rx_dbm       (−15 dBm)
//
// with L_subnet = 10·log10(J·Λ) for a broadcast-and-select star coupler and AWGR loss +
// 10·log10(J) for route-and-broadcast/route-and-switch (reference/ramp.md §1.5). At Λ = 64,
// x = J = 32 (B&S) this gives −18.1 and −11.2 dBm, Fig. 6's −18 and −11.
func (c *Config) PowerBudget() (pMin, pRx float64) {
	loss := units.Decibels(float64(c.J * c.Lambda))
	if c.Subnet != "bs" {
		loss = c.AWGRLoss + units.Decibels(float64(c.J))
	}
	split := units.Decibels(float64(c.X))
	pMin = c.TxDbm - split + c.SOAGain - loss
	return pMin, pMin + c.SOAGain - split
}

// CheckPowerBudget returns an infeasible error when the optical power budget fails.
func (c *Config) CheckPowerBudget() error {
	pMin, pRx := c.PowerBudget()
	if pMin >= c.MinPath && pRx >= c.MinRx {
		return nil
	}
	return errs.Infeasible(fmt.Sprintf("lowest path power %.1f dBm (bound %g), receiver power %.1f dBm (bound %g)", pMin, c.MinPath, pRx, c.MinRx),
		"RAMP with x=%d, racks=%d, lambda=%d, subnet %s exceeds its optical power budget (RAMP §4.2)", c.X, c.J, c.Lambda, c.Subnet)
}

// Spec registers the model.
func Spec() network.Spec {
	return network.Spec{
		Name:      Name,
		Summary:   "RAMP flat nanosecond optical network (x communication groups × J racks × Λ nodes) with RAMP-x collectives",
		Source:    "[P] Ottino, Benjamin, Zervas, RAMP §3–6 (architecture, Tables 5–8, Eqs. 1–5), §7.5",
		NewConfig: func() network.Config { return DefaultConfig() },
		New: func(cfg network.Config, env network.Env) (network.Model, error) {
			c := cfg.(*Config)
			if err := c.Validate(); err != nil {
				return nil, err
			}
			if err := c.CheckPowerBudget(); err != nil {
				return nil, err
			}
			if env.GPUs > c.Nodes() {
				return nil, errs.Usage("a job of %d GPUs does not fit network ramp: its maximum is Λ·J·x = %d", env.GPUs, c.Nodes())
			}
			m := &model{cfg: *c, env: env}
			m.algorithms = m.cfg.Algorithms()
			m.choice, _ = collective.ParseFor(c.Strategy, m.algorithms)
			// The configuration and the job's size determine every price (the algorithms and
			// the choice derive from the configuration).
			network.Share(&m.memo, struct {
				cfg  Config
				gpus int
			}{m.cfg, env.GPUs}, env)
			return m, nil
		},
	}
}
