package hxmesh

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/fabric"
)

func mesh(a, x int, global string) *Config {
	c := DefaultConfig()
	c.BoardA, c.BoardB, c.GridX, c.GridY, c.Global = a, a, x, x, global
	return c
}

// HammingMesh App. A-C (reference/hammingmesh.md §3.3): switches, DAC and AoC per plane, hand
// counts from the appendix's formulas, and the relative bisection 1/(2a) (§III-A). Table II's
// cost and diameter of these networks are rows of the reproduction table (internal/repro,
// hammingmesh/table2-*). The large HyperX's switch count is the cost's 3,072 per plane (the
// text's "24,576 switches" would price at $623.7 M, §3.3 [AMB]); the torus prices its cables as
// AoC (Table II; the text's DAC gives $1.1 M small, §3.2 [AMB]).
func TestBill(t *testing.T) {
	for _, c := range []struct {
		name               string
		cfg                *Config
		switches, dac, aoc int
		bisection          float64
	}{
		{"small HyperX", mesh(1, 32, "trees"), 64, 2048, 2048, 0.5},
		{"small Hx2Mesh", mesh(2, 16, "trees"), 32, 1024, 1024, 0.25},
		{"small Hx4Mesh", mesh(4, 8, "trees"), 16, 512, 512, 0.125},
		{"small torus", mesh(2, 16, "torus"), 0, 0, 1024, 1.0 / 32},
		{"large HyperX", mesh(1, 128, "trees"), 3072, 32768, 98304, 0.5},
		{"large Hx2Mesh", mesh(2, 64, "trees"), 1536, 16384, 49152, 0.25},
		{"large Hx4Mesh", mesh(4, 32, "trees"), 256, 8192, 8192, 0.125},
		{"large torus", mesh(2, 64, "torus"), 0, 0, 16384, 1.0 / 128},
	} {
		s, err := c.cfg.Structure()
		if err != nil {
			t.Fatal(err)
		}
		b := s.Bill
		if b.Switches != c.switches || b.DAC != c.dac || b.AoC != c.aoc {
			t.Errorf("%s: %d switches, %d DAC, %d AoC per plane; App. A-C %d, %d, %d", c.name, b.Switches, b.DAC, b.AoC, c.switches, c.dac, c.aoc)
		}
		if math.Abs(s.Bisection-c.bisection) > 1e-12 || s.Endpoints != c.cfg.Endpoints() || s.InjectionBps != 200e9 {
			t.Errorf("%s: bisection %g (want %g), %d endpoints, injection %g B/s", c.name, s.Bisection, c.bisection, s.Endpoints, s.InjectionBps)
		}
	}
	// The text's DAC reading of the torus: 4 planes × 1,024 × $272.
	torus := mesh(2, 16, "torus")
	torus.TorusCable = "dac"
	if s, _ := torus.Structure(); s.Bill.CostUSD() != 4*1024*272 {
		t.Errorf("torus with DAC: $%.0f", s.Bill.CostUSD())
	}
}

// small builds a test fabric with the default shared parameters.
func small(a, b, x, y, radix int, global string) *Config {
	c := DefaultConfig()
	c.BoardA, c.BoardB, c.GridX, c.GridY, c.Radix, c.Global = a, b, x, y, radix, global
	return c
}

// The row-plus-column distance equals the exact search, and the product next hops the scan of
// out-links, on boards of several shapes, with single
// switches, two-level trees (radix 8: 2·8 = 16 ports need 4 leaves) and torus cables.
func TestDistance(t *testing.T) {
	for _, c := range []*Config{small(2, 2, 4, 4, 64, "trees"), small(4, 4, 3, 2, 64, "trees"), small(1, 1, 6, 5, 64, "trees"),
		small(2, 2, 8, 8, 8, "trees"), small(3, 2, 3, 4, 64, "trees"), small(2, 2, 3, 4, 64, "torus"), small(1, 1, 5, 4, 64, "torus")} {
		g, err := c.Fabric()
		if err != nil {
			t.Fatal(err)
		}
		if err := fabric.CheckDistances(g); err != nil {
			t.Fatalf("%s: %v", c.Describe(), err)
		}
		// The next hops the router takes from the oracle are those a scan of the out-links finds.
		if err := fabric.CheckNext(g, 1); err != nil {
			t.Errorf("%s: %v", c.Describe(), err)
		}
	}
}

// The grid's listed positions (gridTable, the product distance's coordinates) are Coord's for
// every accelerator, and by hand on the large Hx4Mesh (boards of 4×4, 32 per row; an endpoint's
// board is e/16, board b at column b mod 32, row b/32 of boards; within a board e mod 16 is row
// (e mod 16)/4, column e mod 4): endpoint 5 is (1, 1), 16 (board 1) is (0, 4), 531 (board 33,
// 3) is (4, 7), 16383 is (127, 127).
func TestGridPositions(t *testing.T) {
	hand := map[int32][2]int32{5: {1, 1}, 16: {0, 4}, 531: {4, 7}, 16383: {127, 127}}
	for _, c := range []*Config{mesh(4, 32, "trees"), mesh(2, 64, "torus"), small(3, 2, 3, 4, 64, "trees")} {
		g, err := c.Fabric()
		if err != nil {
			t.Fatal(err)
		}
		gt, ok := gridOf(c, g).(fabric.GridTable)
		if !ok {
			t.Fatalf("%s: no listed positions", c.Describe())
		}
		rows, cols := gt.Positions()
		for e := int32(0); int(e) < c.Endpoints(); e++ {
			r, col := c.Coord(e)
			if int(rows[e]) != r || int(cols[e]) != col {
				t.Fatalf("%s: endpoint %d at (%d, %d), Coord (%d, %d)", c.Describe(), e, rows[e], cols[e], r, col)
			}
			if r2, col2 := gt.Coord(e); r2 != r || col2 != col {
				t.Fatalf("%s: endpoint %d at (%d, %d) from the table's Coord, Config's (%d, %d)", c.Describe(), e, r2, col2, r, col)
			}
		}
		if c.BoardA == 4 {
			for e, want := range hand {
				if rows[e] != want[0] || cols[e] != want[1] {
					t.Errorf("endpoint %d at (%d, %d), want %v", e, rows[e], cols[e], want)
				}
			}
		}
	}
}

// A uniform all-to-all over every accelerator routed towards the symmetry's representatives
// only equals the one routed towards every accelerator (single switches, and two-level trees
// whose translations move by a leaf's boards), alone and two at once.
func TestSymmetry(t *testing.T) {
	for _, c := range []*Config{small(2, 2, 4, 4, 64, "trees"), small(2, 2, 8, 8, 8, "trees"), small(2, 2, 4, 3, 64, "torus")} {
		g, err := c.Fabric()
		if err != nil {
			t.Fatal(err)
		}
		n := c.Endpoints()
		col := network.Collective{Op: network.AllToAll, Bytes: 1e9, Group: network.Group{Size: n, Stride: 1}, DType: dtype.FP32}
		c.Strategy = "linear"
		sym, err := Spec().New(c, network.Env{GPUs: n})
		if err != nil {
			t.Fatal(err)
		}
		// The same group shape, but as two concurrent halves would not be symmetric: compare
		// against a model of the same fabric whose symmetry is dropped.
		if err := g.SetSymmetry(&fabric.Symmetry{}); err == nil {
			t.Fatal("an empty symmetry was accepted")
		}
		c2 := *c
		plainG, _ := c2.Fabric()
		plain, _ := fabric.NewModel(fabric.WithoutSymmetry(plainG), network.Env{GPUs: n}, c2.Common.Options(Name, algorithms))
		a, err1 := sym.Price(col)
		b, err2 := plain.Price(col)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if a.Algorithm != "linear" || math.Abs(float64(a.H2T-b.H2T)) > 1e-9*float64(b.H2T) || math.Abs(float64(a.H2H-b.H2H)) > 1e-12 {
			t.Errorf("%s: symmetric %+v, every destination %+v", c.Describe(), a, b)
		}
		// Two such all-to-alls at once spread the symmetric loads over every link of an orbit:
		// each takes twice the transfer time, as with every destination routed.
		two := []network.Concurrent{{Collective: col}, {Collective: col}}
		as, err1 := sym.(network.Overlapping).PriceConcurrent(two)
		bs, err2 := plain.PriceConcurrent(two)
		if err1 != nil || err2 != nil || math.Abs(float64(as[0].H2T-bs[0].H2T)) > 1e-9*float64(bs[0].H2T) ||
			math.Abs(float64(as[0].H2T)/float64(2*a.H2T)-1) > 1e-9 {
			t.Errorf("%s: two at once, symmetric %+v, every destination %+v (%v, %v); alone %v", c.Describe(), as, bs, err1, err2, a.H2T)
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.Global = "ring" }, `global "ring"`},
		{func(c *Config) { c.GridX = 0 }, "grid_x 0"},
		{func(c *Config) { c.GridX, c.Radix = 2048, 64 }, "exceeds a two-level fat tree"},
		{func(c *Config) { c.Placement = "random" }, `placement "random"`},
	} {
		cfg := DefaultConfig()
		c.set(cfg)
		if err := cfg.Validate(); errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	if _, err := Spec().New(DefaultConfig(), network.Env{GPUs: 2000}); errs.ExitCode(err) != errs.ExitUsage ||
		!strings.Contains(err.Error(), "16×16 Hx2Mesh") || !strings.Contains(err.Error(), "1024 accelerators") {
		t.Errorf("oversized job: %v", err)
	}
}

// Models of different jobs share the graph's caches (routed rounds, grids) without mixing them
// up: GPT-3's tensor-parallel rings placed board by board and row by row price differently, and
// each as on a graph of its own (fresh caches), whichever was priced first.
func TestSharedCaches(t *testing.T) {
	col := network.Collective{Op: network.AllReduce, Bytes: 1e8, Group: network.Group{Size: 4, Stride: 96}, DType: dtype.FP16}
	env := network.Env{GPUs: 384}
	got := map[string]float64{}
	for _, placement := range []string{"board", "rows", "board"} {
		c := mesh(2, 16, "torus")
		c.Placement, c.Strategy = placement, "ring"
		shared, err := Spec().New(c, env)
		if err != nil {
			t.Fatal(err)
		}
		a, err := shared.Price(col)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := c.Fabric()
		opt := c.Common.Options(Name, algorithms)
		opt.Tiers, opt.Grid, opt.Placement = c.Tiers(), grid{c}, c.placement()
		own, err := fabric.NewModel(fabric.WithoutSymmetry(g), env, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := own.Price(col)
		if a != b {
			t.Errorf("placement %s: %+v with the shared caches, %+v on its own", placement, a, b)
		}
		got[placement] = float64(a.Total)
	}
	if got["board"] == got["rows"] {
		t.Errorf("board and row placements price alike (%v): the test cannot tell them apart", got)
	}
}
