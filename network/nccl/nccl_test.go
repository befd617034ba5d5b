package nccl

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// dgxA100 is one rank's view of a DGX A100: 12 NVLinks of 25 GB/s each way, one 200 Gb/s HDR NIC.
func dgxA100(ranks, nodes int) Comm {
	return Comm{Ranks: ranks, Nodes: nodes, NVLink: units.GBps(300), NIC: units.Gbps(200)}
}

var ampere = Config{Arch: Ampere, CPU: Intel, NICEfficiency: 0.96}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want)+1e-15 }

// TestHandCounts checks the chosen algorithm and its time against NCCL 2.20.3's tables worked by
// hand (µs): baseLat Tree {6.8, 14, 0}, Ring {6.6, 14, 8.4}; hwLat NVLink Tree {.6, 1.25, 28},
// Ring {.6, 1.9, 3.4}; NET Tree {5, 8.5, 28}, Ring {2.7, 4, 14}.
func TestHandCounts(t *testing.T) {
	const us = 1e-6
	for _, c := range []struct {
		name string
		cfg  Config
		op   network.Op
		s    units.Bytes
		comm Comm
		alg  string
		want float64 // seconds
	}{
		// One DGX, 8 B: ring LL 6.6 + 14·0.6 = 15.0 beats tree LL 6.8 + 2·7·0.6 = 15.2.
		{"8 A100 8 B", ampere, network.AllReduce, 8, dgxA100(8, 1), "nccl ring/LL", 15.0 * us},
		// 32 DGX (256 ranks), 8 B: tree LL 6.8 + 2·(7·0.6 + 5·5.0) = 65.2 (ring LL: 6.6 + 446·1 + 64·2.7).
		{"256 A100 8 B", ampere, network.AllReduce, 8, dgxA100(256, 32), "nccl tree/LL", 65.2 * us},
		// One DGX, 1 GB: Simple ring at 12·20 GB/s bus bandwidth: 8.4 µs + 1e9·14/8 / 240e9.
		{"8 A100 1 GB", ampere, network.AllReduce, 1e9, dgxA100(8, 1), "nccl ring/Simple", 8.4*us + 1e9*14.0/8/240e9},
		// Two DGX, 1 GB: the NICs bound the bus (8 · 25 GB/s · 0.96 = 192 GB/s); 30 steps.
		{"16 A100 1 GB", ampere, network.AllReduce, 1e9, dgxA100(16, 2), "nccl ring/Simple", 8.4*us + 1e9*30.0/16/192e9},
		// All-gather of 1 GB on one DGX: ring Simple, 7 steps, 8.4 µs base.
		{"8 A100 all-gather 1 GB", ampere, network.AllGather, 1e9, dgxA100(8, 1), "nccl ring/Simple", 8.4*us + 1e9*7.0/8/240e9},
		// H100 NVLS in one node: 23 µs, 275 GB/s of algorithm bandwidth (nccl-tests #212).
		{"8 H100 1 GB", Config{Arch: Hopper, NICEfficiency: 0.96}, network.AllReduce, 1e9,
			Comm{Ranks: 8, Nodes: 1, NVLink: units.GBps(450), NIC: units.Gbps(400)}, "nccl nvls/Simple", 1e9 / 275e9},
		// Forced ring on H100: NCCL's 18 · 20.6 = 370.8 GB/s ("370GB/s", nccl-tests #212).
		{"8 H100 ring 8 GB", Config{Arch: Hopper, Algo: Ring, NICEfficiency: 0.96}, network.AllReduce, 8e9,
			Comm{Ranks: 8, Nodes: 1, NVLink: units.GBps(450)}, "nccl ring/Simple", 8.4*us + 8e9*14.0/8/370.8e9},
		// All-to-all with every GPU a node of its own (alphabeta, no NVLink): 8.4 + 14 µs, then
		// 15/16 of 1 MB over the rank's 24 GB/s.
		{"all-to-all without NVLink", ampere, network.AllToAll, 1e6, Comm{Ranks: 16, Nodes: 16, NIC: units.Gbps(200)}, "nccl p2p/Simple", 22.4*us + 1e6*15.0/16/24e9},
		// Send/recv across nodes: Simple, 8.4 + 14 µs, then 24 GB/s.
		{"p2p across nodes", ampere, network.SendRecv, 1e6, dgxA100(2, 2), "nccl p2p/Simple", 22.4*us + 1e6/24e9},
	} {
		got, ok := c.cfg.Price(c.op, c.s, c.comm)
		if !ok || got.Algorithm != c.alg || !near(float64(got.Total), c.want) {
			t.Errorf("%s: %s %v (ok %v), want %s %v", c.name, got.Algorithm, got.Total, ok, c.alg, units.Seconds(c.want))
		}
		if !near(float64(got.Total), float64(got.H2H+got.H2T)) {
			t.Errorf("%s: total %v ≠ h2h %v + h2t %v", c.name, got.Total, got.H2H, got.H2T)
		}
	}
}

// TestOverrides: NCCL_ALGO and NCCL_PROTO restrict the choice.
func TestOverrides(t *testing.T) {
	comm := dgxA100(32, 4)
	suffix := map[Proto]string{LL: "/LL", LL128: "/LL128", Simple: "/Simple"}
	for _, s := range []units.Bytes{8, 1 << 16, 1 << 24, 1 << 30} {
		for _, f := range []Config{{Algo: Ring}, {Algo: Tree}, {Proto: LL}, {Proto: LL128}, {Proto: Simple}, {Algo: Tree, Proto: LL128}} {
			f.Arch, f.NICEfficiency = Ampere, 0.96
			got, ok := f.Price(network.AllReduce, s, comm)
			if !ok || got.Total <= 0 {
				t.Fatalf("%+v at %v: %v", f, s, got)
			}
			if f.Algo != AlgoAuto && !strings.HasPrefix(got.Algorithm, "nccl "+AlgoNames[f.Algo]+"/") {
				t.Errorf("%+v at %v: %s", f, s, got.Algorithm)
			}
			if f.Proto != ProtoAuto && !strings.HasSuffix(got.Algorithm, suffix[f.Proto]) {
				t.Errorf("%+v at %v: %s", f, s, got.Algorithm)
			}
		}
	}
}

// TestMonotone: time grows with size, and with ranks at a fixed size across nodes.
func TestMonotone(t *testing.T) {
	for _, op := range []network.Op{network.AllReduce, network.AllGather, network.ReduceScatter, network.Broadcast, network.AllToAll} {
		prev := 0.0
		for s := units.Bytes(8); s <= 8<<30; s *= 4 {
			c, ok := ampere.Price(op, s, dgxA100(64, 8))
			if !ok || float64(c.Total) < prev {
				t.Errorf("%v at %v: %v after %v", op, s, c.Total, prev)
			}
			prev = float64(c.Total)
		}
	}
}

// TestFallback: scatter, gather and barrier are left to the network; one rank costs nothing.
func TestFallback(t *testing.T) {
	for _, op := range []network.Op{network.Scatter, network.Gather, network.Barrier} {
		if _, ok := ampere.Price(op, 1e6, dgxA100(16, 2)); ok {
			t.Errorf("%v priced", op)
		}
	}
	if c, ok := ampere.Price(network.AllReduce, 1e6, dgxA100(1, 1)); !ok || c.Total != 0 {
		t.Errorf("one rank: %v %v", c, ok)
	}
}

// TestParams: every bad value is named at once.
func TestParams(t *testing.T) {
	p := DefaultParams()
	p.NCCL, p.Proto, p.NICEfficiency = "blackwell", "ll64", 1.5
	var pr params.Problems
	p.Check(&pr)
	err := pr.Err("network superpod")
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`nccl "blackwell" is not valid; valid: off, volta, ampere, hopper`, `nccl_proto "ll64"`, "nccl_nic_efficiency 1.5 must be in (0, 1]"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v lacks %q", err, want)
		}
	}
	p = DefaultParams()
	p.NCCL, p.Algo = "hopper", "tree"
	d := DefaultParams()
	if c := p.Config(); c.Arch != Hopper || c.Algo != Tree || !c.On() {
		t.Errorf("%+v", c)
	}
	if d.Config().On() {
		t.Error("on by default")
	}
}

// BenchmarkPrice is one collective through NCCL's model (no memo): every algorithm and protocol
// tried, no allocation.
func BenchmarkPrice(b *testing.B) {
	comm := dgxA100(1024, 128)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, ok := ampere.Price(network.AllReduce, units.Bytes(int64(1)<<(10+i%20)), comm); !ok {
			b.Fatal("not priced")
		}
	}
}

// TestChannels: the SMs a call holds are the channels NCCL logged on 8-H100 nodes
// (aws-samples/aws-do-eks nccl-test README @701c554a): one node "24 coll channels, 16 nvls
// channels, 32 p2p channels, 32 p2p channels per peer", two nodes "16 coll channels, 16 nvls
// channels, 16 p2p channels, 2 p2p channels per peer"; Ampere has no measured count (0).
func TestChannels(t *testing.T) {
	hopper := Config{Arch: Hopper, NICEfficiency: 0.96}
	h100 := func(ranks, nodes int) Comm {
		return Comm{Ranks: ranks, Nodes: nodes, NVLink: units.GBps(450), NIC: units.Gbps(400)}
	}
	for _, c := range []struct {
		name string
		cfg  Config
		op   network.Op
		comm Comm
		want int
	}{
		{"one node, ring all-gather", hopper, network.AllGather, h100(8, 1), 24},
		{"one node, NVLS all-reduce", hopper, network.AllReduce, h100(8, 1), 16},
		{"one node, forced ring all-reduce", Config{Arch: Hopper, Algo: Ring, NICEfficiency: 0.96}, network.AllReduce, h100(8, 1), 24},
		{"two nodes, reduce-scatter", hopper, network.ReduceScatter, h100(16, 2), 16},
		{"32 ranks on 8 nodes, reduce-scatter", hopper, network.ReduceScatter, h100(32, 8), 16},
		{"one node, all-to-all", hopper, network.AllToAll, h100(8, 1), 32},
		{"two nodes, all-to-all", hopper, network.AllToAll, h100(16, 2), 16},
		{"send/receive across nodes", hopper, network.SendRecv, h100(2, 2), 2},
		{"send/receive in a node", hopper, network.SendRecv, h100(2, 1), 32},
		{"A100, not measured", ampere, network.AllReduce, dgxA100(16, 2), 0},
	} {
		cost, ok := c.cfg.Price(c.op, 1e9, c.comm)
		if !ok || int(cost.SMs) != c.want {
			t.Errorf("%s: %s holds %d SMs (ok %v), want %d", c.name, cost.Algorithm, cost.SMs, ok, c.want)
		}
	}
}
