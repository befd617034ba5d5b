package repro

import (
	"testing"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/dlrm"
	"github.com/ddlest/ddlest/profile/roofline"
)

// hmRun is a HammingMesh job on an A100 with the default roofline fractions; net is an α–β
// stand-in for the paper's nonblocking fat tree (4 × 400 Gb/s = 200 GB/s per accelerator, §III-D;
// α = 0.73 µs per ring step, back-solved from the ResNet runtimes, reference/hammingmesh.md §6.1)
// or the ideal network.
func hmRun(profile string, fatTree bool) job.RunOptions {
	n := job.NetworkChoice{Name: "ideal"}
	if fatTree {
		n = job.NetworkChoice{Name: "alphabeta", Params: []string{"bandwidth_gbit_per_s=1600", "latency_ns=730"}}
	}
	return job.RunOptions{GPU: "a100-80gb", Efficiency: roofline.DefaultEfficiency, Profile: profile, Network: n}
}

func compute(r estimator.Result) float64 {
	return float64(r.Breakdown.Forward + r.Breakdown.Recompute + r.Breakdown.Backward + r.Breakdown.Optimizer)
}

// HammingMesh §V-B compute times on an A100 (reference/hammingmesh.md §6, §7.1): ResNet-152 108 ms
// per iteration (D = 1024, 32 images each), CosmoFlow 44.3 ms (D = 256, O = 4, 32 samples),
// DLRM 2,901 µs, and for the pipelined transformers the backward pass of one micro-batch on one
// stage, GPT-3 31.83 ms and MoE 44,734 + 82,586/16 µs = 49.9 ms. --profile published reproduces each exactly; the
// roofline with the default fractions lands within ±35% for all but DLRM (measured: ResNet
// −25%, CosmoFlow +20%, GPT-3 +9%, MoE +15%). The DLRM times cannot come from the message
// sizes the paper gives (0.78M MLP parameters; 796 µs of MLP needs ~60K samples per GPU at the
// TF32 rate), so its roofline is only a lower bound (measured 35 µs).
func TestHammingMeshCompute(t *testing.T) {
	type motif struct {
		name     string
		measured float64
		run      func(profile string) (float64, error)
	}
	dp := func(profile string) (float64, error) {
		r, err := job.DataParallel(job.DataParallelOptions{Workload: "resnet", Model: "resnet152", GPUs: 1024, Batch: 32,
			Precision: partition.TF32, Optimizer: partition.SGD, Buckets: 10, RunOptions: hmRun(profile, false)})
		if err != nil {
			return 0, err
		}
		return compute(r.Result), nil
	}
	cosmo := func(profile string) (float64, error) {
		r, err := job.CosmoFlow(job.CosmoFlowOptions{GPUs: 1024, Spatial: 4, Batch: 32, Precision: partition.TF32,
			Optimizer: partition.SGD, RunOptions: hmRun(profile, false)})
		if err != nil {
			return 0, err
		}
		return compute(r.Result), nil
	}
	dl := func(profile string) (float64, error) {
		p, _ := dlrm.Presets().Lookup("hammingmesh")
		r, err := job.DLRM(job.DLRMOptions{Preset: "hammingmesh", Config: p.Config, RunOptions: hmRun(profile, false)})
		if err != nil {
			return 0, err
		}
		return compute(r.Result), nil
	}
	step := func(preset string) func(string) (float64, error) {
		return func(profile string) (float64, error) {
			pc, _ := job.PresetConfig(preset)
			r, err := job.TransformerPreset(job.TransformerOptions{Preset: preset, Config: pc, RunOptions: hmRun(profile, false)})
			if err != nil {
				return 0, err
			}
			return float64(r.Result.Stages[48].Backward), nil // a middle stage's backward pass
		}
	}
	for _, j := range []motif{
		{"resnet152", 108e-3, dp}, {"cosmoflow", 44.3e-3, cosmo}, {"gpt3", 31.830e-3, step("gpt3")},
		{"gpt3-moe", (44734 + 82586.0/16) * 1e-6, step("gpt3-moe")}, {"dlrm", 2901e-6, dl},
	} {
		pub, err := j.run("published")
		if err != nil {
			t.Fatalf("%s: %v", j.name, err)
		}
		if !within(pub, j.measured, 1e-9) {
			t.Errorf("%s published: %.6g s, measured %.6g s", j.name, pub, j.measured)
		}
		roof, err := j.run("roofline")
		if err != nil {
			t.Fatalf("%s: %v", j.name, err)
		}
		if j.name == "dlrm" {
			if roof >= j.measured {
				t.Errorf("dlrm roofline %.3g s should bound the measured %.3g s from below", roof, j.measured)
			}
			continue
		}
		if !within(roof, j.measured, 0.35) {
			t.Errorf("%s roofline %.4g s vs measured %.4g s (%+.0f%%)", j.name, roof, j.measured, 100*(roof/j.measured-1))
		}
	}
}

// §V-B2: "On HxMeshes and torus, the complete iteration (including overlapped communication)
// finishes in 110.1 ms and on the other topologies in 109.7 ms". With the measured compute and
// the fat-tree stand-in the 10 non-blocking bucket all-reduces hide behind the backward pass
// except the last: 109.7 ms within ±0.5 ms (the extraction's suggested tolerance).
func TestResNet152FatTree(t *testing.T) {
	r, err := job.DataParallel(job.DataParallelOptions{Workload: "resnet", Model: "resnet152", GPUs: 1024, Batch: 32,
		Precision: partition.TF32, Optimizer: partition.SGD, Buckets: 10, RunOptions: hmRun("published", true)})
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(r.Result.Iteration.Total); got < 109.2e-3 || got > 110.2e-3 {
		t.Errorf("iteration %v, paper 109.7 ms ± 0.5", r.Result.Iteration.Total)
	}
}

// §V-B5: GPT-3's step on the nonblocking fat tree is 34.8 ms (31.8 ms compute, two 100.66 MB
// all-reduces over the 4 tensor-parallel ranks and the 100.66 MB pipeline send). ddlest's step
// with the measured compute also recomputes the attention core (selective recomputation, which an
// 80 GB A100 needs), so within ±5%, the extraction's stretch tolerance.
func TestGPT3StepFatTree(t *testing.T) {
	pc, _ := job.PresetConfig("gpt3")
	r, err := job.TransformerPreset(job.TransformerOptions{Preset: "gpt3", Config: pc, RunOptions: hmRun("published", true)})
	if err != nil {
		t.Fatal(err)
	}
	if r.Step == nil || !within(float64(r.Step.Total), 34.8e-3, 0.05) {
		t.Errorf("step %+v, paper 34.8 ms", r.Step)
	}
}
