package figures

import (
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot/vg"

	"github.com/ddlest/ddlest/internal/atomicfile"
	"github.com/ddlest/ddlest/internal/repro"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/plots"
	"github.com/ddlest/ddlest/scaling"
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

// All are the figures, in the papers' order.
func All() []Figure {
	return []Figure{
		{Name: "ramp-fig16", Title: "RAMP Fig. 16: Megatron to the Table 9 losses, iteration time and communication share per network",
			Panels: fig16},
		{Name: "ramp-fig18", Title: "RAMP Fig. 18: 1 GB collectives at 65,536 nodes per network and RAMP's speed-up over the best",
			Panels: fig18},
	}
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

// WriteCSV writes the panels' points, one row per point, numbers in their shortest exact form.
func WriteCSV(w io.Writer, pns []plots.Panel) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"panel", "series", "x_label", "x", "y_label", "y"})
	for _, pn := range pns {
		for _, s := range pn.Series {
			for i := range s.X {
				x := strconv.FormatFloat(s.X[i], 'g', -1, 64)
				if len(pn.X.Categories) > 0 {
					x = pn.X.Categories[int(s.X[i])]
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

// fig16 is Section81's iteration times and communication shares against the Table 9 losses.
func fig16() ([]plots.Panel, error) {
	r, err := repro.Section81()
	if err != nil {
		return nil, err
	}
	var ce []float64
	for _, row := range scaling.Table9 {
		ce = append(ce, row.Loss)
	}
	tp := plots.Panel{Title: "Megatron to the Table 9 losses (RAMP §8.1): iteration time",
		X: plots.Axis{Label: "target cross-entropy loss (CE)", Ticks: ce}, Y: plots.Axis{Label: "time per iteration", Time: true}}
	sp := plots.Panel{Title: "exposed communication share",
		X: plots.Axis{Label: "target cross-entropy loss (CE)", Ticks: ce}, Y: plots.Axis{Label: "communication share (%)"}}
	for _, net := range repro.Section81Nets {
		tp.Series = append(tp.Series, plots.Series{Name: net, X: ce, Y: r.Times[net]})
		var pct []float64
		for _, s := range r.Shares[net] {
			pct = append(pct, 100*s)
		}
		sp.Series = append(sp.Series, plots.Series{Name: net, X: ce, Y: pct})
	}
	return []plots.Panel{tp, sp}, nil
}

// fig18 is each network's time per operation and RAMP's speed-up over the best of the others.
func fig18() ([]plots.Panel, error) {
	r, err := repro.Fig18()
	if err != nil {
		return nil, err
	}
	var ops []string
	var xs, speed []float64
	for i, op := range r.Ops {
		ops = append(ops, op.String())
		xs = append(xs, float64(i))
		speed = append(speed, r.Speedup[op])
	}
	tp := plots.Panel{Title: fmt.Sprintf("%v collectives over 65,536 nodes (RAMP Fig. 18)", units.Bytes(1e9)),
		X: plots.Axis{Label: "operation", Categories: ops}, Y: plots.Axis{Label: "completion time", Log: true, Time: true}}
	for _, net := range repro.Fig18Nets {
		tp.Series = append(tp.Series, plots.Series{Name: net, X: xs, Y: r.Times[net]})
	}
	sp := plots.Panel{Title: "RAMP's speed-up over the best baseline (§8.2: 7.6–171×)",
		X: plots.Axis{Label: "operation", Categories: ops}, Y: plots.Axis{Label: "speed-up (×)", Log: true},
		Series: []plots.Series{{Name: "speed-up", X: xs, Y: speed}}}
	return []plots.Panel{tp, sp}, nil
}
