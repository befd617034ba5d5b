package collective

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Two switched levels: 8 members at 300 GB/s, 1 µs; 16 units at 25 GB/s, 4 µs.
func twoLevels() Layout {
	return Layout{Levels: []Level{
		{Size: 8, Link: Link{Latency: units.Us(1), Bandwidth: units.GBps(300)}},
		{Size: 16, Link: Link{Latency: units.Us(4), Bandwidth: units.GBps(25)}},
	}}
}

func uniform(sizes ...int) Layout {
	var ls []Level
	for _, s := range sizes {
		ls = append(ls, Level{Size: s, Link: Link{Bandwidth: units.GBps(10)}})
	}
	return Layout{Levels: ls}
}

// RAMP Fig. 15: algorithmic steps of a reduce-scatter — ring p−1, 2D-torus X+Y−2,
// hierarchical Σ(p_i − 1), recursive halving log2 p.
func TestStepCounts(t *testing.T) {
	levels := uniform(8, 20, 20, 4) // p = 12800
	cases := []struct {
		st   Strategy
		want int
	}{
		{StrategyRing, 12800 - 1},
		{StrategyHierarchical, 7 + 19 + 19 + 3},
		{StrategyTorus2D, 7 + (20*20*4 - 1)},
		{StrategyRHD, 13 + 1}, // ⌊log2 12800⌋ = 13 halvings + 1 fold-in (not a power of two)
	}
	for _, c := range cases {
		sch, _ := Build(c.st, network.ReduceScatter, 1e9, levels)
		if got := Price(sch, nil, dtype.FP16).Steps; got != c.want {
			t.Errorf("%s: %d steps, want %d", c.st, got, c.want)
		}
		// All-reduce doubles them (reduce-scatter + all-gather).
		sch, _ = Build(c.st, network.AllReduce, 1e9, levels)
		if got := Price(sch, nil, dtype.FP16).Steps; got != 2*c.want {
			t.Errorf("%s all-reduce: %d steps, want %d", c.st, got, 2*c.want)
		}
	}
}

// On uniform links every reduce-scatter/all-gather/all-reduce algorithm moves the same bytes:
// (p−1)/p·S per rank for reduce-scatter, so at zero latency they take the ring's time.
func TestSameBytesOnUniformLinks(t *testing.T) {
	levels := uniform(4, 8, 2) // p = 64, a power of two
	const S = 1e9
	for _, op := range []network.Op{network.ReduceScatter, network.AllGather, network.AllReduce} {
		want := op.BusFactor(64) * S / 10e9
		for _, st := range []Strategy{StrategyRing, StrategyHierarchical, StrategyTorus2D, StrategyRHD} {
			sch, _ := Build(st, op, S, levels)
			if got := float64(Price(sch, nil, dtype.FP16).Total); math.Abs(got-want) > 1e-9*want {
				t.Errorf("%s %s: %g s, want %g", st, op, got, want)
			}
		}
	}
}

// Hierarchical reduce-scatter on two levels, by hand: 7 steps of S/8 at 300 GB/s + 1 µs, then
// 15 steps of S/128 at 25 GB/s + 4 µs.
func TestHierarchicalByHand(t *testing.T) {
	const S = 1e9
	sch := Hierarchical(network.ReduceScatter, S, twoLevels())
	want := 7*(1e-6+S/8/300e9) + 15*(4e-6+S/128/25e9)
	if got := float64(Price(sch, nil, dtype.FP16).Total); math.Abs(got-want) > 1e-12 {
		t.Errorf("got %g s, want %g", got, want)
	}
	// All-to-all: a pairwise exchange of S/8 blocks in the node, then of S/16 blocks across units.
	sch = Hierarchical(network.AllToAll, S, twoLevels())
	want = 7*(1e-6+S/8/300e9) + 15*(4e-6+S/16/25e9)
	if got := float64(Price(sch, nil, dtype.FP16).Total); math.Abs(got-want) > 1e-12 {
		t.Errorf("all-to-all %g s, want %g", got, want)
	}
}

// Pairwise exchange on switched levels: 7 of the 127 steps stay in the 8-member unit.
func TestPairwiseLevels(t *testing.T) {
	const S = 128e6
	sch := Ring(network.AllToAll, S, twoLevels())
	want := 7*(1e-6+1e6/300e9) + 120*(4e-6+1e6/25e9)
	if c := Price(sch, nil, dtype.FP16); c.Steps != 127 || math.Abs(float64(c.Total)-want) > 1e-12 {
		t.Errorf("pairwise: %d steps, %v; want 127, %g s", c.Steps, c.Total, want)
	}
}

// On a physical ring of n nodes a block sent j positions away travels min(j, n−j) hops and each
// link carries that many blocks: Σ_j min(j, n−j) = n²/4 for even n.
func TestRingLevelHops(t *testing.T) {
	n := 8
	l := Layout{Levels: []Level{{Size: n, Ring: true, Link: Link{Latency: units.Us(1), Bandwidth: units.GBps(10)}}}}
	const S = 8e6
	c := Price(Ring(network.AllToAll, S, l), nil, dtype.FP16)
	hops := float64(n * n / 4) // 1+2+3+4+3+2+1 = 16
	if math.Abs(float64(c.H2T)-hops*(S/8)/10e9) > 1e-15 || math.Abs(float64(c.H2H)-hops*1e-6) > 1e-15 {
		t.Errorf("ring all-to-all H2T %v H2H %v, want %g hops", c.H2T, c.H2H, hops)
	}
}

// A bidirectional ring halves every step's bytes when the level has ± ports.
func TestBiRing(t *testing.T) {
	duplex := Layout{Levels: []Level{{Size: 16, Duplex: true, Link: Link{Bandwidth: units.GBps(10)}}}}
	one := Price(Ring(network.AllReduce, 1e9, duplex), nil, dtype.FP16)
	two := Price(BiRing(network.AllReduce, 1e9, duplex), nil, dtype.FP16)
	if math.Abs(float64(two.H2T)-float64(one.H2T)/2) > 1e-15 || two.Steps != one.Steps {
		t.Errorf("bidirectional %v vs ring %v", two, one)
	}
	simplex := flat(16, Link{Bandwidth: units.GBps(10)})
	if a, b := Price(BiRing(network.AllReduce, 1e9, simplex), nil, 0), Price(Ring(network.AllReduce, 1e9, simplex), nil, 0); a.Total != b.Total {
		t.Errorf("without duplex ports the bidirectional ring should equal the ring: %v vs %v", a, b)
	}
}

// Bruck all-to-all: ⌈log2 p⌉ steps of S/2.
func TestBruck(t *testing.T) {
	c := Price(RHD(network.AllToAll, 1e9, uniform(1000)), nil, dtype.FP16)
	if c.Steps != 10 || math.Abs(float64(c.H2T)-10*0.5e9/10e9) > 1e-12 {
		t.Errorf("Bruck %+v", c)
	}
}

// Binary-tree broadcast at zero latency: one chunk stream at half the link rate (two children).
func TestTree(t *testing.T) {
	sch, ok := Tree(network.Broadcast, 1e9, flat(64, Link{Bandwidth: units.GBps(10)}))
	if !ok {
		t.Fatal("tree broadcast missing")
	}
	if c := Price(sch, nil, dtype.FP16); math.Abs(float64(c.Total)-2*1e9/10e9) > 1e-3*0.2 {
		t.Errorf("tree broadcast %v, want → 2S/B = 0.2 s", c.Total)
	}
	if _, ok := Tree(network.AllToAll, 1, Layout{}); ok {
		t.Error("tree all-to-all should not exist")
	}
}

func TestEveryStrategyBasics(t *testing.T) {
	levels := twoLevels()
	for _, st := range []Strategy{StrategyRing, StrategyBiRing, StrategyHierarchical, StrategyTorus2D, StrategyRHD, StrategyTree} {
		for _, op := range network.Ops() {
			if _, ok := Build(st, op, 1, levels); !ok {
				continue
			}
			prev := units.Seconds(-1)
			for _, s := range []units.Bytes{0, 1, 1e3, 1e6, 1e9, 1e10} {
				sch, _ := Build(st, op, s, levels)
				c := Price(sch, nil, dtype.FP16)
				if c.Total < prev {
					t.Errorf("%s %s: time fell from %v to %v at %v", st, op, prev, c.Total, s)
				}
				prev = c.Total
			}
			sch, _ := Build(st, op, 1e9, flat(1, levels.Levels[0].Link))
			if c := Price(sch, nil, dtype.FP16); c.Total != 0 {
				t.Errorf("%s %s with one member: %v", st, op, c.Total)
			}
		}
	}
}

func TestPriceStrategy(t *testing.T) {
	ss := Strategies{Allowed: []Strategy{StrategyRing, StrategyHierarchical},
		Skip: func(st Strategy, op network.Op) bool { return st == StrategyHierarchical && op == network.AllToAll }}
	c := network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 128, Stride: 1}}
	best, err := ss.PriceStrategy("test", Best, c, twoLevels(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := ss.PriceStrategy("test", StrategyRing, c, twoLevels(), nil)
	hier, _ := ss.PriceStrategy("test", StrategyHierarchical, c, twoLevels(), nil)
	if best.Total != min(ring.Total, hier.Total) || best.Algorithm != "hierarchical ring" {
		t.Errorf("best %v, ring %v, hierarchical %v", best, ring, hier)
	}
	_, err = ss.PriceStrategy("test", StrategyRHD, c, twoLevels(), nil)
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "best, ring, hierarchical") {
		t.Errorf("disallowed strategy: %v", err)
	}
	c.Op = network.AllToAll
	if _, err := ss.PriceStrategy("test", StrategyHierarchical, c, twoLevels(), nil); err == nil {
		t.Error("skipped pair accepted")
	}
	if s, err := ParseStrategy("torus2d"); err != nil || s != StrategyTorus2D {
		t.Errorf("ParseStrategy: %v %v", s, err)
	}
}
