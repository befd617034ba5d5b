package fabric

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ddlest/ddlest/network"
)

// The busiest window of a τ-cycle, counted by hand: load(y) = Σ_{k<K} L_P(y − k mod n), of equal
// loads the one the copies load first (lowest k, then the first period's rank).
func TestWindowMax(t *testing.T) {
	for _, c := range []struct {
		name string
		e    []winEntry
		n, k int32
		want winPick
	}{
		// n = 8, K = 3, L_P = 2, 1, 4 at positions 1, 2, 6: the loads at y = 0 … 7 are
		// 4, 2, 3, 3, 1, 0, 4, 4; the 4s are first loaded at y = 6 by copy 0 (rank 2), at y = 7
		// by copy 1, at y = 0 by copy 2.
		{"sparse", []winEntry{{1, 0, 2, 0}, {2, 1, 1, 0}, {6, 2, 4, 0}}, 8, 3, winPick{4, 0, 2}},
		// The same with K = 2: 0, 2, 3, 1, 0, 0, 4, 4: y = 6, copy 0.
		{"shorter", []winEntry{{1, 0, 2, 0}, {2, 1, 1, 0}, {6, 2, 4, 0}}, 8, 2, winPick{4, 0, 2}},
		// n = 8, K = 2, L_P = 3 at position 0 (rank 1) and at 4 (rank 0): 3, 3, 0, 0, 3, 3, 0,
		// 0; copy 0 loads y = 0 and y = 4 first, the first period's rank 0 first at 4.
		{"tie", []winEntry{{0, 1, 3, 0}, {4, 0, 3, 0}}, 8, 2, winPick{3, 0, 0}},
		// K = n = 4: every link carries all of L_P, 2 + 3; y = 0 holds position 0 (rank 0) by copy 0.
		{"whole cycle", []winEntry{{0, 0, 2, 0}, {2, 1, 3, 0}}, 4, 4, winPick{5, 0, 0}},
		// Around the end: n = 5, K = 3, L_P = 1, 6 at positions 0, 4: 7, 7, 1, 0, 6; y = 0 holds
		// position 0 (rank 0) by copy 0 (and position 4 by copy 1), y = 1 by copy 1.
		{"wrap", []winEntry{{0, 0, 1, 0}, {4, 1, 6, 0}}, 5, 3, winPick{7, 0, 0}},
		// The flows after the last whole period read from the first stretches (pre, added at
		// distance K after the copies): n = 8, K = 3, L_P = 2, 1, 4 at positions 1, 2, 6 with
		// pre 5, 0, 1: the loads at y = 0 … 7 are 4, 2+1, 1+2, 1+2, 1+5, 0, 4, 4; the 6 at y = 4
		// is first loaded by copy 2 of position 2 (rank 1), its pre from position 1 last.
		{"pre", []winEntry{{1, 0, 2, 5}, {2, 1, 1, 0}, {6, 2, 4, 1}}, 8, 3, winPick{6, 2, 1}},
		// A link only the pre loads: n = 8, K = 2, L_P = 1 at position 0 with pre 3: 1, 1, 3, 0 …;
		// y = 2 is first loaded after the copies (k = K), by the position's rank.
		{"pre alone", []winEntry{{0, 0, 1, 3}}, 8, 2, winPick{3, 2, 0}},
	} {
		if got, ok := windowMax(c.e, c.n, c.k); !ok || got != c.want {
			t.Errorf("%s: %+v (%v), want %+v", c.name, got, ok, c.want)
		}
	}
	if _, ok := windowMax(nil, 8, 3); ok {
		t.Error("no entries: a busiest window")
	}
	// Ten loads of 1 at positions 0–9 (ranks 0–9) of a cycle of 16, K = 4 (found by bisection):
	// the windows ending at 3 … 9 hold four each, y = 3 first (copy 0, rank 3); y = 12 holds
	// position 9 alone, loaded by copy 3; y = 14 none.
	var ten []winEntry
	for p := int32(0); p < 10; p++ {
		ten = append(ten, winEntry{p, p, 1, 0})
	}
	if got, ok := windowMax(ten, 16, 4); !ok || got != (winPick{4, 0, 3}) {
		t.Errorf("ten: %+v (%v), want {4 0 3}", got, ok)
	}
	if got, ok := windowAt(ten, 16, 4, 12); !ok || got != (winPick{1, 3, 9}) {
		t.Errorf("ten at 12: %+v (%v), want {1 3 9}", got, ok)
	}
	if got, ok := windowAt(ten, 16, 4, 14); ok {
		t.Errorf("ten at 14: %+v, want none", got)
	}
}

// A cycle's entries are chained in rank order and read sorted by position (cycleEntries): two
// cycles interleaved by hand, ranks 0–5 at positions 5, 1, 7, 3, 0, 2, ranks 0, 2, 3, 5 on
// cycle 0 and 1, 4 on cycle 1. Cycle 0 holds positions 5, 7, 3, 2, sorted 2, 3, 5, 7: ranks
// 5, 3, 0, 2; cycle 1 holds positions 1 and 0: ranks 4, 1.
func TestCycleEntries(t *testing.T) {
	r := &router{}
	w := &r.win
	pos := []int32{5, 1, 7, 3, 0, 2}
	for i, p := range pos {
		w.ents = append(w.ents, winEntry{pos: p, rank: int32(i), v: float64(i + 1)})
	}
	w.next = []int32{2, 4, 3, 5, -1, -1}
	w.cycles = []winCycle{{head: 0, tail: 5, n: 4}, {head: 1, tail: 4, n: 2}}
	for ci, want := range [][]int32{{5, 3, 0, 2}, {4, 1}} {
		var got []int32
		prev := int32(-1)
		for _, e := range r.cycleEntries(int32(ci)) {
			if e.pos <= prev {
				t.Errorf("cycle %d: position %d after %d", ci, e.pos, prev)
			}
			prev = e.pos
			got = append(got, e.rank)
		}
		if !slices.Equal(got, want) {
			t.Errorf("cycle %d: ranks %v by position, want %v", ci, got, want)
		}
	}
}

// Whether a cycle's entries lie within K + 1 consecutive positions (periodWindows.within), by
// hand on a cycle of 32 with K = 10: positions 0 and 10 do, 0 and 11 do not; 30 and 8 do around
// the cycle (30, 31, 0, …, 8: eleven positions), 30 and 9 do not; 0, 5 and 20 do not; one
// position does; on a cycle of 64 the same; with K + 1 ≥ N every set does.
func TestWindowsWithin(t *testing.T) {
	bit := func(ps ...int) (m uint64) {
		for _, p := range ps {
			m |= 1 << p
		}
		return m
	}
	for _, c := range []struct {
		n, k int32
		mask uint64
		want bool
	}{
		{32, 10, bit(0, 10), true},
		{32, 10, bit(0, 11), false},
		{32, 10, bit(30, 8), true},
		{32, 10, bit(30, 9), false},
		{32, 10, bit(0, 5, 20), false},
		{32, 10, bit(17), true},
		{64, 10, bit(60, 6), true},
		{64, 10, bit(60, 7), false},
		{64, 10, bit(0, 63, 9), true},
		{11, 10, bit(0, 5), true},
	} {
		w := periodWindows{n: c.n, k: c.k}
		if got := w.within(c.mask); got != c.want {
			t.Errorf("n %d, k %d, mask %b: within %v, want %v", c.n, c.k, c.mask, got, c.want)
		}
	}
}

// The members periodOf reads by formula (memberList, rank r on endpoint r), one by one and
// listed, are those of every group in group order as network.Group.Base places them: member k of group j at Base(j) +
// k·stride, for GPT-3's rings of 4 at stride 96 (4,080 groups), pairs at stride 70 (70) and
// groups of 3 in rank order (5).
func TestMemberList(t *testing.T) {
	for _, c := range []struct{ size, stride, groups int }{{4, 96, 4080}, {2, 70, 70}, {3, 1, 5}} {
		g := network.Group{Size: c.size, Stride: c.stride}
		ml := memberList{n: c.groups * c.size, unit: c.size, stride: c.stride}
		listed := ml.list(nil)
		if len(listed) != ml.n {
			t.Fatalf("%+v: %d members listed, want %d", c, len(listed), ml.n)
		}
		for i := 0; i < ml.n; i++ {
			if want := int32(g.Base(i/c.size) + i%c.size*c.stride); ml.at(i) != want || listed[i] != want {
				t.Fatalf("%+v: member %d is %d (listed %d), want %d", c, i, ml.at(i), listed[i], want)
			}
		}
	}
}

// The cycles' table is shared and never cleared (cycleSlots): whatever its entries hold, a list
// claims its first links (claim) as a map from first link to index would, and slotOf finds
// only the list's own, in a list built after another on the same table as on a fresh one.
func TestCycleSlots(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	slot := make([]int32, 64)
	for i := range slot {
		slot[i] = int32(rng.IntN(80)) - 8 // stale entries of every kind: −1, past any list, within one
	}
	for round := 0; round < 200; round++ {
		var bases []int32
		want := map[int32]int32{}
		for j := 0; j < 1+rng.IntN(40); j++ {
			b := int32(rng.IntN(len(slot)))
			x, w := int32(0), int32(0)
			x, bases = claim(slot, bases, b)
			if i, ok := want[b]; ok {
				w = i
			} else {
				w = int32(len(want))
				want[b] = w
			}
			if x != w {
				t.Fatalf("round %d: first link %d claimed as %d, want %d", round, b, x, w)
			}
		}
		for b := range slot {
			i, ok := want[int32(b)]
			if !ok {
				i = -1
			}
			if x := slotOf(slot, bases, int32(b)); x != i {
				t.Fatalf("round %d: first link %d found at %d, want %d", round, b, x, i)
			}
		}
	}
}

// Where a cycle's entries lie K or more positions apart (periodWindows.apart, against every
// pair), cycleApart reads its busiest window's load equal bit for bit to windowMax's, on random
// cycles of up to 20 positions with loads and pres (pre 0 on some entries, none where K = N);
// by hand: n = 8, K = 3, loads 2, 5 at positions 0, 3 with pres 4, 1: position 3 holds 5 and
// the pre 4 of position 0 (9); positions 2 and 4 lie closer than K, so not apart.
func TestWindowsApart(t *testing.T) {
	build := func(n, k int32, ents []winEntry) (*router, uint64) {
		r := &router{}
		w := &r.win
		w.n, w.k, w.ents = n, k, ents
		w.next = make([]int32, len(ents))
		mask := uint64(0)
		for i, e := range ents {
			w.next[i] = int32(i + 1)
			mask |= 1 << e.pos
		}
		w.next[len(ents)-1] = -1
		w.cycles = []winCycle{{head: 0, tail: int32(len(ents) - 1), n: int32(len(ents))}}
		return r, mask
	}
	r, mask := build(8, 3, []winEntry{{0, 0, 2, 4}, {3, 1, 5, 1}})
	if got, ok := r.cycleApart(0, mask); !ok || got != 9 {
		t.Errorf("by hand: %v (%v), want 9", got, ok)
	}
	if w := (periodWindows{n: 8, k: 3}); w.apart(1<<2|1<<4) || !w.apart(1<<0|1<<3) || !w.apart(1<<1|1<<6) || w.apart(1<<1|1<<7) {
		t.Errorf("apart by hand")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 3000; i++ {
		n := int32(2 + rng.IntN(19))
		k := int32(1 + rng.IntN(int(n)))
		var ents []winEntry
		for p := int32(0); p < n; p++ {
			if rng.IntN(4) == 0 {
				e := winEntry{pos: p, v: float64(1+rng.IntN(8)) / 8 * (1 + rng.Float64()/3)}
				if k < n && rng.IntN(2) == 0 {
					e.pre = float64(1+rng.IntN(8)) / 8 * (1 + rng.Float64()/3)
				}
				ents = append(ents, e)
			}
		}
		if len(ents) == 0 {
			continue
		}
		rng.Shuffle(len(ents), func(a, b int) { ents[a], ents[b] = ents[b], ents[a] })
		for j := range ents {
			ents[j].rank = int32(j)
		}
		apart := true
		for a := range ents {
			for b := range ents {
				if d := (ents[a].pos - ents[b].pos + n) % n; a != b && d < k {
					apart = false
				}
			}
		}
		r, mask := build(n, k, slices.Clone(ents))
		if got := r.win.apart(mask); got != apart {
			t.Fatalf("n %d, k %d, %v: apart %v, want %v", n, k, ents, got, apart)
		}
		sorted := slices.Clone(ents)
		slices.SortFunc(sorted, func(a, b winEntry) int { return cmp.Compare(a.pos, b.pos) })
		want, _ := windowMax(sorted, n, k)
		got, ok := r.cycleApart(0, mask)
		if ok != (apart && k < n) || (ok && got != want.v) {
			t.Fatalf("n %d, k %d, %v: %v (%v), windowMax %v (apart %v)", n, k, ents, got, ok, want.v, apart)
		}
	}
}
