package partition

import (
	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
)

// Per-element operation counts of the non-GEMM kernels [X]: counted from their formulas (a
// LayerNorm computes mean, variance, normalisation and the affine map; GeLU's tanh
// approximation about 8 operations). They only matter where a kernel is compute-bound, which
// these memory-bound kernels never are on the GPUs in the table; the Megatron-LM FLOP convention
// (Narayanan et al. 2021) leaves them out of model FLOPs altogether.
const (
	FlopNorm     = 8
	FlopSoftmax  = 5
	FlopGeLU     = 8
	FlopDropout  = 2
	FlopResidual = 4 // bias + dropout + add, fused
	// FlopSwiGLU per input element of SwiGLU (the gate and up halves): Swish(g)·u = g·σ(g)·u,
	// about 6 operations per output (σ's exponential, add and division, two products), 3 per input.
	FlopSwiGLU = 3
	// FlopRoPE per element of the queries and keys: x·cos θ + rot(x)·sin θ, 3 operations.
	FlopRoPE = 3
	// FlopSquaredReLU per element of relu(x)²: the max and the square; its backward
	// 2·relu(x)·dy, a select and two products (FlopSquaredReLUBwd).
	FlopSquaredReLU    = 2
	FlopSquaredReLUBwd = 3
	// FlopCast per element of an FP8 cast: its share of the amax reduction and the scaling.
	FlopCast  = 2
	MaskBytes = 1 // dropout masks are bytes (Korthikanti et al. 2022 §4.1)
)

// Graph builds ops and allocates their shapes from shared slabs: a block has dozens of ops, each
// with several shapes, and building plans is on the estimator's hot path.
type Graph struct {
	dims                 []int
	shapes               []tensor.Shape
	slabDims, slabShapes int
}

// NewGraph returns a graph whose first slabs hold dims integers and shapes shapes; size them to
// the plan so that they need not regrow.
func NewGraph(dims, shapes int) *Graph {
	return &Graph{dims: make([]int, 0, dims), shapes: make([]tensor.Shape, 0, shapes), slabDims: dims, slabShapes: shapes}
}

// shape returns a tensor.Shape backed by the slab (capacity-capped so appends cannot alias).
func (gr *Graph) Shape(dims ...int) tensor.Shape {
	if len(gr.dims)+len(dims) > cap(gr.dims) {
		gr.dims = make([]int, 0, max(gr.slabDims, len(dims)))
	}
	n := len(gr.dims)
	gr.dims = append(gr.dims, dims...)
	return tensor.Shape(gr.dims[n:len(gr.dims):len(gr.dims)])
}

func (gr *Graph) Inputs(shapes ...tensor.Shape) []tensor.Shape {
	if len(gr.shapes)+len(shapes) > cap(gr.shapes) {
		gr.shapes = make([]tensor.Shape, 0, max(gr.slabShapes, len(shapes)))
	}
	n := len(gr.shapes)
	gr.shapes = append(gr.shapes, shapes...)
	return gr.shapes[n:len(gr.shapes):len(gr.shapes)]
}

// Elems is the number of elements of a shape.
func Elems(s tensor.Shape) float64 {
	n := 1.0
	for _, d := range s {
		n *= float64(d)
	}
	return n
}

// MatMul is Y[M,N] = X[M,K] · W[K,N]: 2·M·K·N FLOP, reads X and W, writes Y.
func (gr *Graph) MatMul(name string, ph Phase, x, w tensor.Shape, dt dtype.DType) Op {
	m, k, n := x[0], x[1], w[1]
	y := gr.Shape(m, n)
	sz := float64(dt.Size())
	return Op{
		Name: name, Kind: MatMul, Phase: ph, DType: dt,
		Inputs: gr.Inputs(x, w), Output: y,
		FLOP:    units.FLOP(2 * float64(m) * float64(k) * float64(n)),
		Read:    units.Bytes((Elems(x) + Elems(w)) * sz),
		Written: units.Bytes(Elems(y) * sz),
	}
}

// BMM is C[B,M,N] = A[B,M,K] · B[B,K,N]: 2·B·M·K·N FLOP.
func (gr *Graph) BMM(name string, ph Phase, a, b tensor.Shape, dt dtype.DType) Op {
	bt, m, k, n := a[0], a[1], a[2], b[2]
	c := gr.Shape(bt, m, n)
	sz := float64(dt.Size())
	return Op{
		Name: name, Kind: BatchedMatMul, Phase: ph, DType: dt,
		Inputs: gr.Inputs(a, b), Output: c,
		FLOP:    units.FLOP(2 * float64(bt) * float64(m) * float64(k) * float64(n)),
		Read:    units.Bytes((Elems(a) + Elems(b)) * sz),
		Written: units.Bytes(Elems(c) * sz),
	}
}

// FlashLSE is the fp32 row log-sum-exp a FlashAttention forward pass keeps for its backward, one
// value per query row: rows = micro-batch × heads × sequence (FlashAttention-2 Algorithm 1, L).
func FlashLSE(rows float64) units.Bytes { return units.Bytes(rows * float64(dtype.FP32.Size())) }

// FlashAttention is the forward kernel of causal attention fused FlashAttention-style over
// q = [B, s, d] (B = micro-batch × query heads on this GPU, d the query/key head width) against
// keys keys and values (s, or the whole sequence of a context-parallel rank's ring) of kvB =
// micro-batch × key/value heads (B without grouped-query attention), values dv wide per head (d
// but with multi-head latent attention): it reads Q, K and V and writes the output O and the
// fp32 row log-sum-exp L (B·s values) that the backward pass recomputes the scores from (Dao
// 2023, FlashAttention-2 Algorithm 1). FLOP: the unfused convention, 2·B·s·keys·d for the
// scores and 2·B·s·keys·dv for the context (FusedAttention).
func (gr *Graph) FlashAttention(name string, ph Phase, q tensor.Shape, keys, kvB, dv int, dt dtype.DType) Op {
	bt, s, d := float64(q[0]), float64(q[1]), float64(q[2])
	k, v, o, sz := float64(kvB)*float64(keys)*d, float64(kvB)*float64(keys)*float64(dv), bt*s*float64(dv), float64(dt.Size())
	return Op{
		Name: name, Kind: FusedAttention, Phase: ph, DType: dt,
		Inputs: gr.Inputs(q, q, q), Output: q,
		FLOP:    units.FLOP(2 * bt * s * float64(keys) * (d + float64(dv))),
		Read:    units.Bytes((Elems(q) + k + v) * sz),
		Written: units.Bytes(o*sz) + FlashLSE(bt*s),
	}
}

// FlashAttentionBackward is its backward kernel: it reads Q, K, V, O, dO and L and writes dQ,
// dK and dV (FlashAttention-2 Algorithm 2). FLOP: the unfused convention, twice the forward.
func (gr *Graph) FlashAttentionBackward(name string, q tensor.Shape, keys, kvB, dv int, dt dtype.DType) Op {
	op := gr.FlashAttention(name, Backward, q, keys, kvB, dv, dt)
	n, sz := Elems(q), float64(dt.Size())
	k, v, o := float64(kvB)*float64(keys)*float64(q[2]), float64(kvB)*float64(keys)*float64(dv), float64(q[0])*float64(q[1])*float64(dv)
	op.FLOP *= 2
	op.Read = units.Bytes((n+k+v+2*o)*sz) + FlashLSE(float64(q[0])*float64(q[1]))
	op.Written = units.Bytes((n + k + v) * sz)
	return op
}

// Pointwise is a memory-bound kernel over x: reads `reads` tensors of x's size (plus extra
// bytes), writes `writes` of them (plus extra), flopPerElem operations per element.
func (gr *Graph) Pointwise(name string, kind OpKind, ph Phase, x tensor.Shape, dt dtype.DType,
	flopPerElem float64, reads, writes float64, extraRead, extraWrite units.Bytes) Op {
	n := Elems(x)
	sz := float64(dt.Size())
	return Op{
		Name: name, Kind: kind, Phase: ph, DType: dt,
		Inputs: gr.Inputs(x), Output: x,
		FLOP:    units.FLOP(flopPerElem * n),
		Read:    units.Bytes(reads*n*sz) + extraRead,
		Written: units.Bytes(writes*n*sz) + extraWrite,
	}
}

// Activation is an MLP's elementwise activation over fc1's output.
type Activation int

const (
	// ActGeLU is GeLU (tanh approximation): GPT's.
	ActGeLU Activation = iota
	// ActSwiGLU is the gated Swish(gate) ⊙ up over fc1's two halves: Llama's.
	ActSwiGLU
	// ActSquaredReLU is relu(x)² (So et al. 2021, "Primer", §3; Nemotron-4 15B, arXiv
	// 2402.16819 §2), one elementwise kernel: Megatron-Core compiles squared_relu with its
	// jit_fuser (NVIDIA/Megatron-LM megatron/core/activations.py).
	ActSquaredReLU
)

// GatedActivation is the activation of a GeLU or (gated) SwiGLU MLP.
func GatedActivation(gated bool) Activation {
	if gated {
		return ActSwiGLU
	}
	return ActGeLU
}

// ActivationNames name an MLP's activation ops, forward and backward, per activation.
type ActivationNames struct {
	GeLU, GeLUBwd, SwiGLU, SwiGLUBwd, SquaredReLU, SquaredReLUBwd string
}

// MLPActivation is an MLP's activation act over fc1's output x. GeLU and squared ReLU read x
// and write their output, backward read x and the output gradient and write x's; SwiGLU reads
// the fused gate and up halves and writes Swish(gate) ⊙ up, half as wide, backward it reads
// both halves and the output gradient and writes both halves' gradients.
func (gr *Graph) MLPActivation(n *ActivationNames, act Activation, ph Phase, x tensor.Shape, dt dtype.DType) Op {
	fwd := ph == Forward
	switch {
	case act == ActSwiGLU && fwd:
		return gr.Pointwise(n.SwiGLU, Elementwise, ph, x, dt, FlopSwiGLU, 1, 0.5, 0, 0)
	case act == ActSwiGLU:
		return gr.Pointwise(n.SwiGLUBwd, Elementwise, ph, x, dt, 2*FlopSwiGLU, 1.5, 1, 0, 0)
	case act == ActSquaredReLU && fwd:
		return gr.Pointwise(n.SquaredReLU, Elementwise, ph, x, dt, FlopSquaredReLU, 1, 1, 0, 0)
	case act == ActSquaredReLU:
		return gr.Pointwise(n.SquaredReLUBwd, Elementwise, ph, x, dt, FlopSquaredReLUBwd, 2, 1, 0, 0)
	case fwd:
		return gr.Pointwise(n.GeLU, Elementwise, ph, x, dt, FlopGeLU, 1, 1, 0, 0)
	}
	return gr.Pointwise(n.GeLUBwd, Elementwise, ph, x, dt, FlopGeLU, 2, 1, 0, 0)
}

// LinearBackward returns the two GEMMs of Y = X·W's backward pass: dX = dY·Wᵀ and
// dW = Xᵀ·dY, each with the forward FLOP count.
func (gr *Graph) LinearBackward(dgradName, wgradName string, x, w tensor.Shape, dt dtype.DType) (dgrad, wgrad Op) {
	m, k, n := x[0], x[1], w[1]
	dy := gr.Shape(m, n)
	dgrad = gr.MatMul(dgradName, Backward, dy, gr.Shape(n, k), dt)
	wgrad = gr.MatMul(wgradName, Backward, gr.Shape(k, m), dy, dt)
	return dgrad, wgrad
}

// BMMBackward returns the two batched GEMMs of C = A·B's backward: dA = dC·Bᵀ, dB = Aᵀ·dC.
func (gr *Graph) BMMBackward(daName, dbName string, a, b tensor.Shape, dt dtype.DType) (da, db Op) {
	bt, m, k, n := a[0], a[1], a[2], b[2]
	dc := gr.Shape(bt, m, n)
	da = gr.BMM(daName, Backward, dc, gr.Shape(bt, n, k), dt)
	db = gr.BMM(dbName, Backward, gr.Shape(bt, k, m), dc, dt)
	return da, db
}

// AsPhase returns a copy of op for another phase (recomputation), without saved activations.
// The name stays: the phase tells the copies apart.
func AsPhase(op Op, ph Phase) Op {
	op.Phase = ph
	op.Saved = 0
	return op
}
