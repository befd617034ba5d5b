package figures

import (
	"testing"

	"github.com/ddlest/ddlest/internal/repro"
)

// BenchmarkFigures is `ddlest figures` for every figure: each iteration forgets the
// reproduction library's memoized computations and computes every figure's panels again (the
// PNG and CSV encoding, a few ms a figure, is left out).
func BenchmarkFigures(b *testing.B) {
	for b.Loop() {
		repro.Forget()
		for _, f := range All() {
			if _, err := f.Panels(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkFiguresWrite is the same with every PNG and CSV written, as `ddlest figures` does
// (WriteAll: every core).
func BenchmarkFiguresWrite(b *testing.B) {
	dir := b.TempDir()
	for b.Loop() {
		repro.Forget()
		if err := WriteAll(All(), dir, func(Figure) {}); err != nil {
			b.Fatal(err)
		}
	}
}
