package job

import (
	"math"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/partition/megatron"
	"github.com/ddlest/ddlest/profile/roofline"
	"github.com/ddlest/ddlest/scaling"
)

func autoOptions(loss float64, net string) MegatronOptions {
	return MegatronOptions{Mode: ModeAuto, Scaling: scaling.DefaultRequest(loss), MaxGPUs: megatron.DefaultMaxGPUs,
		GPU: roofline.DefaultGPU, Efficiency: roofline.DefaultEfficiency, Network: NetworkChoice{Name: net},
		Config: megatron.Config{Vocab: megatron.DefaultVocab, Recompute: megatron.RecomputeFull}}
}

// Time to accuracy is steps × iteration, and the steps follow Kaplan's S = S_min(1 + B_crit/B) at
// the partitioner's global batch.
func TestAutoEndToEnd(t *testing.T) {
	r, err := Megatron(autoOptions(1.8, "alphabeta"))
	if err != nil {
		t.Fatal(err)
	}
	want := scaling.Steps(r.Target.StepsMin, r.Target.CriticalBatch, float64(r.Config.GlobalBatch))
	if math.Abs(r.Steps-want) > 1e-9*want {
		t.Errorf("steps %g, want %g", r.Steps, want)
	}
	// Kaplan §2.1: C ≈ 6·N·D.
	if want := 6 * r.NonEmbedding * r.Tokens; math.Abs(r.TrainingFLOP-want) > 1e-9*want || !(r.ComputeMinFLOP < r.TrainingFLOP) {
		t.Errorf("training FLOP %g (C_min %g), want %g", r.TrainingFLOP, r.ComputeMinFLOP, want)
	}
	if got := float64(r.Result.TimeToAccuracy); math.Abs(got-r.Steps*float64(r.Result.Iteration.Total)) > 1e-9*got {
		t.Errorf("time to accuracy %g", got)
	}
	// A real network can only add time to the ideal one.
	ideal, _ := Megatron(autoOptions(1.8, "ideal"))
	if !(r.Result.Iteration.Total > ideal.Result.Iteration.Total) || ideal.Result.Iteration.ExposedComm != 0 {
		t.Errorf("alphabeta %v vs ideal %v", r.Result.Iteration, ideal.Result.Iteration)
	}
	if r.Result.Iteration.Compute != ideal.Result.Iteration.Compute {
		t.Errorf("compute depends on the network: %v vs %v", r.Result.Iteration.Compute, ideal.Result.Iteration.Compute)
	}
}

func TestExplicitTrainingLength(t *testing.T) {
	o := MegatronOptions{Mode: ModeExplicit, GPU: "a100-80gb", Efficiency: roofline.DefaultEfficiency, Network: NetworkChoice{Name: "ideal"},
		Config: megatron.Config{Layers: 2, Hidden: 512, Heads: 8, Seq: 1024, Vocab: 1000, GlobalBatch: 8, MicroBatch: 1,
			TP: 1, PP: 1, DP: 2, Interleave: 1}}
	o.Tokens = 8192 * 10.5 // 10.5 iterations of 8 × 1024 tokens → 11 steps
	r, err := Megatron(o)
	if err != nil || r.Steps != 11 {
		t.Fatalf("steps %v, %v", r.Steps, err)
	}
	o.Steps = 3
	if _, err := Megatron(o); errs.ExitCode(err) != errs.ExitUsage {
		t.Errorf("steps and tokens: %v", err)
	}
	o.Steps, o.Tokens = 0, 0
	if _, err := Megatron(o); errs.ExitCode(err) != errs.ExitUsage {
		t.Errorf("no length: %v", err)
	}
}

// BenchmarkMegatronEstimate is the whole pipeline for one configuration: scaling law, auto
// partitioning (two plan builds), roofline, network and estimator. Target: ≤ 20 µs per estimate
// on one core.
func BenchmarkMegatronEstimate(b *testing.B) {
	for _, net := range []string{"alphabeta", "ramp", "superpod"} {
		b.Run(net, func(b *testing.B) {
			o := autoOptions(1.8, net)
			if _, err := Megatron(o); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Megatron(o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJobEstimate is what a command (and every point of a sweep) runs: job.Run of a job on
// a cluster, its network placed once per (network, size, GPU) and reused. Target (issue 9):
// ≤ 10 µs and ≤ 20 allocations per estimate.
func BenchmarkJobEstimate(b *testing.B) {
	for _, c := range []struct {
		name string
		sets [][2]string
	}{
		{"loss1.8-ramp-65536", [][2]string{{"cluster", "ramp-65536"}, {"target_loss", "1.8"}, {"layout", "ramp"}}},
		{"loss1.8-dgx-a100", [][2]string{{"target_loss", "1.8"}, {"layout", "ramp"}}},
		{"gpt3-175b-dgx-a100", [][2]string{{"model", "gpt3-175b"}, {"tp", "8"}, {"pp", "8"}, {"dp", "24"}, {"interleave", "2"}, {"seq_parallel", "true"}}},
		// A routed fabric whose data-parallel buckets share links with the tensor-parallel
		// all-reduces of the backward pass (estimator: contention).
		{"gpt3-13b-torus-small", [][2]string{{"cluster", "torus-small"}, {"model", "gpt3-13b"}, {"tp", "4"}, {"pp", "1"}, {"dp", "256"}}},
		// Issue 14's speed target: one Llama 3 405B estimate on 16,384 H100 ≤ 50 µs.
		{"llama3-405b-dgx-h100", [][2]string{{"cluster", "dgx-h100"}, {"model", "llama3-405b"}, {"software", "megatron-core"}, {"gpus", "16384"},
			{"tp", "8"}, {"pp", "16"}, {"pp_first_layers", "7"}, {"pp_last_layers", "7"}, {"seq_parallel", "true"}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			j, err := New("megatron")
			if err != nil {
				b.Fatal(err)
			}
			for _, kv := range c.sets {
				if err := j.Set(kv[0], kv[1]); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := Run(j); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(j); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
