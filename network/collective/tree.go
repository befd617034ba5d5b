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
// It spans the whole group, so its stages run at the pace of the critical link.
func Tree(op network.Op, s units.Bytes, lay Layout) (Schedule, bool) {
	act := active(lay.Levels)
	p := lay.members()
	sch := Schedule{Algorithm: "binary tree"}
	switch op {
	case network.Broadcast, network.Reduce, network.AllReduce:
	default:
		return sch, false
	}
	if p <= 1 {
		return sch, true
	}
	link := critical(act)
	depth := max(1, bits.Len(uint(p))-1)
	// Two children per stage: the chain optimum for twice the bytes.
	k := PipelineChunks(2*s, depth, link)
	c := s / units.Bytes(k)
	down := Step{Link: link, Bytes: 2 * c, Repeat: k + depth - 1}
	up := Step{Link: link, Bytes: 2 * c, FanIn: 3, ReduceBytes: c, Repeat: k + depth - 1}
	switch op {
	case network.Broadcast:
		sch.Steps = []Step{down}
	case network.Reduce:
		sch.Steps = []Step{up}
	case network.AllReduce:
		sch.Steps = []Step{up, down}
	}
	return sch, true
}
