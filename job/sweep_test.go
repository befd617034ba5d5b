package job

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
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
		total := totalColumn(g)
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
			ForgetPlacements()
			if got := aloneTotal(t, base, g, f); got != f[total] {
				t.Errorf("%s row %d: sweep total_s %s, alone %s", cl, i, f[total], got)
			}
		}
	}
}

// fakeRun is a point runner that estimates nothing: every third point "runs", its report in the
// scratch stamped with the point's index; fail lists points whose error stops the sweep.
func fakeRun(fail ...int) pointRunner {
	return func(_ *Job, _ Grid, _ *compiledGrid, p *Point, _ []int, sc *runScratch, _ *placements) error {
		if slices.Contains(fail, p.Index) {
			err := fmt.Errorf("point %d: disk on fire", p.Index)
			p.Status, p.Err = failedPoint, err
			return err
		}
		if p.Index%3 != 0 {
			p.Status, p.Err = Infeasible, errs.Infeasible("", "point %d does not fit", p.Index)
			return nil
		}
		sc.report.rep.Steps = float64(p.Index)
		p.Status, p.Report = OK, &sc.report.rep
		return nil
	}
}

// wideGrid is 60 × 50 = 3,000 points: more than the ring of up to 11 workers, so slots and
// scratches are reused while other points are in flight.
func wideGrid() Grid {
	var tp, pp []string
	for i := 1; i <= 60; i++ {
		tp = append(tp, strconv.Itoa(i))
	}
	for i := 1; i <= 50; i++ {
		pp = append(pp, strconv.Itoa(i))
	}
	return Grid{{"execution.tp", tp}, {"execution.pp", pp}}
}

// TestSweepOrder: every point is emitted once, in grid order, with its own values and the reason
// rendered for it, and a point that ran still holds its report when emitted (its scratch is not
// reused before), for any number of workers.
func TestSweepOrder(t *testing.T) {
	g := wideGrid()
	for _, w := range []int{1, 2, 3, 11} {
		next := 0
		reason := func(err error) string { return "why: " + err.Error() }
		sum, err := runSweep(context.Background(), gpt3Job(t), g, SweepOptions{Workers: w, Reason: reason}, func(p *Point) error {
			if want := fmt.Sprintf("why: point %d does not fit", p.Index); p.Report == nil && p.Reason != want {
				t.Fatalf("%d workers: point %d reason %q, want %q", w, p.Index, p.Reason, want)
			}
			if p.Index != next {
				t.Fatalf("%d workers: point %d emitted after %d", w, p.Index, next-1)
			}
			next++
			if want := []string{strconv.Itoa(p.Index/50 + 1), strconv.Itoa(p.Index%50 + 1)}; !slices.Equal(p.Values, want) {
				t.Fatalf("%d workers: point %d values %v, want %v", w, p.Index, p.Values, want)
			}
			if (p.Report != nil) != (p.Index%3 == 0) || p.Report != nil && p.Report.Steps != float64(p.Index) {
				t.Fatalf("%d workers: point %d emitted with report %v", w, p.Index, p.Report)
			}
			return nil
		}, fakeRun())
		if err != nil || next != 3000 || sum.OK != 1000 || sum.Infeasible != 2000 {
			t.Errorf("%d workers: %d emitted, %+v, %v; want 3,000: 1,000 ok, 2,000 infeasible", w, next, sum, err)
		}
	}
}

// TestSweepStops: a point that fails stops the sweep with its error after the points before it
// (the first failure in grid order, whichever worker met it); an emit that fails, or a
// cancellation, stops it at once.
func TestSweepStops(t *testing.T) {
	g := wideGrid()
	for _, w := range []int{1, 2, 4} {
		var got []int
		_, err := runSweep(context.Background(), gpt3Job(t), g, SweepOptions{Workers: w}, func(p *Point) error {
			got = append(got, p.Index)
			return nil
		}, fakeRun(2900, 1234, 1240))
		if err == nil || err.Error() != "point 1234: disk on fire" || len(got) != 1234 || got[1233] != 1233 {
			t.Errorf("%d workers: %v after %d points, want point 1234's error after points 0–1233", w, err, len(got))
		}

		boom := errors.New("writer closed")
		n := 0
		_, err = runSweep(context.Background(), gpt3Job(t), g, SweepOptions{Workers: w}, func(p *Point) error {
			n++
			if p.Index == 700 {
				return boom
			}
			return nil
		}, fakeRun())
		if err != boom || n != 701 {
			t.Errorf("%d workers: emit error: %v after %d points, want %v after 701", w, err, n, boom)
		}

		ctx, cancel := context.WithCancel(context.Background())
		n = 0
		_, err = runSweep(ctx, gpt3Job(t), g, SweepOptions{Workers: w}, func(p *Point) error {
			n++
			if p.Index == 600 {
				cancel()
			}
			return nil
		}, fakeRun())
		if !errors.Is(err, context.Canceled) || n != 601 {
			t.Errorf("%d workers: cancelled: %v after %d points, want context.Canceled after 601", w, err, n)
		}
	}
}

// TestSweepWideRows: GPT-3 175B over 1,152 layouts (more than one ring of points for 1 and 2
// workers) gives the same rows for 1, 2 and 5 workers, and each point that runs gives the
// iteration time of the same job run alone.
func TestSweepWideRows(t *testing.T) {
	base := gpt3Job(t)
	g := Grid{
		{"execution.tp", []string{"2", "4", "8"}},
		{"execution.pp", []string{"4", "8", "16", "32"}},
		{"execution.dp", []string{"2", "4", "8", "16"}},
		{"execution.micro_batch", []string{"1", "2", "4"}},
		{"execution.interleave", []string{"1", "2"}},
		{"execution.recompute", []string{"selective", "full"}},
		{"execution.seq_parallel", []string{"false", "true"}},
	}
	one, sum := sweepRows(t, base, g, 1)
	if len(one) != 1152 || sum.OK == 0 || sum.Infeasible == 0 || sum.Invalid == 0 {
		t.Fatalf("%d rows, %+v; want 1,152 with points of every status", len(one), sum)
	}
	for _, w := range []int{2, 5} {
		rows, _ := sweepRows(t, base, g, w)
		for i := range one {
			if rows[i] != one[i] {
				t.Fatalf("%d workers, row %d:\n%s\n1 worker:\n%s", w, i, rows[i], one[i])
			}
		}
	}
	total := totalColumn(g)
	for i := 0; i < len(one); i += 7 {
		f := strings.Split(one[i], ",")
		if f[len(g)] != "ok" {
			continue
		}
		if got := aloneTotal(t, base, g, f); got != f[total] {
			t.Errorf("row %d: sweep total_s %s, alone %s", i, f[total], got)
		}
	}
}

// totalColumn is where total_s is in a megatron sweep row of g: after the grid's values, the
// status and the columns before it.
func totalColumn(g Grid) int {
	for i, c := range Columns("megatron") {
		if c.Name == "total_s" {
			return len(g) + 1 + i
		}
	}
	panic("no total_s column")
}

// aloneTotal runs the point of sweep row f alone (base with the row's values set) and returns its
// total_s as a row writes it.
func aloneTotal(t *testing.T, base *Job, g Grid, f []string) string {
	t.Helper()
	j := base.Clone()
	for k, a := range g {
		if err := j.Set(a.Key, f[k]); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Run(j)
	if err != nil {
		t.Fatal(err)
	}
	return (Cell{Kind: Float, Num: float64(rep.Result.Iteration.Total)}).String()
}
