package plots

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/internal/errs"
)

func result() estimator.Result {
	var r estimator.Result
	r.Breakdown = estimator.Breakdown{Forward: 1, Recompute: 0.5, Backward: 2, Optimizer: 0.1, TP: 0.7, EP: 0.05, PP: 0.2, DP: 0.3}
	r.Iteration = estimator.Iteration{Compute: 3.6, ExposedComm: 1.25, Bubble: 0.4, Total: 5.25}
	return r
}

// The plotted numbers are the estimator's, exactly, and stack to the iteration total; parts
// that are zero in every bar (here model, spatial and context parallel) are left out, and each
// part is named for what it is.
func TestBreakdownValues(t *testing.T) {
	bars := []Bar{BreakdownBar("a", result()), BreakdownBar("b", result())}
	charts, names, err := breakdownCharts(bars)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 0.5, 2, 0.1, 0.7, 0.05, 0.2, 0.3, 0.4}
	wantNames := []string{"forward", "recompute", "backward", "optimizer", "tensor parallel comm", "expert parallel comm",
		"pipeline comm", "data parallel comm", "pipeline bubble"}
	if strings.Join(names, "|") != strings.Join(wantNames, "|") {
		t.Errorf("parts %q, want %q", names, wantNames)
	}
	var sum float64
	for i, c := range charts {
		if c.Values[0] != want[i] || c.Values[1] != want[i] {
			t.Errorf("segment %d values %v, want %g", i, c.Values, want[i])
		}
		sum += c.Values[0]
	}
	if d := sum - 5.25; d > 1e-12 || d < -1e-12 {
		t.Errorf("segments sum to %g, iteration total 5.25", sum)
	}
	if _, _, err := breakdownCharts(nil); err == nil {
		t.Error("no bars accepted")
	}
	bad := []Bar{bars[0], {Label: "c", Segments: bars[0].Segments[:3]}}
	if _, _, err := breakdownCharts(bad); err == nil {
		t.Error("mismatched bars accepted")
	}
}

// A part that is zero in one bar but not in another stays, in both.
func TestBreakdownKeepsPartsOfAnyBar(t *testing.T) {
	r := result()
	r.Breakdown.EP = 0
	_, names, err := breakdownCharts([]Bar{BreakdownBar("a", r), BreakdownBar("b", result())})
	if err != nil || !strings.Contains(strings.Join(names, "|"), "expert parallel comm") {
		t.Errorf("parts %q (%v), want expert parallel comm kept", names, err)
	}
}

func TestTimeUnit(t *testing.T) {
	for _, c := range []struct {
		max   float64
		scale float64
		unit  string
	}{{25e-6, 1e-6, "µs"}, {0.025, 1e-3, "ms"}, {5.2, 1, "s"}, {600, 60, "min"}, {36000, 3600, "h"}, {18.4 * 86400, 86400, "days"}} {
		if s, u := TimeUnit(c.max); s != c.scale || u != c.unit {
			t.Errorf("TimeUnit(%g) = %g %s, want %g %s", c.max, s, u, c.scale, c.unit)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		dpi  int
		w, h vg.Length
	}{
		{"7inx4in", 150, 7 * vg.Inch, 4 * vg.Inch},
		{"7in×4in", 150, 7 * vg.Inch, 4 * vg.Inch},
		{"7x4in", 150, 7 * vg.Inch, 4 * vg.Inch},
		{"18cmx10cm", 150, 18 * vg.Centimeter, 10 * vg.Centimeter},
		{"504x288pt", 150, 7 * vg.Inch, 4 * vg.Inch},
		{"1200x800px", 200, 6 * vg.Inch, 4 * vg.Inch},
	} {
		s, err := ParseSize(c.in, c.dpi)
		if err != nil || math.Abs(float64(s.W-c.w)) > 1e-9 || math.Abs(float64(s.H-c.h)) > 1e-9 || s.DPI != c.dpi {
			t.Errorf("%q: %+v %v, want %v×%v", c.in, s, err, c.w, c.h)
		}
	}
	for _, in := range []string{"7in", "axbin", "0x4in", "7x4", "200x4in", "-7x4in", "NaNx4in", "7x4ft"} {
		_, err := ParseSize(in, 150)
		if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), in) || !strings.Contains(err.Error(), "valid:") {
			t.Errorf("%q: %v, want a usage error naming it and the valid forms", in, err)
		}
	}
	if _, err := ParseSize("7x4in", 5); errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "--dpi 5") {
		t.Errorf("dpi 5: %v", err)
	}
}

// Networks keep their colour in every figure, whatever else the figure holds; names without a
// colour of their own take unused ones; the bubble is grey.
func TestColours(t *testing.T) {
	a := colours([]string{"superpod", "ramp"})
	b := colours([]string{"ramp (12.8 Tb/s)", "topoopt", "torus", "superpod"})
	if a[1] != Palette[0] || b[0] != Palette[0] || a[0] != Palette[1] || b[3] != Palette[1] {
		t.Errorf("ramp %v/%v, superpod %v/%v: want %v and %v everywhere", a[1], b[0], a[0], b[3], Palette[0], Palette[1])
	}
	c := colours([]string{"mystery", "ramp", "other", "pipeline bubble"})
	if c[1] != Palette[0] || c[0] == c[2] || c[0] == Palette[0] || c[2] == Palette[0] || c[3] != grey {
		t.Errorf("colours %v", c)
	}
}

func TestSave(t *testing.T) {
	f, err := Breakdown("test", "network", []Bar{BreakdownBar("alphabeta", result())})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	size := Size{W: 7 * vg.Inch, H: 4 * vg.Inch, DPI: 100}
	path := filepath.Join(dir, "b.png")
	if err := Save(f, path, size); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil || img.Bounds().Dx() != 700 || img.Bounds().Dy() != 400 {
		t.Fatalf("png: %v, size %v, want 700×400 (7 in × 4 in at 100 dpi)", err, img.Bounds())
	}
	for ext, magic := range map[string]string{".svg": "<?xml", ".pdf": "%PDF"} {
		p := filepath.Join(dir, "b"+ext)
		if err := Save(f, p, size); err != nil {
			t.Fatal(err)
		}
		if raw, _ := os.ReadFile(p); !bytes.HasPrefix(raw, []byte(magic)) {
			t.Errorf("%s starts %q, want %q", ext, raw[:min(len(raw), 8)], magic)
		}
	}
	if err := Save(f, filepath.Join(dir, "b.gif"), size); errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), ".png, .svg, .pdf") {
		t.Errorf("gif: %v", err)
	}
	if err := Save(f, filepath.Join(dir, "missing", "b.png"), size); err == nil {
		t.Error("missing directory accepted")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("%d entries left in the directory, want b.png, b.svg, b.pdf", len(entries))
	}
}

func TestLinesRefusesUndrawable(t *testing.T) {
	ok := Series{Name: "ring", X: []float64{1, 10}, Y: []float64{1e-3, 2e-3}}
	if _, err := Lines(Panel{X: Axis{Log: true}, Y: Axis{Time: true, Log: true}, Series: []Series{ok}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []Series{
		{Name: "short", X: []float64{1, 2}, Y: []float64{1}},
		{Name: "zero on log", X: []float64{0, 2}, Y: []float64{1, 2}},
	} {
		if _, err := Lines(Panel{X: Axis{Log: true}, Series: []Series{s}}); err == nil {
			t.Errorf("%s accepted", s.Name)
		}
	}
}

// Ticks mark an axis where asked: the x axis at the values, a time y axis at its seconds shown
// in the axis' unit (2 ms and 5 ms on an axis in ms).
func TestLinesTicks(t *testing.T) {
	s := Series{Name: "a", X: []float64{1, 4}, Y: []float64{1e-3, 6e-3}}
	f, err := Lines(Panel{X: Axis{Ticks: []float64{1, 4}}, Y: Axis{Time: true, Log: true, Ticks: []float64{2e-3, 5e-3}}, Series: []Series{s}})
	if err != nil {
		t.Fatal(err)
	}
	p := f.Panels[0]
	xs := p.X.Tick.Marker.Ticks(1, 4)
	ys := p.Y.Tick.Marker.Ticks(1, 6)
	if len(xs) != 2 || xs[1].Value != 4 || xs[1].Label != "4" || len(ys) != 2 || ys[0].Value != 2 || ys[1].Label != "5" {
		t.Errorf("x ticks %v, y ticks %v; want 1, 4 and 2, 5 (ms)", xs, ys)
	}
}
