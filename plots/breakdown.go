package plots

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/internal/atomicfile"
	"github.com/ddlest/ddlest/internal/errs"
)

// Segment is one part of a stacked bar.
type Segment struct {
	Name    string
	Seconds float64
}

// Bar is one estimate's iteration, split into segments.
type Bar struct {
	Label    string
	Segments []Segment
}

// BreakdownBar splits an estimate's iteration the way the estimator does: the segments add up to
// Iteration.Total.
func BreakdownBar(label string, r estimator.Result) Bar {
	b := r.Breakdown
	return Bar{Label: label, Segments: []Segment{
		{"forward", float64(b.Forward)},
		{"recompute", float64(b.Recompute)},
		{"backward", float64(b.Backward)},
		{"optimizer", float64(b.Optimizer)},
		{"TP comm", float64(b.TP)},
		{"PP comm", float64(b.PP)},
		{"DP comm", float64(b.DP)},
		{"bubble", float64(r.Iteration.Bubble)},
	}}
}

// Breakdown draws bars of stacked segments (seconds). Every bar must have the same segment names
// in the same order.
func Breakdown(title string, bars []Bar) (*plot.Plot, error) {
	charts, err := breakdownCharts(bars)
	if err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "time per iteration (s)"
	p.Legend.Top = true
	var labels []string
	for _, b := range bars {
		labels = append(labels, b.Label)
	}
	p.NominalX(labels...)
	for i, c := range charts {
		p.Add(c)
		p.Legend.Add(bars[0].Segments[i].Name, c)
	}
	return p, nil
}

// breakdownCharts builds one stacked bar chart per segment.
func breakdownCharts(bars []Bar) ([]*plotter.BarChart, error) {
	if len(bars) == 0 {
		return nil, fmt.Errorf("plots: no bars")
	}
	n := len(bars[0].Segments)
	for _, b := range bars {
		if len(b.Segments) != n {
			return nil, fmt.Errorf("plots: bar %q has %d segments, want %d", b.Label, len(b.Segments), n)
		}
		for i, s := range b.Segments {
			if s.Name != bars[0].Segments[i].Name {
				return nil, fmt.Errorf("plots: bar %q segment %d is %q, want %q", b.Label, i, s.Name, bars[0].Segments[i].Name)
			}
		}
	}
	var charts []*plotter.BarChart
	for i := 0; i < n; i++ {
		vals := make(plotter.Values, len(bars))
		for j, b := range bars {
			vals[j] = b.Segments[i].Seconds
		}
		c, err := plotter.NewBarChart(vals, vg.Points(28))
		if err != nil {
			return nil, err
		}
		c.LineStyle.Width = 0
		c.Color = palette[i%len(palette)]
		if i > 0 {
			c.StackOn(charts[i-1])
		}
		charts = append(charts, c)
	}
	return charts, nil
}

// palette is the Okabe–Ito colour-blind-safe palette (Okabe & Ito 2008), eight colours, one per
// breakdown segment.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, color.RGBA{0x56, 0xB4, 0xE9, 0xff}, color.RGBA{0x00, 0x9E, 0x73, 0xff},
	color.RGBA{0xF0, 0xE4, 0x42, 0xff}, color.RGBA{0xD5, 0x5E, 0x00, 0xff}, color.RGBA{0xCC, 0x79, 0xA7, 0xff},
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, color.RGBA{0x00, 0x00, 0x00, 0xff},
}

// Formats are the image formats Save writes, by file extension.
var Formats = []string{".png", ".svg", ".pdf"}

// Save writes p to path in the format its extension names, atomically (temporary file, then
// rename): a failure leaves no partial file.
func Save(p *plot.Plot, path string, w, h vg.Length) error {
	ext := strings.ToLower(filepath.Ext(path))
	ok := false
	for _, f := range Formats {
		ok = ok || f == ext
	}
	if !ok {
		return errs.Usage("--plot %q: unknown image format %q; valid: %s", path, ext, strings.Join(Formats, ", "))
	}
	wt, err := p.WriterTo(w, h, ext[1:])
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(out io.Writer) error {
		_, err := wt.WriteTo(out)
		return err
	})
}
