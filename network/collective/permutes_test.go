package collective

import (
	"slices"
	"testing"
)

// Part.Permutes decides from a part's shape that its flows are a permutation of the members
// without fixed points; listing the flows (Each) checks it: when it says so, every member sends
// one flow and receives one, none to itself. The shapes it must recognise are hand-picked: a
// ring step and a shift along a digit that tile the group, XOR partners on a power-of-two digit,
// the four directed rings of a 4×4 grid's Hamiltonian cycles; and those it must not: a shift by
// a multiple of the digit's size, digit blocks that do not tile the group, a limit below it, a
// chain, a tree, an XOR on a digit of 3, a fold.
func TestPermutes(t *testing.T) {
	grid := &Grid{Rows: 4, Cols: 4, At: make([]int32, 16)}
	for i := range grid.At {
		grid.At[i] = int32(i)
	}
	rt := buildRingTables(grid)
	if rt.err != nil {
		t.Fatal(rt.err)
	}
	partial := Register(&Successors{Next: []int32{1, 2, 0, -1}})
	fixed := Register(&Successors{Next: []int32{0, 2, 3, 1}})
	for _, c := range []struct {
		q    Part
		p    int
		want bool
	}{
		{Part{Kind: RingNext, Stride: 1, Size: 12, K: 1}, 12, true},
		{Part{Kind: Shift, Stride: 1, Size: 12, K: -1}, 12, true},
		{Part{Kind: Shift, Stride: 4, Size: 3, K: 2}, 24, true},
		{Part{Kind: Shift, Stride: 4, Size: 3, K: 3}, 24, false}, // K ≡ 0: no flow
		{Part{Kind: Shift, Stride: 4, Size: 3, K: 1}, 20, false}, // blocks of 12 do not tile 20
		{Part{Kind: Shift, Stride: 1, Size: 8, K: 1, Limit: 4}, 8, false},
		{Part{Kind: XOR, Stride: 2, Size: 4, K: 3}, 16, true},
		{Part{Kind: XOR, Stride: 1, Size: 3, K: 1}, 6, false}, // 2 ⊕ 1 = 3 is off the digit
		{Part{Kind: XOR, Stride: 1, Size: 8, K: 4, Limit: 8}, 8, true},
		{Part{Kind: Chain, Stride: 1, Size: 8}, 8, false},
		{Part{Kind: TreeUp}, 8, false},
		{Part{Kind: FoldIn, K: 4}, 8, false},
		{TablePart(rt.ids[0]), 16, true},
		{TablePart(rt.ids[1]), 16, true},
		{TablePart(rt.ids[2]), 16, true},
		{TablePart(rt.ids[3]), 16, true},
		{TablePart(rt.ids[0]), 15, false}, // a table of 16 over 15 members
		{TablePart(partial), 4, false},
		{TablePart(fixed), 4, false},
	} {
		got := c.q.Permutes(c.p)
		if got != c.want {
			t.Errorf("%+v over %d: Permutes %v, want %v", c.q, c.p, got, c.want)
		}
		if !got {
			continue
		}
		out, in := make([]int, c.p), make([]int, c.p)
		c.q.Each(c.p, func(s, d int, w float64) {
			if s == d || w != c.q.W() {
				t.Errorf("%+v over %d: flow %d → %d of %g", c.q, c.p, s, d, w)
			}
			out[s]++
			in[d]++
		})
		for m := range out {
			if out[m] != 1 || in[m] != 1 {
				t.Errorf("%+v over %d: member %d sends %d flows, receives %d", c.q, c.p, m, out[m], in[m])
			}
		}
	}
}

// Part.Fan reads a binary tree's busiest sender and receiver from the heap's shape; the
// expectations are hand counts of the heap i → ⌊(i−1)/2⌋: over 7 members member 0 has the
// children 1 and 2, 1 has 3 and 4, 2 has 5 and 6, and every member but 0 one parent; over 2,
// member 0 has the one child 1; a limit of 2 cuts 8 members to that heap; over 1 member there is
// no flow. Listing the flows (Each) agrees wherever Fan answers.
func TestFan(t *testing.T) {
	for _, c := range []struct {
		q           Part
		p           int
		out, in     float64
		ok          bool
		description string
	}{
		{Part{Kind: TreeUp}, 7, 1, 2, true, "children send once, member 0 receives from 1 and 2"},
		{Part{Kind: TreeDown}, 7, 2, 1, true, "member 0 sends to 1 and 2, each child receives once"},
		{Part{Kind: TreeUp, Weight: 0.25}, 3, 0.25, 0.5, true, "weight 1/4: 1 and 2 send to 0"},
		{Part{Kind: TreeDown}, 2, 1, 1, true, "one child"},
		{Part{Kind: TreeUp, Limit: 2}, 8, 1, 1, true, "a limit of 2: one child"},
		{Part{Kind: TreeUp}, 1, 0, 0, false, "no flow"},
		{Part{Kind: RingNext, Stride: 1, Size: 4, K: 1}, 4, 0, 0, false, "not a tree"},
	} {
		out, in, ok := c.q.Fan(c.p)
		if out != c.out || in != c.in || ok != c.ok {
			t.Errorf("%s: Fan %v %v %v, want %v %v %v", c.description, out, in, ok, c.out, c.in, c.ok)
		}
		if !ok {
			continue
		}
		sends, recvs := make([]float64, c.p), make([]float64, c.p)
		c.q.Each(c.p, func(s, d int, w float64) { sends[s] += w; recvs[d] += w })
		hiOut, hiIn := 0.0, 0.0
		for k := range sends {
			hiOut, hiIn = max(hiOut, sends[k]), max(hiIn, recvs[k])
		}
		if hiOut != out || hiIn != in {
			t.Errorf("%s: flows listed send %v and receive %v at most, Fan %v %v", c.description, hiOut, hiIn, out, in)
		}
	}
}

// Grid.Shifted is the successor table of one torus step; the expectations are hand-written for
// a 2×3 grid holding members 5 4 3 / 2 1 0 (row by row): a step right sends 5 → 4, 4 → 3, 3 → 5
// (wrapping), 2 → 1, 1 → 0, 0 → 2; a step down sends each member to the one below it, the last
// row to the first. Successors with the same walk agrees for all four directions.
func TestShifted(t *testing.T) {
	g := &Grid{Rows: 2, Cols: 3, At: []int32{5, 4, 3, 2, 1, 0}}
	right := []int32{2, 0, 1, 5, 3, 4} // Next[m] for m = 0 … 5
	down := []int32{3, 4, 5, 0, 1, 2}
	if got := g.Shifted(0, 1).Next; !slices.Equal(got, right) {
		t.Errorf("right: %v, want %v", got, right)
	}
	if got := g.Shifted(1, 0).Next; !slices.Equal(got, down) {
		t.Errorf("down: %v, want %v", got, down)
	}
	for _, d := range [4][2]int{{0, 1}, {0, -1}, {1, 0}, {-1, 0}} {
		want := g.Successors(func(r, c int) (int, int) { return r + d[0], c + d[1] }).Next
		if got := g.Shifted(d[0], d[1]).Next; !slices.Equal(got, want) {
			t.Errorf("step %v: %v, Successors %v", d, got, want)
		}
		back := g.Successors(func(r, c int) (int, int) { return r - d[0], c - d[1] }).Next
		if fwd, rev := g.shiftedPair(d[0], d[1]); !slices.Equal(fwd.Next, want) || !slices.Equal(rev.Next, back) {
			t.Errorf("step %v and back: %v, %v; Successors %v, %v", d, fwd.Next, rev.Next, want, back)
		}
	}
}

// registerShifted registers a step and its reverse as each other's inverse; a second grid of the
// same arrangement (another model of the job) gets the same two ids, the reverse read from the
// step's recorded inverse. Hand-written for the 2×3 grid of TestShifted (members 5 4 3 / 2 1 0):
// right sends 5 → 4, 4 → 3, 3 → 5, 2 → 1, 1 → 0, 0 → 2, and left undoes it: 4 → 5, 3 → 4,
// 5 → 3, 1 → 2, 0 → 1, 2 → 0. A step registered alone first (Register, no inverse known) gets
// its inverse recorded by the first registerShifted. A lookup's scratch is not kept.
func TestRegisterShifted(t *testing.T) {
	at := []int32{5, 4, 3, 2, 1, 0}
	right, left := []int32{2, 0, 1, 5, 3, 4}, []int32{1, 2, 0, 4, 5, 3} // Next[m] for m = 0 … 5
	g := &Grid{Rows: 2, Cols: 3, At: slices.Clone(at)}
	alone := Register(g.Shifted(0, 1))
	a, b := g.registerShifted(0, 1)
	if a != alone || !slices.Equal(tableOf(a).Next, right) || !slices.Equal(tableOf(b).Next, left) {
		t.Fatalf("ids %d, %d (registered alone %d): %v, %v; want %v, %v", a, b, alone, tableOf(a).Next, tableOf(b).Next, right, left)
	}
	if inv, ok := TablePart(a).Inverse(); !ok || inv.K != b {
		t.Errorf("inverse of %d: %+v (%v), want %d", a, inv, ok, b)
	}
	again := &Grid{Rows: 2, Cols: 3, At: slices.Clone(at)}
	if c, d := again.registerShifted(0, 1); c != a || d != b {
		t.Errorf("again: ids %d, %d, want %d, %d", c, d, a, b)
	}
	if c, d := again.registerShifted(0, -1); c != b || d != a {
		t.Errorf("left: ids %d, %d, want %d, %d (the step's inverse and the step)", c, d, b, a)
	}
	// The step looked up is written into a scratch buffer that is not kept: on a grid in another
	// order (members 0 2 4 / 1 3 5: right 0 → 2, 1 → 3, 2 → 4, 3 → 5, 4 → 0, 5 → 1, left the
	// reverse), the step registered after a lookup that found nothing keeps its successors when
	// the next lookup (a column step: 0 ↔ 1, 2 ↔ 3, 4 ↔ 5) writes the scratch again.
	other := &Grid{Rows: 2, Cols: 3, At: []int32{0, 2, 4, 1, 3, 5}}
	x, y := other.registerShifted(0, 1)
	other.registerShifted(1, 0)
	if want, back := []int32{2, 3, 4, 5, 0, 1}, []int32{4, 5, 0, 1, 2, 3}; !slices.Equal(tableOf(x).Next, want) || !slices.Equal(tableOf(y).Next, back) {
		t.Errorf("another grid's step: %v, %v after a column step; want %v, %v", tableOf(x).Next, tableOf(y).Next, want, back)
	}
}
