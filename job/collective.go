package job

import (
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/profile/roofline"
)

// CollectiveOptions is a sweep of collectives on one network.
type CollectiveOptions struct {
	Ops   []network.Op
	Sizes []units.Bytes // nccl-tests sizes
	GPUs  []int         // job sizes
	// Group and Stride pick one of the concurrent groups of the job (every group of that shape
	// runs at once); 0 and 0: the whole job.
	Group, Stride int
	Network       NetworkChoice
	// Cluster, when set, supplies the network instead of Network (and bounds the job's size).
	Cluster *Cluster
	GPU     string // prices the local reductions (roofline)
	DType   dtype.DType
	// NoReduceCompute prices no local reductions (as does a cluster's no_reduce_compute).
	NoReduceCompute bool
}

// CollectiveRow is one priced collective.
type CollectiveRow struct {
	Op      network.Op
	GPUs    int
	Group   network.Group
	Bytes   units.Bytes
	Network string
	Cost    network.Cost
	// AlgBW is S/t and BusBW AlgBW × the nccl-tests bus factor (2(n−1)/n for all-reduce, …).
	AlgBW, BusBW units.BytesPerSecond
}

// Collectives prices every (GPUs, size, op) combination, job sizes outermost.
func Collectives(o CollectiveOptions) ([]CollectiveRow, error) {
	gpu, err := roofline.LookupGPU(o.GPU)
	if err != nil {
		return nil, err
	}
	prof, err := roofline.New(gpu, roofline.DefaultEfficiency, o.DType)
	if err != nil {
		return nil, err
	}
	if o.Group < 0 || o.Stride < 0 {
		return nil, errs.Usage("--group %d and --stride %d must be ≥ 1 (0: the whole job)", o.Group, o.Stride)
	}
	var rows []CollectiveRow
	for _, n := range o.GPUs {
		if n < 1 {
			return nil, errs.Usage("--gpus %d must be ≥ 1", n)
		}
		base := network.Group{Size: n, Stride: 1}
		if o.Group > 0 {
			base.Size = o.Group
		}
		if o.Stride > 0 {
			base.Stride = o.Stride
		}
		if last := (base.Size - 1) * base.Stride; last >= n {
			return nil, errs.Usage("--group %d --stride %d reaches rank %d, beyond the job's %d GPUs (ranks 0–%d)", base.Size, base.Stride, last, n, n-1)
		}
		env := network.Env{GPUs: n, Reducer: prof}
		if o.NoReduceCompute {
			env.Reducer = nil
		}
		net, _, err := buildNetwork(o.Cluster, o.Network, env)
		if err != nil {
			return nil, err
		}
		for _, s := range o.Sizes {
			for _, op := range o.Ops {
				g := base
				if op == network.SendRecv {
					g.Size = min(g.Size, 2)
				}
				c, err := net.Price(network.Collective{Op: op, Bytes: s, Group: g, DType: o.DType})
				if err != nil {
					return nil, err
				}
				r := CollectiveRow{Op: op, GPUs: n, Group: g, Bytes: s, Network: net.Name(), Cost: c}
				if c.Total > 0 && op != network.Barrier {
					r.AlgBW = units.BytesPerSecond(float64(s) / float64(c.Total))
					r.BusBW = r.AlgBW * units.BytesPerSecond(op.BusFactor(g.Size))
				}
				rows = append(rows, r)
			}
		}
	}
	return rows, nil
}
