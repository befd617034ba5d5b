package fabric

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// replayAlong adds n copies of ents (slots: cycles × N) copy by copy, as copiesAlong did before
// alongSlots and alongSums: copy k, in the entries' order, adds each entry's load at its
// position + k (mod N), noting a slot when first loaded.
func replayAlong(ents []runEntry, N int32, n, slots int) ([]int32, []float64) {
	sum, seen := make([]float64, slots), make([]bool, slots)
	var order []int32
	for k := 0; k < n; k++ {
		for _, e := range ents {
			x := e.at + (e.pos+int32(k))%N
			if !seen[x] {
				seen[x] = true
				order = append(order, x)
			}
			sum[x] += e.v
		}
	}
	v := make([]float64, len(order))
	for i, x := range order {
		v[i] = sum[x]
	}
	return order, v
}

// A run's copies read along their cycles (alongSlots, alongSums): the slots in the order the
// copies first reach them and each slot's sum, by hand on small cycles and against replaying
// the copies one by one (bit for bit) on random ones.
func TestAlongSlots(t *testing.T) {
	for _, c := range []struct {
		name      string
		ents      []runEntry
		N         int32
		n, cycles int
		order     []int32
		sums      []float64
	}{
		// N = 8, 3 copies of 1 at position 1, 2 at 2, 4 at 6: copy 0 reaches 1, 2, 6; copy 1
		// reaches 3 (from 2) and 7 (from 6), 2 already reached; copy 2: 4, 0. Sums: position 0
		// holds 4 (copy 2 of 6), 1 holds 1, 2 holds 2 + 1, 3 holds 2 + 1, 4 holds 2, 6 holds 4, 7 holds 4.
		{"sparse", []runEntry{{0, 1, 1}, {0, 2, 2}, {0, 6, 4}}, 8, 3, 1,
			[]int32{1, 2, 6, 3, 7, 4, 0}, []float64{1, 3, 4, 3, 4, 2, 4}},
		// Entries out of position order: copy 0 lists them in their order, position 6 then 1.
		{"order", []runEntry{{0, 6, 4}, {0, 1, 1}}, 8, 2, 1,
			[]int32{6, 1, 7, 2}, []float64{4, 1, 4, 1}},
		// Two cycles (slots 0–3 and 4–7), N = 4, 2 copies: 5 at cycle 1's position 3 wraps to its 0.
		{"two cycles", []runEntry{{4, 3, 5}, {0, 0, 1}}, 4, 2, 2,
			[]int32{7, 0, 4, 1}, []float64{5, 1, 5, 1}},
		// More copies than positions: N = 3, 5 copies of 1 at 0 and 2 at 1: every slot reached
		// by copy 1; position 0 holds 1 + 2 + 1 (copies 0, 2, 3), 1 holds 2 + 1 + 2 + 1 (copies
		// 0, 1, 3, 4), 2 holds 2 + 1 + 2 (copies 1, 2, 4).
		{"overlapping", []runEntry{{0, 0, 1}, {0, 1, 2}}, 3, 5, 1,
			[]int32{0, 1, 2}, []float64{4, 6, 5}},
	} {
		order, sums := replayAlong(c.ents, c.N, c.n, c.cycles*int(c.N))
		if !slices.Equal(order, c.order) || !slices.Equal(sums, c.sums) {
			t.Errorf("%s: replay %v %v, by hand %v %v", c.name, order, sums, c.order, c.sums)
		}
		rc := &runCycles{ents: c.ents}
		got := slices.Clone(rc.alongSlots(c.N, c.n, c.cycles*int(c.N)))
		gs := rc.alongSums(c.cycles, c.N, c.n, got)
		if !slices.Equal(got, c.order) || !slices.Equal(gs, c.sums) {
			t.Errorf("%s: %v %v, by hand %v %v", c.name, got, gs, c.order, c.sums)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rc := &runCycles{}
	for i := 0; i < 500; i++ {
		N, cycles, n := int32(1+rng.IntN(20)), 1+rng.IntN(4), 1+rng.IntN(30)
		var ents []runEntry
		for ci := 0; ci < cycles; ci++ {
			for p := int32(0); p < N; p++ {
				if rng.IntN(3) == 0 {
					ents = append(ents, runEntry{at: int32(ci) * N, pos: p, v: rng.Float64() * 1e-3})
				}
			}
		}
		rng.Shuffle(len(ents), func(a, b int) { ents[a], ents[b] = ents[b], ents[a] })
		order, sums := replayAlong(ents, N, n, cycles*int(N))
		rc.ents = ents
		got := rc.alongSlots(N, n, cycles*int(N))
		gs := rc.alongSums(cycles, N, n, got)
		if !slices.Equal(got, order) || !slices.Equal(gs, sums) {
			t.Fatalf("N %d, %d cycles, %d copies, %d entries: slots %v sums %v, replayed %v %v", N, cycles, n, len(ents), got, gs, order, sums)
		}
	}
}
