package collective

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Two switched levels: 8 members at 300 GB/s, 1 µs; 16 units at 25 GB/s, 4 µs.
func twoTiers() Layout {
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
		st   Flow
		want int
	}{
		{Ring, 12800 - 1},
		{Hierarchical, 7 + 19 + 19 + 3},
		{Torus2D, 7 + (20*20*4 - 1)},
		{RHD, 13 + 1}, // ⌊log2 12800⌋ = 13 halvings + 1 fold-in (not a power of two)
	}
	for _, c := range cases {
		sch := mustLevels(c.st, network.ReduceScatter, 1e9, levels)
		if got := Price(sch, nil, dtype.FP16).Steps; int(got) != c.want {
			t.Errorf("%s: %d steps, want %d", c.st.Name(), got, c.want)
		}
		// All-reduce doubles them (reduce-scatter + all-gather).
		sch = mustLevels(c.st, network.AllReduce, 1e9, levels)
		if got := Price(sch, nil, dtype.FP16).Steps; int(got) != 2*c.want {
			t.Errorf("%s all-reduce: %d steps, want %d", c.st.Name(), got, 2*c.want)
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
		for _, st := range []Flow{Ring, Hierarchical, Torus2D, RHD} {
			sch := mustLevels(st, op, S, levels)
			if got := float64(Price(sch, nil, dtype.FP16).Total); math.Abs(got-want) > 1e-9*want {
				t.Errorf("%s %s: %g s, want %g", st.Name(), op, got, want)
			}
		}
	}
}

// Hierarchical reduce-scatter on two levels, by hand: 7 steps of S/8 at 300 GB/s + 1 µs, then
// 15 steps of S/128 at 25 GB/s + 4 µs.
func TestHierarchicalByHand(t *testing.T) {
	const S = 1e9
	sch := mustLevels(Hierarchical, network.ReduceScatter, S, twoTiers())
	want := 7*(1e-6+S/8/300e9) + 15*(4e-6+S/128/25e9)
	if got := float64(Price(sch, nil, dtype.FP16).Total); math.Abs(got-want) > 1e-12 {
		t.Errorf("got %g s, want %g", got, want)
	}
	// All-to-all: a pairwise exchange of S/8 blocks in the node, then of S/16 blocks across units.
	sch = mustLevels(Hierarchical, network.AllToAll, S, twoTiers())
	want = 7*(1e-6+S/8/300e9) + 15*(4e-6+S/16/25e9)
	if got := float64(Price(sch, nil, dtype.FP16).Total); math.Abs(got-want) > 1e-12 {
		t.Errorf("all-to-all %g s, want %g", got, want)
	}
}

// Pairwise exchange on switched levels: 7 of the 127 steps stay in the 8-member unit.
func TestPairwiseLevels(t *testing.T) {
	const S = 128e6
	sch := mustLevels(Ring, network.AllToAll, S, twoTiers())
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
	c := Price(mustLevels(Ring, network.AllToAll, S, l), nil, dtype.FP16)
	hops := float64(n * n / 4) // 1+2+3+4+3+2+1 = 16
	if math.Abs(float64(c.H2T)-hops*(S/8)/10e9) > 1e-15 || math.Abs(float64(c.H2H)-hops*1e-6) > 1e-15 {
		t.Errorf("ring all-to-all H2T %v H2H %v, want %g hops", c.H2T, c.H2H, hops)
	}
}

// A bidirectional ring halves every step's bytes when the level has ± ports.
func TestBiRing(t *testing.T) {
	duplex := Layout{Levels: []Level{{Size: 16, Duplex: true, Link: Link{Bandwidth: units.GBps(10)}}}}
	one := Price(mustLevels(Ring, network.AllReduce, 1e9, duplex), nil, dtype.FP16)
	two := Price(mustLevels(BiRing, network.AllReduce, 1e9, duplex), nil, dtype.FP16)
	if math.Abs(float64(two.H2T)-float64(one.H2T)/2) > 1e-15 || two.Steps != one.Steps {
		t.Errorf("bidirectional %v vs ring %v", two, one)
	}
	simplex := flat(16, Link{Bandwidth: units.GBps(10)})
	if a, b := Price(mustLevels(BiRing, network.AllReduce, 1e9, simplex), nil, 0), Price(mustLevels(Ring, network.AllReduce, 1e9, simplex), nil, 0); a.Total != b.Total {
		t.Errorf("without duplex ports the bidirectional ring should equal the ring: %v vs %v", a, b)
	}
}

// Bruck all-to-all: ⌈log2 p⌉ steps of S/2.
func TestBruck(t *testing.T) {
	c := Price(mustLevels(RHD, network.AllToAll, 1e9, uniform(1000)), nil, dtype.FP16)
	if c.Steps != 10 || math.Abs(float64(c.H2T)-10*0.5e9/10e9) > 1e-12 {
		t.Errorf("Bruck %+v", c)
	}
}

// Binary-tree broadcast at zero latency: one chunk stream at half the link rate (two children).
func TestTree(t *testing.T) {
	sch := mustLevels(Tree, network.Broadcast, 1e9, flat(64, Link{Bandwidth: units.GBps(10)}))
	if c := Price(sch, nil, dtype.FP16); math.Abs(float64(c.Total)-2*1e9/10e9) > 1e-3*0.2 {
		t.Errorf("tree broadcast %v, want → 2S/B = 0.2 s", c.Total)
	}
	if Tree.Implements(network.AllToAll) {
		t.Error("tree all-to-all should not exist")
	}
}

func TestEveryStrategyBasics(t *testing.T) {
	levels := twoTiers()
	for _, st := range []Flow{Ring, BiRing, Hierarchical, Torus2D, RHD, Tree} {
		for _, op := range network.Ops() {
			if !st.Implements(op) {
				continue
			}
			prev := units.Seconds(-1)
			for _, s := range []units.Bytes{0, 1, 1e3, 1e6, 1e9, 1e10} {
				c := Price(mustLevels(st, op, s, levels), nil, dtype.FP16)
				if c.Total < prev {
					t.Errorf("%s %s: time fell from %v to %v at %v", st.Name(), op, prev, c.Total, s)
				}
				prev = c.Total
			}
			if c := Price(mustLevels(st, op, 1e9, flat(1, levels.Levels[0].Link)), nil, dtype.FP16); c.Total != 0 {
				t.Errorf("%s %s with one member: %v", st.Name(), op, c.Total)
			}
		}
	}
}

// Choose is the one best-of loop: the cheapest offered algorithm for best, the named one
// otherwise, a usage error naming the valid ones when the network does not offer it for the op.
func TestChoose(t *testing.T) {
	offered := []Algorithm{Ring, Hierarchical}
	price := func(a Algorithm) (network.Cost, error) {
		return OnLevels(a, network.AllReduce, 1e9, twoTiers(), nil, 0)
	}
	best, err := Choose("test", Best, offered, network.AllReduce, price)
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := Choose("test", "ring", offered, network.AllReduce, price)
	hier, _ := Choose("test", "hierarchical", offered, network.AllReduce, price)
	if best.Total != min(ring.Total, hier.Total) || best.Algorithm != "hierarchical ring" {
		t.Errorf("best %v, ring %v, hierarchical %v", best, ring, hier)
	}
	_, err = Choose("test", "rhd", offered, network.AllReduce, price)
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "best, ring, hierarchical") {
		t.Errorf("an algorithm the network does not offer: %v", err)
	}
	// A declined algorithm is skipped by best and explained when asked for.
	decline := func(a Algorithm) (network.Cost, error) {
		if a.Name() == "ring" {
			return network.Cost{}, Decline("no grid here")
		}
		return price(a)
	}
	if c, err := Choose("test", Best, offered, network.AllReduce, decline); err != nil || c.Algorithm != "hierarchical ring" {
		t.Errorf("best with ring declined: %v %v", c, err)
	}
	if _, err := Choose("test", "ring", offered, network.AllReduce, decline); errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "no grid here") {
		t.Errorf("declined ring asked for: %v", err)
	}
}

// ChooseBounded prices the candidates in increasing order of their bounds and skips those whose
// bound exceeds the cheapest price found; the pick is Choose's (the first cheapest in offered
// order) and declines are reported in offered order. Hand-made candidates (names a–f; their
// bounds and prices, in ms, written here): f has no bound and goes first; then b (bound 1, price
// 5), e (bound 2, price 4, declined), a (bound 3, price 4), c (bound 4, price 4: a tie, not
// skipped; a comes first in offered order and stays the pick), d (bound 4.5 > 4: skipped).
func TestChooseBounded(t *testing.T) {
	type hand struct {
		bound, price float64 // ms; bound < 0: none
		declined     bool
	}
	cands := map[string]hand{"a": {3, 4, false}, "b": {1, 5, false}, "c": {4, 4, false}, "d": {4.5, 9, false},
		"e": {2, 4, true}, "f": {-1, 7, false}}
	var offered []Algorithm
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		offered = append(offered, NewFlow(n, "", allOps, nil))
	}
	var priced []string
	bound := func(a Algorithm) (units.Seconds, bool) {
		h := cands[a.Name()]
		return units.Seconds(h.bound * 1e-3), h.bound >= 0
	}
	price := func(a Algorithm) (network.Cost, error) {
		priced = append(priced, a.Name())
		h := cands[a.Name()]
		if h.declined {
			return network.Cost{}, Decline("declined by hand")
		}
		return network.Cost{Algorithm: a.Name(), Total: units.Seconds(h.price * 1e-3)}, nil
	}
	c, won, err := ChooseBounded("test", Best, offered, network.AllReduce, bound, func(a Algorithm, _ units.Seconds) (network.Cost, error) { return price(a) })
	if err != nil || c.Algorithm != "a" || won.Name() != "a" || c.Total != units.Seconds(4*1e-3) {
		t.Fatalf("pick %+v %v %v, want a at 4 ms", c, won, err)
	}
	if got := strings.Join(priced, ","); got != "f,b,e,a,c" {
		t.Errorf("priced %s, want f,b,e,a,c (d skipped: its bound 4.5 ms exceeds a's 4 ms)", got)
	}
	plain, err := Choose("test", Best, offered, network.AllReduce, price)
	if err != nil || plain != c {
		t.Errorf("without bounds %+v %v, with %+v", plain, err, c)
	}
	// Every candidate declined: the reasons in offered order, whatever the bounds' order.
	_, _, err = ChooseBounded("test", Best, offered[:2], network.AllReduce, bound, func(a Algorithm, _ units.Seconds) (network.Cost, error) {
		return network.Cost{}, Decline("no %s here", a.Name())
	})
	if err == nil || !strings.Contains(err.Error(), "(a: no a here; b: no b here)") {
		t.Errorf("all declined: %v", err)
	}
}

// The tree's bound (treeBound) on links of latency α and bandwidth B: each pass costs at least
// d·α + S/B (d = ⌊log2 p⌋ levels), whatever its chunk count; hand count for p = 64 (d = 6),
// α = 1 µs, B = 10 GB/s, S = 1 GB: broadcast 6 µs + 100 ms, all-reduce twice that; and it is
// below the tree's price on those links.
func TestTreeBound(t *testing.T) {
	l := Link{Latency: units.Us(1), Bandwidth: units.GBps(10)}
	g := &levelMembers{lay: flat(64, l)}
	for _, c := range []struct {
		op     network.Op
		passes float64
	}{{network.Broadcast, 1}, {network.Reduce, 1}, {network.AllReduce, 2}} {
		b, ok := Tree.Bound(c.op, 1e9, g, func(Pattern) Link { return l })
		want := c.passes * (6e-6 + 0.1)
		if !ok || math.Abs(float64(b)-want) > 1e-12*want {
			t.Errorf("tree %s bound %v, want %v", c.op, b, want)
		}
		if p := Price(mustLevels(Tree, c.op, 1e9, flat(64, l)), nil, dtype.FP16); p.Total < b {
			t.Errorf("tree %s price %v below its bound %v", c.op, p.Total, b)
		}
	}
}

// Strategies parse as one name, op=name pairs, or both; unknown names list the valid ones.
func TestParseChoice(t *testing.T) {
	valid := []string{"ring", "rings", "linear"}
	c, err := ParseChoice("all-reduce=rings, all-to-all=linear", valid)
	if err != nil || c.For(network.AllReduce) != "rings" || c.For(network.AllToAll) != "linear" || c.For(network.Broadcast) != Best {
		t.Errorf("per-op choice: %+v %v", c, err)
	}
	if c, err := ParseChoice("ring,all-to-all=linear", valid); err != nil || c.For(network.AllGather) != "ring" || c.For(network.AllToAll) != "linear" {
		t.Errorf("default plus per-op: %+v %v", c, err)
	}
	for _, bad := range []string{"torus2d", "all-reduce=tree", "ring,rings", "all-reduc=ring"} {
		if _, err := ParseChoice(bad, valid); errs.ExitCode(err) != errs.ExitUsage {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := ParseChoice("tree", valid); !strings.Contains(fmt.Sprint(err), "best, ring, rings, linear") {
		t.Errorf("the error lists the valid names: %v", err)
	}
}

// A price given a limit (ChooseBounded) may stop part way: hand-made candidates of two rounds
// each (ms; a round not yet "routed" counts at its bound), routed one round at a time, heaviest
// first (ties: the first), each stopping with an *Above once its rounds routed plus the others'
// bounds pass the limit:
//
//	x: bounds 1, 1 (bound 2), rounds 3, 3 (price 6)
//	z: bounds 1.25, 1.25 (bound 2.5), rounds 2, 2 (price 4)
//	y: bounds 1.5, 1.5 (bound 3), rounds 5, 4 (price 9)
//
// x (least bound) below limit 2.5 (z's bound): routes x1, 3 + 1 = 4 > 2.5, Above. z below 3
// (y's): routes z1, 2 + 1.25 = 3.25 > 3, Above. y below 3.25 (z's): routes y1, 5 + 1.5 = 6.5,
// Above. z below 4 (x's): routes z2, price 4. x below 4 (the best): routes x2, price 6. y's
// bound 6.5 exceeds 4: skipped after its first round. Routed: x1, z1, y1, z2, x2 (y2 never); the
// pick is Choose's, z at 4 ms.
func TestChooseBoundedPartial(t *testing.T) {
	type hand struct{ lb, round [2]float64 }
	cands := map[string]hand{"x": {[2]float64{1, 1}, [2]float64{3, 3}}, "y": {[2]float64{1.5, 1.5}, [2]float64{5, 4}},
		"z": {[2]float64{1.25, 1.25}, [2]float64{2, 2}}}
	var offered []Algorithm
	for _, n := range []string{"x", "y", "z"} {
		offered = append(offered, NewFlow(n, "", allOps, nil))
	}
	routed := map[string]bool{}
	var log []string
	bound := func(a Algorithm) (units.Seconds, bool) {
		h := cands[a.Name()]
		return units.Seconds((h.lb[0] + h.lb[1]) * 1e-3), true
	}
	price := func(a Algorithm, limit units.Seconds) (network.Cost, error) {
		h := cands[a.Name()]
		for {
			sum, heavy := 0.0, -1
			for i := range 2 {
				if routed[a.Name()+string(rune('1'+i))] {
					sum += h.round[i]
					continue
				}
				sum += h.lb[i]
				if heavy < 0 || h.round[i] > h.round[heavy] {
					heavy = i
				}
			}
			if heavy < 0 {
				return network.Cost{Algorithm: a.Name(), Total: units.Seconds(sum * 1e-3)}, nil
			}
			if units.Seconds(sum*1e-3) > limit {
				return network.Cost{}, &Above{Bound: units.Seconds(sum * 1e-3)}
			}
			name := a.Name() + string(rune('1'+heavy))
			routed[name] = true
			log = append(log, name)
		}
	}
	c, won, err := ChooseBounded("test", Best, offered, network.AllReduce, bound, price)
	if err != nil || won.Name() != "z" || c.Total != units.Seconds(4*1e-3) {
		t.Fatalf("pick %+v %v %v, want z at 4 ms", c, won, err)
	}
	if got := strings.Join(log, ","); got != "x1,z1,y1,z2,x2" {
		t.Errorf("routed %s, want x1,z1,y1,z2,x2 (y skipped after its first round)", got)
	}
	plain, err := Choose("test", Best, offered, network.AllReduce, func(a Algorithm) (network.Cost, error) {
		return price(a, units.Seconds(math.Inf(1)))
	})
	if err != nil || plain != c {
		t.Errorf("without bounds %+v %v, with %+v", plain, err, c)
	}
}
