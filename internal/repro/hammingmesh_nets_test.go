package repro

import (
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/network"
)

// gpt3Step, moeStep, resnetIter, dlrmIter and cosmoIter are the library's §V-B runs for a test.
func gpt3Step(t testing.TB, preset string, params ...string) float64 {
	return must(GPT3Step(preset, params...))
}
func moeStep(t testing.TB, preset string) float64    { return must(MoEStep(preset)) }
func resnetIter(t testing.TB, preset string) float64 { return must(ResNetIter(preset)) }
func dlrmIter(t testing.TB, preset string) float64   { return must(DLRMIter(preset)) }
func cosmoIter(t testing.TB, preset string) float64  { return must(CosmoIter(preset)) }

// checkOrder asserts the paper's order of the runs (non-decreasing; ties allowed where the
// paper's values differ by less than our model resolves); each value is a row of the table.
func checkOrder(t *testing.T, what string, rows []HMRow, run func(string) float64) {
	t.Helper()
	prev := 0.0
	for _, r := range rows {
		got := run(r.Preset)
		if got < prev*(1-1e-9) {
			t.Errorf("%s on %s: %.3f ms is below the previous network's %.3f ms; the paper orders them the other way", what, r.Preset, 1e3*got, 1e3*prev)
		}
		prev = got
	}
}

// §V-B5: "The total runtimes on the three fat tree variants are 34.8 ms, 36.4 ms, and 37.5 ms,
// respectively. On torus, the code executes for 72.2 ms per iteration. HyperX is at 40.9 ms. Hx2
// and Hx4Mesh are at 41.7 ms and 49.9 ms" — in that order. The 50% tapered tree ties with the
// non-blocking one here: in a 1F1B phase a leaf's 21 active TP flows fit its 22 uplinks under
// adaptive (split) routing.
func TestGPT3Runtimes(t *testing.T) {
	checkOrder(t, "GPT-3 step", GPT3Runs, func(p string) float64 { return gpt3Step(t, p) })
}

// §V-B5: MoE "on the fat trees varies from 52.2 ms to 52.9 ms depending on tapering. On torus, the
// code executes for 73.8 ms per iteration. HyperX takes 53.9 ms while Hx2 and Hx4Mesh are at 58.3
// ms and 63.3 ms". The 1,536 ranks need the large clusters (reference/hammingmesh.md §7.3: Fig. 15
// normalises MoE with the large costs).
func TestMoERuntimes(t *testing.T) {
	checkOrder(t, "MoE step", MoERuns, func(p string) float64 { return moeStep(t, p) })
}

// §V-B2: ResNet-152 on 1,024 A100s (108 ms of compute) finishes "in 110.1 ms" on HxMeshes and
// torus "and on the other topologies in 109.7 ms", ±0.5 ms (the extraction's tolerance), with
// the motif's ring; and the ring is as fast on the 75% tapered tree as on the non-blocking one
// (its neighbours share leaves), while GPT-3's stride-96 rings slow down with tapering.
func TestResNetRuntimes(t *testing.T) {
	run := func(preset string) float64 { return resnetIter(t, preset) }
	if a, b := run("ft-small"), run("ft75-small"); math.Abs(a-b) > 1e-12*a {
		t.Errorf("ResNet's ring: %.6g s non-blocking, %.6g s 75%% tapered; the same expected", a, b)
	}
	if a, b := gpt3Step(t, "ft-small"), gpt3Step(t, "ft75-small"); !(b > a*1.02) {
		t.Errorf("GPT-3's stride-96 rings: %.4g s non-blocking, %.4g s 75%% tapered; tapering should slow them", a, b)
	}
}

// §V-B4: DLRM's runtimes 2.96, 2.97, 2.99 ms (fat trees), 3.12 (torus), 2.94 (HyperX), 2.97
// (Hx2), 3.00 ms (Hx4) over 2,901 µs of compute: the overheads within ±50%, the torus largest.
func TestDLRMRuntimes(t *testing.T) {
	over := map[string]float64{}
	for _, c := range DLRMRuns {
		over[c.Preset] = dlrmIter(t, c.Preset)
	}
	for k, v := range over {
		if k != "torus-small" && v >= over["torus-small"] {
			t.Errorf("DLRM: %s's iteration %.0f µs is not below the torus's %.0f µs", k, v*1e6, over["torus-small"]*1e6)
		}
	}
}

// §V-B3: CosmoFlow (44.3 ms of compute, D = 256, O = 4) has "less than 2% overhead on all
// topologies but Hx4Mesh and torus (3.4% and 4.4%)", ±1 percentage point, with the motif's
// gradient all-reduces over D only.
func TestCosmoFlowRuntimes(t *testing.T) {
	if got, hx4 := cosmoIter(t, "torus-small"), cosmoIter(t, "hx4-small"); !(got > hx4) {
		t.Errorf("CosmoFlow on torus-small: %.4g s (Hx4Mesh %.4g s); the paper has the torus's overhead the largest", got, hx4)
	}
}

// The busiest link of GPT-3's tensor-parallel rings on the 32 × 32 torus, by hand: with ranks
// row-major (placement=rows) a TP group {s, s+96, s+192, s+288} is one column x = s mod 32 at
// rows r, r+3, r+6, r+9 (r = ⌊s/32⌋ ∈ {0, 1, 2}); the ring's steps go +3 rows three times and −9
// rows once, so every +y link of column x between rows 2 and 9 carries the three groups of that
// column (r = 0, 1, 2 cover rows r … r+9): 3 flows. In one 1F1B phase the column's three groups
// are all of one parity (s, s+32, s+64), so they stay. One ring step of an all-reduce of S then
// takes α + 3·(S/4)/50 GB/s; no level model sees the sharing (topology.Levels puts the group on
// one torus tier, one flow per link).
func TestGPT3TorusBusiestLink(t *testing.T) {
	m, _, err := job.NetworkChoice{Preset: "torus-small", Params: []string{"placement=rows", "strategy=ring"}}.Build(network.Env{GPUs: 384})
	if err != nil {
		t.Fatal(err)
	}
	const S = 100663296 // N_A: 2,048 × 12,288 FP32 activations
	g := network.Group{Size: 4, Stride: 96, Every: 2, Block: 1}
	c, err := m.Price(network.Collective{Op: network.AllReduce, Bytes: S, Group: g, DType: dtype.FP32})
	if err != nil {
		t.Fatal(err)
	}
	want := 6 * 3 * (S / 4.0) / 50e9 // 2(p−1) steps, 3 flows of S/4 on a 50 GB/s port link
	if math.Abs(float64(c.H2T)/want-1) > 1e-9 || c.Steps != 6 || !strings.Contains(c.Bottleneck, "link") && !strings.Contains(c.Bottleneck, "cable") {
		t.Errorf("TP ring on the torus: %+v; transfer by hand %.6g s", c, want)
	}
	// Alone (one group), the same ring runs at a port's full rate.
	g.Concurrent = 1
	one, _ := m.Price(network.Collective{Op: network.AllReduce, Bytes: S, Group: g, DType: dtype.FP32})
	if math.Abs(float64(one.H2T)/(want/3)-1) > 1e-9 {
		t.Errorf("one TP ring: %v, want %.6g s", one.H2T, want/3)
	}
}

// Table II's global bandwidth, in the paper's order: each of Dragonfly, HyperX and torus sits
// where the paper ranks it among its cluster's eight (ties with the fat tree allowed: both at the
// injection). A shape check beside the rows (hammingmesh/table2-*, which hold every cell's
// number): the Dragonfly's and the torus's shares are documented deviations, their rank is not.
func TestTableIIGlobalOrder(t *testing.T) {
	rows, err := Table2()
	if err != nil {
		t.Fatal(err)
	}
	byCluster := map[string][]job.TableRow{}
	for _, r := range rows {
		byCluster[r.Paper.Cluster] = append(byCluster[r.Paper.Cluster], r)
	}
	if len(rows) != 16 || len(byCluster) != 2 {
		t.Fatalf("%d rows in %d clusters, want 16 in 2", len(rows), len(byCluster))
	}
	for cluster, rs := range byCluster {
		rank := func(share func(job.TableRow) float64, name string) int {
			sorted := append([]job.TableRow(nil), rs...)
			sort.SliceStable(sorted, func(i, j int) bool { return share(sorted[i]) > share(sorted[j])+1e-3 })
			for i, r := range sorted {
				if strings.HasPrefix(r.Paper.Preset, name+"-") {
					return i
				}
			}
			return -1
		}
		paper := func(r job.TableRow) float64 { return r.Paper.GlobalPct / 100 }
		ours := func(r job.TableRow) float64 { return r.Ours.Shares.Global }
		for _, name := range []string{"df", "hyperx", "torus"} {
			if a, b := rank(ours, name), rank(paper, name); a != b {
				t.Errorf("%s %s: global bandwidth ranks %d, Table II %d", cluster, name, a, b)
			}
		}
	}
}

// BenchmarkSectionVB runs every §V-B workload on the eight topologies of one cluster size (MoE's
// 1,536 ranks on the large presets, the others on the small ones) in one process, as `ddlest`
// would one after the other: built graphs are shared, every model and its caches are new.
func BenchmarkSectionVB(b *testing.B) {
	nets := []string{"ft", "ft50", "ft75", "df", "hyperx", "hx2", "hx4", "torus"}
	runs := []struct {
		name, size string
		run        func(testing.TB, string) float64
	}{
		{"gpt3", "small", func(t testing.TB, p string) float64 { return gpt3Step(t, p) }},
		{"moe", "large", moeStep},
		{"resnet152", "small", resnetIter},
		{"dlrm", "small", dlrmIter},
		{"cosmoflow", "small", cosmoIter},
	}
	b.ReportAllocs()
	for b.Loop() {
		job.ForgetPlacements() // new models each time (shareable ones are kept process-wide)
		for _, r := range runs {
			for _, n := range nets {
				if got := r.run(b, n+"-"+r.size); !(got > 0) {
					b.Fatalf("%s on %s-%s: %v", r.name, n, r.size, got)
				}
			}
		}
	}
}

// BenchmarkTableII is `ddlest cost --table hammingmesh`: sixteen fabrics built, costed, and
// their global and all-reduce bandwidths routed.
func BenchmarkTableII(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := job.ReproduceTable("hammingmesh"); err != nil {
			b.Fatal(err)
		}
	}
}
