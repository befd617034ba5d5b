package oddl

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Name is the registry key.
const Name = "oddl"

// The paper's four networks (ODDL §5A–B), the values of Config.Fabric.
const (
	FabricODDL    = "oddl"
	FabricFatTree = "fattree"
	FabricSiPRing = "sip-ring"
	FabricSwitch  = "switch"
)

var fabrics = []string{FabricODDL, FabricFatTree, FabricSiPRing, FabricSwitch}

// MaxNodes is the largest system the 12-bit address of a control message names (ODDL §4B:
// 13-bit messages, 12 bits of address, "up to 4096 nodes").
const MaxNodes = 1 << 12

// Config is ODDL's parameters (Table 2, §3–4) and those of the paper's baselines, which share
// the NIC rate: fabric picks which of the four networks is built.
type Config struct {
	Fabric   string  `json:"fabric" help:"which of the paper's networks: oddl (LCoS-WSS, per-flow circuits), fattree (radix ft_radix, 1:1, ECMP-hashed; --net-preset oddl-ft), sip-ring (ring all-reduce on the WDM ring; --net-preset sip-ring) or switch (one electrical switch, the testbed's; --net-preset oddl-testbed)" source:"[P] ODDL §5A: ODDL, fat tree (ring or HD), SiP-Ring (ring); §5B: one-tier 100 GE switch"`
	NICGbit  float64 `json:"nic_gbps" help:"NIC rate (Gb/s), each direction; the links of every fabric run at it" source:"[P] ODDL Table 2: NIC bandwidth 100 / 200 / 400 Gbps"`
	Nodes    int     `json:"nodes" help:"nodes of the network, a power of two (0: the job's GPUs)" source:"[P] ODDL §5A: up to 1,024 nodes, one GPU each"`
	Shape    string  `json:"shape" help:"ODDL layout as dimensions n×m(×k), each a power of two, the last varying fastest (empty: 1D up to max_dim nodes, near-square 2D up to max_dim², near-cubic 3D above)" source:"[P] ODDL §3C: n×m(×k) with n, m, k powers of two; §5A: 1D for 32 nodes or fewer, 2D above; [D] the 2D split below 1,024 is not given, near-square needs the fewest wavelengths (reference/oddl.md §7.12)"`
	MaxDim   int     `json:"max_dim" help:"ports of one dimension's WSS: the largest dimension the automatic layout uses" source:"[P] ODDL §3C: 1,024 nodes as 32×32 with 32-port WSSs; §5A: 1D up to 32 nodes"`
	Lambdas  int     `json:"wavelengths" help:"wavelengths a tunable laser reaches, W (0: as many as the job's table needs, one per destination); HD needs log2 of the largest dimension" source:"[P] ODDL §3A: HD 'using only log2 N wavelengths'; §3C: w ≥ log2(max(n, m)), 32×32 needs 5"`
	Band     int     `json:"band_wavelengths" help:"wavelengths of the band, the most a laser may use" source:"[P] ODDL §3B: 96 wavelengths in the C band"`
	LambdaGb float64 `json:"wavelength_gbps" help:"rate of one wavelength (Gb/s; 0: nic_gbps); a pair gets ⌊W / log2 N⌋ of them" source:"[P] ODDL §3A: 8 wavelengths give a 256-node job 1 per destination, a 16-node job 2, 'doubling the bandwidth'; [D] reference/oddl.md §1.3: one wavelength at the NIC rate, the simulation's reading"`
	ReconfUs float64 `json:"reconfig_us" help:"link reconfiguration (laser tuning and CDR) when a node's partner changes (µs)" source:"[P] ODDL Table 2: 5 µs (ODDL), 10 µs (ODDL_10); §3B: under 2 µs in theory; Table 3: 10.5 ns laser switching"`
	HopUs    float64 `json:"ctrl_hop_us" help:"T_onehop: one control-network hop (µs)" source:"[P] ODDL Table 2: control switch process delay 5 µs (ODDL), 10 µs (ODDL_10); §4B: ≈ 1 µs with Ethernet"`
	Hops     float64 `json:"ctrl_hops" help:"H_avehops: hops of a control message (0: 5 above 64 nodes, 3 at most, the L3 fat tree's cross-pod and in-pod paths)" source:"[P] ODDL Eq. 1 (H not given); [D] reference/oddl.md §2.4, A4: 5 switches across pods, 3 within"`
	Overlap  float64 `json:"overlap" help:"φ in [0, 1]: share of a step's local reduction that hides the gap" source:"[P] ODDL §4B: the delays 'can be partially overlapped' with data processing in the node (not quantified); [D] reference/oddl.md §2.4, A5: φ = 0 by default"`
	FibreM   float64 `json:"fibre_m" help:"fibre length of a circuit (m): propagation at 5 ns/m and the link budget's fibre loss" source:"[P] ODDL §3C: 2 m (intra-rack) to 200 m (inter-rack); [X] 5 ns/m in silica fibre"`
	SetupMs  float64 `json:"wss_setup_ms" help:"WSS configuration once per job, added to the time to accuracy (ms)" source:"[P] ODDL Table 3: reconfiguration of the WSS 56 ms"`
	LaserDbm float64 `json:"laser_dbm" help:"tunable laser output power (dBm)" source:"[P] ODDL §3C: maximum output power 4.5 dBm"`
	RxDbm    float64 `json:"receiver_dbm" help:"receiver sensitivity (dBm)" source:"[P] ODDL §3C: −10.5 dBm"`
	WSSLoss  float64 `json:"wss_loss_db" help:"insertion loss of one WSS pass (dB; 0: 6.8 up to 8 ports, 17 above)" source:"[P] ODDL §3C: 8-port WSS under 6.8 dB [39]; 32-port 17–25 dB [40]; [D] 17, the range's low end, for every WSS above 8 ports"`
	FibreDb  float64 `json:"fibre_db_per_km" help:"fibre loss (dB/km)" source:"[P] ODDL §3C: around 0.5 dB per km"`
	SwitchUs float64 `json:"switch_us" help:"electrical switch process delay of the fat tree and the one-switch network (µs)" source:"[P] ODDL Table 2: switch process delay (fat tree) 1 µs"`
	FTRadix  int     `json:"ft_radix" help:"fabric fattree: switch radix" source:"[P] ODDL §5A: switch radix of 16, 1:1 oversubscription"`
	FTTwoMax int     `json:"ft_two_level_max" help:"fabric fattree: the most nodes a 2-level tree serves; 3 levels above" source:"[P] ODDL §5A: 2 layers for 64 nodes or fewer, 3 above"`
	Seed     int     `json:"hash_seed" help:"fabric fattree: seed of the ECMP hash that picks each flow's path (long HD steps collide)" source:"[P] ODDL §5A: HD on the fat tree suffers contention in multi-level switches; [D] reference/oddl.md §4.1: static ECMP-style paths, any seed"`
	RingUs   float64 `json:"ring_alpha_us" help:"fabric sip-ring: latency α of every ring step (µs; fitted once on ODDL's V2, see doc.go)" source:"[D] ODDL gives no SiP-Ring parameters (reference/oddl.md §4.2): fitted on V2 only, VGG19 at 1,024 nodes and 100 Gb/s, SiP-Ring 1.7× ODDL"`
	Strategy string  `json:"strategy" help:"collective algorithm: best or one the fabric offers (oddl: hd, ring, a2a, p2p; fattree and switch: ring, hd (the paper's HD, farthest partner first), rhd (MPICH's, nearest first), tree, linear; sip-ring: ring), or op=name pairs" source:"[P] ODDL §5A: HD on ODDL, ring or HD on the fat tree, ring on SiP-Ring"`
}

// DefaultConfig is ODDL with Table 2's parameters (the "ODDL" curve: 5 µs and 5 µs).
func DefaultConfig() *Config {
	return &Config{Fabric: FabricODDL, NICGbit: 100, MaxDim: 32, Band: 96, ReconfUs: 5, HopUs: 5, FibreM: 200,
		SetupMs: 56, LaserDbm: 4.5, RxDbm: -10.5, FibreDb: 0.5, SwitchUs: 1, FTRadix: 16, FTTwoMax: 64, Seed: 1,
		RingUs: DefaultRingUs, Strategy: collective.Best}
}

// DefaultRingUs is SiP-Ring's per-step α, fitted once on V2 (doc.go).
const DefaultRingUs = 6

// Algorithms lists what the selected fabric offers.
func (c *Config) Algorithms() []collective.Algorithm {
	switch c.Fabric {
	case FabricFatTree, FabricSwitch:
		return electrical
	case FabricSiPRing:
		return sipRing
	}
	return optical
}

var (
	optical    = []collective.Algorithm{HD{}, Ring{}, A2A{}, P2P{}}
	electrical = []collective.Algorithm{collective.Ring, collective.HD, collective.RHD, collective.Tree, collective.Linear}
	sipRing    = []collective.Algorithm{collective.Ring}
)

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p params.Problems
	p.OneOf("fabric", c.Fabric, fabrics)
	p.Positive("nic_gbps", c.NICGbit)
	if c.Nodes != 0 {
		p.AtLeast("nodes", c.Nodes, 2)
		if c.Nodes > MaxNodes {
			p.Addf("nodes %d exceeds the %d a 12-bit control address names (ODDL §4B)", c.Nodes, MaxNodes)
		}
	}
	if c.Shape != "" {
		if _, err := ParseShape(c.Shape); err != nil {
			p.Check(err)
		}
	}
	p.AtLeast("max_dim", c.MaxDim, 2)
	if c.MaxDim >= 2 && !pow2(c.MaxDim) {
		p.Addf("max_dim %d must be a power of two", c.MaxDim)
	}
	p.AtLeast("wavelengths", c.Lambdas, 0)
	p.AtLeast("band_wavelengths", c.Band, 1)
	if c.Lambdas > c.Band && c.Band >= 1 {
		p.Addf("wavelengths %d exceeds band_wavelengths %d (the C band has 96)", c.Lambdas, c.Band)
	}
	p.NonNegative("wavelength_gbps", c.LambdaGb)
	p.NonNegative("reconfig_us", c.ReconfUs)
	p.NonNegative("ctrl_hop_us", c.HopUs)
	if c.Hops != 0 && !(c.Hops >= 1) {
		p.Addf("ctrl_hops %g must be 0 (auto) or ≥ 1 (a control message crosses at least one switch)", c.Hops)
	}
	if !(c.Overlap >= 0 && c.Overlap <= 1) {
		p.Addf("overlap %g must be in [0, 1]", c.Overlap)
	}
	p.NonNegative("fibre_m", c.FibreM)
	p.NonNegative("wss_setup_ms", c.SetupMs)
	for _, f := range []struct {
		k string
		v float64
	}{{"laser_dbm", c.LaserDbm}, {"receiver_dbm", c.RxDbm}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			p.Addf("%s %g must be finite", f.k, f.v)
		}
	}
	p.NonNegative("wss_loss_db", c.WSSLoss)
	p.NonNegative("fibre_db_per_km", c.FibreDb)
	p.NonNegative("switch_us", c.SwitchUs)
	p.AtLeast("ft_radix", c.FTRadix, 4)
	p.AtLeast("ft_two_level_max", c.FTTwoMax, 1)
	p.NonNegative("ring_alpha_us", c.RingUs)
	if len(p) == 0 {
		_, err := collective.ParseFor(c.Strategy, c.Algorithms())
		p.Check(err)
	}
	return p.Err("network oddl")
}

func pow2(n int) bool { return n > 0 && n&(n-1) == 0 }

// log2 is ⌈log2 n⌉.
func log2(n int) int { return bits.Len(uint(max(n, 1) - 1)) }

// ParseShape reads a layout "32x32" or "16×16×16": one to three dimensions, each a power of two
// ≥ 2.
func ParseShape(s string) ([]int, error) {
	parts := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == 'x' || r == '×' })
	if len(parts) == 0 || len(parts) > 3 {
		return nil, errs.Usage("shape %q must be one to three dimensions n×m(×k), e.g. 32x32", s)
	}
	dims := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 2 || !pow2(n) {
			return nil, errs.Usage("shape %q: dimension %q must be a power of two ≥ 2 (ODDL §3C: n = 2^i, m = 2^j, k = 2^q)", s, p)
		}
		dims[i] = n
	}
	return dims, nil
}

// Layout is the dimensions of n nodes: the shape given, else 1D up to maxDim, near-square 2D up
// to maxDim², near-cubic 3D above. n must be a power of two.
func (c *Config) Layout(n int) ([]int, error) {
	if c.Shape != "" {
		dims, err := ParseShape(c.Shape)
		if err != nil {
			return nil, err
		}
		prod := 1
		for _, d := range dims {
			prod *= d
		}
		if prod != n {
			return nil, errs.Usage("network oddl: shape %s has %d nodes, the network %d; give nodes=%d or a shape of %d", c.Shape, prod, n, prod, n)
		}
		return dims, nil
	}
	if !pow2(n) {
		return nil, errs.Usage("network oddl: %d nodes is not a power of two; ODDL's layout (ODDL §3C) and HD need 2^k nodes, e.g. nodes=%d", n, 1<<log2(n))
	}
	l := log2(n)
	d := 1
	for lm := log2(c.MaxDim); d*lm < l; d++ {
	}
	dims := make([]int, d)
	for i := range dims { // split l bits as evenly as possible, the fastest dimensions the largest
		b := l / d
		if i >= d-l%d {
			b++
		}
		dims[i] = 1 << b
	}
	return dims, nil
}

// hops is H_avehops for a system of n nodes.
func (c *Config) hops(n int) float64 {
	if c.Hops > 0 {
		return c.Hops
	}
	if n > 64 {
		return 5
	}
	return 3
}

// Ctrl is Eq. 1's control delay of one step, 2·T_onehop·H_avehops.
func (c *Config) Ctrl(n int) units.Seconds { return units.Us(2 * c.HopUs * c.hops(n)) }

// lambdaRate is one wavelength's rate.
func (c *Config) lambdaRate() units.BytesPerSecond {
	if c.LambdaGb > 0 {
		return units.Gbps(c.LambdaGb)
	}
	return units.Gbps(c.NICGbit)
}

// PerDestination is the wavelengths a job of n nodes gives each destination, ⌊W / log2 n⌋ (ODDL
// §3A), at least 1; W = 0 means exactly enough (1).
func (c *Config) PerDestination(n int) int {
	if c.Lambdas == 0 || n < 2 {
		return 1
	}
	return max(1, c.Lambdas/log2(n))
}

// Spec registers the model.
func Spec() network.Spec {
	return network.Spec{
		Name:      Name,
		Summary:   "ODDL: LCoS-WSS all-optical network, a one-hop circuit per HD step by retuning the laser, a control handshake per step (fabric= the paper's baselines: fattree, sip-ring, switch)",
		Source:    "[P] Li et al., ODDL (JOCN 16(3), 2024) §3–5, Tables 1–3",
		NewConfig: func() network.Config { return DefaultConfig() },
		New:       build,
	}
}

func build(cfg network.Config, env network.Env) (network.Model, error) {
	c := cfg.(*Config)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	n := c.Nodes
	if c.Shape != "" && n == 0 {
		dims, _ := ParseShape(c.Shape)
		n = 1
		for _, d := range dims {
			n *= d
		}
	}
	if n == 0 {
		n = env.GPUs
	}
	if n > MaxNodes {
		return nil, errs.Usage("network oddl: %d nodes exceed the %d a 12-bit control address names (ODDL §4B)", n, MaxNodes)
	}
	if n < 2 {
		return nil, errs.Usage("network oddl: a network of %d node; give a job of ≥ 2 GPUs or nodes ≥ 2", n)
	}
	if env.GPUs > n {
		return nil, errs.Usage("a job of %d GPUs does not fit network oddl of %d nodes", env.GPUs, n)
	}
	switch c.Fabric {
	case FabricFatTree:
		return c.fatTree(n, env)
	case FabricSiPRing:
		return c.sipRing(n, env)
	case FabricSwitch:
		return c.oneSwitch(n, env)
	}
	dims, err := c.Layout(n)
	if err != nil {
		return nil, err
	}
	need := 0
	for _, d := range dims {
		need = max(need, log2(d))
	}
	if c.Lambdas != 0 && c.Lambdas < need {
		return nil, errs.Usage("network oddl: wavelengths %d is fewer than HD needs on a %s layout: log2 of the largest dimension = %d (ODDL §3C)", c.Lambdas, shapeString(dims), need)
	}
	m := &model{cfg: *c, env: env, nodes: n, dims: dims}
	m.setDims()
	job := max(env.GPUs, 2)
	m.pair = units.BytesPerSecond(float64(c.PerDestination(job)) * float64(c.lambdaRate()))
	m.prop = units.Ns(nsPerMetre * c.FibreM)
	m.ctrl = c.Ctrl(n)
	m.algorithms = c.Algorithms()
	m.choice, _ = collective.ParseFor(c.Strategy, m.algorithms)
	network.Share(&m.memo, struct {
		cfg   Config
		gpus  int
		nodes int
	}{m.cfg, env.GPUs, n}, env)
	return m, nil
}

// nsPerMetre is light's delay in silica fibre [X] (refractive index ≈ 1.47: c/1.47 ≈ 0.2 m/ns).
const nsPerMetre = 5

func shapeString(dims []int) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = strconv.Itoa(d)
	}
	return strings.Join(s, "×")
}

type model struct {
	cfg        Config
	env        network.Env
	nodes      int
	dims       []int
	dimOfBit   [32]int8 // node-id bit → dimension (the last dimension holds the low bits)
	pair       units.BytesPerSecond
	prop, ctrl units.Seconds
	algorithms []collective.Algorithm
	choice     collective.Choice
	memo       network.Memo
}

func (m *model) setDims() {
	b := 0
	for d := len(m.dims) - 1; d >= 0; d-- {
		for i := 0; i < log2(m.dims[d]); i++ {
			m.dimOfBit[b] = int8(d)
			b++
		}
	}
}

func (m *model) Name() string { return Name }

// Shareable: immutable after construction; the memo is synchronised.
func (m *model) Shareable() {}

// SetupTime is the WSS configuration once per job (ODDL Table 3), which the estimator adds to
// the time to accuracy.
func (m *model) SetupTime() units.Seconds { return units.Seconds(m.cfg.SetupMs * 1e-3) }

// Dims is the layout.
func (m *model) Dims() []int { return m.dims }

// step is one step of an algorithm on ODDL: every member sends Bytes to its partner (the member
// whose index differs by XOR Partner, or, for a fixed circuit, the same partner throughout).
type step struct {
	partner int32 // XOR distance in member indices; 0: the fixed circuit of a ring or a send
	bytes   units.Bytes
	reduce  bool // the receiver reduces what it got (2-to-1)
}

// odAlgorithm is an algorithm of ODDL: its steps for one group.
type odAlgorithm interface {
	steps(m *model, op network.Op, s units.Bytes, g network.Group, out []step) ([]step, error)
}

type scratch struct {
	steps []step
	out   []collective.Step
}

var pool = sync.Pool{New: func() any { return new(scratch) }}

// Price prices one collective: its algorithm's steps, each a one-hop circuit at the pair rate,
// with the per-step gap of §4B, then collective.Price.
func (m *model) Price(col network.Collective) (network.Cost, error) {
	return m.memo.Price(col, m.env, func() (network.Cost, error) {
		sc := pool.Get().(*scratch)
		defer pool.Put(sc)
		return collective.Choose(Name, m.choice.For(col.Op), m.algorithms, col.Op, func(a collective.Algorithm) (network.Cost, error) {
			return m.price(a.(odAlgorithm), col, sc)
		})
	})
}

// price prices algorithm a for col. Gap of a step (ODDL §4B, Eq. 1; reference/oddl.md §2.4):
//
//	g = [partner changes]·T_reconf + 2·T_onehop·H_avehops − φ·T_reduce ≥ 0
//
// the first step of a collective counting as a change (the laser is shut down between
// iterations, §3B).
func (m *model) price(a odAlgorithm, col network.Collective, sc *scratch) (network.Cost, error) {
	var err error
	sc.steps, err = a.steps(m, col.Op, col.Bytes, col.Group, sc.steps[:0])
	if err != nil {
		return network.Cost{}, err
	}
	reconf := units.Us(m.cfg.ReconfUs)
	sc.out = sc.out[:0]
	prev := int32(-1)
	for _, st := range sc.steps {
		gap := m.ctrl
		if st.partner != prev || prev < 0 {
			gap += reconf
		}
		prev = st.partner
		s := collective.Step{Link: collective.Link{Name: "wavelength circuit", Latency: m.prop, Bandwidth: m.pair},
			Bytes: st.bytes, Load: 1, Repeat: 1}
		if st.reduce {
			s.FanIn, s.ReduceBytes = 2, st.bytes
			if m.cfg.Overlap > 0 && m.env.Reducer != nil {
				gap -= units.Seconds(m.cfg.Overlap) * m.env.Reducer.ReduceTime(2, st.bytes, col.DType)
			}
		}
		s.Reconfig = units.Max(0, gap)
		sc.out = collective.AppendStep(sc.out, s)
	}
	return collective.Price(collective.Schedule{Algorithm: a.(collective.Algorithm).Name(), Steps: sc.out}, m.env.Reducer, col.DType), nil
}

// cube checks that g's members form a sub-cube of the node ids (size and stride powers of two),
// so that every XOR partner is one bit, one dimension, one hop away.
func cube(g network.Group, what string) error {
	if !pow2(g.Size) {
		return collective.Decline("%s needs a power-of-two group, not %d (ODDL §3: HD on 2^k nodes)", what, g.Size)
	}
	if !pow2(g.Stride) {
		return collective.Decline("%s needs a power-of-two stride, not %d: its partners would be outside the per-job wavelength table", what, g.Stride)
	}
	return nil
}

// String is for errors.
func (s step) String() string { return fmt.Sprintf("partner ⊕%d, %v", s.partner, s.bytes) }
