package figures

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ddlest/ddlest/internal/repro"
)

// RAMP's figures plot exactly the reproduction library's numbers (Fig. 18's times and
// speed-ups, Fig. 16's times and shares).
func TestRAMPFiguresAreTheLibrary(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"ramp-fig16", "ramp-fig18"} {
		f, _ := Lookup(name)
		if err := Write(f, dir); err != nil {
			t.Fatal(err)
		}
	}
	rows := readCSV(t, filepath.Join(dir, "ramp-fig18.csv"))
	r, _ := repro.Fig18()
	n := 0
	for _, row := range rows[1:] {
		y, _ := strconv.ParseFloat(row[5], 64)
		for i, op := range r.Ops {
			if row[3] != op.String() {
				continue
			}
			want := r.Speedup[op]
			if row[1] != "speed-up" {
				want = r.Times[row[1]][i]
			}
			if y != want {
				t.Errorf("fig18 %s %s: CSV %v, library %v", row[1], row[3], y, want)
			}
			n++
		}
	}
	if n != len(r.Ops)*(len(repro.Fig18Nets)+1) {
		t.Errorf("fig18: %d points checked, want %d", n, len(r.Ops)*(len(repro.Fig18Nets)+1))
	}
	s81, _ := repro.Section81()
	rows = readCSV(t, filepath.Join(dir, "ramp-fig16.csv"))
	if len(rows) != 1+2*len(repro.Section81Nets)*len(s81.Times["ramp"]) {
		t.Errorf("fig16: %d rows", len(rows))
	}
	for _, row := range rows[1:4] { // the first panel's RAMP points: iteration times
		y, _ := strconv.ParseFloat(row[5], 64)
		found := false
		for _, v := range s81.Times[row[1]] {
			found = found || v == y
		}
		if !found {
			t.Errorf("fig16 %v: not one of the library's times", row)
		}
	}
}
