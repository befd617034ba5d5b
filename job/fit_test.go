package job

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/traces"
)

// The fit recovers a network it is given, by hand: all-reduces over 2 ranks on a ring take
// 2(p − 1) = 2 steps of α and move 2(p − 1)/p · S = S bytes per rank, so at α = 5 µs and
// 100 Gb/s (12.5 GB/s) 1 MB takes 10 + 80 = 90 µs, 10 MB 810 µs and 100 MB 8,010 µs. Slower
// calls of the same sizes (waiting for peers) do not move it: the fastest call is fitted.
func TestCollectiveFits(t *testing.T) {
	row := func(bytes, minNs, totalNs, count int64) traces.CollectiveStat {
		return traces.CollectiveStat{Collective: "all_reduce", Bytes: bytes, GroupSize: 2, Count: count, TotalNs: totalNs, MinNs: minNs}
	}
	ranks := []traces.RankSummary{{Collectives: []traces.CollectiveStat{
		row(1e6, 90e3, 3*90e3+500e3, 3), row(10e6, 810e3, 810e3, 1), row(100e6, 8010e3, 2*8010e3+1e6, 2),
	}}}
	fit, err := CollectiveFits(ranks, nil, NetworkChoice{Name: "alphabeta"})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := float64(fit.Tiers[0].Alpha), float64(fit.Tiers[0].Bandwidth); math.Abs(a/5e-6-1) > 1e-6 || math.Abs(b/12.5e9-1) > 1e-6 || fit.MAPE > 1e-6 || fit.Used != 3 {
		t.Errorf("fit α %g s, B %g B/s, MAPE %g over %d rows; want 5e-6 s, 1.25e10 B/s, 0 over 3", a, b, fit.MAPE, fit.Used)
	}
	if len(fit.Params) != 2 || fit.Params[0] != "latency_ns=5000" || fit.Params[1] != "bandwidth_gbit_per_s=100" {
		t.Errorf("params %v", fit.Params)
	}
	for _, bad := range []struct {
		ranks []traces.RankSummary
		net   string
	}{
		{ranks, "ramp"},
		{[]traces.RankSummary{{Collectives: []traces.CollectiveStat{row(1e6, 90e3, 90e3, 1)}}}, "alphabeta"}, // one size
	} {
		if _, err := CollectiveFits(bad.ranks, nil, NetworkChoice{Name: bad.net}); errs.ExitCode(err) != errs.ExitUsage {
			t.Errorf("%s: %v, want a usage error", bad.net, err)
		}
	}
}

// A two-tier trace (parquet, written here) whose all-reduce times follow the hierarchical ring's
// closed form on the DGX network (Ueno & Yokota 2019; network/collective Hierarchical): with p
// GPUs per node on NVLink (α₁, B₁) and N nodes on InfiniBand (α₂, B₂),
//
//	T(S) = 2(p−1)·(α₁ + S/(p·B₁)) + 2(N−1)·(α₂ + S/(p·N·B₂))
//
// Calls within a node (N = 1) fit NVLink, calls over 4 nodes InfiniBand given it; both tiers come
// back within 1%: α₁ = 1 µs, B₁ = 200 GB/s, α₂ = 5 µs, B₂ = 20 GB/s (none of them a preset value).
func TestCollectiveFitsTwoTiers(t *testing.T) {
	const a1, b1, a2, b2 = 1e-6, 200e9, 5e-6, 20e9
	closed := func(s float64, p, n int) float64 {
		return 2*float64(p-1)*(a1+s/(float64(p)*b1)) + 2*float64(n-1)*(a2+s/(float64(p*n)*b2))
	}
	var evs []traces.Event
	at := int64(0)
	for _, g := range []struct{ p, n int }{{8, 1}, {8, 4}} {
		for _, s := range []float64{1e6, 16e6, 256e6} {
			d := int64(math.Round(closed(s, g.p, g.n) * 1e9))
			evs = append(evs, traces.Event{Device: 0, Stream: 9, Name: "ncclKernel_AllReduce", Category: "collective", StartNs: at, DurNs: d,
				Phase: "unknown", Layer: -1, Collective: "all_reduce", Bytes: int64(s), GroupSize: int32(g.p * g.n)})
			at += d + 1000
		}
	}
	path := filepath.Join(t.TempDir(), "two-tier.parquet")
	if err := traces.WriteFile(path, nil, evs); err != nil {
		t.Fatal(err)
	}
	tf, err := traces.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	ranks, err := tf.Summarize()
	if err != nil {
		t.Fatal(err)
	}
	c, err := LookupCluster("dgx-a100")
	if err != nil {
		t.Fatal(err)
	}
	fit, err := CollectiveFits(ranks, &c, NetworkChoice{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ a, b float64 }{{a1, b1}, {a2, b2}}
	if len(fit.Tiers) != 2 {
		t.Fatalf("tiers %+v", fit.Tiers)
	}
	for i, w := range want {
		tr := fit.Tiers[i]
		if !tr.Constrained || tr.Calls != 3 || math.Abs(float64(tr.Alpha)/w.a-1) > 0.01 || math.Abs(float64(tr.Bandwidth)/w.b-1) > 0.01 || tr.MAPE > 0.01 {
			t.Errorf("tier %s: %+v; want α %g s, B %g B/s from 3 calls within 1%%", tr.Name, tr, w.a, w.b)
		}
	}
	if fit.MAPE > 0.01 || fit.Used != 6 || fit.Cluster != "dgx-a100" {
		t.Errorf("overall MAPE %g over %d rows (cluster %s); want < 1%% over 6", fit.MAPE, fit.Used, fit.Cluster)
	}
}
