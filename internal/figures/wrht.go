package figures

import (
	"fmt"
	"math"
	"slices"

	"github.com/ddlest/ddlest/internal/repro"
	"github.com/ddlest/ddlest/plots"
)

func init() {
	register(
		Figure{Name: "wrht-fig4", Title: "WRHT Fig. 4: WRHT_0 … WRHT_3 (group limited to m′ = 17, 33, 65, 129) on 1,024 nodes, w = 64, normalised by WRHT_3 in each DNN, both step rules",
			Panels: wrhtFig4},
		Figure{Name: "wrht-fig5", Title: "WRHT Fig. 5: WRHT, Ring, H-Ring and BT on 1,024 nodes over w = 4 … 256 wavelengths, normalised by WRHT in ResNet-50 at w = 256",
			Panels: wrhtFigure(repro.WRHTFig5, wrhtOpt, plots.Axis{Label: "wavelengths w", Log: true},
				"ResNet-50 at w = 256")},
		Figure{Name: "wrht-fig6", Title: "WRHT Fig. 6: WRHT, Ring, H-Ring and BT on 1,024 … 4,096 nodes, w = 64, normalised by WRHT in ResNet-50 at N = 1,024",
			Panels: wrhtFigure(repro.WRHTFig6, wrhtOpt, plots.Axis{Label: "nodes N (w = 64; H-Ring h = 5)"}, "ResNet-50 at N = 1,024")},
		Figure{Name: "wrht-fig7", Title: "WRHT Fig. 7: E-Ring and E-RD on the electrical fat tree against O-Ring and WRHT on the optical ring, 128 … 1,024 nodes, normalised by WRHT in ResNet-50 at N = 128",
			Panels: wrhtFigure(repro.WRHTFig7, wrhtElec, plots.Axis{Label: "nodes N (ring: w = 64)", Log: true},
				"ResNet-50 at N = 128")},
	)
}

// wrhtSeries is a sweep's series as plotted: the library's key and the legend's name (a
// network's or an algorithm's name first, so it keeps its colour; the second step rule takes
// another).
type wrhtSeries struct{ key, name string }

var (
	wrhtRules = []wrhtSeries{{repro.SeriesWRHTExact, "wrht (exact rule)"}, {repro.SeriesWRHTLemma, "wrht (lemma rule)"}}
	wrhtOpt   = append(wrhtRules[:2:2], wrhtSeries{repro.SeriesORing, "ring (O-Ring)"},
		wrhtSeries{repro.SeriesHRing, "hierarchical (H-Ring)"}, wrhtSeries{repro.SeriesBT, "tree (BT)"})
	wrhtElec = append(wrhtRules[:2:2], wrhtSeries{repro.SeriesORing, "ring (O-Ring)"}, wrhtSeries{repro.SeriesERing, "fattree: E-Ring"},
		wrhtSeries{repro.SeriesERD, "fattree: E-RD"}, wrhtSeries{repro.SeriesERHD, "fattree: E-RD (rhd)"})
)

// wrhtPanels is one panel per DNN (the paper's (a)–(d)) of a sweep's normalised times, on a
// log axis labelled 1, 2, 3, 5, 10, … (the times span BT's 20 steps of d to the ring's 2d);
// the first panel's title names the normalisation.
func wrhtPanels(s repro.WRHTSweep, series []wrhtSeries, x plots.Axis, norm string) []plots.Panel {
	x.Ticks = s.X
	var out []plots.Panel
	for i, d := range repro.WRHTDNNs {
		pn := plots.Panel{Title: fmt.Sprintf("(%c) %s, d = %v", 'a'+i, d.Name, d.Bytes()), X: x}
		if i == 0 {
			pn.Title = fmt.Sprintf("(a) %s, %v; ÷ WRHT in %s", d.Name, d.Bytes(), norm)
		}
		var all []float64
		for _, se := range series {
			var ys []float64
			for j := range s.X {
				ys = append(ys, s.Norm(se.key, i, j))
			}
			all = append(all, ys...)
			pn.Series = append(pn.Series, plots.Series{Name: se.name, X: s.X, Y: ys})
		}
		pn.Y = plots.Axis{Label: "normalised time", Log: true, Ticks: ticks1235(slices.Min(all), slices.Max(all))}
		out = append(out, pn)
	}
	return out
}

// ticks1235 are the values 1, 2, 3 and 5 × 10^k from the largest at or below lo to the smallest at
// or above hi.
func ticks1235(lo, hi float64) []float64 {
	var out []float64
	for e := math.Floor(math.Log10(lo)); len(out) == 0 || out[len(out)-1] < hi; e++ {
		for _, m := range []float64{1, 2, 3, 5} {
			if len(out) == 0 || out[len(out)-1] < hi {
				out = append(out, m*math.Pow(10, e))
			}
		}
	}
	for len(out) > 1 && out[1] <= lo {
		out = out[1:]
	}
	return out
}

// wrhtFig4 is WRHT_0 … WRHT_3 under both rules, each DNN normalised by its WRHT_3 (exact rule).
// The normalised times are the same for the four DNNs (every step moves d: the ratio of the
// steps), so one panel shows them; the library's test checks that they are.
func wrhtFig4() ([]plots.Panel, error) {
	s, err := repro.WRHTFig4()
	if err != nil {
		return nil, err
	}
	pn := plots.Panel{Title: "N = 1,024, w = 64: the same for BEiT-L, VGG16, AlexNet and ResNet-50",
		X: plots.Axis{Label: "largest group m′ (WRHT_0 … WRHT_3)", Log: true, Ticks: s.X},
		Y: plots.Axis{Label: "time / WRHT_3's (exact rule)"}}
	for _, se := range wrhtRules {
		var ys []float64
		for j := range s.X {
			ys = append(ys, s.Norm(se.key, 0, j))
		}
		pn.Series = append(pn.Series, plots.Series{Name: se.name, X: s.X, Y: ys})
	}
	return []plots.Panel{pn}, nil
}

// wrhtFigure is a figure of Figs. 5–7: the sweep's panels, per DNN.
func wrhtFigure(sweep func() (repro.WRHTSweep, error), series []wrhtSeries, x plots.Axis, norm string) func() ([]plots.Panel, error) {
	return func() ([]plots.Panel, error) {
		s, err := sweep()
		if err != nil {
			return nil, err
		}
		return wrhtPanels(s, series, x, norm), nil
	}
}
