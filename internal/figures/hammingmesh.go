package figures

import (
	"fmt"
	"strconv"

	"github.com/ddlest/ddlest/internal/repro"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/plots"
)

func init() {
	register(
		Figure{Name: "hammingmesh-table2", Title: "HammingMesh Table II: network cost against global (all-to-all) and all-reduce bandwidth, small and large clusters",
			Panels: hmTable2},
		Figure{Name: "hammingmesh-runtimes", Title: "HammingMesh §V-B: communication overhead of the five workloads per topology, ddlest and the paper",
			Panels: hmRuntimes},
		Figure{Name: "hammingmesh-fig13", Title: "HammingMesh Fig. 13: all-reduce bandwidth over every accelerator against size, per algorithm",
			Panels: hmFig13},
		Figure{Name: "hammingmesh-fig15", Title: "HammingMesh Fig. 15: HxMesh cost savings relative to other topologies, ddlest and the paper's data",
			Panels: hmFig15},
	)
}

// hmCostTicks are the cost axes' ticks (M$) of the small and large clusters.
var hmCostTicks = map[string][]float64{"small": {2, 5, 10, 20, 30}, "large": {30, 50, 100, 200, 500, 700}}

// hmTable2 is each Table II preset as one point: ddlest's cost against its global bandwidth
// share, then against its all-reduce share at 32 GiB (the rows hammingmesh/table2-*), a series
// per topology, a panel per cluster.
func hmTable2() ([]plots.Panel, error) {
	rows, err := repro.Table2()
	if err != nil {
		return nil, err
	}
	var pns []plots.Panel
	for _, m := range []struct {
		what, label string
		log         bool
		format      func(float64) string // the all-reduce shares differ in the first or second decimal
		get         func(job.TableRow) float64
	}{
		{"global (all-to-all, 1 MiB per peer) bandwidth", "global bandwidth (% of injection)", true, nil,
			func(r job.TableRow) float64 { return 100 * r.Ours.Shares.Global }},
		{"all-reduce bandwidth at 32 GiB, latency included", "all-reduce bandwidth (% of optimum)", false,
			func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
			func(r job.TableRow) float64 { return 100 * r.Ours.Shares.AllReduceAt }},
	} {
		for _, cluster := range []string{"small", "large"} {
			pn := plots.Panel{Title: fmt.Sprintf("%s cluster: cost and %s", cluster, m.what),
				X: plots.Axis{Label: "network cost (M$, 4 or 16 planes)", Log: true, Ticks: hmCostTicks[cluster]},
				Y: plots.Axis{Label: m.label, Log: m.log, Format: m.format}}
			for _, f := range repro.HMTopologies {
				r, err := repro.Table2Row(rows, f+"-"+cluster)
				if err != nil {
					return nil, err
				}
				pn.Series = append(pn.Series, plots.Series{Name: repro.TopologyName[f], X: []float64{r.Ours.CostUSD / 1e6}, Y: []float64{m.get(r)}})
			}
			pns = append(pns, pn)
		}
	}
	return pns, nil
}

// spread places series k of n beside category i, so that the topologies of one workload do not
// hide each other (the CSV names the nearest category).
func spread(i, k, n int) float64 { return float64(i) + 0.6*(float64(k)/float64(n-1)-0.5) }

// hmWorkloadTitles are the workloads' names on a category axis.
func hmWorkloadTitles() []string {
	var out []string
	for _, w := range repro.HMWorkloads {
		out = append(out, w.Title)
	}
	return out
}

// hmWorkloadAxis is the category axis of the workloads; its label says which cluster each runs on.
const hmWorkloadAxis = "workload (MoE on the large cluster, the others on the small)"

// hmRatioTicks label a log axis of ratios or percentages.
var hmRatioTicks = []float64{0.2, 0.5, 1, 2, 5, 10, 20, 50, 100}

// hmPaperOverheads are the paper's §V-B overheads over compute (%) where the text gives a
// runtime (CosmoFlow: its two percentages; "less than 2%" is a bound, not drawn).
func hmPaperOverheads() map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	add := func(w string, runs []repro.HMRow, pct bool) {
		out[w] = map[string]float64{}
		for _, r := range runs {
			switch {
			case !pct:
				out[w][repro.Family(r.Preset)] = 100 * (r.Paper/repro.HMPaperCompute[w] - 1)
			case r.Paper != 2:
				out[w][repro.Family(r.Preset)] = r.Paper
			}
		}
	}
	add("resnet152", repro.ResNetRuns, false)
	add("gpt3", repro.GPT3Runs, false)
	add("gpt3-moe", repro.MoERuns, false)
	add("cosmoflow", repro.CosmoFlowRuns, true)
	add("dlrm", repro.DLRMRuns, false)
	return out
}

// hmRuntimes is each workload's communication overhead over its compute per topology: ddlest's
// (Overhead over the ideal network's run, the runs of the §V-B rows and Fig. 15) and the
// paper's where §V-B gives the runtime.
func hmRuntimes() ([]plots.Panel, error) {
	cats := hmWorkloadTitles()
	ax := plots.Axis{Label: hmWorkloadAxis, Categories: cats}
	ours := plots.Panel{Title: "ddlest: exposed communication over compute", X: ax, Y: plots.Axis{Label: "overhead (% of compute)", Log: true, Ticks: hmRatioTicks}}
	paper := plots.Panel{Title: "the paper (§V-B runtimes; CosmoFlow's \"less than 2%\" not drawn)", X: ax, Y: plots.Axis{Label: "overhead (% of compute)", Log: true, Ticks: hmRatioTicks}}
	pov := hmPaperOverheads()
	n := len(repro.HMTopologies)
	for k, f := range repro.HMTopologies {
		var o, p plots.Series
		o.Name, p.Name = repro.TopologyName[f], repro.TopologyName[f]
		for i, w := range repro.HMWorkloads {
			ov, err := repro.Overhead(w.Name, f+"-"+w.Cluster)
			if err != nil {
				return nil, err
			}
			c, err := repro.Runtime(w.Name, "ideal")
			if err != nil {
				return nil, err
			}
			o.X, o.Y = append(o.X, spread(i, k, n)), append(o.Y, 100*ov/c)
			if v, ok := pov[w.Name][f]; ok {
				p.X, p.Y = append(p.X, spread(i, k, n)), append(p.Y, v)
			}
		}
		ours.Series = append(ours.Series, o)
		if len(p.X) > 0 {
			paper.Series = append(paper.Series, p)
		}
	}
	return []plots.Panel{ours, paper}, nil
}

// hmFig13 is HMFig13's all-reduce shares on the large Hx2Mesh and Hx4Mesh, the fat tree's ring in
// each for reference.
func hmFig13() ([]plots.Panel, error) {
	r, err := repro.HMFig13()
	if err != nil {
		return nil, err
	}
	names := map[string]string{"ring": "ring", "rings": "rings", "torus": "2d-torus", "torus-sst": "2d-torus (SST)"}
	var pns []plots.Panel
	for _, p := range repro.HMFig13Presets[:2] {
		pn := plots.Panel{Title: fmt.Sprintf("large %s: all-reduce over its 16,384 accelerators", repro.TopologyName[repro.Family(p)]),
			X: plots.Axis{Label: "all-reduce size", Log: true, Format: plots.ByteTicks},
			Y: plots.Axis{Label: "bus bandwidth (% of injection)", Log: true, Ticks: []float64{0.1, 1, 10, 100}}}
		pn.Series = append(pn.Series, plots.Series{Name: "fattree ring", X: r.Sizes, Y: pct(r.Share["ft-large"]["ring"])})
		for _, a := range repro.HMFig13Algorithms {
			pn.Series = append(pn.Series, plots.Series{Name: names[a], X: r.Sizes, Y: pct(r.Share[p][a])})
		}
		pns = append(pns, pn)
	}
	return pns, nil
}

func pct(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = 100 * x
	}
	return out
}

// hmFig15 is HMFig15's cells (the rows hammingmesh/fig15-*) beside the paper's data, a panel per
// HxMesh and source.
func hmFig15() ([]plots.Panel, error) {
	r, err := repro.HMFig15()
	if err != nil {
		return nil, err
	}
	cats := hmWorkloadTitles()
	var pns []plots.Panel
	n := len(repro.HMFig15Others)
	for _, h := range []string{"hx2", "hx4"} {
		for _, src := range []string{"ddlest", "the paper's data"} {
			pn := plots.Panel{Title: fmt.Sprintf("%s's cost saving over each topology: %s", repro.TopologyName[h], src),
				X: plots.Axis{Label: hmWorkloadAxis, Categories: cats},
				Y: plots.Axis{Label: "relative cost saving (×)", Log: true, Ticks: hmRatioTicks}}
			for k, o := range repro.HMFig15Others {
				s := plots.Series{Name: repro.TopologyName[o]}
				for i, w := range repro.HMWorkloads {
					v := r.Saving[h][w.Name][k]
					if src != "ddlest" {
						v = repro.HMFig15Paper[h][w.Name][k]
					}
					s.X, s.Y = append(s.X, spread(i, k, n)), append(s.Y, v)
				}
				pn.Series = append(pn.Series, s)
			}
			pns = append(pns, pn)
		}
	}
	return pns, nil
}
