package job

import (
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/megatron"
	"github.com/ddlest/ddlest/profile"
)

// publishedTransformer are HammingMesh's A100 compute times of one 1F1B step of one micro-batch
// (one 2,048-token sequence) on one stage (one layer): GPT-3 "computes for 31.8 ms" (the SST
// motif: forward 15,915 µs, backward 31,830 µs per tensor-parallel shard); GPT-3 MoE "49.9 ms"
// (forward 22,367 + 41,293/16 µs, backward 44,734 + 82,586/16 µs). Neither motif has an
// optimizer step (reference/hammingmesh.md §6.4–6.5).
var publishedTransformer = map[string]Published{
	"gpt3":     {Measured: profile.Measured{Forward: 15.915e-3, Backward: 31.830e-3}, Source: "HammingMesh §V-B5, A100, one layer per stage, O=4"},
	"gpt3-moe": {Measured: profile.Measured{Forward: (22367 + 41293.0/16) * 1e-6, Backward: (44734 + 82586.0/16) * 1e-6}, Source: "HammingMesh §V-B5, A100, one layer and one expert per GPU"},
}

// TransformerOptions is a transformer preset job with the user's changes applied.
type TransformerOptions struct {
	Preset string
	Config megatron.Config
	Steps  float64
	Tokens float64
	// IgnoreMemory: see MegatronOptions.
	IgnoreMemory bool
	RunOptions
}

// computeKey is what a stage computes per micro-batch: when it matches the preset's, the
// measured times apply. Recomputation is not part of it: the measured forward pass prices the
// recomputed one too (profile.Scaled), so the motifs' run without recomputation (HammingMesh
// §V-B5) and the presets' with it share the measurement.
type computeKey struct {
	layersPerStage, micro, hidden, heads, seq, vocab, tp, interleave int
	sp                                                               bool
	precision                                                        partition.Precision
	experts, topK, expertHidden                                      int
	cf                                                               float64
}

func keyOf(c megatron.Config) computeKey {
	k := computeKey{layersPerStage: c.Layers / max(1, c.PP), micro: c.MicroBatch, hidden: c.Hidden, heads: c.Heads, seq: c.Seq,
		vocab: c.Vocab, tp: c.TP, interleave: c.Interleave, sp: c.SeqParallel, precision: c.Precision,
		topK: c.MoE.TopK, expertHidden: c.MoE.ExpertHidden, cf: c.MoE.CapacityFactor}
	if c.MoE.EP > 0 {
		k.experts = c.MoE.ExpertsPerGPU()
	}
	return k
}

// TransformerPreset estimates a transformer model preset (GPT-3, GPT-3 MoE; configs/models.json)
// with the user's changes in o.Config, on a bare network choice: the seeds' reproductions, which
// price on the papers' stand-in networks rather than on a cluster.
func TransformerPreset(o TransformerOptions) (*Report, error) {
	_, tokens, source, err := modelPreset(o.Preset)
	if err != nil {
		return nil, err
	}
	mo := MegatronOptions{Mode: ModeExplicit, Config: o.Config, Steps: o.Steps, Tokens: o.Tokens,
		GPU: o.GPU, Efficiency: o.Efficiency, Network: o.Network, Profile: o.Profile, TraceBatch: o.TraceBatch, TraceTP: o.TraceTP,
		ForceProfile: o.ForceProfile, IgnoreMemory: o.IgnoreMemory}
	if o.Steps == 0 && o.Tokens == 0 {
		mo.Tokens = tokens
	}
	if o.Profile == "published" {
		if mo.Published, err = publishedFor(o.Preset, o.Config); err != nil {
			return nil, err
		}
		mo.Profile = ""
	}
	rep, err := Megatron(mo)
	if err != nil {
		return nil, err
	}
	rep.Preset, rep.PresetSource = o.Preset, source
	return rep, nil
}
