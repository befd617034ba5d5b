package job

import (
	"math"
	"testing"

	"github.com/ddlest/ddlest/partition/megatron"
	"github.com/ddlest/ddlest/profile/roofline"
)

// TestAsyncTPHandWorked: Megatron-LM's async dgrad all-reduce (execution async_tp) hides each
// backward TP all-reduce behind its linear's weight-gradient GEMM, so what stays exposed per
// layer is max(0, T_ar − T_qkv.wgrad) + max(0, T_ar − T_fc1.wgrad) instead of 2·T_ar.
//
// Hand count (h = 4096, s = 2048, b = 1, t = 8, bf16 on an A100 at 312 TFLOP/s × the roofline's 75%
// GEMM efficiency): the QKV weight gradient is 2·b·s·h·3h/t = 25.8 GFLOP, 110 µs; fc1's is
// 2·b·s·h·4h/t = 34.4 GFLOP, 147 µs; T_ar is the dgx-a100 all-reduce of b·s·h·2 = 16.8 MB over the
// 8 GPUs of one DGX: NCCL picks the LL128 ring (its estimate 14 + 14·1.9 = 40.6 µs of latency plus
// 16.8 MB·14/8 / (0.92 · 240 GB/s) = 133 µs beats Simple's 56 + 122 µs), charged 14 µs + 133 µs =
// 147 µs (network/nccl): 37 µs exposed behind QKV, none behind fc1.
func TestAsyncTPHandWorked(t *testing.T) {
	const h, s, b, tp, layers = 4096, 2048, 1, 8, 2
	cl, err := LookupCluster("dgx-a100")
	if err != nil {
		t.Fatal(err)
	}
	run := func(async bool) *Report {
		o := MegatronOptions{Mode: ModeExplicit, GPU: "a100-80gb", Efficiency: roofline.DefaultEfficiency, Cluster: &cl,
			Config: megatron.Config{Layers: layers, Hidden: h, Heads: 32, Seq: s, Vocab: 0, GlobalBatch: b, MicroBatch: b,
				TP: tp, PP: 1, DP: 1, Interleave: 1, Recompute: megatron.RecomputeNone, Precision: megatron.MixedBF16, Optimizer: megatron.Adam, Stack: megatron.Stack{AsyncTP: async}}}
		o.Steps = 1
		r, err := Megatron(o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	bwd := func(r *Report) (perCall, exposed float64, n int) {
		for _, c := range r.Result.Collectives {
			if c.Name == "tp.f.bwd" {
				perCall, exposed, n = float64(c.Cost.Total), exposed+float64(c.Exposed), n+c.Count
			}
		}
		return
	}
	arSync, exSync, nSync := bwd(run(false))
	ar, ex, n := bwd(run(true))
	if nSync != 2*layers || n != 2*layers || arSync != ar {
		t.Fatalf("calls %d / %d, per call %v / %v; want %d each, equal", nSync, n, arSync, ar, 2*layers)
	}
	if want := 14e-6 + 16.777216e6*14/8/(0.92*240e9); math.Abs(ar-want) > 1e-9 {
		t.Errorf("all-reduce %v s, want NCCL's LL128 ring %v s", ar, want)
	}
	peak := 312e12 * roofline.DefaultEfficiency.MatMul
	qkv, fc1 := 2.0*b*s*h*3*h/tp/peak, 2.0*b*s*h*4*h/tp/peak
	if want := layers * 2 * ar; math.Abs(exSync-want) > 1e-9*want {
		t.Errorf("synchronous: exposed %v, want 2·T_ar per layer = %v", exSync, want)
	}
	want := layers * (math.Max(0, ar-qkv) + math.Max(0, ar-fc1))
	if math.Abs(ex-want) > 1e-9*math.Max(want, 1e-9) || !(ex < exSync) {
		t.Errorf("async: exposed %v, want Σ max(0, T_ar − T_wgrad) = %v (qkv %v, fc1 %v)", ex, want, qkv, fc1)
	}
}
