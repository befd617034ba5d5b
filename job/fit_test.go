package job

import (
	"math"
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
	fit, err := CollectiveFits(ranks, "alphabeta")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := float64(fit.Alpha), float64(fit.Bandwidth); math.Abs(a/5e-6-1) > 1e-6 || math.Abs(b/12.5e9-1) > 1e-6 || fit.MAPE > 1e-6 || fit.Used != 3 {
		t.Errorf("fit α %g s, B %g B/s, MAPE %g over %d rows; want 5e-6 s, 1.25e10 B/s, 0 over 3", a, b, fit.MAPE, fit.Used)
	}
	if len(fit.Params) != 2 || fit.Params[0] != "latency_ns=5000" || fit.Params[1] != "bandwidth_gbit_per_s=100" {
		t.Errorf("params %v", fit.Params)
	}
	for _, bad := range []struct {
		ranks []traces.RankSummary
		net   string
	}{
		{ranks, "superpod"},
		{[]traces.RankSummary{{Collectives: []traces.CollectiveStat{row(1e6, 90e3, 90e3, 1)}}}, "alphabeta"}, // one size
	} {
		if _, err := CollectiveFits(bad.ranks, bad.net); errs.ExitCode(err) != errs.ExitUsage {
			t.Errorf("%s: %v, want a usage error", bad.net, err)
		}
	}
}
