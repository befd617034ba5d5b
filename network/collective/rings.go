package collective

import (
	"fmt"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Cell is a position on a rows × cols grid (row, column; both from 0).
type Cell struct{ Row, Col int }

// HamiltonianCycles returns two edge-disjoint Hamiltonian cycles ("red" and "green") of the
// rows × cols torus, by the construction of Bae, AlBdaiwi & Bose, "Edge-disjoint Hamiltonian
// cycles in two-dimensional torus", Int. J. Math. Math. Sci. 2004 (HammingMesh [49], App. A-D and
// Fig. 16), written as the HammingMesh SST motif does it (EmberRingAllreduce25D, getf0/getf1;
// reference/hammingmesh.md §4.2). On a grid of k1 rows × k0 columns, with X = 0 … k0·k1 − 1,
// x1 = ⌊X/k0⌋ and x0 = X mod k0, position X of each cycle is
//
//	red    f0(X) = ( x1 mod k1,                 (x0 + (k0−1)·x1) mod k0 )
//	green  f1(X) = ( (x0 + (k0−1)·x1) mod k1,   x1 mod k0 )
//
// and a node's neighbours on a cycle are f(X−1) and f(X+1) (mod k0·k1). The pair exists if and
// only if rows = cols·k (k ≥ 1) and gcd(rows, cols − 1) = 1 (App. A-D); when rows × cols fails
// the condition and cols × rows meets it, the cycles of the transposed grid are returned
// transposed back. Each cycle lists every cell once; from each cell to the next (and from the last
// to the first) one coordinate grows by 1 modulo its size and the other stays, so the link a step
// uses is (its first cell, its dimension), and the two cycles use disjoint sets of them: together
// they take each cell's +row and +column link once, so that running each cycle both ways drives
// all four ports of every cell.
//
// Degenerate grids: a grid with one row or one column is a single ring (two ports per member) and
// is refused, as are grids that fail the condition both ways; the error says why. On a
// dimension of size 2 the +1 and −1 neighbours are the same cell, and the cycles are disjoint only
// counting the direct link and the wrap-around link between the two as distinct (as they are on
// a torus, or on a HammingMesh whose E and W ports both reach the neighbour): on a 2×2 grid, red
// and green are the same four cells, green running the other way round over the other links.
func HamiltonianCycles(rows, cols int) (red, green []Cell, err error) {
	transposed, err := hamiltonianGrid(rows, cols)
	if err != nil {
		return nil, nil, err
	}
	if !transposed {
		red, green = baeCycles(rows, cols)
		return red, green, nil
	}
	red, green = baeCycles(cols, rows)
	transposeCells(red)
	transposeCells(green)
	return red, green, nil
}

// hamiltonianGrid says where HamiltonianCycles builds the pair of a rows × cols grid: on the grid
// itself, or on its transpose (transposed); an error: there is none, and why.
func hamiltonianGrid(rows, cols int) (transposed bool, err error) {
	if rows < 1 || cols < 1 {
		return false, fmt.Errorf("a %d×%d grid has no cells", rows, cols)
	}
	if rows == 1 || cols == 1 {
		return false, fmt.Errorf("a %d×%d grid is a single ring (two links per member): it has no pair of edge-disjoint Hamiltonian cycles", rows, cols)
	}
	if baeExists(rows, cols) {
		return false, nil
	}
	if baeExists(cols, rows) {
		return true, nil
	}
	return false, fmt.Errorf("a %d×%d grid has no pair of edge-disjoint Hamiltonian cycles: needs rows = cols·k and gcd(rows, cols−1) = 1 (Bae et al. 2004; HammingMesh App. A-D), and neither %d×%d nor %d×%d satisfies it",
		rows, cols, rows, cols, cols, rows)
}

// baeExists is the condition of App. A-D: rows = cols·k (k ≥ 1) and gcd(rows, cols − 1) = 1.
func baeExists(rows, cols int) bool { return rows%cols == 0 && gcdOf(rows, cols-1) == 1 }

// baeCycles builds f0 and f1 on k1 = rows, k0 = cols.
func baeCycles(k1, k0 int) (red, green []Cell) {
	n := k0 * k1
	red, green = make([]Cell, n), make([]Cell, n)
	for X := 0; X < n; X++ {
		x1, x0 := X/k0, X%k0
		d := x0 + (k0-1)*x1
		red[X] = Cell{Row: x1 % k1, Col: d % k0}
		green[X] = Cell{Row: d % k1, Col: x1 % k0}
	}
	return red, green
}

func transposeCells(cs []Cell) {
	for i, c := range cs {
		cs[i] = Cell{Row: c.Col, Col: c.Row}
	}
}

func gcdOf(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Rings is the "rings" all-reduce of HammingMesh §V-A2 and App. A-D (Hoefler et al., SC'22):
// two bidirectional pipelined rings mapped onto the two edge-disjoint Hamiltonian cycles of the
// group's grid (HamiltonianCycles), i.e. four directed rings through all p members, each using
// one of the four ports of every member and carrying a quarter of the buffer. Each directed ring
// runs the ring schedule of Ring on its quarter, and the four run in the same rounds (one pattern
// of four successor tables):
//
//	reduce-scatter  p−1 rounds of S/(4p) per ring, ending in 2-to-1 reductions of S/p per member
//	all-gather      p−1 rounds of S/(4p) per ring
//	all-reduce      both: 2(p−1) rounds
//
// With every port carrying one flow of S/(4p) per round, β the time per byte of one port and α
// the per-round latency, the all-reduce takes T = 2(p−1)α + (p−1)/(2p)·S·β, the paper's
// T_rings ≈ 2pα + (S/2)β (§V-A2): for large S the all-reduce bandwidth S/T tends to 2/β, half of
// the 4/β injection (the optimum). For the reduce-scatter, member r's block is cut into four
// pieces, ring j reducing piece j of every block, so that the pieces it ends with are its block.
//
// Groups whose grid has no pair of edge-disjoint Hamiltonian cycles (HamiltonianCycles says why)
// decline; so do groups that are not a grid (Members.Grid's reason).
//
// Outline (Outliner) gives the same rounds before the successor tables are built: each of the
// four tables maps every member to its next on one directed Hamiltonian cycle through all p ≥ 4
// cells of the grid (a grid holds each member at one position), so each is a permutation of the
// members without fixed points, and every member sends and receives 1 + 1 + 1 + 1 = 4 units of
// weight per round, what a fabric's bound reads of a permuting round (network/fabric, bound.go).
var Rings = Flow{name: "rings",
	summary: "two bidirectional rings on edge-disjoint Hamiltonian cycles of the grid (HammingMesh §V-A2, App. A-D)",
	ops:     Ops(network.AllReduce, network.ReduceScatter, network.AllGather), rounds: ringsRounds, outline: ringsOutline}

// ringsKey is the Grid.Memo key of the rings' successor tables.
type ringsKey struct{}

// ringTables are the four directed rings of a grid (red forward, red backward, green forward,
// green backward), or why there are none.
type ringTables struct {
	ids [ringsParts]int32
	err error
}

// ringsParts is the number of directed rings, each a table part of weight 1.
const ringsParts = 4

func ringsRounds(op network.Op, s units.Bytes, g Members, out *Flows) error {
	grid, err := ringsGrid(g, out)
	if grid == nil || err != nil {
		return err
	}
	t := grid.Memo(ringsKey{}, func() any { return buildRingTables(grid) }).(ringTables)
	if t.err != nil {
		return t.err
	}
	var pt Pattern
	for _, id := range t.ids {
		pt = pt.With(TablePart(id))
	}
	ringsSchedule(op, s, g.P(), pt, out)
	return nil
}

// ringsOutline is ringsRounds without the tables (Outliner): the same rounds with empty patterns
// and the weight every member sends in each, or no outline where the tables are built already.
func ringsOutline(op network.Op, s units.Bytes, g Members, out *Flows) (float64, bool, error) {
	grid, err := ringsGrid(g, out)
	if grid == nil || err != nil || grid.memoized(ringsKey{}) {
		return 0, false, err
	}
	if _, err := hamiltonianGrid(grid.Rows, grid.Cols); err != nil {
		return 0, false, Decline("%v", err) // as buildRingTables declines
	}
	ringsSchedule(op, s, g.P(), Pattern{}, out)
	return ringsParts * TablePart(0).W(), true, nil // the parts' weights, each 1: exact
}

// ringsGrid names the rings' rounds in out and returns the group's filled grid (nil and no
// error: a group of one, no rounds).
func ringsGrid(g Members, out *Flows) (*Grid, error) {
	out.Algorithm = "rings (2 Hamiltonian cycles)"
	p := g.P()
	if p <= 1 {
		return nil, nil
	}
	grid, err := g.Grid()
	if err != nil {
		return nil, err
	}
	if err := gridFilled(grid, p); err != nil {
		return nil, err
	}
	return grid, nil
}

// ringsSchedule emits the rings' rounds of op over p members, each of pattern pt.
func ringsSchedule(op network.Op, s units.Bytes, p int, pt Pattern, out *Flows) {
	chunk := s / units.Bytes(ringsParts*p) // per ring and round
	reduce := Round{Pattern: pt, Bytes: chunk, Repeat: p - 1, FanIn: 2, ReduceBytes: ringsParts * chunk}
	move := Round{Pattern: pt, Bytes: chunk, Repeat: p - 1}
	switch op {
	case network.ReduceScatter:
		out.add(reduce)
	case network.AllGather:
		out.add(move)
	case network.AllReduce:
		out.add(reduce)
		out.add(move)
	}
}

// gridFilled checks that a grid holds the group's p members.
func gridFilled(g *Grid, p int) error {
	if g.Rows*g.Cols != p || len(g.At) != p {
		return Decline("the group's %d members do not fill its %d×%d grid", p, g.Rows, g.Cols)
	}
	return nil
}

func buildRingTables(g *Grid) ringTables {
	red, green, err := HamiltonianCycles(g.Rows, g.Cols)
	if err != nil {
		return ringTables{err: Decline("%v", err)}
	}
	var t ringTables
	for i, cyc := range [2][]Cell{red, green} {
		fwd := &Successors{Next: make([]int32, len(g.At))}
		back := &Successors{Next: make([]int32, len(g.At))}
		for k, c := range cyc {
			d := cyc[0]
			if k+1 < len(cyc) {
				d = cyc[k+1]
			}
			from, to := g.Member(c.Row, c.Col), g.Member(d.Row, d.Col)
			fwd.Next[from], back.Next[to] = to, from
		}
		t.ids[2*i], t.ids[2*i+1] = Register(fwd), Register(back)
	}
	return t
}
