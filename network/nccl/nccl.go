package nccl

import (
	"math"
	"math/bits"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Arch is the GPU generation whose NCCL tables apply; Off turns the model off.
type Arch int

const (
	Off Arch = iota
	Volta
	Ampere
	Hopper
)

// ArchNames are the values of the nccl parameter.
var ArchNames = []string{"off", "volta", "ampere", "hopper"}

// CPU is the host CPU vendor (NCCL's network post overhead and LL cap across nodes).
type CPU int

const (
	Intel CPU = iota
	AMD
)

// CPUNames are the values of nccl_cpu.
var CPUNames = []string{"intel", "amd"}

// Algo is NCCL's algorithm (NCCL_ALGO); AlgoAuto lets the model choose.
type Algo int

const (
	AlgoAuto Algo = iota
	Ring
	Tree
)

// AlgoNames are the values of nccl_algo.
var AlgoNames = []string{"auto", "ring", "tree"}

// Proto is NCCL's protocol (NCCL_PROTO); ProtoAuto lets the model choose.
type Proto int

const (
	ProtoAuto Proto = iota
	LL
	LL128
	Simple
)

// ProtoNames are the values of nccl_proto.
var ProtoNames = []string{"auto", "ll", "ll128", "simple"}

// Config selects NCCL's tables and overrides.
type Config struct {
	Arch  Arch
	CPU   CPU
	Algo  Algo
	Proto Proto
	// NICEfficiency is the share of a NIC's line rate NCCL reaches.
	NICEfficiency float64
}

// On reports whether the model is on.
func (c Config) On() bool { return c.Arch != Off }

// Comm is what NCCL sees of one communicator.
type Comm struct {
	Ranks, Nodes int
	// NVLink is one GPU's NVLink bandwidth, each direction, at line rate (25 GB/s per link).
	NVLink units.BytesPerSecond
	// NIC is one rank's network bandwidth at line rate (its own NIC on a rail-optimised node).
	NIC units.BytesPerSecond
}

// Indices of NCCL's tables: algorithms tree, ring; protocols LL, LL128, Simple; hardware NVLink,
// network.
const (
	tree, ring          = 0, 1
	pLL, pLL128, pSimpl = 0, 1, 2
	hwNVLink, hwNet     = 0, 1
)

// baseLat is the per-call latency in µs [P] NCCL 2.20.3 tuning.cc baseLat (Tree, Ring × LL, LL128, Simple).
var baseLat = [2][3]float64{{6.8, 14.0, 0}, {6.6, 14.0, 8.4}}

// hwLat is the per-step latency in µs [P] NCCL 2.20.3 tuning.cc hwLat, NVLink and NET rows.
var hwLat = [2][2][3]float64{
	hwNVLink: {tree: {.6, 1.25, 28}, ring: {.6, 1.9, 3.4}},
	hwNet:    {tree: {5.0, 8.5, 28}, ring: {2.7, 4.0, 14.0}},
}

// nvlinkGBps is NCCL's model of one NVLink's bandwidth (GB/s) [P] NCCL topo.h SM70_NVLINK_BW 20.0,
// SM80_NVLINK_BW 20.0, SM90_NVLINK_BW 20.6; a link of NVLink 2, 3 and 4 carries 25 GB/s each way
// [X] NVIDIA V100/A100/H100 datasheets (300/600/900 GB/s over 6/12/18 links, both directions).
var nvlinkGBps = [...]float64{Volta: 20, Ampere: 20, Hopper: 20.6}

const nvlinkLineGBps = 25

// llMaxBw caps LL's bus bandwidth (GB/s) [P] NCCL 2.20.3 tuning.cc llMaxBws: one node by GPU
// generation, across nodes by CPU vendor; columns 1, 2, more nodes.
var llMaxBw = [...][3]float64{
	Volta: {39.0, 39.0, 20.4}, Ampere: {87.7, 22.5, 19.0}, Hopper: {87.7, 22.5, 19.0},
}

// llMaxBwNet is llMaxBws's rows across nodes: Intel (row 0), AMD (row 1).
var llMaxBwNet = [...][3]float64{Intel: {39.0, 39.0, 20.4}, AMD: {87.7, 22.5, 19.0}}

// netOverheadUs is the network post overhead per ring step across nodes [P] NCCL 2.20.3
// tuning.cc getNetOverhead (×3 for Simple).
var netOverheadUs = [...]float64{Intel: 1, AMD: 2}

// treeCorrection multiplies the tree's bandwidth by size, powers of two from 64 B to 256 MB
// (index ⌊log2(S/64)⌋) [P] NCCL 2.20.3 tuning.cc treeCorrectionFactor.
var treeCorrection = [3][23]float64{
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}

// names are the Cost.Algorithm strings, static per (algorithm, protocol).
var names = [2][3]string{
	tree: {"nccl tree/LL", "nccl tree/LL128", "nccl tree/Simple"},
	ring: {"nccl ring/LL", "nccl ring/LL128", "nccl ring/Simple"},
}

// NVLS (NVLink SHARP, Hopper's in-switch all-reduce) in one node: latency [P] NCCL 2.20.3
// tuning.cc hwLat NVLink NVLS Simple (23 µs, no base latency); algorithm bandwidth ≈275 GB/s on 8
// H100s whose NVLink carries 450 GB/s each way [P] sjeaugey (NVIDIA), nccl-tests issue #212,
// 2024-05-06: "On 8 GPUs, you should reach a peak busBw of ~480GB/s (algbw ~275GB/s)".
const (
	hwNVLSUs     = 23
	nvlsAlgShare = 275.0 / 450
	nvlsName     = "nccl nvls/Simple"
)

const p2pName = "nccl p2p/Simple"

// channelCounts are the channels NCCL runs an 8-GPU node's communicator with, one CTA on its own
// SM each (network.Cost.SMs): ring and tree collectives within one node and across nodes, NVLS,
// and point-to-point calls (all of a node's p2p channels within it; across nodes, all of them for
// an all-to-all and the per-peer ones for one send/receive).
type channelCounts struct{ collNode, collNet, nvls, p2pNode, p2pNet, p2pPeerNet int32 }

// channels by GPU generation [P] aws-samples/aws-do-eks Container-Root/eks/deployment/nccl-test/
// README.md @701c554a, NCCL's INFO lines on p5.48xlarge (8 H100 SXM): one node "24 coll channels,
// 16 nvls channels, 32 p2p channels, 32 p2p channels per peer", two nodes "16 coll channels, 16
// nvls channels, 16 p2p channels, 2 p2p channels per peer" [D: the two-node counts stand for every
// multi-node communicator]. One CTA per channel holds its SM [P] sjeaugey (NVIDIA), NVIDIA/nccl
// issue #689: "NCCL CTAs won't share an SM with compute kernels". Volta and Ampere: not measured
// (0, no SMs charged).
var channels = [...]channelCounts{Hopper: {collNode: 24, collNet: 16, nvls: 16, p2pNode: 32, p2pNet: 16, p2pPeerNet: 2}}

// sms is the SMs a call of op holds on comm's GPUs, on nodes nodes (nvls: NVLink SHARP).
func (c Config) sms(op network.Op, nodes int, nvls bool) int32 {
	if int(c.Arch) >= len(channels) {
		return 0
	}
	ch, net := channels[c.Arch], nodes > 1
	switch {
	case nvls:
		return ch.nvls
	case op == network.SendRecv && net:
		return ch.p2pPeerNet
	case op == network.AllToAll && net:
		return ch.p2pNet
	case op == network.SendRecv || op == network.AllToAll:
		return ch.p2pNode
	case net:
		return ch.collNet
	}
	return ch.collNode
}

// Price prices op on comm; ok is false for the ops NCCL's model leaves to the network (scatter,
// gather, barrier) and for a single rank.
func (c Config) Price(op network.Op, s units.Bytes, comm Comm) (cost network.Cost, ok bool) {
	n, nodes := comm.Ranks, max(1, min(comm.Nodes, comm.Ranks))
	if n <= 1 {
		return network.Cost{Algorithm: "none"}, op != network.Scatter && op != network.Gather && op != network.Barrier
	}
	ppn := float64(n) / float64(nodes)
	nv := comm.NVLink * units.BytesPerSecond(nvlinkGBps[c.Arch]/nvlinkLineGBps)
	nic := comm.NIC * units.BytesPerSecond(c.NICEfficiency)
	bus, bottleneck := nv, "nvlink"
	if net := units.BytesPerSecond(ppn) * nic; nodes > 1 && (nv <= 0 || net < nv) {
		bus, bottleneck = net, "network" // a node without NVLink holds one rank
	}
	if !(bus > 0) {
		return network.Cost{}, false
	}
	var steps, netSteps int
	switch op {
	case network.AllReduce:
		steps = 2 * (n - 1)
		if nodes > 1 {
			netSteps = 2 * nodes
		}
	case network.ReduceScatter, network.AllGather:
		steps, netSteps = n-1, nodes-1
	case network.Broadcast, network.Reduce:
		steps, netSteps = n, nodes
	case network.AllToAll, network.SendRecv:
		cost := c.p2p(op, s, n, ppn, nv, nic, nodes > 1)
		cost.SMs = c.sms(op, nodes, false)
		return cost, true
	default:
		return network.Cost{}, false
	}
	best, bestSel := network.Cost{}, units.Seconds(math.Inf(1))
	// try weighs algorithm name with base and whole latencies in µs (NCCL's tables) at bandwidth bw.
	try := func(name string, steps int, base, lat float64, bw units.BytesPerSecond) {
		h2t := s.Over(bw)
		if sel := units.Us(lat) + h2t; sel < bestSel { // NCCL's choice: latency plus transfer
			// The time charged keeps the call's base latency and overlaps the per-step
			// latencies with the pipelined transfer (doc.go).
			h2h, fill := units.Us(base), units.Us(lat-base)
			best, bestSel = network.Cost{Algorithm: name, Steps: int32(steps), H2H: h2h + units.Max(0, fill-h2t),
				H2T: h2t, Total: h2h + units.Max(fill, h2t), Bottleneck: bottleneck}, sel
		}
	}
	if op == network.AllReduce && c.Arch == Hopper && nodes == 1 && c.Algo == AlgoAuto && (c.Proto == ProtoAuto || c.Proto == Simple) {
		try(nvlsName, 1, 0, hwNVLSUs, comm.NVLink*nvlsAlgShare)
	}
	for a := tree; a <= ring; a++ {
		if a == tree && (op != network.AllReduce || c.Algo == Ring) || a == ring && c.Algo == Tree && op == network.AllReduce {
			continue
		}
		for p := pLL; p <= pSimpl; p++ {
			if c.Proto != ProtoAuto && int(c.Proto)-1 != p {
				continue
			}
			lat, bw := c.model(op, a, p, n, nodes, ppn, steps, netSteps, bus)
			if a == tree {
				i := max(0, bits.Len64(uint64(s)>>6)-1)
				if i < len(treeCorrection[p]) {
					bw *= units.BytesPerSecond(treeCorrection[p][i])
				}
			}
			if a == ring && p == pSimpl && nodes > 1 && op == network.AllReduce {
				lat *= plateau(c.Arch)
			}
			try(names[a][p], steps, baseLat[a][p], lat, bw)
		}
	}
	best.SMs = c.sms(op, nodes, best.Algorithm == nvlsName)
	return best, true
}

// plateau is the Simple ring's latency factor across nodes [P] tuning.cc ncclTopoGetAlgoTime:
// 1.9 before compute capability 8.0, 1.4 from it.
func plateau(a Arch) float64 {
	if a == Volta {
		return 1.9
	}
	return 1.4
}

// model is NCCL's latency (µs) and algorithm bandwidth of algorithm a and protocol p on a bus
// of bandwidth bus. Every factor is NCCL's [P] 2.20.3 tuning.cc ncclTopoTuneModel ("Various model
// refinements", "Convert bus BW to algorithm BW", the latency sums); doc.go lists them.
func (c Config) model(op network.Op, a, p, n, nodes int, ppn float64, steps, netSteps int, bus units.BytesPerSecond) (lat float64, bw units.BytesPerSecond) {
	col := min(nodes, 3) - 1
	llCap := units.GBps(llMaxBw[c.Arch][col])
	if nodes > 1 {
		llCap = units.GBps(llMaxBwNet[c.CPU][col])
	}
	switch {
	case a == ring && p == pLL:
		f := units.BytesPerSecond(1.0 / 4)
		if nodes == 1 && (op == network.ReduceScatter || op == network.AllGather || op == network.Broadcast) {
			f = 1.0 / 3
		}
		bus = min(llCap, bus*f)
	case a == ring && p == pLL128:
		if ppn < 2 {
			bus *= 0.7
		} else {
			bus *= 0.92
		}
	case a == tree:
		bus *= 0.92
		switch p {
		case pLL:
			bus = min(bus/3.8, llCap)
		case pLL128:
			if nodes == 1 {
				bus *= 7.0 / 9
			} else {
				bus *= 120.0 / 128
			}
		}
	}
	intra, inter := hwLat[hwNVLink][a][p], hwLat[hwNet][a][p]
	lat = baseLat[a][p]
	if op == network.Broadcast || op == network.Reduce {
		// NCCL's rule for rooted rings whose channels differ: every step pays the hardware
		// latency, Simple the tree's chunk latency.
		hw := hwNVLink
		if nodes > 1 {
			hw = hwNet
		}
		step := hwLat[hw][ring][p]
		if p == pSimpl {
			step = hwLat[hw][tree][p]
		}
		return lat + float64(steps)*step, bus
	}
	if a == tree {
		return lat + 2*(float64(n/nodes-1)*intra+float64(bits.Len(uint(nodes))-1)*inter), bus / 2
	}
	if nodes > 1 {
		o := netOverheadUs[c.CPU]
		if p == pSimpl {
			o *= 3
		}
		intra = max(intra, o)
	}
	return lat + float64(steps-netSteps)*intra + float64(netSteps)*inter, bus * units.BytesPerSecond(float64(n)/float64(steps))
}

// p2p prices all-to-all and send/recv as grouped Simple point-to-point calls [D] (doc.go).
func (c Config) p2p(op network.Op, s units.Bytes, n int, ppn float64, nv, nic units.BytesPerSecond, net bool) network.Cost {
	hw := hwNVLink
	if net {
		hw = hwNet
	}
	lat := units.Us(baseLat[ring][pSimpl] + hwLat[hw][ring][pSimpl])
	var t units.Seconds
	bottleneck := "nvlink"
	switch {
	case op == network.SendRecv && net:
		t, bottleneck = s.Over(nic), "network"
	case op == network.SendRecv:
		t = s.Over(nv)
	default:
		share := float64(s) / float64(n)
		intra := units.Bytes((ppn - 1) * share).Over(nv) // none without NVLink: one rank per node
		inter := units.Bytes((float64(n) - ppn) * share).Over(nic)
		t = units.Max(intra, inter)
		if inter > intra {
			bottleneck = "network"
		}
	}
	return network.Cost{Algorithm: p2pName, Steps: 1, H2H: lat, H2T: t, Total: lat + t, Bottleneck: bottleneck}
}
