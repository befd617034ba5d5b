package fabric_test

import (
	"math"
	"slices"
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/network/hxmesh"
)

// The subgroup of board translations a round is routed under, counted by hand. A HammingMesh's
// symmetry factors are (boards a row's translations rotate, leaf blocks of a row, the same for
// columns): (x, 1, y, 1) with single switches or torus cables.
func TestSublattice(t *testing.T) {
	mesh := func(a, x int, global string) *hxmesh.Config {
		c := hxmesh.DefaultConfig()
		c.BoardA, c.BoardB, c.GridX, c.GridY, c.Global = a, a, x, x, global
		return c
	}
	ring := func(p int) collective.Pattern {
		return collective.One(collective.Part{Kind: collective.RingNext, Stride: 1, Size: int32(p), K: 1})
	}
	uniform := collective.One(collective.Part{Kind: collective.Uniform})
	for _, c := range []struct {
		name string
		cfg  *hxmesh.Config
		gpus int
		pt   collective.Pattern
		g    network.Group
		want []int32
	}{
		// A ring over all 32×32 boards of 4×4 in board order: board (31, Y)'s last accelerator
		// sends to board (0, Y+1)'s first, so a translation along the rows moves that flow off
		// the ring, one along the columns (Y ↦ Y+1, and (31, 31) → (0, 0) wraps) keeps it.
		{"hx4-large ring", mesh(4, 32, "trees"), 16384, ring(16384), network.Group{Size: 16384, Stride: 1}, []int32{32, 1, 1, 1}},
		// The same ring on 64×64 boards of 2×2 whose rows and columns are fat trees of 16 boards
		// per leaf: Γ's factors move boards within a leaf's block along x, blocks along x, the
		// same along y (16, 4, 16, 4). Moves within a block fix the leaf's uplinks, so no
		// sub-lattice moves along them (steps 16 and 16); a block along x moves the row-end flow
		// (63, Y) → (0, Y + 1) off the ring, a block along y (Y ↦ Y + 16) keeps it.
		{"hx2-large ring", mesh(2, 64, "trees"), 16384, ring(16384), network.Group{Size: 16384, Stride: 1}, []int32{16, 4, 16, 1}},
		// Pairs within each board (XOR of the last digit): every board move keeps them, but the
		// moves within a leaf's block fix the leaf's uplinks, so the sub-lattice leaves them out.
		{"hx2-large board pairs", mesh(2, 64, "trees"), 16384, collective.One(collective.Part{Kind: collective.XOR, Stride: 1, Size: 4, K: 1}),
			network.Group{Size: 16384, Stride: 1}, []int32{16, 1, 16, 1}},
		// 16 all-to-alls of 1,024 ranks on 64×64 boards of 2×2: each group is four board rows,
		// kept by any row translation and by column translations of four boards.
		{"torus-large a2a1024", mesh(2, 64, "torus"), 16384, uniform, network.Group{Size: 1024, Stride: 1}, []int32{1, 1, 4, 1}},
		// The same on 16,320 ranks: 15 groups fill rows 0–59, rows 60–63 idle; only the row
		// translations keep that.
		{"torus-large a2a1024 on 16320", mesh(2, 64, "torus"), 16320, uniform, network.Group{Size: 1024, Stride: 1}, []int32{1, 1, 64, 1}},
		// GPT-3's rings of 4 at stride 96 over 16,320 ranks: blocks of 96 boards (1.5 board rows)
		// repeat every 3 rows, which 64 rows do not divide.
		{"torus-large tp4@96", mesh(2, 64, "torus"), 16320, ring(4), network.Group{Size: 4, Stride: 96}, nil},
		// Rings of 4 at stride 64 on 16×16 boards of 2×2: 64 ranks are 16 boards, one board
		// row, so member i sits at the same column i board rows down, and each block of 256
		// ranks is 4 whole board rows: kept by every row translation and by column translations
		// of 4 boards.
		{"torus ring stride 64", mesh(2, 16, "torus"), 1024, ring(4), network.Group{Size: 4, Stride: 64}, []int32{1, 1, 4, 1}},
		// Rings of 4 at stride 4,096 on 64×64 boards of 2×2: 4,096 ranks are 1,024 boards, 16
		// board rows, so every accelerator sends to the one at its place 16 board rows down
		// (mod 64): kept by every row and every column translation.
		{"torus ring stride 4096", mesh(2, 64, "torus"), 16384, ring(4), network.Group{Size: 4, Stride: 4096}, []int32{1, 1, 1, 1}},
	} {
		m, err := hxmesh.Spec().New(c.cfg, network.Env{GPUs: c.gpus})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.(*fabric.Model).Sublattice(c.pt, c.g); !slices.Equal(got, c.want) {
			t.Errorf("%s: steps %v, want %v", c.name, got, c.want)
		}
		if c.pt.Parts[0].Kind == collective.Uniform {
			continue // routed from the aggregated matrix, never collected flow by flow
		}
		if got := m.(*fabric.Model).SublatticeCollected(c.pt, c.g); !slices.Equal(got, c.want) {
			t.Errorf("%s: steps from the collected flows %v, want %v", c.name, got, c.want)
		}
		// One group over the first endpoints in rank order: also from the parts' partners.
		if got, ok := m.(*fabric.Model).SublatticeWhole(c.pt, c.g); ok != (c.g.Groups(c.gpus) == 1) || ok && !slices.Equal(got, c.want) {
			t.Errorf("%s: steps from the parts' partners %v (applies %v), want %v", c.name, got, ok, c.want)
		}
	}
}

// A round of one group over all 16,384 accelerators of the large Hx4Mesh (boards of 4×4 on a
// 32×32 grid of boards; symmetry factors (32, 1, 32, 1)) finds its sub-lattice from each part's
// partners (sublatticeWhole), counted by hand for successor tables: the ring in rank order as a
// table (as TestSublattice's ring: kept by the column translations only), one step +x along the
// global accelerator grid (every board translation moves (r, c) to (r, c + 4i) or (r + 4j, c),
// which commutes with the step: kept by all), the ring with member 0 silent (every translation
// moves the silent member onto one that sends: none), and the ring and the step as two parts
// (the translations that keep both). The two-part pattern again with other weights and its parts
// swapped reads the answers kept per part and finds the same.
func TestSublatticeWhole(t *testing.T) {
	cfg, m := hx4Large(t)
	const E, cols = 16384, 128
	fwd, silent, right := make([]int32, E), make([]int32, E), make([]int32, E)
	at := make([]int32, E) // endpoint at grid position r·cols + c
	for e := range int32(E) {
		r, c := cfg.Coord(e)
		at[r*cols+c] = e
	}
	for e := range int32(E) {
		fwd[e], silent[e] = (e+1)%E, (e+1)%E
		r, c := cfg.Coord(e)
		right[e] = at[r*cols+(c+1)%cols]
	}
	silent[0] = -1
	table := func(next []int32, w float64) collective.Part {
		p := collective.TablePart(collective.Register(&collective.Successors{Next: next}))
		p.Weight = w
		return p
	}
	all := network.Group{Size: E, Stride: 1}
	for _, c := range []struct {
		name string
		pt   collective.Pattern
		want []int32
	}{
		{"ring as a table", collective.One(table(fwd, 0)), []int32{32, 1, 1, 1}},
		{"+x", collective.One(table(right, 0)), []int32{1, 1, 1, 1}},
		{"ring, member 0 silent", collective.One(table(silent, 0)), nil},
		{"ring and +x", collective.One(table(fwd, 128)).With(table(right, 128)), []int32{32, 1, 1, 1}},
		{"+x and ring, other weights", collective.One(table(right, 1)).With(table(fwd, 2)), []int32{32, 1, 1, 1}},
		{"+x and ring silent", collective.One(table(right, 1)).With(table(silent, 1)), nil},
	} {
		got, ok := m.SublatticeWhole(c.pt, all)
		if !ok || !slices.Equal(got, c.want) {
			t.Errorf("%s: steps %v (applies %v), want %v", c.name, got, ok, c.want)
		}
		if got := m.SublatticeCollected(c.pt, all); !slices.Equal(got, c.want) {
			t.Errorf("%s: steps from the collected flows %v, want %v", c.name, got, c.want)
		}
	}
}

// The period a round is routed by (periods.go), counted by hand: GPT-3's rings of 4 at stride
// 96 (pp-first: blocks of 384 ranks, 96 rings each) on jobs the sub-lattice cannot route.
func TestPeriod(t *testing.T) {
	mesh := func(a, x int, global string) *hxmesh.Config {
		c := hxmesh.DefaultConfig()
		c.BoardA, c.BoardB, c.GridX, c.GridY, c.Global = a, a, x, x, global
		return c
	}
	ring := collective.One(collective.Part{Kind: collective.RingNext, Stride: 1, Size: 4, K: 1})
	tp := network.Group{Size: 4, Stride: 96}
	for _, c := range []struct {
		name string
		cfg  *hxmesh.Config
		gpus int
		q    int
		tau  []uint16
	}{
		// A block is 96 boards of 2×2, 1.5 rows of 64: two blocks (192 rings, 768 flows) are
		// three board rows, the translation (0, 3) of Z_64 × Z_64.
		{"torus-large", mesh(2, 64, "torus"), 16320, 2 * 96 * 4, []uint16{0, 3}},
		// 24 boards of 4×4 per block, 32 per row (one 64-port switch per row and column:
		// Z_32 × Z_32): four blocks (1,536 flows) are three board rows.
		{"hx4-large", mesh(4, 32, "trees"), 16320, 4 * 96 * 4, []uint16{0, 3}},
		// The 384-rank job alone: rings 16 apart start one board (16 ranks) apart, (1, 0).
		{"hx4-large job384", mesh(4, 32, "trees"), 384, 16 * 4, []uint16{1, 0}},
		// Row and column fat trees of 16 boards per leaf (2·64 ports > 64): the translations
		// move boards within a leaf's block and blocks among themselves, and no number of blocks
		// (a multiple of 1.5 rows) is such a move that repeats twice within 16,320 ranks.
		{"hx2-large", mesh(2, 64, "trees"), 16320, 0, nil},
	} {
		m, err := hxmesh.Spec().New(c.cfg, network.Env{GPUs: c.gpus})
		if err != nil {
			t.Fatal(err)
		}
		if q, tau := m.(*fabric.Model).Period(ring, tp); q != c.q || !slices.Equal(tau, c.tau) {
			t.Errorf("%s: period %d flows by %v, want %d by %v", c.name, q, tau, c.q, c.tau)
		}
	}
}

// The flows after the last whole period of a round read by windows (windows.go) load links that
// windows read as their window's sum plus those flows' loads: each, bit for bit, what the copies
// and those flows leave when added link by link. GPT-3's rings on the large Hx4Mesh: 4,032 rings are 10.5
// periods of 384 (four blocks of 96), so 768 flows follow the last whole period: 192 groups
// routed by the runs of 16 groups × 6, 2 and 4 copies that start the period (TestRuns), so their
// loads are read from those runs' sums (tailAsPrefix), not routed; pairs at stride 70 on 192
// ranks of the 16×16 torus of 2×2 boards, whose last flows cross links the copies load: its 70
// pairs (140 ranks) are two periods of 32 and 6 pairs after, too few for the run of 4 pairs × 6
// copies that starts the period, so they are routed.
func TestWindowsRemainder(t *testing.T) {
	for _, c := range []struct {
		hxRingCase
		prefix bool
	}{
		{hxRingCase{4, 32, "trees", 16320, 4, 96}, true},
		{hxRingCase{2, 8, "torus", 192, 2, 70}, false},
	} {
		m, ring := hxRings(t, c.hxRingCase)
		rem, prefix, all := m.RemainderLoads(ring, network.Group{Size: c.size, Stride: c.stride})
		if len(rem) == 0 {
			t.Fatalf("%+v: no links loaded after the last whole period", c)
		}
		if prefix != c.prefix {
			t.Errorf("%+v: read from the first stretches %v", c, prefix)
		}
		for l, x := range rem {
			if x != all[l] {
				t.Errorf("%+v: link %d: %v, copies added link by link %v", c, l, x, all[l])
			}
		}
	}
}

// hxRingCase is a HammingMesh of a×a boards on an x×x grid (global: its rows' and columns'
// cables) for gpus ranks, and groups of size ranks at stride.
type hxRingCase struct {
	a, x               int
	global             string
	gpus, size, stride int
}

// hxRings is c's model and a ring over its groups.
func hxRings(t *testing.T, c hxRingCase) (*fabric.Model, collective.Pattern) {
	t.Helper()
	cfg := hxmesh.DefaultConfig()
	cfg.BoardA, cfg.BoardB, cfg.GridX, cfg.GridY, cfg.Global = c.a, c.a, c.x, c.x, c.global
	m, err := hxmesh.Spec().New(cfg, network.Env{GPUs: c.gpus})
	if err != nil {
		t.Fatal(err)
	}
	return m.(*fabric.Model), collective.One(collective.Part{Kind: collective.RingNext, Stride: 1, Size: int32(c.size), K: 1})
}

// The runs a period is routed by (runs.go), counted by hand on GPT-3's rings of 4 at stride 96
// (pp-first), rank r on endpoint r: group j of a block starts at rank 384·block + j and its
// members are 96 ranks apart. τ's digits are written (column, row) of boards as 65,536·column
// + row. And the runs read from an earlier run moved by σ (Images; its start, the earlier run's,
// σ written as τ): on the torus, the run of 8 at 96 (row 1 columns 32 + i, 56 + i, row 2
// columns 16 + i, 40 + i, i < 8) is the one at 64 (row 0 columns 16 + i, 40 + i, row 1 columns
// i, 24 + i) moved 16 columns and 1 row, while the run of 16 at 128 (rows 1, 2, 2, 2) is not
// the one at 0 (rows 0, 0, 0, 1) moved; on the Hx4Mesh, block 3's run (row 2, columns
// 8 + j/16 + 6k) is block 0's (row 0, columns j/16 + 6k) moved 8 columns and 2 rows, block 2's
// run of 2 at 256 (j/16 = 4, 5: boards 52 + 6k, 53 + 6k = row 1 columns 20, 26, row 2 columns
// 0, 6) is block 1's at 96 (boards 24 + 6k, 25 + 6k = row 0 columns 24, 30, row 1 columns 4,
// 10) moved −4 (28) columns and 1 row, and the runs of 4 at 128 (rows 0, 1, 1, 1) and 192
// (rows 1, 1, 1, 2) are not each other moved.
func TestRuns(t *testing.T) {
	ring := collective.One(collective.Part{Kind: collective.RingNext, Stride: 1, Size: 4, K: 1})
	tp := network.Group{Size: 4, Stride: 96}
	for _, c := range []struct {
		name   string
		a, x   int
		global string
		want   [][4]int
		images [][3]int
	}{
		// 2×2 boards (4 ranks), 64 per row: block 0's member k of group j is on board
		// j/4 + 24k. For j/4 < 16 all four stay in their rows (boards 0–15, 24–39, 48–63,
		// 72–87 = row 1, 8–23): 16 copies of 4 groups one column apart; groups 64–95 (boards
		// 16–23, 40–47, row 1 0–7, row 1 24–31): 8 copies. Block 1 (board 96 + j/4 + 24k)
		// crosses into row 2 at j/4 = 8 (row 1 56–63 | row 2 0–15): 8 copies, then 16. (Groups
		// 64–95 and block 1's first 32 are also each other moved 16 columns and a row: 2 copies
		// of 32, fewer than 8.) 192 groups, the period.
		{"torus-large", 2, 64, "torus", [][4]int{{0, 4, 16, 1 << 16}, {64, 4, 8, 1 << 16}, {96, 4, 8, 1 << 16}, {128, 4, 16, 1 << 16}},
			[][3]int{{96, 64, 16<<16 | 1}}},
		// 4×4 boards (16 ranks), 32 per row: member k of block b's group j is on board
		// 24b + j/16 + 6k. Block 0 (boards 0–23) crosses no row: 6 copies of 16 groups one
		// column apart; block 1 (24–47) crosses at board 32 when j/16 = 2 (30, 31 | 32–35): 2
		// and 4 copies; block 2 (48–71) at j/16 = 4 (28–31 | 32, 33 of row 1): 4 and 2; block 3
		// (72–95, row 2 8–31) none: 6. 384 groups, the period.
		{"hx4-large", 4, 32, "trees", [][4]int{{0, 16, 6, 1 << 16}, {96, 16, 2, 1 << 16}, {128, 16, 4, 1 << 16},
			{192, 16, 4, 1 << 16}, {256, 16, 2, 1 << 16}, {288, 16, 6, 1 << 16}},
			[][3]int{{256, 96, 28<<16 | 1}, {288, 0, 8<<16 | 2}}},
	} {
		cfg := hxmesh.DefaultConfig()
		cfg.BoardA, cfg.BoardB, cfg.GridX, cfg.GridY, cfg.Global = c.a, c.a, c.x, c.x, c.global
		m, err := hxmesh.Spec().New(cfg, network.Env{GPUs: 16320})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.(*fabric.Model).Runs(ring, tp); !slices.Equal(got, c.want) {
			t.Errorf("%s: runs %v, want %v", c.name, got, c.want)
		}
		if got := m.(*fabric.Model).RunImages(ring, tp); !slices.Equal(got, c.images) {
			t.Errorf("%s: images %v, want %v", c.name, got, c.images)
		}
	}
}

// largeTP4 is GPT-3's tensor-parallel group (4 ranks at stride 96) with its ring's,
// halving/doubling partners' and bidirectional ring's patterns.
func largeTP4() (network.Group, []collective.Pattern) {
	ring := collective.One(collective.Part{Kind: collective.RingNext, Stride: 1, Size: 4, K: 1})
	xor := collective.One(collective.Part{Kind: collective.XOR, Stride: 1, Size: 4, K: 2})
	bi := ring
	bi.Parts[1], bi.N = collective.Part{Kind: collective.RingNext, Stride: 1, Size: 4, K: 3}, 2
	return network.Group{Size: 4, Stride: 96}, []collective.Pattern{ring, xor, bi}
}

// largeMeshes are the paper's large torus of 2×2 boards and Hx4Mesh.
func largeMeshes() []*hxmesh.Config {
	var out []*hxmesh.Config
	for _, c := range []struct {
		a, x   int
		global string
	}{{2, 64, "torus"}, {4, 32, "trees"}} {
		cfg := hxmesh.DefaultConfig()
		cfg.BoardA, cfg.BoardB, cfg.GridX, cfg.GridY, cfg.Global = c.a, c.a, c.x, c.x, c.global
		out = append(out, cfg)
	}
	return out
}

// Runs' copies read along their move's cycles (copiesAlong) leave every link the same load,
// bit for bit, and load the links in the same order as adding the copies copy by copy
// (WithoutRunCycles), and so do runs read from an earlier run moved (Images) as routing and
// copying every run (WithoutRunImages), either way: GPT-3's rings, halving/doubling partners and
// bidirectional rings of 4 at stride 96 on the large torus and Hx4Mesh, whose periods are the
// runs TestRuns counts (the torus's of 8 and 16 copies read along their cycles, the Hx4Mesh's
// of 2–6 replayed; each with runs read from earlier ones), with the period's copies added link
// by link (windows off). Each pattern's price, read by windows, is the same bit for bit, with
// the same bottleneck.
func TestRunCyclesLoads(t *testing.T) {
	tp, patterns := largeTP4()
	for _, cfg := range largeMeshes() {
		m, err := hxmesh.Spec().New(cfg, network.Env{GPUs: 16320})
		if err != nil {
			t.Fatal(err)
		}
		along := m.(*fabric.Model)
		for _, pt := range patterns {
			if len(along.RunImages(pt, tp)) == 0 {
				t.Errorf("%s %+v: no run read from an earlier one", cfg.Global, pt.Parts[0])
			}
			l1, v1 := along.PeriodLoads(pt, tp)
			p1, err1 := along.PricePattern("p", pt, 1e8, tp)
			for _, ref := range []struct {
				name string
				m    *fabric.Model
			}{{"copy by copy", along.Along()}, {"every run routed", along.Unimaged()}, {"both", along.Along().Unimaged()}} {
				l2, v2 := ref.m.PeriodLoads(pt, tp)
				if len(l1) == 0 || !slices.Equal(l1, l2) || !slices.Equal(v1, v2) {
					t.Errorf("%s %+v: %d links loaded, %d %s (same order and loads: %v, %v)",
						cfg.Global, pt.Parts[0], len(l1), len(l2), ref.name, slices.Equal(l1, l2), slices.Equal(v1, v2))
				}
				p2, err2 := ref.m.PricePattern("p", pt, 1e8, tp)
				if err1 != nil || err2 != nil || p1 != p2 {
					t.Errorf("%s %+v: price %+v (%v), %s %+v (%v)", cfg.Global, pt.Parts[0], p1, err1, ref.name, p2, err2)
				}
			}
		}
	}
}

// A periodic round whose sampled flows rule out every sub-lattice collects only the flows its
// routing reads (the first period's and those after the last whole one): the same flows in the
// same order as collecting all of them, so its price equals, bit for bit, the same job's with
// its placement given as a table (rank r on endpoint r written out), which collects every flow.
// GPT-3's rings, halving/doubling partners and bidirectional rings of 4 at stride 96 over 16,320
// ranks of the large torus and Hx4Mesh: the 64 endpoints the job leaves out are the last board
// row's end, which no translation of the boards maps onto themselves, so no sub-lattice (Sublattice
// finds none either); a ring over all 16,384 in board order is invariant under the column
// translations (lattice.go), so the samples do not rule one out (and Sublattice finds one).
func TestPeriodicCollection(t *testing.T) {
	tp, patterns := largeTP4()
	for _, cfg := range largeMeshes() {
		m, placed := placedAsIs(t, cfg, 16320)
		for _, pt := range patterns {
			if !m.NoSublattice(pt, tp) || m.Sublattice(pt, tp) != nil {
				t.Errorf("%s %+v: sampled flows rule out sub-lattices %v, found %v", cfg.Global, pt.Parts[0], m.NoSublattice(pt, tp), m.Sublattice(pt, tp))
			}
			x, err1 := m.PricePattern("p", pt, 1e8, tp)
			y, err2 := placed.PricePattern("p", pt, 1e8, tp)
			if err1 != nil || err2 != nil || x != y {
				t.Errorf("%s %+v: first period and remainder %+v (%v), every flow %+v (%v)", cfg.Global, pt.Parts[0], x, err1, y, err2)
			}
		}
		whole, err := hxmesh.Spec().New(cfg, network.Env{GPUs: 16384})
		if err != nil {
			t.Fatal(err)
		}
		all := network.Group{Size: 16384, Stride: 1}
		all16 := collective.One(collective.Part{Kind: collective.RingNext, Stride: 1, Size: 16384, K: 1})
		if wm := whole.(*fabric.Model); wm.NoSublattice(all16, all) || wm.Sublattice(all16, all) == nil {
			t.Errorf("%s: a ring over every accelerator ruled out of sub-lattices", cfg.Global)
		}
	}
}

// One group's successor table (a grid algorithm's cycle over the whole machine) is collected
// straight from the table where rank r is on endpoint r (Part.Successors): the same flows in the
// same order as listing them one by one (Each), which a placement given as a table (rank r on
// endpoint r written out) does, so the prices agree bit for bit. The tables: the small torus's
// 64 accelerators in a cycle 0 → 1 → … → 63 → 0, in the cycle reversed, a table that leaves
// every third member silent (−1), and one of 32 entries over a group of 64 (the rest send
// nothing).
func TestTableCollection(t *testing.T) {
	cfg := hxmesh.DefaultConfig()
	cfg.BoardA, cfg.BoardB, cfg.GridX, cfg.GridY, cfg.Global = 2, 2, 4, 4, "torus"
	m, placed := placedAsIs(t, cfg, 64)
	fwd, back, gaps, short := make([]int32, 64), make([]int32, 64), make([]int32, 64), make([]int32, 32)
	for i := range fwd {
		fwd[i], back[i], gaps[i] = int32((i+1)%64), int32((i+63)%64), int32((i+5)%64)
		if i%3 == 0 {
			gaps[i] = -1
		}
	}
	for i := range short {
		short[i] = int32(63 - i)
	}
	all := network.Group{Size: 64, Stride: 1}
	for _, next := range [][]int32{fwd, back, gaps, short} {
		pt := collective.One(collective.TablePart(collective.Register(&collective.Successors{Next: next})))
		pt.Parts[0].Weight = 0.5
		x, err1 := m.PricePattern("p", pt, 1e8, all)
		y, err2 := placed.PricePattern("p", pt, 1e8, all)
		if err1 != nil || err2 != nil || x != y || x.Total <= 0 {
			t.Errorf("table %v: from the table %+v (%v), flow by flow %+v (%v)", next[:4], x, err1, y, err2)
		}
	}
}

// A sub-lattice's representatives listed from its steps (appendReps) are those a scan of every
// endpoint marks, as many as counted by hand on the large Hx4Mesh (Γ's 16 representatives, one
// board's accelerators, times Π steps cosets): 16 for every translation, 512 for the column
// translations only (steps 32, 1, 1, 1), 16·2·4 = 128 for steps 2, 1, 4, 1.
func TestLatticeReps(t *testing.T) {
	_, m := hx4Large(t)
	for _, c := range []struct {
		steps []int32
		want  int
	}{{[]int32{1, 1, 1, 1}, 16}, {[]int32{32, 1, 1, 1}, 512}, {[]int32{2, 1, 4, 1}, 128}} {
		listed, scanned, marked := m.Reps(c.steps)
		slices.Sort(listed)
		if len(listed) != c.want || !slices.Equal(listed, scanned) || !slices.Equal(marked, scanned) {
			t.Errorf("steps %v: %d listed, %d scanned, %d marked, want %d of each, the same", c.steps, len(listed), len(scanned), len(marked), c.want)
		}
	}
	// The move tables (Symmetry.mover: each element's digit stepped, not divided) against act,
	// for every factor and step of the (32, 1, 32, 1) boards.
	stride := int32(1)
	for f, mf := range []int32{32, 1, 32, 1} {
		for d := int32(1); d < mf; d++ {
			if table, acted := m.Moved(f, stride, d); !slices.Equal(table, acted) {
				t.Errorf("factor %d step %d: the move table differs from act", f, d)
			}
		}
		stride *= mf
	}
}

// Each lists the flows of the kinds sub-lattices take (latticeKinds) one per source at most, in
// increasing order of sources (routeWhole reads a part's partners in member order as Each's
// order): every such kind, with digits and limits, over 24 members.
func TestEachAscending(t *testing.T) {
	for _, q := range []collective.Part{
		{Kind: collective.RingNext, Stride: 1, Size: 24, K: 1}, {Kind: collective.Shift, Stride: 4, Size: 3, K: 2},
		{Kind: collective.Shift, Stride: 2, Size: 4, K: -1}, {Kind: collective.Chain, Stride: 3, Size: 4},
		{Kind: collective.XOR, Stride: 2, Size: 4, K: 3}, {Kind: collective.XOR, Stride: 1, Size: 8, K: 1, Limit: 16},
		{Kind: collective.FoldIn, K: 8}, {Kind: collective.FoldOut, K: 8}, {Kind: collective.TreeUp},
		{Kind: collective.ToRoot, K: 5},
		collective.TablePart(collective.Register(&collective.Successors{Next: []int32{3, -1, 0, 7, 2, 9, 1, 4, 6, 5}})),
	} {
		last, n := -1, 0
		q.Each(24, func(s, d int, _ float64) {
			if s <= last {
				t.Errorf("%+v: source %d after %d", q, s, last)
			}
			last, n = s, n+1
		})
		if n == 0 {
			t.Errorf("%+v: no flows", q)
		}
	}
}

// The torus all-reduce over all 16,384 accelerators of the large Hx4Mesh sends along the four
// axis tables, each registered as the inverse of the opposite one, so each part's flows into the
// representatives of the round's sub-lattice (every board translation: the 16 accelerators of
// board 0, whose one sender each is one step back) are read from its inverse: the same 16 pairs
// in the same order as scanning the table (sorted: repsFrom). On the large Hx2Mesh (64×64 boards
// of 2×2, rows and columns fat trees of 16 boards per leaf: the sub-lattice moves leaf blocks
// only, 4 × 4 of them, so 16,384/16 = 1,024 representatives) the 1,024 pairs are read from the
// marks instead. The algorithm's price then equals, bit for bit, the same job's with its
// placement written out (every flow collected, sublatticeOf).
func TestSublatticeWholeInverse(t *testing.T) {
	for _, c := range []struct {
		a, x, pairs int
	}{{4, 32, 16}, {2, 64, 1024}} {
		cfg := hxmesh.DefaultConfig()
		cfg.BoardA, cfg.BoardB, cfg.GridX, cfg.GridY, cfg.Global = c.a, c.a, c.x, c.x, "trees"
		m, placed := placedAsIs(t, cfg, 16384)
		all := network.Group{Size: 16384, Stride: 1}
		via, scan := m.TorusRepFlows(all)
		if len(via) != 4 {
			t.Fatalf("board %d: %d parts, want 4 (A's and B's two directions)", c.a, len(via))
		}
		for i := range via {
			if len(via[i]) != 2*c.pairs || !slices.Equal(via[i], scan[i]) {
				t.Errorf("board %d part %d: from the inverse %d pairs, scanned %d (want %d each, equal)", c.a, i, len(via[i])/2, len(scan[i])/2, c.pairs)
			}
		}
		col := network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: all}
		x, err1 := m.PriceWith(collective.HMTorus, col)
		y, err2 := placed.PriceWith(collective.HMTorus, col)
		if err1 != nil || err2 != nil || x != y || x.Total <= 0 {
			t.Errorf("board %d: torus all-reduce %+v (%v), with the placement written out %+v (%v)", c.a, x, err1, y, err2)
		}
	}
}

// hx4Large is the large Hx4Mesh (boards of 4×4 on a 32×32 grid of boards, one switch per row
// and column) and a job on all 16,384 of its accelerators.
func hx4Large(t *testing.T) (*hxmesh.Config, *fabric.Model) {
	t.Helper()
	cfg := hxmesh.DefaultConfig()
	cfg.BoardA, cfg.BoardB, cfg.GridX, cfg.GridY, cfg.Global = 4, 4, 32, 32, "trees"
	m, err := hxmesh.Spec().New(cfg, network.Env{GPUs: 16384})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, m.(*fabric.Model)
}

// placedAsIs is a job of gpus ranks on the HxMesh cfg, and the same job with its placement given
// as a table of rank r on endpoint r (which collects every flow one by one).
func placedAsIs(t *testing.T, cfg *hxmesh.Config, gpus int) (m, placed *fabric.Model) {
	t.Helper()
	nm, err := hxmesh.Spec().New(cfg, network.Env{GPUs: gpus})
	if err != nil {
		t.Fatal(err)
	}
	m = nm.(*fabric.Model)
	ident := make([]int32, gpus)
	for i := range ident {
		ident[i] = int32(i)
	}
	return m, m.Placed(ident)
}

// A two-leaf tree by hand: endpoints 0, 1 on leaf 4, endpoints 2, 3 on leaf 5, both leaves on
// spine 6. Γ = Z_2 × Z_2 acts as e ↦ e XOR g (factor 0 swaps the endpoints of a leaf, factor 1
// the leaves), named by element e for the endpoint links and 0, 2 for the leaves' uplinks
// (factor 0 fixes them: orbits of 2 links, not 4). So no sub-lattice moves along factor 0: pairs
// at XOR distance 2 (0 ↔ 2, 1 ↔ 3), which every element keeps, are routed under steps (2, 1),
// and each uplink carries the two flows that cross it, as routing every flow finds (under all of
// Γ the orbit sum would give it one). Named with an uplink's element moving along factor 0 (1
// instead of 0, orbit still of 2 links), the naming is not one to one from the elements without
// a digit along factor 0, and no sub-lattice is used.
func TestSublatticeFixedLinks(t *testing.T) {
	build := func(uplink int32) (*fabric.Model, *fabric.Model) {
		b := fabric.NewBuilder(4, 0)
		leaf, spine := b.Switches(2, 0), int32(6)
		b.Switch(0)
		spec := fabric.Spec{Class: "link", Rate: units.GBps(100), Latency: 1e-6}
		for e := int32(0); e < 4; e++ {
			b.Duplex(e, leaf+e/2, spec)
		}
		b.Duplex(leaf, spine, spec)
		b.Duplex(leaf+1, spine, spec)
		g, err := b.Build(fabric.Endpoint{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		links := g.Links()
		s := &fabric.Symmetry{Reps: []int32{0}, Order: 4, Factors: []int32{2, 2}, EndRep: make([]int32, 4), EndElem: []int32{0, 1, 2, 3},
			LinkOrbit: make([]int32, len(links)), OrbitSize: make([]int32, len(links)), LinkElem: make([]int32, len(links))}
		for i, l := range links {
			var rep int32
			switch {
			case l.From < 4:
				rep, s.LinkElem[i] = g.Link(0, leaf), l.From
			case l.To < 4:
				rep, s.LinkElem[i] = g.Link(leaf, 0), l.To
			case l.To == spine:
				rep, s.LinkElem[i] = g.Link(leaf, spine), 2*(l.From-leaf)
			default:
				rep, s.LinkElem[i] = g.Link(spine, leaf), 2*(l.To-leaf)
			}
			if l.From == leaf+1 && l.To == spine {
				s.LinkElem[i] = uplink
			}
			s.LinkOrbit[i] = rep
			s.OrbitSize[rep]++
		}
		if err := g.SetSymmetry(s); err != nil {
			t.Fatal(err)
		}
		m, err := fabric.NewModel(g, network.Env{GPUs: 4}, fabric.Options{Name: "tree"})
		if err != nil {
			t.Fatal(err)
		}
		plain, err := fabric.NewModel(fabric.WithoutSymmetry(g), network.Env{GPUs: 4}, fabric.Options{Name: "tree"})
		if err != nil {
			t.Fatal(err)
		}
		return m, plain
	}
	pairs := collective.One(collective.Part{Kind: collective.XOR, Stride: 2, Size: 2, K: 1})
	all := network.Group{Size: 4, Stride: 1}
	for _, c := range []struct {
		uplink int32
		want   []int32
	}{{2, []int32{2, 1}}, {3, nil}} {
		m, plain := build(c.uplink)
		if got, ok := m.SublatticeWhole(pairs, all); ok != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Errorf("uplink named %d: steps %v (applies %v), want %v", c.uplink, got, ok, c.want)
		}
		if c.want != nil {
			// Flow types on fixed links (types.go): the swap within a leaf (element 1) keeps
			// the leaves' up- and downlinks, the swap of the leaves (2) and both (3) exchange
			// them; an endpoint's link follows its endpoint (e ↦ e XOR x).
			g, leaf, spine := m.Graph(), int32(4), int32(6)
			up0, up1, down0, down1 := g.Link(leaf, spine), g.Link(leaf+1, spine), g.Link(spine, leaf), g.Link(spine, leaf+1)
			for _, mv := range []struct{ l, x, want int32 }{
				{up0, 1, up0}, {up0, 2, up1}, {up0, 3, up1}, {up1, 1, up1}, {up1, 3, up0},
				{down0, 1, down0}, {down0, 2, down1}, {down1, 3, down0},
				{g.Link(0, leaf), 1, g.Link(1, leaf)}, {g.Link(0, leaf), 3, g.Link(3, leaf+1)}, {g.Link(leaf+1, 2), 3, g.Link(leaf, 1)},
			} {
				if got := g.MovedLink(mv.l, mv.x); got != mv.want {
					t.Errorf("link %d moved by %d: %d, want %d", mv.l, mv.x, got, mv.want)
				}
			}
			// A flow s → t's type destination is t moved by s's inverse: t XOR s here.
			for s := int32(0); s < 4; s++ {
				for d := int32(0); d < 4; d++ {
					if got, moved := g.Back(d, s); got != d^s || moved != d^s {
						t.Errorf("endpoint %d moved back by %d's element: %d (by its inverse: %d), want %d", d, s, got, moved, d^s)
					}
				}
			}
		}
		x, err1 := m.PricePattern("p", pairs, 1e8, all)
		y, err2 := plain.PricePattern("p", pairs, 1e8, all)
		if err1 != nil || err2 != nil || math.Abs(float64(x.Total-y.Total)) > 1e-12*float64(y.Total) || x.Total <= 0 {
			t.Errorf("uplink named %d: %+v (%v), every flow routed %+v (%v)", c.uplink, x, err1, y, err2)
		}
	}
}

// movesTo (how run images compare flows, runs.go) says a moved by x is b exactly where move
// finds b: every pair of endpoints and every element of Γ on a small torus of 2×2 boards and a
// small Hx2Mesh (row and column switches), each b the image of a for exactly one x where a and
// b share an orbit (Γ acts freely: |Γ| images per endpoint in all, counted by hand as one per
// endpoint of its orbit).
func TestMovesTo(t *testing.T) {
	for _, c := range []struct {
		a, x   int
		global string
		images int // pairs (a, b, x) with b = x·a: one per (a, x)
	}{
		{2, 4, "torus", 64 * 16},
		{2, 4, "trees", 64 * 16},
	} {
		cfg := hxmesh.DefaultConfig()
		cfg.BoardA, cfg.BoardB, cfg.GridX, cfg.GridY, cfg.Global = c.a, c.a, c.x, c.x, c.global
		g, err := cfg.Fabric()
		if err != nil {
			t.Fatal(err)
		}
		images := 0
		for a := int32(0); int(a) < g.Endpoints; a++ {
			for b := int32(0); int(b) < g.Endpoints; b++ {
				for x := int32(0); int(x) < g.Order(); x++ {
					got, want := g.MovesTo(a, b, x)
					if got != want {
						t.Fatalf("%s: %d moved by %d to %d: movesTo %v, move %v", c.global, a, x, b, got, want)
					}
					if got {
						images++
					}
				}
			}
		}
		if images != c.images {
			t.Errorf("%s: %d images, want %d", c.global, images, c.images)
		}
	}
}

// The plans read from a round's groups' members (runs.go, Plans per shape) are those read from
// its flows, first period and tail, with their runs' images: GPT-3's rings, halving/doubling
// partners (both steps) and bidirectional rings of 4 at stride 96, and the binary tree's
// broadcast (0 → 1, 2 and 1 → 3: every member), over 16,320 ranks of the large torus and
// Hx4Mesh; and pairs at stride 70 on 192 ranks of the 16×16 torus of 2×2 boards (a tail routed
// by its own plan, TestWindowsRemainder). A shift over digits of 3 (0 → 1 → 2 → 0) leaves
// member 3 of each group in no flow: its plans are read from its flows.
func TestShapePlans(t *testing.T) {
	tp, patterns := largeTP4()
	patterns = append(patterns,
		collective.One(collective.Part{Kind: collective.XOR, Stride: 1, Size: 4, K: 1, Limit: 4}),
		collective.One(collective.Part{Kind: collective.TreeDown}))
	shift3 := collective.One(collective.Part{Kind: collective.Shift, Stride: 1, Size: 3, K: 1})
	pairs := collective.One(collective.Part{Kind: collective.XOR, Stride: 1, Size: 2, K: 1})
	for _, cfg := range largeMeshes() {
		m, err := hxmesh.Spec().New(cfg, network.Env{GPUs: 16320})
		if err != nil {
			t.Fatal(err)
		}
		for _, pt := range patterns {
			if given, same := m.(*fabric.Model).ShapePlans(pt, tp); !given || !same {
				t.Errorf("%s %+v: plans read from the members %v, the same as the flows' %v", cfg.Global, pt.Parts[0], given, same)
			}
		}
		if given, _ := m.(*fabric.Model).ShapePlans(shift3, tp); given {
			t.Errorf("%s: a shift over 3 of 4 members read its plans from the members", cfg.Global)
		}
	}
	cfg := hxmesh.DefaultConfig()
	cfg.BoardA, cfg.BoardB, cfg.GridX, cfg.GridY, cfg.Global = 2, 2, 8, 8, "torus"
	m, err := hxmesh.Spec().New(cfg, network.Env{GPUs: 192})
	if err != nil {
		t.Fatal(err)
	}
	if given, same := m.(*fabric.Model).ShapePlans(pairs, network.Group{Size: 2, Stride: 70}); !given || !same {
		t.Errorf("pairs at stride 70: plans read from the members %v, the same as the flows' %v", given, same)
	}
}

// A period read from the fabric's numbering (periodOf, Symmetry.shifted) is the one moving every
// member finds (WithoutShifts): GPT-3's rings of 4 at stride 96 over the large torus and Hx4Mesh
// (periods of whole blocks: read), its 384-rank job on the Hx4Mesh (16 groups, not a whole block
// of 96: moved), the large Hx2Mesh (none) and pairs at stride 70 on a small torus. And the
// numbering by hand on the 8×8 torus of 2×2 boards (4 boards a row, 4 ranks a board): one board
// on is one column on for the first three boards of each row (12 endpoints from 0, then board 3's
// neighbour is board 4, the next row), a board row on (16 endpoints) is one row on for every
// endpoint with one (48), and nothing else moves endpoint 0 a board on.
func TestShiftedPeriod(t *testing.T) {
	ring := collective.One(collective.Part{Kind: collective.RingNext, Stride: 1, Size: 4, K: 1})
	pairs := collective.One(collective.Part{Kind: collective.XOR, Stride: 1, Size: 2, K: 1})
	tp := network.Group{Size: 4, Stride: 96}
	for _, c := range []struct {
		a, x   int
		global string
		gpus   int
		pt     collective.Pattern
		g      network.Group
		q      int
	}{
		{2, 64, "torus", 16320, ring, tp, 2 * 96 * 4},
		{4, 32, "trees", 16320, ring, tp, 4 * 96 * 4},
		{4, 32, "trees", 384, ring, tp, 16 * 4},
		{2, 64, "trees", 16320, ring, tp, 0},
		{2, 8, "torus", 192, pairs, network.Group{Size: 2, Stride: 70}, 32 * 2},
	} {
		cfg := hxmesh.DefaultConfig()
		cfg.BoardA, cfg.BoardB, cfg.GridX, cfg.GridY, cfg.Global = c.a, c.a, c.x, c.x, c.global
		m, err := hxmesh.Spec().New(cfg, network.Env{GPUs: c.gpus})
		if err != nil {
			t.Fatal(err)
		}
		fm := m.(*fabric.Model)
		q1, tau1 := fm.Period(c.pt, c.g)
		q2, tau2 := fm.Unshifted().Period(c.pt, c.g)
		if q1 != c.q || q2 != q1 || !slices.Equal(tau1, tau2) {
			t.Errorf("%s %d %+v: period %d by %v, moving every member %d by %v, want %d", c.global, c.gpus, c.g, q1, tau1, q2, tau2, c.q)
		}
	}
	cfg := hxmesh.DefaultConfig()
	cfg.BoardA, cfg.BoardB, cfg.GridX, cfg.GridY, cfg.Global = 2, 2, 4, 4, "torus"
	g, err := cfg.Fabric()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		delta int32
		tau   []uint16
		want  int32
	}{{4, []uint16{1, 0}, 12}, {16, []uint16{0, 1}, 48}, {4, []uint16{0, 1}, 0}, {16, []uint16{1, 0}, 0}} {
		if got := g.Shifted(c.delta, c.tau); got != c.want {
			t.Errorf("%d on by %v: %d endpoints, want %d", c.delta, c.tau, got, c.want)
		}
	}
}

// A flow type copied from another weight's, scaled by a power of two (scaledType), is the type
// routing the flow at its own weight records, bit for bit: flows from endpoint 0 to a board
// neighbour, across the machine and to the farthest corner on the large torus and Hx4Mesh, at
// ½, ¼ and 2 of weight 1 (and at 3 not copied: not a power of two). The bidirectional ring's
// halves, priced after the ring (whose types they copy), price the same as with every weight
// routed, bit for bit, link loads and order alike.
func TestScaledTypes(t *testing.T) {
	tp, patterns := largeTP4()
	for _, cfg := range largeMeshes() {
		g, err := cfg.Fabric()
		if err != nil {
			t.Fatal(err)
		}
		for _, dst := range []int32{5, 8000, int32(g.Endpoints - 1)} {
			for _, c := range []struct {
				w      float64
				copied bool
			}{{0.5, true}, {0.25, true}, {2, true}, {3, false}} {
				if copied, same := g.ScaledType(0, dst, 1, c.w); copied != c.copied || (copied && !same) {
					t.Errorf("%s 0 → %d at %g: copied %v (want %v), the same as routed %v", cfg.Global, dst, c.w, copied, c.copied, same)
				}
			}
		}
		m, err := hxmesh.Spec().New(cfg, network.Env{GPUs: 16320})
		if err != nil {
			t.Fatal(err)
		}
		fm := m.(*fabric.Model)
		ref := fm.Unscaled()
		for _, pt := range patterns { // ring, partners, then the bidirectional ring
			x, err1 := fm.PricePattern("p", pt, 1e8, tp)
			y, err2 := ref.PricePattern("p", pt, 1e8, tp)
			if err1 != nil || err2 != nil || x != y {
				t.Errorf("%s %+v: price %+v (%v), every weight routed %+v (%v)", cfg.Global, pt.Parts[0], x, err1, y, err2)
			}
			l1, v1 := fm.PeriodLoads(pt, tp)
			l2, v2 := ref.PeriodLoads(pt, tp)
			if len(l1) == 0 || !slices.Equal(l1, l2) || !slices.Equal(v1, v2) {
				t.Errorf("%s %+v: %d links loaded, %d with every weight routed (same order and loads: %v, %v)",
					cfg.Global, pt.Parts[0], len(l1), len(l2), slices.Equal(l1, l2), slices.Equal(v1, v2))
			}
		}
	}
}

// A round read by windows cut short (Cut short, windows.go) leaves a lower bound on its load.
// Routed in full, it asks about a bound after each stretch of its first period whose sums are
// on the links (cutEarly) and once those sums are whole (takeWindows): every one no more than
// the round's load (latency and busiest link), here against every copy added link by link
// (WithoutWindows), and the last one's busiest link the first period's, equal to the round's
// on GPT-3's rings of 4 at stride 96 on the large Hx4Mesh and torus (not on pairs at stride 70
// on 2×2 boards with torus cables, whose flows after the last whole period are routed apart).
// The asks, counted by hand from the runs (TestRuns): on the Hx4Mesh after block 0's run (its
// busiest sum 2 of a link's 5e10 B/s: 4e-11) and block 1's (7.125e-11, the round's), not after
// the next two runs (no higher), nor the images (summed in the stash), nor the last stretch, and
// once whole: 3; on the torus every run is summed in the stash (copiesAlong, images): 1; the
// pairs, after the period's first run (4 pairs, 6 copies) and once whole: 2.
// Cut at the first ask or at the last, the round leaves that bound, is not kept as routed, and
// routed in full after it (the router's scratch as the cut left it) loads as the copies do; a
// new model of the job on the graph reads the cut's bound as a bound, then the routed load,
// which an older bound offered again does not replace.
func TestWindowsCut(t *testing.T) {
	for _, c := range []struct {
		hxRingCase
		asks  int
		equal bool
	}{
		{hxRingCase{4, 32, "trees", 16320, 4, 96}, 3, true},
		{hxRingCase{2, 64, "torus", 16320, 4, 96}, 1, true},
		{hxRingCase{2, 8, "torus", 192, 2, 70}, 2, false},
	} {
		m, ring := hxRings(t, c.hxRingCase)
		g := network.Group{Size: c.size, Stride: c.stride}
		full := m.Unwindowed(ring, g)
		ld, cut, asked, _ := m.CutRoute(ring, g, 0)
		if cut || ld != full || len(asked) != c.asks {
			t.Fatalf("%+v: not cut: %+v (cut %v, %d asks), copies link by link %+v", c, ld, cut, len(asked), full)
		}
		for i, b := range asked {
			if b.PerByte <= 0 || b.PerByte > full.PerByte || b.Latency > full.Latency || b.Flows != full.Flows {
				t.Errorf("%+v: ask %d: bound %+v, routed in full %+v", c, i, b, full)
			}
		}
		if last := asked[len(asked)-1].PerByte; c.equal != (last == full.PerByte) {
			t.Errorf("%+v: the whole first period's bound %v, routed in full %v: equal %v", c, last, full.PerByte, c.equal)
		}
		if asked[0].PerByte != 4e-11 && c.asks == 3 {
			t.Errorf("%+v: first ask %v, want 4e-11 (block 0's run)", c, asked[0].PerByte)
		}
		for _, yes := range []int{1, len(asked)} {
			ld, cut, _, again := m.CutRoute(ring, g, yes)
			if want := asked[yes-1]; !cut || ld.PerByte != want.PerByte || ld.Latency != want.Latency {
				t.Errorf("%+v: cut at ask %d: %+v (cut %v), want %+v", c, yes, ld, cut, want)
			}
			if again != full {
				t.Errorf("%+v: routed in full after the cut at ask %d: %+v, copies link by link %+v", c, yes, again, full)
			}
			// A new model of the job reads the cut's bound (not as the load), then the load
			// once routed in full, kept when an older bound is offered again.
			cutRead, fullRead, offered, exact := m.CutRead(ring, g, yes)
			if want := asked[yes-1]; cutRead.PerByte != want.PerByte || cutRead.Latency != want.Latency || exact[0] {
				t.Errorf("%+v: a new model after the cut at ask %d reads %+v (exact %v), want the bound %+v", c, yes, cutRead, exact[0], want)
			}
			if fullRead != full || offered != full || !exact[1] || !exact[2] {
				t.Errorf("%+v: a new model after routing in full reads %+v (exact %v), %+v (exact %v) after an older bound, want %+v",
					c, fullRead, exact[1], offered, exact[2], full)
			}
		}
	}
}

// Permuted rounds (permuted.go), counted by hand. The torus all-reduce over the large Hx2Mesh
// and Hx4Mesh (128 × 128 accelerators: a square grid) has two patterns, phases 1 and 3's
// [+x, −x, +y, −y] of weight R = C = 128 and phase 2's [+y, −y, +x, −x] of weight 1; x and y
// flows load the row and the column networks and the board links of either direction (no link
// orbit in common) and each axis's two tables keep their order, so the second is read from the
// first: one round read, and the price equal bit for bit to the one with every round routed
// (none read). On a small Hx2Mesh (2×2 boards on 8×8, rows and columns trees of four leaves),
// one round at a time through PricePattern: [+x, +y] then [+y, +x] at 4× the weight is read;
// so is [+2x, +2y] then [+2y, +2x] at 2×, whose busiest links tie, row ports and column ports
// alike (two boards apart: no board link), so that the class is the one loaded first, a row
// port, then a column port; [+x, −x] then [−x, +x] is not (the two directions both go up the
// leaves' uplinks: a common orbit, their order swapped), [+x, −x] at ½ the weight, in order,
// is; each price, class included, equal to the one routed.
func TestPermutedRounds(t *testing.T) {
	for _, a := range []int{2, 4} {
		cfg := hxmesh.DefaultConfig()
		cfg.BoardA, cfg.BoardB, cfg.GridX, cfg.GridY, cfg.Global = a, a, 128/a, 128/a, "trees"
		m, err := hxmesh.Spec().New(cfg, network.Env{GPUs: 16384})
		if err != nil {
			t.Fatal(err)
		}
		fm := m.(*fabric.Model)
		fm.Graph().Forget()
		ref := fm.Unpermuted()
		col := network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 16384, Stride: 1}}
		x, err1 := fm.PriceWith(collective.HMTorus, col)
		y, err2 := ref.PriceWith(collective.HMTorus, col)
		if err1 != nil || err2 != nil || x != y || fm.PermutedRounds() != 1 || ref.PermutedRounds() != 0 {
			t.Errorf("board %d: torus all-reduce %+v (%v), %d rounds read permuted (want 1); every round routed %+v (%v), %d read",
				a, x, err1, fm.PermutedRounds(), y, err2, ref.PermutedRounds())
		}
	}
	cfg := hxmesh.DefaultConfig()
	cfg.BoardA, cfg.BoardB, cfg.GridX, cfg.GridY, cfg.Radix, cfg.Global = 2, 2, 8, 8, 8, "trees"
	n := cfg.Endpoints()
	step := func(dr, dc int) collective.Part { // the table one step of (dr, dc) on the grid, wrapping
		next := make([]int32, n)
		for e := range next {
			r, c := cfg.Coord(int32(e))
			next[e] = cfg.Endpoint((c+dc+16)%16, (r+dr+16)%16)
		}
		return collective.TablePart(collective.Register(&collective.Successors{Next: next}))
	}
	px, mx, py, px2, py2 := step(0, 1), step(0, -1), step(1, 0), step(0, 2), step(2, 0)
	of := func(w float64, parts ...collective.Part) collective.Pattern {
		pt := collective.Pattern{N: len(parts)}
		for i, q := range parts {
			q.Weight = w
			pt.Parts[i] = q
		}
		return pt
	}
	all := network.Group{Size: n, Stride: 1}
	for _, c := range []struct {
		name  string
		first collective.Pattern
		then  collective.Pattern
		read  int
	}{
		{"x y, then y x", of(1, px, py), of(4, py, px), 1},
		{"x2 y2, then y2 x2", of(1, px2, py2), of(2, py2, px2), 1},
		{"+x −x, then −x +x", of(1, px, mx), of(1, mx, px), 0},
		{"+x −x, then at ½", of(1, px, mx), of(0.5, px, mx), 1},
	} {
		m, err := hxmesh.Spec().New(cfg, network.Env{GPUs: n})
		if err != nil {
			t.Fatal(err)
		}
		fm := m.(*fabric.Model)
		fm.Graph().Forget() // (the rounds an earlier case routed)
		ref := fm.Unpermuted()
		for _, pt := range []collective.Pattern{c.first, c.then} {
			x, err1 := fm.PricePattern("p", pt, 1e6, all)
			y, err2 := ref.PricePattern("p", pt, 1e6, all)
			if err1 != nil || err2 != nil || x != y {
				t.Errorf("%s: %+v (%v), routed %+v (%v)", c.name, x, err1, y, err2)
			}
		}
		if fm.PermutedRounds() != c.read {
			t.Errorf("%s: %d rounds read permuted, want %d", c.name, fm.PermutedRounds(), c.read)
		}
	}
}
