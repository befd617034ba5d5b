package job

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
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
	// Pattern, when set, prices raw traffic (Patterns) instead of Ops: Sizes are per flow; Root
	// is the rooted patterns' member (−1: drawn from Seed).
	Pattern string
	Root    int
	Seed    uint64
}

// A Pattern is raw traffic without a collective algorithm (SiPAC Figs. 10–11: "without assuming
// any specific collective algorithm"), each flow carrying the size given (the per-flow reading
// of the paper's message size, reference/sipac.md §7.10).
type Pattern struct {
	Name, Summary string
	Rooted        bool
	Part          collective.PartKind
}

// Patterns lists the raw patterns (--pattern).
func Patterns() []Pattern {
	return []Pattern{
		{Name: "one-to-all", Summary: "the root sends the size to every other member at once (a broadcast without an algorithm)", Rooted: true, Part: collective.FromRoot},
		{Name: "all-to-one", Summary: "every other member sends the size to the root at once (an incast)", Rooted: true, Part: collective.ToRoot},
		{Name: "all-to-all", Summary: "every member sends the size to every other member at once", Part: collective.Uniform},
	}
}

// LookupPattern finds a pattern by name.
func LookupPattern(name string) (Pattern, error) {
	var names []string
	for _, p := range Patterns() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Pattern{}, errs.Usage("--pattern %q is not a traffic pattern; valid: %s", name, strings.Join(names, ", "))
}

// patternPricer is a network that routes raw traffic (a routed fabric).
type patternPricer interface {
	PricePattern(name string, pt collective.Pattern, bytes units.Bytes, g network.Group) (network.Cost, error)
}

// graphed is a network configuration with a routed graph besides its own model (SuperPod's
// levels are exact for collectives; its graph carries raw patterns).
type graphed interface {
	Fabric(gpus int) (*fabric.Graph, error)
}

// patterns prices o.Pattern on a job of n GPUs for every size.
func patterns(o CollectiveOptions, net network.Model, cfg network.Config, env network.Env, g network.Group, rows []CollectiveRow) ([]CollectiveRow, error) {
	pat, err := LookupPattern(o.Pattern)
	if err != nil {
		return nil, err
	}
	pp, ok := net.(patternPricer)
	if !ok {
		gr, isGraph := cfg.(graphed)
		if !isGraph {
			return nil, errs.Usage("network %s prices collectives on levels, not raw traffic; --pattern needs a routed network (sipac, bcube, fattree, hxmesh, dragonfly, superpod, torus, alphabeta)", net.Name())
		}
		fg, err := gr.Fabric(env.GPUs)
		if err != nil {
			return nil, err
		}
		fm, err := fabric.NewModel(fg, env, fabric.Options{Name: net.Name()})
		if err != nil {
			return nil, err
		}
		pp = fm
	}
	root := o.Root
	if pat.Rooted {
		if root >= g.Size {
			return nil, errs.Usage("--root %d is not a member of the group of %d (0–%d)", root, g.Size, g.Size-1)
		}
		if root < 0 {
			root = rand.New(rand.NewPCG(o.Seed, uint64(g.Size))).IntN(g.Size)
		}
	}
	pt := collective.One(collective.Part{Kind: pat.Part, Stride: 1, Size: int32(g.Size), K: int32(root)})
	name := pat.Name
	if pat.Rooted {
		name = fmt.Sprintf("%s (root %d)", pat.Name, root)
	}
	for _, s := range o.Sizes {
		c, err := pp.PricePattern(name, pt, s, g)
		if err != nil {
			return nil, err
		}
		r := CollectiveRow{Op: network.AllToAll, Pattern: pat.Name, GPUs: env.GPUs, Group: g, Bytes: s, Network: net.Name(), Cost: c}
		if c.Total > 0 { // per flow; no bus factor for raw traffic
			r.AlgBW = units.BytesPerSecond(float64(s) / float64(c.Total))
			r.BusBW = r.AlgBW
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// CollectiveRow is one priced collective.
type CollectiveRow struct {
	Op      network.Op
	Pattern string // a raw pattern's name (Op is then meaningless)
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
		net, cfg, err := buildNetwork(o.Cluster, o.Network, env)
		if err != nil {
			return nil, err
		}
		if o.Pattern != "" {
			if rows, err = patterns(o, net, cfg, env, base, rows); err != nil {
				return nil, err
			}
			continue
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
