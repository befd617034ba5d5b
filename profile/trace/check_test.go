package trace

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/megatron"
	"github.com/ddlest/ddlest/traces"
)

// gpt builds a small GPT plan with the given layers and pipeline stages.
func gpt(t *testing.T, layers, pp int) *partition.Plan {
	t.Helper()
	p, err := megatron.Build(megatron.Config{Layers: layers, Hidden: 1024, Heads: 16, Seq: 512, Vocab: 32000, GlobalBatch: pp, MicroBatch: 1,
		TP: 1, PP: pp, DP: 1, Interleave: 1, Precision: partition.MixedFP16, Optimizer: partition.Adam, Capacity: 80 * units.GiB})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cnn is a plan of one convolution (1 GFLOP) and a classifier GEMM (10 MFLOP): 99% convolution.
func cnn() *partition.Plan {
	return &partition.Plan{Layout: partition.Layout{GPUs: 1, DP: 1, TP: 1, PP: 1, MicroBatches: 1},
		Stages: []partition.Stage{{Blocks: []partition.Block{{Name: "net", Repeat: 1, Ops: []partition.Op{
			{Name: "conv", Kind: partition.Convolution, Phase: partition.Forward, DType: dtype.FP16, FLOP: 1e9},
			{Name: "fc", Kind: partition.MatMul, Phase: partition.Forward, DType: dtype.FP16, FLOP: 1e7}}}}}}}
}

func has(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// The layered trace annotates layers 0 and 1 (2 distinct layers, by hand in layeredTrace): it
// fits a 2-layer model, and a 4-layer one split over 2 pipeline stages (4 / 2 = 2 layers per
// stage), but not a 4-layer model on one stage.
func TestCheckLayerCount(t *testing.T) {
	m, err := Load(layeredTrace(t))
	if err != nil {
		t.Fatal(err)
	}
	h100 := roof(t, "h100").GPU
	if bad := m.Check(gpt(t, 2, 1), h100); len(bad) != 0 {
		t.Errorf("2 layers: %v", bad)
	}
	if bad := m.Check(gpt(t, 4, 2), h100); len(bad) != 0 {
		t.Errorf("4 layers over 2 stages: %v", bad)
	}
	bad := m.Check(gpt(t, 4, 1), h100)
	if len(bad) != 1 || !strings.Contains(bad[0], "annotated with 2 distinct layers") || !strings.Contains(bad[0], "has 4 per pipeline stage") {
		t.Errorf("4 layers on one stage: %v", bad)
	}
}

// sharedTrace imports one of ../shared/traces (skipped when absent) and loads it.
func sharedTrace(t *testing.T, name string) *Measured {
	t.Helper()
	src := filepath.Join("../../../shared/traces", name)
	if _, err := os.Stat(src); err != nil {
		t.Skipf("shared traces absent: %v", err)
	}
	out := filepath.Join(t.TempDir(), "t.parquet")
	if _, err := traces.Import([]string{src}, out, traces.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The kernel-mix and device checks on real traces. Convolution, GEMM and attention kernel time
// counted from the JSON by a separate Python script (encoding the class table of
// traces.KernelClass; NCCL kernels excluded): cnn_nccl (A100, a CNN) 13,378 µs of convolutions
// and 19,652 µs of GEMMs, 40.5% convolution; the MI210 ResNet 1,621 and 90 µs, 94.7%; TraceLens's
// H100 BERT 0 µs of convolutions among 198 µs of GEMMs and 37 µs of attention; the DLRM-like rank
// has no deviceProperties and no convolution.
func TestCheckKernelMixAndDevice(t *testing.T) {
	a100 := roof(t, "a100-80gb").GPU
	share := func(m *Measured) float64 {
		return m.Mix[traces.ClassConvolution] / (m.Mix[traces.ClassConvolution] + m.Mix[traces.ClassGEMM] + m.Mix[traces.ClassAttention])
	}
	t.Run("cnn_nccl", func(t *testing.T) {
		m := sharedTrace(t, "kineto/cnn_nccl.json.gz")
		if s := share(m); math.Abs(s-13378.0/(13378+19652)) > 1e-3 {
			t.Errorf("convolution share %.4f, want %.4f", s, 13378.0/(13378+19652))
		}
		if bad := m.Check(cnn(), a100); len(bad) != 0 {
			t.Errorf("CNN trace for a CNN: %v", bad)
		}
		if bad := m.Check(gpt(t, 2, 1), a100); len(bad) != 1 || !has(bad, "kernel mix: convolution kernels take 40.5%") {
			t.Errorf("CNN trace for a transformer: %v", bad)
		}
	})
	t.Run("h100_bert", func(t *testing.T) {
		m := sharedTrace(t, "tracelens/h100_bert_small.json.gz")
		if s := share(m); s != 0 || m.Mix[traces.ClassAttention] <= 0 {
			t.Errorf("mix %v", m.Mix)
		}
		if bad := m.Check(gpt(t, 2, 1), a100); len(bad) != 0 {
			t.Errorf("transformer trace for a transformer: %v", bad)
		}
		if bad := m.Check(cnn(), a100); len(bad) != 1 || !has(bad, "kernel mix: convolution kernels take 0.0%") || !strings.Contains(bad[0], "99% of the plan's") {
			t.Errorf("transformer trace for a CNN: %v", bad)
		}
	})
	t.Run("mi210", func(t *testing.T) {
		m := sharedTrace(t, "tracelens/mi210_gpu_only.json.gz")
		if s := share(m); math.Abs(s-1621.0/(1621+90)) > 2e-3 {
			t.Errorf("convolution share %.4f, want %.4f", s, 1621.0/(1621+90))
		}
		bad := m.Check(cnn(), a100)
		if len(bad) != 1 || !has(bad, `device: the trace's "AMD Instinct MI210" is not in the GPU table`) || !strings.Contains(bad[0], "plan's a100-80gb") {
			t.Errorf("MI210 trace: %v", bad)
		}
	})
	t.Run("dlrm-like", func(t *testing.T) {
		m := sharedTrace(t, "kineto/dlrm-like_rank-0.json.gz")
		if bad := m.Check(gpt(t, 2, 1), a100); len(bad) != 1 || !has(bad, "device: the trace names no GPU") {
			t.Errorf("trace without device: %v", bad)
		}
	})
}

// Checked refuses a mismatch with one usage error that names every failed check, and with
// force returns them for the report, which leads with the warning.
func TestCheckedForce(t *testing.T) {
	m, err := Load(layeredTrace(t))
	if err != nil {
		t.Fatal(err)
	}
	p := gpt(t, 4, 1)
	h100 := roof(t, "h100")
	_, err = m.Checked(p, h100.GPU, false)
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "layer count") || !strings.Contains(err.Error(), "--force") || strings.Contains(err.Error(), "\n") {
		t.Errorf("refusal: %v", err)
	}
	over, err := m.Checked(p, h100.GPU, true)
	if err != nil || len(over) != 1 {
		t.Fatalf("forced: %v %v", over, err)
	}
	_, cal, err := m.Calibrate(p, h100)
	if err != nil {
		t.Fatal(err)
	}
	cal.Overridden = over
	if d := m.Describe(cal); !strings.HasPrefix(d, "WARNING: the trace failed 1 check(s), overridden by --force: layer count") {
		t.Errorf("description %q", d)
	}
}
