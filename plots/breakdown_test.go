package plots

import (
	"image/png"
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
	r.Breakdown = estimator.Breakdown{Forward: 1, Recompute: 0.5, Backward: 2, Optimizer: 0.1, TP: 0.7, PP: 0.2, DP: 0.3}
	r.Iteration = estimator.Iteration{Compute: 3.6, ExposedComm: 1.2, Bubble: 0.4, Total: 5.2}
	return r
}

// The plotted numbers are the estimator's, exactly, and stack to the iteration total.
func TestBreakdownValues(t *testing.T) {
	bars := []Bar{BreakdownBar("a", result()), BreakdownBar("b", result())}
	charts, err := breakdownCharts(bars)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 0.5, 2, 0.1, 0.7, 0.2, 0.3, 0.4}
	var sum float64
	for i, c := range charts {
		if c.Values[0] != want[i] || c.Values[1] != want[i] {
			t.Errorf("segment %d values %v, want %g", i, c.Values, want[i])
		}
		sum += c.Values[0]
	}
	if d := sum - 5.2; d > 1e-12 || d < -1e-12 {
		t.Errorf("segments sum to %g, iteration total 5.2", sum)
	}
	if _, err := breakdownCharts(nil); err == nil {
		t.Error("no bars accepted")
	}
	bad := []Bar{bars[0], {Label: "c", Segments: bars[0].Segments[:3]}}
	if _, err := breakdownCharts(bad); err == nil {
		t.Error("mismatched bars accepted")
	}
}

func TestSavePNG(t *testing.T) {
	p, err := Breakdown("test", []Bar{BreakdownBar("alphabeta", result())})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "b.png")
	if err := Save(p, path, 6*vg.Inch, 4*vg.Inch); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() < 100 {
		t.Fatalf("png: %v %v", err, img)
	}
	if err := Save(p, filepath.Join(dir, "b.gif"), vg.Inch, vg.Inch); errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), ".png, .svg, .pdf") {
		t.Errorf("gif: %v", err)
	}
	if err := Save(p, filepath.Join(dir, "missing", "b.png"), vg.Inch, vg.Inch); err == nil {
		t.Error("missing directory accepted")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries left in the directory", len(entries))
	}
}
