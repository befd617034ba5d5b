package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/ddlest/ddlest/estimator"
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

// BreakdownBar splits an estimate's iteration the way the estimator does: compute by phase,
// exposed communication by parallel dimension (estimator.CommOrder, each named for what it is),
// the pipeline bubble. The segments add up to Iteration.Total.
func BreakdownBar(label string, r estimator.Result) Bar {
	b := r.Breakdown
	segs := make([]Segment, 0, 6+len(estimator.CommOrder))
	segs = append(segs, Segment{"forward", float64(b.Forward)}, Segment{"recompute", float64(b.Recompute)},
		Segment{"backward", float64(b.Backward)}, Segment{"optimizer", float64(b.Optimizer)})
	for _, d := range estimator.CommOrder {
		segs = append(segs, Segment{d.Title() + " comm", float64(*b.Comm(d))})
	}
	segs = append(segs, Segment{"pipeline bubble", float64(r.Iteration.Bubble)})
	return Bar{Label: label, Segments: segs}
}

// Breakdown draws iterations as bars of stacked segments (Bars of "time per iteration").
func Breakdown(title, xLabel string, bars []Bar) (Figure, error) {
	return Bars(title, xLabel, "time per iteration", bars)
}

// Bars draws bars of stacked segments, each bar's total written above it, in the time unit its
// tallest bar reads best in. Every bar must have the same segment names in the same order; a
// segment that is zero in every bar is left out (of the bars and the legend). xLabel names what
// the bars are (network, target loss, …), quantity what they measure.
func Bars(title, xLabel, quantity string, bars []Bar) (Figure, error) {
	charts, names, err := breakdownCharts(bars)
	if err != nil {
		return Figure{}, err
	}
	max := 0.0
	for _, b := range bars {
		max = math.Max(max, total(b))
	}
	scale, unit := TimeUnit(max)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = fmt.Sprintf("%s (%s)", quantity, unit)
	p.Y.Min, p.Y.Max = 0, 1.12*max/scale // room for the totals
	var labels []string
	for _, b := range bars {
		labels = append(labels, b.Label)
	}
	p.NominalX(labels...)
	if len(bars) > 5 { // long labels of many bars would run into each other
		p.X.Tick.Label.Rotation, p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = math.Pi/6, -1, -0.5
	}
	f := Figure{Panels: []*plot.Plot{p}, Legend: plot.NewLegend(), Legended: true, Bars: len(bars)}
	for _, c := range charts {
		for j := range c.Values {
			c.Values[j] /= scale
		}
		p.Add(c)
	}
	// The legend lists the top segment first, as it is stacked.
	for i := len(charts) - 1; i >= 0; i-- {
		f.Legend.Add(names[i], charts[i])
	}
	tot := plotter.XYLabels{}
	for i, b := range bars {
		t := total(b)
		tot.XYs = append(tot.XYs, plotter.XY{X: float64(i), Y: t / scale})
		tot.Labels = append(tot.Labels, fmt.Sprintf("%.3g %s", t/scale, unit))
	}
	l, err := plotter.NewLabels(tot)
	if err != nil {
		return Figure{}, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = -0.5, 0
		if len(bars) > 5 {
			l.TextStyle[i].Font.Size = 8
		}
	}
	l.Offset = vg.Point{Y: 2}
	p.Add(l)
	return f, nil
}

// total is a bar's height in seconds.
func total(b Bar) float64 {
	s := 0.0
	for _, x := range b.Segments {
		s += x.Seconds
	}
	return s
}

// breakdownCharts builds one stacked bar chart (in seconds) per segment that is not zero in
// every bar, and returns them with their names.
func breakdownCharts(bars []Bar) ([]*plotter.BarChart, []string, error) {
	if len(bars) == 0 {
		return nil, nil, fmt.Errorf("plots: no bars")
	}
	n := len(bars[0].Segments)
	for _, b := range bars {
		if len(b.Segments) != n {
			return nil, nil, fmt.Errorf("plots: bar %q has %d segments, want %d", b.Label, len(b.Segments), n)
		}
		for i, s := range b.Segments {
			if s.Name != bars[0].Segments[i].Name {
				return nil, nil, fmt.Errorf("plots: bar %q segment %d is %q, want %q", b.Label, i, s.Name, bars[0].Segments[i].Name)
			}
			if !(s.Seconds >= 0) || math.IsInf(s.Seconds, 0) {
				return nil, nil, fmt.Errorf("plots: bar %q segment %q is %g s", b.Label, s.Name, s.Seconds)
			}
		}
	}
	var names []string
	var kept []int
	for i := 0; i < n; i++ {
		for _, b := range bars {
			if b.Segments[i].Seconds > 0 {
				names, kept = append(names, bars[0].Segments[i].Name), append(kept, i)
				break
			}
		}
	}
	if len(kept) == 0 {
		return nil, nil, fmt.Errorf("plots: every segment of every bar is zero")
	}
	cols := colours(names)
	width := vg.Points(math.Min(60, math.Max(14, 300/float64(len(bars)))))
	var charts []*plotter.BarChart
	for k, i := range kept {
		vals := make(plotter.Values, len(bars))
		for j, b := range bars {
			vals[j] = b.Segments[i].Seconds
		}
		c, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, nil, err
		}
		c.LineStyle.Width = 0
		c.Color = cols[k]
		if k > 0 {
			c.StackOn(charts[k-1])
		}
		charts = append(charts, c)
	}
	return charts, names, nil
}
