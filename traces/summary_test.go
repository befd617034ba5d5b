package traces

import (
	"path/filepath"
	"reflect"
	"testing"
)

// Hand-computed summary. Rank 0, one GPU: kernels [0,10) and [5,20) (stream 7 and 8; layer 1 and
// 2), a collective [15,30) and a kernel [40,50): window 50, busy = [0,30) + [40,50) = 40, compute
// = [0,20) + [40,50) = 30, communication 15, overlap 30 + 15 − 40 = 5, idle 10. One profiler step
// of 60 on the host. Rank 1 has only a CPU op.
func TestSummarize(t *testing.T) {
	ev := []Event{
		{Rank: 0, Device: -1, Stream: 1, Name: "ProfilerStep#1", Category: "annotation", StartNs: 0, DurNs: 60, Phase: "unknown", Layer: -1},
		{Rank: 0, Device: 0, Stream: 7, Name: "a", Category: "kernel", StartNs: 0, DurNs: 10, Phase: "fwd", Layer: 1},
		{Rank: 0, Device: 0, Stream: 8, Name: "b", Category: "kernel", StartNs: 5, DurNs: 15, Phase: "bwd", Layer: 2},
		{Rank: 0, Device: 0, Stream: 9, Name: "ncclKernel_AllReduce", Category: "collective", StartNs: 15, DurNs: 15, Phase: "bwd", Layer: -1,
			Collective: "all_reduce", Bytes: 100, GroupSize: 4},
		{Rank: 0, Device: 0, Stream: 7, Name: "a", Category: "kernel", StartNs: 40, DurNs: 10, Phase: "optimizer", Layer: -1},
		{Rank: 1, Device: -1, Stream: 1, Name: "aten::mm", Category: "cpu_op", StartNs: 3, DurNs: 4, Phase: "fwd", Layer: -1},
	}
	f := openEvents(t, ev)
	got, err := f.Summarize()
	if err != nil {
		t.Fatal(err)
	}
	want := []RankSummary{
		{Rank: 0, Events: 5, Steps: 1, StepNs: 60, WindowNs: 50, BusyNs: 40, ComputeNs: 30, CommNs: 15, OverlapNs: 5, IdleNs: 10,
			ByPhase: map[string]int64{"fwd": 10, "bwd": 15, "optimizer": 10}, ByLayer: map[int32]int64{1: 10, 2: 15},
			LayerByPhase: map[string]int64{"fwd": 10, "bwd": 15},
			Kernels:      []KernelStat{{"a", 2, 20}, {"b", 1, 15}, {"ncclKernel_AllReduce", 1, 15}},
			Collectives:  []CollectiveStat{{Collective: "all_reduce", Bytes: 100, GroupSize: 4, Count: 1, TotalNs: 15, MinNs: 15}}},
		{Rank: 1, Events: 1, ByPhase: map[string]int64{}, ByLayer: map[int32]int64{}, LayerByPhase: map[string]int64{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary\n got %+v\nwant %+v", got, want)
	}
}

// Step selection, by hand. Host steps ProfilerStep#4 [0,100), #5 [100,200), #6 [200,300); the
// launches (runtime, correlation c) at 10 (c 1), 20 (2), 110 (3), 120 (4) and 210 (5); on the
// GPU, behind the host: kernel c1 [30,60), memcpy c2 [55,70), kernel c3 [140,150), collective c4
// [170,190), kernel c5 [250,260), and a kernel without a launch at [195,198), which takes the
// last step to begin before it (#5).
//
//	#4: window [30,70) 40, compute 30, memory 15, busy 40, idle 0
//	#5: window [140,198) 58, compute 10 + 3, communication 20, busy 33, idle 25
//	#6: window [250,260) 10, compute 10
//
// complete (HTA's default: all but the last): #4 and #5, window 98, busy 73, compute 43,
// communication 20, memory 15, idle 25; all: the whole trace, window [30,260) 230, busy 83,
// compute 53, idle 147; 6:6: #6 only.
func TestSummarizeSteps(t *testing.T) {
	ev := []Event{
		{Device: -1, Stream: 1, Name: "ProfilerStep#4", Category: "annotation", StartNs: 0, DurNs: 100},
		{Device: -1, Stream: 1, Name: "cudaLaunchKernel", Category: "runtime", StartNs: 10, DurNs: 1, Correlation: 1},
		{Device: -1, Stream: 1, Name: "cudaMemcpyAsync", Category: "runtime", StartNs: 20, DurNs: 1, Correlation: 2},
		{Device: 0, Stream: 7, Name: "k", Category: "kernel", StartNs: 30, DurNs: 30, Correlation: 1, Phase: "fwd"},
		{Device: 0, Stream: 8, Name: "Memcpy HtoD", Category: "memcpy", StartNs: 55, DurNs: 15, Correlation: 2},
		{Device: -1, Stream: 1, Name: "ProfilerStep#5", Category: "annotation", StartNs: 100, DurNs: 100},
		{Device: -1, Stream: 1, Name: "cudaLaunchKernel", Category: "runtime", StartNs: 110, DurNs: 1, Correlation: 3},
		{Device: -1, Stream: 1, Name: "cudaLaunchKernel", Category: "runtime", StartNs: 120, DurNs: 1, Correlation: 4},
		{Device: 0, Stream: 7, Name: "k", Category: "kernel", StartNs: 140, DurNs: 10, Correlation: 3, Phase: "bwd"},
		{Device: 0, Stream: 9, Name: "ncclKernel_AllReduce", Category: "collective", StartNs: 170, DurNs: 20, Correlation: 4,
			Collective: "all_reduce", Bytes: 8, GroupSize: 2},
		{Device: 0, Stream: 7, Name: "g", Category: "kernel", StartNs: 195, DurNs: 3, Phase: "bwd"},
		{Device: -1, Stream: 1, Name: "ProfilerStep#6", Category: "annotation", StartNs: 200, DurNs: 100},
		{Device: -1, Stream: 1, Name: "cudaLaunchKernel", Category: "runtime", StartNs: 210, DurNs: 1, Correlation: 5},
		{Device: 0, Stream: 7, Name: "k", Category: "kernel", StartNs: 250, DurNs: 10, Correlation: 5, Phase: "optimizer"},
	}
	for i := range ev {
		ev[i].Layer = -1
		if ev[i].Phase == "" {
			ev[i].Phase = "unknown"
		}
	}
	f := openEvents(t, ev)
	type totals struct{ selected, window, busy, compute, comm, memory, overlap, idle int64 }
	for _, c := range []struct {
		steps string
		want  totals
		per   []StepSummary
	}{
		{"complete", totals{2, 98, 73, 43, 20, 15, 0, 25}, []StepSummary{
			{Step: 4, WindowNs: 40, BusyNs: 40, ComputeNs: 30, MemoryNs: 15},
			{Step: 5, WindowNs: 58, BusyNs: 33, ComputeNs: 13, CommNs: 20, IdleNs: 25}}},
		{"all", totals{0, 230, 83, 53, 20, 15, 0, 147}, nil},
		{"6:6", totals{1, 10, 10, 10, 0, 0, 0, 0}, []StepSummary{{Step: 6, WindowNs: 10, BusyNs: 10, ComputeNs: 10}}},
	} {
		sel, err := ParseSteps(c.steps)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := f.SummarizeSteps(sel)
		if err != nil {
			t.Fatal(err)
		}
		r := rs[0]
		got := totals{int64(r.Selected), r.WindowNs, r.BusyNs, r.ComputeNs, r.CommNs, r.MemoryNs, r.OverlapNs, r.IdleNs}
		if got != c.want || !reflect.DeepEqual(r.PerStep, c.per) || r.Steps != 3 {
			t.Errorf("--steps %s: %+v per step %+v, want %+v and %+v", c.steps, got, r.PerStep, c.want, c.per)
		}
	}
	for _, bad := range []string{"x", "5:4", "-1", "3:"} {
		if _, err := ParseSteps(bad); err == nil {
			t.Errorf("--steps %q accepted", bad)
		}
	}
}

// openEvents writes events to a trace file and opens it (closed when the test ends).
func openEvents(t *testing.T, ev []Event) *File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.parquet")
	if err := WriteFile(path, nil, ev); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
