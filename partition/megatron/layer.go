package megatron

import (
	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
)

// geom is the per-GPU geometry of one micro-batch.
type geom struct {
	m, s, h, a, t int // micro-batch, sequence, hidden, heads, tensor-parallel degree
	vocab         int // padded vocabulary (0: none)
	sp            bool
	rc            Recompute
	dt            dtype.DType
}

// sl is the sequence length of the residual stream on one GPU (sequence parallelism shards it).
func (g geom) sl() int {
	if g.sp {
		return g.s / g.t
	}
	return g.s
}

func (g geom) sz() float64 { return float64(g.dt.Size()) }

// actBytes is the whole [m, s, h] activation: the nccl-tests size S of every tensor-parallel
// collective on the residual stream (all-reduce buffer, all-gather output, reduce-scatter input).
func (g geom) actBytes() units.Bytes { return units.Bytes(float64(g.m*g.s) * float64(g.h) * g.sz()) }

func (g geom) tpGroup() network.Group { return network.Group{Size: g.t, Stride: 1} }

// layerWeights lists one transformer layer's parameter tensors on a GPU with tensor parallelism
// t (Megatron-LM, Shoeybi et al. 2019 §3): QKV and fc1 are column-parallel (weights and biases
// split), the attention projection and fc2 row-parallel (weights split, biases replicated), the
// two LayerNorms replicated. Their sum is 12h²/t + 7h/t + 6h, the #Params-per-GPU rule that
// reproduces RAMP Table 9 (reference/ramp.md §5.3).
func layerWeights(h, t int) []tensor.Shape {
	return []tensor.Shape{
		shape(h, 3*h/t), shape(3 * h / t), // attn.qkv
		shape(h/t, h), shape(h), // attn.proj
		shape(h, 4*h/t), shape(4 * h / t), // mlp.fc1
		shape(4*h/t, h), shape(h), // mlp.fc2
		shape(h), shape(h), shape(h), shape(h), // ln1, ln2 (γ, β)
	}
}

func sumElems(ws []tensor.Shape) float64 {
	n := 0.0
	for _, w := range ws {
		n += elems(w)
	}
	return n
}

// LayerParamsPerGPU is the parameter count of one layer on one GPU at tensor parallelism t.
func LayerParamsPerGPU(h, t int) float64 { return sumElems(layerWeights(h, t)) }

// tpCollective is a tensor-parallel collective on the residual stream.
func (g geom) tpCollective(name string, op network.Op, ph partition.Phase, count int) partition.Collective {
	return partition.Collective{
		Name:       name,
		Collective: network.Collective{Op: op, Bytes: g.actBytes(), Group: g.tpGroup(), DType: g.dt},
		Dim:        partition.DimTP, Phase: ph, Count: count,
	}
}

// enterTP / exitTP are Megatron's conjugate operators around a column-parallel → row-parallel
// pair: without sequence parallelism f is the identity forward and an all-reduce backward, g an
// all-reduce forward and the identity backward (Shoeybi et al. 2019 Fig. 3). With sequence
// parallelism f becomes an all-gather forward / reduce-scatter backward and g a reduce-scatter
// forward / all-gather backward (Korthikanti et al. 2022 §4.2.2).
func (g geom) tpCollectives() []partition.Collective {
	if g.t == 1 {
		return nil
	}
	var cs []partition.Collective
	add := func(name string, op network.Op, ph partition.Phase, n int) {
		cs = append(cs, g.tpCollective(name, op, ph, n))
	}
	if !g.sp {
		add("tp.g.fwd", network.AllReduce, partition.Forward, 2)
		add("tp.f.bwd", network.AllReduce, partition.Backward, 2)
		if g.rc == RecomputeFull {
			add("tp.g.recompute", network.AllReduce, partition.Recompute, 2)
		}
		return cs
	}
	add("sp.f.fwd", network.AllGather, partition.Forward, 2)
	add("sp.g.fwd", network.ReduceScatter, partition.Forward, 2)
	add("sp.g.bwd", network.AllGather, partition.Backward, 2)
	add("sp.f.bwd", network.ReduceScatter, partition.Backward, 2)
	// The column-parallel weight gradients need the gathered input again; Megatron-LM re-gathers
	// it concurrently with the data-gradient GEMM instead of storing it.
	for _, behind := range []string{"mlp.fc1.dgrad", "attn.qkv.dgrad"} {
		c := g.tpCollective("sp.regather.bwd", network.AllGather, partition.Backward, 1)
		c.Overlap, c.HideBehind = partition.BehindOp, behind
		cs = append(cs, c)
	}
	if g.rc == RecomputeFull {
		add("sp.f.recompute", network.AllGather, partition.Recompute, 2)
		add("sp.g.recompute", network.ReduceScatter, partition.Recompute, 2)
	}
	return cs
}

// layerBlock builds one transformer layer: forward ops (with the activations each keeps for the
// backward pass), recomputation, backward ops and the tensor-parallel collectives.
func layerBlock(g geom, repeat int) partition.Block {
	m, s, h, a, t := g.m, g.s, g.h, g.a, g.t
	dt, sz := g.dt, g.sz()
	ht, at, dh := h/t, a/t, h/a
	ws := layerWeights(h, t)
	x := shape(m, g.sl(), h)                    // residual stream on this GPU
	xs := shape(m*s, h)                         // gathered input of the column-parallel GEMMs
	qk := shape(m*at, s, dh)                    // per-head Q (and K, V) on this GPU
	kt := shape(m*at, dh, s)                    // Kᵀ
	sc := shape(m*at, s, s)                     // attention scores / probabilities
	ffn := shape(m*s, 4*ht)                     // fc1 output
	lnExtra := units.Bytes(2 * float64(h) * sz) // γ and β
	resid := float64(m*g.sl()) * float64(h)     // elements of x
	gathered := float64(m*s) * float64(h)

	// Saved activations per op, Korthikanti et al. 2022 §4.1 (bytes for one micro-batch).
	savedInGEMM := gathered * sz // QKV / fc1 input, replicated across TP ranks...
	if g.sp {
		savedInGEMM = resid * sz // ...or kept as the sequence shard and re-gathered (§4.2.2)
	}
	core := float64(m*at) * float64(s) * float64(s) // attention-core elements
	selective := g.rc == RecomputeSelective

	ln1 := pointwise("ln1", partition.Norm, partition.Forward, x, dt, flopNorm, 1, 1, lnExtra, 0)
	ln1.Saved = units.Bytes(resid * sz)
	qkv := matmul("attn.qkv", partition.Forward, xs, ws[0], dt)
	qkv.Saved = units.Bytes(savedInGEMM)
	scores := bmm("attn.scores", partition.Forward, qk, kt, dt)
	scores.Saved = units.Bytes(2 * float64(m*s) * float64(ht) * sz) // Q and K
	softmax := pointwise("attn.softmax", partition.Softmax, partition.Forward, sc, dt, flopSoftmax, 1, 1, 0, 0)
	drop := pointwise("attn.dropout", partition.Elementwise, partition.Forward, sc, dt, flopDropout, 1, 1, 0, units.Bytes(core*maskBytes))
	context := bmm("attn.context", partition.Forward, sc, qk, dt)
	context.Saved = units.Bytes(float64(m*s) * float64(ht) * sz) // V
	if !selective {
		softmax.Saved = units.Bytes(core * sz)     // softmax output
		drop.Saved = units.Bytes(core * maskBytes) // dropout mask
		context.Saved += units.Bytes(core * sz)    // dropout output (probabilities)
	}
	proj := matmul("attn.proj", partition.Forward, shape(m*s, ht), ws[2], dt)
	proj.Saved = units.Bytes(float64(m*s) * float64(ht) * sz)
	res1 := pointwise("attn.residual", partition.Elementwise, partition.Forward, x, dt, flopResidual, 2, 1, 0, units.Bytes(resid*maskBytes))
	res1.Saved = units.Bytes(resid * maskBytes)
	ln2 := pointwise("ln2", partition.Norm, partition.Forward, x, dt, flopNorm, 1, 1, lnExtra, 0)
	ln2.Saved = units.Bytes(resid * sz)
	fc1 := matmul("mlp.fc1", partition.Forward, xs, ws[4], dt)
	fc1.Saved = units.Bytes(savedInGEMM)
	gelu := pointwise("mlp.gelu", partition.Elementwise, partition.Forward, ffn, dt, flopGeLU, 1, 1, 0, 0)
	gelu.Saved = units.Bytes(elems(ffn) * sz)
	fc2 := matmul("mlp.fc2", partition.Forward, ffn, ws[6], dt)
	fc2.Saved = units.Bytes(elems(ffn) * sz)
	res2 := pointwise("mlp.residual", partition.Elementwise, partition.Forward, x, dt, flopResidual, 2, 1, 0, units.Bytes(resid*maskBytes))
	res2.Saved = units.Bytes(resid * maskBytes)

	fwd := []partition.Op{ln1, qkv, scores, softmax, drop, context, proj, res1, ln2, fc1, gelu, fc2, res2}

	var workspace units.Bytes
	var recompute []partition.Op
	switch g.rc {
	case RecomputeFull:
		// Only the layer input survives; while one layer is back-propagated its recomputed
		// activations are alive (the workspace).
		for i := range fwd {
			workspace += fwd[i].Saved
			recompute = append(recompute, asPhase(fwd[i], partition.Recompute))
			fwd[i].Saved = 0
		}
		fwd[0].Saved = units.Bytes(resid * sz)
	case RecomputeSelective:
		for _, op := range []partition.Op{scores, softmax, drop, context} {
			recompute = append(recompute, asPhase(op, partition.Recompute))
		}
		workspace = units.Bytes(core * (2*sz + maskBytes)) // the recomputed core of one layer
	}

	// Backward, in reverse order of the forward pass.
	maskRead := units.Bytes(resid * maskBytes)
	var bwd []partition.Op
	add := func(ops ...partition.Op) { bwd = append(bwd, ops...) }
	add(pointwise("mlp.residual.bwd", partition.Elementwise, partition.Backward, x, dt, flopDropout, 1, 1, maskRead, 0))
	d, w := linearBackward("mlp.fc2", ffn, ws[6], dt)
	add(d, w)
	add(pointwise("mlp.gelu.bwd", partition.Elementwise, partition.Backward, ffn, dt, flopGeLU, 2, 1, 0, 0))
	d, w = linearBackward("mlp.fc1", xs, ws[4], dt)
	add(d, w)
	add(pointwise("ln2.bwd", partition.Norm, partition.Backward, x, dt, 2*flopNorm, 2, 1, lnExtra, lnExtra))
	add(pointwise("attn.residual.bwd", partition.Elementwise, partition.Backward, x, dt, flopDropout, 1, 1, maskRead, 0))
	d, w = linearBackward("attn.proj", shape(m*s, ht), ws[2], dt)
	add(d, w)
	da, db := bmmBackward("attn.context", sc, qk, dt)
	add(da, db)
	add(pointwise("attn.dropout.bwd", partition.Elementwise, partition.Backward, sc, dt, flopDropout, 1, 1, units.Bytes(core*maskBytes), 0))
	add(pointwise("attn.softmax.bwd", partition.Softmax, partition.Backward, sc, dt, flopSoftmax, 2, 1, 0, 0))
	da, db = bmmBackward("attn.scores", qk, kt, dt)
	add(da, db)
	d, w = linearBackward("attn.qkv", xs, ws[0], dt)
	add(d, w)
	add(pointwise("ln1.bwd", partition.Norm, partition.Backward, x, dt, 2*flopNorm, 2, 1, lnExtra, lnExtra))

	ops := make([]partition.Op, 0, len(fwd)+len(recompute)+len(bwd))
	ops = append(append(append(ops, fwd...), recompute...), bwd...)
	return partition.Block{
		Name: "layer", Repeat: repeat, Ops: ops, Collectives: g.tpCollectives(),
		Params: sumElems(ws), Workspace: workspace,
	}
}
