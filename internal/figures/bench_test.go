package figures

import (
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/repro"
)

// BenchmarkFigures computes every figure's panels, all of them and each seed's: each iteration
// forgets the reproduction library's memoized computations first (repro.Forget), so that it
// times the computations, not the memo.
func BenchmarkFigures(b *testing.B) {
	for _, seed := range append([]string{"all"}, repro.Seeds...) {
		var fs []Figure
		for _, f := range All() {
			if seed == "all" || strings.HasPrefix(f.Name, seed+"-") {
				fs = append(fs, f)
			}
		}
		b.Run(seed, func(b *testing.B) {
			for b.Loop() {
				repro.Forget()
				for _, f := range fs {
					if _, err := f.Panels(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkFiguresWrite is `ddlest figures`: every figure computed and its PNG and CSV written
// (WriteAll, on every core).
func BenchmarkFiguresWrite(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		repro.Forget()
		if err := WriteAll(All(), dir, func(Figure) {}); err != nil {
			b.Fatal(err)
		}
	}
}
