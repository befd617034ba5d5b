package roofline

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/partition"
)

// TestFlashAttentionTime: a FlashAttention pass runs at the GPU's measured efficiency on the FLOP
// it executes, by hand for B·heads = 16, s = 2048, d = 128 in bf16 on the A100 80GB (dense bf16
// peak 312 TFLOP/s, A100 datasheet): the forward's convention FLOP is 4·16·2048²·128, of which
// the causal kernel runs half at 73% of the peak; the backward's is twice that, of which it runs
// 5/8 (2.5 × the executed forward) at 63% (FlashAttention-2 §1 and §4.1). On the H100 (989.4
// TFLOP/s) head dimension 128 at s = 2048 runs FlashAttention-3's measured 521 TFLOP/s causal
// forward, and its 501 TFLOP/s non-causal backward scaled by the forward's causal/non-causal
// 521/625 (FlashAttention-3 §4.1 charts, head dim 128), both at the saturated node's share.
func TestFlashAttentionTime(t *testing.T) {
	gr := partition.NewGraph(16, 8)
	q := tensor.Shape{16, 2048, 128}
	fwd := gr.FlashAttention("attn.flash", partition.Forward, q, 2048, 16, int(q[2]), dtype.BF16)
	bwd := gr.FlashAttentionBackward("attn.flash.bwd", q, 2048, 16, int(q[2]), dtype.BF16)
	conv := 4 * 16 * 2048.0 * 2048 * 128
	if float64(fwd.FLOP) != conv || float64(bwd.FLOP) != 2*conv {
		t.Fatalf("FLOP fwd %g bwd %g, want 4·B·s²·d = %g and twice that", float64(fwd.FLOP), float64(bwd.FLOP), conv)
	}
	// Bytes: forward reads Q, K, V and writes O (16·2048·128 bf16 each) and L (16·2048 fp32);
	// backward reads Q, K, V, O, dO and L and writes dQ, dK, dV.
	n := 16 * 2048 * 128 * 2.0
	if float64(fwd.Read) != 3*n || float64(fwd.Written) != n+16*2048*4 ||
		float64(bwd.Read) != 5*n+16*2048*4 || float64(bwd.Written) != 3*n {
		t.Errorf("bytes fwd %v/%v bwd %v/%v", fwd.Read, fwd.Written, bwd.Read, bwd.Written)
	}
	for _, c := range []struct {
		gpu      string
		peak     float64
		fwd, bwd float64
	}{
		{"a100-80gb", 312e12, 0.73, 0.63},
		{"h100", 989.4e12, 521e12 / 989.4e12 * sustained, 501e12 * 521 / 625 / 989.4e12 * sustained}, // saturated node (gemm_test.go)
	} {
		g, _ := LookupGPU(c.gpu)
		r, err := New(g, DefaultEfficiency, dtype.BF16)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.FlashAttention(); err != nil {
			t.Fatalf("%s: %v", c.gpu, err)
		}
		if got, want := float64(r.OpTime(fwd)), conv/2/(c.peak*c.fwd); math.Abs(got-want) > 1e-12*want {
			t.Errorf("%s forward %g s, want %g", c.gpu, got, want)
		}
		if got, want := float64(r.OpTime(bwd)), 2*conv*5/8/(c.peak*c.bwd); math.Abs(got-want) > 1e-12*want {
			t.Errorf("%s backward %g s, want %g", c.gpu, got, want)
		}
		// Recomputation re-runs the forward kernel.
		if got := r.OpTime(partition.AsPhase(fwd, partition.Recompute)); got != r.OpTime(fwd) {
			t.Errorf("%s recomputed forward %v, want %v", c.gpu, got, r.OpTime(fwd))
		}
	}
}

// TestFlashAttentionCurve: between FlashAttention-3's measured sequence lengths the H100's
// efficiency is linear in log2(s), flat beyond them, and head dimensions without a curve take the
// nearest measured one (128 only). By hand from the §4.1 charts (head dim 128, causal forward):
// s = 2048·√2 (half way from 2k to 4k in log2) runs (521 + 579)/2 = 550 TFLOP/s; s = 256 the 512
// bar's 292, s = 64k the 16k bar's 616; d = 64 and 256 as d = 128.
func TestFlashAttentionCurve(t *testing.T) {
	g, _ := LookupGPU("h100")
	r, err := New(g, DefaultEfficiency, dtype.BF16)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s, d  int
		tflop float64
	}{{2896, 128, 550}, {256, 128, 292}, {65536, 128, 616}, {2048, 64, 521}, {2048, 256, 521}} {
		// 2896 = round(2048·√2): log2 is 11.4998, within 2e-4 of half way.
		got := r.flash.efficiency(c.s, c.d, false, true) / sustained * 989.4
		if math.Abs(got-c.tflop) > 0.05 {
			t.Errorf("s %d d %d: %.2f TFLOP/s, want %g", c.s, c.d, got, c.tflop)
		}
	}
}

// TestFlashAttentionRefused: GPUs and dtypes without a measured efficiency are refused, naming
// the ones that have one; the table refuses an efficiency outside (0, 1] and one without a source.
func TestFlashAttentionRefused(t *testing.T) {
	for _, c := range []struct {
		gpu string
		dt  dtype.DType
	}{{"v100", dtype.FP16}, {"a100-80gb", dtype.FP32}} {
		g, _ := LookupGPU(c.gpu)
		r, err := New(g, DefaultEfficiency, c.dt)
		if err != nil {
			t.Fatal(err)
		}
		err = r.FlashAttention()
		if err == nil || errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "measured: a100-80gb, a100-40gb, h100, h200") {
			t.Errorf("%s %s: %v, want exit 2 listing the measured GPUs", c.gpu, c.dt, err)
		}
	}
	ok := `"gpu": "x", "sms": 108, "tile_m": 256, "tile_n": 128, "mamf_flop_per_s": {"bf16": 2e14}`
	src := `"sms": "s", "tile": "t", "mamf_flop_per_s": "c"`
	for _, c := range []struct{ table, want string }{
		{`[{` + ok + `, "flash_attention": {"fwd": 1.2, "bwd": 0.5}, "sources": {` + src + `, "flash_attention": "f"}}]`, "x.flash_attention.fwd 1.2 must be in (0, 1]"},
		{`[{` + ok + `, "flash_attention": {"fwd": 0.7, "bwd": 0}, "sources": {` + src + `, "flash_attention": "f"}}]`, "x.flash_attention.bwd 0 must be in (0, 1]"},
		{`[{` + ok + `, "flash_attention": {"fwd": 0.7, "bwd": 0.6}, "sources": {` + src + `}}]`, "x.sources.flash_attention: missing"},
		{`[{` + ok + `, "flash_attention": {"curves": [{"head_dim": 128, "seq": [512, 256], "causal_fwd_tflops": [1, 2], "fwd_tflops": [1, 2], "bwd_tflops": [1, 2]}]}, "sources": {` + src + `, "flash_attention": "f"}}]`, "x.flash_attention.curves[0].seq [512 256] must be positive and increasing"},
		{`[{` + ok + `, "flash_attention": {"curves": [{"head_dim": 128, "seq": [512], "causal_fwd_tflops": [1, 2], "fwd_tflops": [1], "bwd_tflops": [1]}]}, "sources": {` + src + `, "flash_attention": "f"}}]`, "x.flash_attention.curves[0].causal_fwd_tflops has 2 values for 1 sequence lengths"},
		{`[{` + ok + `, "flash_attention": {"fwd": 0.7, "curves": [{"head_dim": 128, "seq": [512], "causal_fwd_tflops": [1], "fwd_tflops": [1], "bwd_tflops": [0]}]}, "sources": {` + src + `, "flash_attention": "f"}}]`, "x.flash_attention: fwd/bwd and curves both given"},
	} {
		if _, err := decodeGEMM([]byte(c.table), "gemm.json"); err == nil || errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want exit 2 naming %q", c.table, err, c.want)
		}
	}
}

// TestFlashAttentionRing: under context parallelism a FlashAttention op runs as Transformer
// Engine's ring (partition.Op.Ring = c), 1/c of its executed work causal at the rank's s queries
// and the rest unmasked at s/2 (partition.FlashRingStep). By hand on the H100, B·heads = 32,
// s = 4096 queries of a rank of a CP 2 ring meeting 8192 keys, d = 128: forward work
// ½·4·32·4096·8192·128, half at the 4k causal bar (579 TFLOP/s) and half at the 2k unmasked bar
// (625); backward 5/8 of twice the convention, half at 542·579/638 (the 4k backward bar scaled
// causal) and half at the 2k unmasked backward bar (501); FlashAttention-3 §4.1 charts, head dim
// 128, at the saturated node's share. A100 (no curves): the ring costs what the one kernel does.
func TestFlashAttentionRing(t *testing.T) {
	gr := partition.NewGraph(16, 8)
	q := tensor.Shape{32, 4096, 128}
	fwd := gr.FlashAttention("attn.flash", partition.Forward, q, 8192, 32, 128, dtype.BF16)
	bwd := gr.FlashAttentionBackward("attn.flash.bwd", q, 8192, 32, 128, dtype.BF16)
	conv := 4 * 32 * 4096.0 * 8192 * 128
	tf := func(x float64) float64 { return x * 1e12 * sustained }
	wantFwd := conv / 2 / 2 * (1/tf(579) + 1/tf(625))
	wantBwd := 2 * conv * 5 / 8 / 2 * (1/tf(542*579.0/638) + 1/tf(501))
	g, _ := LookupGPU("h100")
	r, err := New(g, DefaultEfficiency, dtype.BF16)
	if err != nil {
		t.Fatal(err)
	}
	one := r.OpTime(fwd)
	fwd.Ring, bwd.Ring = 2, 2
	if got := float64(r.OpTime(fwd)); math.Abs(got-wantFwd) > 1e-12*wantFwd {
		t.Errorf("ring forward %g s, want %g", got, wantFwd)
	}
	if got := float64(r.OpTime(bwd)); math.Abs(got-wantBwd) > 1e-12*wantBwd {
		t.Errorf("ring backward %g s, want %g", got, wantBwd)
	}
	if r.OpTime(fwd) >= one { // the unmasked half runs faster than the causal kernel at 4k
		t.Errorf("ring forward %v not below the one causal kernel's %v", r.OpTime(fwd), one)
	}
	a, _ := LookupGPU("a100-80gb")
	ra, err := New(a, DefaultEfficiency, dtype.BF16)
	if err != nil {
		t.Fatal(err)
	}
	single := fwd
	single.Ring = 0
	if got, want := ra.OpTime(fwd), ra.OpTime(single); math.Abs(float64(got-want)) > 1e-12*float64(want) {
		t.Errorf("A100 ring %v, want the one kernel's %v", got, want)
	}
}
