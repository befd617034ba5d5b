package plots

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/ddlest/ddlest/internal/units"
)

// Series is one line of a line chart: points (X[i], Y[i]).
type Series struct {
	Name string
	X, Y []float64
}

// Axis describes one axis of a line chart.
type Axis struct {
	Label string // with its unit, e.g. "message size (bytes)"; a time axis adds its own
	Log   bool
	// Format, when set, writes the major tick labels (e.g. byte sizes as "1 MB").
	Format func(float64) string
	// Ticks, when set, are the major ticks (e.g. the swept values 1, 2, 4, 8 on a log axis; on a
	// Time axis in seconds, labelled in the axis's unit).
	Ticks []float64
	// Categories, on an x axis, names the points x = 0, 1, …: a nominal axis (networks).
	Categories []string
	// Time marks a y axis in seconds: the values are shown in the unit its largest reads best in
	// (TimeUnit) and Label gains that unit.
	Time bool
}

// Panel is one chart of a figure.
type Panel struct {
	Title  string
	X, Y   Axis
	Series []Series
}

// Lines draws panels stacked in a column, sharing one legend (series of the same name have the
// same colour in every panel). A series needs as many Y as X values, all finite, and positive
// on a log axis.
func Lines(panels ...Panel) (Figure, error) {
	if len(panels) == 0 {
		return Figure{}, fmt.Errorf("plots: no panels")
	}
	var names []string
	seen := map[string]bool{}
	for _, pn := range panels {
		for _, s := range pn.Series {
			if !seen[s.Name] {
				seen[s.Name] = true
				names = append(names, s.Name)
			}
		}
	}
	cols := colours(names)
	colour := map[string]int{}
	for i, n := range names {
		colour[n] = i
	}
	f := Figure{Legend: plot.NewLegend(), Legended: len(names) > 1}
	inLegend := map[string]bool{}
	for _, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.Title
		p.X.Label.Text = pn.X.Label
		scale, yLabel := 1.0, pn.Y.Label
		if pn.Y.Time {
			// The unit the largest value reads best in; on a log axis, the median's (a log
			// axis spans decades: the typical value decides).
			var ys []float64
			for _, s := range pn.Series {
				ys = append(ys, s.Y...)
			}
			slices.Sort(ys)
			ref := 0.0
			if len(ys) > 0 {
				ref = ys[len(ys)-1]
				if pn.Y.Log {
					ref = ys[len(ys)/2]
				}
			}
			var unit string
			scale, unit = TimeUnit(ref)
			yLabel = fmt.Sprintf("%s (%s)", yLabel, unit)
		}
		p.Y.Label.Text = yLabel
		if len(pn.X.Categories) > 0 {
			p.NominalX(pn.X.Categories...)
			p.X.Label.Text = pn.X.Label
			if len(pn.X.Categories) > 5 { // long names of many categories would run into each other
				p.X.Tick.Label.Rotation, p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = math.Pi/6, -1, -0.5
			}
		}
		if pn.X.Log {
			p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		}
		if pn.Y.Log {
			p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
		}
		if len(pn.X.Ticks) > 0 {
			p.X.Tick.Marker = constantTicks(pn.X.Ticks, 1)
		}
		if len(pn.Y.Ticks) > 0 {
			p.Y.Tick.Marker = constantTicks(pn.Y.Ticks, scale)
		}
		if pn.X.Format != nil {
			p.X.Tick.Marker = labelled{p.X.Tick.Marker, pn.X.Format}
		}
		if pn.Y.Format != nil {
			p.Y.Tick.Marker = labelled{p.Y.Tick.Marker, pn.Y.Format}
		}
		p.Add(plotter.NewGrid())
		for _, s := range pn.Series {
			if len(s.X) != len(s.Y) || len(s.X) == 0 {
				return Figure{}, fmt.Errorf("plots: series %q has %d x and %d y values", s.Name, len(s.X), len(s.Y))
			}
			xys := make(plotter.XYs, len(s.X))
			for i := range s.X {
				x, y := s.X[i], s.Y[i]/scale
				if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) ||
					(pn.X.Log && x <= 0) || (pn.Y.Log && y <= 0) {
					return Figure{}, fmt.Errorf("plots: series %q point %d (%g, %g) cannot be drawn", s.Name, i, s.X[i], s.Y[i])
				}
				xys[i] = plotter.XY{X: x, Y: y}
			}
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return Figure{}, err
			}
			c := cols[colour[s.Name]]
			k := colour[s.Name]
			l.Color, l.Width = c, vg.Points(1.5)
			pts.Color, pts.Shape, pts.Radius = c, shapes[k%len(shapes)], vg.Points(2.5)
			// Points of a nominal axis are not joined: nothing lies between two networks.
			thumbs := []plot.Thumbnailer{l, pts}
			if len(pn.X.Categories) > 0 {
				pts.Radius = vg.Points(4)
				thumbs = thumbs[1:]
			}
			for _, t := range thumbs {
				p.Add(t.(plot.Plotter))
			}
			if !inLegend[s.Name] {
				inLegend[s.Name] = true
				f.Legend.Add(s.Name, thumbs...)
			}
		}
		if len(pn.X.Categories) == 0 {
			pad(&p.X, pn.X.Log)
		}
		pad(&p.Y, pn.Y.Log)
		f.Panels = append(f.Panels, p)
	}
	return f, nil
}

// pad widens an axis by 4% of its span on each side (of its decades on a log axis), so that no
// marker sits on a panel's edge, half drawn over the axis line.
func pad(a *plot.Axis, log bool) {
	lo, hi := a.Min, a.Max
	if !(lo <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) { // no data
		return
	}
	if log {
		lo, hi = math.Log10(lo), math.Log10(hi)
	}
	d := 0.04 * (hi - lo)
	if d == 0 { // one value: a band around it
		d = 0.1
		if !log {
			d = max(0.1*math.Abs(hi), 1e-12)
		}
	}
	lo, hi = lo-d, hi+d
	if log {
		lo, hi = math.Pow(10, lo), math.Pow(10, hi)
	}
	a.Min, a.Max = lo, hi
}

// constantTicks are ticks at vs (divided by scale), each labelled with its value.
func constantTicks(vs []float64, scale float64) plot.ConstantTicks {
	ts := make(plot.ConstantTicks, len(vs))
	prec := -1 // exact
	if scale != 1 {
		prec = 6 // 2e-3 s / 1e-3 is 2.0000000000000004 ms
	}
	for i, v := range vs {
		ts[i] = plot.Tick{Value: v / scale, Label: strconv.FormatFloat(v/scale, 'g', prec, 64)}
	}
	return ts
}

// shapes tell the series apart in grey-scale print too.
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PlusGlyph{},
	draw.CrossGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}

// labelled relabels another ticker's major ticks.
type labelled struct {
	plot.Ticker
	format func(float64) string
}

func (l labelled) Ticks(min, max float64) []plot.Tick {
	ts := l.Ticker.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = l.format(ts[i].Value)
		}
	}
	return ts
}

// ByteTicks labels a byte axis "1 MB", "10 GB".
func ByteTicks(x float64) string { return units.Bytes(x).String() }
