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
// TFLOP/s) the forward runs at 75% (FlashAttention-3's abstract).
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
		{"h100", 989.4e12, 0.75 * sustained, 0.61 * sustained}, // saturated node (gemm_test.go)
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
	} {
		if _, err := decodeGEMM([]byte(c.table), "gemm.json"); err == nil || errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want exit 2 naming %q", c.table, err, c.want)
		}
	}
}
