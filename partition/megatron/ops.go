package megatron

import (
	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
)

// Per-element operation counts of the non-GEMM kernels [X]: counted from their formulas (a
// LayerNorm computes mean, variance, normalisation and the affine map; GeLU's tanh
// approximation about 8 operations). They only matter where a kernel is compute-bound, which
// these memory-bound kernels never are on the GPUs in the table; the Megatron-LM FLOP convention
// (Narayanan et al. 2021) leaves them out of model FLOPs altogether.
const (
	flopNorm     = 8
	flopSoftmax  = 5
	flopGeLU     = 8
	flopDropout  = 2
	flopResidual = 4 // bias + dropout + add, fused
	maskBytes    = 1 // dropout masks are bytes (Korthikanti et al. 2022 §4.1)
)

// graph allocates the shapes of a plan's ops from shared slabs: a block has dozens of ops, each
// with several shapes, and building plans is on the estimator's hot path.
type graph struct {
	dims   []int
	shapes []tensor.Shape
}

// Slab sizes fit one plan (a layer, the embedding and the head) without regrowing.
const (
	slabDims   = 192
	slabShapes = 80
)

func newGraph() *graph {
	return &graph{dims: make([]int, 0, slabDims), shapes: make([]tensor.Shape, 0, slabShapes)}
}

// shape returns a tensor.Shape backed by the slab (capacity-capped so appends cannot alias).
func (gr *graph) shape(dims ...int) tensor.Shape {
	if len(gr.dims)+len(dims) > cap(gr.dims) {
		gr.dims = make([]int, 0, max(slabDims, len(dims)))
	}
	n := len(gr.dims)
	gr.dims = append(gr.dims, dims...)
	return tensor.Shape(gr.dims[n:len(gr.dims):len(gr.dims)])
}

func (gr *graph) inputs(shapes ...tensor.Shape) []tensor.Shape {
	if len(gr.shapes)+len(shapes) > cap(gr.shapes) {
		gr.shapes = make([]tensor.Shape, 0, max(slabShapes, len(shapes)))
	}
	n := len(gr.shapes)
	gr.shapes = append(gr.shapes, shapes...)
	return gr.shapes[n:len(gr.shapes):len(gr.shapes)]
}

func elems(s tensor.Shape) float64 {
	n := 1.0
	for _, d := range s {
		n *= float64(d)
	}
	return n
}

// matmul is Y[M,N] = X[M,K] · W[K,N]: 2·M·K·N FLOP, reads X and W, writes Y.
func (gr *graph) matmul(name string, ph partition.Phase, x, w tensor.Shape, dt dtype.DType) partition.Op {
	m, k, n := x[0], x[1], w[1]
	y := gr.shape(m, n)
	sz := float64(dt.Size())
	return partition.Op{
		Name: name, Kind: partition.MatMul, Phase: ph, DType: dt,
		Inputs: gr.inputs(x, w), Output: y,
		FLOP:    units.FLOP(2 * float64(m) * float64(k) * float64(n)),
		Read:    units.Bytes((elems(x) + elems(w)) * sz),
		Written: units.Bytes(elems(y) * sz),
	}
}

// bmm is C[B,M,N] = A[B,M,K] · B[B,K,N]: 2·B·M·K·N FLOP.
func (gr *graph) bmm(name string, ph partition.Phase, a, b tensor.Shape, dt dtype.DType) partition.Op {
	bt, m, k, n := a[0], a[1], a[2], b[2]
	c := gr.shape(bt, m, n)
	sz := float64(dt.Size())
	return partition.Op{
		Name: name, Kind: partition.BatchedMatMul, Phase: ph, DType: dt,
		Inputs: gr.inputs(a, b), Output: c,
		FLOP:    units.FLOP(2 * float64(bt) * float64(m) * float64(k) * float64(n)),
		Read:    units.Bytes((elems(a) + elems(b)) * sz),
		Written: units.Bytes(elems(c) * sz),
	}
}

// pointwise is a memory-bound kernel over x: reads `reads` tensors of x's size (plus extra
// bytes), writes `writes` of them (plus extra), flopPerElem operations per element.
func (gr *graph) pointwise(name string, kind partition.OpKind, ph partition.Phase, x tensor.Shape, dt dtype.DType,
	flopPerElem float64, reads, writes float64, extraRead, extraWrite units.Bytes) partition.Op {
	n := elems(x)
	sz := float64(dt.Size())
	return partition.Op{
		Name: name, Kind: kind, Phase: ph, DType: dt,
		Inputs: gr.inputs(x), Output: x,
		FLOP:    units.FLOP(flopPerElem * n),
		Read:    units.Bytes(reads*n*sz) + extraRead,
		Written: units.Bytes(writes*n*sz) + extraWrite,
	}
}

// linearBackward returns the two GEMMs of Y = X·W's backward pass: dX = dY·Wᵀ and
// dW = Xᵀ·dY, each with the forward FLOP count.
func (gr *graph) linearBackward(dgradName, wgradName string, x, w tensor.Shape, dt dtype.DType) (dgrad, wgrad partition.Op) {
	m, k, n := x[0], x[1], w[1]
	dy := gr.shape(m, n)
	dgrad = gr.matmul(dgradName, partition.Backward, dy, gr.shape(n, k), dt)
	wgrad = gr.matmul(wgradName, partition.Backward, gr.shape(k, m), dy, dt)
	return dgrad, wgrad
}

// bmmBackward returns the two batched GEMMs of C = A·B's backward: dA = dC·Bᵀ, dB = Aᵀ·dC.
func (gr *graph) bmmBackward(daName, dbName string, a, b tensor.Shape, dt dtype.DType) (da, db partition.Op) {
	bt, m, k, n := a[0], a[1], a[2], b[2]
	dc := gr.shape(bt, m, n)
	da = gr.bmm(daName, partition.Backward, dc, gr.shape(bt, n, k), dt)
	db = gr.bmm(dbName, partition.Backward, gr.shape(bt, k, m), dc, dt)
	return da, db
}

// asPhase returns a copy of op for another phase (recomputation), without saved activations.
// The name stays: the phase tells the copies apart.
func asPhase(op partition.Op, ph partition.Phase) partition.Op {
	op.Phase = ph
	op.Saved = 0
	return op
}
