package collective

import (
	"math/bits"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Tree is a pipelined binary tree over every member (the tree of NCCL and MPICH): depth
// d = ⌈log2(p+1)⌉ − 1 links from the root to the deepest leaf, each node forwarding every chunk to
// two children one after the other (single port), so a stage of chunk c costs α + 2c/B. With k
// chunks a pass takes k + d − 1 stages, k chosen as for the pipelined chain.
//
//	broadcast   one pass from the root
//	reduce      one pass towards the root, each stage ending in a 3-to-1 reduction
//	all-reduce  reduce then broadcast
//
// It spans the whole group, so on levels its stages run at the pace of the critical link; as
// flows every parent sends its chunk to both children in one round (TreeDown) and the fabric
// finds the busiest link (the parent's port, which carries both).
var Tree = Flow{name: "tree", summary: "pipelined binary tree (broadcast, reduce, all-reduce)",
	ops: Ops(network.Broadcast, network.Reduce, network.AllReduce), rounds: treeRounds, bound: treeBound}

func treeRounds(op network.Op, s units.Bytes, g Members, out *Flows) error {
	out.Algorithm = "binary tree"
	p := g.P()
	if p <= 1 {
		return nil
	}
	depth := max(1, bits.Len(uint(p))-1)
	down := One(Part{Kind: TreeDown})
	// The round's link already carries both children's chunks on the parent's port.
	l, err := g.Link(down)
	if err != nil {
		return err
	}
	k := PipelineChunks(s, depth, l)
	c := s / units.Bytes(k)
	d := Round{Pattern: down, Bytes: c, Repeat: k + depth - 1}
	u := Round{Pattern: One(Part{Kind: TreeUp}), Bytes: c, FanIn: 3, ReduceBytes: c, Repeat: k + depth - 1}
	switch op {
	case network.Broadcast:
		out.add(d)
	case network.Reduce:
		out.add(u)
	case network.AllReduce:
		out.add(u)
		out.add(d)
	}
	return nil
}

// treeBound bounds the tree's price below whatever its chunk count k: a pass of k + d − 1
// stages of S/k bytes over a link of latency α and bandwidth B costs
//
//	(k + d − 1)·(α + S/(k·B)) + reductions ≥ d·α + S/B   (k ≥ 1, reductions ≥ 0),
//
// so with α and B bounded by link(pattern) each pass costs at least d·α + S/B.
func treeBound(op network.Op, s units.Bytes, g Members, link func(Pattern) Link) (units.Seconds, bool) {
	p := g.P()
	if p <= 1 {
		return 0, true
	}
	depth := max(1, bits.Len(uint(p))-1)
	pass := func(k PartKind) units.Seconds {
		l := link(One(Part{Kind: k}))
		return units.Seconds(depth)*l.Latency + s.Over(l.Bandwidth)
	}
	switch op {
	case network.Broadcast:
		return pass(TreeDown), true
	case network.Reduce:
		return pass(TreeUp), true
	case network.AllReduce:
		return pass(TreeUp) + pass(TreeDown), true
	}
	return 0, false
}
