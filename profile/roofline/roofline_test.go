package roofline

import (
	"math"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
)

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Abs(b) }

func TestBuiltInTable(t *testing.T) {
	tbl, err := GPUs()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"v100", "a100-40gb", "a100-80gb", "h100", "h200", "b200", "ramp-a100", "rtx2080ti", "ascend910", "m40"}
	if got := strings.Join(tbl.Names(), ","); got != strings.Join(want, ",") {
		t.Errorf("GPUs = %s", got)
	}
	if _, err := LookupGPU(DefaultGPU); err != nil {
		t.Error(err)
	}
	_, err = LookupGPU("b300")
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "a100-80gb") {
		t.Errorf("unknown GPU: %v", err)
	}
	// The RAMP partitioner's per-GPU limit is the paper's 1.6B (§7.2.1).
	g, _ := LookupGPU("ramp-a100")
	if g.MPParamsPerGPU != 1.6e9 {
		t.Errorf("ramp-a100 MP limit %g", g.MPParamsPerGPU)
	}
}

func a100(t *testing.T) *Roofline {
	g, err := LookupGPU("a100-40gb")
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(g, DefaultEfficiency, dtype.FP16)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestComputeBoundGEMM(t *testing.T) {
	// 4096³ fp16 GEMM: 2·4096³ = 1.3744e11 FLOP over 3·4096²·2 B = 100.7 MB: intensity 1365 FLOP/B,
	// far above A100's ridge 312e12/1555e9 = 200.6, so t = 1.3744e11 / (312e12 · 0.75) = 587.4 µs.
	op := partition.Op{Kind: partition.MatMul, DType: dtype.FP16, FLOP: 2 * 4096 * 4096 * 4096,
		Read: 2 * 4096 * 4096 * 2, Written: 4096 * 4096 * 2, Output: tensor.Shape{4096, 4096}}
	if got := a100(t).OpTime(op); !near(float64(got), 587.4e-6, 1e-3) {
		t.Errorf("GEMM time %v, want 587.4 µs", got)
	}
}

func TestMemoryBoundElementwise(t *testing.T) {
	// 0.5 GB read + 0.5 GB written at 1555 GB/s · 0.85 = 1321.75 GB/s: 1e9/1.32175e12 = 756.6 µs.
	op := partition.Op{Kind: partition.Elementwise, DType: dtype.FP16, FLOP: 2.5e8, Read: 0.5e9, Written: 0.5e9}
	if got := a100(t).OpTime(op); !near(float64(got), 756.6e-6, 1e-3) {
		t.Errorf("elementwise time %v, want 756.6 µs", got)
	}
}

// RAMP Fig. 23 / §8.4.2: receiving from x−1 peers turns the local reduction from a chain of x−1
// two-to-one sums, each moving 3c bytes, into one x-to-1 sum moving (x+1)c: a speed-up of
// 3(x−1)/(x+1) = 2.82 at x = 32 (the closed form; the paper's "up to 2.8×" for a whole
// reduce-scatter is row ramp/fig23-compute-speedup of internal/repro).
func TestMultiSourceReductionSpeedup(t *testing.T) {
	r := a100(t)
	c := units.Bytes(1e9 / 65536.0 * 32) // a RAMP step-1 chunk
	pairwise := 31 * r.ReduceTime(2, c, dtype.FP16)
	multi := r.ReduceTime(32, c, dtype.FP16)
	if s := float64(pairwise / multi); !near(s, 93.0/33, 1e-9) {
		t.Errorf("speed-up %g, want 3·31/33 = 2.818", s)
	}
	if r.ReduceTime(1, c, dtype.FP16) != 0 {
		t.Error("1-to-1 reduction should be free")
	}
}

func TestUnsupportedDType(t *testing.T) {
	g, _ := LookupGPU("v100")
	_, err := New(g, DefaultEfficiency, dtype.BF16)
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "fp16, fp32") {
		t.Errorf("v100 bf16: %v", err)
	}
	_, err = New(g, Efficiency{MatMul: 1.5, Conv: 0.5, Vector: 0.5, Memory: 0}, dtype.FP16)
	if err == nil || !strings.Contains(err.Error(), "--matmul-eff 1.5") || !strings.Contains(err.Error(), "--mem-eff 0") {
		t.Errorf("bad efficiency: %v", err)
	}
}

func TestDecodeGPUsRejects(t *testing.T) {
	good := `{"name":"x","memory_bytes":1,"hbm_bytes_per_s":1,"tensor_flop_per_s":{"fp32":1},"vector_flop_per_s":{"fp32":1},"mp_params_per_gpu":1,
	"sources":{"memory_bytes":"s","hbm_bytes_per_s":"s","tensor_flop_per_s":"s","vector_flop_per_s":"s","mp_params_per_gpu":"s"}}`
	if _, err := DecodeGPUs(strings.NewReader("["+good+"]"), "g.json"); err != nil {
		t.Fatalf("good entry rejected: %v", err)
	}
	bad := map[string]string{
		"unknown field": `[{"name":"x","colour":"green"}]`,
		"no sources":    `[{"name":"x","memory_bytes":1,"hbm_bytes_per_s":1,"tensor_flop_per_s":{"fp32":1},"vector_flop_per_s":{"fp32":1},"mp_params_per_gpu":1}]`,
		"negative":      "[" + strings.Replace(good, `"memory_bytes":1`, `"memory_bytes":-1`, 1) + "]",
		"bad dtype":     "[" + strings.Replace(good, `"tensor_flop_per_s":{"fp32":1}`, `"tensor_flop_per_s":{"fp32":1,"int3":1}`, 1) + "]",
		"duplicate":     "[" + good + "," + good + "]",
		"empty":         `[]`,
		"not json":      `gpus`,
	}
	for name, in := range bad {
		_, err := DecodeGPUs(strings.NewReader(in), "g.json")
		if errs.ExitCode(err) != errs.ExitUsage || !strings.HasPrefix(err.Error(), "g.json: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzDecodeGPUs(f *testing.F) {
	f.Add(`[{"name":"x"}]`)
	f.Add(`[{"name":"x","memory_bytes":1e400}]`)
	f.Add(`{}`)
	f.Fuzz(func(t *testing.T, in string) {
		_, _ = DecodeGPUs(strings.NewReader(in), "fuzz.json")
	})
}
