package collective

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"gorgonia.org/tensor"
)

// gridGroup is a group whose members lie on a rows × cols grid of a fabric: At is the identity,
// or a fixed shuffle (the member at a position is then not its rank order). Without a grid (err
// set) it is a group of 16 that Grid refuses with err.
type gridGroup struct {
	grid *Grid
	err  error
}

func newGridGroup(rows, cols int, shuffle bool) *gridGroup {
	at := make([]int32, rows*cols)
	for i := range at {
		at[i] = int32(i)
	}
	if shuffle {
		r := rand.New(rand.NewPCG(uint64(rows), uint64(cols)))
		r.Shuffle(len(at), func(i, j int) { at[i], at[j] = at[j], at[i] })
	}
	return &gridGroup{grid: &Grid{Rows: rows, Cols: cols, At: at}}
}

func (m *gridGroup) P() int {
	if m.grid == nil {
		return 16
	}
	return len(m.grid.At)
}
func (m *gridGroup) Layout() Layout { return Flat(m.P(), Link{Bandwidth: units.GBps(50)}) }
func (m *gridGroup) Link(Pattern) (Link, error) {
	return Link{Latency: units.Us(1), Bandwidth: units.GBps(50)}, nil
}
func (m *gridGroup) Grid() (*Grid, error) { return m.grid, m.err }

func mustRounds(t *testing.T, a Flow, op network.Op, s units.Bytes, g Members) Flows {
	t.Helper()
	var fl Flows
	if err := a.Rounds(op, s, g, &fl); err != nil {
		t.Fatalf("%s %s: %v", a.Name(), op, err)
	}
	return fl
}

// Ports of a grid member: +x (to the next column), −x, +y (to the next row), −y.
const (
	portPX = iota
	portMX
	portPY
	portMY
)

// cellsOf inverts a grid's At.
func cellsOf(g *Grid) []Cell {
	cells := make([]Cell, len(g.At))
	for k, m := range g.At {
		cells[m] = Cell{Row: k / g.Cols, Col: k % g.Cols}
	}
	return cells
}

// port is the port a flow from src to dst leaves on: they must be grid neighbours. It needs every
// dimension to have at least 3 members (on 2 the +1 and −1 neighbours are one member).
func port(t *testing.T, g *Grid, cells []Cell, src, dst int) int {
	t.Helper()
	if g.Rows < 3 || g.Cols < 3 {
		t.Fatalf("port: a %d×%d grid has a dimension of 2 (±1 coincide)", g.Rows, g.Cols)
	}
	a, b := cells[src], cells[dst]
	dr, dc := (b.Row-a.Row+g.Rows)%g.Rows, (b.Col-a.Col+g.Cols)%g.Cols
	switch {
	case dr == 0 && dc == 1:
		return portPX
	case dr == 0 && dc == g.Cols-1:
		return portMX
	case dc == 0 && dr == 1:
		return portPY
	case dc == 0 && dr == g.Rows-1:
		return portMY
	}
	t.Fatalf("flow %d→%d: %v → %v are not grid neighbours", src, dst, a, b)
	return -1
}

// portCost is the α-β model of HammingMesh §V-A2 on a grid whose members have four ports of
// bandwidth bw (β = 1/bw per interface): each round takes α plus its busiest port's bytes over
// bw (over every member and each of the four directions), times its repeats.
type portCost struct {
	T      float64 // seconds
	Rounds int
	Reduce float64 // Σ repeats · ReduceBytes
}

func priceOnPorts(t *testing.T, g *Grid, fl Flows, alpha, bw float64) portCost {
	t.Helper()
	cells := cellsOf(g)
	p := len(g.At)
	var c portCost
	for _, r := range fl.Rounds {
		load := make([][4]float64, p)
		r.Pattern.Each(p, func(src, dst int, w float64) {
			load[src][port(t, g, cells, src, dst)] += float64(r.Bytes) * w
		})
		busiest := 0.0
		for _, l := range load {
			for _, b := range l {
				busiest = math.Max(busiest, b)
			}
		}
		n := max(1, r.Repeat)
		c.T += float64(n) * (alpha + busiest/bw)
		c.Rounds += n
		c.Reduce += float64(n) * float64(r.ReduceBytes)
	}
	return c
}

// checkCycles asserts that red and green are edge-disjoint Hamiltonian cycles of the rows × cols
// torus: every cell once, consecutive cells (and last → first) torus neighbours, one coordinate
// growing by 1 (the documented orientation, which names the link a step uses: its first cell and
// dimension), no link on both; and, where both dimensions have at least 3 cells (so that two
// neighbours have one link between them), no undirected edge on both.
func checkCycles(t *testing.T, rows, cols int, red, green []Cell) {
	t.Helper()
	type link struct {
		from Cell
		dim  int
	}
	type edge struct{ a, b Cell }
	links := map[link]string{}
	edges := map[edge]string{}
	for name, cyc := range map[string][]Cell{"red": red, "green": green} {
		if len(cyc) != rows*cols {
			t.Fatalf("%d×%d %s: %d cells, want %d", rows, cols, name, len(cyc), rows*cols)
		}
		seen := map[Cell]bool{}
		for i, a := range cyc {
			if a.Row < 0 || a.Row >= rows || a.Col < 0 || a.Col >= cols || seen[a] {
				t.Fatalf("%d×%d %s: cell %d %v outside the grid or repeated", rows, cols, name, i, a)
			}
			seen[a] = true
			b := cyc[(i+1)%len(cyc)]
			var l link
			switch {
			case b.Row == a.Row && b.Col == (a.Col+1)%cols:
				l = link{a, 0}
			case b.Col == a.Col && b.Row == (a.Row+1)%rows:
				l = link{a, 1}
			default:
				t.Fatalf("%d×%d %s: step %d %v → %v is not +1 along one dimension", rows, cols, name, i, a, b)
			}
			if other, dup := links[l]; dup {
				t.Fatalf("%d×%d: link %v used by %s and %s", rows, cols, l, other, name)
			}
			links[l] = name
			if rows >= 3 && cols >= 3 {
				e := edge{a, b}
				if b.Row < a.Row || b.Row == a.Row && b.Col < a.Col {
					e = edge{b, a}
				}
				if other, dup := edges[e]; dup {
					t.Fatalf("%d×%d: edge %v on %s and %s", rows, cols, e, other, name)
				}
				edges[e] = name
			}
		}
	}
	// Together they use each cell's +row and +column link exactly once: all four ports of every
	// cell when each cycle runs both ways.
	if len(links) != 2*rows*cols {
		t.Fatalf("%d×%d: %d links used, want %d", rows, cols, len(links), 2*rows*cols)
	}
}

// HammingMesh App. A-D, Fig. 16 (4x4, 8x4, 9x3, 16x8) and reference/hammingmesh.md §4.2 (32x32).
// 4×8 and 3×9 fail the condition as given but their transposes meet it.
func TestHamiltonianCycles(t *testing.T) {
	for _, c := range []struct{ rows, cols int }{{4, 4}, {8, 4}, {9, 3}, {16, 8}, {32, 32}, {4, 8}, {3, 9}, {8, 16}} {
		red, green, err := HamiltonianCycles(c.rows, c.cols)
		if err != nil {
			t.Fatalf("%d×%d: %v", c.rows, c.cols, err)
		}
		checkCycles(t, c.rows, c.cols, red, green)
	}
}

// The condition of App. A-D, both ways round, decides; every grid from 2×2 to 24×24 that meets it
// gets valid cycles, every other one an error naming the sizes and the condition.
func TestHamiltonianCyclesCondition(t *testing.T) {
	gcd := func(a, b int) int {
		for b != 0 {
			a, b = b, a%b
		}
		return a
	}
	meets := func(r, c int) bool { return r%c == 0 && gcd(r, c-1) == 1 }
	for rows := 2; rows <= 24; rows++ {
		for cols := 2; cols <= 24; cols++ {
			red, green, err := HamiltonianCycles(rows, cols)
			if meets(rows, cols) || meets(cols, rows) {
				if err != nil {
					t.Fatalf("%d×%d: %v", rows, cols, err)
				}
				checkCycles(t, rows, cols, red, green)
				continue
			}
			if err == nil {
				t.Fatalf("%d×%d: cycles, but neither orientation meets the condition", rows, cols)
			}
		}
	}
	_, _, err := HamiltonianCycles(6, 4)
	want := "a 6×4 grid has no pair of edge-disjoint Hamiltonian cycles: needs rows = cols·k and gcd(rows, cols−1) = 1 (Bae et al. 2004; HammingMesh App. A-D), and neither 6×4 nor 4×6 satisfies it"
	if err == nil || err.Error() != want {
		t.Errorf("6×4: %v\nwant %s", err, want)
	}
	for _, c := range []struct{ rows, cols int }{{1, 8}, {8, 1}, {1, 1}, {0, 4}} {
		if _, _, err := HamiltonianCycles(c.rows, c.cols); err == nil {
			t.Errorf("%d×%d: cycles, want an error", c.rows, c.cols)
		}
	}
	// 2×2: the cycles are the same four cells, green the other way round (over the wrap links).
	red, green, err := HamiltonianCycles(2, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range red {
		if red[i] != green[(4-i)%4] {
			t.Errorf("2×2: red %v, green %v: want green = red reversed", red, green)
			break
		}
	}
}

// The four directed rings use each of every member's four ports exactly once per round, and each
// is one cycle through all members.
func TestRingsPorts(t *testing.T) {
	for _, c := range []struct{ rows, cols int }{{4, 4}, {8, 4}, {4, 8}, {9, 3}, {3, 9}} {
		g := newGridGroup(c.rows, c.cols, true)
		fl := mustRounds(t, Rings, network.AllReduce, 1, g)
		pt := fl.Rounds[0].Pattern
		if pt.N != 4 {
			t.Fatalf("%d×%d: %d parts, want 4", c.rows, c.cols, pt.N)
		}
		p := c.rows * c.cols
		for k := 0; k < 4; k++ {
			if _, n := ringPositions(t, pt.Parts[k].K, g.grid.At); n != p {
				t.Errorf("%d×%d ring %d: a cycle of %d members, want %d", c.rows, c.cols, k, n, p)
			}
		}
		cells := cellsOf(g.grid)
		used := make([][4]int, p)
		pt.Each(p, func(src, dst int, w float64) { used[src][port(t, g.grid, cells, src, dst)]++ })
		for m, u := range used {
			if u != [4]int{1, 1, 1, 1} {
				t.Fatalf("%d×%d member %d sends %v flows on (+x, −x, +y, −y), want one each", c.rows, c.cols, m, u)
			}
		}
		// The same grid gives the same tables (fabrics cache routes by pattern value).
		if again := mustRounds(t, Rings, network.AllReduce, 1, g); again.Rounds[0].Pattern != pt {
			t.Errorf("%d×%d: a second call built new tables", c.rows, c.cols)
		}
	}
}

// HammingMesh §V-A2: T_rings ≈ 2pα + (S/2)β. Exactly, by hand: 2(p−1) rounds (p−1 of reduce-
// scatter, p−1 of all-gather), in each of which every port carries one chunk S/(4p), so
// T = 2(p−1)α + 2(p−1)·S/(4p)·β = 2(p−1)α + (p−1)/(2p)·Sβ: the paper's form with p−1 for p.
// Reduce-scatter and all-gather are one half each. Each member reduces, per reduce-scatter
// round, four chunks of S/(4p): (p−1)·S/p in all, like any ring.
func TestRingsClosedForm(t *testing.T) {
	const S, bw, alpha = 1e9, 50e9, 1e-6
	cases := []struct {
		rows, cols int
		rounds     int     // all-reduce: 2(p−1)
		bwFrac     float64 // all-reduce transfer time in units of S/bw: (p−1)/(2p)
	}{
		{4, 4, 30, 15.0 / 32},
		{8, 4, 62, 31.0 / 64},
		{4, 8, 62, 31.0 / 64},
		{9, 3, 52, 26.0 / 54},
		{16, 8, 254, 127.0 / 256},
		{32, 32, 2046, 1023.0 / 2048},
	}
	for _, c := range cases {
		g := newGridGroup(c.rows, c.cols, false)
		p := float64(c.rows * c.cols)
		for _, op := range []network.Op{network.AllReduce, network.ReduceScatter, network.AllGather} {
			half := 1.0
			if op != network.AllReduce {
				half = 0.5
			}
			fl := mustRounds(t, Rings, op, S, g)
			lat := priceOnPorts(t, g.grid, fl, alpha, math.Inf(1))
			if want := half * float64(c.rounds) * alpha; !near(lat.T, want, 1e-12) || float64(lat.Rounds) != half*float64(c.rounds) {
				t.Errorf("%d×%d %s β=0: %g s in %d rounds, want %g s", c.rows, c.cols, op, lat.T, lat.Rounds, want)
			}
			tr := priceOnPorts(t, g.grid, fl, 0, bw)
			if want := half * c.bwFrac * S / bw; !near(tr.T, want, 1e-12) {
				t.Errorf("%d×%d %s α=0: %g s, want %g", c.rows, c.cols, op, tr.T, want)
			}
			wantReduce := (p - 1) / p * S
			if op == network.AllGather {
				wantReduce = 0
			}
			if !near(tr.Reduce, wantReduce, 1e-12) && !(wantReduce == 0 && tr.Reduce == 0) {
				t.Errorf("%d×%d %s: reduces %g B, want %g", c.rows, c.cols, op, tr.Reduce, wantReduce)
			}
		}
		// The paper's bandwidth term S/2·β over-states the exact one by p/(p−1).
		tr := priceOnPorts(t, g.grid, mustRounds(t, Rings, network.AllReduce, S, g), 0, bw)
		if !near(tr.T*p/(p-1), S/2/bw, 1e-12) {
			t.Errorf("%d×%d: %g s, want (S/2)β·(p−1)/p", c.rows, c.cols, tr.T)
		}
	}
}

func TestRingsDecline(t *testing.T) {
	var d *Declined
	g := newGridGroup(6, 4, false)
	err := Rings.Rounds(network.AllReduce, 1e6, g, &Flows{})
	if !errors.As(err, &d) || !strings.Contains(d.Reason, "6×4") || !strings.Contains(d.Reason, "4×6") || !strings.Contains(d.Reason, "gcd(rows, cols−1) = 1") {
		t.Errorf("6×4: %v, want a decline naming both orientations and the condition", err)
	}
	if err := Rings.Rounds(network.AllReduce, 1e6, newGridGroup(1, 8, false), &Flows{}); !errors.As(err, &d) || !strings.Contains(d.Reason, "single ring") {
		t.Errorf("1×8: %v, want a decline (a single ring)", err)
	}
	// A group that is not a grid: the Members' own reason, unchanged.
	why := Decline("levels have no grid")
	if err := Rings.Rounds(network.AllReduce, 1e6, &gridGroup{err: why}, &Flows{}); err != why {
		t.Errorf("no grid: %v, want %v", err, why)
	}
	if Rings.Implements(network.AllToAll) || !Rings.Implements(network.ReduceScatter) {
		t.Error("rings implements all-reduce, reduce-scatter and all-gather only")
	}
}

// ---- Functional check: run the rounds on real tensors. ----

// simOp is one ring collective of a stream: a reduce-scatter (reduce) or all-gather along the
// cycles of successor table tab, on each member m's slice [off[m], off[m]+length) of its buffer,
// cut into as many chunks as the cycle has members (the standard ring: in step s the member at
// position i sends chunk i−s (reduce-scatter) or i+1−s (all-gather), and after the
// reduce-scatter it owns chunk i+1).
type simOp struct {
	tab    int32
	reduce bool
	off    []int
	length int
}

// simStream is what the test expects one quarter (or half of an instance) of the buffer to go
// through: reduce-scatter ops, then all-gather ops.
type simStream struct {
	rs, ag []simOp
	ops    []simOp // what runs
	op     int
	step   int
}

// ringPositions numbers the members along the cycles of a table, each cycle from its first
// member in grid order (so that a row's ring starts in column 0 and a column's in row 0, and the
// chunk a member owns after a row reduce-scatter is the same down each column), and returns the
// cycles' common length.
func ringPositions(t *testing.T, tab int32, order []int32) ([]int, int) {
	t.Helper()
	next := tableOf(tab).Next
	pos := make([]int, len(order))
	for i := range pos {
		pos[i] = -1
	}
	n := 0
	for _, first := range order {
		m := int(first)
		if pos[m] >= 0 {
			continue
		}
		k := 0
		for x := m; pos[x] < 0; x = int(next[x]) {
			pos[x] = k
			k++
		}
		if n != 0 && k != n {
			t.Fatalf("table %d: cycles of %d and %d members", tab, n, k)
		}
		n = k
	}
	return pos, n
}

func same(p, v int) []int {
	o := make([]int, p)
	for i := range o {
		o[i] = v
	}
	return o
}

// owned is the slice each member holds reduced after reduce-scatter o.
func owned(t *testing.T, o simOp, order []int32) ([]int, int) {
	t.Helper()
	pos, n := ringPositions(t, o.tab, order)
	c := o.length / n
	off := make([]int, len(o.off))
	for m := range off {
		off[m] = o.off[m] + (pos[m]+1)%n*c
	}
	return off, c
}

type simMsg struct {
	dst, at int
	vals    []float64
	add     bool
}

// simulate runs fl's rounds on bufs: each part of a round must be the next step of one stream
// (same table, same bytes per flow: 8 per float64), and the round's reduction must be what the
// reduce-scatter steps among them bring in.
func simulate(t *testing.T, fl Flows, order []int32, bufs [][]float64, streams []*simStream) {
	t.Helper()
	p := len(bufs)
	type ring struct {
		pos []int
		n   int
	}
	rings := map[int32]ring{}
	ringOf := func(tab int32) ring {
		r, ok := rings[tab]
		if !ok {
			r.pos, r.n = ringPositions(t, tab, order)
			rings[tab] = r
		}
		return r
	}
	for ri, r := range fl.Rounds {
		for rep := 0; rep < max(1, r.Repeat); rep++ {
			used := map[*simStream]bool{}
			var msgs []simMsg
			reduced := 0.0
			for k := 0; k < r.Pattern.N; k++ {
				q := r.Pattern.Parts[k]
				if q.Kind != Table {
					t.Fatalf("round %d part %d: kind %d, want a table", ri, k, q.Kind)
				}
				bytes := float64(r.Bytes) * q.W()
				// The stream whose next step this is: same table and bytes, not a reduction in a
				// round without one; of several, the one furthest behind (a stream does not start
				// its next phase while another is still in the previous one).
				var s *simStream
				for _, c := range streams {
					if used[c] || c.op >= len(c.ops) || c.ops[c.op].tab != q.K || r.FanIn < 2 && c.ops[c.op].reduce {
						continue
					}
					if o := c.ops[c.op]; math.Abs(float64(8*o.length/ringOf(o.tab).n)-bytes) < 1e-9 && (s == nil || c.op < s.op) {
						s = c
					}
				}
				if s == nil {
					t.Fatalf("round %d (repeat %d) part %d: table %d with %g B per flow is no stream's next step", ri, rep, k, q.K, bytes)
				}
				used[s] = true
				o := s.ops[s.op]
				rg := ringOf(o.tab)
				c := o.length / rg.n
				next := tableOf(o.tab).Next
				for m := 0; m < p; m++ {
					i := rg.pos[m]
					idx := ((i-s.step)%rg.n + rg.n) % rg.n
					if !o.reduce {
						idx = ((i+1-s.step)%rg.n + rg.n) % rg.n
					}
					dst := int(next[m])
					if o.off[dst] != o.off[m] {
						t.Fatalf("round %d: ring neighbours %d, %d work on different slices", ri, m, dst)
					}
					at := o.off[m] + idx*c
					msgs = append(msgs, simMsg{dst: dst, at: at, vals: append([]float64(nil), bufs[m][at:at+c]...), add: o.reduce})
				}
				if o.reduce {
					reduced += bytes
				}
				if s.step++; s.step == rg.n-1 {
					s.op, s.step = s.op+1, 0
				}
			}
			if (r.FanIn == 2) != (reduced > 0) || math.Abs(float64(r.ReduceBytes)-reduced) > 1e-9 {
				t.Fatalf("round %d: FanIn %d, ReduceBytes %v; its reduce-scatter steps bring %g B", ri, r.FanIn, r.ReduceBytes, reduced)
			}
			for _, msg := range msgs {
				for j, v := range msg.vals {
					if msg.add {
						bufs[msg.dst][msg.at+j] += v
					} else {
						bufs[msg.dst][msg.at+j] = v
					}
				}
			}
		}
	}
	for i, s := range streams {
		if s.op != len(s.ops) {
			t.Fatalf("stream %d: stopped in op %d step %d of %d ops", i, s.op, s.step, len(s.ops))
		}
	}
}

// checkCollective runs op's rounds on p random vectors of length l and checks the result against
// the tensor sum: all-reduce, every member holds it; reduce-scatter, the slices the streams leave
// reduced tile the buffer and hold it; all-gather (starting from those slices), every member holds
// it.
func checkCollective(t *testing.T, what string, fl Flows, op network.Op, g *Grid, l int, streams []*simStream) {
	t.Helper()
	p := len(g.At)
	r := rand.New(rand.NewPCG(uint64(p), uint64(l)))
	in := make([]*tensor.Dense, p)
	bufs := make([][]float64, p)
	for m := range in {
		d := make([]float64, l)
		for k := range d {
			d[k] = float64(r.IntN(1000))
		}
		in[m] = tensor.New(tensor.WithShape(l), tensor.WithBacking(d))
	}
	total := in[0].Clone().(*tensor.Dense)
	for _, x := range in[1:] {
		if _, err := total.Add(x, tensor.UseUnsafe()); err != nil {
			t.Fatal(err)
		}
	}
	sum := total.Data().([]float64)
	// The slices each member ends the reduce-scatter with.
	type slice struct{ m, off, n int }
	var mine []slice
	for _, s := range streams {
		last := s.rs[len(s.rs)-1]
		off, n := owned(t, last, g.At)
		for m := range off {
			mine = append(mine, slice{m, off[m], n})
		}
	}
	for m := range bufs {
		bufs[m] = append([]float64(nil), in[m].Data().([]float64)...)
	}
	switch op {
	case network.AllReduce:
		for _, s := range streams {
			s.ops = append(append([]simOp(nil), s.rs...), s.ag...)
		}
	case network.ReduceScatter:
		for _, s := range streams {
			s.ops = s.rs
		}
	case network.AllGather:
		for m := range bufs {
			for k := range bufs[m] {
				bufs[m][k] = math.NaN()
			}
		}
		for _, sl := range mine {
			copy(bufs[sl.m][sl.off:sl.off+sl.n], sum[sl.off:sl.off+sl.n])
		}
		for _, s := range streams {
			s.ops = s.ag
		}
	}
	simulate(t, fl, g.At, bufs, streams)
	if op == network.ReduceScatter {
		cover := make([]int, l)
		for _, sl := range mine {
			for k := sl.off; k < sl.off+sl.n; k++ {
				cover[k]++
				if bufs[sl.m][k] != sum[k] {
					t.Fatalf("%s: member %d value %d = %g, want %g", what, sl.m, k, bufs[sl.m][k], sum[k])
				}
			}
		}
		for k, c := range cover {
			if c != 1 {
				t.Fatalf("%s: value %d is owned by %d members, want 1", what, k, c)
			}
		}
		return
	}
	for m := range bufs {
		got := tensor.New(tensor.WithShape(l), tensor.WithBacking(bufs[m]))
		eq, err := got.ElEq(total, tensor.AsSameType())
		if err != nil {
			t.Fatal(err)
		}
		for k, ok := range eq.Data().([]float64) {
			if ok != 1 {
				t.Fatalf("%s: member %d value %d = %g, want %g", what, m, k, bufs[m][k], sum[k])
			}
		}
	}
}

// Rings: each of the four directed rings reduces one quarter of the buffer over all p members
// along its successor table (the round's part j carries quarter j).
func TestRingsFunctional(t *testing.T) {
	for _, c := range []struct{ rows, cols int }{{4, 4}, {8, 4}, {4, 8}, {9, 3}, {4, 2}, {2, 2}} {
		g := newGridGroup(c.rows, c.cols, true)
		p := c.rows * c.cols
		l := 4 * p * 2
		q := l / 4
		for _, op := range []network.Op{network.AllReduce, network.ReduceScatter, network.AllGather} {
			fl := mustRounds(t, Rings, op, units.Bytes(8*l), g)
			var streams []*simStream
			for j := 0; j < 4; j++ {
				tab := fl.Rounds[0].Pattern.Parts[j].K
				streams = append(streams, &simStream{
					rs: []simOp{{tab: tab, reduce: true, off: same(p, j*q), length: q}},
					ag: []simOp{{tab: tab, off: same(p, j*q), length: q}},
				})
			}
			checkCollective(t, Rings.Name()+" "+op.String(), fl, op, g.grid, l, streams)
		}
	}
}

// Successor tables are interned by content: the same walk registered by another model gets the
// same id (so the patterns that name it are equal and caches keyed by them hit); another walk,
// or the same length with one successor changed, a new one.
func TestRegisterInterns(t *testing.T) {
	a := Register(&Successors{Next: []int32{1, 2, 3, 0}})
	b := Register(&Successors{Next: []int32{1, 2, 3, 0}})
	c := Register(&Successors{Next: []int32{3, 0, 1, 2}})
	d := Register(&Successors{Next: []int32{1, 2, 3}})
	if a != b || a == c || a == d || c == d {
		t.Errorf("ids %d, %d (same walk), %d (reversed), %d (shorter)", a, b, c, d)
	}
	// Six entries (the hash's four lanes and two left over): the same walk, one with its last
	// successor changed, one with the first two swapped.
	e := Register(&Successors{Next: []int32{1, 2, 3, 4, 5, 0}})
	f := Register(&Successors{Next: []int32{1, 2, 3, 4, 5, 0}})
	g := Register(&Successors{Next: []int32{1, 2, 3, 4, 0, 5}})
	h := Register(&Successors{Next: []int32{2, 1, 3, 4, 5, 0}})
	if e != f || e == g || e == h || g == h || tableOf(g).Next[5] != 5 {
		t.Errorf("ids %d, %d (same walk), %d (tail changed), %d (head swapped)", e, f, g, h)
	}
	if got := tableOf(b).Next; len(got) != 4 || got[3] != 0 {
		t.Errorf("table %d holds %v", b, got)
	}
}

// The rings' outline (Outliner) is their rounds before the successor tables exist: on grids that
// meet the condition (2×2, 4×4, 8×4, 4×8 transposed, 3×9 shuffled) and for every op, Outline
// emits the rounds Rounds emits with the patterns left empty, builds no table, and says w = 4 (a
// hand count: four directed rings, each a table part of weight 1); Rounds' patterns then bear it
// out: each part a permutation without fixed points (Permutes, listed flow by flow in
// TestPermutes), the weights summing to w. Once the tables are built there is no outline (Rounds
// is read instead). Where Rounds declines (no pair of cycles, a single row, no grid, a grid the
// members do not fill), Outline declines with the same reason.
func TestRingsOutline(t *testing.T) {
	const s = units.Bytes(1 << 20)
	for _, c := range []struct {
		rows, cols int
		shuffle    bool
	}{{2, 2, false}, {4, 4, false}, {8, 4, false}, {4, 8, false}, {3, 9, true}} {
		for _, op := range []network.Op{network.AllReduce, network.ReduceScatter, network.AllGather} {
			g := newGridGroup(c.rows, c.cols, c.shuffle)
			p := c.rows * c.cols
			var ol Flows
			w, ok, err := Rings.Outline(op, s, g, &ol)
			if err != nil || !ok || w != 4 {
				t.Fatalf("%d×%d %s: outline w %v ok %v err %v, want 4, true", c.rows, c.cols, op, w, ok, err)
			}
			if g.grid.memoized(ringsKey{}) {
				t.Errorf("%d×%d %s: the outline built the tables", c.rows, c.cols, op)
			}
			fl := mustRounds(t, Rings, op, s, g)
			if ol.Algorithm != fl.Algorithm || len(ol.Rounds) != len(fl.Rounds) {
				t.Fatalf("%d×%d %s: outline %+v, rounds %+v", c.rows, c.cols, op, ol, fl)
			}
			for i, r := range fl.Rounds {
				sum := 0.0
				for k := 0; k < r.Pattern.N; k++ {
					if q := r.Pattern.Parts[k]; !q.Permutes(p) {
						t.Errorf("%d×%d %s round %d: part %+v is no permutation without fixed points", c.rows, c.cols, op, i, q)
					}
					sum += r.Pattern.Parts[k].W()
				}
				if sum != w {
					t.Errorf("%d×%d %s round %d: weights sum to %v, outline says %v", c.rows, c.cols, op, i, sum, w)
				}
				r.Pattern = Pattern{}
				if ol.Rounds[i] != r {
					t.Errorf("%d×%d %s round %d: outline %+v, rounds %+v", c.rows, c.cols, op, i, ol.Rounds[i], r)
				}
			}
			if _, ok, err := Rings.Outline(op, s, g, &Flows{}); ok || err != nil {
				t.Errorf("%d×%d %s: an outline once the tables are built (%v, %v)", c.rows, c.cols, op, ok, err)
			}
		}
	}
	bad := map[string]func() *gridGroup{
		"6×4":       func() *gridGroup { return newGridGroup(6, 4, false) },
		"1×8":       func() *gridGroup { return newGridGroup(1, 8, false) },
		"no grid":   func() *gridGroup { return &gridGroup{err: Decline("not a grid")} },
		"15 of 4×4": func() *gridGroup { g := newGridGroup(4, 4, false); g.grid.At = g.grid.At[:15]; return g },
	}
	for name, g := range bad {
		var fl, ol Flows
		_, ok, errO := Rings.Outline(network.AllReduce, s, g(), &ol) // before any table is built
		errR := Rings.Rounds(network.AllReduce, s, g(), &fl)
		var d *Declined
		if errR == nil || ok || errO == nil || errO.Error() != errR.Error() || !errors.As(errO, &d) {
			t.Errorf("%s: rounds %v, outline %v (ok %v): want the same decline", name, errR, errO, ok)
		}
	}
}
