package traces

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// A run sorts into compare's order (every adjacent pair in order) and keeps every row once, on
// rows with many ties in start and duration, where the full comparison decides.
func TestSortRun(t *testing.T) {
	tab := newStrtab()
	names := []uint32{tab.idBytes([]byte("a")), tab.idBytes([]byte("b")), tab.idBytes([]byte("c"))}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 17, 5000} {
		rows := make([]crow, n)
		for i := range rows {
			rows[i] = crow{start: rng.Int64N(50), dur: rng.Int64N(3), stream: rng.Int64N(2), corr: int64(i), rank: int32(rng.IntN(2)),
				name: names[rng.IntN(3)], category: uint8(rng.IntN(3))}
		}
		want := slices.Clone(rows)
		tab.sort(rows)
		for i := 1; i < len(rows); i++ {
			if tab.compare(&rows[i-1], &rows[i]) > 0 {
				t.Fatalf("n=%d: rows %d and %d out of order: %+v, %+v", n, i-1, i, rows[i-1], rows[i])
			}
		}
		// corr is unique: the same rows, each once.
		byCorr := func(a, b crow) int { return int(a.corr - b.corr) }
		slices.SortFunc(rows, byCorr)
		if !slices.Equal(rows, want) {
			t.Fatalf("n=%d: the sort lost or duplicated rows", n)
		}
	}
}
