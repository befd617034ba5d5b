package nn

import (
	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
)

// DefaultBucketBytes is PyTorch DistributedDataParallel's gradient bucket (bucket_cap_mb = 25,
// i.e. 25 MiB) [X].
const DefaultBucketBytes = 25 * units.MiB

// Training is a data-parallel training configuration.
type Training struct {
	Workload   string
	DP         int // data-parallel degree = GPUs
	LocalBatch int // samples per GPU per iteration
	MicroBatch int // samples per micro-batch (0: the whole local batch)
	Precision  partition.Precision
	Optimizer  partition.Optimizer
	// Buckets > 0 splits the gradients into that many equal groups (HammingMesh's ResNet-152: 10);
	// otherwise they go in buckets of BucketBytes (0: DefaultBucketBytes).
	Buckets     int
	BucketBytes units.Bytes
	NoOverlap   bool
	// Fusion packs the gradients into buckets (partition.FuseChunks by default); FusionLatency
	// is charged per bucket.
	Fusion        partition.Fusion
	FusionLatency units.Seconds
	Capacity      units.Bytes
}

// MicroBatches is the number of micro-batches per iteration.
func (t Training) MicroBatches() int { return t.LocalBatch / t.micro() }

func (t Training) micro() int {
	if t.MicroBatch > 0 {
		return t.MicroBatch
	}
	return t.LocalBatch
}

// Validate reports every problem at once.
func (t Training) Validate() error {
	var p params.Problems
	p.AtLeast("--gpus", t.DP, 1)
	p.Check(t.Precision.OnlyTransformers("data-parallel CNNs"))
	p.AtLeast("--batch (per GPU)", t.LocalBatch, 1)
	if t.MicroBatch < 0 {
		p.Addf("--micro-batch %d must be ≥ 1", t.MicroBatch)
	}
	if t.MicroBatch > 0 && t.LocalBatch%t.MicroBatch != 0 {
		p.Addf("--micro-batch %d does not divide the local batch %d", t.MicroBatch, t.LocalBatch)
	}
	if t.Buckets < 0 || t.BucketBytes < 0 {
		p.Addf("gradient buckets must be ≥ 0")
	}
	if t.Buckets > 0 && t.Fusion == partition.FuseTensors {
		p.Addf("buckets %d splits the gradients into equal groups; horovod fusion packs whole tensors into dp_bucket_bytes: give one of them", t.Buckets)
	}
	if !(t.FusionLatency >= 0) {
		p.Addf("fusion latency %v must be ≥ 0", t.FusionLatency)
	}
	p.Positive("GPU memory", float64(t.Capacity))
	return p.Err(t.Workload)
}

// batched prefixes a per-sample shape with the batch.
func batched(gr *partition.Graph, m int, s []int) tensor.Shape {
	dims := make([]int, 0, 5)
	dims = append(append(dims, m), s...)
	return gr.Shape(dims...)
}

// layerOps: Conv and Linear are GEMMs (implicit GEMM for convolutions) of 2·MACs·m FLOP, with a
// data-gradient and a weight-gradient GEMM of the same size in the backward pass; the attention
// core is two batched GEMMs around a softmax; normalisations, activations, pooling, residual
// adds and dropout are memory-bound kernels. Saved activations follow what PyTorch autograd keeps:
// the inputs of GEMMs and normalisations, activation outputs, dropout masks, max-pool inputs.
//
// The ops are appended to ops (a slab shared by the network's layers), which is returned.
func layerOps(ops []partition.Op, gr *partition.Graph, l Layer, m int, dt dtype.DType, first bool) []partition.Op {
	sz := float64(dt.Size())
	mf := float64(m)
	in, out := batched(gr, m, l.In), batched(gr, m, l.Out)
	nIn, nOut := partition.Elems(in), partition.Elems(out)
	b := func(x float64) units.Bytes { return units.Bytes(x) }
	switch l.Kind {
	case Conv, Linear:
		w := gr.Shape(l.Weight...)
		nw := partition.Elems(w)
		f := units.FLOP(2 * l.MACs * mf)
		kind := partition.MatMul
		if l.Kind == Conv {
			kind = partition.Convolution
		}
		fwd := partition.Op{Name: l.Name, Kind: kind, Phase: partition.Forward, DType: dt,
			Inputs: gr.Inputs(in, w), Output: out, FLOP: f, Read: b((nIn + nw) * sz), Written: b(nOut * sz), Saved: b(nIn * sz)}
		ops = append(ops, fwd)
		if !first {
			ops = append(ops, partition.Op{Name: l.opName(l.dgradName, ".dgrad"), Kind: kind, Phase: partition.Backward, DType: dt,
				Inputs: gr.Inputs(out, w), Output: in, FLOP: f, Read: b((nOut + nw) * sz), Written: b(nIn * sz)})
		}
		ops = append(ops, partition.Op{Name: l.opName(l.wgradName, ".wgrad"), Kind: kind, Phase: partition.Backward, DType: dt,
			Inputs: gr.Inputs(in, out), Output: w, FLOP: f, Read: b((nIn + nOut) * sz), Written: b(nw * sz)})
	case Attention:
		t, f := l.In[0], l.In[1]/3
		h := l.Heads
		q := gr.Shape(m*h, t, f/h)
		kt := gr.Shape(m*h, f/h, t)
		sc := gr.Shape(m*h, t, t)
		scores := gr.BMM(l.Name+".scores", partition.Forward, q, kt, dt)
		soft := gr.Pointwise(l.Name+".softmax", partition.Softmax, partition.Forward, sc, dt, partition.FlopSoftmax, 1, 1, 0, 0)
		ctx := gr.BMM(l.Name+".context", partition.Forward, sc, q, dt)
		scores.Saved = b(nIn * sz)               // Q, K, V
		soft.Saved = b(partition.Elems(sc) * sz) // probabilities
		da, db := gr.BMMBackward(l.Name+".context.dA", l.Name+".context.dB", sc, q, dt)
		sa, sb := gr.BMMBackward(l.Name+".scores.dA", l.Name+".scores.dB", q, kt, dt)
		ops = append(ops, scores, soft, ctx, da, db,
			gr.Pointwise(l.Name+".softmax.bwd", partition.Softmax, partition.Backward, sc, dt, partition.FlopSoftmax, 2, 1, 0, 0), sa, sb)
	case BatchNorm, LayerNorm:
		extra := b(l.Params * sz)
		fwd := gr.Pointwise(l.Name, partition.Norm, partition.Forward, in, dt, partition.FlopNorm, 2, 1, extra, 0)
		fwd.Saved = b(nIn * sz)
		ops = append(ops, fwd, gr.Pointwise(l.opName(l.bwdName, ".bwd"), partition.Norm, partition.Backward, in, dt, 2*partition.FlopNorm, 2, 1, extra, extra))
	case Activation:
		fwd := gr.Pointwise(l.Name, partition.Elementwise, partition.Forward, in, dt, partition.FlopGeLU, 1, 1, 0, 0)
		fwd.Saved = b(nOut * sz)
		ops = append(ops, fwd, gr.Pointwise(l.opName(l.bwdName, ".bwd"), partition.Elementwise, partition.Backward, in, dt, partition.FlopGeLU, 2, 1, 0, 0))
	case MaxPool, AvgPool:
		fwd := partition.Op{Name: l.Name, Kind: partition.Elementwise, Phase: partition.Forward, DType: dt, Inputs: gr.Inputs(in), Output: out,
			FLOP: units.FLOP(nIn), Read: b(nIn * sz), Written: b(nOut * sz)}
		bwd := partition.Op{Name: l.opName(l.bwdName, ".bwd"), Kind: partition.Elementwise, Phase: partition.Backward, DType: dt, Inputs: gr.Inputs(out), Output: in,
			FLOP: units.FLOP(nIn), Read: b(nOut * sz), Written: b(nIn * sz)}
		if l.Kind == MaxPool {
			fwd.Saved = b(nIn * sz)
			bwd.Read += b(nIn * sz)
		}
		ops = append(ops, fwd, bwd)
	case Add:
		ops = append(ops,
			gr.Pointwise(l.Name, partition.Elementwise, partition.Forward, out, dt, 1, 2, 1, 0, 0),
			gr.Pointwise(l.opName(l.bwdName, ".bwd"), partition.Elementwise, partition.Backward, out, dt, 1, 2, 1, 0, 0))
	case Dropout:
		mask := b(nIn * partition.MaskBytes)
		fwd := gr.Pointwise(l.Name, partition.Elementwise, partition.Forward, in, dt, partition.FlopDropout, 1, 1, 0, mask)
		fwd.Saved = mask
		ops = append(ops, fwd, gr.Pointwise(l.opName(l.bwdName, ".bwd"), partition.Elementwise, partition.Backward, in, dt, partition.FlopDropout, 1, 1, mask, 0))
	case Embedding:
		ops = append(ops,
			partition.Op{Name: l.Name, Kind: partition.Embedding, Phase: partition.Forward, DType: dt, Inputs: gr.Inputs(in), Output: out,
				Read: b(nOut * sz), Written: b(nOut * sz)},
			partition.Op{Name: l.opName(l.bwdName, ".bwd"), Kind: partition.Embedding, Phase: partition.Backward, DType: dt, Inputs: gr.Inputs(out), Output: out,
				Read: b(nOut * sz), Written: b(nOut * sz)})
	}
	return ops
}

// Blocks turns every layer of n into a block for micro-batches of m samples — a repeated unit
// into one block of all its layers' ops with the unit's Repeat — and returns the activations the
// forward pass saves and the GEMM FLOP (forward and backward) per micro-batch. inputGrad says
// whether the network's input needs a gradient (it is another part's output).
func Blocks(gr *partition.Graph, n *Net, m int, dt dtype.DType, inputGrad bool) (blocks []partition.Block, saved units.Bytes, flop units.FLOP) {
	blocks = make([]partition.Block, 0, len(n.Layers))
	slab := make([]partition.Op, 0, 3*len(n.Layers)+8)
	unit := 0
	for i := 0; i < len(n.Layers); {
		end, rep := i+1, 1
		if unit < len(n.Units) && n.Units[unit].Start == i {
			end, rep = n.Units[unit].End, n.Units[unit].Repeat
			unit++
		}
		start := len(slab)
		var params float64
		for j := i; j < end; j++ {
			slab = layerOps(slab, gr, n.Layers[j], m, dt, j == 0 && !inputGrad)
			params += n.Layers[j].Params
		}
		blk := partition.Block{Name: n.Layers[i].Name, Repeat: rep, Ops: slab[start:len(slab):len(slab)], Params: params}
		blocks = append(blocks, blk)
		for _, op := range blk.Ops {
			saved += op.Saved * units.Bytes(rep)
			if op.Kind.IsMatMul() {
				flop += op.FLOP * units.FLOP(rep)
			}
		}
		i = end
	}
	return blocks, saved, flop
}

// DataParallel partitions a network with pure data parallelism: every GPU runs the whole network
// on its local batch (in micro-batches, accumulating gradients) and the gradients are all-reduced
// over all GPUs in buckets, overlapped with the last micro-batch's backward pass.
func DataParallel(n *Net, t Training) (*partition.Plan, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	dt := t.Precision.DType()
	m := t.micro()
	gr := partition.NewGraph(8*len(n.Layers)+16, 6*len(n.Layers)+8)
	blocks, saved, modelFLOP := Blocks(gr, n, m, dt, false)
	st := partition.Stage{Index: 0, Blocks: blocks, Params: n.Params()}
	st.PerIteration = []partition.Op{partition.OptimizerOp(st.Params, t.Optimizer, t.Precision)}
	grad := units.Bytes(st.Params) * dt.Size()
	bucket := t.BucketBytes
	if bucket == 0 {
		bucket = DefaultBucketBytes
	}
	if t.Buckets > 0 {
		bucket = grad / units.Bytes(t.Buckets)
	}
	st.Grads = []partition.GradSync{{
		Name: "dp.grads", Dim: partition.DimDP,
		Collective:  network.Collective{Op: network.AllReduce, Bytes: grad, Group: network.Group{Size: t.DP, Stride: 1}, DType: dt},
		BucketBytes: bucket, Overlap: !t.NoOverlap, Fusion: t.Fusion, FusionLatency: t.FusionLatency,
	}}
	st.Memory = partition.StaticMemory(st.Params, t.Optimizer, t.Precision, t.Capacity).WithActivations(saved)
	mbs := t.MicroBatches()
	return &partition.Plan{
		Workload: t.Workload,
		Layout: partition.Layout{GPUs: t.DP, DP: t.DP, TP: 1, PP: 1, Interleave: 1, GlobalBatch: t.DP * t.LocalBatch,
			MicroBatch: m, MicroBatches: mbs},
		Stages:    []partition.Stage{st},
		ModelFLOP: modelFLOP * units.FLOP(mbs*t.DP),
		Params:    st.Params,
	}, nil
}
