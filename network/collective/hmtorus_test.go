package collective

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// The axis tables step one column (±x) or one row (±y), wrapping.
func TestAxisTables(t *testing.T) {
	g := newGridGroup(3, 5, true).grid
	ids := axisTables(g)
	for i, d := range [4]Cell{{0, 1}, {0, -1}, {1, 0}, {-1, 0}} {
		next := tableOf(ids[i]).Next
		for r := 0; r < g.Rows; r++ {
			for c := 0; c < g.Cols; c++ {
				if got, want := next[g.Member(r, c)], g.Member(r+d.Row, c+d.Col); got != want {
					t.Fatalf("table %d at (%d, %d): %d, want %d", i, r, c, got, want)
				}
			}
		}
	}
	if axisTables(g) != ids {
		t.Error("a second call built new tables")
	}
	// Each direction's part names the opposite direction's table as its inverse (+x ↔ −x,
	// +y ↔ −y, the weight kept), and that table undoes it member by member; a table registered
	// alone has none.
	for i, j := range [4]int{1, 0, 3, 2} {
		q := TablePart(ids[i])
		q.Weight = 3
		inv, ok := q.Inverse()
		if !ok || inv.K != ids[j] || inv.Weight != 3 {
			t.Errorf("table %d: inverse %+v (%v), want table %d", i, inv, ok, ids[j])
		}
		next, back := tableOf(ids[i]).Next, tableOf(ids[j]).Next
		for m := range next {
			if back[next[m]] != int32(m) {
				t.Fatalf("table %d: member %d → %d → %d", i, m, next[m], back[next[m]])
			}
		}
	}
	if _, ok := TablePart(Register(&Successors{Next: []int32{1, 2, 0, 4, 3}})).Inverse(); ok {
		t.Error("a table registered alone has an inverse")
	}
}

// HMTorus by hand (HammingMesh §V-A2; α per round, β = 1/bw per port, units of S/bw).
//
// n × n: phase 1: n−1 rounds, every port one flow of S/(4n) (A ±x, B ±y); phase 2: 2(n−1)
// rounds of S/(4n²) (A ±y, B ±x); phase 3 as phase 1. 4(n−1) rounds,
// 2(n−1)/(4n) + 2(n−1)/(4n²) = (n²−1)/(2n²): 4×4 → 12 rounds, 15/32; 8×8 → 28, 63/128.
// Reduce-scatter is phase 1 and the first n−1 rounds of phase 2 (all-gather the mirror):
// 4×4 → 6 rounds, 3/16 + 3/64 = 15/64.
//
// 6 rows × 3 columns: A (rows first, S/2): row reduce-scatter 2 rounds of S/12 (±x), column
// all-reduce of its S/6 chunk 10 rounds of S/72 (±y), row all-gather 2 rounds of S/12 (±x).
// B (columns first): column reduce-scatter 5 rounds of S/24 (±y), row all-reduce 4 rounds of S/72
// (±x), column all-gather 5 rounds of S/24 (±y). Side by side, 14 rounds:
//
//	rounds  1–2   A ±x S/12, B ±y S/24            busiest port S/12       2·6/72
//	rounds  3–5   A ±y S/72 and B ±y S/24         ±y carries 4S/72        3·4/72
//	rounds  6–9   A ±y S/72, B ±x S/72                                    4·1/72
//	rounds 10–12  A ±y S/72 and B ±y S/24                                 3·4/72
//	rounds 13–14  A ±x S/12, B ±y S/24                                    2·6/72
//
// 52/72 = 13/18 (3 × 6 the same, transposed). Its reduce-scatter, 7 rounds: 2·6/72 + 3·4/72 +
// 2·1/72 = 26/72.
//
// Every member reduces, in all, what a ring reduce-scatter reduces: (p−1)/p·S.
func TestHMTorusClosedForm(t *testing.T) {
	const S, bw, alpha = 1e9, 50e9, 1e-6
	cases := []struct {
		rows, cols int
		op         network.Op
		rounds     int
		bwFrac     float64
	}{
		{4, 4, network.AllReduce, 12, 15.0 / 32},
		{8, 8, network.AllReduce, 28, 63.0 / 128},
		{4, 4, network.ReduceScatter, 6, 15.0 / 64},
		{4, 4, network.AllGather, 6, 15.0 / 64},
		{6, 3, network.AllReduce, 14, 52.0 / 72},
		{3, 6, network.AllReduce, 14, 52.0 / 72},
		{6, 3, network.ReduceScatter, 7, 26.0 / 72},
		{6, 3, network.AllGather, 7, 26.0 / 72},
	}
	for _, c := range cases {
		g := newGridGroup(c.rows, c.cols, true)
		p := float64(c.rows * c.cols)
		fl := mustRounds(t, HMTorus, c.op, S, g)
		lat := priceOnPorts(t, g.grid, fl, alpha, math.Inf(1))
		if lat.Rounds != c.rounds || !near(lat.T, float64(c.rounds)*alpha, 1e-12) {
			t.Errorf("%d×%d %s β=0: %g s in %d rounds, want %d rounds", c.rows, c.cols, c.op, lat.T, lat.Rounds, c.rounds)
		}
		tr := priceOnPorts(t, g.grid, fl, 0, bw)
		if want := c.bwFrac * S / bw; !near(tr.T, want, 1e-12) {
			t.Errorf("%d×%d %s α=0: %g s, want %g", c.rows, c.cols, c.op, tr.T, want)
		}
		wantReduce := (p - 1) / p * S
		if c.op == network.AllGather {
			wantReduce = 0
		}
		if math.Abs(tr.Reduce-wantReduce) > 1e-12*S {
			t.Errorf("%d×%d %s: reduces %g B, want %g", c.rows, c.cols, c.op, tr.Reduce, wantReduce)
		}
	}
	// Square grids: the paper's components summed for two instances on S/2,
	// 4√pα + Sβ(√p+1)/(2√p), is the schedule with √p−1 for √p in the latency and the exact
	// bandwidth term times √p/(√p−1); both equal the rings' (p−1)/(2p)·Sβ exactly.
	for _, n := range []int{3, 4, 8, 16} {
		g := newGridGroup(n, n, false)
		fl := mustRounds(t, HMTorus, network.AllReduce, S, g)
		fn := float64(n)
		if got := priceOnPorts(t, g.grid, fl, 0, bw).T; !near(got*fn/(fn-1), S/bw*(fn+1)/(2*fn), 1e-12) {
			t.Errorf("%d×%d: %g s, want Sβ(√p+1)/(2√p)·(√p−1)/√p", n, n, got)
		}
		rings := priceOnPorts(t, g.grid, mustRounds(t, Rings, network.AllReduce, S, newGridGroup(n, n, false)), 0, bw).T
		if n != 3 && !near(priceOnPorts(t, g.grid, fl, 0, bw).T, rings, 1e-12) { // 3×3 has no Hamiltonian pair
			t.Errorf("%d×%d: torus %g s, rings %g s: want equal", n, n, priceOnPorts(t, g.grid, fl, 0, bw).T, rings)
		}
	}
}

// HMTorusSST by hand (reference/hammingmesh.md §4.3; units of S/bw). Each phase all-reduces a
// quarter on every directed ring: along a row (C members) 2(C−1) rounds of S/(4C), along a column
// 2(R−1) rounds of S/(4R); phase 2 waits for phase 1.
//
// n × n: 2 phases × 2(n−1) rounds of S/(4n) on every port: 4(n−1) rounds, (n−1)/n, i.e. ≈ Sβ,
// twice the rings' and HMTorus' (p−1)/(2p) ("2x less bandwidth-efficient", §V-A2): 4×4 → 12
// rounds, 3/4; 8×8 → 28, 7/8.
//
// 6 × 3: x rings 4 rounds of S/12, y rings 10 rounds of S/24: per phase 4 rounds at S/12 with both
// running, then 6 rounds of S/24 with the y rings alone: 1/3 + 1/4 = 7/12 in 10 rounds; two
// phases: 20 rounds, 7/6.
//
// Reductions: each phase reduces two quarters over the rows, (C−1)/C·S/2, and two over the
// columns, (R−1)/R·S/2: in all (C−1)/C·S + (R−1)/R·S (4×4: 3/2·S; 6×3: (2/3 + 5/6)·S = 3/2·S).
func TestHMTorusSSTClosedForm(t *testing.T) {
	const S, bw, alpha = 1e9, 50e9, 1e-6
	cases := []struct {
		rows, cols int
		rounds     int
		bwFrac     float64
		reduce     float64 // units of S
	}{
		{4, 4, 12, 3.0 / 4, 3.0 / 2},
		{8, 8, 28, 7.0 / 8, 7.0 / 4},
		{6, 3, 20, 7.0 / 6, 3.0 / 2},
		{3, 6, 20, 7.0 / 6, 3.0 / 2},
	}
	for _, c := range cases {
		g := newGridGroup(c.rows, c.cols, false)
		fl := mustRounds(t, HMTorusSST, network.AllReduce, S, g)
		lat := priceOnPorts(t, g.grid, fl, alpha, math.Inf(1))
		if lat.Rounds != c.rounds || !near(lat.T, float64(c.rounds)*alpha, 1e-12) {
			t.Errorf("%d×%d β=0: %g s in %d rounds, want %d rounds", c.rows, c.cols, lat.T, lat.Rounds, c.rounds)
		}
		tr := priceOnPorts(t, g.grid, fl, 0, bw)
		if want := c.bwFrac * S / bw; !near(tr.T, want, 1e-12) {
			t.Errorf("%d×%d α=0: %g s, want %g", c.rows, c.cols, tr.T, want)
		}
		if !near(tr.Reduce, c.reduce*S, 1e-12) {
			t.Errorf("%d×%d: reduces %g B, want %g", c.rows, c.cols, tr.Reduce, c.reduce*S)
		}
	}
	if HMTorusSST.Implements(network.ReduceScatter) || !HMTorusSST.Implements(network.AllReduce) {
		t.Error("torus-sst implements all-reduce only")
	}
}

func TestHMTorusDecline(t *testing.T) {
	for _, a := range []Flow{HMTorus, HMTorusSST} {
		for _, c := range []struct{ rows, cols int }{{1, 8}, {8, 1}} {
			var d *Declined
			err := a.Rounds(network.AllReduce, 1e6, newGridGroup(c.rows, c.cols, false), &Flows{})
			if !errors.As(err, &d) || !strings.Contains(d.Reason, "single ring") {
				t.Errorf("%s %d×%d: %v, want a decline", a.Name(), c.rows, c.cols, err)
			}
		}
		why := Decline("levels have no grid")
		if err := a.Rounds(network.AllReduce, 1e6, &gridGroup{err: why}, &Flows{}); err != why {
			t.Errorf("%s without a grid: %v, want %v", a.Name(), err, why)
		}
		// One member: nothing to do.
		if fl := mustRounds(t, a, network.AllReduce, 1e6, newGridGroup(1, 1, false)); len(fl.Rounds) != 0 {
			t.Errorf("%s p=1: %d rounds", a.Name(), len(fl.Rounds))
		}
	}
}

// HMTorus on real tensors. The buffer's quarters: A+ [0, Q), A− [Q, 2Q), B+ [2Q, 3Q),
// B− [3Q, 4Q). A± reduce-scatters its quarter along the rows on ±x, all-reduces the chunk it then
// owns along the columns on ±y, and all-gathers along the rows; B± the same with the axes
// swapped.
func TestHMTorusFunctional(t *testing.T) {
	for _, c := range []struct{ rows, cols int }{{4, 4}, {4, 2}, {2, 4}, {3, 5}, {6, 3}, {2, 2}} {
		g := newGridGroup(c.rows, c.cols, true)
		p := c.rows * c.cols
		l := 4 * p * 2
		q := l / 4
		ids := axisTables(g.grid)
		for _, op := range []network.Op{network.AllReduce, network.ReduceScatter, network.AllGather} {
			fl := mustRounds(t, HMTorus, op, units.Bytes(8*l), g)
			var streams []*simStream
			for k, d := range [4]struct{ first, second int32 }{
				{ids[0], ids[2]}, {ids[1], ids[3]}, // A: rows (±x), then columns (±y)
				{ids[2], ids[0]}, {ids[3], ids[1]}, // B: columns, then rows
			} {
				rs1 := simOp{tab: d.first, reduce: true, off: same(p, k*q), length: q}
				off, n := owned(t, rs1, g.grid.At)
				streams = append(streams, &simStream{
					rs: []simOp{rs1, {tab: d.second, reduce: true, off: off, length: n}},
					ag: []simOp{{tab: d.second, off: off, length: n}, {tab: d.first, off: rs1.off, length: q}},
				})
			}
			checkCollective(t, HMTorus.Name()+" "+op.String(), fl, op, g.grid, l, streams)
		}
	}
}

// HMTorusSST on real tensors: quarter 1 all-reduced on +x then +y, 2 on −x then −y, 3 on +y then
// +x, 4 on −y then −x.
func TestHMTorusSSTFunctional(t *testing.T) {
	for _, c := range []struct{ rows, cols int }{{4, 4}, {4, 2}, {6, 3}, {3, 5}} {
		g := newGridGroup(c.rows, c.cols, true)
		p := c.rows * c.cols
		l := 4 * p * 2
		q := l / 4
		ids := axisTables(g.grid)
		fl := mustRounds(t, HMTorusSST, network.AllReduce, units.Bytes(8*l), g)
		var streams []*simStream
		for k, d := range [4][2]int32{{ids[0], ids[2]}, {ids[1], ids[3]}, {ids[2], ids[0]}, {ids[3], ids[1]}} {
			var ops []simOp
			for _, tab := range d {
				ops = append(ops, simOp{tab: tab, reduce: true, off: same(p, k*q), length: q}, simOp{tab: tab, off: same(p, k*q), length: q})
			}
			streams = append(streams, &simStream{rs: ops, ag: nil})
		}
		checkCollective(t, HMTorusSST.Name(), fl, network.AllReduce, g.grid, l, streams)
	}
}
