package megatron

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
)

// Functional checks with real tensors: the shards the plan describes, computed rank by rank and
// combined by the plan's collectives, equal the unsharded layer.

func randDense(r *rand.Rand, rows, cols int) *tensor.Dense {
	d := make([]float64, rows*cols)
	for i := range d {
		d[i] = r.Float64()*2 - 1
	}
	return tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(d))
}

func mm(t *testing.T, a, b tensor.Tensor) *tensor.Dense {
	t.Helper()
	c, err := tensor.MatMul(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*tensor.Dense)
}

// cols returns the contiguous column block [lo, hi) of a matrix; rows likewise.
func cols(t *testing.T, a *tensor.Dense, lo, hi int) *tensor.Dense {
	t.Helper()
	v, err := a.Slice(nil, tensor.S(lo, hi))
	if err != nil {
		t.Fatal(err)
	}
	return tensor.Materialize(v).(*tensor.Dense)
}

func rows(t *testing.T, a *tensor.Dense, lo, hi int) *tensor.Dense {
	t.Helper()
	v, err := a.Slice(tensor.S(lo, hi))
	if err != nil {
		t.Fatal(err)
	}
	return tensor.Materialize(v).(*tensor.Dense)
}

func add(t *testing.T, a, b *tensor.Dense) *tensor.Dense {
	t.Helper()
	c, err := tensor.Add(a, b)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*tensor.Dense)
}

// apply maps f over a copy of a.
func apply(a *tensor.Dense, f func(float64) float64) *tensor.Dense {
	src := a.Data().([]float64)
	out := make([]float64, len(src))
	for i, x := range src {
		out[i] = f(x)
	}
	return tensor.New(tensor.WithShape(a.Shape().Clone()...), tensor.WithBacking(out))
}

func gelu(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

// layerNorm normalises each row (no affine part: γ = 1, β = 0).
func layerNorm(a *tensor.Dense) *tensor.Dense {
	r, c := a.Shape()[0], a.Shape()[1]
	src := a.Data().([]float64)
	out := make([]float64, len(src))
	for i := 0; i < r; i++ {
		row := src[i*c : (i+1)*c]
		var mean, v float64
		for _, x := range row {
			mean += x
		}
		mean /= float64(c)
		for _, x := range row {
			v += (x - mean) * (x - mean)
		}
		sd := math.Sqrt(v/float64(c) + 1e-5)
		for j, x := range row {
			out[i*c+j] = (x - mean) / sd
		}
	}
	return tensor.New(tensor.WithShape(r, c), tensor.WithBacking(out))
}

// attention computes softmax(Q Kᵀ/√d) V for one head on [s, d] matrices (one sequence).
func attention(t *testing.T, q, k, v *tensor.Dense) *tensor.Dense {
	kt := k.Clone().(*tensor.Dense)
	if err := kt.T(); err != nil {
		t.Fatal(err)
	}
	s := mm(t, q, tensor.Materialize(kt))
	n, d := s.Shape()[0], q.Shape()[1]
	data := s.Data().([]float64)
	for i := 0; i < n; i++ {
		row := data[i*n : (i+1)*n]
		mx := math.Inf(-1)
		for _, x := range row {
			mx = math.Max(mx, x/math.Sqrt(float64(d)))
		}
		var sum float64
		for j, x := range row {
			row[j] = math.Exp(x/math.Sqrt(float64(d)) - mx)
			sum += row[j]
		}
		for j := range row {
			row[j] /= sum
		}
	}
	return mm(t, s, v)
}

func concat(t *testing.T, axis int, parts ...*tensor.Dense) *tensor.Dense {
	t.Helper()
	if len(parts) == 1 {
		return parts[0]
	}
	rest := make([]tensor.Tensor, len(parts)-1)
	for i, p := range parts[1:] {
		rest[i] = p
	}
	c, err := tensor.Concat(axis, parts[0], rest...)
	if err != nil {
		t.Fatal(err)
	}
	return c.(*tensor.Dense)
}

func concatCols(t *testing.T, parts ...*tensor.Dense) *tensor.Dense { return concat(t, 1, parts...) }

func concatRows(t *testing.T, parts ...*tensor.Dense) *tensor.Dense { return concat(t, 0, parts...) }

func assertClose(t *testing.T, what string, got, want *tensor.Dense) {
	t.Helper()
	if !got.Shape().Eq(want.Shape()) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), want.Shape())
	}
	g, w := got.Data().([]float64), want.Data().([]float64)
	for i := range w {
		if math.Abs(g[i]-w[i]) > 1e-9*(1+math.Abs(w[i])) {
			t.Fatalf("%s: element %d = %g, want %g", what, i, g[i], w[i])
		}
	}
}

func opShapes(t *testing.T, b partition.Block, name string) partition.Op {
	t.Helper()
	for _, op := range b.Ops {
		if op.Name == name {
			return op
		}
	}
	t.Fatalf("no op %q", name)
	return partition.Op{}
}

// tinyConfig: one sequence of 4 tokens, hidden 8, 2 heads of 4, tensor parallelism tp.
func tinyConfig(tp int, sp bool) Config {
	return Config{Layers: 1, Hidden: 8, Heads: 2, Seq: 4, GlobalBatch: 1, MicroBatch: 1, TP: tp, PP: 1, DP: 1,
		Interleave: 1, SeqParallel: sp, Precision: FP32, Capacity: units.GB}
}

// The MLP (Shoeybi et al. 2019 Fig. 3a): A split by columns, B by rows; each rank computes
// GeLU(X·A_i)·B_i and the forward all-reduce sums the partial outputs.
// The attention block (Fig. 3b): QKV split by heads (columns), the output projection by rows.
func TestTensorParallelLayerEqualsUnsharded(t *testing.T) {
	const tp = 2
	plan, err := Build(tinyConfig(tp, false))
	if err != nil {
		t.Fatal(err)
	}
	l := layerOf(plan)
	h, s, heads := 8, 4, 2
	dh := h / heads
	r := rand.New(rand.NewPCG(1, 2))
	x := randDense(r, s, h)
	a := randDense(r, h, 4*h)
	b := randDense(r, 4*h, h)
	wq, wk, wv := randDense(r, h, h), randDense(r, h, h), randDense(r, h, h)
	wo := randDense(r, h, h)

	// Unsharded reference.
	mlp := mm(t, apply(mm(t, x, a), gelu), b)
	var ctx []*tensor.Dense
	q, k, v := mm(t, x, wq), mm(t, x, wk), mm(t, x, wv)
	for hd := 0; hd < heads; hd++ {
		ctx = append(ctx, attention(t, cols(t, q, hd*dh, (hd+1)*dh), cols(t, k, hd*dh, (hd+1)*dh), cols(t, v, hd*dh, (hd+1)*dh)))
	}
	attn := mm(t, concatCols(t, ctx...), wo)

	// The plan's shard shapes.
	fc1, fc2 := opShapes(t, l, "mlp.fc1"), opShapes(t, l, "mlp.fc2")
	qkv, proj := opShapes(t, l, "attn.qkv"), opShapes(t, l, "attn.proj")

	var mlpSum, attnSum *tensor.Dense
	hpr := heads / tp // heads per rank
	for rank := 0; rank < tp; rank++ {
		ai := cols(t, a, rank*4*h/tp, (rank+1)*4*h/tp)
		bi := rows(t, b, rank*4*h/tp, (rank+1)*4*h/tp)
		if !ai.Shape().Eq(fc1.Inputs[1]) || !bi.Shape().Eq(fc2.Inputs[1]) {
			t.Fatalf("MLP shards %v %v, plan says %v %v", ai.Shape(), bi.Shape(), fc1.Inputs[1], fc2.Inputs[1])
		}
		yi := mm(t, apply(mm(t, x, ai), gelu), bi)
		if !yi.Shape().Eq(fc2.Output) {
			t.Fatalf("partial MLP output %v, plan says %v", yi.Shape(), fc2.Output)
		}
		lo, hi := rank*hpr*dh, (rank+1)*hpr*dh
		wqkvI := concatCols(t, cols(t, wq, lo, hi), cols(t, wk, lo, hi), cols(t, wv, lo, hi))
		if !wqkvI.Shape().Eq(qkv.Inputs[1]) {
			t.Fatalf("QKV shard %v, plan says %v", wqkvI.Shape(), qkv.Inputs[1])
		}
		qi, ki, vi := mm(t, x, cols(t, wqkvI, 0, h/tp)), mm(t, x, cols(t, wqkvI, h/tp, 2*h/tp)), mm(t, x, cols(t, wqkvI, 2*h/tp, 3*h/tp))
		var ctxI []*tensor.Dense
		for hd := 0; hd < hpr; hd++ {
			ctxI = append(ctxI, attention(t, cols(t, qi, hd*dh, (hd+1)*dh), cols(t, ki, hd*dh, (hd+1)*dh), cols(t, vi, hd*dh, (hd+1)*dh)))
		}
		woI := rows(t, wo, lo, hi)
		if !woI.Shape().Eq(proj.Inputs[1]) {
			t.Fatalf("projection shard %v, plan says %v", woI.Shape(), proj.Inputs[1])
		}
		ai2 := mm(t, concatCols(t, ctxI...), woI)
		if rank == 0 {
			mlpSum, attnSum = yi, ai2
		} else { // the forward all-reduce (g)
			mlpSum, attnSum = add(t, mlpSum, yi), add(t, attnSum, ai2)
		}
	}
	assertClose(t, "MLP all-reduce", mlpSum, mlp)
	assertClose(t, "attention all-reduce", attnSum, attn)
}

// Sequence parallelism (Korthikanti et al. 2022 §4.2.2): each rank holds s/t tokens, applies the
// LayerNorm to its shard, all-gathers the sequence, runs the column-/row-parallel MLP and
// reduce-scatters the partial sums back to sequence shards. The result equals the unsharded
// LayerNorm → MLP, split along the sequence.
func TestSequenceParallelMLPEqualsUnsharded(t *testing.T) {
	const tp = 2
	plan, err := Build(tinyConfig(tp, true))
	if err != nil {
		t.Fatal(err)
	}
	l := layerOf(plan)
	h, s := 8, 4
	r := rand.New(rand.NewPCG(3, 4))
	x := randDense(r, s, h)
	a := randDense(r, h, 4*h)
	b := randDense(r, 4*h, h)
	want := mm(t, apply(mm(t, layerNorm(x), a), gelu), b)

	ln2 := opShapes(t, l, "ln2")
	var normed, partial []*tensor.Dense
	for rank := 0; rank < tp; rank++ {
		xi := rows(t, x, rank*s/tp, (rank+1)*s/tp)
		// The plan's residual-stream shard is [micro-batch, s/t, h].
		if got := (tensor.Shape{1, xi.Shape()[0], xi.Shape()[1]}); !got.Eq(ln2.Inputs[0]) {
			t.Fatalf("sequence shard %v, plan says %v", got, ln2.Inputs[0])
		}
		normed = append(normed, layerNorm(xi))
	}
	gathered := concatRows(t, normed...) // all-gather
	for rank := 0; rank < tp; rank++ {
		ai := cols(t, a, rank*4*h/tp, (rank+1)*4*h/tp)
		bi := rows(t, b, rank*4*h/tp, (rank+1)*4*h/tp)
		partial = append(partial, mm(t, apply(mm(t, gathered, ai), gelu), bi))
	}
	for rank := 0; rank < tp; rank++ { // reduce-scatter: rank r sums its rows of every partial
		lo, hi := rank*s/tp, (rank+1)*s/tp
		sum := rows(t, partial[0], lo, hi)
		for j := 1; j < tp; j++ {
			sum = add(t, sum, rows(t, partial[j], lo, hi))
		}
		assertClose(t, "sequence-parallel shard", sum, rows(t, want, lo, hi))
	}
}
