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
	path := filepath.Join(t.TempDir(), "s.parquet")
	if err := WriteFile(path, nil, ev); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := f.Summarize()
	if err != nil {
		t.Fatal(err)
	}
	want := []RankSummary{
		{Rank: 0, Events: 5, Steps: 1, StepNs: 60, WindowNs: 50, BusyNs: 40, ComputeNs: 30, CommNs: 15, OverlapNs: 5, IdleNs: 10,
			ByPhase: map[string]int64{"fwd": 10, "bwd": 15, "optimizer": 10}, ByLayer: map[int32]int64{1: 10, 2: 15},
			LayerByPhase: map[string]int64{"fwd": 10, "bwd": 15},
			Kernels:      []KernelStat{{"a", 2, 20}, {"b", 1, 15}, {"ncclKernel_AllReduce", 1, 15}},
			Collectives:  []CollectiveStat{{Collective: "all_reduce", Bytes: 100, GroupSize: 4, Count: 1, TotalNs: 15}}},
		{Rank: 1, Events: 1, ByPhase: map[string]int64{}, ByLayer: map[int32]int64{}, LayerByPhase: map[string]int64{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("summary\n got %+v\nwant %+v", got, want)
	}
}
