package main

import (
	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition/megatron"
)

// transformerFlags are the options of the gpt3 and moe commands: the preset's configuration,
// each flag overriding one field when set.
type transformerFlags struct {
	gpus, tp, pp, global, micro, interleave, vocab int
	steps, tokens                                  float64
	seqParallel, noDPOverlap                       bool
	recompute, precision, optimizer, dpBucket      string
	rankOrder                                      string
	ignoreMemory                                   bool
	profile, plot                                  string
	traceBatch, traceTP                            int
	experts, topK, expertHidden, ep                int
	capacity                                       float64
	hw                                             hwFlags
	network                                        netFlags
	format                                         format
}

func newGPT3Command() *cobra.Command {
	return transformerCommand("gpt3", "gpt3",
		"GPT-3 175B with pipeline and tensor parallelism: the HammingMesh job (P=96, O=4, D=1), full iteration and 1F1B step",
		`  ddlest gpt3
  ddlest gpt3 --profile published --net alphabeta --net-bw 200GB/s
  ddlest gpt3 --gpus 3072 --global-batch 1536 --vocab 50257`)
}

func newMoECommand() *cobra.Command {
	return transformerCommand("moe", "gpt3-moe",
		"GPT-3 with Mixture-of-Experts FF layers and expert parallelism: the HammingMesh job (16 experts, P=96, EP=16)",
		`  ddlest moe
  ddlest moe --profile published --net torus
  ddlest moe --experts 64 --ep 16 --top-k 2 --capacity-factor 1.25 --expert-hidden 12288`)
}

func transformerCommand(use, preset, short, example string) *cobra.Command {
	f := &transformerFlags{}
	cmd := &cobra.Command{
		Use: use, Short: short, Example: example, Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.options(cmd, preset)
			if err != nil {
				return err
			}
			rep, err := job.Transformer(o)
			if err != nil {
				return err
			}
			return renderMegatron(rep, f.format, f.plot, cmd.OutOrStdout())
		},
	}
	p, _ := megatron.Presets().Lookup(preset)
	c := p.Config
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.IntVar(&f.gpus, "gpus", c.GPUs(), "GPUs = TP × PP × DP (sets DP)")
	fs.IntVar(&f.tp, "tp", c.TP, "tensor-parallel degree (O)")
	fs.IntVar(&f.pp, "pp", c.PP, "pipeline stages (P)")
	fs.IntVar(&f.global, "global-batch", c.GlobalBatch, "sequences per iteration")
	fs.IntVar(&f.micro, "micro-batch", c.MicroBatch, "sequences per micro-batch")
	fs.IntVar(&f.interleave, "interleave", c.Interleave, "model chunks per pipeline stage (interleaved 1F1B)")
	fs.IntVar(&f.vocab, "vocab", c.Vocab, "vocabulary (0: no embedding or LM head, as the HammingMesh motif)")
	fs.BoolVar(&f.seqParallel, "seq-parallel", false, "sequence parallelism")
	fs.StringVar(&f.recompute, "recompute", c.Recompute.String(), "activation recomputation: none, selective or full")
	addRankOrderFlag(cmd, &f.rankOrder)
	fs.BoolVar(&f.ignoreMemory, "ignore-memory", false, "estimate even when the plan does not fit in GPU memory (the HammingMesh motifs simulate one step without recomputation); the report warns")
	fs.StringVar(&f.precision, "precision", c.Precision.String(), "fp16, bf16, fp32 or tf32")
	fs.StringVar(&f.optimizer, "optimizer", c.Optimizer.String(), "adam or sgd")
	fs.StringVar(&f.dpBucket, "dp-bucket", "", "gradient bucket size (default Megatron-Core's)")
	fs.BoolVar(&f.noDPOverlap, "no-dp-overlap", false, "all-reduce the gradients after the backward pass")
	fs.Float64Var(&f.steps, "steps", 0, "iterations to train (default: the preset's tokens)")
	fs.Float64Var(&f.tokens, "tokens", 0, "tokens to train (default 300e9, Brown et al. 2020)")
	if c.MoE.Experts > 0 {
		fs.IntVar(&f.experts, "experts", c.MoE.Experts, "experts per MoE layer")
		fs.IntVar(&f.topK, "top-k", c.MoE.TopK, "experts per token")
		fs.Float64Var(&f.capacity, "capacity-factor", c.MoE.CapacityFactor, "expert capacity factor")
		fs.IntVar(&f.expertHidden, "expert-hidden", c.MoE.ExpertHidden, "each expert's FFN width")
		fs.IntVar(&f.ep, "ep", c.MoE.EP, "expert-parallel degree (divides DP)")
	}
	addProfileFlags(fs, &f.profile, &f.traceBatch, &f.traceTP)
	addHWFlags(fs, &f.hw, "a100-80gb", false)
	addNetFlags(cmd, &f.network, "alphabeta")
	fs.StringVar(&f.plot, "plot", "", "also draw the iteration breakdown to this image (.png, .svg or .pdf)")
	addFormatFlag(fs, &f.format)
	_ = cmd.RegisterFlagCompletionFunc("format", completeFormats)
	return cmd
}

func (f *transformerFlags) options(cmd *cobra.Command, preset string) (job.TransformerOptions, error) {
	var o job.TransformerOptions
	p, err := megatron.Presets().Lookup(preset)
	if err != nil {
		return o, err
	}
	c := p.Config
	c.TP, c.PP, c.GlobalBatch, c.MicroBatch, c.Interleave, c.Vocab, c.SeqParallel = f.tp, f.pp, f.global, f.micro, f.interleave, f.vocab, f.seqParallel
	c.NoDPOverlap = f.noDPOverlap
	if c.TP < 1 || c.PP < 1 || f.gpus < 1 || f.gpus%(c.TP*c.PP) != 0 {
		return o, usagef("--gpus %d must be a positive multiple of --tp %d × --pp %d = %d", f.gpus, c.TP, c.PP, c.TP*c.PP)
	}
	c.DP = f.gpus / (c.TP * c.PP)
	if err := parseTraining(&c, f.recompute, f.precision, f.optimizer, f.dpBucket); err != nil {
		return o, err
	}
	if c.RankOrder, err = megatron.ParseRankOrder(f.rankOrder); err != nil {
		return o, err
	}
	if c.MoE.Experts > 0 {
		c.MoE.Experts, c.MoE.TopK, c.MoE.CapacityFactor, c.MoE.ExpertHidden, c.MoE.EP = f.experts, f.topK, f.capacity, f.expertHidden, f.ep
	}
	if f.steps < 0 || f.tokens < 0 {
		return o, usagef("--steps %g and --tokens %g must be > 0", f.steps, f.tokens)
	}
	net, err := f.network.choice()
	if err != nil {
		return o, err
	}
	return job.TransformerOptions{Preset: preset, Config: c, Steps: f.steps, Tokens: f.tokens, IgnoreMemory: f.ignoreMemory,
		Run: job.Run{GPU: f.hw.gpu, Efficiency: f.hw.eff, Profile: f.profile, TraceBatch: f.traceBatch, TraceTP: f.traceTP,
			Network: net}}, nil
}
