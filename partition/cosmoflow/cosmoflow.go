package cosmoflow

import (
	"fmt"
	"math"
	"sync"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/nn"
)

// Architecture constants of the MLPerf HPC CosmoFlow reference model [X] (mlcommons/hpc
// cosmoflow; HammingMesh §V-B3 gives the 128³×4 input and the 8.9M parameters).
const (
	Side     = 128 // input voxels per axis
	Channels = 4   // input channels (redshifts)
	Filters  = 32  // first convolution's filters, doubled by each following one
	// convLayers is the number of convolution + pooling stages.
	convLayers = 5
)

// Dense are the fully connected layers' widths.
var Dense = []int{128, 64, 4}

// Config is a CosmoFlow job.
type Config struct {
	DP         int // data-parallel replicas (D)
	Spatial    int // GPUs sharing one sample's volume (O)
	LocalBatch int // samples per replica per iteration
	MicroBatch int // 0: the whole local batch
	Precision  partition.Precision
	Optimizer  partition.Optimizer
	// BucketBytes sizes the gradient all-reduces (0: PyTorch DDP's 25 MiB).
	BucketBytes units.Bytes
	NoOverlap   bool
	// ConvGradsDP reduces the convolutions' gradients over the D data-parallel replicas of each
	// spatial shard only, as the HammingMesh SST motif does (its gradient all-reduces run over
	// "ranks with the same rank % 4", reference/hammingmesh.md §6.2). By default they are reduced
	// over all D·O GPUs: each spatial shard holds a partial gradient of the replicated
	// convolution weights, so the spatial shards must be summed too.
	ConvGradsDP bool
	Capacity    units.Bytes
}

// GPUs is D·O.
func (c Config) GPUs() int { return c.DP * c.Spatial }

// convGroup is the group that sums the convolutions' gradients: every GPU, or (ConvGradsDP) a
// spatial shard's D replicas, O ranks apart.
func (c Config) convGroup() network.Group {
	if c.ConvGradsDP {
		return network.Group{Size: c.DP, Stride: c.Spatial}
	}
	return network.Group{Size: c.GPUs(), Stride: 1}
}

// Grid splits O GPUs over the H and W axes: gy × gx = O, as square as possible, gy ≥ gx.
func Grid(o int) (gy, gx int) {
	gx = int(math.Sqrt(float64(o)))
	for gx > 1 && o%gx != 0 {
		gx--
	}
	return o / gx, gx
}

// finalSide is the voxels per axis after the last pooling: 128 / 2^5 = 4.
const finalSide = Side >> convLayers

// Validate reports every problem at once.
func (c Config) Validate() error {
	var p params.Problems
	p.AtLeast("--dp", c.DP, 1)
	p.Check(c.Precision.OnlyTransformers("cosmoflow"))
	p.AtLeast("--spatial", c.Spatial, 1)
	p.AtLeast("--batch", c.LocalBatch, 1)
	if c.MicroBatch < 0 || (c.MicroBatch > 0 && c.LocalBatch%c.MicroBatch != 0) {
		p.Addf("--micro-batch %d must divide the local batch %d", c.MicroBatch, c.LocalBatch)
	}
	if c.Spatial >= 1 {
		gy, gx := Grid(c.Spatial)
		if finalSide%gy != 0 || finalSide%gx != 0 {
			p.Addf("--spatial %d splits the volume %d×%d, which does not divide the final %d×%d map; valid: 1, 2, 4, 8, 16",
				c.Spatial, gy, gx, finalSide, finalSide)
		}
	}
	p.Positive("GPU memory", float64(c.Capacity))
	return p.Err("cosmoflow")
}

// Net builds CosmoFlow on a gy × gx slab of the volume (the whole network for 1 × 1), with the
// dense layers sharded over gy·gx GPUs: each computes ⌈out/O⌉ outputs of the all-gathered input.
func Net(gy, gx int) (*nn.Net, error) {
	o := gy * gx
	b := nn.New("cosmoflow", Channels, Side, Side/gy, Side/gx)
	for i := 0; i < convLayers; i++ {
		name := fmt.Sprintf("conv%d", i)
		b.Conv(name, Filters<<i, 3, 1, 1, nn.Bias()).Act(name+".leaky_relu").MaxPool(name+".pool", 2, 2, 0)
	}
	b.Flatten("flatten")
	in := finalSide * finalSide * finalSide * (Filters << (convLayers - 1))
	for i, out := range Dense {
		name := fmt.Sprintf("dense%d", i)
		b.Gathered(name+".gathered", in)
		b.Linear(name, (out+o-1)/o, true)
		if i < len(Dense)-1 {
			b.Act(name + ".leaky_relu")
		}
		in = out
	}
	return b.Net()
}

// Params is the whole model's parameter count (8,907,556), counted once.
func Params() float64 { return fullParams() }

var fullParams = sync.OnceValue(func() float64 {
	n, err := Net(1, 1)
	if err != nil {
		return 0 // the architecture is fixed: TestParams catches a broken definition
	}
	return n.Params()
})

// Plan partitions a CosmoFlow job.
func Plan(c Config) (*partition.Plan, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	gy, gx := Grid(c.Spatial)
	net, err := Net(gy, gx)
	if err != nil {
		return nil, err
	}
	m := c.LocalBatch
	if c.MicroBatch > 0 {
		m = c.MicroBatch
	}
	dt := c.Precision.DType()
	gr := partition.NewGraph(8*len(net.Layers)+16, 6*len(net.Layers)+8)
	blocks, saved, flop := nn.Blocks(gr, net, m, dt, false)
	sz := float64(dt.Size())
	var convParams, denseParams float64
	for i := range blocks {
		l := net.Layers[i]
		blk := &blocks[i]
		switch {
		case l.Kind == nn.Conv:
			convParams += blk.Params
			blk.Sync = 0
			if c.Spatial > 1 && l.Name != "conv0" {
				pooled := net.Layers[i+2].Out // conv → leaky ReLU → max pool
				blk.Collectives = halo(l, pooled, m, gy, gx, sz, dt)
			}
		case l.Kind == nn.Linear:
			denseParams += blk.Params
			blk.Sync = 1
			if c.Spatial > 1 {
				in := units.Bytes(float64(m*l.In[0]) * sz) // the gathered input, all ranks together
				g := network.Group{Size: c.Spatial, Stride: 1}
				blk.Collectives = []partition.Collective{
					{Name: "sp.dense_allgather", Collective: network.Collective{Op: network.AllGather, Bytes: in, Group: g, DType: dt},
						Dim: partition.DimSP, Phase: partition.Forward, Count: 1},
					{Name: "sp.dense_reduce_scatter", Collective: network.Collective{Op: network.ReduceScatter, Bytes: in, Group: g, DType: dt},
						Dim: partition.DimSP, Phase: partition.Backward, Count: 1},
				}
			}
		default:
			blk.Sync = partition.NoSync
		}
	}
	bucket := c.BucketBytes
	if bucket == 0 {
		bucket = nn.DefaultBucketBytes
	}
	grads := func(name string, p float64, g network.Group) partition.GradSync {
		return partition.GradSync{Name: name, Dim: partition.DimDP,
			Collective:  network.Collective{Op: network.AllReduce, Bytes: units.Bytes(p * sz), Group: g, DType: dt},
			BucketBytes: bucket, Overlap: !c.NoOverlap}
	}
	params := convParams + denseParams
	st := partition.Stage{Blocks: blocks, Params: params,
		PerIteration: []partition.Op{partition.OptimizerOp(params, c.Optimizer, c.Precision)},
		Grads: []partition.GradSync{
			grads("dp.conv_grads", convParams, c.convGroup()),
			grads("dp.dense_grads", denseParams, network.Group{Size: c.DP, Stride: c.Spatial}),
		},
	}
	st.Memory = partition.StaticMemory(params, c.Optimizer, c.Precision, c.Capacity).WithActivations(saved)
	mbs := c.LocalBatch / m
	return &partition.Plan{
		Workload: "cosmoflow",
		Layout: partition.Layout{GPUs: c.GPUs(), DP: c.DP, TP: c.Spatial, PP: 1, Interleave: 1,
			GlobalBatch: c.DP * c.LocalBatch, MicroBatch: m, MicroBatches: mbs},
		Stages:    []partition.Stage{st},
		ModelFLOP: flop * units.FLOP(mbs*c.GPUs()),
		Params:    Params(),
	}, nil
}

// Halo is what one GPU exchanges with its grid neighbours before a 3×3×3 convolution of its
// [C, D, h, w] slab (one voxel deep; D is not split): a C·D·w face with each H neighbour, a
// C·D·h face with each W neighbour, and a C·D edge with each diagonal neighbour (the stencil's
// corners). An interior GPU of a grid axis longer than 2 has two neighbours along it.
type Halo struct {
	HFace, WFace, Edge                  float64 // elements per sample and neighbour
	HNeighbours, WNeighbours, Diagonals int
}

// HaloOf is the halo of a slab on a gy × gx grid, for the GPU with the most neighbours.
func HaloOf(slab []int, gy, gx int) Halo {
	c, d, h, w := float64(slab[0]), float64(slab[1]), float64(slab[2]), float64(slab[3])
	hn, wn := min(2, gy-1), min(2, gx-1)
	return Halo{HFace: c * d * w, WFace: c * d * h, Edge: c * d, HNeighbours: hn, WNeighbours: wn, Diagonals: hn * wn}
}

// halo is a convolution's send/recv halo exchanges, each hidden behind the convolution (interior
// first): forward on its input, backward on the gradient of its pooled output, which the
// neighbour's max-pool backward scatters into the one-voxel pre-pool face it needs (one value
// per 2×2×2 window; the HammingMesh motif's backward halo sizes are these faces).
func halo(l nn.Layer, pooled []int, m, gy, gx int, sz float64, dt dtype.DType) []partition.Collective {
	var cs []partition.Collective
	add := func(ph partition.Phase, slab []int, behind string) {
		h := HaloOf(slab, gy, gx)
		for _, a := range []struct {
			name   string
			elems  float64
			n      int
			stride int
		}{{"sp.halo", h.HFace, h.HNeighbours, gx}, {"sp.halo", h.WFace, h.WNeighbours, 1}, {"sp.halo_edge", h.Edge, h.Diagonals, gx + 1}} {
			if a.n == 0 {
				continue
			}
			cs = append(cs, partition.Collective{Name: a.name,
				Collective: network.Collective{Op: network.SendRecv, Bytes: units.Bytes(float64(m) * a.elems * sz),
					Group: network.Group{Size: 2, Stride: a.stride}, DType: dt},
				Dim: partition.DimSP, Phase: ph, Count: a.n, Overlap: partition.BehindOp, HideBehind: behind})
		}
	}
	add(partition.Forward, l.In, l.Name)
	add(partition.Backward, pooled, l.Name+".dgrad")
	return cs
}
