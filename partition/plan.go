package partition

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Phase is when in an iteration an op or collective runs.
type Phase int

const (
	Forward Phase = iota
	Backward
	Recompute // forward work repeated before backward (activation recomputation)
	Update    // the optimizer step, once per iteration after the gradients are reduced
)

var phaseNames = []string{"fwd", "bwd", "recompute", "optimizer"}

func (p Phase) String() string { return phaseNames[p] }

// MarshalText renders the phase name in JSON.
func (p Phase) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// OpKind tells a compute profile which engine an op runs on.
type OpKind int

const (
	MatMul        OpKind = iota // dense GEMM on tensor cores
	BatchedMatMul               // batched GEMM (attention scores and context)
	Norm                        // LayerNorm / RMSNorm
	Softmax                     // fused scale + mask + softmax
	Elementwise                 // GeLU, dropout, bias, residual add
	Embedding                   // table lookup / scatter-add
	CrossEntropy                // vocabulary softmax + loss
	OptimizerStep               // parameter update
	Convolution                 // convolution as an implicit GEMM on tensor cores (cuDNN)
	// FusedAttention is causal attention in one kernel (FlashAttention: scores, mask, softmax,
	// dropout and context, no s² tensor in memory). Its FLOP is the Megatron-LM convention of the
	// unfused kernels (4·B·s²·d forward, twice that backward) so that model FLOPs and MFU do not
	// depend on the kernel; FlashWork is the share the kernel executes.
	FusedAttention
)

var kindNames = []string{"matmul", "bmm", "norm", "softmax", "elementwise", "embedding", "cross_entropy", "optimizer", "conv", "fused_attention"}

func (k OpKind) String() string { return kindNames[k] }

// MarshalText renders the kind name in JSON.
func (k OpKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// IsMatMul reports whether the op runs on the matrix engines (tensor cores) and counts towards
// model FLOPs in the Megatron-LM convention (Narayanan et al. 2021 §5.1 counts only GEMMs;
// convolutions are GEMMs in implicit form).
func (k OpKind) IsMatMul() bool {
	return k == MatMul || k == BatchedMatMul || k == Convolution || k == FusedAttention
}

// FlashWork is the share of a FusedAttention op's FLOP (the unfused convention) that the
// FlashAttention kernel executes in phase ph (Dao 2023, FlashAttention-2 §4.1, arXiv 2307.08691;
// the same counting in Shah et al. 2024, FlashAttention-3 §4.1): with a causal mask "only half
// of the entries are calculated", ½ forward; the backward pass runs 5 matmuls against the
// forward's 2 (it recomputes the scores), 2.5 × the executed forward = 2.5 · ½ / 2 = 5/8 of the
// convention's backward (twice the forward).
func FlashWork(ph Phase) float64 {
	if ph == Backward {
		return 2.5 * 0.5 / 2
	}
	return 0.5
}

// Op is one kernel of a per-GPU graph, executed once per repetition of its block per
// micro-batch (or once per iteration for Optimizer ops).
type Op struct {
	Name    string
	Kind    OpKind
	Phase   Phase
	Inputs  []tensor.Shape
	Output  tensor.Shape
	DType   dtype.DType
	FLOP    units.FLOP
	Read    units.Bytes // bytes read from device memory
	Written units.Bytes // bytes written to device memory
	// Saved is the activation memory this op keeps alive until its backward pass (forward ops
	// only; 0 when recomputation discards it).
	Saved units.Bytes
	// InLayer marks ops of the model's repeated layers (transformer layers), which a trace that
	// annotates layers calibrates apart from the rest (profile/trace).
	InLayer bool
	// Ring is, for a FusedAttention op under context parallelism, the ring's size c: the kernel
	// runs as Transformer Engine's c ring steps (AttnFuncWithCPAndKVP2P), one causal over the
	// rank's own chunk pair and c − 1 unmasked over half of it, each 1/c of the work (see
	// FlashRingStep). 0 or 1: one causal kernel.
	Ring int
}

// FlashRingStep is the query length an unmasked step of a context-parallel ring runs at, for
// a rank holding s tokens (two chunks of s/2, load-balanced): Transformer Engine's
// AttnFuncWithCPAndKVP2P (NVIDIA/TransformerEngine transformer_engine/pytorch/attention.py
// @001b7360) attends, at step i > 0, either all the rank's queries to the first half of the
// received keys (i ≤ rank) or the second half of its queries to all of them (i > rank); either
// way one side is s/2, which the kernel's tiles and waves see [D: the measured curves have
// equal query and key lengths; the shorter side is taken].
func FlashRingStep(s int) int { return max(1, s/2) }

// Dim is the parallel dimension a collective runs over.
type Dim int

const (
	DimDP Dim = iota // data parallel
	DimTP            // tensor (and sequence) parallel
	DimPP            // pipeline parallel
	DimEP            // expert parallel (Mixture-of-Experts all-to-all)
	DimMP            // model parallel embedding tables (DLRM all-to-all)
	DimSP            // spatial (operator) parallel: halo exchange, sharded dense layers
	DimCP            // context parallel: the keys and values passed around the ring
	// NumDims is the number of dimensions (for arrays indexed by Dim).
	NumDims
)

var dimNames = [NumDims]string{"dp", "tp", "pp", "ep", "mp", "sp", "cp"}

func (d Dim) String() string { return dimNames[d] }

var dimTitles = [NumDims]string{"data parallel", "tensor parallel", "pipeline", "expert parallel",
	"embedding model parallel", "spatial parallel", "context parallel"}

// Title names the dimension in prose ("expert parallel").
func (d Dim) Title() string { return dimTitles[d] }

// MarshalText renders the dimension name in JSON.
func (d Dim) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Overlap says what compute a collective may hide behind.
type Overlap int

const (
	// OnCriticalPath collectives block the compute stream.
	OnCriticalPath Overlap = iota
	// BehindOp collectives run concurrently with the op named in HideBehind (same block).
	// (Data-parallel gradients overlap the backward pass through GradSync.)
	BehindOp
)

var overlapNames = []string{"none", "op"}

func (o Overlap) String() string { return overlapNames[o] }

// Collective is a collective in a plan.
type Collective struct {
	Name string
	network.Collective
	Dim   Dim
	Phase Phase
	// Count is how many times it runs per block repetition per micro-batch (block
	// collectives) or per iteration (stage-level collectives).
	Count      int
	Overlap    Overlap
	HideBehind string // op name, for BehindOp
	// Driver, when set, moves the bytes instead of the network library's kernels (a block's
	// collectives: the estimator reads it there).
	Driver Driver
}

// Driver is what moves a collective's bytes on each GPU when it is not the network library
// (whose kernels hold network.Cost.SMs): a framework's own kernels on SMs streaming
// multiprocessors, or copy engines (SMs 0). Compute overlapped with the collective cannot use
// those SMs (estimator, doc.go).
type Driver struct {
	Set bool // false: the network library's kernels
	SMs int
}

// Block is a repeated unit of a stage's graph (a transformer layer, the embedding, the head).
type Block struct {
	Name        string
	Repeat      int
	Ops         []Op         // per repetition per micro-batch, in execution order
	Collectives []Collective // per repetition per micro-batch
	Params      float64      // parameters held per repetition on this GPU
	// Sync indexes the stage's Grads entry that reduces this block's gradients (0, the first,
	// by default; NoSync for parameters no other GPU holds, like a sharded embedding table).
	Sync int
	// Workspace is the activation memory alive, beyond the saved activations, while one
	// repetition is recomputed and back-propagated (per micro-batch).
	Workspace units.Bytes
}

// Layer reports whether the block is one of the model's repeated layers (its ops are InLayer).
func (b *Block) Layer() bool {
	return slices.ContainsFunc(b.Ops, func(op Op) bool { return op.InLayer })
}

// Saved is what one repetition of the block keeps for its backward pass per micro-batch (its
// ops' Saved).
func (b *Block) Saved() units.Bytes {
	var s units.Bytes
	for i := range b.Ops {
		s += b.Ops[i].Saved
	}
	return s
}

// NoSync marks a block whose gradients are not reduced across GPUs.
const NoSync = -1

// GradSync is a gradient reduction over the GPUs that replicate some of a stage's parameters
// (the blocks whose Sync points at it), once per iteration.
type GradSync struct {
	Name               string // e.g. "dp.grads"
	Dim                Dim
	network.Collective             // Op, Bytes = all of those gradients on one GPU, Group = the replicas
	BucketBytes        units.Bytes // gradients are reduced in buckets of this size (last one smaller)
	Overlap            bool        // buckets start during the last micro-batch's backward pass
	// Fusion is how gradients become buckets; FusionLatency is charged once per bucket (the
	// copy into and out of a fusion buffer; ODDL Table 2: 1 µs).
	Fusion        Fusion
	FusionLatency units.Seconds
}

// Fusion is how a gradient reduction packs gradients into buckets.
type Fusion int

const (
	// FuseChunks cuts the gradients into buckets of exactly BucketBytes as they are produced,
	// a tensor split across buckets where it crosses a boundary (ddlest's default bucketing).
	FuseChunks Fusion = iota
	// FuseTensors is Horovod's tensor fusion (Sergeev & Del Balso 2018; horovod/common/
	// controller.cc FuseResponses): whole tensors (a block repetition's gradients) queue as they
	// are produced; whenever the communication stream is free, the queued tensors are packed in
	// order into one buffer of at most BucketBytes (a larger tensor alone) and reduced.
	FuseTensors
)

var fusionNames = []string{"chunks", "horovod"}

func (f Fusion) String() string { return fusionNames[f] }

// MarshalText renders the name.
func (f Fusion) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText reads the name.
func (f *Fusion) UnmarshalText(b []byte) error { return enum.Unmarshal(f, b, fusionNames) }

// Bucket is the size of a full bucket: BucketBytes, or everything in one bucket when it is not
// set or not smaller.
func (g GradSync) Bucket() units.Bytes {
	if g.BucketBytes > 0 && g.BucketBytes < g.Bytes {
		return g.BucketBytes
	}
	return g.Bytes
}

// Buckets returns the number of full buckets (at least one when there are bytes) and the size
// of the remainder.
func (g GradSync) Buckets() (full int, rest units.Bytes) {
	if g.Bytes <= 0 {
		return 0, 0
	}
	if g.Bucket() == g.Bytes {
		return 1, 0
	}
	full = int(float64(g.Bytes) / float64(g.BucketBytes))
	rest = g.Bytes - units.Bytes(full)*g.BucketBytes
	if rest <= g.Bytes*1e-12 { // floating-point dust
		rest = 0
	}
	return full, rest
}

// Memory is a GPU's footprint.
type Memory struct {
	Weights     units.Bytes `json:"weights_bytes"`
	Grads       units.Bytes `json:"grads_bytes"`
	Optimizer   units.Bytes `json:"optimizer_bytes"`
	Activations units.Bytes `json:"activations_bytes"`
	Total       units.Bytes `json:"total_bytes"`
	Capacity    units.Bytes `json:"capacity_bytes"`
}

// String summarises the footprint on one line.
func (m Memory) String() string {
	return fmt.Sprintf("weights %v + grads %v + optimizer %v + activations %v = %v > capacity %v",
		m.Weights, m.Grads, m.Optimizer, m.Activations, m.Total, m.Capacity)
}

// Stage is one pipeline stage as one of its GPUs sees it (all tensor- and data-parallel ranks
// of a stage do the same work).
type Stage struct {
	Index  int
	Blocks []Block
	// PerIteration ops run once per iteration (the optimizer step).
	PerIteration []Op
	// PerIterationCollectives run once per iteration after the backward pass, on the critical
	// path (e.g. the tied-embedding gradient all-reduce between the first and last stage).
	PerIterationCollectives []Collective
	// Grads are the stage's gradient reductions; they share one communication stream.
	Grads []GradSync
	// ParamGathers are the all-gathers of the updated parameters after the optimizer step when
	// the optimizer state is sharded (distributed optimizer, ZeRO stage 1), bucketed as the
	// gradients; with Overlap each bucket is waited for only before its layers' forward pass
	// of the next iteration (Megatron-Core overlap_param_gather).
	ParamGathers []GradSync
	Params       float64 // parameters held by one GPU of this stage
	Memory       Memory
	// Offload is how many transformer layers have their saved activations moved to host memory
	// (activation offloading: Transformer Engine's CPU offload context, Megatron-Core
	// --cpu-offloading): the stage's first Offload layer repetitions (Block.Layer blocks, in
	// order), each copied out after its forward pass and back before its backward pass on one
	// copy stream beside compute (the estimator's doc.go has the schedule); 0: none.
	Offload int
}

// Layout is the parallel decomposition.
type Layout struct {
	GPUs         int  `json:"gpus"`
	DP           int  `json:"dp"`
	TP           int  `json:"tp"`
	CP           int  `json:"cp,omitempty"` // context parallel (1: none; 0: a workload without it)
	PP           int  `json:"pp"`
	Interleave   int  `json:"interleave"`
	SeqParallel  bool `json:"seq_parallel"`
	GlobalBatch  int  `json:"-"`
	MicroBatch   int  `json:"-"`
	MicroBatches int  `json:"-"` // per iteration, per pipeline (= global batch / (DP · micro batch))
}

// Plan is a workload partitioned onto GPUs: per-stage op graphs, collectives and memory.
type Plan struct {
	Workload string
	Layout   Layout
	Stages   []Stage
	// P2P is the activation (forward) / gradient (backward) message between adjacent pipeline
	// stages per micro-batch and model chunk; nil without pipelining.
	P2P *Collective
	// P2PGather, when set, follows every P2P receive: the all-gather over the tensor-parallel
	// group that rebuilds the activation each rank received 1/TP of (scatter/gather, Narayanan
	// et al. SC'21 §4.1).
	P2PGather *Collective
	// P2POverlap hides the steady-state sends and receives behind compute (interleaved schedule
	// with Megatron-Core overlap_p2p_comm): only the pipeline's fill and drain hops are exposed.
	P2POverlap bool
	// ModelFLOP is the work per iteration across all GPUs without recomputation, the numerator
	// of model FLOP utilisation.
	ModelFLOP units.FLOP
	// Params is the model's total parameter count.
	Params float64
}

// MaxMemory returns the footprint of the most loaded stage.
func (p *Plan) MaxMemory() Memory {
	var m Memory
	for _, s := range p.Stages {
		if s.Memory.Total > m.Total {
			m = s.Memory
		}
	}
	return m
}

// CheckMemory returns an infeasible error, with the footprint, when a stage does not fit.
// With several stages over capacity it names how many and the worst one, keeping the message
// to one line.
func (p *Plan) CheckMemory() error {
	bad, worst := 0, -1
	for i, s := range p.Stages {
		if s.Memory.Total > s.Memory.Capacity {
			bad++
			if worst < 0 || s.Memory.Total > p.Stages[worst].Memory.Total {
				worst = i
			}
		}
	}
	if bad == 0 {
		return nil
	}
	return MemoryError(p.Workload, len(p.Stages), bad, p.Stages[worst].Index, p.Stages[worst].Memory)
}

// MemoryError is the infeasibility of a plan of n stages of which bad exceed GPU memory, the
// worst being stage worst with footprint m (one message for every check). The message is
// formatted when read: a sweep rejects most of its points this way and may never print them.
func MemoryError(workload string, n, bad, worst int, m Memory) error {
	e := &memoryError{shortfall: memoryShortfall{workload: workload, n: n, bad: bad, worst: worst, m: m}}
	e.Err = &e.shortfall // one allocation
	return &e.InfeasibleError
}

type memoryError struct {
	errs.InfeasibleError
	shortfall memoryShortfall
}

type memoryShortfall struct {
	workload      string
	n, bad, worst int
	m             Memory
}

func (e *memoryShortfall) Error() string {
	head := fmt.Sprintf("the %s plan does not fit in GPU memory", e.workload)
	switch {
	case e.n == 1:
		return head + ": " + e.m.String()
	case e.bad == 1:
		return fmt.Sprintf("%s: stage %d: %v", head, e.worst, e.m)
	}
	return fmt.Sprintf("%s: %d of %d stages exceed it, the worst is stage %d: %v", head, e.bad, e.n, e.worst, e.m)
}

// DType is the dtype of the plan's GEMMs (the training dtype; 0 when there are none).
func (p *Plan) DType() dtype.DType {
	for _, st := range p.Stages {
		for _, b := range st.Blocks {
			for _, op := range b.Ops {
				if op.Kind.IsMatMul() {
					return op.DType
				}
			}
		}
	}
	return 0
}
