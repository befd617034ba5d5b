package fattree

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/fabric"
)

func config(endpoints int, taper float64) *Config {
	c := DefaultConfig()
	c.Endpoints, c.Taper = endpoints, taper
	return c
}

// HammingMesh App. A-C: the fat trees' switches and cables per plane (the appendix's counts).
// Table II's cost and diameter of these trees are rows of the reproduction table
// (internal/repro, hammingmesh/table2-*; the large 50% tapered tree's $418.26 M against the
// table's 419 is its documented deviation).
func TestBill(t *testing.T) {
	for _, c := range []struct {
		name               string
		endpoints          int
		taper              float64
		switches, dac, aoc int // per plane, App. A-C
	}{
		{"small non-blocking", 1024, 1, 48, 1024, 1024},
		{"small 50%", 1050, 0.5, 34, 1050, 550},
		{"small 75%", 1071, 0.25, 26, 1071, 273},
		{"large non-blocking", 16384, 1, 1280, 16384, 32768},
		{"large 50%", 16380, 0.5, 794, 16380, 17160},
		{"large 75%", 16422, 0.25, 519, 16422, 8372},
	} {
		s, err := config(c.endpoints, c.taper).Structure()
		if err != nil {
			t.Fatal(err)
		}
		b := s.Bill
		if b.Switches != c.switches || b.DAC != c.dac || b.AoC != c.aoc {
			t.Errorf("%s: %d switches, %d DAC, %d AoC per plane; App. A-C %d, %d, %d", c.name, b.Switches, b.DAC, b.AoC, c.switches, c.dac, c.aoc)
		}
	}
}

// The closed-form distance equals the exact search on two- and three-level trees, and the
// diameter is the longest of them.
func TestDistance(t *testing.T) {
	for _, c := range []*Config{
		{Radix: 8, Endpoints: 30, Taper: 1}, {Radix: 8, Endpoints: 33, Taper: 0.5}, {Radix: 4, Endpoints: 14, Taper: 1},
		{Radix: 4, Endpoints: 15, Taper: 1, Levels: 3},
	} {
		d := DefaultConfig()
		c.LinkGbit, c.CostPlanes, c.Common, c.Prices = d.LinkGbit, d.CostPlanes, d.Common, d.Prices
		g, err := c.Fabric()
		if err != nil {
			t.Fatal(err)
		}
		exact := fabric.NewLazyDist(g)
		longest := int32(0)
		for u := int32(0); int(u) < g.Nodes(); u++ {
			for dst := int32(0); int(dst) < g.Endpoints; dst++ {
				if a, b := g.Distance(u, dst), exact.Dist(u, dst); a != b {
					t.Fatalf("radix %d, %d endpoints, %d levels: dist(%d, %d) = %d, exact %d", c.Radix, c.Endpoints, c.Depth(), u, dst, a, b)
				}
				if int(u) < g.Endpoints {
					longest = max(longest, exact.Dist(u, dst))
				}
			}
		}
		// The next hops the router takes from the oracle are those a scan of the out-links finds.
		if err := fabric.CheckNext(g, 1); err != nil {
			t.Errorf("radix %d, %d levels: %v", c.Radix, c.Depth(), err)
		}
		if s, _ := c.Structure(); int(longest) != s.Diameter {
			t.Errorf("radix %d, %d levels: longest path %d cables, diameter %d", c.Radix, c.Depth(), longest, s.Diameter)
		}
	}
}

// A tapered tree's leaf keeps up/down of its bandwidth: a uniform all-to-all over the 50%
// tapered small tree sends 1,050 − 42 of every 1,049 destinations' traffic over a leaf's 22
// uplinks, so the uplinks carry 42·(1,008/1,049)/22 of an endpoint link's load: the share of the
// injection rate is 22·1,049/(42·1,008) = 54.5% (hand count; Table II's packet simulation 51.2%).
func TestTaperedAllToAll(t *testing.T) {
	c := config(1050, 0.5)
	m, err := Spec().New(c, network.Env{GPUs: 1050})
	if err != nil {
		t.Fatal(err)
	}
	cost, err := m.Price(network.Collective{Op: network.AllToAll, Bytes: 1050 << 20, Group: network.Group{Size: 1050, Stride: 1}, DType: dtype.FP32})
	if err != nil || cost.Algorithm != "linear" {
		t.Fatalf("%+v %v", cost, err)
	}
	sent := float64(1049<<20) / 200e9 // each endpoint's bytes at its link rate
	share := sent / float64(cost.H2T)
	if want := 22 * 1049.0 / (42 * 1008); math.Abs(share-want) > 1e-9 {
		t.Errorf("all-to-all share %.4f, hand count %.4f", share, want)
	}
	if cost.Bottleneck != "leaf uplink" {
		t.Errorf("bottleneck %q", cost.Bottleneck)
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.Taper = 0 }, "taper 0 must be in (0, 1]"},
		{func(c *Config) { c.Taper = 1.5 }, "taper 1.5"},
		{func(c *Config) { c.Levels = 2; c.Endpoints = 16384 }, "2-level tree"},
		{func(c *Config) { c.Routing = "ospf" }, `routing "ospf"`},
		{func(c *Config) { c.Strategy = "rings" }, `strategy "rings"`},
	} {
		cfg := DefaultConfig()
		c.set(cfg)
		err := cfg.Validate()
		if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	if _, err := Spec().New(DefaultConfig(), network.Env{GPUs: 2048}); errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "1024") {
		t.Errorf("oversized job: %v", err)
	}
}

// Collectives that overlap in time share links, by hand on a radix-8 tree (4 endpoints per leaf,
// 200 GB/s links): a ring all-reduce of S over ranks 0–3 puts 2·3·S/4 = 1.5·S on each endpoint
// link, one over ranks {0, 4} (two leaves) 2·S/2 = S. Alone they take 1.5·S/B and S/B of
// transfer; together rank 0's uplink must carry 2.5·S, so both take 2.5·S/B. Two copies of the
// first take 3·S/B each; one collective alone is priced as by Price. Called twice in the window,
// the leaf ring and one cross-leaf call load rank 0's uplink with 2·1.5·S + S = 4·S: the two leaf
// calls take 4·S/B together (2·S/B each), the cross-leaf call 4·S/B.
func TestPriceConcurrent(t *testing.T) {
	c := config(16, 1)
	c.Radix, c.Strategy = 8, "ring"
	m, err := Spec().New(c, network.Env{GPUs: 16})
	if err != nil {
		t.Fatal(err)
	}
	const S, B = 1e9, 200e9
	leaf := network.Collective{Op: network.AllReduce, Bytes: S, Group: network.Group{Size: 4, Stride: 1, Concurrent: 1}, DType: dtype.FP32}
	across := network.Collective{Op: network.AllReduce, Bytes: S, Group: network.Group{Size: 2, Stride: 4, Concurrent: 1}, DType: dtype.FP32}
	ov := m.(network.Overlapping)
	near := func(got units.Seconds, want float64) bool { return math.Abs(float64(got)/want-1) < 1e-9 }
	alone, _ := m.Price(leaf)
	one, err := ov.PriceConcurrent([]network.Concurrent{{Collective: leaf}})
	if err != nil || one[0] != alone || !near(alone.H2T, 1.5*S/B) {
		t.Errorf("alone: %+v, concurrent with nothing %+v (%v); transfer by hand %.6g s", alone, one, err, 1.5*S/B)
	}
	both, err := ov.PriceConcurrent([]network.Concurrent{{Collective: leaf}, {Collective: across, Calls: 1}})
	if err != nil || !near(both[0].H2T, 2.5*S/B) || !near(both[1].H2T, 2.5*S/B) || !near(both[0].Total-both[0].H2T, float64(alone.Total-alone.H2T)) {
		t.Errorf("leaf ring with the cross-leaf ring: %+v (%v); want transfers of %.6g s", both, err, 2.5*S/B)
	}
	twice, _ := ov.PriceConcurrent([]network.Concurrent{{Collective: leaf}, {Collective: leaf}})
	if !near(twice[0].H2T, 3*S/B) || twice[0] != twice[1] {
		t.Errorf("two copies: %+v; want %.6g s each", twice, 3*S/B)
	}
	calls, err := ov.PriceConcurrent([]network.Concurrent{{Collective: leaf, Calls: 2}, {Collective: across, Calls: 1}})
	if err != nil || !near(calls[0].H2T, 2*S/B) || !near(calls[1].H2T, 4*S/B) || calls[1].Bottleneck == "" {
		t.Errorf("two leaf calls with one cross-leaf call: %+v (%v); want %.6g and %.6g s per call", calls, err, 2*S/B, 4*S/B)
	}
}
