package repro

import (
	"math"
	"testing"
)

// wrhtPaper is a row's published number, so that a test on the shared computations does not
// write it twice.
func wrhtPaper(t *testing.T, id string) float64 {
	t.Helper()
	rows, _ := Rows("wrht")
	for _, r := range rows {
		if r.ID == id {
			return r.Paper
		}
	}
	t.Fatalf("no row %s", id)
	return 0
}

// calibrate finds the per-step a (µs) at which WRHT's mean reduction against base over the
// grid of Fig. 5 (byW) or Fig. 6 meets target (bisection: a larger a favours the algorithm with
// fewer steps, WRHT).
func calibrate(t *testing.T, xs []int, byW bool, base, rule string, target float64) float64 {
	t.Helper()
	red := func(a float64) float64 {
		s, err := WRHTOptical(xs, byW, a, WRHTSeries(rule), base)
		if err != nil {
			t.Fatal(err)
		}
		return s.Reduction(WRHTSeries(rule), base)
	}
	lo, hi := 0.0, 5000.0
	if red(hi) < target {
		return math.Inf(1)
	}
	for range 20 {
		mid := (lo + hi) / 2
		if red(mid) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// The per-step overhead that meets each ring average alone (reference/wrht.md §5.4, the paper's
// parameter counts, mean of per-point reductions): V1 164/213 µs and V7 113/153 µs, exact/lemma,
// ±5% (the bisection is to 0.005 µs; the reference's figures are rounded to 1 µs of a separate
// script). The a that meet V1, V2, V7 and V8 under the exact rule differ by more than 10%: no
// single a meets them all, the cause the rows' deviations give.
func TestWRHTCalibratedOverhead(t *testing.T) {
	type avg struct {
		id, base string
		xs       []int
		byW      bool
	}
	v1 := avg{"wrht/v1-ring-fig6-exact", SeriesORing, WRHTFig6N, false}
	v7 := avg{"wrht/v7-ring-fig5-exact", SeriesORing, WRHTFig5W, true}
	for _, tc := range []struct {
		v    avg
		rule string
		want float64
	}{{v1, RuleExact, 164}, {v1, RuleLemma, 213}, {v7, RuleExact, 113}, {v7, RuleLemma, 153}} {
		a := calibrate(t, tc.v.xs, tc.v.byW, tc.v.base, tc.rule, wrhtPaper(t, tc.v.id))
		if math.Abs(a-tc.want) > 0.05*tc.want {
			t.Errorf("%s (%s rule): a = %.0f µs meets it, reference/wrht.md §5.4 finds %.0f µs", tc.v.id, tc.rule, a, tc.want)
		}
	}
	lo, hi := math.Inf(1), 0.0
	for _, v := range []avg{v1, {"wrht/v2-hring-fig6-exact", SeriesHRing, WRHTFig6N, false}, v7, {"wrht/v8-hring-fig5-exact", SeriesHRing, WRHTFig5W, true}} {
		a := calibrate(t, v.xs, v.byW, v.base, RuleExact, wrhtPaper(t, v.id))
		t.Logf("%s: a = %.0f µs", v.id, a)
		lo, hi = min(lo, a), max(hi, a)
	}
	if hi < 1.1*lo {
		t.Errorf("one a in [%.0f, %.0f] µs meets V1, V2, V7 and V8: the paper's averages would be consistent", lo, hi)
	}
}

// At a = 200 µs (lemma rule), inside the window reference/wrht.md §5.4 finds for both claims, the
// paper's qualitative results hold: at w = 4 WRHT is slower than Ring only for BEiT-L and VGG16
// (§5.4, Fig. 5(b)); on Fig. 6's grid BT is the slowest algorithm for BEiT-L and VGG16 at every
// N but not for ResNet-50, and WRHT stays within 10% from N = 1,024 to 4,096 ("remains nearly
// constant", §5.5).
func TestWRHTQualitativeClaims(t *testing.T) {
	const a = 200
	wrht := WRHTSeries(RuleLemma)
	f5, err := WRHTOptical([]int{4}, true, a, wrht, SeriesORing)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range WRHTDNNs {
		slower := f5.Times[wrht][i][0] > f5.Times[SeriesORing][i][0]
		if want := d.Name == "BEiT-L" || d.Name == "VGG16"; slower != want {
			t.Errorf("Fig. 5, w = 4, %s: WRHT slower than Ring %v, the paper %v", d.Name, slower, want)
		}
	}
	f6, err := WRHTOptical(WRHTFig6N, false, a)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range WRHTDNNs {
		for j, n := range f6.X {
			worst := ""
			for _, st := range []string{wrht, SeriesORing, SeriesHRing, SeriesBT} {
				if worst == "" || f6.Times[st][i][j] > f6.Times[worst][i][j] {
					worst = st
				}
			}
			switch d.Name {
			case "BEiT-L", "VGG16":
				if worst != SeriesBT {
					t.Errorf("Fig. 6, N = %g, %s: the slowest is %s, the paper BT", n, d.Name, worst)
				}
			case "ResNet-50":
				if worst == SeriesBT {
					t.Errorf("Fig. 6, N = %g, ResNet-50: BT is the slowest, the paper says it performs well", n)
				}
			}
			if r := f6.Times[wrht][i][j] / f6.Times[wrht][i][0]; math.Abs(r-1) > 0.1 {
				t.Errorf("Fig. 6, %s: WRHT at N = %g is %.0f%% off N = 1,024's", d.Name, n, 100*(r-1))
			}
		}
	}
}

// Fig. 4 (N = 1,024, w = 64, the group capped at m′ = 17, 33, 65, 129): the time "keeps
// decreasing and then keeps still" (5, 4, 3, 3 steps under the exact rule; 6, 4, 4, 4 under the
// lemma rule: reference/wrht.md §2.8), and normalised by WRHT_3 (exact rule) it is the same for
// every DNN ("performs similarly with different amounts of transferred data", §5.3): each step
// moves d, so the normalised time is the ratio of the steps to WRHT_3's 3.
func TestWRHTFig4Shape(t *testing.T) {
	s, err := WRHTFig4()
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string][]float64{RuleExact: {5, 4, 3, 3}, RuleLemma: {6, 4, 4, 4}}
	for _, rule := range WRHTRules {
		for i, d := range WRHTDNNs {
			tm := s.Times[WRHTSeries(rule)][i]
			if rule == RuleExact && !(tm[0] > tm[1] && tm[1] > tm[2] && tm[2] == tm[3]) {
				t.Errorf("%s: WRHT_0…3 %v, want decreasing then equal", d.Name, tm)
			}
			for j := range tm {
				if got, want := s.Norm(WRHTSeries(rule), i, j), steps[rule][j]/steps[RuleExact][3]; math.Abs(got-want) > 1e-9 {
					t.Errorf("%s, %s rule, m′ = %g: %.4f of WRHT_3, the steps give %.4f", d.Name, rule, s.X[j], got, want)
				}
			}
		}
	}
}

// Fig. 5 (N = 1,024, w = 4 … 256): WRHT "first decrease[s] and then keep[s] constant", H-Ring
// "slightly decreases after wavelength four and keeps constant" (424 then 417 steps), Ring and
// BT are the same at every w (§5.4). "Slightly" holds for the step count and for H-Ring reading
// i (every step d/N); under reading ii (the default: d/h per intra-group step) the 4(h−1) = 16
// intra steps at w = 4 against 2(h−1) + 1 = 9 carry 7 d/5 more, so the decrease is 34–38%.
func TestWRHTFig5Shape(t *testing.T) {
	s, err := WRHTFig5()
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range WRHTDNNs {
		for _, rule := range WRHTRules {
			tm := s.Times[WRHTSeries(rule)][i]
			if !(tm[0] > tm[1] && tm[1] >= tm[2] && tm[2] == tm[3]) {
				t.Errorf("%s, %s rule: WRHT over w %v, want decreasing then constant", d.Name, rule, tm)
			}
		}
		h := s.Times[SeriesHRing][i]
		if !(h[0] > h[1] && h[1] == h[2] && h[2] == h[3]) {
			t.Errorf("%s: H-Ring over w %v, want a decrease after w = 4, then constant", d.Name, h)
		}
		for _, st := range []string{SeriesORing, SeriesBT} {
			if tm := s.Times[st][i]; tm[0] != tm[3] || tm[1] != tm[2] || tm[0] != tm[1] {
				t.Errorf("%s: %s over w %v, want constant", d.Name, st, tm)
			}
		}
	}
}

// Fig. 7 (N = 128 … 1,024, the four DNNs): O-Ring is faster than E-Ring at every point and both
// rise with N (the ring's 2(N−1) steps each pay the ring's 25 µs reconfiguration, or the three
// routers' 75 µs on the tree, five beyond 512 hosts), as the paper says (§5.6). Rabenseifner's
// recursive halving/doubling on the non-blocking tree beats E-Ring (2 log2 N steps instead of
// 2(N−1)); full-vector recursive doubling moves log2 N times the buffer and is slower than E-Ring
// except where the ring's router delays dominate: hand count for ResNet-50 (d/B = 20 ms) at
// N = 1,024, rd ≈ 10 × 20 = 200 ms, the ring 2 × 20 ms + 2,046 × 5 × 25 µs = 296 ms.
func TestWRHTFig7Shape(t *testing.T) {
	s, err := WRHTFig7()
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range WRHTDNNs {
		for j, n := range s.X {
			at := func(st string) float64 { return s.Times[st][i][j] }
			eRing, oRing := at(SeriesERing), at(SeriesORing)
			if oRing >= eRing {
				t.Errorf("%s N=%g: O-Ring %.1f ms ≥ E-Ring %.1f ms", d.Name, n, 1e3*oRing, 1e3*eRing)
			}
			if j > 0 && (eRing <= s.Times[SeriesERing][i][j-1] || oRing <= s.Times[SeriesORing][i][j-1]) {
				t.Errorf("%s N=%g: E-Ring %.1f ms, O-Ring %.1f ms do not rise with N", d.Name, n, 1e3*eRing, 1e3*oRing)
			}
			if rdWins := d.Name == "ResNet-50" && n == 1024; (at(SeriesERD) < eRing) != rdWins {
				t.Errorf("%s N=%g: full-vector recursive doubling %.1f ms, E-Ring %.1f ms", d.Name, n, 1e3*at(SeriesERD), 1e3*eRing)
			}
			if at(SeriesERHD) >= eRing {
				t.Errorf("%s N=%g: recursive halving/doubling %.1f ms ≥ E-Ring %.1f ms", d.Name, n, 1e3*at(SeriesERHD), 1e3*eRing)
			}
		}
	}
}
