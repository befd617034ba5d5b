package trace

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/megatron"
	"github.com/ddlest/ddlest/profile"
	"github.com/ddlest/ddlest/profile/roofline"
	"github.com/ddlest/ddlest/traces"
)

// synthetic writes a one-rank GPU trace with two profiler steps; per step, forward kernels of
// fwd ns, backward of bwd, optimizer of opt, and unplaced of unk, plus a collective (excluded).
func synthetic(t *testing.T, device string, fwd, bwd, opt, unk int64) string {
	t.Helper()
	var ev []traces.Event
	var now int64
	k := func(phase string, dur int64) {
		ev = append(ev, traces.Event{Device: 0, Stream: 7, Name: "k_" + phase, Category: "kernel", StartNs: now, DurNs: dur, Phase: phase, Layer: -1})
		now += dur
	}
	for s := 0; s < 2; s++ {
		start := now
		k("fwd", fwd)
		k("bwd", bwd)
		if opt > 0 {
			k("optimizer", opt)
		}
		if unk > 0 {
			k("unknown", unk)
		}
		ev = append(ev, traces.Event{Device: 0, Stream: 9, Name: "ncclKernel_AllReduce", Category: "collective", StartNs: now, DurNs: 999,
			Phase: "bwd", Layer: -1, Collective: "all_reduce", Bytes: 1 << 20, GroupSize: 2})
		now += 999
		ev = append(ev, traces.Event{Device: -1, Stream: 1, Name: "ProfilerStep#" + string(rune('0'+s)), Category: "annotation",
			StartNs: start, DurNs: now - start, Phase: "unknown", Layer: -1})
	}
	path := filepath.Join(t.TempDir(), "t.parquet")
	if err := traces.WriteFile(path, traces.Metadata{traces.MetaDeviceName: device}, ev); err != nil {
		t.Fatal(err)
	}
	return path
}

// plan is one GEMM forward, two backward and an SGD update, on one stage with 2 micro-batches.
func plan() *partition.Plan {
	gr := partition.NewGraph(32, 16)
	x, w := gr.Shape(4096, 4096), gr.Shape(4096, 4096)
	f := gr.MatMul("fc", partition.Forward, x, w, dtype.FP16)
	d, g := gr.LinearBackward("fc.dgrad", "fc.wgrad", x, w, dtype.FP16)
	return &partition.Plan{Layout: partition.Layout{GPUs: 1, DP: 1, TP: 1, PP: 1, MicroBatches: 2},
		Stages: []partition.Stage{{Blocks: []partition.Block{{Name: "fc", Repeat: 1, Ops: []partition.Op{f, d, g}, Params: 4096 * 4096}},
			PerIteration: []partition.Op{partition.OptimizerOp(4096*4096, partition.SGD, partition.MixedFP16)}}}}
}

func roof(t *testing.T, gpu string) *roofline.Roofline {
	g, err := roofline.LookupGPU(gpu)
	if err != nil {
		t.Fatal(err)
	}
	r, err := roofline.New(g, roofline.DefaultEfficiency, dtype.FP16)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// On the traced GPU and configuration the calibrated compute equals the measurement per step:
// forward 3 ms, backward 5 ms, update 1 ms (the unplaced 0.9 ms shared 3:5:1 over them). On an
// H100 the same factors apply to the H100 roofline, so the times shrink by the roofline ratio.
func TestCalibrateReproducesMeasurement(t *testing.T) {
	path := synthetic(t, "NVIDIA A100-SXM4-80GB", 3e6, 5e6, 1e6, 9e5)
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.GPU.Name != "a100-80gb" || m.Steps != 2 || !near(m.Forward, 3e-3*1.1) || !near(m.Backward, 5e-3*1.1) || !near(m.Update, 1e-3*1.1) {
		t.Fatalf("measured %+v", m)
	}
	p := plan()
	a100 := roof(t, "a100-80gb")
	prof, cal, err := m.Calibrate(p, a100)
	if err != nil {
		t.Fatal(err)
	}
	f, b, u := profile.PhaseTimes(prof, p)
	if !near(f, 3.3e-3) || !near(b, 5.5e-3) || !near(u, 1.1e-3) {
		t.Errorf("calibrated %g, %g, %g; measured 3.3, 5.5, 1.1 ms", f, b, u)
	}
	if !strings.Contains(m.Describe(cal), "measured fwd 3.3 ms") {
		t.Errorf("description %q", m.Describe(cal))
	}
	h100 := roof(t, "h100")
	prof, _, _ = m.Calibrate(p, h100)
	f2, _, _ := profile.PhaseTimes(prof, p)
	rf, _, _ := profile.PhaseTimes(a100, p)
	rh, _, _ := profile.PhaseTimes(h100, p)
	if !near(f2, 3.3e-3*rh/rf) {
		t.Errorf("on an H100: forward %g, want %g (roofline ratio)", f2, 3.3e-3*rh/rf)
	}
}

// Without phases one factor covers all compute: total measured / total modelled.
func TestCalibrateWithoutPhases(t *testing.T) {
	path := synthetic(t, "Some Accelerator", 0, 0, 0, 8e6)
	m, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p := plan()
	r := roof(t, "a100-80gb")
	prof, cal, err := m.Calibrate(p, r)
	if err != nil {
		t.Fatal(err)
	}
	f, b, u := profile.PhaseTimes(prof, p)
	if !near(f+b+u, 8e-3) || cal.Factors.Forward != cal.Factors.Backward || len(cal.Notes) != 2 {
		t.Errorf("total %g (want 8 ms), calibration %+v", f+b+u, cal)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	cpu := filepath.Join(dir, "cpu.parquet")
	traces.WriteFile(cpu, nil, []traces.Event{{Device: -1, Name: "aten::mm", Category: "cpu_op", DurNs: 5, Phase: "fwd", Layer: -1}})
	if _, err := Load(cpu); errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "no GPU compute") {
		t.Errorf("CPU-only trace: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.parquet")); errs.ExitCode(err) != errs.ExitUsage {
		t.Errorf("missing: %v", err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1e-12, math.Abs(b)) }

// layeredTrace: per step, 6 ms of layer-annotated forward kernels (layers 0 and 1), 2 ms of other
// forward kernels (embedding, head), 16 ms of backward without layer annotations.
func layeredTrace(t *testing.T) string {
	t.Helper()
	var ev []traces.Event
	var now int64
	k := func(phase string, layer int32, dur int64) {
		ev = append(ev, traces.Event{Device: 0, Stream: 7, Name: "k", Category: "kernel", StartNs: now, DurNs: dur, Phase: phase, Layer: layer})
		now += dur
	}
	k("fwd", -1, 1e6)
	k("fwd", 0, 3e6)
	k("fwd", 1, 3e6)
	k("fwd", -1, 1e6)
	k("bwd", -1, 16e6)
	path := filepath.Join(t.TempDir(), "layered.parquet")
	if err := traces.WriteFile(path, traces.Metadata{traces.MetaDeviceName: "NVIDIA H100 80GB HBM3"}, ev); err != nil {
		t.Fatal(err)
	}
	return path
}

// With layer annotations the transformer layers' forward ops take their own factor: on the traced
// configuration the layers' forward sums to the 6 ms annotated and the whole forward to 8 ms;
// the backward, not annotated by layer, keeps the phase factor (16 ms in all).
func TestCalibrateLayers(t *testing.T) {
	m, err := Load(layeredTrace(t))
	if err != nil {
		t.Fatal(err)
	}
	if !near(m.LayerForward, 6e-3) || !near(m.Forward, 8e-3) || m.LayerBackward != 0 {
		t.Fatalf("measured %+v", m)
	}
	p, err := megatron.Build(megatron.Config{Layers: 2, Hidden: 1024, Heads: 16, Seq: 512, Vocab: 32000, GlobalBatch: 1, MicroBatch: 1,
		TP: 1, PP: 1, DP: 1, Interleave: 1, Precision: partition.MixedFP16, Optimizer: partition.Adam, Capacity: 80 * units.GiB})
	if err != nil {
		t.Fatal(err)
	}
	r := roof(t, "h100")
	prof, cal, err := m.Calibrate(p, r)
	if err != nil {
		t.Fatal(err)
	}
	lf, _ := profile.LayerPhaseTimes(prof, p)
	f, b, _ := profile.PhaseTimes(prof, p)
	if !cal.Layered || !near(lf, 6e-3) || !near(f, 8e-3) || !near(b, 16e-3) || cal.Factors.LayerForward == cal.Factors.Forward {
		t.Errorf("layers fwd %g, fwd %g, bwd %g; calibration %+v", lf, f, b, cal)
	}
	if !strings.Contains(m.Describe(cal), "layers apart") {
		t.Errorf("description %q", m.Describe(cal))
	}
}
