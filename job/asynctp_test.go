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

// TestTPCommOverlapHandWorked: Megatron-Core's tp_comm_overlap (model_parallel_config.py
// @02aa3ee4) pipelines every sequence-parallel collective with the GEMM it feeds or drains, so a
// layer exposes only what each collective takes beyond its GEMM:
//
//	forward   max(0, T_ag − T_qkv) + max(0, T_ag − T_fc1) + max(0, T_rs − T_proj) + max(0, T_rs − T_fc2)
//	backward  max(0, T_ag − T_proj) + max(0, T_ag − T_fc2)            (output-gradient all-gathers, dgrad)
//	          + max(0, T_rs − T_qkv) + max(0, T_rs − T_fc1)           (input-gradient reduce-scatters, wgrad)
//	          + max(0, T_ag − T_fc1) + max(0, T_ag − T_qkv)           (input re-gathers, dgrad)
//
// with each GEMM's data- and weight-gradient as long as its forward (same FLOP): 2·b·s·h·3h/t for
// QKV, 2·b·s·h·4h/t for fc1, 2·b·s·h·h/t for the projection and 2·b·s·4h·h/t for fc2, at 312
// TFLOP/s × the roofline's 75%. Without the overlap the forward's four collectives are exposed
// whole. T_ag and T_rs are the dgx-a100 NCCL prices of the 16.8 MB activation's collectives.
func TestTPCommOverlapHandWorked(t *testing.T) {
	const h, s, b, tp, layers = 4096, 2048, 1, 8, 2
	cl, err := LookupCluster("dgx-a100")
	if err != nil {
		t.Fatal(err)
	}
	run := func(overlap bool) *Report {
		o := MegatronOptions{Mode: ModeExplicit, GPU: "a100-80gb", Efficiency: roofline.DefaultEfficiency, Cluster: &cl,
			Config: megatron.Config{Layers: layers, Hidden: h, Heads: 32, Seq: s, Vocab: 0, GlobalBatch: b, MicroBatch: b,
				TP: tp, PP: 1, DP: 1, Interleave: 1, SeqParallel: true, Recompute: megatron.RecomputeNone, Precision: megatron.MixedBF16,
				Optimizer: megatron.Adam, Stack: megatron.Stack{TPCommOverlap: overlap}}}
		o.Steps = 1
		r, err := Megatron(o)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	price := func(r *Report, name string) float64 {
		for _, c := range r.Result.Collectives {
			if c.Name == name {
				return float64(c.Cost.Total)
			}
		}
		t.Fatalf("no collective %s", name)
		return 0
	}
	plain, over := run(false), run(true)
	ag, rs := price(over, "sp.f.fwd"), price(over, "sp.g.fwd")
	peak := 312e12 * roofline.DefaultEfficiency.MatMul
	qkv, fc1 := 2.0*b*s*h*3*h/tp/peak, 2.0*b*s*h*4*h/tp/peak
	proj, fc2 := 2.0*b*s*h*h/tp/peak, 2.0*b*s*4*h*h/tp/peak
	e := func(c, g float64) float64 { return math.Max(0, c-g) }
	fwd := e(ag, qkv) + e(ag, fc1) + e(rs, proj) + e(rs, fc2)
	bwd := e(ag, proj) + e(ag, fc2) + e(rs, qkv) + e(rs, fc1) + e(ag, fc1) + e(ag, qkv)
	if got, want := float64(over.Result.Breakdown.TP), layers*(fwd+bwd); math.Abs(got-want) > 1e-9*math.Max(want, 1e-9) {
		t.Errorf("overlapped: TP exposed %v, want %v (ag %v, rs %v)", got, want, ag, rs)
	}
	if got, want := float64(plain.Result.Stages[0].CommForward), layers*2*(ag+rs); math.Abs(got-want) > 1e-9*want {
		t.Errorf("synchronous: forward TP %v, want 2·(T_ag + T_rs) per layer = %v", got, want)
	}
	if !(over.Result.Breakdown.TP < plain.Result.Breakdown.TP) {
		t.Errorf("overlap should expose less: %v ≥ %v", over.Result.Breakdown.TP, plain.Result.Breakdown.TP)
	}
}
