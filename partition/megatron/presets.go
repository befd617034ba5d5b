package megatron

import (
	"github.com/ddlest/ddlest/internal/registry"
	"github.com/ddlest/ddlest/partition/moe"
)

// Preset is a named transformer job with its source.
type Preset struct {
	Config
	Source string
	// Tokens is the training length (GPT-3: 300B tokens, Brown et al. 2020 §2.2).
	Tokens float64
}

// gpt3 is GPT-3 175B (Brown et al. 2020 Table 2.1: 96 layers, d_model 12,288, 96 heads,
// context 2,048, batch 3.2M tokens = 1,536 sequences) as the HammingMesh paper partitions it
// (§V-B5): P = 96 stages of one layer, O = 4 (Megatron tensor parallelism), D = 1, one sequence
// per micro-batch, FP32 trained on TF32 tensor cores (the paper's A100 layer times are the TF32
// rate; reference/hammingmesh.md §6.4). The motif has no embedding or LM head: vocab 0
// (--vocab 50257 adds GPT-2's). The motif ignores memory; on an 80 GB A100 the 96 micro-batches
// stage 0 holds under 1F1B fit only with selective recomputation (ddlest's choice here).
func gpt3() Config {
	return Config{Layers: 96, Hidden: 12288, Heads: 96, Seq: 2048, GlobalBatch: 1536, MicroBatch: 1,
		TP: 4, PP: 96, DP: 1, Interleave: 1, Precision: TF32, Optimizer: Adam, Recompute: RecomputeSelective}
}

// Presets lists the transformer presets.
func Presets() *registry.Registry[Preset] {
	r := registry.New[Preset]("transformer preset")
	moeCfg := gpt3()
	// HammingMesh §V-B5 / SST embergpt3_moe: GPT-3's FF split into 16 experts (one per GPU, top-1,
	// H_e = 4h/16 = 3,072), no tensor parallelism, the 16 expert GPUs of a stage are its
	// data-parallel group: 96 × 16 = 1,536 GPUs. Unsharded attention activations fit 80 GB only
	// with full recomputation.
	moeCfg.TP, moeCfg.DP, moeCfg.Recompute = 1, 16, RecomputeFull
	moeCfg.MoE = moe.Spec{Experts: 16, TopK: 1, CapacityFactor: 1, ExpertHidden: 4 * 12288 / 16, EP: 16}
	for _, p := range []Preset{
		{Config: gpt3(), Source: "GPT-3 175B (Brown et al. 2020) partitioned as HammingMesh §V-B5: P=96, O=4, D=1", Tokens: 300e9},
		{Config: moeCfg, Source: "GPT-3 MoE as HammingMesh §V-B5: 16 experts per layer, P=96, EP=16", Tokens: 300e9},
	} {
		name := "gpt3"
		if p.MoE.Experts > 0 {
			name = "gpt3-moe"
		}
		r.Add(name, p)
	}
	return r
}
