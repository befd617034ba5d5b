package job

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition/megatron"
	"github.com/ddlest/ddlest/partition/moe"
	"github.com/ddlest/ddlest/scaling"
)

// TransformerModel is a GPT-style transformer: its architecture, or a target loss from which a
// scaling law picks it (auto mode, RAMP §7.2.1).
type TransformerModel struct {
	ModelPreset
	TargetLoss  float64            `json:"target_loss" flag:"loss" help:"auto mode: target cross-entropy loss in nats/token (e.g. 1.8); a scaling law picks the model, the batch and the steps"`
	Law         scaling.Law        `json:"law" help:"auto mode: scaling law, kaplan or chinchilla"`
	LossGap     float64            `json:"loss_gap" help:"auto mode (kaplan): fraction of L(N) left to the step term when training stops (0.05 reproduces RAMP Table 9)"`
	Shape       scaling.ShapeRule  `json:"shape" help:"auto mode: model shape rule, auto (RAMP Table 9 presets, else aspect ratio) or aspect"`
	AspectRatio float64            `json:"aspect_ratio" help:"auto mode: d_model / n_layer for losses without a preset"`
	Layers      int                `json:"layers" help:"transformer layers"`
	Hidden      int                `json:"hidden" help:"hidden size d_model"`
	Heads       int                `json:"heads" help:"attention heads"`
	KVHeads     int                `json:"kv_heads" help:"key/value heads: fewer than heads is grouped-query attention, 1 multi-query (0: as many as heads)"`
	HeadDim     int                `json:"head_dim" help:"width of each attention head (0: hidden / heads)"`
	FFNHidden   int                `json:"ffn_hidden" help:"MLP inner width, of each of SwiGLU's gate and up projections (0: 4 × hidden)"`
	MLP         megatron.MLP       `json:"mlp" help:"MLP: gelu (GPT), swiglu (gated, three matrices: Llama, Mistral, Qwen) or squared-relu (relu(x)², two matrices: Nemotron)"`
	Norm        megatron.Norm      `json:"norm" help:"normalisation: layernorm (GPT) or rmsnorm (Llama)"`
	NoBias      bool               `json:"no_bias" help:"linear layers without biases (Llama)"`
	QKVBias     bool               `json:"qkv_bias" help:"with no_bias: keep the QKV projection's bias (Qwen2)"`
	Positions   megatron.Positions `json:"positions" help:"positions: learned (an absolute table, GPT) or rope (rotary, Llama)"`
	QLoRARank   int                `json:"q_lora_rank,omitempty" help:"multi-head latent attention (with kv_lora_rank): the query latent's rank (0: a full query projection)"`
	KVLoRARank  int                `json:"kv_lora_rank,omitempty" help:"multi-head latent attention: the key/value latent's rank (DeepSeek-V2/V3; 0: no MLA); head_dim is then each head's non-rotary query/key width"`
	RopeHeadDim int                `json:"rope_head_dim,omitempty" help:"multi-head latent attention: the rotary query/key width per head, its key shared by the heads"`
	VHeadDim    int                `json:"v_head_dim,omitempty" help:"multi-head latent attention: each value head's width (0: head_dim)"`
	Seq         int                `json:"seq" help:"sequence length in tokens"`
	Vocab       int                `json:"vocab" help:"vocabulary size (padded to a multiple of 128·TP); 0 = no embedding or LM head, as RAMP's equivalent model"`
	Untied      bool               `json:"untied_embeddings" help:"give the LM head its own weights instead of sharing the input embedding"`
	MoE         TransformerMoE     `json:"moe"`
}

// TransformerMoE replaces every MLP with a Mixture-of-Experts layer when Experts > 0.
type TransformerMoE struct {
	Experts        int     `json:"experts" help:"experts per MoE layer (0: dense MLPs)"`
	TopK           int     `json:"top_k" help:"experts per token"`
	CapacityFactor float64 `json:"capacity_factor" help:"expert capacity factor"`
	ExpertHidden   int     `json:"expert_hidden" help:"each expert's FFN width"`
	SharedHidden   int     `json:"shared_hidden,omitempty" help:"FFN width of the shared experts every token also passes through (DeepSeekMoE; 0: none)"`
	DenseLayers    int     `json:"dense_layers,omitempty" help:"the first layers that keep the dense MLP of ffn_hidden (DeepSeek first_k_dense_replace; 0: every layer MoE)"`
}

// Layout says how the parallel layout is chosen.
type Layout int

const (
	// LayoutDefault is explicit without a target loss, ramp with one.
	LayoutDefault Layout = iota
	// LayoutExplicit takes tp, pp, dp (or gpus) as given.
	LayoutExplicit
	// LayoutRAMP is RAMP §7.2.1's rule: the smallest power-of-two TP under params_per_gpu, DP from
	// the critical batch, the micro-batch that fills memory (reproduces RAMP Table 9).
	LayoutRAMP
	// LayoutSearch prices every layout of the job's GPUs that fits in memory and takes the
	// fastest (search.go): TP, PP, DP, micro-batch, interleave, EP, recomputation, sequence
	// parallelism.
	LayoutSearch
)

var layoutNames = []string{"default", "explicit", "ramp", "search"}

func (l Layout) String() string { return layoutNames[l] }

// MarshalText renders the name in JSON and YAML.
func (l Layout) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads the name.
func (l *Layout) UnmarshalText(b []byte) error { return enum.Unmarshal(l, b, layoutNames) }

// TransformerExecution is how a transformer is trained: parallel layout, batch, recomputation,
// precision, optimizer, overlap, training length and the compute profile.
type TransformerExecution struct {
	// Software comes first: its preset sets the other keys' defaults, which the keys after it
	// (flags, a config file's keys) override within what the software supports.
	Software        string               `json:"software" help:"training software preset, one of those ddlest software lists with their sources (Megatron-LM of 2021 and 2022, Megatron-Core, DeepSpeed, NeMo 24.07); sets no_dp_overlap, async_tp, pp_scatter_gather, p2p_overlap, distributed_optimizer, grad_allreduce, fp32_grad_reduce, pp_partition, pp_first_layers, pp_last_layers, tp_comm_overlap, offload_layers, grad_accum, optimizer_step and attention, and refuses settings it does not have; empty: ddlest's defaults"`
	Layout          Layout               `json:"layout" help:"parallel layout: explicit (tp, pp, dp as given), ramp (RAMP §7.2.1, with a target loss), search (the fastest that fits on gpus, or on tp × pp × dp GPUs; it chooses tp, pp, dp, ep, interleave, micro_batch, recompute, seq_parallel, zero and the end stages' layers; cp and offload_layers stay as given) or default (explicit; with a target loss the cluster's auto_layout, search unless ramp)"`
	GPUs            int                  `json:"gpus" help:"GPUs = TP × PP × DP (sets DP; 0: DP as given)"`
	MaxGPUs         int                  `json:"max_gpus" help:"ramp layout: most GPUs the job may use"`
	ParamsPerGPU    float64              `json:"params_per_gpu" help:"ramp layout: transformer parameters allowed per GPU when choosing TP (0: the GPU's limit)"`
	TP              int                  `json:"tp" help:"tensor-parallel degree"`
	CP              int                  `json:"cp" help:"context-parallel degree: each rank holds 1/cp of every sequence, attention passes keys and values around the ring (Megatron-Core context parallelism; 1: none)"`
	PP              int                  `json:"pp" help:"pipeline-parallel degree"`
	DP              int                  `json:"dp" help:"data-parallel degree"`
	EP              int                  `json:"ep" help:"expert-parallel degree (divides DP; MoE only)"`
	Interleave      int                  `json:"interleave" help:"model chunks per pipeline stage (interleaved 1F1B)"`
	GlobalBatch     int                  `json:"global_batch" help:"sequences per iteration"`
	MicroBatch      int                  `json:"micro_batch" help:"sequences per micro-batch (0: explicit layout 1, ramp layout fills memory)"`
	SeqParallel     bool                 `json:"seq_parallel" help:"sequence parallelism (reduce-scatter + all-gather instead of all-reduce)"`
	TPComm          megatron.TPComm      `json:"tp_comm" help:"tensor-parallel collectives: megatron (2 all-reduces forward + 2 backward per layer) or ramp (the RAMP paper's 1 + 1, §7.2.1)"`
	Recompute       megatron.Recompute   `json:"recompute" help:"activation recomputation: none, selective or full"`
	Precision       megatron.Precision   `json:"precision" help:"training precision: fp16 or bf16 (mixed, fp32 master weights), fp32, tf32 (fp32 with TF32 tensor-core GEMMs), or fp8 (Transformer Engine: FP8 linear-layer GEMMs, bf16 elsewhere; GPUs with FP8 tensor cores)"`
	Optimizer       megatron.Optimizer   `json:"optimizer" help:"optimizer: adam or sgd (with momentum)"`
	RankOrder       megatron.RankOrder   `json:"rank_order" help:"rank order: tp-first (Megatron-LM) or pp-first (the HammingMesh SST motifs)"`
	DPBucket        units.Bytes          `json:"dp_bucket_bytes" flag:"dp-bucket" help:"gradient bucket size, e.g. 25MB (0: Megatron-Core's max(4e7, 1e6·DP) parameters)"`
	NoDPOverlap     bool                 `json:"no_dp_overlap" help:"all-reduce the gradients after the backward pass instead of overlapping buckets with it"`
	AsyncTP         bool                 `json:"async_tp" help:"run each column-parallel linear's backward TP all-reduce (reduce-scatter with seq_parallel) during its weight-gradient GEMM, as Megatron-LM's async dgrad all-reduce (megatron/core/tensor_parallel/layers.py); off: after it, as in Megatron-LM 2021"`
	PPScatterGather bool                 `json:"pp_scatter_gather" help:"with tp > 1 and no seq_parallel, each TP rank sends 1/TP of the activation to the next pipeline stage, which all-gathers it over NVLink (Megatron-LM 2021-22 scatter_gather_tensors_in_pipeline, SC'21 §4.1); off: every rank sends the whole activation"`
	P2POverlap      bool                 `json:"p2p_overlap" help:"overlap the interleaved schedule's pipeline sends and receives with compute (Megatron-Core overlap_p2p_comm); only pipeline fill and drain stay exposed; no effect with interleave 1"`
	DistOptimizer   bool                 `json:"distributed_optimizer" help:"shard the optimizer state over the DP group: reduce-scatter the gradients, update 1/DP, all-gather the parameters (Megatron-LM --use-distributed-optimizer, DeepSpeed ZeRO stage 1)"`
	ZeRO            int                  `json:"zero" help:"ZeRO stage: 0 none, 1 shard the optimizer state (as distributed_optimizer), 2 also the gradients (reduce-scattered every micro-batch), 3 also the parameters (all-gathered before every use; fsdp); 2 and 3 need pp 1"`
	FSDP            bool                 `json:"fsdp" help:"PyTorch FSDP FULL_SHARD: the same as zero 3"`
	GradAllReduce   bool                 `json:"grad_allreduce" help:"with distributed_optimizer: all-reduce the gradients, then update the shard (DeepSpeed's BF16_Optimizer), instead of reduce-scattering them"`
	FP32GradReduce  bool                 `json:"fp32_grad_reduce" help:"bf16 training: accumulate and reduce the gradients in fp32 (Megatron-LM's default for bf16, DeepSpeed's BF16_Optimizer); no effect in fp16 or fp32"`
	PPPartition     megatron.PPPartition `json:"pp_partition" help:"pipeline stage partition: uniform (layers/pp per stage, embedding and LM head added to the first and last, Megatron-LM) or embedding-slot (the embedding and the head each take one layer's slot, DeepSpeed's partition_method type:transformer|embedding)"`
	PPFirstLayers   int                  `json:"pp_first_layers" help:"layers on the first pipeline stage, the rest split evenly (Megatron-Core --decoder-first-pipeline-num-layers; 0: an even split)"`
	PPLastLayers    int                  `json:"pp_last_layers" help:"layers on the last pipeline stage, the rest split evenly (Megatron-Core --decoder-last-pipeline-num-layers; 0: an even split)"`
	TPCommOverlap   bool                 `json:"tp_comm_overlap" help:"with seq_parallel: pipeline the tensor-parallel all-gathers and reduce-scatters with the GEMMs they feed or drain (Megatron-Core --tp-comm-overlap, Transformer Engine userbuffers)"`
	OffloadLayers   int                  `json:"offload_layers" help:"activation offloading: copy the saved activations of the first N transformer layers to host memory after their forward pass and back before their backward pass, beside compute, at the GPU's measured host-link rate (Megatron-Core --cpu-offloading-num-layers, Transformer Engine's CPU offload); needs pp 1 and recompute none; 0: none"`
	GradAccum       megatron.GradAccum   `json:"grad_accum" help:"how each micro-batch's weight gradients join the kept gradients: gemm (inside the weight-gradient GEMM, Megatron-LM's gradient_accumulation_fusion), add (a pass main_grad.add_(grad) after every micro-batch's backward, Megatron-LM without the fusion) or cast-add (DeepSpeed's BF16_Optimizer: bf16 gradients cast to fp32, then added)"`
	Attention       megatron.Attention   `json:"attention" help:"attention kernels: standard (scores GEMM, softmax, dropout, context GEMM, the s² probabilities in memory) or flash (causal FlashAttention, one kernel per pass, at the GPU's measured FlashAttention efficiency: FlashAttention-2 on A100, -3 on H100)"`
	OptimizerStep   megatron.StepImpl    `json:"optimizer_step" help:"optimizer step implementation: fused (one pass over state, gradients and weights, 28 B per parameter in mixed precision), megatron (Megatron-LM's MixedPrecisionOptimizer: grad copy/unscale, norm, clip, FusedAdam, master-to-model copy, buffer zeroing) or deepspeed (DeepSpeed's BF16_Optimizer)"`
	Steps           float64              `json:"steps" excludes:"tokens" help:"training iterations (explicit layout; 0: from tokens; replaces a preset's tokens)"`
	Tokens          float64              `json:"tokens" excludes:"steps" help:"training tokens (explicit layout; steps = tokens / (global batch × seq); replaces a preset's steps)"`
	IgnoreMemory    bool                 `json:"ignore_memory" help:"estimate even when the plan does not fit in GPU memory; the report warns"`
	Profile         string               `json:"profile" help:"compute profile: roofline, published (measured compute shipped with some presets) or a trace FILE.parquet"`
	TraceBatch      int                  `json:"trace_batch" help:"sequences per micro-batch in the profiled run, when not the plan's"`
	TraceTP         int                  `json:"trace_tp" help:"tensor-parallel degree of the profiled run, when not the plan's"`
	ForceProfile    bool                 `json:"force_profile,omitempty" flag:"force" help:"use a --profile trace that fails its checks (layer count, kernel mix, device), with a warning in the report; a trace faster than the GPU's peak is refused still"`
}

// zeroStage is the ZeRO stage: fsdp is stage 3; a conflicting zero stays as given and
// validation names it.
func (e *TransformerExecution) zeroStage() int {
	if e.FSDP && e.ZeRO == 0 {
		return 3
	}
	return e.ZeRO
}

type megatronWorkload struct{}

func (megatronWorkload) Name() string { return "megatron" }
func (megatronWorkload) Summary() string {
	return "Megatron-LM GPT-style transformer (dense or MoE): time to a target loss or for an explicit configuration"
}

func (megatronWorkload) NewModel() any {
	return &TransformerModel{Law: scaling.LawKaplan, LossGap: scaling.DefaultGap, Shape: scaling.ShapeAuto,
		AspectRatio: scaling.DefaultAspectRatio, Seq: scaling.DefaultSeq, Vocab: megatron.DefaultVocab}
}

func (megatronWorkload) NewExecution() any {
	return &TransformerExecution{MaxGPUs: megatron.DefaultMaxGPUs, TP: 1, CP: 1, PP: 1, DP: 1, Interleave: 1,
		Recompute: megatron.RecomputeFull, Precision: megatron.MixedFP16, Optimizer: megatron.Adam}
}

// Config maps a job onto the partitioner's configuration (Capacity is filled in later).
func (m *TransformerModel) config(e *TransformerExecution) megatron.Config {
	return megatron.Config{Layers: m.Layers, Hidden: m.Hidden, Heads: m.Heads, Seq: m.Seq, Vocab: m.Vocab,
		Arch: megatron.Arch{KVHeads: m.KVHeads, HeadDim: m.HeadDim, FFNHidden: m.FFNHidden, MLP: m.MLP, Norm: m.Norm,
			NoBias: m.NoBias, QKVBias: m.QKVBias, Positions: m.Positions,
			QRank: m.QLoRARank, KVRank: m.KVLoRARank, RopeDim: m.RopeHeadDim, VHeadDim: m.VHeadDim},
		GlobalBatch: e.GlobalBatch, MicroBatch: e.MicroBatch, TP: e.TP, PP: e.PP, DP: e.DP, CP: e.CP, Interleave: e.Interleave,
		SeqParallel: e.SeqParallel, TPComm: e.TPComm, Recompute: e.Recompute, Precision: e.Precision, Optimizer: e.Optimizer,
		UntiedEmbeddings: m.Untied, DPBucketBytes: e.DPBucket, RankOrder: e.RankOrder,
		Stack: megatron.Stack{NoDPOverlap: e.NoDPOverlap, AsyncTP: e.AsyncTP, PPScatterGather: e.PPScatterGather, P2POverlap: e.P2POverlap, DistOptimizer: e.DistOptimizer,
			GradAllReduce: e.GradAllReduce, FP32GradReduce: e.FP32GradReduce, PPPartition: e.PPPartition,
			PPFirstLayers: e.PPFirstLayers, PPLastLayers: e.PPLastLayers, ZeRO: e.zeroStage(),
			GradAccum: e.GradAccum, OptimizerStep: e.OptimizerStep, TPCommOverlap: e.TPCommOverlap, Attention: e.Attention,
			OffloadLayers: e.OffloadLayers},
		MoE: moe.Spec{Experts: m.MoE.Experts, TopK: m.MoE.TopK, CapacityFactor: m.MoE.CapacityFactor, ExpertHidden: m.MoE.ExpertHidden, EP: e.EP,
			SharedHidden: m.MoE.SharedHidden, DenseLayers: m.MoE.DenseLayers}}
}

// options resolves a job into the pipeline's options.
func (megatronWorkload) options(j *Job) (MegatronOptions, error) {
	m, e := j.Model.(*TransformerModel), j.Execution.(*TransformerExecution)
	var o MegatronOptions
	var p params.Problems
	p.NonNegative("execution.steps", e.Steps)
	p.NonNegative("execution.tokens", e.Tokens)
	p.AtLeast("execution.gpus", e.GPUs, 0)
	if e.FSDP && e.ZeRO != 0 && e.ZeRO != 3 {
		p.Addf("execution.fsdp is ZeRO stage 3; execution.zero %d contradicts it (give one of them)", e.ZeRO)
	}
	if err := p.Err("megatron"); err != nil {
		return o, err
	}
	o.Config = m.config(e)
	if e.Software != "" {
		sw, err := LookupSoftware(e.Software)
		if err != nil {
			return o, errs.Usage("execution.software: %v", err)
		}
		if err := sw.check(e); err != nil {
			return o, err
		}
		o.software = sw
	}
	layout := e.Layout
	if layout == LayoutDefault {
		layout = LayoutExplicit
		if m.TargetLoss != 0 {
			layout = LayoutSearch
			if j.Cluster.AutoLayout == LayoutRAMP {
				layout = LayoutRAMP
			}
		}
	}
	if m.TargetLoss < 0 {
		return o, errs.Usage("model.target_loss %g must be > 0 (e.g. 1.8)", m.TargetLoss)
	}
	if layout == LayoutSearch {
		// The search takes the model as the other layouts do (from the law, or as given) and
		// chooses the rest; the given TP·PP·DP is the job's size when gpus is 0.
		if m.TargetLoss > 0 && (e.TP != 1 || e.PP != 1 || e.DP != 1 || e.Interleave != 1) {
			return o, errs.Usage("the search layout chooses execution.tp, pp, dp and interleave (given %d, %d, %d, interleave %d); give execution.gpus for the job size, or layout explicit with the architecture", e.TP, e.PP, e.DP, e.Interleave)
		}
		gpus := e.GPUs
		if gpus == 0 && m.TargetLoss == 0 {
			gpus = max(1, e.TP) * max(1, e.CP) * max(1, e.PP) * max(1, e.DP)
		}
		o.Search = &SearchOptions{GPUs: gpus}
		layout = LayoutExplicit
		if m.TargetLoss > 0 {
			layout = LayoutRAMP
		}
	}
	switch layout {
	case LayoutRAMP:
		if !(m.TargetLoss > 0) {
			return o, errs.Usage("execution.layout ramp derives the model from a target loss: give model.target_loss (e.g. 1.8)")
		}
		if m.Layers != 0 || m.Hidden != 0 || m.Heads != 0 {
			return o, errs.Usage("model.target_loss %g picks the architecture; model.layers, hidden and heads must be 0 (given %d, %d, %d)", m.TargetLoss, m.Layers, m.Hidden, m.Heads)
		}
		if o.Search == nil && (e.TP != 1 || e.PP != 1 || e.DP != 1 || e.Interleave != 1 || e.GPUs != 0) {
			return o, errs.Usage("the ramp layout chooses execution.tp, pp, dp and gpus (given %d, %d, %d, interleave %d, gpus %d); give layout explicit with the architecture, or leave them out", e.TP, e.PP, e.DP, e.Interleave, e.GPUs)
		}
		o.Mode = ModeAuto
		o.Scaling = scaling.Request{Loss: m.TargetLoss, Gap: m.LossGap, AspectRatio: m.AspectRatio, Seq: m.Seq, Law: m.Law, Shape: m.Shape}
		o.MaxGPUs, o.ParamsPerGPU = e.MaxGPUs, e.ParamsPerGPU
		if e.ParamsPerGPU < 0 {
			return o, errs.Usage("execution.params_per_gpu %g must be > 0 (0: the GPU's limit)", e.ParamsPerGPU)
		}
	case LayoutExplicit:
		if m.TargetLoss != 0 {
			return o, errs.Usage("model.target_loss %g needs execution.layout ramp or search; the explicit layout takes the model as given", m.TargetLoss)
		}
		if m.Layers == 0 && m.Hidden == 0 && m.Heads == 0 {
			return o, errs.Usage("no model: give model.target_loss > 0 (e.g. 1.8), a model preset (%s) or the architecture (model.layers, model.hidden, model.heads, execution.global_batch)", strings.Join(ModelNames("megatron"), ", "))
		}
		o.Mode = ModeExplicit
		if o.Config.MicroBatch == 0 {
			o.Config.MicroBatch = 1
		}
		if e.GPUs > 0 && o.Search == nil {
			tp := max(1, e.TP) * max(1, e.CP) * max(1, e.PP)
			switch {
			case e.GPUs%tp == 0:
			case e.CP > 1:
				return o, errs.Usage("execution.gpus %d must be a multiple of execution.tp %d × execution.cp %d × execution.pp %d = %d", e.GPUs, e.TP, e.CP, e.PP, tp)
			default:
				return o, errs.Usage("execution.gpus %d must be a multiple of execution.tp %d × execution.pp %d = %d", e.GPUs, e.TP, e.PP, tp)
			}
			o.Config.DP = e.GPUs / tp
		}
		o.Steps, o.Tokens = e.Steps, e.Tokens
		if o.Search != nil {
			// The search sets the layout; the base configuration only has to be a valid model.
			o.Config.TP, o.Config.PP, o.Config.DP, o.Config.Interleave, o.Config.MicroBatch = 1, 1, 1, 1, 1
			if o.Config.OffloadLayers > 0 {
				// Offloaded layers are kept as given and run without recomputation
				// (Config.Validate): the search chooses among the layouts that allows.
				o.Config.Recompute = megatron.RecomputeNone
			}
			if o.Config.MoE.Experts > 0 {
				o.Config.MoE.EP = 1
			}
		}
	}
	o.GPU, o.Efficiency, o.IgnoreMemory = j.Cluster.GPU, j.Cluster.Efficiency, e.IgnoreMemory
	o.Profile, o.TraceBatch, o.TraceTP, o.ForceProfile = e.Profile, e.TraceBatch, e.TraceTP, e.ForceProfile
	o.Cluster, o.placements, o.scratch = &j.Cluster, j.placements, j.scratch
	if e.Profile == "published" {
		pub, err := publishedFor(m.Preset, o.Config)
		if err != nil {
			return o, err
		}
		o.Published, o.Profile = pub, ""
	}
	return o, nil
}

func (w megatronWorkload) Run(j *Job) (*Report, error) {
	o, err := w.options(j)
	if err != nil {
		return nil, err
	}
	rep, err := Megatron(o)
	if err != nil {
		return nil, err
	}
	if name := j.Model.(*TransformerModel).Preset; name != "" {
		r, _ := Models() // decoded already: the job named the preset
		p, _ := r.Lookup(name)
		rep.Preset, rep.PresetSource = name, p.Source
	}
	return rep, nil
}

// publishedFor returns the measured compute of a model preset when the job computes what was
// measured (same per-stage work: computeKey).
func publishedFor(preset string, c megatron.Config) (*Published, error) {
	pub, ok := publishedTransformer[preset]
	if !ok {
		return nil, errs.Usage("execution.profile published: no measured compute ships with megatron model %q; measured: gpt3, gpt3-moe (HammingMesh §V-B5)", preset)
	}
	base, _, _, err := modelPreset(preset)
	if err != nil {
		return nil, err
	}
	if keyOf(c) != keyOf(base) {
		return nil, errs.Usage("execution.profile published: %s was measured with one layer per stage, one sequence per micro-batch, its precision and its own tensor/expert split only", preset)
	}
	return &pub, nil
}

// PresetConfig is a transformer model preset with its execution, as the partitioner's config.
func PresetConfig(name string) (megatron.Config, error) {
	c, _, _, err := modelPreset(name)
	return c, err
}

// modelPreset returns a transformer preset's configuration, its training tokens and its source,
// read from the decoded preset (no copy, no decoding: it sits on the estimate's path).
func modelPreset(name string) (megatron.Config, float64, string, error) {
	r, err := Models()
	if err != nil {
		return megatron.Config{}, 0, "", err
	}
	p, err := r.Lookup(name)
	if err != nil {
		return megatron.Config{}, 0, "", err
	}
	m, ok := p.model.(*TransformerModel)
	if !ok {
		return megatron.Config{}, 0, "", errs.Usage("model preset %s is a %s model, not a transformer", name, p.Workload)
	}
	e, _ := p.execution.(*TransformerExecution)
	if e == nil {
		e = megatronWorkload{}.NewExecution().(*TransformerExecution)
	}
	return m.config(e), e.Tokens, p.Source, nil
}

// table9Presets are RAMP Table 9's ten rows as model presets (scaling.Table9 is their one home):
// the target loss, whose shape the law takes from the row, and the paper's execution — its own
// layout rule, no embedding table or LM head ("random embedding vectors as input to the
// transformer block", RAMP §7.3), fp16 mixed precision, Adam, full recomputation (§7.3).
func table9Presets() []ModelPresetEntry {
	var out []ModelPresetEntry
	w := megatronWorkload{}
	for _, r := range scaling.Table9 {
		m := w.NewModel().(*TransformerModel)
		m.TargetLoss, m.Vocab = r.Loss, 0
		e := w.NewExecution().(*TransformerExecution)
		e.Layout, e.Recompute, e.Precision, e.Optimizer = LayoutRAMP, megatron.RecomputeFull, megatron.MixedFP16, megatron.Adam
		name := "ramp-ce" + strconv.FormatFloat(r.Loss, 'g', -1, 64)
		out = append(out, ModelPresetEntry{Name: name, Workload: w.Name(),
			Description: fmt.Sprintf("RAMP Table 9 row CE %g: %d layers, d_model %d, local batch %d, the paper's layout rule", r.Loss, r.Layers, r.DModel, r.LocalBatch),
			Source:      "[P] RAMP Table 9 (shape, local batch) and §7.2.1–§7.3 (layout, no embedding, fp16, Adam, full recomputation)",
			model:       m, execution: e})
	}
	return out
}
