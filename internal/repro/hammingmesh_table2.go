package repro

import (
	"fmt"
	"strings"
	"sync"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/network"
)

// Table2 is HammingMesh Table II rebuilt from the sixteen presets (`ddlest cost --table
// hammingmesh`): each row's bill, diameter and bandwidth shares beside the paper's, computed once.
var Table2 = memo(func() ([]job.TableRow, error) {
	_, rows, err := job.ReproduceTable("hammingmesh")
	return rows, err
})

// Table2Row is the reproduced row of a preset.
func Table2Row(rows []job.TableRow, preset string) (job.TableRow, error) {
	for _, r := range rows {
		if r.Paper.Preset == preset {
			return r, nil
		}
	}
	return job.TableRow{}, fmt.Errorf("Table II has no preset %q", preset)
}

// table2Value reads one number of a preset's reproduced row.
func table2Value(preset string, get func(job.TableRow) float64) func() (float64, error) {
	return func() (float64, error) {
		rows, err := Table2()
		if err != nil {
			return 0, err
		}
		r, err := Table2Row(rows, preset)
		return get(r), err
	}
}

// TopologyName is a Table II family's name in figures: the network's registry name, so that
// its colour is the same in every figure, and the variant.
var TopologyName = map[string]string{"ft": "fattree", "ft50": "fattree 50% tapered", "ft75": "fattree 75% tapered",
	"df": "dragonfly", "hyperx": "hyperx", "hx2": "hxmesh Hx2", "hx4": "hxmesh Hx4", "torus": "torus"}

// Family is a preset's Table II family ("hx2-small" → "hx2").
func Family(preset string) string {
	return strings.TrimSuffix(strings.TrimSuffix(preset, "-small"), "-large")
}

// table2Deviation is a documented deviation of one Table II cell: why, and ddlest's range.
type table2Deviation struct {
	why   string
	known [2]float64
}

// Table II's cells ddlest does not meet, by column and preset (reference/hammingmesh.md §3.3–3.6).
var table2Deviations = map[string]map[string]table2Deviation{
	"cost": {
		"ft50-large": {"the paper's own counts (794 switches, 16,380 DAC, 17,160 AoC per plane, App. A-C) price at $418.26 M, not 419 (reference/hammingmesh.md §3.3 [AMB])",
			[2]float64{418.2, 418.3}},
	},
	"diameter": {
		"df-small": {"Table II's 3 is the canonical Dragonfly's router-to-router diameter; counting every cable (§III-B), this network's longest minimal path is endpoint, global, local, endpoint: 4 (each router reaches all 7 other groups directly)",
			[2]float64{3.5, 4.5}},
	},
	"global": {
		"df-small": {"ddlest routes the Dragonfly minimally and balances the all-to-all over every minimal path (the 18–19 global links of each pair of groups); the paper's packet-level UGAL-L simulation loses a third of it to congestion a flow model does not see",
			[2]float64{85, 95}},
		"df-large": {"minimal routing only: a router's 16 global links cannot reach the 29 other groups directly, and the pairs of groups' 8–9 global links cap the all-to-all; the paper's UGAL-L detours through intermediate groups (Valiant), which ddlest does not model",
			[2]float64{50, 58}},
		"torus-small": {"the paper's 2.0% is below a 32 × 32 torus's bisection bound (8 links per 32 accelerators: 6.25% of one plane's injection); ddlest routes minimally and reaches the bound",
			[2]float64{6, 6.5}},
		"torus-large": {"the paper's 1.1% is below the 128 × 128 torus's bisection bound (1.56%); ddlest routes minimally and reaches the bound",
			[2]float64{1.5, 1.6}},
	},
	// The global saving is cost_FT/cost_X × share_X/share_FT: the global column's deviations
	// carry over (ddlest's costs are within the printed rounding); each range is the cost ratio
	// times the global row's documented range.
	"global-saving": {
		"df-small": {"follows hammingmesh/table2-global-df-small: ddlest's minimally routed Dragonfly reaches 85–95% of the injection against the paper's UGAL-L 62.9%, and 25.3/27.9 × that is 0.77–0.86",
			[2]float64{0.75, 0.9}},
		"df-large": {"follows hammingmesh/table2-global-df-large: without UGAL-L's detours ddlest's large Dragonfly reaches 50–58% against the paper's 71.5%, and 680/429 × that is 0.79–0.92 (the paper's own 680/429 × 71.5/98.9 is 1.15, printed 1.2)",
			[2]float64{0.78, 0.93}},
		"torus-small": {"follows hammingmesh/table2-global-torus-small: ddlest reaches the 32 × 32 torus's bisection bound (6.25%) where the paper reports 2.0%, and 25.3/2.47 × that is 0.61–0.67",
			[2]float64{0.6, 0.68}},
	},
}

func init() { register(table2Rows) }

// table2Rows are Table II's cells (reference/hammingmesh.md §3.6) for every preset: the cost
// within ±0.05 M$ (small) and ±0.5 M$ (large), the printed rounding; the diameter in cables,
// exactly; the global (all-to-all, 1 MiB per peer) bandwidth within ±20%: a flow model against
// a packet-level simulation; the global cost saving over the cluster's non-blocking fat tree
// (cost_FT/cost_X × share_X/share_FT, the same shares) within those ±20% and the printed ±0.05×;
// the all-reduce bandwidth at 32 GiB, latency included, within ±10%
// ([X] size: the paper's "large messages"); and the all-reduce cost saving over the cluster's
// non-blocking fat tree within ±10% (ddlest's shares are the large-message limit, 100%, so the
// saving is the cost ratio; the paper's shares are 91–99.8%).
func table2Rows() []Row {
	t, err := job.HammingMeshTable()
	if err != nil {
		return []Row{{ID: "hammingmesh/table2", Seed: "hammingmesh", Cite: "Table II", What: "configs/hammingmesh_table2.json",
			Unit: "-", Tol: 1, Value: func() (float64, error) { return 0, err }}}
	}
	var rows []Row
	add := func(col, preset, cite, what string, paper float64, unit string, tol float64, get func(job.TableRow) float64) {
		r := Row{ID: "hammingmesh/table2-" + col + "-" + preset, Seed: "hammingmesh", Cite: cite, What: what,
			Paper: paper, Unit: unit, Tol: tol, Value: table2Value(preset, get)}
		if d, ok := table2Deviations[col][preset]; ok {
			r.Deviation, r.Known = d.why, d.known
		}
		rows = append(rows, r)
	}
	for _, p := range t.Rows {
		on := fmt.Sprintf("%s (%s cluster, %s)", p.Topology, p.Cluster, p.Preset)
		costTol := 0.05
		if p.Cluster == "large" {
			costTol = 0.5
		}
		add("cost", p.Preset, "Table II, App. A-C", "network cost of the "+on+" (±"+fmt.Sprint(costTol)+" M$, the printed rounding)",
			p.CostMUSD, "M$", costTol/p.CostMUSD, func(r job.TableRow) float64 { return r.Ours.CostUSD / 1e6 })
		add("diameter", p.Preset, "Table II, §III-B", "diameter of the "+on+", every cable counted",
			float64(p.Diameter), "cables", 1e-9, func(r job.TableRow) float64 { return float64(r.Ours.Structure.Diameter) })
		add("global", p.Preset, "Table II, §V-A1", "global (all-to-all, 1 MiB per peer) bandwidth of the "+on,
			p.GlobalPct, "% of injection", 0.2, func(r job.TableRow) float64 { return 100 * r.Ours.Shares.Global })
		add("allreduce", p.Preset, "Table II, §V-A2", "all-reduce bandwidth of the "+on+" at 32 GiB, latency included",
			p.AllReducePct, "% of optimum", 0.1, func(r job.TableRow) float64 { return 100 * r.Ours.Shares.AllReduceAt })
		if !strings.HasPrefix(p.Preset, "ft-") { // the base: 1 by definition
			// The global bandwidth's ±20% and the printed rounding (±0.05×: 0.2× may be 0.15–0.25).
			add("global-saving", p.Preset, "Table II", "global bandwidth per cost of the "+on+" over the non-blocking fat tree's (±20% and the printed ±0.05×)",
				p.GlobalSaving, "×", 0.2+0.05/p.GlobalSaving, func(r job.TableRow) float64 { return r.Global.Saving })
			add("allreduce-saving", p.Preset, "Table II", "all-reduce bandwidth per cost of the "+on+" over the non-blocking fat tree's",
				p.AllReduceSaving, "×", 0.1, func(r job.TableRow) float64 { return r.AllReduce.Saving })
		}
	}
	return append(rows, fig15Rows()...)
}

// HMFig15Others are the topologies Fig. 15 compares each HxMesh with, in its order.
var HMFig15Others = []string{"ft", "ft50", "ft75", "df", "hyperx", "torus"}

// HMFig15Paper is Fig. 15's data (reference/hammingmesh.md §7.3, [F]: the plotting script's arrays,
// consistent with the paper's prose to ~1%): the relative cost saving of an HxMesh over each of
// HMFig15Others, per workload (HMWorkloads' names).
var HMFig15Paper = map[string]map[string][]float64{
	"hx2": {
		"resnet152": {3.72, 2.6, 1.96, 4.22, 2.10, 0.49},
		"gpt3":      {1.41, 1.52, 1.41, 2.473, 1.84, 1.87},
		"gpt3-moe":  {0.85, 0.532, 0.43, 0.553, 0.96, 0.497},
		"cosmoflow": {2.464, 1.71, 1.292, 3.362, 1.73, 1.01},
		"dlrm":      {4.0, 3.26, 3.14, 5.15, 1.15, 1.431},
	},
	"hx4": {
		"resnet152": {7.76, 5.4, 4.06, 8.81, 4.37, 1.01},
		"gpt3":      {1.53, 1.64, 1.53, 2.693, 2.0, 2.03298},
		"gpt3-moe":  {2.73, 1.729, 1.41, 1.7151, 3.12, 1.61},
		"cosmoflow": {2.971, 2.06, 1.54, 4.04, 2.07, 1.2},
		"dlrm":      {5.6, 4.56, 4.4, 7.26, 1.6, 2.074},
	},
}

// HMFig15Result is Fig. 15 as ddlest computes it (§V-B: "the ratio of the network costs in Section
// II times the inverse of the ratio of communication overheads"): for an HxMesh h, another
// topology o and a workload, saving = cost_o/cost_h · overhead_o/overhead_h, with ddlest's
// Table II costs (the workload's cluster) and overheads (Overhead: the run less the same run on
// the ideal network).
type HMFig15Result struct {
	Saving   map[string]map[string][]float64 // HxMesh family → workload → per HMFig15Others
	Overhead map[string]map[string]float64   // workload → family → seconds
	CostUSD  map[string]float64              // preset → ddlest's cost
}

// HMFig15 computes every cell once, the forty runs at once.
var HMFig15 = memo(func() (HMFig15Result, error) {
	out := HMFig15Result{Saving: map[string]map[string][]float64{}, Overhead: map[string]map[string]float64{}, CostUSD: map[string]float64{}}
	rows, err := Table2()
	if err != nil {
		return out, err
	}
	for _, r := range rows {
		out.CostUSD[r.Paper.Preset] = r.Ours.CostUSD
	}
	var wg sync.WaitGroup
	for _, w := range HMWorkloads {
		for _, f := range append([]string{"ideal"}, HMTopologies...) {
			p := f
			if f != "ideal" {
				p = f + "-" + w.Cluster
			}
			wg.Go(func() { _, _ = Runtime(w.Name, p) })
		}
	}
	wg.Wait()
	for _, w := range HMWorkloads {
		out.Overhead[w.Name] = map[string]float64{}
		for _, f := range HMTopologies {
			if out.Overhead[w.Name][f], err = Overhead(w.Name, f+"-"+w.Cluster); err != nil {
				return out, fmt.Errorf("%s on %s-%s: %w", w.Name, f, w.Cluster, err)
			}
		}
	}
	for _, h := range []string{"hx2", "hx4"} {
		out.Saving[h] = map[string][]float64{}
		for _, w := range HMWorkloads {
			ov := out.Overhead[w.Name]
			for _, o := range HMFig15Others {
				out.Saving[h][w.Name] = append(out.Saving[h][w.Name],
					out.CostUSD[o+"-"+w.Cluster]/out.CostUSD[h+"-"+w.Cluster]*ov[o]/ov[h])
			}
		}
	}
	return out, nil
})

// Fig. 15's band of near-parity: cells inside it may fall on either side of 1 (issue 16).
const fig15BandLo, fig15BandHi = 0.8, 1.25

// fig15Tol is every cell's tolerance: ±50% (issue 16), the paper's overheads being packet-level
// simulations of a few hundred µs to tens of ms, ddlest's a flow model's.
const fig15Tol = 0.5

// fig15SideRow says whether a cell needs its own same-side row: outside the band, and ±50% of
// the paper's value reaches across 1 (so the tolerance alone does not keep ddlest on its side).
func fig15SideRow(paper float64) bool {
	return (paper > fig15BandHi && paper*(1-fig15Tol) < 1) || (paper < fig15BandLo && paper*(1+fig15Tol) > 1)
}

// fig15Deviations are the cells ddlest does not meet, keyed "hx-workload-other" (a "-side"
// suffix: the same-side row), with the cause and ddlest's range.
var fig15Deviations = map[string]table2Deviation{
	"hx2-gpt3-ft50-side": {"ddlest's 50% tapered small tree ties with the non-blocking one for GPT-3 (in a 1F1B phase a leaf's 21 active tensor-parallel flows fit its 22 uplinks under adaptive routing), so its overhead is the non-blocking tree's 2.3 ms against the paper's 4.6 ms; the cost ratio 17.6/5.4 then leaves it below 1",
		[2]float64{0.8, 0.98}},
	"hx2-cosmoflow-ft75-side": {"ddlest's CosmoFlow overhead on the 75% tapered tree is 0.35 ms (the halos stay on a leaf, the 256-rank gradient rings cross its uplinks lightly) against ≈0.47 ms in the paper's data, and Hx2Mesh's 0.87 ms against ≈0.91 ms",
		[2]float64{0.85, 0.999}},
	"hx2-gpt3-df": {"the paper gives no Dragonfly runtimes (the cell implies ≈36.5 ms for GPT-3); ddlest routes the Dragonfly minimally (no UGAL-L detours), so the stride-96 tensor-parallel rings between groups share the few global links of each pair of groups: 8.8 ms of overhead against ≈4.7 ms",
		[2]float64{4.5, 6.5}},
	"hx4-gpt3-df": {"as for Hx2Mesh: ddlest's minimally routed Dragonfly has twice the overhead the paper's data implies for GPT-3",
		[2]float64{5, 7.5}},
	"hx2-gpt3-moe-df": {"the paper's data implies ≈52.3 ms for MoE on the large Dragonfly; ddlest's minimal routing puts the expert all-to-alls at stride 96 on the direct global links of each pair of groups (≈56 ms), and its Hx2Mesh overhead (5.5 ms) is below the paper's 8.4 ms",
		[2]float64{1.6, 2.6}},
	"hx4-gpt3-moe-df": {"as for Hx2Mesh: ddlest's minimally routed large Dragonfly has 2.5× the MoE overhead the paper's data implies",
		[2]float64{6.5, 9.5}},
	"hx2-gpt3-moe-torus": {"ddlest's MoE step on the large torus is 87 ms against the paper's 73.8 (see hammingmesh/moe-torus-large: the expert all-to-alls load the x links of the rows the job occupies), and its Hx2Mesh overhead is below the paper's",
		[2]float64{0.9, 1.5}},
	"hx4-gpt3-moe-torus": {"ddlest's MoE step on the large torus is 87 ms against the paper's 73.8 (see hammingmesh/moe-torus-large)",
		[2]float64{3.5, 5.5}},
	"hx4-cosmoflow-df": {"the paper's data implies ≈44.9 ms for CosmoFlow on the Dragonfly; ddlest's minimally routed Dragonfly has 0.8 ms of overhead, and its Hx4Mesh 1.07 ms against the paper's 1.5 ms (3.4%)",
		[2]float64{6.5, 9}},
}

// fig15Rows are Fig. 15's sixty cells within ±50% and, for each cell outside the band of
// near-parity where ±50% reaches across 1, a row holding ddlest on the paper's side of 1.
func fig15Rows() []Row {
	var rows []Row
	for _, h := range []string{"hx2", "hx4"} {
		for _, w := range HMWorkloads {
			for i, o := range HMFig15Others {
				paper := HMFig15Paper[h][w.Name][i]
				key := h + "-" + w.Name + "-" + o
				cite := "Fig. 15 ([F] data, reference/hammingmesh.md §7.3)"
				if h == "hx4" && w.Name == "resnet152" && (o == "ft" || o == "ft75") {
					cite += `; §V-B2 ("more than 7.8x", "4.1x")`
				}
				what := fmt.Sprintf("%s: %s's cost saving over the %s (%s cluster costs)", w.Title, TopologyName[h], TopologyName[o], w.Cluster)
				value := pick(HMFig15, func(r HMFig15Result) float64 { return r.Saving[h][w.Name][i] })
				r := Row{ID: "hammingmesh/fig15-" + key, Seed: "hammingmesh", Cite: cite, What: what,
					Paper: paper, Unit: "×", Tol: fig15Tol, Value: value}
				if d, ok := fig15Deviations[key]; ok {
					r.Deviation, r.Known = d.why, d.known
				}
				rows = append(rows, r)
				if !fig15SideRow(paper) {
					continue
				}
				// ddlest ≥ 1 (AtLeast paper·(1 − Tol) with Tol = 1 − 1/paper) or ≤ 1.
				s := Row{ID: "hammingmesh/fig15-" + key + "-side", Seed: "hammingmesh", Cite: cite,
					What: what + ": on the paper's side of 1", Paper: paper, Unit: "×", Value: value}
				if paper > 1 {
					s.Bound, s.Tol = AtLeast, 1-1/paper
				} else {
					s.Bound, s.Tol = AtMost, 1/paper-1
				}
				if d, ok := fig15Deviations[key+"-side"]; ok {
					s.Deviation, s.Known = d.why, d.known
				}
				rows = append(rows, s)
			}
		}
	}
	return rows
}

// HMFig13Result is Fig. 13's all-reduce over every accelerator of the large Hx2Mesh and Hx4Mesh
// (§V-A2, "Full system allreduce job"): the bandwidth share of the optimum (nccl-tests bus
// bandwidth over the injection: 1 at half the injection in S/t) per size, per algorithm, and the
// large non-blocking fat tree's ring for reference.
type HMFig13Result struct {
	Sizes []float64                       // bytes
	Share map[string]map[string][]float64 // preset → algorithm → per size
}

// HMFig13Algorithms are the all-reduces Fig. 13 compares on an HxMesh: the single ring, the two
// bidirectional rings on Hamiltonian cycles, the 2D-torus algorithm as printed (§V-A2) and as
// the SST motif runs it ("2x less bandwidth-efficient").
var HMFig13Algorithms = []string{"ring", "rings", "torus", "torus-sst"}

// HMFig13Presets are its networks: the large HxMeshes, and the fat tree's ring for reference.
var HMFig13Presets = []string{"hx2-large", "hx4-large", "ft-large"}

// HMFig13 computes it once: 1 MiB to 32 GiB by factors of 2.
var HMFig13 = memo(func() (HMFig13Result, error) {
	out := HMFig13Result{Share: map[string]map[string][]float64{}}
	rows, err := Table2()
	if err != nil {
		return out, err
	}
	for s := 1 << 20; s <= 32<<30; s *= 2 {
		out.Sizes = append(out.Sizes, float64(s))
	}
	for _, p := range HMFig13Presets {
		out.Share[p] = map[string][]float64{}
		r, err := Table2Row(rows, p)
		if err != nil {
			return out, err
		}
		inj := r.Ours.Structure.InjectionBps
		for _, alg := range HMFig13Algorithms {
			if p == "ft-large" && alg != "ring" {
				continue
			}
			m, _, err := job.NetworkChoice{Preset: p, Params: []string{"strategy=all-reduce=" + alg}}.Build(network.Env{GPUs: 16384})
			if err != nil {
				return out, err
			}
			for _, s := range out.Sizes {
				c, err := m.Price(network.Collective{Op: network.AllReduce, Bytes: units.Bytes(s),
					Group: network.Group{Size: 16384, Stride: 1}, DType: dtype.FP32})
				if err != nil {
					return out, fmt.Errorf("%s %s at %v: %w", p, alg, units.Bytes(s), err)
				}
				out.Share[p][alg] = append(out.Share[p][alg], s/float64(c.Total)*network.AllReduce.BusFactor(16384)/inj)
			}
		}
	}
	return out, nil
})
