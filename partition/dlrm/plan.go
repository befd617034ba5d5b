package dlrm

import (
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/nn"
)

// Plan partitions a DLRM job: sharded embeddings (model parallel, no gradient reduction) and
// data-parallel MLPs, with the all-to-alls between them. See doc.go.
func Plan(c Config) (*partition.Plan, error) {
	lay, err := c.Shard()
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.LocalBatch > 0 {
		return c.plan(lay, c.LocalBatch)
	}
	// Fill memory: the largest batch up to GlobalBatch/Tables that fits, halving from there.
	b := max(1, c.GlobalBatch/c.Tables)
	for {
		p, err := c.plan(lay, b)
		if err != nil || p.CheckMemory() == nil || b == 1 {
			return p, err
		}
		b /= 2
	}
}

func (c Config) plan(lay Layout, b int) (*partition.Plan, error) {
	bottom, top, err := c.mlps()
	if err != nil {
		return nil, err
	}
	dt := c.Precision.DType()
	sz := float64(dt.Size())
	gr := partition.NewGraph(8*(len(bottom.Layers)+len(top.Layers))+64, 6*(len(bottom.Layers)+len(top.Layers))+32)

	// Embedding shard: what it looks up and pools is what it sends in the all-to-all.
	a2a := c.A2ABytes(lay, b)
	pooled := float64(a2a) / sz
	rows := pooled * float64(c.Pooling)
	cols := lay.TablesPerGPU * lay.DimPart
	emb := gr.Shape(int(pooled)/cols, cols)
	shardParams := c.RowsPerTable * float64(cols)
	all := network.Group{Size: c.GPUs, Stride: 1}
	embBlock := partition.Block{Name: "embedding", Repeat: 1, Params: shardParams, Sync: partition.NoSync,
		Ops: []partition.Op{
			{Name: "embedding.lookup", Kind: partition.Embedding, Phase: partition.Forward, DType: dt, Output: emb,
				Read: units.Bytes(rows * sz), Written: units.Bytes(pooled * sz)},
			// Sparse SGD: scatter the pooled gradients onto the looked-up rows, in place [D]: a
			// multiply (learning rate) and an add per row element; reads the gradients and rows,
			// writes the rows.
			{Name: "embedding.sparse_sgd", Kind: partition.Embedding, Phase: partition.Backward, DType: dt, Output: emb,
				FLOP: units.FLOP(2 * rows), Read: units.Bytes((pooled + rows) * sz), Written: units.Bytes(rows * sz)},
		},
		Collectives: []partition.Collective{
			{Name: "mp.embedding_a2a", Collective: network.Collective{Op: network.AllToAll, Bytes: a2a, Group: all, DType: dt},
				Dim: partition.DimMP, Phase: partition.Forward, Count: 1},
			{Name: "mp.embedding_grad_a2a", Collective: network.Collective{Op: network.AllToAll, Bytes: a2a, Group: all, DType: dt},
				Dim: partition.DimMP, Phase: partition.Backward, Count: 1},
		},
	}
	blocks := []partition.Block{embBlock}
	bb, bSaved, bFLOP := nn.Blocks(gr, bottom, b, dt, false)
	tb, tSaved, tFLOP := nn.Blocks(gr, top, b, dt, true) // back-propagates into the interaction

	// Dot interaction: Z = X·Xᵀ over the T+1 vectors of D per sample (a batched GEMM), then
	// the upper triangle concatenated with the bottom output.
	n := c.Tables + 1
	x := gr.Shape(b, n, c.Dim)
	xt := gr.Shape(b, c.Dim, n)
	dot := gr.BMM("interaction.dot", partition.Forward, x, xt, dt)
	dot.Saved = units.Bytes(partition.Elems(x) * sz)
	da, db := gr.BMMBackward("interaction.dot.dA", "interaction.dot.dB", x, xt, dt)
	out := gr.Shape(b, c.Interactions())
	inter := partition.Block{Name: "interaction", Repeat: 1, Sync: partition.NoSync, Ops: []partition.Op{
		dot,
		gr.Pointwise("interaction.concat", partition.Elementwise, partition.Forward, out, dt, 0, 1, 1, 0, 0),
		gr.Pointwise("interaction.concat.bwd", partition.Elementwise, partition.Backward, out, dt, 0, 1, 1, 0, 0),
		da, db,
	}}
	blocks = append(blocks, bb...)
	blocks = append(blocks, inter)
	blocks = append(blocks, tb...)

	mlpParams := bottom.Params() + top.Params()
	params := shardParams + mlpParams
	st := partition.Stage{Blocks: blocks, Params: params,
		PerIteration: []partition.Op{partition.OptimizerOp(mlpParams, partition.SGD, c.Precision)},
	}
	bucket := c.BucketBytes
	if bucket == 0 {
		bucket = nn.DefaultBucketBytes
	}
	st.Grads = []partition.GradSync{{Name: "dp.mlp_grads", Dim: partition.DimDP,
		Collective:  network.Collective{Op: network.AllReduce, Bytes: units.Bytes(mlpParams * sz), Group: all, DType: dt},
		BucketBytes: bucket, Overlap: !c.NoOverlap}}
	// Memory: the embedding shard (updated in place by sparse SGD: no gradient or optimizer
	// state), the MLPs with SGD state, and the batch's activations: the received embeddings, the
	// interaction input and what the MLPs save.
	m := partition.StaticMemory(mlpParams, partition.SGD, c.Precision, c.Capacity)
	m.Weights += units.Bytes(shardParams * sz)
	m.Total += units.Bytes(shardParams * sz)
	recv := units.Bytes(float64(b) * float64(c.Tables) * float64(c.Dim) * sz)
	st.Memory = m.WithActivations(a2a + recv + dot.Saved + bSaved + tSaved)
	flop := bFLOP + tFLOP + dot.FLOP + da.FLOP + db.FLOP
	return &partition.Plan{
		Workload: "dlrm",
		Layout: partition.Layout{GPUs: c.GPUs, DP: c.GPUs, TP: lay.ShardsPerTable, PP: 1, Interleave: 1,
			GlobalBatch: c.GlobalBatch, MicroBatch: b, MicroBatches: 1},
		Stages:    []partition.Stage{st},
		ModelFLOP: flop * units.FLOP(c.GPUs),
		Params:    c.EmbeddingParams() + mlpParams,
	}, nil
}
