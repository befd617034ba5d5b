package torus

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/network/topology"
)

// RAMP Fig. 15: a 2D-torus reduce-scatter on X × Y nodes takes X + Y − 2 steps; the ring p − 1.
func TestSteps(t *testing.T) {
	cfg := DefaultConfig()
	lay := topology.Levels(cfg.Tiers(), network.Group{Size: 65536, Stride: 1})
	for _, c := range []struct {
		alg  collective.Flow
		want int
	}{{collective.Torus2D, 128 + 512 - 2}, {collective.Ring, 65535}} {
		if got := collective.Price(levels(t, c.alg, network.ReduceScatter, 1e9, lay), nil, dtype.FP16).Steps; int(got) != c.want {
			t.Errorf("%s: %d steps, want %d", c.alg.Name(), got, c.want)
		}
	}
}

// Each of the 4 ports carries 2.4/4 = 600 Gb/s; a ring along x runs at that rate with 100 + 156 ns
// per step, and the bidirectional ring halves the bytes per step.
func TestRing(t *testing.T) {
	m, err := Spec().New(DefaultConfig(), network.Env{GPUs: 128})
	if err != nil {
		t.Fatal(err)
	}
	col := network.Collective{Op: network.AllGather, Bytes: 1.28e9, Group: network.Group{Size: 128, Stride: 1}}
	cfg := DefaultConfig()
	cfg.Strategy = "ring"
	ring, _ := Spec().New(cfg, network.Env{GPUs: 128})
	c, _ := ring.Price(col)
	want := 127 * (256e-9 + 1e7/75e9)
	if math.Abs(float64(c.Total)-want) > 1e-12 {
		t.Errorf("ring all-gather %v, want %g", c.Total, want)
	}
	best, _ := m.Price(col)
	if best.Algorithm != "bidirectional ring" || math.Abs(float64(best.H2T)-float64(c.H2T)/2) > 1e-12 {
		t.Errorf("best %+v", best)
	}
}

func levels(t *testing.T, a collective.Algorithm, op network.Op, s units.Bytes, lay collective.Layout) collective.Schedule {
	t.Helper()
	sch, err := collective.Levels(a, op, s, lay)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

// routed prices one all-reduce of s bytes over the whole dx × dy torus (SiPAC's baseline: 1 µs
// per hop, no in-out time, 2,048 Gb/s per node over 4 ports) with strategy on the routed graph,
// or on the levels when routed is false.
func routed(t *testing.T, dx, dy int, strategy string, routed bool, s units.Bytes) network.Cost {
	t.Helper()
	c := DefaultConfig()
	c.DimX, c.DimY, c.NodeTbps, c.PropXNs, c.PropYNs, c.IONs, c.Strategy, c.Routed = dx, dy, 2.048, 1000, 1000, 0, strategy, routed
	m, err := Spec().New(c, network.Env{GPUs: dx * dy})
	if err != nil {
		t.Fatal(err)
	}
	cost, err := m.Price(network.Collective{Op: network.AllReduce, Bytes: s, Group: network.Group{Size: dx * dy, Stride: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return cost
}

// TestRouted checks the routed torus against closed forms counted by hand (port = 2,048/4 =
// 512 Gb/s = 64 GB/s, 1 µs per hop, no reduction compute):
//   - the ring (in snake order on the graph) and the 2D-torus algorithm cost what they cost on the
//     levels (neighbours are one hop apart either way; in rank order the end of a row is two
//     hops from the start of the next);
//   - the mesh sends S/p from every node to every other: with minimal routing split evenly, an
//     x link carries Y·X²/8 flows (Σ over a row of the shorter way round, X²/4, over the 2 x links
//     per node, times the Y rows) and a y link X·Y²/8; the longest path is X/2 + Y/2 hops. Two
//     steps: 2·((X+Y)/2 µs + max(Y·X², X·Y²)/8 · S/p / port);
//   - SiPAC Table II's H-Ring with k = X: 4(X−1) + 2(Y−1) steps of one hop and S/X bytes.
func TestRouted(t *testing.T) {
	const S, port, hop = 1e8, 64e9, 1e-6
	for _, d := range []struct{ x, y int }{{8, 8}, {16, 32}, {4, 8}} {
		for _, strat := range []string{"ring", "torus2d"} {
			lv, rt := routed(t, d.x, d.y, strat, false, S), routed(t, d.x, d.y, strat, true, S)
			if math.Abs(float64(rt.Total)/float64(lv.Total)-1) > 1e-9 {
				t.Errorf("%d×%d %s: routed %v, levels %v", d.x, d.y, strat, rt.Total, lv.Total)
			}
		}
		x, y, p := float64(d.x), float64(d.y), float64(d.x*d.y)
		mesh := 2 * ((x+y)/2*hop + max(y*x*x, x*y*y)/8*S/p/port)
		hring := (4*(x-1) + 2*(y-1)) * (hop + S/x/port)
		for _, c := range []struct {
			strat string
			want  float64
		}{{"mesh", mesh}, {"hring", hring}} {
			if got := routed(t, d.x, d.y, c.strat, true, S); math.Abs(float64(got.Total)/c.want-1) > 1e-9 {
				t.Errorf("%d×%d %s: %v, want %g s", d.x, d.y, c.strat, got.Total, c.want)
			}
		}
	}
	c := DefaultConfig()
	c.Strategy = "mesh"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "routed=true") {
		t.Errorf("mesh on the levels: %v, want a pointer to routed=true", err)
	}
	if err := fabric.CheckDistances(mustGraph(t, 6, 5)); err != nil {
		t.Error(err)
	}
}

func mustGraph(t *testing.T, x, y int) *fabric.Graph {
	t.Helper()
	c := DefaultConfig()
	c.DimX, c.DimY = x, y
	g, err := c.Fabric(x * y)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
