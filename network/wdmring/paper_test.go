package wdmring

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// The four DNNs of WRHT §5.1 with their parameter counts; d = 4 B × params (float32, §5.1 and
// reference/wrht.md A7).
var dnns = []struct {
	name   string
	params float64
}{{"BEiT-L", 307e6}, {"VGG16", 138e6}, {"AlexNet", 62.3e6}, {"ResNet50", 25e6}}

type point struct {
	n, w int
	d    units.Bytes
	dnn  string
}

// fig6 is the grid of V1–V3 (Sec. 5.5): N ∈ {1,024 … 4,096}, w = 64, the four DNNs.
func fig6() []point {
	var ps []point
	for _, n := range []int{1024, 2048, 3072, 4096} {
		for _, m := range dnns {
			ps = append(ps, point{n, 64, units.Bytes(4 * m.params), m.name})
		}
	}
	return ps
}

// fig5 is the grid of V7–V9 (Sec. 5.4): N = 1,024, w ∈ {4, 16, 64, 256}, the four DNNs.
func fig5() []point {
	var ps []point
	for _, w := range []int{4, 16, 64, 256} {
		for _, m := range dnns {
			ps = append(ps, point{1024, w, units.Bytes(4 * m.params), m.name})
		}
	}
	return ps
}

// timeAt prices an all-reduce of p with strategy st, per-step reconfiguration a (µs), the step
// rule, m = 2w+1 (reference/wrht.md A15), H-Ring h = 5, no reductions (the paper prices none).
func timeAt(t testing.TB, p point, st, rule string, a float64) float64 {
	return float64(allReduce(t, p.n, p.d, st, func(c *Config) {
		c.Wavelengths, c.StepRule, c.ReconfigUs = p.w, rule, a
	}).Total)
}

// reduction is the mean over the grid of the per-point reductions 1 − T_WRHT/T_base, in percent
// (the paper's "on average", read as in reference/wrht.md A6).
func reduction(t testing.TB, ps []point, base, rule string, a float64) float64 {
	var sum float64
	for _, p := range ps {
		sum += 1 - timeAt(t, p, "wrht", rule, a)/timeAt(t, p, base, rule, a)
	}
	return 100 * sum / float64(len(ps))
}

// The binary-tree averages are step ratios (both send S per step): V3 82.22% (Fig. 6 grid) and
// V9 75% (Fig. 5 grid) within 0.2 pp under the lemma rule (82.12, 75.00); the exact rule gives
// 84.51 and 78.75 (reference/wrht.md §5.4).
func TestBinaryTreeAverages(t *testing.T) {
	for _, tc := range []struct {
		what, rule  string
		grid        []point
		want, paper float64
	}{
		{"V3", ruleLemma, fig6(), 82.12, 82.22},
		{"V9", ruleLemma, fig5(), 75.00, 75},
		{"V3", ruleExact, fig6(), 84.51, 82.22},
		{"V9", ruleExact, fig5(), 78.75, 75},
	} {
		got := reduction(t, tc.grid, "tree", tc.rule, 25)
		if math.Abs(got-tc.want) > 0.05 {
			t.Errorf("%s (%s rule): %.2f%%, the step counts give %.2f%%", tc.what, tc.rule, got, tc.want)
		}
		if tc.rule == ruleLemma && math.Abs(got-tc.paper) > 0.2 {
			t.Errorf("%s (lemma rule): %.2f%%, the paper %.2f%% (±0.2 pp)", tc.what, got, tc.paper)
		}
	}
}

// V1 65.23% (vs Ring, Fig. 6 grid), V2 43.81% (vs H-Ring), V7 13.74% (vs Ring, Fig. 5 grid) and V8
// 9.29% (vs H-Ring) cannot follow from Table 2's a = 25 µs: O-Ring moves 2S/B in all and WRHT
// 3–4 S/B, so with a small per-step overhead WRHT barely beats O-Ring, and loses under the lemma
// rule. reference/wrht.md §5.4 derives V1 = 6.25% (exact) and −9.7% (lemma); each of the four
// misses the paper by more than 20 pp.
func TestRingAveragesAtTable2(t *testing.T) {
	for _, tc := range []struct {
		rule string
		want float64
	}{{ruleExact, 6.25}, {ruleLemma, -9.7}} {
		if got := reduction(t, fig6(), "ring", tc.rule, 25); math.Abs(got-tc.want) > 0.1 {
			t.Errorf("V1 at a = 25 µs (%s): %.2f%%, reference/wrht.md §5.4 derives %.2f%%", tc.rule, got, tc.want)
		}
	}
	for _, v := range paperAverages {
		got := reduction(t, v.grid(), v.base, ruleExact, 25)
		t.Logf("%s vs %s at a = 25 µs: ddlest %.2f%%, paper %.2f%%", v.name, v.base, got, v.paper)
		if math.Abs(got-v.paper) < 20 {
			t.Errorf("%s: %.2f%% is within 20 pp of the paper's %.2f%%: the deviation documented in doc.go no longer holds", v.name, got, v.paper)
		}
	}
}

var paperAverages = []struct {
	name, base string
	grid       func() []point
	paper      float64
}{
	{"V1", "ring", fig6, 65.23},
	{"V2", "hring", fig6, 43.81},
	{"V7", "ring", fig5, 13.74},
	{"V8", "hring", fig5, 9.29},
}

// calibrate finds the per-step a (µs) at which the mean reduction against base meets target
// (bisection: a larger a favours the algorithm with fewer steps, WRHT).
func calibrate(t testing.TB, ps []point, base, rule string, target float64) float64 {
	lo, hi := 0.0, 5000.0
	if reduction(t, ps, base, rule, hi) < target {
		return math.Inf(1)
	}
	for range 30 {
		mid := (lo + hi) / 2
		if reduction(t, ps, base, rule, mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// The per-step overhead that meets each average alone (reference/wrht.md §5.4, paper's parameter
// counts, mean of per-point reductions): V1 164/213 µs and V7 113/153 µs, exact/lemma, ±5%; the
// a that meet V1, V2, V7 and V8 differ by more than 10%, so no single a meets them all.
func TestCalibratedOverhead(t *testing.T) {
	for _, tc := range []struct {
		v, rule string
		want    float64
	}{{"V1", ruleExact, 164}, {"V1", ruleLemma, 213}, {"V7", ruleExact, 113}, {"V7", ruleLemma, 153}} {
		for _, v := range paperAverages {
			if v.name != tc.v {
				continue
			}
			a := calibrate(t, v.grid(), v.base, tc.rule, v.paper)
			if math.Abs(a-tc.want) > 0.05*tc.want {
				t.Errorf("%s (%s rule): a = %.0f µs meets %.2f%%, reference/wrht.md §5.4 finds %.0f µs", tc.v, tc.rule, a, v.paper, tc.want)
			}
		}
	}
	lo, hi := math.Inf(1), 0.0
	for _, v := range paperAverages {
		a := calibrate(t, v.grid(), v.base, ruleExact, v.paper)
		t.Logf("%s (exact rule): a = %.0f µs", v.name, a)
		lo, hi = min(lo, a), max(hi, a)
	}
	if hi < 1.1*lo {
		t.Errorf("one a in [%.0f, %.0f] µs meets V1, V2, V7 and V8: the paper's averages would be consistent", lo, hi)
	}
}

// At a = 200 µs (lemma rule), inside the window reference/wrht.md §5.4 finds for both claims, the
// paper's qualitative results hold: at w = 4 WRHT is slower than Ring only for BEiT-L and VGG16
// (Fig. 5(b)); on Fig. 6's grid BT is the slowest algorithm for BEiT-L and VGG16 at every N but
// not for ResNet-50, and WRHT stays within 10% from N = 1,024 to 4,096 ("remains nearly
// constant").
func TestQualitativeClaims(t *testing.T) {
	const a = 200
	for _, m := range dnns {
		p := point{1024, 4, units.Bytes(4 * m.params), m.name}
		slower := timeAt(t, p, "wrht", ruleLemma, a) > timeAt(t, p, "ring", ruleLemma, a)
		if want := m.name == "BEiT-L" || m.name == "VGG16"; slower != want {
			t.Errorf("Fig. 5, w = 4, %s: WRHT slower than Ring %v, the paper %v", m.name, slower, want)
		}
	}
	first := map[string]float64{}
	for _, p := range fig6() {
		times := map[string]float64{}
		worst := ""
		for _, st := range []string{"wrht", "ring", "hring", "tree"} {
			times[st] = timeAt(t, p, st, ruleLemma, a)
			if worst == "" || times[st] > times[worst] {
				worst = st
			}
		}
		switch p.dnn {
		case "BEiT-L", "VGG16":
			if worst != "tree" {
				t.Errorf("Fig. 6, N = %d, %s: the slowest is %s, the paper BT", p.n, p.dnn, worst)
			}
		case "ResNet50":
			if worst == "tree" {
				t.Errorf("Fig. 6, N = %d, ResNet-50: BT is the slowest, the paper says it performs well", p.n)
			}
		}
		if f, ok := first[p.dnn]; !ok {
			first[p.dnn] = times["wrht"]
		} else if math.Abs(times["wrht"]/f-1) > 0.1 {
			t.Errorf("Fig. 6, %s: WRHT at N = %d is %.0f%% off N = 1,024's", p.dnn, p.n, 100*(times["wrht"]/f-1))
		}
	}
}

// Fig. 4 (N = 1,024, w = 64, the group capped by the optical constraints at m′ = 17, 33, 65, 129):
// the time "keeps decreasing and then keeps still" (5, 4, 3, 3 steps under the exact rule), the
// same for every DNN. The paper's "WRHT_2 and WRHT_3 are only half of WRHT_0" is 3/5 = 0.6 here
// (0.67 under the lemma rule): the deviation reference/wrht.md A11 documents.
func TestFig4GroupLimit(t *testing.T) {
	for _, m := range dnns {
		p := point{1024, 64, units.Bytes(4 * m.params), m.name}
		var times []float64
		for _, limit := range []int{17, 33, 65, 129} {
			times = append(times, float64(allReduce(t, p.n, p.d, "wrht", func(c *Config) { c.MaxGroup = limit }).Total))
		}
		if !(times[0] > times[1] && times[1] > times[2] && times[2] == times[3]) {
			t.Errorf("%s: WRHT_0…3 %v, want decreasing then equal", m.name, times)
		}
		if r := times[3] / times[0]; math.Abs(r-0.6) > 0.001 {
			t.Errorf("%s: WRHT_3/WRHT_0 = %.3f, the step counts give 3/5", m.name, r)
		}
	}
}

// Eqs. 7–9 cap the group: with P_m = P_p = 1 dB, P_pass = 0.125 dB and P_laser = 10 dBm, a
// lightpath may pass L_max ≤ 64 interfaces (1 + 64/8 + 1 = 10). At N = 1,024 two levels have
// L_max = m′, so m′ = 64: k = 2, m* = 16, ⌈16²/8⌉ = 32 ≤ 64 wavelengths, θ = 3 steps. With
// P_laser = 5 dBm (L_max ≤ 24) no group works: two levels need m′ ≥ 32 = L_max, more levels have
// L_max = m′^(k−1) ≥ 256; the configuration is infeasible (exit 3).
func TestInsertionLossGroup(t *testing.T) {
	if l := MaxLength(1024, 129); l != 129 {
		t.Errorf("Eq. 7, N = 1,024, m′ = 129: L_max %d, want 129", l)
	}
	if l := MaxLength(100, 129); l != 64 {
		t.Errorf("Eq. 7, one level of 100 in groups of 129: L_max %d, want ⌊129/2⌋ = 64", l)
	}
	set := func(laser float64) func(*Config) {
		return func(c *Config) { c.ModulatorDb, c.PenaltyDb, c.PassLossDb, c.LaserDbm = 1, 1, 0.125, laser }
	}
	c := newModel(t, 1024, set(10)).cfg
	pl, err := c.plan(1024)
	if err != nil || pl.M != 64 || pl.Theta != 3 {
		t.Errorf("budget of 64 interfaces: m = %d, θ = %d (%v); want 64, 3", pl.M, pl.Theta, err)
	}
	if cost := allReduce(t, 1024, 1e6, "wrht", set(10)); cost.Steps != 3 {
		t.Errorf("budget of 64 interfaces: %d steps, want 3", cost.Steps)
	}
	m := newModel(t, 1024, func(c *Config) { set(5)(c); c.Strategy = "wrht" })
	_, err = m.Price(network.Collective{Op: network.AllReduce, Bytes: 1e6, Group: network.Group{Size: 1024, Stride: 1}})
	if errs.ExitCode(err) != errs.ExitInfeasible || !strings.Contains(err.Error(), "insertion-loss budget") {
		t.Errorf("budget of 24 interfaces: %v, want infeasible", err)
	}
}

// Eqs. 11–13 cap the group by crosstalk. Hand count with P_laser = 0 dBm (1 mW), no loss
// (P_m = P_pass = 0), P_Tx = P_O = −30 dBm (1 µW) and P_Rx = −40 dBm (0.1 µW) per passed
// interface: SNR(L) = 1000 / (2 + 0.1·L). BER = ½e^(−SNR/4) < 1e-9 needs SNR > 4·ln(5e8) =
// 80.12, so L ≤ 104: BER(104) = ½e^(−80.645/4) = 8.8e-10, BER(105) = ½e^(−20) = 1.03e-9. At
// N = 1,024 two levels have L_max = m′, so m′ = 104: k = 2, m* = ⌈1024/104⌉ = 10,
// ⌈10²/8⌉ = 13 ≤ 64 wavelengths, θ = 3. Read in dB as Eq. 11 prints it, the SNR never exceeds
// 10·log10(1000/2) = 27 dB, far below 80: infeasible.
func TestCrosstalkGroup(t *testing.T) {
	set := func(c *Config) {
		c.LaserDbm, c.ModulatorDb, c.PassLossDb = 0, 0, 0
		c.BERMax, c.XtalkTxDbm, c.XtalkRxDbm, c.NoiseDbm = 1e-9, -30, -40, -30
	}
	c := newModel(t, 1024, set).cfg
	for _, tc := range []struct {
		l   int
		ber float64
	}{{104, 0.5 * math.Exp(-1000/12.4/4)}, {105, 0.5 * math.Exp(-20)}} {
		if got := c.BER(tc.l); math.Abs(got-tc.ber) > 1e-6*tc.ber {
			t.Errorf("BER after %d interfaces = %.4g, want %.4g", tc.l, got, tc.ber)
		}
	}
	pl, err := c.plan(1024)
	if err != nil || pl.M != 104 || pl.Theta != 3 {
		t.Errorf("crosstalk bound L ≤ 104: m = %d, θ = %d (%v); want 104, 3", pl.M, pl.Theta, err)
	}
	m := newModel(t, 1024, func(c *Config) { set(c); c.SNRScale = "db"; c.Strategy = "wrht" })
	_, err = m.Price(network.Collective{Op: network.AllReduce, Bytes: 1e6, Group: network.Group{Size: 1024, Stride: 1}})
	if errs.ExitCode(err) != errs.ExitInfeasible || !strings.Contains(err.Error(), "crosstalk bound") {
		t.Errorf("SNR in dB: %v, want infeasible (crosstalk bound)", err)
	}
	// With the insertion-loss budget of TestInsertionLossGroup (64 interfaces) too, the tighter wins.
	c = newModel(t, 1024, func(c *Config) {
		set(c)
		c.ModulatorDb, c.PenaltyDb, c.PassLossDb, c.LaserDbm = 1, 1, 0.125, 10
	}).cfg
	if pl, err := c.plan(1024); err != nil || pl.M != 64 {
		t.Errorf("loss budget 64 and crosstalk: m = %d (%v), want 64", pl.M, err)
	}
}

// Under best, a WRHT the loss budget forbids gives way to the other algorithms.
func TestInsertionLossBest(t *testing.T) {
	c := allReduce(t, 1024, 1e6, "best", func(c *Config) { c.ModulatorDb, c.PenaltyDb, c.PassLossDb, c.LaserDbm = 1, 1, 0.125, 5 })
	if c.Algorithm == "wrht" || c.Total <= 0 {
		t.Errorf("best with an infeasible WRHT: %+v", c)
	}
}
