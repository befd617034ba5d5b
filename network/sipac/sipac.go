package sipac

import (
	"fmt"
	"math"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
)

// Name is the registry key.
const Name = "sipac"

// The two networks of the paper on the same BCube graph (Config.Fabric).
const (
	FabricSiPAC = "sipac" // microring WSSs: transparent, no switch latency, no buffering
	FabricBCube = "bcube" // electronic packet switches (BCube, Guo et al. 2009)
)

var fabrics = []string{FabricSiPAC, FabricBCube}

// The two readings of the WSS's bandwidth (Config.Accounting; reference/sipac.md §2.5(2)).
const (
	// AccountPaper charges a CU's r − 1 same-WSS flows on its whole link B ((r−1)·x·β per step),
	// which reproduces Table II.
	AccountPaper = "paper"
	// AccountPhysical gives each CU pair its own w/r wavelengths at b = B/r (r·x·β per step;
	// the self-group j = i is idle), ×r/(r−1) on every bandwidth term.
	AccountPhysical = "physical"
)

var accountings = []string{AccountPaper, AccountPhysical}

// Automatic sizing limits (SiPAC §VI-A-1: "we limit r ≤ 32 and L ≤ 3 to achieve a realistic
// WSS radix [79] and similar number of per-CU optical interfaces as the other topologies").
const (
	AutoMaxRadix  = 32
	AutoMaxLevels = 3
)

// MaxRadix is the largest WSS radix accepted (SiPAC §III-B: "Scalable MRR switch designs have
// been shown to be feasible for port counts up to 128 [61]").
const MaxRadix = 128

// MaxLevels is the most levels a schedule's round can drive at once (one traffic part per level,
// collective.MaxParts).
const MaxLevels = collective.MaxParts

// Config is SiPAC's parameters (Table I; §III, §VI-A) and the electronic BCube's that shares its
// graph.
type Config struct {
	Fabric     string  `json:"fabric" help:"sipac (microring WSSs, transparent) or bcube (electronic packet switches on the same graph; --net-preset bcube-512)" source:"[P] SiPAC §III-A, §VI-A-1: BCube with every EPS replaced by a WSS; BCube [55] the electronic baseline"`
	Radix      int     `json:"r" help:"WSS radix r: CUs per WSS (0: with levels=0 the smallest L ≤ 3 whose r = p^(1/L) is a whole number ≤ 32, else p^(1/levels))" source:"[P] SiPAC Table I, §III-A: p = r^L; §VI-A-1: r ≤ 32, L ≤ 3"`
	Levels     int     `json:"levels" help:"levels L: ports per CU, one into a WSS of each level (0: log_r p, or automatic with r=0)" source:"[P] SiPAC §III-A: L levels of r^(L−1) switches, each CU with L transceivers"`
	NodeTbps   float64 `json:"node_tbps" help:"per-CU bandwidth, summed over its L links (Tb/s): link B = node/L (ignored when wavelengths > 0)" source:"[P] SiPAC §VI-A-1: per-CU bandwidth = total over the L levels' switches; Figs. 10–12: 2,048 Gb/s"`
	Lambdas    int     `json:"wavelengths" help:"w: transmitter wavelengths per link, a multiple of r (0: B from node_tbps); B = w·u" source:"[P] SiPAC §III-B: B = w·u, r groups of w/r wavelengths"`
	LambdaGbit float64 `json:"wavelength_gbps" help:"u: rate of one wavelength (Gb/s), with wavelengths" source:"[P] SiPAC §III-B: 128 Gb/s PAM4 microring modulators [62]; testbed 10 Gb/s"`
	HopUs      float64 `json:"hop_us" help:"latency of one CU→WSS→CU hop (µs), α of Table II" source:"[P] SiPAC §VI-A-1: 'we assume the per-hop link latency to be 1 µs'; Fig. 7: α = 1 µs"`
	Accounting string  `json:"wss_accounting" help:"paper: a CU's r−1 same-WSS flows share its link B, (r−1)·x·β per step, Table II; physical: each pair has its own w/r wavelengths at b = B/r, r·x·β (×r/(r−1))" source:"[P] SiPAC Table II and §III-B b = B/r disagree by r/(r−1) (reference/sipac.md §2.5(2)); paper reproduces Table II"`
	SwitchNs   float64 `json:"switch_ns" help:"fabric bcube: packet switch latency (ns) added to each hop" source:"[X] SiPAC gives none for BCube's EPS; 120 ns, the InfiniBand switch latency it uses for SuperPod [78]"`
	Strategy   string  `json:"strategy" help:"collective algorithm: best or one of sipco, sipco-rsag, mesh, ring, hring, rhd, tree, linear, or op=name pairs" source:"[P] SiPAC Table II: Ring, Mesh, H-Ring, SiPCO; §2.7 derived forms (reference/sipac.md) labelled not from the paper"`
}

// DefaultConfig is the simulated SiPAC: automatic r and L from the job, 2,048 Gb/s per CU, 1 µs
// per hop, the paper's WSS accounting.
func DefaultConfig() *Config {
	return &Config{Fabric: FabricSiPAC, NodeTbps: 2.048, HopUs: 1, Accounting: AccountPaper, SwitchNs: 120,
		Strategy: collective.Best}
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p params.Problems
	p.OneOf("fabric", c.Fabric, fabrics)
	p.OneOf("wss_accounting", c.Accounting, accountings)
	if c.Radix != 0 && (c.Radix < 2 || c.Radix > MaxRadix) {
		p.Addf("r %d must be 0 (automatic) or 2 to %d (MRR switches up to 128 ports, SiPAC §III-B)", c.Radix, MaxRadix)
	}
	if c.Levels != 0 && (c.Levels < 1 || c.Levels > MaxLevels) {
		p.Addf("levels %d must be 0 (automatic) or 1 to %d", c.Levels, MaxLevels)
	}
	if c.Lambdas != 0 {
		p.AtLeast("wavelengths", c.Lambdas, 1)
		p.Positive("wavelength_gbps", c.LambdaGbit)
	} else {
		p.Positive("node_tbps", c.NodeTbps)
	}
	p.Positive("hop_us", c.HopUs)
	p.NonNegative("switch_ns", c.SwitchNs)
	_, err := collective.ParseFor(c.Strategy, Algorithms())
	p.Check(err)
	return p.Err("network sipac")
}

// Size is r and L for a network of p CUs (p = r^L), with the wavelengths (if given) a multiple
// of r; usage errors name the nearest valid values.
func (c *Config) Size(p int) (r, l int, err error) {
	if r, l, err = c.size(p); err == nil && c.Lambdas > 0 && c.Lambdas%r != 0 {
		err = errs.Usage("network sipac: wavelengths %d is not a multiple of r = %d: the WSS splits them into r groups of w/r (SiPAC §III-B); e.g. %d", c.Lambdas, r, max(r, c.Lambdas/r*r))
	}
	return r, l, err
}

func (c *Config) size(p int) (r, l int, err error) {
	switch {
	case c.Radix != 0 && c.Levels != 0:
		r, l = c.Radix, c.Levels
		if n := pow(r, l); n < p {
			return 0, 0, errs.Usage("a job of %d GPUs does not fit network sipac r=%d levels=%d: it has %d CUs", p, r, l, n)
		}
		return r, l, nil
	case c.Radix != 0:
		r = c.Radix
		for l = 1; pow(r, l) < p; l++ {
		}
		if pow(r, l) != p || l > MaxLevels {
			return 0, 0, errs.Usage("network sipac: %d CUs is not r^L for r = %d with L ≤ %d (nearest: %s); give that many GPUs or levels=",
				p, r, MaxLevels, nearest(p, []int{r}))
		}
		return r, l, nil
	case c.Levels != 0:
		l = c.Levels
		if r = root(p, l); r < 2 || pow(r, l) != p || r > MaxRadix {
			return 0, 0, errs.Usage("network sipac: %d CUs is not r^%d for a whole radix 2 ≤ r ≤ %d (nearest: %s); give that many GPUs or r=",
				p, l, MaxRadix, nearestLevels(p, l))
		}
		return r, l, nil
	}
	for l = 1; l <= AutoMaxLevels; l++ {
		if r = root(p, l); r >= 2 && r <= AutoMaxRadix && pow(r, l) == p {
			return r, l, nil
		}
	}
	return 0, 0, errs.Usage("network sipac: %d CUs is not r^L for any r ≤ %d and L ≤ %d (the paper's limits, §VI-A-1); nearest: %s; or give r= and levels=",
		p, AutoMaxRadix, AutoMaxLevels, nearest(p, nil))
}

// pow is r^l (saturating well above any job).
func pow(r, l int) int {
	n := 1
	for range l {
		if n > 1<<40 {
			return n
		}
		n *= r
	}
	return n
}

// root is the whole l-th root of p, rounded to nearest.
func root(p, l int) int { return int(math.Round(math.Pow(float64(p), 1/float64(l)))) }

// nearest names the sizes r^L next to p, below and above, for radices rs (nil: every r ≤ 32,
// L ≤ 3, the paper's limits).
func nearest(p int, rs []int) string {
	maxL := MaxLevels
	if rs == nil {
		maxL = AutoMaxLevels
		for r := 2; r <= AutoMaxRadix; r++ {
			rs = append(rs, r)
		}
	}
	var below, above string
	lo, hi := 0, 0
	for _, r := range rs {
		for l := 1; l <= maxL; l++ {
			if n := pow(r, l); n <= p && n > lo {
				lo, below = n, fmt.Sprintf("%d = %d^%d", n, r, l)
			} else if n >= p && (hi == 0 || n < hi) {
				hi, above = n, fmt.Sprintf("%d = %d^%d", n, r, l)
			}
		}
	}
	switch {
	case below != "" && above != "":
		return below + " or " + above
	case below != "":
		return below
	}
	return above
}

// nearestLevels names the sizes r^l next to p.
func nearestLevels(p, l int) string {
	r := max(2, int(math.Floor(math.Pow(float64(p), 1/float64(l)))))
	for r > 2 && pow(r, l) > p {
		r--
	}
	for pow(r+1, l) <= p {
		r++
	}
	if pow(r, l) > p {
		return fmt.Sprintf("%d = %d^%d", pow(r, l), r, l)
	}
	return fmt.Sprintf("%d = %d^%d or %d = %d^%d", pow(r, l), r, l, pow(r+1, l), r+1, l)
}

// LinkRate is B, one level's link: w·u, or the per-CU bandwidth over the L links.
func (c *Config) LinkRate(l int) units.BytesPerSecond {
	if c.Lambdas > 0 {
		return units.Gbps(float64(c.Lambdas) * c.LambdaGbit)
	}
	return units.Tbps(c.NodeTbps) / units.BytesPerSecond(l)
}

// Spec registers the model.
func Spec() network.Spec {
	return network.Spec{
		Name:      Name,
		Summary:   "SiPAC: BCube-like photonic network of r-port microring WSSs, L ports per CU, SiPCO all-reduce (fabric=bcube: the electronic BCube)",
		Source:    "[P] Wu et al., SiPAC (JLT 2023) §III, §V, Tables I–III",
		NewConfig: func() network.Config { return DefaultConfig() },
		New:       build,
	}
}

// BCubeSpec registers the electronic BCube (Guo et al. 2009; SiPAC's baseline, §VI-A-1) as a
// network of its own: SiPAC's graph with fabric=bcube (packet switches, switch_ns each), so that
// --net bcube works in every command. Its models report the name "bcube".
func BCubeSpec() network.Spec {
	return network.Spec{
		Name:    FabricBCube,
		Summary: "electronic BCube(r, L): SiPAC's graph of r-port packet switches, L ports per server, server-relayed multi-hop (SiPAC's baseline; same parameters as sipac with fabric=bcube)",
		Source:  "[P] Guo et al., BCube (SIGCOMM 2009); SiPAC §VI-A-1 baseline",
		NewConfig: func() network.Config {
			c := DefaultConfig()
			c.Fabric = FabricBCube
			return c
		},
		New: build,
	}
}

func build(cfg network.Config, env network.Env) (network.Model, error) {
	c := cfg.(*Config)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if env.GPUs < 2 && (c.Radix == 0 || c.Levels == 0) {
		return nil, errs.Usage("network sipac: a job of %d GPU; give ≥ 2 GPUs, or r= and levels=", env.GPUs)
	}
	r, l, err := c.Size(env.GPUs)
	if err != nil {
		return nil, err
	}
	g, err := c.Graph(r, l)
	if err != nil {
		return nil, err
	}
	algs := algorithms(r)
	choice, _ := collective.ParseFor(c.Strategy, algs)
	return fabric.NewModel(g, env, fabric.Options{Name: c.Fabric, Routing: fabric.Split, Choice: choice,
		Offer: func(op network.Op) []collective.Algorithm { return algs }})
}

// Graph is the BCube(r, L) graph (built once per shape; fabric.Cached).
func (c *Config) Graph(r, l int) (*fabric.Graph, error) {
	key := graphKey{fabric: c.Fabric, account: c.Accounting, r: r, l: l, rate: c.LinkRate(l), hop: c.HopUs, sw: c.SwitchNs}
	if c.Fabric == FabricSiPAC {
		key.sw = 0
	}
	return fabric.Cached(key, func() (*fabric.Graph, error) { return key.build() })
}

type graphKey struct {
	fabric, account string
	r, l            int
	rate            units.BytesPerSecond
	hop, sw         float64
}

// build lays out the graph. CU x has digits x_k = ⌊x/r^k⌋ mod r; the level-k WSS of x joins the
// r CUs that differ from x in digit k only, and is node p + k·r^(L−1) + (x without digit k).
//
//   - paper accounting (and bcube): CU ↔ WSS links at B, half a hop's latency each way, so a
//     CU→WSS→CU hop costs hop_us (bcube adds switch_ns at the switch); a CU's r − 1 flows of one
//     level share its link B.
//   - physical accounting: the WSS is transparent and each CU pair of a level has its own
//     wavelength group at b = B/r: a direct link per pair, hop_us each.
//
// Multi-hop traffic is relayed by the CUs (server-centric, as BCube; reference/sipac.md §7.15).
func (k graphKey) build() (*fabric.Graph, error) {
	p := pow(k.r, k.l)
	hop := units.Us(k.hop)
	b := fabric.NewBuilder(p, 0)
	if k.account == AccountPhysical && k.fabric == FabricSiPAC {
		pair := k.rate / units.BytesPerSecond(k.r)
		for x := 0; x < p; x++ {
			for lv, stride := 0, 1; lv < k.l; lv, stride = lv+1, stride*k.r {
				d := (x / stride) % k.r
				for e := 0; e < k.r; e++ {
					if e != d {
						b.Link(int32(x), int32(x+(e-d)*stride), fabric.Spec{Class: "wavelength group", Rate: pair, Latency: hop})
					}
				}
			}
		}
	} else {
		per := p / k.r
		first := b.Switches(k.l*per, units.Ns(k.sw))
		class := "WSS link"
		if k.fabric == FabricBCube {
			class = "switch link"
		}
		for x := 0; x < p; x++ {
			for lv, stride := 0, 1; lv < k.l; lv, stride = lv+1, stride*k.r {
				sw := first + int32(lv*per+x%stride+x/(stride*k.r)*stride)
				b.Duplex(int32(x), sw, fabric.Spec{Class: class, Rate: k.rate, Latency: hop / 2})
			}
		}
	}
	d := &dist{r: int32(k.r), l: int32(k.l), p: int32(p), direct: k.account == AccountPhysical && k.fabric == FabricSiPAC}
	g, err := b.Build(fabric.Endpoint{}, func(*fabric.Graph) (fabric.Distancer, error) { return d, nil })
	if err != nil {
		return nil, err
	}
	return g, g.SetSymmetry(d.symmetry(g))
}

// dist is BCube's distance: h digits apart is h hops (direct links) or 2h links (CU–WSS–CU); from
// a level-k WSS, 1 + 2·(digits other than k that differ).
type dist struct {
	r, l, p int32
	direct  bool
}

func (d *dist) Dist(u, t int32) int32 {
	if u < d.p {
		h := d.ham(u, t, -1)
		if d.direct {
			return h
		}
		return 2 * h
	}
	per := d.p / d.r
	i := u - d.p
	lv, idx := i/per, i%per
	// A CU of the switch: digit lv = 0, the others from idx.
	stride := int32(1)
	for range lv {
		stride *= d.r
	}
	x := idx%stride + idx/stride*stride*d.r
	return 1 + 2*d.ham(x, t, lv)
}

// ham counts the digits other than skip in which a and b differ.
func (d *dist) ham(a, b, skip int32) int32 {
	h := int32(0)
	for k := int32(0); k < d.l; k++ {
		if k != skip && a%d.r != b%d.r {
			h++
		}
		a, b = a/d.r, b/d.r
	}
	return h
}

// symmetry is the digit-wise translations x ↦ x + a (mod r per digit), which act freely and
// transitively on the CUs: one representative, and the links of one level and direction (and, on
// direct links, one digit offset) form one orbit of p links.
func (d *dist) symmetry(g *fabric.Graph) *fabric.Symmetry {
	links := g.Links()
	s := &fabric.Symmetry{Reps: []int32{0}, LinkOrbit: make([]int32, len(links)), Order: int(d.p), Radix: int(d.r)}
	per := d.p / d.r
	for i, ln := range links {
		var o int32
		switch {
		case d.direct: // level of the differing digit and the offset along it
			a, b, lv := ln.From, ln.To, int32(0)
			for a%d.r == b%d.r {
				a, b, lv = a/d.r, b/d.r, lv+1
			}
			o = lv*(d.r-1) + (b%d.r-a%d.r+d.r)%d.r - 1
		case ln.From < d.p: // up to a level's WSS
			o = (ln.To - d.p) / per
		default: // down from a level's WSS
			o = d.l + (ln.From-d.p)/per
		}
		s.LinkOrbit[i] = o
	}
	n := 2 * d.l
	if d.direct {
		n = d.l * (d.r - 1)
	}
	s.OrbitSize = make([]int32, n)
	for _, o := range s.LinkOrbit {
		s.OrbitSize[o]++
	}
	return s
}
