package collective

import (
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// HMTorus is the two-dimensional torus all-reduce of HammingMesh §V-A2 (Hoefler et al., SC'22)
// on the group's R × C grid (R, C ≥ 2; a single row or column declines). Two all-reduces run in
// parallel, each on half of the buffer, the second on the transposed grid:
//
//	instance A (S/2)  1. reduce-scatter along each row, a bidirectional ring of C members
//	                     (S/4 each way): C−1 rounds of S/(4C) on the ±x ports
//	                  2. all-reduce along each column of the chunk each member owns, (S/2)/C,
//	                     a bidirectional ring of R members: 2(R−1) rounds of S/(4p) on ±y
//	                  3. all-gather along the rows (the mirror of 1): C−1 rounds of S/(4C) on ±x
//	instance B (S/2)  the same with rows and columns swapped: R−1 rounds of S/(4R) on ±y,
//	                  2(C−1) rounds of S/(4p) on ±x, R−1 rounds of S/(4R) on ±y
//
// Each round carries the current ring step of both instances: four parts (A's two directions, B's
// two), Round.Bytes = S/(4p) and part weights R, C or 1 (the flows' sizes in units of S/(4p)).
// The reduce-scatter is phases 1 and the reducing half of 2; the all-gather the other half of 2
// and phase 3.
//
// Square grids, R = C = n = √p: in every round A and B drive complementary ports (A ±x and B ±y
// in phases 1 and 3, the other way round in phase 2), so with α the per-round latency and β the
// time per byte of one port
//
//	T = 4(n−1)·α + [2(n−1)·S/(4n) + 2(n−1)·S/(4n²)]·β = 4(n−1)·α + (p−1)/(2p)·S·β
//	  ≈ 4√p·α + S·β·(√p+1)/(2√p).
//
// The bandwidth term is exactly that of Rings (both load every port with the bandwidth-optimal
// (p−1)/(2p)·S); the latency term is 4(√p−1) rounds instead of 2(p−1). The approximate form is
// the sum of the paper's components (row reduce-scatter √pα + (S/2)β, column all-reduce
// 2(√pα + S/(2√p)·β), row all-gather √pα + (S/2)β) for two instances on S/2: the exact terms
// with n for n−1 in the latency and (n−1)/n rounded up to 1 in each phase's bytes. The total the
// paper prints, 2·2√pα + Sβ(1+2√p)/(4√p), is not the sum of its printed components
// (reference/hammingmesh.md §4.1 [AMB]); the schedule here reproduces the components' sum. All
// of them tend to Sβ/2, the rings' term, although §V-A2 calls the torus algorithm "2x less
// bandwidth-efficient": HMTorusSST, the simulator's version, is the variant that is.
//
// R ≠ C: each instance has 2(R−1) + 2(C−1) rounds, but their phases differ in length, so they
// are not on complementary ports throughout. They share no data, so each round carries the next
// step of each (lockstep over the whole schedule; were the counts unequal, the longer would go on
// alone), and where both are on one axis its ports carry both instances' flows. For R > C (swap R
// and C otherwise) the rounds are, in units of S/(4p) on the busiest port:
//
//	C−1 rounds      A ±x (R), B ±y (C)            R each
//	R−C rounds      A ±y (1) and B ±y (C)         C+1 each
//	2(C−1) rounds   A ±y (1), B ±x (1)            1 each
//	R−C rounds      A ±y (1) and B ±y (C)         C+1 each
//	C−1 rounds      A ±x (R), B ±y (C)            R each
//
// 2(R+C−2) rounds and 2(C−1)·R + 2(R−C)·(C+1) + 2(C−1) units (6 × 3: 14 rounds, 52·S/72). Holding
// the instances in lockstep phase by phase instead (B finishing its longer phase 1 alone before
// either starts phase 2) loads the busiest port with exactly as many bytes but takes 4(R−1)
// rounds, so the whole-schedule lockstep is the better shape.
var HMTorus = Flow{name: "torus",
	summary: "2D-torus all-reduce on the grid: row reduce-scatter, column all-reduce, row all-gather, with a transposed twin on the other half (HammingMesh §V-A2)",
	ops:     Ops(network.AllReduce, network.ReduceScatter, network.AllGather), rounds: hmTorusRounds}

// HMTorusSST is the two-dimensional torus all-reduce as the HammingMesh SST motif implements it
// (EmberRingAllreduce2D; reference/hammingmesh.md §4.3): the buffer is cut into four quarters on
// four directed rings, +x and −x along each row (C members), +y and −y along each column (R
// members). Phase 1 all-reduces quarters 1 and 2 on the x rings and quarters 3 and 4 on the y
// rings (a full ring reduce-scatter + all-gather each); phase 2 swaps them, the row-reduced
// quarters going round the columns and the column-reduced ones round the rows. Each phase starts
// when the previous one has finished on all four rings (the motif's PHASE_1 → PHASE_2), so when
// R ≠ C the rings of the shorter dimension wait for the longer ones.
//
//	each phase  x rings: 2(C−1) rounds of S/(4C); y rings: 2(R−1) rounds of S/(4R), side by side
//	            while both run, then the longer dimension's rings alone
//
// Square grids, R = C = n = √p: T = 4(n−1)·α + S·β·(n−1)/n ≈ 4√p·α + S·β, twice the bandwidth
// term of HMTorus and Rings ("2x less bandwidth-efficient", §V-A2): every byte crosses both
// dimensions in full all-reduces. For R ≥ C the busiest port carries 4(C−1)·R + 4(R−C)·C units of
// S/(4p) over 4(R−1) rounds (swap R and C otherwise).
var HMTorusSST = Flow{name: "torus-sst",
	summary: "2D-torus all-reduce as the HammingMesh SST motif: four quarters, a full ring all-reduce per dimension in two phases",
	ops:     Ops(network.AllReduce), rounds: hmTorusSSTRounds}

// axisKey is the Grid.Memo key of the four axis successor tables.
type axisKey struct{}

// Axes of the grid: x runs along a row (the column index changes), y along a column.
const (
	axisX = iota
	axisY
)

// axisTables are the successor tables +x, −x, +y, −y of a grid: one step along a row or a column,
// wrapping at the edges; each direction's table registered as the inverse of the opposite one's.
func axisTables(g *Grid) [4]int32 {
	return g.Memo(axisKey{}, func() any {
		var ids [4]int32
		ids[0], ids[1] = g.registerShifted(0, 1)
		ids[2], ids[3] = g.registerShifted(1, 0)
		return ids
	}).([4]int32)
}

// ringRun is n identical rounds of one stream of a grid algorithm: a bidirectional ring step along
// one axis, both directions at once, each flow carrying w units of the round's bytes, reducing
// (a reduce-scatter step) or not.
type ringRun struct {
	axis   int
	n      int
	w      float64
	reduce bool
}

// lockstep emits two streams of ring runs side by side: each round carries the next step of each
// stream still running (its two directions as two parts), the receivers reducing what the
// reducing streams bring; when one stream ends the other continues alone.
func lockstep(out *Flows, unit units.Bytes, ids [4]int32, a, b []ringRun) {
	streams := [2][]ringRun{a, b}
	var left [2]int
	head := func(i int) bool {
		for len(streams[i]) > 0 && streams[i][0].n-left[i] <= 0 {
			streams[i], left[i] = streams[i][1:], 0
		}
		return len(streams[i]) > 0
	}
	for {
		r := Round{Bytes: unit}
		for i := range streams {
			if !head(i) {
				continue
			}
			run := streams[i][0]
			if n := run.n - left[i]; r.Repeat == 0 || n < r.Repeat {
				r.Repeat = n
			}
			plus, minus := TablePart(ids[2*run.axis]), TablePart(ids[2*run.axis+1])
			plus.Weight, minus.Weight = run.w, run.w
			r.Pattern = r.Pattern.With(plus).With(minus)
			if run.reduce {
				r.FanIn = 2
				r.ReduceBytes += units.Bytes(2*run.w) * unit // one flow in from each direction
			}
		}
		if r.Repeat == 0 {
			return
		}
		for i := range streams {
			if len(streams[i]) > 0 {
				left[i] += r.Repeat
			}
		}
		appendRound(out, r)
	}
}

// appendRound appends r, or adds its repeats to the last round when they are alike in all else.
func appendRound(out *Flows, r Round) {
	if k := len(out.Rounds); k > 0 {
		prev := out.Rounds[k-1]
		prev.Repeat = r.Repeat
		if prev == r {
			out.Rounds[k-1].Repeat += r.Repeat
			return
		}
	}
	out.add(r)
}

// torusGrid is the grid of a group for the 2D-torus algorithms.
func torusGrid(g Members) (*Grid, error) {
	grid, err := g.Grid()
	if err != nil {
		return nil, err
	}
	if err := gridFilled(grid, g.P()); err != nil {
		return nil, err
	}
	if grid.Rows < 2 || grid.Cols < 2 {
		return nil, Decline("the 2D-torus algorithms need at least 2 rows and 2 columns; the group is a %d×%d grid (a single ring)", grid.Rows, grid.Cols)
	}
	return grid, nil
}

func hmTorusRounds(op network.Op, s units.Bytes, g Members, out *Flows) error {
	out.Algorithm = "2D torus (HammingMesh)"
	p := g.P()
	if p <= 1 {
		return nil
	}
	grid, err := torusGrid(g)
	if err != nil {
		return err
	}
	R, C := grid.Rows, grid.Cols
	fr, fc := float64(R), float64(C)
	// Units of S/(4p): A's row chunk S/(4C) is R units, B's column chunk S/(4R) is C units.
	a := [4]ringRun{{axisX, C - 1, fr, true}, {axisY, R - 1, 1, true}, {axisY, R - 1, 1, false}, {axisX, C - 1, fr, false}}
	b := [4]ringRun{{axisY, R - 1, fc, true}, {axisX, C - 1, 1, true}, {axisX, C - 1, 1, false}, {axisY, R - 1, fc, false}}
	unit, ids := s/units.Bytes(4*p), axisTables(grid)
	switch op {
	case network.AllReduce:
		lockstep(out, unit, ids, a[:], b[:])
	case network.ReduceScatter:
		lockstep(out, unit, ids, a[:2], b[:2])
	case network.AllGather:
		lockstep(out, unit, ids, a[2:], b[2:])
	}
	return nil
}

func hmTorusSSTRounds(op network.Op, s units.Bytes, g Members, out *Flows) error {
	out.Algorithm = "2D torus (HammingMesh SST)"
	p := g.P()
	if p <= 1 {
		return nil
	}
	grid, err := torusGrid(g)
	if err != nil {
		return err
	}
	R, C := grid.Rows, grid.Cols
	// A quarter S/4 round a row moves S/(4C) = R units of S/(4p) a round; round a column C units.
	x := [2]ringRun{{axisX, C - 1, float64(R), true}, {axisX, C - 1, float64(R), false}}
	y := [2]ringRun{{axisY, R - 1, float64(C), true}, {axisY, R - 1, float64(C), false}}
	unit, ids := s/units.Bytes(4*p), axisTables(grid)
	for phase := 0; phase < 2; phase++ {
		lockstep(out, unit, ids, x[:], y[:])
	}
	return nil
}
