package figures

import (
	"bytes"
	"encoding/csv"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ddlest/ddlest/plots"
)

// Every figure writes a PNG of the expected size and a CSV whose rows are exactly the
// reproduction library's numbers (Fig. 18's times and speed-ups, Fig. 16's times and shares).
func TestFiguresEqualTheLibrary(t *testing.T) {
	dir := t.TempDir()
	for _, f := range All() {
		if err := Write(f, dir); err != nil {
			t.Fatal(err)
		}
		pns, _ := f.Panels()
		fh, err := os.Open(filepath.Join(dir, f.Name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		w, h := Size(len(pns)).Pixels()
		if err != nil || img.Bounds().Dx() != w || img.Bounds().Dy() != h {
			t.Errorf("%s: %v %v, want %d×%d", f.Name, err, img.Bounds(), w, h)
		}
	}
}

// The CSV holds exactly the panels' points, in order, numbers parsed back bit for bit, and the
// figure names are unique and start with a seed.
func TestCSVEqualsThePanels(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range All() {
		if seen[f.Name] {
			t.Errorf("%s: registered twice", f.Name)
		}
		seen[f.Name] = true
		pns, err := f.Panels()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteCSV(&buf, pns); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		i := 1
		for _, pn := range pns {
			for _, s := range pn.Series {
				for k := range s.X {
					if i >= len(rows) {
						t.Fatalf("%s: CSV has %d rows, the panels more", f.Name, len(rows))
					}
					r := rows[i]
					y, _ := strconv.ParseFloat(r[5], 64)
					x := strconv.FormatFloat(s.X[k], 'g', -1, 64)
					if len(pn.X.Categories) > 0 {
						x = pn.X.Categories[int(math.Round(s.X[k]))]
					}
					if r[0] != pn.Title || r[1] != s.Name || r[3] != x || y != s.Y[k] {
						t.Errorf("%s row %d: %v, want %s/%s (%s, %v)", f.Name, i, r, pn.Title, s.Name, x, s.Y[k])
					}
					i++
				}
			}
		}
		if i != len(rows) {
			t.Errorf("%s: CSV has %d rows, the panels %d points", f.Name, len(rows)-1, i-1)
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rows, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// series finds a panel's series by name.
func series(t *testing.T, pn plots.Panel, name string) []float64 {
	t.Helper()
	for _, s := range pn.Series {
		if s.Name == name {
			return s.Y
		}
	}
	t.Fatalf("%s: no series %q", pn.Title, name)
	return nil
}

func panels(t *testing.T, name string) []plots.Panel {
	t.Helper()
	f, ok := Lookup(name)
	if !ok {
		t.Fatalf("%s is not registered", name)
	}
	pns, err := f.Panels()
	if err != nil {
		t.Fatal(err)
	}
	return pns
}

func same(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d points, library %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s point %d: plotted %v, library %v", what, i, got[i], want[i])
		}
	}
}

// RAMP Figs. 15, 17 and 19–23 plot exactly the reproduction library's numbers (the ones its
// rows check): steps, shares and speed-ups, times, H2T/H2H and compute.
