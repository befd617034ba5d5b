package job

import (
	"context"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
)

// sweepRows runs a sweep and renders its rows with the column specification.
func sweepRows(t *testing.T, base *Job, g Grid, workers int) ([]string, SweepSummary) {
	t.Helper()
	cols := Columns(base.Workload)
	var rows []string
	sum, err := Sweep(context.Background(), base, g, SweepOptions{Workers: workers}, func(p *Point) error {
		line := strings.Join(p.Values, ",") + "," + p.Status.String()
		if p.Report != nil {
			for _, c := range Row(p.Report, cols) {
				line += "," + c.String()
			}
		} else {
			line += "," + p.Err.Error()
		}
		rows = append(rows, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, sum
}

// TestSweepWorkers: GPT-3 175B on 64 GPUs over TP × PP. The rows are the same, in the same
// order, for 1 and 3 workers; points that do not fit are counted with their reason. The grid has
// 4 × 5 = 20 points; the ones with TP · PP not dividing 64 GPUs into a whole DP are invalid: the
// four with PP 3 and TP 8 × PP 16 = 128.
func TestSweepWorkers(t *testing.T) {
	base := gpt3Job(t)
	if err := base.Set("execution.gpus", "64"); err != nil {
		t.Fatal(err)
	}
	g := Grid{{"execution.tp", []string{"1", "2", "4", "8"}}, {"execution.pp", []string{"1", "2", "3", "8", "16"}}}
	one, sum := sweepRows(t, base, g, 1)
	three, _ := sweepRows(t, base, g, 3)
	if len(one) != 20 || sum.Points != 20 || sum.OK+sum.Infeasible+sum.Invalid != 20 {
		t.Fatalf("%d rows, summary %+v; want 20 points", len(one), sum)
	}
	for i := range one {
		if one[i] != three[i] {
			t.Fatalf("row %d differs:\n1 worker:  %s\n3 workers: %s", i, one[i], three[i])
		}
	}
	// GPT-3's 2.8 TB of weights, gradients and Adam state (175e9 parameters × 16 bytes, ZeRO
	// §3.1) over TP·PP GPUs of 80 GiB (85.9 GB) need TP·PP ≥ 33: every valid point with TP·PP ≤ 32
	// is infeasible.
	if sum.Invalid != 5 {
		t.Errorf("%d invalid points, want 5 (PP 3, and TP 8 × PP 16)", sum.Invalid)
	}
	for _, r := range one {
		f := strings.Split(r, ",")
		tp, pp := f[0], f[1]
		mp := atoi(tp) * atoi(pp)
		if pp == "3" || mp > 64 {
			continue
		}
		if mp <= 32 && f[2] != "infeasible" {
			t.Errorf("TP %s × PP %s = %d: %s, want infeasible (memory)", tp, pp, mp, f[2])
		}
		if f[2] == "infeasible" && !strings.Contains(r, "memory") {
			t.Errorf("infeasible point without a memory reason: %s", r)
		}
	}
	if sum.OK == 0 {
		t.Error("no point fits")
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = 10*n + int(c-'0')
	}
	return n
}

// TestSweepBadKey: a key that does not exist, or a value of the wrong unit, is refused before
// the sweep starts (exit 2).
// TestSweepWorkersRouted: on a routed fabric (torus-small, whose data-parallel buckets share
// links with the tensor-parallel traffic) the workers share one placed model; rows are the same
// for 1 and 3 workers.
func TestSweepWorkersRouted(t *testing.T) {
	base := gpt3Job(t)
	for _, kv := range [][2]string{{"cluster", "torus-small"}, {"model", "gpt3-1.3b"}, {"execution.gpus", "256"}} {
		if err := base.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	g := Grid{{"execution.tp", []string{"1", "2", "4"}}, {"execution.pp", []string{"1", "2"}}, {"execution.micro_batch", []string{"1", "2"}}}
	one, sum := sweepRows(t, base, g, 1)
	three, _ := sweepRows(t, base, g, 3)
	if len(one) != 12 || sum.OK == 0 {
		t.Fatalf("%d rows, summary %+v; want 12 points, some that fit", len(one), sum)
	}
	for i := range one {
		if one[i] != three[i] {
			t.Fatalf("row %d differs:\n1 worker:  %s\n3 workers: %s", i, one[i], three[i])
		}
	}
}

func TestSweepBadKey(t *testing.T) {
	base := gpt3Job(t)
	for _, g := range []Grid{
		{{"execution.tpp", []string{"1"}}},
		{{"execution.dp_bucket_bytes", []string{"2us"}}},
		{{"tp", []string{"1"}}, {"tp", []string{"2"}}},
	} {
		_, err := Sweep(context.Background(), base, g, SweepOptions{}, func(*Point) error { return nil })
		if errs.ExitCode(err) != errs.ExitUsage {
			t.Errorf("grid %v: err %v, want a usage error", g, err)
		}
	}
}

// BenchmarkSweep is a 12,288-point sweep of GPT-3 175B layouts (most do not fit or are invalid,
// as in a real layout sweep). Target (issue 9): ≥ 100,000 points/s on one core, ≥ 1.8× that on
// two.
func BenchmarkSweep(b *testing.B) {
	base := gpt3Job(b)
	g := Grid{
		{"execution.tp", []string{"1", "2", "4", "8"}},
		{"execution.pp", []string{"1", "2", "4", "8", "16", "32", "48", "96"}},
		{"execution.dp", []string{"1", "2", "4", "8", "16", "32", "64", "128"}},
		{"execution.micro_batch", []string{"1", "2", "4", "8"}},
		{"execution.interleave", []string{"1", "2"}},
		{"execution.recompute", []string{"none", "selective", "full"}},
		{"execution.seq_parallel", []string{"false", "true"}},
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		sum, err := Sweep(context.Background(), base, g, SweepOptions{}, func(*Point) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
		n += sum.Points
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "points/s")
}

// TestSweepPlacements: networks placed once and reused — shared across workers for RAMP's model,
// kept per worker for HammingMesh's routed fabric — give the rows a fresh placement gives.
func TestSweepPlacements(t *testing.T) {
	for _, cl := range []string{"ramp-65536", "hx4-small"} {
		base := gpt3Job(t)
		if err := base.Set("cluster", cl); err != nil {
			t.Fatal(err)
		}
		if err := base.Set("execution.gpus", "512"); err != nil {
			t.Fatal(err)
		}
		g := Grid{{"execution.tp", []string{"4", "8"}}, {"execution.pp", []string{"8", "16"}}, {"execution.recompute", []string{"selective", "full"}}}
		one, _ := sweepRows(t, base, g, 1)
		three, sum := sweepRows(t, base, g, 3)
		if sum.OK == 0 {
			t.Fatalf("%s: no point ran", cl)
		}
		total := -1
		for i, c := range Columns("megatron") {
			if c.Name == "total_s" {
				total = len(g) + 1 + i // the grid's values, the status, then the columns
			}
		}
		for i := range one {
			if one[i] != three[i] {
				t.Fatalf("%s row %d: 1 worker %s, 3 workers %s", cl, i, one[i], three[i])
			}
			f := strings.Split(one[i], ",")
			if f[len(g)] != "ok" {
				continue
			}
			// The point alone, on a network placed for it (the process-wide placements
			// forgotten).
			j := base.Clone()
			for k, a := range g {
				if err := j.Set(a.Key, f[k]); err != nil {
					t.Fatal(err)
				}
			}
			shared.Lock()
			shared.m = nil
			shared.Unlock()
			rep, err := Run(j)
			if err != nil {
				t.Fatal(err)
			}
			if got := (Cell{Kind: Float, Num: float64(rep.Result.Iteration.Total)}).String(); got != f[total] {
				t.Errorf("%s row %d: sweep total_s %s, alone %s", cl, i, f[total], got)
			}
		}
	}
}
