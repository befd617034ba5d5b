package job

import (
	"math"
	"strings"
	"testing"
)

// TestMeasuredCollectives: the nccl-tests points within 15% MAPE (issue 13's bar: "the
// nccl-tests points within 15% MAPE from 8 B to 8 GB"), every row logged with its error. One row
// is a documented deviation beyond 15%: nccl#583's 2-GPU 32 B all-reduce, 10.14 µs measured (NCCL
// of 2021) against NCCL 2.20's own latency model, 6.6 + 2 × 0.6 = 7.8 µs (network/nccl doc.go):
// NCCL's tables leave out the kernel launch the benchmark's time includes.
func TestMeasuredCollectives(t *testing.T) {
	rep, err := ValidateMeasured()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Rows {
		t.Logf("%-16s %-40s %-18s measured %.4g estimate %.4g error %+.1f%%", r.ID, r.Case, r.Algorithm, r.Measured, r.Estimate, 100*r.Error)
	}
	for _, s := range rep.Sets {
		t.Logf("%s: %d rows, MAPE %.1f%%, max %.1f%%, Spearman %.3f", s.Set, s.Rows, 100*s.MAPE, 100*s.MaxError, s.Spearman)
		if s.MAPE > 0.15 {
			t.Errorf("%s: MAPE %.1f%% > 15%%", s.Set, 100*s.MAPE)
		}
	}
	var small, big bool
	for _, r := range rep.Rows {
		small = small || r.Metric == "time_s" && strings.HasSuffix(r.Case, " 8 B")
		big = big || strings.HasSuffix(r.Case, " 8589934592 B")
		if r.ID != "nccl#583" && math.Abs(r.Error) > 0.15 {
			t.Errorf("%s %s: error %+.1f%% beyond 15%%", r.ID, r.Case, 100*r.Error)
		}
	}
	if !small || !big {
		t.Errorf("the set does not span 8 B (%v) to 8 GiB (%v)", small, big)
	}
}

// TestSpearman against hand-ranked series.
func TestSpearman(t *testing.T) {
	for _, c := range []struct {
		x, y []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{[]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		// ranks x 1 2 3, y 1 3 2: 1 − 6·(0+1+1)/(3·8) = 0.5
		{[]float64{1, 2, 3}, []float64{5, 9, 7}, 0.5},
		{[]float64{1, 2}, []float64{1, 2}, 0},
	} {
		if got := Spearman(c.x, c.y); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Spearman(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
}

// BenchmarkValidateMeasured is ddlest validate --measured's work (issue 13: ≤ 2 s).
func BenchmarkValidateMeasured(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ValidateMeasured(); err != nil {
			b.Fatal(err)
		}
	}
}
