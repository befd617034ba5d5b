package figures

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/plot/vg"

	"github.com/ddlest/ddlest/internal/atomicfile"
	"github.com/ddlest/ddlest/internal/repro"
	"github.com/ddlest/ddlest/plots"
)

// Figure is one figure ddlest reproduces: its file name, what it reproduces, and the panels it
// draws (the CSV holds exactly their points).
type Figure struct {
	Name   string // file stem, e.g. "ramp-fig18"
	Title  string // what it reproduces
	Panels func() ([]plots.Panel, error)
}

// Size is every figure's size: a two-column-wide figure at 150 dpi, taller per extra panel.
func Size(panels int) plots.Size {
	return plots.Size{W: 7 * vg.Inch, H: vg.Length(1.5+2.8*float64(panels)) * vg.Inch, DPI: plots.DefaultDPI}
}

// Figure names start with their seed ("ramp-fig16"); each seed's file registers its figures.
var registry []Figure

// register adds figures (each seed's file calls it from init, in the paper's order).
func register(fs ...Figure) { registry = append(registry, fs...) }

// All are the figures, in the seeds' order (repro.Seeds), each seed's in its paper's order.
func All() []Figure {
	var out []Figure
	for _, s := range repro.Seeds {
		for _, f := range registry {
			if strings.HasPrefix(f.Name, s+"-") {
				out = append(out, f)
			}
		}
	}
	return out
}

// Lookup finds a figure by name.
func Lookup(name string) (Figure, bool) {
	for _, f := range All() {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// Names lists the figures' names.
func Names() []string {
	var out []string
	for _, f := range All() {
		out = append(out, f.Name)
	}
	return out
}

// Write draws f to DIR/NAME.png and its points to DIR/NAME.csv (panel, series, x, y), each
// written atomically.
func Write(f Figure, dir string) error {
	pns, err := f.Panels()
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	fig, err := plots.Lines(pns...)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	if err := plots.Save(fig, filepath.Join(dir, f.Name+".png"), Size(len(pns))); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, f.Name+".csv"), func(w io.Writer) error { return WriteCSV(w, pns) })
}

// WriteAll writes every figure of fs as Write does, on every core (the figures are
// independent; the computations they share are memoized), and calls done with each figure
// written, in fs's order, up to the first that fails: its error is returned (the figures after
// it are still drawn, each file written whole or not at all).
func WriteAll(fs []Figure, dir string, done func(Figure)) error {
	errs := make([]chan error, len(fs))
	next := make(chan int)
	for i := range fs {
		errs[i] = make(chan error, 1)
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(fs)) {
		wg.Go(func() {
			for i := range next {
				errs[i] <- Write(fs[i], dir)
			}
		})
	}
	go func() {
		for i := range fs {
			next <- i
		}
		close(next)
	}()
	var first error
	for i, f := range fs {
		if err := <-errs[i]; err != nil && first == nil {
			first = err
		} else if first == nil {
			done(f)
		}
	}
	wg.Wait()
	return first
}

// WriteCSV writes the panels' points, one row per point, numbers in their shortest exact form.
func WriteCSV(w io.Writer, pns []plots.Panel) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"panel", "series", "x_label", "x", "y_label", "y"})
	for _, pn := range pns {
		for _, s := range pn.Series {
			for i := range s.X {
				x := strconv.FormatFloat(s.X[i], 'g', -1, 64)
				if len(pn.X.Categories) > 0 {
					x = pn.X.Categories[int(math.Round(s.X[i]))]
				}
				yl := pn.Y.Label
				if pn.Y.Time {
					yl += " (s)"
				}
				_ = cw.Write([]string{pn.Title, s.Name, pn.X.Label, x, yl, strconv.FormatFloat(s.Y[i], 'g', -1, 64)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// ticks125 are 1-2-5 ticks over the decades the values span, for a log axis that spans too
// few decades for its powers of ten to label it; none (the axis's own) from three decades up,
// where they would crowd.
func ticks125(values ...[]float64) []float64 {
	lo, hi := math.Inf(1), 0.0
	for _, ys := range values {
		lo, hi = min(lo, slices.Min(ys)), max(hi, slices.Max(ys))
	}
	if hi >= 1000*lo {
		return nil
	}
	var out []float64
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		d := math.Pow(10, e) // exact for every decade, where d *= 10 drifts below 1
		out = append(out, d, 2*d, 5*d)
	}
	return out
}
