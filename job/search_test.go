package job

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/partition/megatron"
)

// gpt3Job is GPT-3 175B (Brown et al. 2020 Table 2.1: 96 layers, d_model 12,288, 96 heads, batch
// 3.2M tokens = 1,536 sequences of 2,048) on the default cluster.
func gpt3Job(t testing.TB) *Job {
	t.Helper()
	j, err := New("megatron")
	if err != nil {
		t.Fatal(err)
	}
	if err := j.UseModel("gpt3-175b"); err != nil {
		t.Fatal(err)
	}
	return j
}

// TestSearchGPT3 is the check: GPT-3 175B on 512 A100 (global batch 1,536) on DGX A100
// nodes. Tensor parallelism beyond the 8 GPUs of an NVLink node crosses InfiniBand at 1/12 of the
// NVLink bandwidth (the DGX A100 datasheet's 600 GB/s NVLink vs 8 × 200 Gb/s HDR), so the best
// layouts keep TP within a node, as Narayanan et al. 2021 (§5.4, "tensor model parallelism is
// best within a multi-GPU server") found on the same hardware. The search returns only layouts
// that fit, and its best is no slower than anything it enumerated.
func TestSearchGPT3(t *testing.T) {
	j := gpt3Job(t)
	if e := j.Execution.(*TransformerExecution); e.GlobalBatch != 1536 {
		t.Fatalf("gpt3-175b preset global batch %d, want 1536 (Brown et al. Table 2.1)", e.GlobalBatch)
	}
	var fit, unfit int
	var times []float64
	res, err := Search(j, SearchOptions{GPUs: 512, Top: 5, Visit: func(c Candidate) {
		if c.Config.GPUs() != 512 {
			t.Errorf("enumerated a layout of %d GPUs", c.Config.GPUs())
		}
		if c.Fits {
			fit++
			times = append(times, float64(c.Iteration.Total))
		} else {
			unfit++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if fit == 0 || unfit == 0 {
		t.Fatalf("search saw %d fitting and %d non-fitting layouts; GPT-3 on 512 A100 has both", fit, unfit)
	}
	s := res.Summary
	if s.Enumerated != fit+unfit || s.Feasible != fit || s.Lost.Memory != unfit ||
		s.Lost.Compute+s.Lost.Bubble+s.Lost.Communication != fit-1 {
		t.Errorf("summary %+v does not count the %d fitting and %d non-fitting layouts", s, fit, unfit)
	}
	if len(res.Reports) != 5 {
		t.Fatalf("got %d layouts, want the top 5", len(res.Reports))
	}
	best := float64(res.Reports[0].Result.Iteration.Total)
	for _, x := range times {
		if best > x {
			t.Fatalf("best layout %.6g s is slower than an enumerated one, %.6g s", best, x)
		}
	}
	prev := 0.0
	for i, r := range res.Reports {
		c := r.Config
		if c.TP > 8 {
			t.Errorf("layout %d: TP %d spans more than one 8-GPU node", i, c.TP)
		}
		if err := r.Plan.CheckMemory(); err != nil {
			t.Errorf("layout %d does not fit: %v", i, err)
		}
		if x := float64(r.Result.Iteration.Total); x < prev {
			t.Errorf("layout %d (%.6g s) faster than layout %d (%.6g s): not sorted", i, x, i-1, prev)
		} else {
			prev = x
		}
		// Each layout's job runs again to the same numbers.
		again, err := Run(r.Job)
		if err != nil {
			t.Fatal(err)
		}
		if again.Result.Iteration != r.Result.Iteration {
			t.Errorf("layout %d: rerun gives %+v, search %+v", i, again.Result.Iteration, r.Result.Iteration)
		}
	}
}

// TestSearchInfeasible: GPT-3 175B's 175e9 parameters with Adam need 16 bytes each (ZeRO §3.1:
// 2 + 2 + 12) = 2.8 TB of static state; 8 GPUs of 80 GB hold 640 GB, so no layout fits and the
// search says by how much the closest misses (exit 3).
// TestSearchRanks searches GPT-3 13B (Brown et al. Table 2.1) on 1, 64, 128 and 256 A100 of
// dgx-a100 together, ranked by each measure: the best is no worse than any layout enumerated on
// any size (GPU-hours = GPUs × time / 3,600 s; energy = GPUs × the A100 SXM's 400 W maximum power,
// NVIDIA A100 datasheet, × time); 13B cannot fit on one GPU (26 GB of fp16 weights alone, with
// the optimizer's 16 B per parameter well over 80 GB), which is reported, not fatal.
func TestSearchRanks(t *testing.T) {
	j := gpt3Job(t)
	if err := j.UseModel("gpt3-13b"); err != nil {
		t.Fatal(err)
	}
	measure := map[Rank]func(gpus int, s float64) float64{
		RankTime:     func(_ int, s float64) float64 { return s },
		RankGPUHours: func(gpus int, s float64) float64 { return float64(gpus) * s / 3600 },
		RankEnergy:   func(gpus int, s float64) float64 { return float64(gpus) * 400 * s },
	}
	sizesSeen := map[Rank]map[int]bool{}
	for rank, m := range measure {
		var all []float64
		seen := map[int]bool{}
		res, err := Search(j, SearchOptions{Sizes: []int{1, 64, 128, 256}, Rank: rank, Top: 3, Visit: func(c Candidate) {
			if c.Fits {
				all = append(all, m(c.Config.GPUs(), float64(c.Iteration.Total)))
				seen[c.Config.GPUs()] = true
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		sizesSeen[rank] = seen
		best := res.Reports[0]
		want := m(best.Plan.Layout.GPUs, float64(best.Result.Iteration.Total))
		if got := rank.Measure(best); got != want {
			t.Errorf("%v: best measure %g, by hand %g", rank, got, want)
		}
		for _, x := range all {
			if want > x*(1+1e-12) {
				t.Fatalf("%v: best %g is worse than an enumerated layout's %g", rank, want, x)
			}
		}
		for i := 1; i < len(res.Reports); i++ {
			if rank.Measure(res.Reports[i]) < rank.Measure(res.Reports[i-1]) {
				t.Errorf("%v: layout %d ranks after a worse one", rank, i)
			}
		}
		if s := res.Summary; fmt.Sprint(s.Infeasible) != "[1]" || fmt.Sprint(s.Sizes) != "[1 64 128 256]" {
			t.Errorf("%v: summary sizes %v, infeasible %v; want [1 64 128 256] and [1]", rank, s.Sizes, s.Infeasible)
		}
	}
	if len(sizesSeen[RankTime]) != 3 {
		t.Errorf("layouts fit on %v; want 64, 128 and 256 GPUs", sizesSeen[RankTime])
	}
	// More GPUs finish sooner; fewer use fewer GPU-hours (their communication share is smaller).
	fast, _ := Search(j, SearchOptions{Sizes: []int{64, 256}})
	cheap, _ := Search(j, SearchOptions{Sizes: []int{64, 256}, Rank: RankGPUHours})
	if fast.Reports[0].Plan.Layout.GPUs != 256 || cheap.Reports[0].Plan.Layout.GPUs != 64 {
		t.Errorf("fastest on %d GPUs, fewest GPU-hours on %d; want 256 and 64", fast.Reports[0].Plan.Layout.GPUs, cheap.Reports[0].Plan.Layout.GPUs)
	}
}

func TestSearchInfeasible(t *testing.T) {
	_, err := Search(gpt3Job(t), SearchOptions{GPUs: 8})
	var inf *errs.InfeasibleError
	if !errors.As(err, &inf) {
		t.Fatalf("err = %v, want infeasible", err)
	}
	t.Log(err)
}

// TestLayoutsCount enumerates a 4-layer, 4-head model with global batch 4 on 4 GPUs (full
// recomputation, no sequence parallelism) and compares with the hand count:
//
//	TP 1: PP 1 (DP 4, mb 1) 1; PP 2 (DP 2: mb 1 with 2 micro-batches → interleave 1 or 2;
//	      mb 2 → 1) 3; PP 4 (DP 1: mb 1, 2, 4, 1 layer per stage) 3            = 7
//	TP 2: PP 1 (DP 2: mb 1, 2) 2; PP 2 (DP 1: mb 1 → v 1, 2; mb 2 → v 1, 2; mb 4 → 1) 5 = 7
//	TP 4: PP 1 (DP 1: mb 1, 2, 4) 3                                               = 3
//
// 17 in all.
func TestLayoutsCount(t *testing.T) {
	base := megatron.Config{Layers: 4, Hidden: 64, Heads: 4, Seq: 16, GlobalBatch: 4, TP: 1, PP: 1, DP: 1,
		MicroBatch: 1, Interleave: 1, Recompute: megatron.RecomputeFull, Capacity: 1 << 40}
	count := func(zero []int) (n int) {
		megatron.Layouts(base, megatron.Space{GPUs: 4, Recompute: []megatron.Recompute{megatron.RecomputeFull},
			SeqParallel: []bool{false}, ZeRO: zero}, func(c megatron.Config) bool {
			n++
			if err := c.Validate(); err != nil {
				t.Errorf("invalid layout %+v: %v", c, err)
			}
			return true
		})
		return n
	}
	if n := count([]int{0}); n != 17 {
		t.Errorf("%d layouts, want 17 (hand count)", n)
	}
	// Every ZeRO stage: the 6 layouts with PP 1 take stages 0-3, the 11 with PP > 1 stages 0-1
	// (DeepSpeed: ZeRO-2 and -3 are incompatible with pipeline parallelism): 24 + 22 = 46.
	if n := count(nil); n != 46 {
		t.Errorf("%d layouts with every ZeRO stage, want 46 (hand count)", n)
	}
	// Searching CP 1 and 2 and two precisions: CP 2 lays out 2 GPUs per context-parallel rank,
	// TP 1: PP 1 (DP 2: mb 1, 2) 2, PP 2 (DP 1: mb 1 → v 1, 2; mb 2 → v 1, 2; mb 4 → 1) 5;
	// TP 2: PP 1 (DP 1: mb 1, 2, 4) 3: 10, so (17 + 10) × 2 = 54. CP 4 would need the sequence of
	// 16 in 2 × 4 = 8 chunks of 2: it splits, but 4 GPUs per rank leave 1, with TP 1, PP 1 and
	// DP 1, mb 1, 2, 4: 3 more each; CP 3 does not divide the 4 GPUs.
	seen := map[[2]int]int{}
	n := 0
	megatron.Layouts(base, megatron.Space{GPUs: 4, Recompute: []megatron.Recompute{megatron.RecomputeFull},
		SeqParallel: []bool{false}, ZeRO: []int{0}, CP: []int{1, 2, 3, 4},
		Precision: []megatron.Precision{megatron.MixedBF16, megatron.MixedFP8}}, func(c megatron.Config) bool {
		n++
		seen[[2]int{c.CPs(), int(c.Precision)}]++
		return true
	})
	if n != (17+10+3)*2 || seen[[2]int{2, int(megatron.MixedFP8)}] != 10 || seen[[2]int{3, int(megatron.MixedBF16)}] != 0 {
		t.Errorf("%d layouts over CP and precision (%v), want (17 + 10 + 3) × 2 = 60 (hand count)", n, seen)
	}
}

// TestPeakMemoryMatchesPlan: the search prunes with the closed-form footprint; it must agree
// with the plan Build makes (the fullest stage) for every layout, dense and MoE.
func TestPeakMemoryMatchesPlan(t *testing.T) {
	for _, name := range []string{"gpt3-13b", "gpt3-moe"} {
		c, err := PresetConfig(name)
		if err != nil {
			t.Fatal(err)
		}
		c.Capacity = 80e9
		n := 0
		megatron.Layouts(c, megatron.Space{GPUs: 64}, func(c megatron.Config) bool {
			n++
			if n%7 != 0 { // a spread sample keeps the test fast
				return true
			}
			plan, err := megatron.Build(c)
			if err != nil {
				t.Fatal(err)
			}
			var worst float64
			for _, s := range plan.Stages {
				worst = max(worst, float64(s.Memory.Total))
			}
			if got := float64(megatron.PeakMemory(c).Total); got != worst {
				t.Fatalf("%s %+v: closed form %g bytes, plan %g", name, c, got, worst)
			}
			return true
		})
		if n == 0 {
			t.Fatalf("%s: no layouts", name)
		}
	}
}

func BenchmarkSearchGPT3(b *testing.B) {
	for _, gpus := range []int{512, 4096} {
		b.Run(fmt.Sprint(gpus), func(b *testing.B) {
			j := gpt3Job(b)
			for b.Loop() {
				if _, err := Search(j, SearchOptions{GPUs: gpus}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCheckMemoryMatchesPlan: the closed-form check before Build gives the plan's own verdict and
// message, for every layout of a model on 64 GPUs (dense and MoE).
func TestCheckMemoryMatchesPlan(t *testing.T) {
	for _, name := range []string{"gpt3-13b", "gpt3-175b", "gpt3-moe"} {
		c, err := PresetConfig(name)
		if err != nil {
			t.Fatal(err)
		}
		c.Capacity = 80e9
		n, bad := 0, 0
		megatron.Layouts(c, megatron.Space{GPUs: 64}, func(c megatron.Config) bool {
			n++
			if n%5 != 0 {
				return true
			}
			plan, err := megatron.Build(c)
			if err != nil {
				t.Fatal(err)
			}
			want, got := plan.CheckMemory(), megatron.CheckMemory(c)
			if (want == nil) != (got == nil) || (want != nil && want.Error() != got.Error()) {
				t.Fatalf("%s %+v: closed form %v, plan %v", name, c, got, want)
			}
			if want != nil {
				bad++
			}
			return true
		})
		t.Logf("%s: %d layouts, %d of the sample do not fit", name, n, bad)
	}
}

// TestSearchNotSearchable: a workload without a layout search says which have one.
func TestSearchNotSearchable(t *testing.T) {
	j, err := New("dp")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Search(j, SearchOptions{GPUs: 8})
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "searchable: megatron") {
		t.Errorf("err = %v", err)
	}
}

// TestLostTo: the reason is the component with the largest excess over the best (hand cases).
func TestLostTo(t *testing.T) {
	best := estimator.Iteration{Compute: 10, Bubble: 1, ExposedComm: 1}
	for _, c := range []struct {
		it   estimator.Iteration
		want Reason
	}{
		{estimator.Iteration{Compute: 10.5, Bubble: 3, ExposedComm: 1.2}, LostBubble},   // +0.5, +2, +0.2
		{estimator.Iteration{Compute: 12, Bubble: 0.5, ExposedComm: 2.5}, LostCompute},  // +2, −0.5, +1.5
		{estimator.Iteration{Compute: 9, Bubble: 1, ExposedComm: 4}, LostCommunication}, // −1, 0, +3
	} {
		if got := LostTo(c.it, best); got != c.want {
			t.Errorf("%+v: %v, want %v", c.it, got, c.want)
		}
	}
}
