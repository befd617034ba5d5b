package megatron

import (
	"fmt"
	"strings"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/moe"
)

// Recompute is the activation recomputation policy (Korthikanti et al. 2022).
type Recompute int

const (
	// RecomputeNone keeps every activation.
	RecomputeNone Recompute = iota
	// RecomputeSelective recomputes the attention core (QKᵀ, softmax, dropout, attention over
	// V), dropping its 5·a·s²·b/t bytes per layer (Korthikanti §5).
	RecomputeSelective
	// RecomputeFull keeps only each layer's input and reruns the layer's forward pass before its
	// backward pass (Chen et al. 2016; Megatron-LM "uniform" with one layer per checkpoint).
	RecomputeFull
)

var recomputeNames = []string{"none", "selective", "full"}

func (r Recompute) String() string { return recomputeNames[r] }

// MarshalText renders the policy in JSON.
func (r Recompute) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Precision, Optimizer, GradAccum, StepImpl and their values are partition's (shared by every
// workload).
type (
	Precision = partition.Precision
	Optimizer = partition.Optimizer
	GradAccum = partition.GradAccum
	StepImpl  = partition.StepImpl
)

const (
	MixedFP16 = partition.MixedFP16
	MixedBF16 = partition.MixedBF16
	FP32      = partition.FP32
	TF32      = partition.TF32
	MixedFP8  = partition.MixedFP8
	Adam      = partition.Adam
	SGD       = partition.SGD
)

// TPComm selects which tensor-parallel collectives a layer issues.
type TPComm int

const (
	// TPCommMegatron is Megatron-LM's: the conjugate f/g operators of the attention and MLP
	// blocks, 2 all-reduces forward and 2 backward per layer (+2 when the forward is recomputed).
	TPCommMegatron TPComm = iota
	// TPCommRAMP is the RAMP paper's reading (§7.2.1): "the partitioned multi-head attention and
	// corresponding backward path all-reduce, and partitioned feed-forward MLP with corresponding
	// forward path all-reduce" — one all-reduce forward and one backward per layer.
	TPCommRAMP
)

var tpCommNames = []string{"megatron", "ramp"}

// RankOrder is how the job's ranks map onto (tensor, data, pipeline) coordinates, which sets the
// rank stride of every group and so what a topology-aware network sees.
type RankOrder int

const (
	// TPFirst is Megatron-LM's: rank = tp + TP·(dp + DP·pp) — tensor-parallel groups are
	// consecutive ranks (inside a node), pipeline neighbours TP·DP apart.
	TPFirst RankOrder = iota
	// PPFirst is the HammingMesh SST motifs': rank = pp + PP·(tp + TP·dp) — a pipeline is PP
	// consecutive ranks, tensor-parallel (and expert-parallel) groups PP apart
	// (reference/hammingmesh.md §6.4: "96 consecutive ranks", "4 ranks at stride 96").
	PPFirst
)

var rankOrderNames = []string{"tp-first", "pp-first"}

// Attention is the attention kernel.
type Attention int

const (
	// AttnStandard runs attention as separate kernels: the scores batched GEMM, the fused
	// scale-mask-softmax, dropout and the context batched GEMM, with the s² probabilities and
	// dropout mask in memory (Megatron-LM's CoreAttention / DotProductAttention).
	AttnStandard Attention = iota
	// AttnFlash runs causal attention in one FlashAttention kernel per pass (Dao 2023,
	// FlashAttention-2): no s² tensor in memory, the backward pass recomputes the scores from the
	// saved row log-sum-exp, at the GPU's measured FlashAttention efficiency (configs/gemm.json).
	AttnFlash
)

var attentionNames = []string{"standard", "flash"}

func (x Attention) String() string { return attentionNames[x] }

// MarshalText renders the name in JSON and YAML.
func (x Attention) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (x *Attention) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, attentionNames) }

// PPPartition is how a pipeline's stages share the transformer layers.
type PPPartition int

const (
	// PPUniform gives every stage L/PP layers, the input embedding joining the first stage and
	// the LM head the last (Megatron-LM: megatron/core/transformer/transformer_block.py
	// get_num_layers_to_build, num_layers / pipeline_model_parallel_size).
	PPUniform PPPartition = iota
	// PPEmbeddingSlot counts the input embedding and the LM head as one layer each and splits
	// the L + 2 slots evenly: the first stage holds the embedding and (L+2)/PP − 1 layers, the
	// last (L+2)/PP − 1 layers and the head, the others (L+2)/PP layers (DeepSpeed
	// PipelineModule partition_method "type:transformer|embedding", which BLOOM-176B trained with:
	// bigscience-workshop/bigscience train/tr11-176B-ml/README.md, "--pp-partition-method").
	// Interleaving is not offered (DeepSpeed's pipeline has one chunk per stage).
	PPEmbeddingSlot
)

var ppPartitionNames = []string{"uniform", "embedding-slot"}

func (x PPPartition) String() string { return ppPartitionNames[x] }

// MarshalText renders the name in JSON and YAML.
func (x PPPartition) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (x *PPPartition) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, ppPartitionNames) }

func (r RankOrder) String() string { return rankOrderNames[r] }

// MarshalText renders the order in JSON.
func (r RankOrder) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

func (t TPComm) String() string { return tpCommNames[t] }

// Config is an explicit Megatron-LM configuration: a GPT-style decoder (the RAMP paper's
// encoder-only stack has the same per-layer work) with d_ff = 4·hidden.
type Config struct {
	Layers, Hidden, Heads int
	// Arch is the layer's architecture beyond GPT-3's (grouped-query attention, SwiGLU,
	// RMSNorm, no biases, rotary positions); the zero value is GPT-3's.
	Arch
	Seq int
	// Vocab is the vocabulary size; 0 models the RAMP paper's equivalent model without an
	// embedding table or LM head ("random embedding vectors as input to the transformer block",
	// RAMP §7.3).
	Vocab       int
	GlobalBatch int // sequences per iteration
	MicroBatch  int // sequences per micro-batch
	TP, PP, DP  int
	// CP is the context-parallel degree (0 or 1: none): each of CP ranks holds 1/CP of every
	// sequence, and attention passes the keys and values around the CP group in a ring
	// (Megatron-Core context parallelism; Liu et al. 2023, Ring Attention).
	CP int
	// Interleave is the number of model chunks per pipeline stage (interleaved 1F1B,
	// Narayanan et al. 2021 §2.2); 1 is plain 1F1B.
	Interleave  int
	SeqParallel bool
	// TPComm is the tensor-parallel collective pattern (Megatron-LM by default).
	TPComm    TPComm
	Recompute Recompute
	Precision Precision
	Optimizer Optimizer
	// UntiedEmbeddings gives the LM head its own weights instead of sharing the input
	// embedding's (Megatron-LM ties them by default).
	UntiedEmbeddings bool
	// DPBucketBytes is the gradient bucket size; 0 uses Megatron-Core's default of
	// max(4e7, 1e6·DP) parameters (megatron/core/distributed/distributed_data_parallel_config.py).
	DPBucketBytes units.Bytes
	// Stack is what the training software overlaps and sends (the software presets of job).
	Stack
	// MoE, when MoE.Experts > 0, replaces every layer's MLP with a Mixture-of-Experts FF layer
	// under expert parallelism (partition/moe; tensor parallelism must then be 1).
	MoE moe.Spec
	// RankOrder maps ranks to (tp, dp, pp) coordinates (tp-first by default).
	RankOrder RankOrder
	// Capacity is the GPU memory the footprint is checked against.
	Capacity units.Bytes
}

// Stack is the behaviour of the training software that the layout leaves open: what overlaps
// with compute and what crosses the network. The zero value is ddlest's documented default
// (gradient buckets overlapped with the backward pass, everything else off).
type Stack struct {
	// NoDPOverlap issues the gradient reduction after the backward pass instead of overlapping
	// the buckets with it (Megatron-LM before Megatron-Core's overlap_grad_reduce, DeepSpeed's
	// pipeline engine; the RAMP paper's reading, §7.2.1). With DistOptimizer it also keeps the
	// parameter all-gather out of the next forward pass.
	NoDPOverlap bool
	// AsyncTP runs the backward tensor-parallel collective of each column-parallel linear (the
	// all-reduce of its input gradient, or its reduce-scatter under sequence parallelism)
	// asynchronously with that linear's weight-gradient GEMM (Megatron-LM's
	// LinearWithGradAccumulationAndAsyncCommunication).
	AsyncTP bool
	// PPScatterGather sends 1/TP of the activation per tensor-parallel rank between pipeline
	// stages and all-gathers it over the tensor-parallel group on arrival, when TP > 1 without
	// sequence parallelism (Narayanan et al. SC'21 §4.1; Megatron-LM megatron/p2p_communication.py
	// scatter_gather_tensors_in_pipeline). Off: every rank sends the whole activation.
	PPScatterGather bool
	// P2POverlap overlaps the pipeline sends and receives of the interleaved schedule with
	// compute (Megatron-Core overlap_p2p_comm, megatron/core/pipeline_parallel/schedules.py); only
	// the fill and drain hops stay exposed. Without interleaving it has no effect (Megatron-LM's
	// non-interleaved schedule refuses it).
	P2POverlap bool
	// DistOptimizer shards the optimizer state over the data-parallel group: gradients are
	// reduce-scattered, each rank updates its 1/DP shard and the updated parameters are
	// all-gathered (Megatron-LM docs/source/api-guide/dist_optimizer.md; ZeRO stage 1,
	// Rajbhandari et al. 2020 §5.1).
	DistOptimizer bool
	// FP32GradReduce accumulates and reduces the gradients of bf16 training in fp32 (4 bytes per
	// parameter in the gradient buffer and on the wire): Megatron-LM sets
	// accumulate_allreduce_grads_in_fp32 for bf16 unless --grad-reduce-in-bf16
	// (megatron/training/arguments.py, "accumulate and all-reduce gradients in fp32 for bfloat16
	// data type"); DeepSpeed's BF16_Optimizer all-reduces its fp32 gradients
	// (deepspeed/runtime/pipe/engine.py _bf16_reduce_grads, optimizer.get_grads_for_reduction).
	// No effect in fp16 or fp32 training.
	FP32GradReduce bool
	// GradAllReduce, with DistOptimizer, all-reduces the gradients (every rank receives all of
	// them, then updates its shard) instead of reduce-scattering them: DeepSpeed's BF16_Optimizer,
	// its own ZeRO-1 under zero stage 0 (deepspeed/runtime/pipe/engine.py _bf16_reduce_grads:
	// buffered_allreduce_fallback; bf16_optimizer.py step: update the partition, then
	// all_gather_dp_groups of the bf16 parameters).
	GradAllReduce bool
	// ZeRO is the data-parallel sharding stage (Rajbhandari et al. 2020, ZeRO §5.2): 0 none,
	// 1 the optimizer state (as DistOptimizer), 2 also the gradients, 3 also the parameters
	// (PyTorch FSDP's FULL_SHARD). From stage 2 every micro-batch's backward pass reduce-scatters
	// each layer's gradients behind its weight-gradient GEMMs (DeepSpeed stage 2 and 3 keep only
	// the gradient shard); stage 3 all-gathers each layer's parameters before its forward, its
	// recomputation and its backward pass, prefetched behind the layer's largest GEMM, and keeps
	// two layers gathered at a time [AMB: DeepSpeed's prefetch bucket, FSDP's limit_all_gathers].
	// Stages 2 and 3 need PP = 1 (DeepSpeed deepspeed/runtime/pipe/engine.py PipelineEngine:
	// "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism").
	ZeRO int
	// PPPartition is how the pipeline stages share the layers (uniform by default).
	PPPartition PPPartition
	// PPFirstLayers and PPLastLayers, when > 0, give the first and the last pipeline stage that
	// many layers and split the others evenly over the remaining stages (Megatron-Core
	// num_layers_in_first_pipeline_stage / num_layers_in_last_pipeline_stage,
	// megatron/core/transformer/transformer_config.py @002526d8, flags
	// --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers; "None implies
	// equal layer division across PP ranks"). Llama 3 405B trained its 126 layers on 16 stages
	// with one layer fewer on the first and the last (Dubey et al. 2024 §3.3.2): 7, 8 × 14, 7.
	PPFirstLayers, PPLastLayers int
	// TPCommOverlap pipelines the sequence-parallel all-gathers and reduce-scatters with the
	// GEMMs they feed or drain (Megatron-Core tp_comm_overlap, Transformer Engine userbuffers;
	// layer.go overlappedSP). It needs sequence parallelism.
	TPCommOverlap bool
	// OffloadLayers moves the saved activations of the first OffloadLayers transformer layers to
	// host memory after their forward pass and back before their backward pass, on one copy
	// stream beside compute (Transformer Engine transformer_engine/pytorch/cpu_offload.py
	// @00382b96 OffloadSynchronizer, under Megatron-Core --cpu-offloading
	// --cpu-offloading-num-layers): the activations kept per micro-batch lose those layers', and
	// the copies cost what the GPU's host link cannot hide (the estimator's doc.go). Megatron-Core
	// allows fewer layers than the model has, with PP = 1 and no recomputation
	// (megatron/core/transformer/transformer_config.py: "CPU offloading can be done only for
	// layers less than num_layers", "no support for Pipeline parallelism with CPU offloading",
	// "CPU offloading does not work when activation recomputation is enabled"). 0: none.
	OffloadLayers int
	// GradAccum is how each micro-batch's weight gradients join the kept gradients: inside the
	// weight-gradient GEMM (default), or in a pass of their own after every micro-batch's
	// backward (partition.GradAccumOp).
	GradAccum GradAccum
	// OptimizerStep is the implementation of the optimizer step, which sets the bytes it moves
	// around the update rule (partition.OptimizerOps).
	OptimizerStep StepImpl
	// Attention is the attention kernel (standard by default).
	Attention Attention
}

// sharded reports whether the optimizer state is sharded over the data-parallel ranks (the
// distributed optimizer, ZeRO-1 and above).
func (c *Config) sharded() bool { return c.DistOptimizer || c.ZeRO >= 1 }

// GradDType is the dtype gradients are accumulated and reduced in.
func (c Config) GradDType() dtype.DType {
	if c.FP32GradReduce && c.Precision.DType() == dtype.BF16 { // bf16, or fp8's bf16 gradients
		return dtype.FP32
	}
	return c.Precision.DType()
}

// StageLayers is the number of transformer layers on pipeline stage i (all chunks).
func (c Config) StageLayers(i int) int {
	if c.unevenEnds() {
		switch {
		case i == 0 && c.PPFirstLayers > 0:
			return c.PPFirstLayers
		case i == c.PP-1 && c.PPLastLayers > 0:
			return c.PPLastLayers
		}
		rest, stages := c.middle(c.PP)
		return rest / stages
	}
	if c.PPPartition == PPEmbeddingSlot && c.PP > 1 {
		slots := (c.Layers + 2) / c.PP
		if i == 0 || i == c.PP-1 {
			return slots - 1
		}
		return slots
	}
	return c.Layers / c.PP
}

// unevenEnds reports whether the first or the last stage has its own layer count.
// offloaded is the number of stage i's layers whose activations go to host memory
// (OffloadLayers, which needs PP = 1).
func (c Config) offloaded(i int) int {
	if c.PP != 1 || i != 0 {
		return 0
	}
	return c.OffloadLayers
}

func (c Config) unevenEnds() bool { return c.PP > 1 && (c.PPFirstLayers > 0 || c.PPLastLayers > 0) }

// middle is the layers and stages left to the even split of pp stages once the first and the
// last stage have their own counts.
func (c Config) middle(pp int) (layers, stages int) {
	layers, stages = c.Layers, pp
	if c.PPFirstLayers > 0 {
		layers, stages = layers-c.PPFirstLayers, stages-1
	}
	if c.PPLastLayers > 0 {
		layers, stages = layers-c.PPLastLayers, stages-1
	}
	return layers, stages
}

// splits reports whether pp stages of v chunks each can share the layers under the partition.
func (c Config) splits(pp, v int) bool {
	if pp > 1 && (c.PPFirstLayers > 0 || c.PPLastLayers > 0) {
		rest, stages := c.middle(pp)
		if stages == 0 {
			return v == 1 && rest == 0
		}
		return v == 1 && stages > 0 && rest > 0 && rest%stages == 0
	}
	if c.PPPartition == PPEmbeddingSlot && pp > 1 {
		return v == 1 && (c.Layers+2)%pp == 0 && (c.Layers+2)/pp >= 2
	}
	return c.Layers%(pp*v) == 0
}

// GPUs is the job size TP·CP·PP·DP.
func (c Config) GPUs() int { return c.TP * c.CPs() * c.PP * c.DP }

// CPs is the context-parallel degree (1 without context parallelism).
func (c Config) CPs() int { return max(1, c.CP) }

// Strides are the rank distances between neighbours along the tensor, data and pipeline
// dimensions under the rank order (Megatron-Core's tp-cp-dp-pp: context-parallel neighbours
// are TP apart, data-parallel ones TP·CP).
func (c Config) Strides() (tp, dp, pp int) {
	if c.RankOrder == PPFirst {
		return c.PP, c.PP * c.TP * c.CPs(), 1
	}
	return 1, c.TP * c.CPs(), c.TP * c.CPs() * c.DP
}

// CPStride is the rank distance between context-parallel neighbours.
func (c Config) CPStride() int {
	tp, _, _ := c.Strides()
	return tp * c.TP
}

// weightGroup is the ranks that hold the same weights and reduce their gradients together: the
// data-parallel group, and with context parallelism the data × context-parallel ranks
// (Megatron-Core's dp-cp group), consecutive in the rank order (context-parallel neighbours
// inner).
func (c *Config) weightGroup() network.Group {
	if c.CPs() > 1 {
		return network.Group{Size: c.DP * c.CPs(), Stride: c.CPStride()}
	}
	_, dp, _ := c.Strides()
	return network.Group{Size: c.DP, Stride: dp}
}

// MicroBatches is the number of micro-batches per iteration per pipeline.
func (c Config) MicroBatches() int { return c.GlobalBatch / (c.DP * c.MicroBatch) }

// Validate reports every problem at once, naming the flag and what would be valid.
func (c Config) Validate() error {
	var p params.Problems
	pos := func(name string, v int) bool {
		if v < 1 {
			p.Addf("--%s %d must be ≥ 1", name, v)
			return false
		}
		return true
	}
	okL := pos("layers", c.Layers)
	okH := pos("hidden", c.Hidden)
	okA := pos("heads", c.Heads)
	okS := pos("seq", c.Seq)
	if c.Vocab < 0 {
		p.Addf("--vocab %d must be ≥ 0 (0: no embedding or LM head)", c.Vocab)
	}
	okB := pos("global-batch", c.GlobalBatch)
	okM := pos("micro-batch", c.MicroBatch)
	okT := pos("tp", c.TP)
	okP := pos("pp", c.PP)
	okD := pos("dp", c.DP)
	okV := pos("interleave", c.Interleave)
	if okH && okA && c.HeadDim == 0 && c.Hidden%c.Heads != 0 {
		p.Addf("--heads %d does not divide --hidden %d; valid: %s", c.Heads, c.Hidden, divisorList(c.Hidden))
	}
	if okA && okT && c.Heads%c.TP != 0 {
		p.Addf("--tp %d does not divide the %d heads; valid: %s", c.TP, c.Heads, divisorList(c.Heads))
	}
	c.Arch.validate(&p, c.Hidden, c.Heads, c.TP, okA, okT)
	if c.SeqParallel && c.TPComm == TPCommRAMP {
		p.Addf("--tp-comm ramp (the RAMP paper's two all-reduces per layer) cannot be combined with --seq-parallel")
	}
	okC := true
	switch cp := c.CPs(); {
	case c.CP < 0:
		p.Addf("--cp %d must be ≥ 1 (or 0: none)", c.CP)
		okC = false
	case okS && cp > 1 && c.Seq%(2*cp) != 0:
		p.Addf("--cp %d needs --seq %d to split into 2 × %d = %d equal chunks (causal load balancing: rank i takes chunks i and %d − i)", cp, c.Seq, cp, 2*cp, 2*cp-1)
		okC = false
	case cp > 1 && c.MoE.Experts > 0:
		p.Addf("--cp %d: context parallelism is modelled for dense layers; MoE layers use --cp 1 here", cp)
	case cp > 1 && c.KVRank > 0:
		p.Addf("--cp %d: context parallelism is modelled for grouped-query attention; multi-head latent attention uses --cp 1 here", cp)
	}
	if c.KVRank > 0 && c.Precision == partition.MixedFP8 {
		p.Addf("--precision fp8 is modelled for grouped-query attention layers; multi-head latent attention trains in fp16 or bf16 here")
	}
	switch {
	case !okT || !okS || !okC || !c.SeqParallel || (c.Seq/c.CPs())%c.TP == 0:
	case c.CPs() == 1:
		p.Addf("--seq-parallel needs --tp %d to divide --seq %d", c.TP, c.Seq)
	default:
		p.Addf("--seq-parallel needs --tp %d to divide the %d tokens per context-parallel rank (--seq %d / --cp %d)", c.TP, c.Seq/c.CPs(), c.Seq, c.CPs())
	}
	if okL && okP && okV {
		uneven := c.PPFirstLayers != 0 || c.PPLastLayers != 0
		switch {
		case c.PPFirstLayers < 0 || c.PPLastLayers < 0:
			p.Addf("--pp-first-layers %d and --pp-last-layers %d must be ≥ 0 (0: an even split)", c.PPFirstLayers, c.PPLastLayers)
		case uneven && c.PP == 1:
			p.Addf("--pp-first-layers and --pp-last-layers need --pp > 1")
		case uneven && c.PPPartition == PPEmbeddingSlot:
			p.Addf("--pp-first-layers and --pp-last-layers replace --pp-partition embedding-slot: give one or the other")
		case uneven && c.Interleave > 1:
			p.Addf("--pp-first-layers and --pp-last-layers are modelled with one model chunk per stage; use --interleave 1")
		case uneven && !c.splits(c.PP, 1):
			rest, stages := c.middle(c.PP)
			p.Addf("--pp-first-layers %d and --pp-last-layers %d leave %d of the %d layers to %d stages: not an even split of at least one each", c.PPFirstLayers, c.PPLastLayers, rest, c.Layers, stages)
		case uneven:
		case c.Interleave > 1 && c.PP == 1:
			p.Addf("--interleave %d needs --pp > 1", c.Interleave)
		case c.PPPartition == PPEmbeddingSlot && c.PP > 1 && c.Interleave > 1:
			p.Addf("--pp-partition embedding-slot has one model chunk per stage (DeepSpeed's pipeline); use --interleave 1")
		case c.PPPartition == PPEmbeddingSlot && c.PP > 1 && c.Vocab == 0:
			p.Addf("--pp-partition embedding-slot needs an embedding (--vocab > 0)")
		case c.PPPartition == PPEmbeddingSlot && !c.splits(c.PP, 1):
			p.Addf("--pp %d does not divide the %d layers + embedding + head = %d slots into stages of ≥ 2 (--pp-partition embedding-slot)", c.PP, c.Layers, c.Layers+2)
		case !c.splits(c.PP, c.Interleave):
			p.Addf("--pp %d × --interleave %d = %d does not divide the %d layers", c.PP, c.Interleave, c.PP*c.Interleave, c.Layers)
		}
	}
	if okB && okM && okD && c.GlobalBatch%(c.DP*c.MicroBatch) != 0 {
		p.Addf("--global-batch %d is not a multiple of --dp %d × --micro-batch %d = %d", c.GlobalBatch, c.DP, c.MicroBatch, c.DP*c.MicroBatch)
	}
	if c.MoE.Experts > 0 {
		switch {
		case c.MLP == MLPSquaredReLU: // moe.Spec's experts are GeLU or SwiGLU FFNs
			p.Addf("--mlp %s with MoE layers is not modelled; experts take --mlp gelu or swiglu", c.MLP)
		case c.TP > 1 && !c.SeqParallel:
			// Megatron-LM megatron/training/arguments.py: "When using MoE and tensor
			// parallelism, sequence parallelism must be used."
			p.Addf("--tp %d with MoE layers needs --seq-parallel (Megatron-Core: MoE with tensor parallelism uses sequence parallelism)", c.TP)
		case c.TP > 1 && c.TPComm == TPCommRAMP:
			p.Addf("--tp-comm ramp prices a dense layer's all-reduces; MoE layers with --tp %d use --tp-comm megatron", c.TP)
		case c.TP > 1 && (c.MoE.ExpertHidden%c.TP != 0 || c.MoE.SharedHidden%c.TP != 0):
			p.Addf("--tp %d must divide --expert-hidden %d and --shared-hidden %d (each expert is split over the tensor-parallel ranks)", c.TP, c.MoE.ExpertHidden, c.MoE.SharedHidden)
		}
		if okD {
			p.Check(c.MoE.Validate(c.DP))
		}
		if okL && c.MoE.DenseLayers >= c.Layers {
			p.Addf("--dense-layers %d must be below the %d layers (the rest are MoE layers)", c.MoE.DenseLayers, c.Layers)
		}
	} else if c.MoE.SharedHidden > 0 || c.MoE.DenseLayers > 0 {
		p.Addf("--shared-hidden %d and --dense-layers %d shape MoE layers: they need --experts", c.MoE.SharedHidden, c.MoE.DenseLayers)
	}
	switch {
	case c.ZeRO < 0 || c.ZeRO > 3:
		p.Addf("--zero %d is not a ZeRO stage; valid: 0, 1, 2, 3", c.ZeRO)
	case c.ZeRO >= 2 && okP && c.PP > 1:
		p.Addf("--zero %d shards the gradients a pipeline's micro-batches accumulate: it needs --pp 1 (DeepSpeed: ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism)", c.ZeRO)
	case c.ZeRO >= 2 && c.GradAllReduce:
		p.Addf("--zero %d reduce-scatters the gradients: it cannot be combined with --grad-allreduce", c.ZeRO)
	case c.ZeRO >= 2 && c.MoE.Experts > 0:
		p.Addf("--zero %d is modelled for dense layers; MoE layers use --zero 0 or 1 here", c.ZeRO)
	}
	switch k := c.OffloadLayers; {
	case k == 0:
	case k < 0 || (okL && k >= c.Layers):
		p.Addf("--offload-layers %d: offload 0 (none) to %d layers (fewer than the %d layers; Megatron-Core: CPU offloading can be done only for layers less than num_layers)", k, max(0, c.Layers-1), c.Layers)
	case okP && c.PP > 1:
		p.Addf("--offload-layers %d needs --pp 1 (Megatron-Core: no support for pipeline parallelism with CPU offloading)", k)
	case c.Recompute != RecomputeNone:
		p.Addf("--offload-layers %d needs --recompute none (Megatron-Core: CPU offloading does not work when activation recomputation is enabled)", k)
	}
	if c.TPCommOverlap && !c.SeqParallel {
		p.Addf("--tp-comm-overlap overlaps the sequence-parallel all-gathers and reduce-scatters with their GEMMs: it needs --seq-parallel")
	}
	if c.OptimizerStep == partition.StepDeepSpeed && c.GradDType() != dtype.FP32 {
		p.Addf("--optimizer-step deepspeed is DeepSpeed's BF16_Optimizer: it needs --precision bf16 with --fp32-grad-reduce")
	}
	if c.GradAccum == partition.AccumCastAdd && c.GradDType() != dtype.FP32 {
		p.Addf("--grad-accum cast-add is DeepSpeed's BF16_Optimizer (bf16 gradients cast to fp32): it needs --precision bf16 with --fp32-grad-reduce")
	}
	if dt := c.Precision.DType(); c.Attention == AttnFlash && dt != dtype.FP16 && dt != dtype.BF16 {
		p.Addf("--attention flash runs in fp16 or bf16 (FlashAttention-2 and -3 kernels); --precision %v: use --precision fp16|bf16|fp8 or --attention standard", c.Precision)
	}
	if c.DPBucketBytes < 0 {
		p.Addf("--dp-bucket %v must be ≥ 0", c.DPBucketBytes)
	}
	if !(c.Capacity > 0) {
		p.Addf("GPU memory capacity %v must be > 0", c.Capacity)
	}
	return p.Err("megatron")
}

func divisorList(n int) string {
	var ds []string
	for d := 1; d <= n && len(ds) < 16; d++ {
		if n%d == 0 {
			ds = append(ds, fmt.Sprint(d))
		}
	}
	if len(ds) == 16 {
		ds = append(ds, "…")
	}
	return strings.Join(ds, ", ")
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// UnmarshalText reads the name (config files, --set).
func (x *Recompute) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, recomputeNames) }

// UnmarshalText reads the name (config files, --set).
func (x *RankOrder) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, rankOrderNames) }

// MarshalText renders the name in JSON and YAML.
func (x TPComm) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (x *TPComm) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, tpCommNames) }
