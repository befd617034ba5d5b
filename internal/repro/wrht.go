package repro

import (
	"fmt"
	"slices"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/network"
)

// WRHTDNN is one of the four DNNs of WRHT §5.1 with its parameter count; each all-reduces its
// float32 gradient, d = 4 B × params (§5.1; reference/wrht.md A7).
type WRHTDNN struct {
	Name   string
	Params float64
}

// Bytes is the DNN's gradient, d.
func (d WRHTDNN) Bytes() units.Bytes { return units.Bytes(4 * d.Params) }

// WRHTDNNs are §5.1's BEiT-L (307M), VGG16 (138M), AlexNet (62.3M) and ResNet-50 (25M), in the
// paper's order.
var WRHTDNNs = []WRHTDNN{{"BEiT-L", 307e6}, {"VGG16", 138e6}, {"AlexNet", 62.3e6}, {"ResNet-50", 25e6}}

// The WRHT step rules (reference/wrht.md A3): exact, 2k−1 steps when the last all-to-all fits
// in w wavelengths (§4.1–4.2, Table 1, Fig. 2); lemma, always 2k (Lemma 1, Theorem 1).
const (
	RuleExact = "exact"
	RuleLemma = "lemma"
)

// WRHTRules are both, the network's default first.
var WRHTRules = []string{RuleExact, RuleLemma}

// WRHTTable2A is Table 2's per-step reconfiguration a (µs).
const WRHTTable2A = 25

// wrhtPrice prices an all-reduce of d over all n members of a network choice, without
// reductions (the paper prices none: Eq. 6, SimGrid).
func wrhtPrice(ch job.NetworkChoice, n int, d units.Bytes) (network.Cost, error) {
	m, _, err := ch.Build(network.Env{GPUs: n})
	if err != nil {
		return network.Cost{}, err
	}
	return m.Price(network.Collective{Op: network.AllReduce, Bytes: d, Group: network.Group{Size: n, Stride: 1}, DType: dtype.FP32})
}

// Optical is the WDM ring (Table 2) running strategy st with the net params given.
func Optical(st string, params ...string) job.NetworkChoice {
	return job.NetworkChoice{Name: "wdmring", Params: append([]string{"strategy=" + st}, params...)}
}

// Electrical is the wrht-electrical preset (Table 2's fat tree of 32-port routers, 40 Gb/s, 25 µs
// per router) running strategy st for n hosts; beyond 512 hosts a non-blocking tree of 32-port
// routers needs a third level (reference/wrht.md A13).
func Electrical(st string, n int) job.NetworkChoice {
	ch := job.NetworkChoice{Preset: "wrht-electrical", Params: []string{"strategy=" + st}}
	if n > 512 {
		ch.Params = append(ch.Params, fmt.Sprintf("endpoints=%d", n), "levels=3")
	}
	return ch
}

// WRHTSteps are the all-reduce steps of Table 1 (N = 1,024, w = 64; H-Ring h = 5, WRHT m = 129)
// and of Fig. 2's example (N = 15, w = 2, WRHT m = 5), as the WDM ring prices them.
type WRHTStepsResult struct {
	Ring, HRing, BT int
	WRHT            map[string]int // per rule
	Fig2BT          int
	Fig2WRHT        map[string]int // per rule
}

// WRHTSteps counts them once.
var WRHTSteps = memo(func() (WRHTStepsResult, error) {
	out := WRHTStepsResult{WRHT: map[string]int{}, Fig2WRHT: map[string]int{}}
	steps := func(n, w int, st string, params ...string) (int, error) {
		c, err := wrhtPrice(Optical(st, append([]string{fmt.Sprintf("wavelengths=%d", w)}, params...)...), n, 100e6)
		return int(c.Steps), err
	}
	var err error
	for _, s := range []struct {
		dst   *int
		n, w  int
		st    string
		param []string
	}{{&out.Ring, 1024, 64, "ring", nil}, {&out.HRing, 1024, 64, "hring", nil}, {&out.BT, 1024, 64, "tree", nil}, {&out.Fig2BT, 15, 2, "tree", nil}} {
		if *s.dst, err = steps(s.n, s.w, s.st); err != nil {
			return out, err
		}
	}
	for _, rule := range WRHTRules {
		if out.WRHT[rule], err = steps(1024, 64, "wrht", "step_rule="+rule); err != nil {
			return out, err
		}
		if out.Fig2WRHT[rule], err = steps(15, 2, "wrht", "step_rule="+rule); err != nil {
			return out, err
		}
	}
	return out, nil
})

// WRHTSweep is one of Figs. 4–7's sweeps: each series' all-reduce time (s) per DNN (WRHTDNNs'
// order) and per X (the swept w, N or m′).
type WRHTSweep struct {
	X     []float64
	Times map[string][][]float64 // series → [DNN][X]
	// RefX is the X index of the paper's normalisation: WRHT (exact rule) of ResNet-50 there
	// (Figs. 5–7), or of each DNN itself (PerDNN, Fig. 4).
	RefX   int
	PerDNN bool
}

// The sweeps' series: WRHT under each rule, the optical baselines O-Ring, H-Ring (h = 5,
// Ueno–Yokota sizes) and BT, and Fig. 7's electrical E-Ring and E-RD (full-vector recursive
// doubling, and Rabenseifner's halving/doubling: A9).
const (
	SeriesWRHTExact = "wrht exact"
	SeriesWRHTLemma = "wrht lemma"
	SeriesORing     = "ring"
	SeriesHRing     = "hring"
	SeriesBT        = "tree"
	SeriesERing     = "e-ring"
	SeriesERD       = "e-rd"
	SeriesERHD      = "e-rhd"
)

// WRHTSeries is a rule's WRHT series.
func WRHTSeries(rule string) string { return "wrht " + rule }

// Norm is series' time for DNN i at X index j in the paper's normalisation: divided by WRHT's
// (exact rule, the network's default) at X index RefX, of ResNet-50 or (PerDNN) of DNN i.
func (s WRHTSweep) Norm(series string, i, j int) float64 {
	ref := len(WRHTDNNs) - 1 // ResNet-50
	if s.PerDNN {
		ref = i
	}
	return s.Times[series][i][j] / s.Times[SeriesWRHTExact][ref][s.RefX]
}

// Reduction is the mean over every DNN and X of the per-point reductions 1 − T_a/T_b, in percent
// (the paper's "on average", read as in reference/wrht.md A6).
func (s WRHTSweep) Reduction(a, b string) float64 {
	var sum float64
	n := 0
	for i := range s.Times[a] {
		for j := range s.Times[a][i] {
			sum += 1 - s.Times[a][i][j]/s.Times[b][i][j]
			n++
		}
	}
	return 100 * sum / float64(n)
}

// sweep prices every DNN at every X for each series' network choice at that X.
func sweep(xs []int, series map[string]func(x int) (job.NetworkChoice, int)) (WRHTSweep, error) {
	out := WRHTSweep{Times: map[string][][]float64{}}
	for _, x := range xs {
		out.X = append(out.X, float64(x))
	}
	for name, at := range series {
		out.Times[name] = make([][]float64, len(WRHTDNNs))
		for _, x := range xs {
			ch, n := at(x)
			for i, d := range WRHTDNNs {
				c, err := wrhtPrice(ch, n, d.Bytes())
				if err != nil {
					return out, fmt.Errorf("%s at %d: %w", name, x, err)
				}
				out.Times[name][i] = append(out.Times[name][i], float64(c.Total))
			}
		}
	}
	return out, nil
}

// WRHTOptical is the optical comparison of Figs. 5 and 6 with a per-step reconfiguration of a
// µs: WRHT (both rules, m = 2w+1: reference/wrht.md A15), O-Ring, H-Ring and BT (only the
// series named, when any is), over w at N = 1,024 (byW) or over N at w = 64.
func WRHTOptical(xs []int, byW bool, a float64, only ...string) (WRHTSweep, error) {
	at := func(st string, params ...string) func(int) (job.NetworkChoice, int) {
		return func(x int) (job.NetworkChoice, int) {
			n, w := x, 64
			if byW {
				n, w = 1024, x
			}
			return Optical(st, append([]string{fmt.Sprintf("wavelengths=%d", w), fmt.Sprintf("reconfig_us=%g", a)}, params...)...), n
		}
	}
	series := map[string]func(int) (job.NetworkChoice, int){
		SeriesWRHTExact: at("wrht", "step_rule="+RuleExact), SeriesWRHTLemma: at("wrht", "step_rule="+RuleLemma),
		SeriesORing: at("ring"), SeriesHRing: at("hring"), SeriesBT: at("tree"),
	}
	if len(only) > 0 {
		for name := range series {
			if !slices.Contains(only, name) {
				delete(series, name)
			}
		}
	}
	return sweep(xs, series)
}

// Fig. 5's wavelengths (N = 1,024), Fig. 6's and Fig. 7's ring sizes (Sec. 5.4–5.6), Fig. 4's
// group limits m′ (Sec. 5.3: WRHT_0 … WRHT_3).
var (
	WRHTFig5W = []int{4, 16, 64, 256}
	WRHTFig6N = []int{1024, 2048, 3072, 4096}
	WRHTFig7N = []int{128, 256, 512, 1024}
	WRHTFig4M = []int{17, 33, 65, 129}
)

// WRHTFig5 and WRHTFig6 are Figs. 5 and 6 with Table 2's a = 25 µs.
// Fig. 5 is normalised by WRHT in ResNet-50 with 256 wavelengths, Fig. 6 by its first result
// (N = 1,024).
var (
	WRHTFig5 = memo(func() (WRHTSweep, error) {
		s, err := WRHTOptical(WRHTFig5W, true, WRHTTable2A)
		s.RefX = len(WRHTFig5W) - 1
		return s, err
	})
	WRHTFig6 = memo(func() (WRHTSweep, error) { return WRHTOptical(WRHTFig6N, false, WRHTTable2A) })
)

// WRHTFig7 is Fig. 7: WRHT (both rules) and O-Ring on the optical ring (w = 64), E-Ring and E-RD
// on the electrical fat tree, N = 128 … 1,024; normalised by WRHT in ResNet-50 at N = 128 (the
// paper does not say which N, reference/wrht.md §4.3).
var WRHTFig7 = memo(func() (WRHTSweep, error) {
	opt := func(st string, params ...string) func(int) (job.NetworkChoice, int) {
		return func(n int) (job.NetworkChoice, int) { return Optical(st, params...), n }
	}
	el := func(st string) func(int) (job.NetworkChoice, int) {
		return func(n int) (job.NetworkChoice, int) { return Electrical(st, n), n }
	}
	return sweep(WRHTFig7N, map[string]func(int) (job.NetworkChoice, int){
		SeriesWRHTExact: opt("wrht", "step_rule="+RuleExact), SeriesWRHTLemma: opt("wrht", "step_rule="+RuleLemma),
		SeriesORing: opt("ring"), SeriesERing: el("ring"), SeriesERD: el("rd"), SeriesERHD: el("rhd"),
	})
})

// WRHTFig4 is Fig. 4: WRHT at N = 1,024, w = 64 with the group capped at m′ = 17 … 129 (the
// optical constraints' limit, Sec. 5.3), both rules; normalised by WRHT_3 (exact rule) in each
// DNN.
var WRHTFig4 = memo(func() (WRHTSweep, error) {
	at := func(rule string) func(int) (job.NetworkChoice, int) {
		return func(m int) (job.NetworkChoice, int) {
			return Optical("wrht", "step_rule="+rule, fmt.Sprintf("max_group=%d", m)), 1024
		}
	}
	s, err := sweep(WRHTFig4M, map[string]func(int) (job.NetworkChoice, int){
		SeriesWRHTExact: at(RuleExact), SeriesWRHTLemma: at(RuleLemma),
	})
	s.RefX, s.PerDNN = len(WRHTFig4M)-1, true
	return s, err
})

func init() { register(wrhtRows) }

// pp is a tolerance of p percentage points on a percentage, relative to it.
func pp(p, paper float64) float64 { return p / paper }

func wrhtRows() []Row {
	steps := func(get func(WRHTStepsResult) int) func() (float64, error) {
		return pick(WRHTSteps, func(r WRHTStepsResult) float64 { return float64(get(r)) })
	}
	reduction := func(f func() (WRHTSweep, error), a, b string) func() (float64, error) {
		return pick(f, func(s WRHTSweep) float64 { return s.Reduction(a, b) })
	}
	// A step count is an integer: ±0.01% admits no other (the largest is 2,046).
	const exact = 1e-4
	// The binary-tree averages are step ratios (BT and WRHT both send d per step, so d and a
	// cancel): ±0.2 pp (reference/wrht.md §5.4). The others are means over 16 points of a model
	// that is not the paper's simulator: ±5 pp.
	const btPP, avgPP = 0.2, 5
	var rows []Row
	for _, c := range []struct {
		id, cite, what string
		paper          float64
		get            func(WRHTStepsResult) int
	}{
		{"table1-ring-steps", "Table 1", "Ring all-reduce steps, 2(N−1), N = 1,024", 2046, func(r WRHTStepsResult) int { return r.Ring }},
		{"table1-hring-steps", "Table 1", "H-Ring all-reduce steps, N = 1,024, w = 64, m = 5 (416.6 rounded up)", 417, func(r WRHTStepsResult) int { return r.HRing }},
		{"table1-bt-steps", "Table 1", "binary-tree all-reduce steps, 2⌈log2 N⌉, N = 1,024", 20, func(r WRHTStepsResult) int { return r.BT }},
		{"fig2-bt-steps", "Fig. 2a, §3.3", "binary-tree all-reduce steps, N = 15, w = 2", 8, func(r WRHTStepsResult) int { return r.Fig2BT }},
	} {
		rows = append(rows, Row{ID: "wrht/" + c.id, Seed: "wrht", Cite: c.cite, What: c.what, Paper: c.paper, Unit: "steps", Tol: exact, Value: steps(c.get)})
	}
	// WRHT's steps under both rules: Table 1 and Fig. 2 follow the exact rule.
	for _, c := range []struct {
		id, cite, what, why string
		get                 func(WRHTStepsResult) map[string]int
	}{
		{"table1-wrht-steps", "Table 1", "WRHT all-reduce steps, N = 1,024, w = 64, m = 129 (k = 2 levels; the all-to-all of m* = 8 needs ⌈8²/8⌉ = 8 ≤ 64 wavelengths)",
			"the lemma rule (Lemma 1, Theorem 1: 2⌈log_m N⌉) never takes the final all-to-all, 2k = 4 steps; Table 1 prints the exact rule's 2k−1 (reference/wrht.md A3)",
			func(r WRHTStepsResult) map[string]int { return r.WRHT }},
		{"fig2-wrht-steps", "Fig. 2b, §3.3", "WRHT all-reduce steps, N = 15, w = 2 (3 groups of 5, an all-to-all of 3, the broadcast)",
			"the lemma rule gathers to one representative instead of the all-to-all of three, 2k = 4 steps (reference/wrht.md A3)",
			func(r WRHTStepsResult) map[string]int { return r.Fig2WRHT }},
	} {
		for _, rule := range WRHTRules {
			r := Row{ID: "wrht/" + c.id + "-" + rule, Seed: "wrht", Cite: c.cite, What: c.what + ", " + rule + " rule", Paper: 3, Unit: "steps", Tol: exact,
				Value: steps(func(r WRHTStepsResult) int { return c.get(r)[rule] })}
			if rule == RuleLemma {
				r.Deviation, r.Known = c.why, [2]float64{3.5, 4.5}
			}
			rows = append(rows, r)
		}
	}
	// The averages (§5.4–5.6), each under both rules; only the rule the reference finds
	// reproducing a number passes, the other is its documented deviation.
	type avg struct {
		id, cite, what string
		sweep          func() (WRHTSweep, error)
		b              string
		paper, tol     float64
		dev            map[string]string
		known          map[string][2]float64
	}
	const ringWhy = "with Table 2's a = 25 µs per step O-Ring moves 2d/B in all and WRHT 3–4 d/B, so WRHT gains little on the ring-based algorithms, or loses; each average needs its own per-step a (V1 164/213 µs, V7 113/153 µs, exact/lemma) and no single a meets V1, V2, V7 and V8 (reference/wrht.md §5.4)"
	const electricalWhy = "ddlest's fat tree is routed and non-blocking: it carries the ring at full rate without the routers' congestion the paper's SimGrid runs have (reference/wrht.md §5.4, A9, A13)"
	for _, v := range []avg{
		{"v3-bt-fig6", "§5.5, Fig. 6 (V3)", "WRHT's mean reduction against BT, N = 1,024 … 4,096, w = 64, four DNNs", WRHTFig6, SeriesBT, 82.22, pp(btPP, 82.22),
			map[string]string{RuleExact: "the exact rule's 3 steps at N ≤ 2,048 against BT's 20–22 give 84.51%; the lemma rule's 82.12% meets it (reference/wrht.md §5.4)"},
			map[string][2]float64{RuleExact: {84.4, 84.6}}},
		{"v9-bt-fig5", "§5.4, Fig. 5 (V9)", "WRHT's mean reduction against BT, N = 1,024, w = 4 … 256, four DNNs", WRHTFig5, SeriesBT, 75, pp(btPP, 75),
			map[string]string{RuleExact: "the exact rule's 7, 4, 3, 3 steps against BT's 20 give 78.75%; the lemma rule's 8, 4, 4, 4 give 75.00% (reference/wrht.md §5.4)"},
			map[string][2]float64{RuleExact: {78.7, 78.8}}},
		{"v1-ring-fig6", "§5.5, Fig. 6 (V1)", "WRHT's mean reduction against O-Ring, N = 1,024 … 4,096, w = 64, four DNNs", WRHTFig6, SeriesORing, 65.23, pp(avgPP, 65.23),
			map[string]string{RuleExact: ringWhy, RuleLemma: ringWhy}, map[string][2]float64{RuleExact: {6, 6.5}, RuleLemma: {-10, -9.4}}},
		{"v2-hring-fig6", "§5.5, Fig. 6 (V2)", "WRHT's mean reduction against H-Ring (h = 5), N = 1,024 … 4,096, w = 64, four DNNs", WRHTFig6, SeriesHRing, 43.81, pp(avgPP, 43.81),
			map[string]string{RuleExact: ringWhy, RuleLemma: ringWhy}, map[string][2]float64{RuleExact: {-31.5, -30.7}, RuleLemma: {-51.7, -50.7}}},
		{"v7-ring-fig5", "§5.4, Fig. 5 (V7)", "WRHT's mean reduction against O-Ring, N = 1,024, w = 4 … 256, four DNNs", WRHTFig5, SeriesORing, 13.74, pp(avgPP, 13.74),
			map[string]string{RuleExact: ringWhy, RuleLemma: ringWhy}, map[string][2]float64{RuleExact: {-50.3, -49.4}, RuleLemma: {-76.8, -75.8}}},
		{"v8-hring-fig5", "§5.4, Fig. 5 (V8)", "WRHT's mean reduction against H-Ring (h = 5), N = 1,024, w = 4 … 256, four DNNs", WRHTFig5, SeriesHRing, 9.29, pp(avgPP, 9.29),
			map[string]string{RuleExact: ringWhy, RuleLemma: ringWhy}, map[string][2]float64{RuleExact: {-50.6, -49.6}, RuleLemma: {-78, -77}}},
		{"v4-ering-fig7", "§5.6, Fig. 7 (V4)", "WRHT's mean reduction against E-Ring (electrical fat tree), N = 128 … 1,024, four DNNs", WRHTFig7, SeriesERing, 61.23, pp(avgPP, 61.23),
			map[string]string{RuleExact: electricalWhy, RuleLemma: electricalWhy}, map[string][2]float64{RuleExact: {11.7, 12.7}, RuleLemma: {-10.4, -9.4}}},
		{"v5-erd-fig7", "§5.6, Fig. 7 (V5)", "WRHT's mean reduction against E-RD (full-vector recursive doubling on the fat tree), N = 128 … 1,024, four DNNs", WRHTFig7, SeriesERD, 55.51, pp(avgPP, 55.51),
			// The lemma rule meets it (59.3%) although E-Ring (V4) does not: full-vector recursive
			// doubling moves log2 N buffers, as slow as the paper's congested E-RD.
			map[string]string{RuleExact: electricalWhy + "; full-vector recursive doubling moves log2 N buffers, so WRHT's 2–3 steps gain more than the paper's (Rabenseifner's halving/doubling, the other reading of E-RD, is faster than WRHT there: −36.7%)"},
			map[string][2]float64{RuleExact: {67.2, 68.2}}},
	} {
		for _, rule := range WRHTRules {
			r := Row{ID: fmt.Sprintf("wrht/%s-%s", v.id, rule), Seed: "wrht", Cite: v.cite,
				What: v.what + ", " + rule + " rule", Paper: v.paper, Unit: "%", Tol: v.tol,
				Deviation: v.dev[rule], Known: v.known[rule], Value: reduction(v.sweep, WRHTSeries(rule), v.b)}
			rows = append(rows, r)
		}
	}
	rows = append(rows, Row{ID: "wrht/v6-oring-ering-fig7", Seed: "wrht", Cite: "§5.6, Fig. 7 (V6)",
		What: "O-Ring's mean reduction against E-Ring, N = 128 … 1,024, four DNNs", Paper: 48.74, Unit: "%", Tol: pp(avgPP, 48.74),
		Deviation: electricalWhy, Known: [2]float64{24.6, 25.6}, Value: reduction(WRHTFig7, SeriesORing, SeriesERing)})
	// Fig. 4: "the communication time of WRHT_2 and WRHT_3 are only half of WRHT_0": a reading of
	// a bar chart, ±10%.
	for _, rule := range WRHTRules {
		known := map[string][2]float64{RuleExact: {0.59, 0.61}, RuleLemma: {0.66, 0.67}}[rule]
		rows = append(rows, Row{ID: "wrht/fig4-half-" + rule, Seed: "wrht", Cite: "§5.3, Fig. 4",
			What: "WRHT_3 (m′ = 129) over WRHT_0 (m′ = 17), N = 1,024, w = 64, BEiT-L, " + rule + " rule", Paper: 0.5, Unit: "×", Tol: 0.1,
			Deviation: "every step moves d, so the ratio is the steps' 3/5 (exact rule) or 4/6 (lemma rule); neither is half (reference/wrht.md A11)",
			Known:     known, Value: pick(WRHTFig4, func(s WRHTSweep) float64 {
				t := s.Times[WRHTSeries(rule)][0]
				return t[3] / t[0]
			})})
	}
	return rows
}
