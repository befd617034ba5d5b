package wdmring

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Name is the registry key.
const Name = "wdmring"

// Config is the WDM ring's parameters (WRHT §3.2, Table 2).
type Config struct {
	Nodes          int     `json:"nodes" help:"nodes on the ring (0: the job's GPUs)" source:"[P] WRHT §5: rings of 128 to 4,096 nodes"`
	Wavelengths    int     `json:"wavelengths" help:"wavelengths per fibre and direction (w)" source:"[P] WRHT §3.2, Table 2: 64 wavelengths per interface (TeraRack, ref. [9])"`
	WavelengthGbit float64 `json:"wavelength_gbit_per_s" help:"rate of one wavelength B (Gb/s)" source:"[P] WRHT §3.2, Table 2: 40 Gbps per wavelength"`
	ReconfigUs     float64 `json:"reconfig_us" help:"microring reconfiguration before every step a (µs)" source:"[P] WRHT Table 2: MRRs reconfiguration delay 25 µs; §4.2: reconfigured before each step"`
	OEOFs          float64 `json:"oeo_fs_per_packet" help:"O/E/O conversion per packet, once per step at the receiver (fs)" source:"[P] WRHT Table 2: 497 fs/packet; [D] once per step (circuit switched, no O/E/O at the nodes passed; reference/wrht.md A10)"`
	PacketBytes    int     `json:"packet_bytes" help:"packet size (bytes)" source:"[P] WRHT Table 2: 72 bytes"`
	Group          int     `json:"group" help:"WRHT group size m (0: 2w+1, the step-optimal largest; capped by max_group)" source:"[P] WRHT Lemma 1: m ≤ 2w+1; Table 1: m = 129 for w = 64"`
	MaxGroup       int     `json:"max_group" help:"largest group m′ the insertion loss and crosstalk allow (0: no limit)" source:"[P] WRHT §4.4, Eqs. 7–13 (no device values given; Fig. 4 assumes m′ ∈ {17, 33, 65, 129})"`
	LaserDbm       float64 `json:"laser_dbm" help:"laser power P_laser of the insertion-loss bound, Eq. 9 (dBm; used when pass_loss_db > 0)" source:"[P] WRHT §4.4 Eq. 9 (no value given; reference/wrht.md A5)"`
	ModulatorDb    float64 `json:"modulator_loss_db" help:"modulator loss P_m in the transmitter, Eq. 8 (dB)" source:"[P] WRHT §4.4 Eq. 8 (no value given)"`
	PassLossDb     float64 `json:"pass_loss_db" help:"loss of a signal passing one node's interface P_pass, Eq. 8 (dB); > 0 caps the group by Eqs. 7–9 (0: no insertion-loss bound)" source:"[P] WRHT §4.4 Eq. 8 (no value given)"`
	PenaltyDb      float64 `json:"penalty_db" help:"extinction-ratio power penalty P_p, Eq. 9 (dB)" source:"[P] WRHT §4.4 Eq. 9 (no value given)"`
	BERMax         float64 `json:"ber_max" help:"bit-error-rate bound of the crosstalk check, Eqs. 11–13 (0: no crosstalk bound; the paper's is 1e-9): > 0 caps the group where the longest lightpath's crosstalk pushes the BER above it" source:"[P] WRHT §4.4: 'the BER must be lower than 10^-9' [26]; off by default since no noise powers are given (reference/wrht.md A5)"`
	XtalkTxDbm     float64 `json:"xtalk_tx_dbm" help:"worst-case crosstalk noise power on the transmitter side P_Tx, Eq. 12 (dBm; used when ber_max > 0)" source:"[P] WRHT §4.4 Eq. 12 (no value given)"`
	XtalkRxDbm     float64 `json:"xtalk_rx_dbm" help:"worst-case crosstalk noise power of one passed interface on the receiver side P_Rx, Eq. 12: L_max of them add up (dBm)" source:"[P] WRHT §4.4 Eq. 12 (no value given)"`
	NoiseDbm       float64 `json:"noise_dbm" help:"other noise power at the photodetector P_O, Eq. 11 (dBm)" source:"[P] WRHT §4.4 Eq. 11 (no value given)"`
	SNRScale       string  `json:"snr_scale" help:"the SNR that Eq. 13 takes: linear (P_S / (P_N + P_O), the reading that makes BER = ½e^(−SNR/4) meaningful: BER < 1e-9 needs 19.0 dB) or db (Eq. 11's 10·log10 as printed: needs 80 dB)" source:"[D] reference/wrht.md A5: Eq. 11 defines SNR in dB, Eq. 13 needs it linear"`
	StepRule       string  `json:"step_rule" help:"WRHT steps: exact (2k−1 when the last all-to-all fits in w wavelengths, Table 1) or lemma (always 2k, Lemma 1 and Theorem 1)" source:"[D] reference/wrht.md A3, §5.4: Table 1 and Fig. 2 follow exact, the V3/V9 averages follow lemma"`
	HRingGroup     int     `json:"hring_group" help:"H-Ring intra-group size h" source:"[P] WRHT §5.4, Table 1: m = 5"`
	HRingSize      string  `json:"hring_size" help:"H-Ring step sizes: i (every step S/p, 'ring-based') or ii (S/h in the groups, S/p across, Ueno–Yokota)" source:"[D] reference/wrht.md A8: the paper gives no H-Ring sizes"`
	Strategy       string  `json:"strategy" help:"collective algorithm: best, wrht, ring (O-Ring), tree (the paper's unpipelined binary tree), hring, or op=name pairs" source:"[P] WRHT §5.2: WRHT against Ring, H-Ring and BT on the optical ring"`
}

const (
	ruleExact, ruleLemma          = "exact", "lemma"
	sizeRingBased, sizeUenoYokota = "i", "ii"
	snrLinear, snrDB              = "linear", "db"
)

var (
	stepRules  = []string{ruleExact, ruleLemma}
	hringSizes = []string{sizeRingBased, sizeUenoYokota}
	snrScales  = []string{snrLinear, snrDB}
)

// DefaultConfig is Table 2's optical ring.
func DefaultConfig() *Config {
	return &Config{Wavelengths: 64, WavelengthGbit: 40, ReconfigUs: 25, OEOFs: 497, PacketBytes: 72,
		StepRule: ruleExact, HRingGroup: 5, HRingSize: sizeUenoYokota, SNRScale: snrLinear, Strategy: collective.Best}
}

// Algorithms lists what the ring runs: WRHT and the paper's optical baselines.
func (c *Config) Algorithms() []collective.Algorithm {
	return []collective.Algorithm{WRHT{}, collective.Ring, BT{}, HRing{}}
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p params.Problems
	if c.Nodes != 0 {
		p.AtLeast("nodes", c.Nodes, 2)
	}
	p.AtLeast("wavelengths", c.Wavelengths, 1)
	p.Positive("wavelength_gbit_per_s", c.WavelengthGbit)
	p.NonNegative("reconfig_us", c.ReconfigUs)
	p.NonNegative("oeo_fs_per_packet", c.OEOFs)
	p.AtLeast("packet_bytes", c.PacketBytes, 1)
	p.AtLeast("max_group", c.MaxGroup, 0)
	if c.MaxGroup == 1 {
		p.Addf("max_group 1 must be 0 (no limit) or ≥ 2")
	}
	if c.Group != 0 && c.Group < 2 {
		p.Addf("group %d must be 0 (2w+1) or ≥ 2", c.Group)
	}
	if m := c.groupSize(); c.Wavelengths >= 1 && m/2 > c.Wavelengths {
		p.Addf("group %d needs ⌊m/2⌋ = %d wavelengths, more than wavelengths %d; say group ≤ 2w+1 = %d", m, m/2, c.Wavelengths, 2*c.Wavelengths+1)
	}
	p.NonNegative("modulator_loss_db", c.ModulatorDb)
	p.NonNegative("pass_loss_db", c.PassLossDb)
	p.NonNegative("penalty_db", c.PenaltyDb)
	for _, f := range []struct {
		key string
		v   float64
	}{{"laser_dbm", c.LaserDbm}, {"xtalk_tx_dbm", c.XtalkTxDbm}, {"xtalk_rx_dbm", c.XtalkRxDbm}, {"noise_dbm", c.NoiseDbm}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			p.Addf("%s %g must be finite", f.key, f.v)
		}
	}
	if !(c.BERMax >= 0 && c.BERMax < 0.5) {
		p.Addf("ber_max %g must be in [0, 0.5) (0: no crosstalk bound; the paper's 1e-9)", c.BERMax)
	}
	p.OneOf("snr_scale", c.SNRScale, snrScales)
	p.OneOf("step_rule", c.StepRule, stepRules)
	p.AtLeast("hring_group", c.HRingGroup, 1)
	p.OneOf("hring_size", c.HRingSize, hringSizes)
	_, err := collective.ParseFor(c.Strategy, c.Algorithms())
	p.Check(err)
	return p.Err("network wdmring")
}

// Bandwidth is one wavelength's rate B.
func (c *Config) Bandwidth() units.BytesPerSecond { return units.Gbps(c.WavelengthGbit) }

// oeo is the O/E/O time of one transfer: ⌈bytes/packet⌉ packets at oeo_fs each.
func (c *Config) oeo(b units.Bytes) units.Seconds {
	return units.Seconds(math.Ceil(float64(b)/float64(c.PacketBytes)) * c.OEOFs * 1e-15)
}

// Spec registers the model.
func Spec() network.Spec {
	return network.Spec{
		Name:      Name,
		Summary:   "WDM optical ring of microring nodes (TeraRack): circuit-switched lightpaths, w wavelengths per fibre, reconfigured before every step; WRHT, O-Ring, binary tree, H-Ring",
		Source:    "[P] Dai et al., WRHT (ICPP 2023) §3.2, §4, Table 2",
		NewConfig: func() network.Config { return DefaultConfig() },
		New: func(cfg network.Config, env network.Env) (network.Model, error) {
			c := cfg.(*Config)
			if err := c.Validate(); err != nil {
				return nil, err
			}
			n := c.Nodes
			if n == 0 {
				n = env.GPUs
			}
			if n == 1 {
				return nil, errs.Usage("network wdmring: a ring of 1 node; give a job of ≥ 2 GPUs or nodes ≥ 2")
			}
			n = max(n, 2)
			if env.GPUs > n {
				return nil, errs.Usage("a job of %d GPUs does not fit network wdmring of nodes %d", env.GPUs, n)
			}
			m := &model{cfg: *c, env: env, nodes: int32(n)}
			m.algorithms = m.cfg.Algorithms()
			m.choice, _ = collective.ParseFor(c.Strategy, m.algorithms)
			network.Share(&m.memo, struct {
				cfg   Config
				gpus  int
				nodes int32
			}{m.cfg, env.GPUs, m.nodes}, env)
			return m, nil
		},
	}
}

type model struct {
	cfg        Config
	env        network.Env
	nodes      int32
	algorithms []collective.Algorithm
	choice     collective.Choice
	memo       network.Memo
}

func (m *model) Name() string { return Name }

// Shareable: the model never changes after construction; its caches are safe for concurrent use.
func (m *model) Shareable() {}

// ringAlgorithm is an algorithm of this network: its steps, each a set of lightpaths (stepKey).
type ringAlgorithm interface {
	steps(m *model, op network.Op, s units.Bytes, p int, out *[]ringStep) (string, error)
}

// ringStep is one step of a schedule on the ring: the lightpaths key names (of one group; every
// concurrent group runs them), Bytes per unit weight, the receivers' reduction, Repeat times.
type ringStep struct {
	key    stepKey
	bytes  units.Bytes
	fanIn  int
	reduce units.Bytes
	repeat int
}

type stepKind uint8

const (
	kGather stepKind = iota
	kAllToAll
	kBcast
	kBTUp
	kBTDown
	kIntra
	kInter
	kPattern
)

// stepKey names one step's lightpaths for a group: a WRHT level, a tree step, an H-Ring phase, or
// the pattern of a flow algorithm's round (comparable: assignments are cached by it).
type stepKey struct {
	kind  stepKind
	level int32
	size  int32 // WRHT's group m, H-Ring's h
	pat   collective.Pattern
}

// Price prices one collective: its algorithm's steps, each assigned wavelengths on the ring for
// every concurrent group at once (first fit) and run in ⌈used/w⌉ rounds, then collective.Price.
func (m *model) Price(col network.Collective) (network.Cost, error) {
	return m.memo.Price(col, m.env, func() (network.Cost, error) {
		sc := pool.Get().(*priceScratch)
		defer pool.Put(sc)
		return collective.Choose(Name, m.choice.For(col.Op), m.algorithms, col.Op, func(a collective.Algorithm) (network.Cost, error) {
			return m.price(a, col, sc)
		})
	})
}

type priceScratch struct {
	steps []ringStep
	out   []collective.Step
	flows collective.Flows
}

var pool = sync.Pool{New: func() any { return new(priceScratch) }}

// price prices algorithm a for col.
func (m *model) price(a collective.Algorithm, col network.Collective, sc *priceScratch) (network.Cost, error) {
	p := col.Group.Size
	sc.steps = sc.steps[:0]
	var name string
	switch alg := a.(type) {
	case ringAlgorithm:
		var err error
		if name, err = alg.steps(m, col.Op, col.Bytes, p, &sc.steps); err != nil {
			return network.Cost{}, err
		}
	case collective.Flowing:
		sc.flows.Algorithm, sc.flows.Rounds = "", sc.flows.Rounds[:0]
		if err := alg.Rounds(col.Op, col.Bytes, members{p: p, link: m.link()}, &sc.flows); err != nil {
			return network.Cost{}, err
		}
		name = sc.flows.Algorithm
		for _, r := range sc.flows.Rounds {
			if r.Vary == 0 {
				sc.steps = append(sc.steps, ringStep{key: stepKey{kind: kPattern, pat: r.Pattern}, bytes: r.Bytes,
					fanIn: r.FanIn, reduce: r.ReduceBytes, repeat: max(1, r.Repeat)})
				continue
			}
			// A family of partner distances (pairwise exchange): each round is assigned on its
			// own, up to p/2 hops per lightpath.
			if hops := float64(p) * float64(p) / 4 * float64(max(1, r.Repeat)); hops > maxHops {
				return network.Cost{}, collective.Decline("%d rounds of %d lightpaths to partners up to %d hops away exceed the %d hops a ring assigns", r.Repeat, p, p/2, maxHops)
			}
			pt := r.Pattern
			for j := 0; j < max(1, r.Repeat); j++ {
				sc.steps = append(sc.steps, ringStep{key: stepKey{kind: kPattern, pat: pt}, bytes: r.Bytes,
					fanIn: r.FanIn, reduce: r.ReduceBytes, repeat: 1})
				pt.Parts[0].K += int32(r.Vary)
			}
		}
	default:
		return network.Cost{}, collective.Decline("%s emits no steps for a ring", a.Name())
	}
	sc.out = sc.out[:0]
	w := m.cfg.Wavelengths
	for _, st := range sc.steps {
		as, err := m.assigned(st.key, col.Group)
		if err != nil {
			return network.Cost{}, err
		}
		rounds := max(1, (as.Used+w-1)/w)
		b := units.Bytes(float64(st.bytes) * as.MaxWeight)
		sc.out = collective.AppendStep(sc.out, collective.Step{
			Link:     collective.Link{Name: "wavelength", Latency: m.cfg.oeo(b), Bandwidth: m.cfg.Bandwidth()},
			Bytes:    b,
			Load:     1,
			FanIn:    st.fanIn,
			Repeat:   max(1, st.repeat) * rounds,
			Reconfig: units.Us(m.cfg.ReconfigUs),
			// Each input of a reduction is what one sender sent.
			ReduceBytes: units.Bytes(float64(st.reduce) * as.MaxWeight),
		})
	}
	return collective.Price(collective.Schedule{Algorithm: name, Steps: sc.out}, m.env.Reducer, col.DType), nil
}

// link is one wavelength with the reconfiguration as its latency, what a flow algorithm sizing
// pipeline chunks needs to know.
func (m *model) link() collective.Link {
	return collective.Link{Name: "wavelength", Latency: units.Us(m.cfg.ReconfigUs), Bandwidth: m.cfg.Bandwidth()}
}

// members is a group of p members on the ring, for flow algorithms.
type members struct {
	p    int
	link collective.Link
}

func (g members) P() int                                           { return g.p }
func (g members) Layout() collective.Layout                        { return collective.Flat(g.p, g.link) }
func (g members) Link(collective.Pattern) (collective.Link, error) { return g.link, nil }
func (g members) Grid() (*collective.Grid, error) {
	return nil, collective.Decline("a ring is not a grid")
}

// Assigned is the wavelength assignment of one step for every concurrent group: the wavelengths
// first fit used and the heaviest lightpath's weight.
type Assigned struct {
	Used      int
	MaxWeight float64
}

// assignKey identifies a step's assignment: the ring, the group shape and the step's lightpaths.
type assignKey struct {
	nodes int32
	group network.Group
	key   stepKey
}

// assignments caches Assigned by assignKey, process-wide (sweeps build many models of one ring);
// it forgets everything past maxAssignments entries.
var (
	assignments     sync.Map
	assignmentCount atomic.Int64
)

const maxAssignments = 1 << 14

// Bounds on the lightpaths one step may assign (a linear all-to-all of thousands of members has
// millions): beyond them the algorithm declines.
const (
	maxPaths = 1 << 22
	maxHops  = 1 << 27
)

// assigned is the cached assignment of step key for group g (computed and checked once).
func (m *model) assigned(key stepKey, g network.Group) (Assigned, error) {
	k := assignKey{nodes: m.nodes, group: g, key: key}
	if v, ok := assignments.Load(k); ok {
		return v.(Assigned), nil
	}
	var a Assignment
	as, err := m.assign(key, g, &a)
	if err != nil {
		return as, err
	}
	if assignmentCount.Add(1) > maxAssignments {
		assignments.Clear()
		assignmentCount.Store(1)
	}
	assignments.Store(k, as)
	return as, nil
}

// assign places the step's lightpaths of every concurrent group of g on the ring, assigns them
// wavelengths by first fit into a, and checks the assignment.
func (m *model) assign(key stepKey, g network.Group, a *Assignment) (Assigned, error) {
	lps, err := m.lightpaths(key, g.Size, nil)
	if err != nil {
		return Assigned{}, err
	}
	groups := g.Groups(int(m.nodes))
	if m.env.GPUs > 0 {
		groups = g.Groups(m.env.GPUs)
	}
	if len(lps)*groups > maxPaths {
		return Assigned{}, collective.Decline("%d lightpaths in one step exceed the %d a ring step assigns", len(lps)*groups, maxPaths)
	}
	as := Assigned{}
	paths := make([]Path, 0, len(lps)*groups)
	hops := 0
	for i := 0; i < groups; i++ {
		if !g.Runs(i) {
			continue
		}
		base := int32(g.Base(i))
		for _, lp := range lps {
			p := place(base+lp.Src*int32(g.Stride), base+lp.Dst*int32(g.Stride), lp.Dir, m.nodes)
			paths = append(paths, p)
			hops += int(p.hops(m.nodes))
			w := lp.Weight
			if w == 0 {
				w = 1
			}
			as.MaxWeight = max(as.MaxWeight, w)
		}
	}
	if hops > maxHops {
		return Assigned{}, collective.Decline("%d lightpath hops in one step exceed the %d a ring step assigns", hops, maxHops)
	}
	FirstFit(m.nodes, paths, a, nil)
	if err := a.Check(0); err != nil {
		return Assigned{}, fmt.Errorf("wdmring: first fit broke the wavelength rule: %w", err)
	}
	as.Used = a.Used
	return as, nil
}

// lightpaths appends one group's lightpaths of step key (p members) to dst.
func (m *model) lightpaths(key stepKey, p int, dst []Lightpath) ([]Lightpath, error) {
	switch key.kind {
	case kGather, kBcast, kAllToAll:
		pl := NewPlan(p, int(key.size), m.cfg.Wavelengths, m.cfg.StepRule == ruleLemma)
		scratch := make([]int32, 0, p)
		if key.kind == kAllToAll {
			return pl.allToAll(scratch, dst), nil
		}
		return pl.gather(int(key.level), key.kind == kBcast, scratch, dst), nil
	case kBTUp, kBTDown:
		return btPaths(p, int(key.level), key.kind == kBTDown, dst), nil
	case kIntra, kInter:
		return hringPaths(p, int(key.size), key.kind == kInter, dst), nil
	}
	pat := key.pat
	for i := 0; i < pat.N; i++ {
		q := pat.Parts[i]
		if q.Kind != collective.Uniform {
			q.Each(p, func(src, dst2 int, w float64) {
				dst = append(dst, Lightpath{Src: int32(src), Dst: int32(dst2), Weight: w})
			})
			continue
		}
		if p*(p-1) > maxPaths {
			return nil, collective.Decline("a uniform all-to-all of %d members is %d lightpaths, more than the %d a ring step assigns", p, p*(p-1), maxPaths)
		}
		for s := 0; s < p; s++ {
			for d := 0; d < p; d++ {
				if s != d {
					dst = append(dst, Lightpath{Src: int32(s), Dst: int32(d), Weight: q.W()})
				}
			}
		}
	}
	return dst, nil
}
