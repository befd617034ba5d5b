package figures

import (
	"testing"

	"github.com/ddlest/ddlest/internal/repro"
)

// WRHT's figures plot exactly the reproduction library's normalised times: every point of every
// series, by legend name, is the library's Norm for its DNN (the panel: the paper's (a)–(d), in
// §5.1's order; Fig. 4 plots the first DNN's, which the library's test finds the same for all).
func TestWRHTFiguresAreTheLibrary(t *testing.T) {
	key := map[string]string{
		"wrht (exact rule)": repro.SeriesWRHTExact, "wrht (lemma rule)": repro.SeriesWRHTLemma,
		"ring (O-Ring)": repro.SeriesORing, "hierarchical (H-Ring)": repro.SeriesHRing, "tree (BT)": repro.SeriesBT,
		"fattree: E-Ring": repro.SeriesERing, "fattree: E-RD": repro.SeriesERD, "fattree: E-RD (rhd)": repro.SeriesERHD,
	}
	for _, tc := range []struct {
		name   string
		sweep  func() (repro.WRHTSweep, error)
		series int // per panel
		panels int
	}{
		{"wrht-fig4", repro.WRHTFig4, 2, 1},
		{"wrht-fig5", repro.WRHTFig5, 5, 4},
		{"wrht-fig6", repro.WRHTFig6, 5, 4},
		{"wrht-fig7", repro.WRHTFig7, 6, 4},
	} {
		f, ok := Lookup(tc.name)
		if !ok {
			t.Fatalf("%s not registered", tc.name)
		}
		pns, err := f.Panels()
		if err != nil {
			t.Fatal(err)
		}
		s, err := tc.sweep()
		if err != nil {
			t.Fatal(err)
		}
		if len(pns) != tc.panels {
			t.Errorf("%s: %d panels, want %d", tc.name, len(pns), tc.panels)
		}
		n := 0
		for i, pn := range pns {
			if len(pn.Series) != tc.series {
				t.Errorf("%s panel %d: %d series, want %d", tc.name, i, len(pn.Series), tc.series)
			}
			for _, se := range pn.Series {
				k, ok := key[se.Name]
				if !ok {
					t.Errorf("%s: series %q is not one of the library's", tc.name, se.Name)
					continue
				}
				for j := range s.X {
					if se.X[j] != s.X[j] || se.Y[j] != s.Norm(k, i, j) {
						t.Errorf("%s panel %d %s point %d: (%v, %v), library (%v, %v)", tc.name, i, se.Name, j, se.X[j], se.Y[j], s.X[j], s.Norm(k, i, j))
					}
					n++
				}
			}
		}
		if want := tc.panels * tc.series * len(s.X); n != want {
			t.Errorf("%s: %d points checked, want %d", tc.name, n, want)
		}
	}
}

// The log axis labels span the data: 1, 2, 3, 5 × 10^k from the last at or below the smallest
// value to the first at or above the largest.
func TestTicks1235(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   []float64
	}{{0.9, 7, []float64{0.5, 1, 2, 3, 5, 10}}, {9.2, 82, []float64{5, 10, 20, 30, 50, 100}}, {1, 1.5, []float64{1, 2}}} {
		got := ticks1235(tc.lo, tc.hi)
		if len(got) != len(tc.want) {
			t.Errorf("%g–%g: %v, want %v", tc.lo, tc.hi, got, tc.want)
			continue
		}
		for i := range got {
			if d := got[i] - tc.want[i]; d > 1e-12 || d < -1e-12 {
				t.Errorf("%g–%g: %v, want %v", tc.lo, tc.hi, got, tc.want)
				break
			}
		}
	}
}
