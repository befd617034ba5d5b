package figures

import (
	"math"
	"testing"

	"github.com/ddlest/ddlest/internal/repro"
)

func TestRAMPFigs15To23AreTheLibrary(t *testing.T) {
	a, _ := repro.Algo()
	f19, _ := repro.Fig19()
	f20, _ := repro.Fig20()
	f17, _ := repro.Fig17()
	pick := func(get func(k int) float64, n int) []float64 {
		var out []float64
		for k := range n {
			out = append(out, get(k))
		}
		return out
	}
	nodes := len(repro.AlgoNodes)
	for _, s := range repro.AlgoStrategies {
		same(t, "fig15 "+s, series(t, panels(t, "ramp-fig15")[0], s),
			pick(func(k int) float64 { return float64(a.ReduceScatter[s][k].Steps) }, nodes))
		for i := range repro.AlgoSizes {
			same(t, "fig22 "+s, series(t, panels(t, "ramp-fig22")[i], s), pick(func(k int) float64 {
				return float64(a.AllReduce[s][i][k].H2T / a.AllReduce[s][i][k].H2H)
			}, nodes))
		}
		for i, size := range repro.AlgoSizes {
			same(t, "fig21 "+size.String()+" "+s, series(t, panels(t, "ramp-fig21")[i], s),
				pick(func(k int) float64 { return float64(a.AllReduce[s][i][k].Total) }, nodes))
		}
	}
	// Fig. 21's ratio panels: the last point of the hierarchical panel is Fig21().Hier.
	f21, _ := repro.Fig21()
	hier := panels(t, "ramp-fig21")[len(repro.AlgoSizes)+2]
	for i, size := range repro.AlgoSizes {
		if got := series(t, hier, size.String()); got[len(got)-1] != f21.Hier[i] {
			t.Errorf("fig21 hierarchical %v at 65,536: plotted %v, library %v", size, got[len(got)-1], f21.Hier[i])
		}
	}
	for n, net := range repro.Fig19Nets {
		for i, op := range f19.Ops {
			same(t, "fig19 "+net+" "+op.String(), series(t, panels(t, "ramp-fig19")[n], op.String()), f19.Speedup[net][i])
		}
	}
	for _, cfg := range repro.Fig20Configs[1:] {
		same(t, "fig20 "+cfg, series(t, panels(t, "ramp-fig20")[1], cfg),
			pick(func(i int) float64 { return f20.Speedup(cfg, i) }, len(repro.AlgoSizes)))
	}
	// Fig. 20's shares: every configuration in each part's panel, the three summing to 100%.
	for _, cfg := range repro.Fig20Configs {
		cs := f20.Costs[cfg]
		same(t, "fig20 "+cfg+" compute share", series(t, panels(t, "ramp-fig20")[4], cfg),
			pick(func(i int) float64 { return 100 * float64(cs[i].Compute/cs[i].Total) }, len(repro.AlgoSizes)))
		h2t, h2h, comp := series(t, panels(t, "ramp-fig20")[2], cfg), series(t, panels(t, "ramp-fig20")[3], cfg), series(t, panels(t, "ramp-fig20")[4], cfg)
		for i := range repro.AlgoSizes {
			if sum := h2t[i] + h2h[i] + comp[i]; math.Abs(sum-100) > 1e-9 {
				t.Errorf("fig20 %s at %v: shares sum to %v%%", cfg, repro.AlgoSizes[i], sum)
			}
		}
	}
	same(t, "fig17 superpod speed-up", series(t, panels(t, "ramp-fig17")[1], "superpod"),
		pick(func(i int) float64 { return f17[i].TotalFT / f17[i].TotalRAMP }, len(f17)))
	same(t, "fig17 ramp overhead", series(t, panels(t, "ramp-fig17")[0], "ramp"),
		pick(func(i int) float64 { return 100 * f17[i].RAMP }, len(f17)))
	same(t, "fig23 ramp", series(t, panels(t, "ramp-fig23")[0], "ramp"),
		pick(func(k int) float64 { return float64(a.ReduceScatter["ramp"][k].Compute) }, nodes))
	sp := series(t, panels(t, "ramp-fig23")[1], "speed-up")
	if want := float64(a.ReduceScatter["ring"][nodes-1].Compute / a.ReduceScatter["ramp"][nodes-1].Compute); sp[nodes-1] != want {
		t.Errorf("fig23 speed-up at 65,536: plotted %v, library %v", sp[nodes-1], want)
	}
}
