package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition/megatron"
	"github.com/ddlest/ddlest/plots"
	"github.com/ddlest/ddlest/profile/roofline"
	"github.com/ddlest/ddlest/scaling"
)

// megatronFlags holds the raw flag values; toOptions validates and converts them.
type megatronFlags struct {
	// auto mode
	loss, gap, aspect, paramsPerGPU float64
	law, shape                      string
	maxGPUs                         int
	// explicit mode
	layers, hidden, heads, globalBatch, tp, pp, dp, interleave int
	steps, tokens                                              float64
	// both
	seq, vocab, microBatch           int
	seqParallel, untied, noDPOverlap bool
	recompute, precision, optimizer  string
	rankOrder                        string
	tpComm                           string
	dpBucket                         string
	hw                               hwFlags
	profile                          string
	traceBatch, traceTP              int
	network                          netFlags
	plot                             string
	format                           format
}

// Flags that belong to one mode only.
var (
	autoOnlyFlags     = []string{"loss", "law", "loss-gap", "shape", "aspect-ratio", "max-gpus", "params-per-gpu"}
	explicitOnlyFlags = []string{"layers", "hidden", "heads", "global-batch", "tp", "pp", "dp", "interleave", "steps", "tokens"}
)

func newMegatronCommand() *cobra.Command {
	f := &megatronFlags{}
	cmd := &cobra.Command{
		Use:   "megatron",
		Short: "Megatron-LM transformer: time to a target loss (auto mode) or for an explicit configuration",
		Long: `Estimate training a Megatron-LM GPT-style transformer.

Auto mode (--loss): a scaling law (Kaplan 2020 by default, Chinchilla with --law chinchilla) gives
the model, the critical batch and the steps to reach the loss; the RAMP partitioner (§7.2.1)
picks the tensor-parallel degree (smallest power of two under --params-per-gpu), the data-parallel
degree (critical batch / local batch, at most --max-gpus in all) and the micro-batch that fills
GPU memory. The ten losses of RAMP Table 9 use that table's shapes.

Explicit mode (--layers --hidden --heads --global-batch [--tp --pp --dp --interleave] and
--steps or --tokens): the configuration is taken as given; no scaling law is involved.`,
		Example: `  ddlest megatron --loss 1.8
  ddlest megatron --loss 2.0 --law chinchilla --gpu h100 --format json
  ddlest megatron --layers 96 --hidden 12288 --heads 96 --global-batch 1536 --micro-batch 1 \
      --tp 8 --pp 8 --dp 24 --interleave 2 --seq 2048 --tokens 300e9 --gpu a100-80gb --seq-parallel`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := f.toOptions(cmd)
			if err != nil {
				return err
			}
			return runMegatron(opts, f.format, f.plot, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.Float64Var(&f.loss, "loss", 0, "auto mode: target cross-entropy loss in nats/token (e.g. 1.8)")
	fs.StringVar(&f.law, "law", "kaplan", "auto mode: scaling law, kaplan or chinchilla")
	fs.Float64Var(&f.gap, "loss-gap", scaling.DefaultGap, "auto mode (kaplan): fraction of L(N) left to the step term when training stops (0.05 reproduces RAMP Table 9)")
	fs.StringVar(&f.shape, "shape", "auto", "auto mode: model shape rule, auto (RAMP Table 9 presets, else aspect ratio) or aspect")
	fs.Float64Var(&f.aspect, "aspect-ratio", scaling.DefaultAspectRatio, "auto mode: d_model / n_layer for losses without a preset")
	fs.IntVar(&f.maxGPUs, "max-gpus", megatron.DefaultMaxGPUs, "auto mode: most GPUs the job may use")
	fs.Float64Var(&f.paramsPerGPU, "params-per-gpu", 0, "auto mode: transformer parameters allowed per GPU when choosing TP (default: the GPU's limit, 1.6e9 for the RAMP A100)")

	fs.IntVar(&f.layers, "layers", 0, "explicit mode: transformer layers")
	fs.IntVar(&f.hidden, "hidden", 0, "explicit mode: hidden size d_model")
	fs.IntVar(&f.heads, "heads", 0, "explicit mode: attention heads")
	fs.IntVar(&f.globalBatch, "global-batch", 0, "explicit mode: sequences per iteration")
	fs.IntVar(&f.tp, "tp", 1, "explicit mode: tensor-parallel degree")
	fs.IntVar(&f.pp, "pp", 1, "explicit mode: pipeline-parallel degree")
	fs.IntVar(&f.dp, "dp", 1, "explicit mode: data-parallel degree")
	fs.IntVar(&f.interleave, "interleave", 1, "explicit mode: model chunks per pipeline stage (interleaved 1F1B)")
	fs.Float64Var(&f.steps, "steps", 0, "explicit mode: training iterations")
	fs.Float64Var(&f.tokens, "tokens", 0, "explicit mode: training tokens (steps = tokens / (global batch × seq))")

	fs.IntVar(&f.seq, "seq", scaling.DefaultSeq, "sequence length in tokens")
	fs.IntVar(&f.vocab, "vocab", megatron.DefaultVocab, "vocabulary size (padded to a multiple of 128·TP); 0 = no embedding or LM head, as RAMP's equivalent model")
	fs.IntVar(&f.microBatch, "micro-batch", 0, "sequences per micro-batch (default: auto mode fills memory, explicit mode 1)")
	fs.BoolVar(&f.seqParallel, "seq-parallel", false, "sequence parallelism (reduce-scatter + all-gather instead of all-reduce)")
	fs.StringVar(&f.tpComm, "tp-comm", "megatron", "tensor-parallel collectives: megatron (2 all-reduces forward + 2 backward per layer) or ramp (the RAMP paper's 1 + 1, §7.2.1)")
	fs.StringVar(&f.recompute, "recompute", "full", "activation recomputation: none, selective or full (RAMP §7.3 uses full)")
	addRankOrderFlag(cmd, &f.rankOrder)
	fs.StringVar(&f.precision, "precision", "fp16", "training precision: fp16 or bf16 (mixed, fp32 master weights), fp32, or tf32 (fp32 with TF32 tensor-core GEMMs)")
	fs.StringVar(&f.optimizer, "optimizer", "adam", "optimizer: adam or sgd (with momentum)")
	fs.BoolVar(&f.untied, "untied-embeddings", false, "give the LM head its own weights instead of sharing the input embedding")
	fs.StringVar(&f.dpBucket, "dp-bucket", "", "gradient bucket size, e.g. 25MB (default: Megatron-Core's max(4e7, 1e6·DP) parameters)")
	fs.BoolVar(&f.noDPOverlap, "no-dp-overlap", false, "all-reduce the gradients after the backward pass instead of overlapping buckets with it")
	addHWFlags(fs, &f.hw, roofline.DefaultGPU, false)
	addProfileFlags(fs, &f.profile, &f.traceBatch, &f.traceTP)
	addNetFlags(cmd, &f.network, "alphabeta")
	fs.StringVar(&f.plot, "plot", "", "also draw the iteration breakdown to this image (.png, .svg or .pdf)")
	addFormatFlag(fs, &f.format)

	complete := func(name string, values func() []string) {
		_ = cmd.RegisterFlagCompletionFunc(name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return values(), cobra.ShellCompDirectiveNoFileComp
		})
	}
	complete("law", func() []string { return []string{"kaplan", "chinchilla"} })
	complete("shape", func() []string { return []string{"auto", "aspect"} })
	complete("recompute", func() []string { return []string{"none", "selective", "full"} })
	complete("precision", func() []string { return []string{"fp16", "bf16", "fp32", "tf32"} })
	complete("optimizer", func() []string { return []string{"adam", "sgd"} })
	complete("tp-comm", func() []string { return []string{"megatron", "ramp"} })
	complete("gpu", func() []string {
		t, err := roofline.GPUs()
		if err != nil {
			return nil
		}
		return t.Names()
	})
	complete("loss", func() []string {
		var ls []string
		for _, r := range scaling.Table9 {
			ls = append(ls, ftoa(r.Loss))
		}
		return ls
	})
	_ = cmd.RegisterFlagCompletionFunc("format", completeFormats)
	return cmd
}

// ftoa formats a float in its shortest exact form.
func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// changed lists which of names were set on the command line, in order.
func changed(cmd *cobra.Command, names []string) []string {
	var out []string
	for _, n := range names {
		if cmd.Flags().Changed(n) {
			out = append(out, "--"+n)
		}
	}
	return out
}

func (f *megatronFlags) toOptions(cmd *cobra.Command) (job.MegatronOptions, error) {
	var o job.MegatronOptions
	auto, explicit := changed(cmd, autoOnlyFlags), changed(cmd, explicitOnlyFlags)
	switch {
	case len(auto) > 0 && len(explicit) > 0:
		return o, errs.Usage("auto-mode flags (%s) cannot be mixed with explicit-mode flags (%s); give --loss alone or the whole configuration",
			strings.Join(auto, ", "), strings.Join(explicit, ", "))
	case len(explicit) > 0:
		o.Mode = job.ModeExplicit
		var missing []string
		for _, n := range []string{"layers", "hidden", "heads", "global-batch"} {
			if !cmd.Flags().Changed(n) {
				missing = append(missing, "--"+n)
			}
		}
		if len(missing) > 0 {
			return o, errs.Usage("explicit mode needs %s (given: %s)", strings.Join(missing, ", "), strings.Join(explicit, ", "))
		}
		if f.steps < 0 || f.tokens < 0 {
			return o, errs.Usage("--steps %g / --tokens %g must be > 0", f.steps, f.tokens)
		}
	case cmd.Flags().Changed("loss"):
		o.Mode = job.ModeAuto
	default:
		return o, errs.Usage("give a target loss (--loss 1.8, auto mode) or a whole configuration (--layers --hidden --heads --global-batch ..., explicit mode)")
	}

	var err error
	c := megatron.Config{
		Layers: f.layers, Hidden: f.hidden, Heads: f.heads, Seq: f.seq, Vocab: f.vocab,
		GlobalBatch: f.globalBatch, MicroBatch: f.microBatch, TP: f.tp, PP: f.pp, DP: f.dp, Interleave: f.interleave,
		SeqParallel: f.seqParallel, UntiedEmbeddings: f.untied, NoDPOverlap: f.noDPOverlap,
	}
	if o.Mode == job.ModeExplicit && c.MicroBatch == 0 {
		c.MicroBatch = 1
	}
	if c.TPComm, err = megatron.ParseTPComm(f.tpComm); err != nil {
		return o, err
	}
	if c.RankOrder, err = megatron.ParseRankOrder(f.rankOrder); err != nil {
		return o, err
	}
	if err := parseTraining(&c, f.recompute, f.precision, f.optimizer, f.dpBucket); err != nil {
		return o, err
	}
	o.Config, o.Steps, o.Tokens = c, f.steps, f.tokens

	req := scaling.Request{Loss: f.loss, Gap: f.gap, AspectRatio: f.aspect, Seq: f.seq}
	if req.Law, err = scaling.ParseLaw(f.law); err != nil {
		return o, err
	}
	if req.Shape, err = scaling.ParseShapeRule(f.shape); err != nil {
		return o, err
	}
	o.Scaling, o.MaxGPUs, o.ParamsPerGPU = req, f.maxGPUs, f.paramsPerGPU
	if cmd.Flags().Changed("params-per-gpu") && !(f.paramsPerGPU > 0) {
		return o, errs.Usage("--params-per-gpu %g must be > 0", f.paramsPerGPU)
	}

	o.GPU, o.Efficiency = f.hw.gpu, f.hw.eff
	if f.profile == "published" {
		return o, usagef("--profile published: no measured compute ships with megatron; valid: roofline or a trace file (.parquet)")
	}
	o.Profile, o.TraceBatch, o.TraceTP = f.profile, f.traceBatch, f.traceTP
	o.Network, err = f.network.choice()
	return o, err
}

func runMegatron(o job.MegatronOptions, f format, plotPath string, w io.Writer) error {
	rep, err := job.Megatron(o)
	if err != nil {
		return err
	}
	return renderMegatron(rep, f, plotPath, w)
}

// renderMegatron draws the optional plot (first, so a bad path leaves no output) and writes the
// report.
func renderMegatron(rep *job.MegatronReport, f format, plotPath string, w io.Writer) error {
	if plotPath != "" {
		label := "explicit"
		title := fmt.Sprintf("Megatron %s, %d GPUs, %s", units.Count(rep.Params), rep.Config.GPUs(), rep.Network)
		if rep.Preset != "" {
			label = rep.Preset
		}
		if rep.Target != nil {
			label = "loss " + ftoa(rep.Target.Loss)
		}
		p, err := plots.Breakdown(title, []plots.Bar{plots.BreakdownBar(label, rep.Result)})
		if err != nil {
			return err
		}
		if err := plots.Save(p, plotPath, 5*vg.Inch, 4*vg.Inch); err != nil {
			return err
		}
	}
	switch f {
	case formatJSON:
		return writeJSON(w, megatronJSON(rep))
	case formatCSV:
		return writeMegatronCSV(w, rep)
	default:
		return writeMegatronTable(w, rep)
	}
}

// parseTraining reads the execution settings every transformer command shares into c.
func parseTraining(c *megatron.Config, recompute, precision, optimizer, dpBucket string) error {
	var err error
	if c.Recompute, err = megatron.ParseRecompute(recompute); err != nil {
		return err
	}
	if c.Precision, err = megatron.ParsePrecision(precision); err != nil {
		return err
	}
	if c.Optimizer, err = megatron.ParseOptimizer(optimizer); err != nil {
		return err
	}
	c.DPBucketBytes, err = parseBucket(dpBucket)
	return err
}

// parseBucket reads --dp-bucket ("" is the workload's default, 0).
func parseBucket(s string) (units.Bytes, error) {
	if s == "" {
		return 0, nil
	}
	b, err := units.ParseBytes(s)
	if err != nil {
		return 0, usagef("--dp-bucket: %v", err)
	}
	return b, nil
}

// addRankOrderFlag registers --rank-order.
func addRankOrderFlag(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "rank-order", "tp-first", "rank order: tp-first (Megatron-LM: TP groups are consecutive ranks) or pp-first (the HammingMesh SST motifs: a pipeline is consecutive ranks, TP/EP groups PP apart)")
	_ = cmd.RegisterFlagCompletionFunc("rank-order", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"tp-first", "pp-first"}, cobra.ShellCompDirectiveNoFileComp
	})
}
