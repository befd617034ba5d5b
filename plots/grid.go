package plots

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// GridPoint is one point of a sweep: its grid values (one per key) and the plotted quantity
// (NaN for a point that did not run).
type GridPoint struct {
	Values []string
	Y      float64
}

// Grid draws a sweep: the last (fastest-varying) key along x — a numeric axis when its values
// are numbers (logarithmic when they span a factor of 16 or more), else one position per
// value — and one line per combination of the other keys' values; y is logarithmic when the
// values span a factor of 30 or more. Points that did not run are
// left out; a line with no point is not drawn. yLabel names the quantity (seconds when yTime).
func Grid(title string, keys []string, pts []GridPoint, yLabel string, yTime bool) (Figure, error) {
	pn, err := gridPanel(title, keys, pts, yLabel, yTime)
	if err != nil {
		return Figure{}, err
	}
	return Lines(pn)
}

func gridPanel(title string, keys []string, pts []GridPoint, yLabel string, yTime bool) (Panel, error) {
	if len(keys) == 0 || len(pts) == 0 {
		return Panel{}, fmt.Errorf("plots: an empty grid")
	}
	last := len(keys) - 1
	var xs []string
	numeric := true
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		if len(p.Values) != len(keys) {
			return Panel{}, fmt.Errorf("plots: a grid point has %d values for %d keys", len(p.Values), len(keys))
		}
		v := p.Values[last]
		if !slices.Contains(xs, v) {
			xs = append(xs, v)
		}
		x, err := strconv.ParseFloat(v, 64)
		numeric = numeric && err == nil && !math.IsInf(x, 0) && !math.IsNaN(x)
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	xAxis := Axis{Label: keys[last]}
	if numeric {
		xAxis.Log = lo > 0 && hi/lo >= 16
		if len(xs) <= 12 { // label every swept value
			for _, v := range xs {
				x, _ := strconv.ParseFloat(v, 64)
				xAxis.Ticks = append(xAxis.Ticks, x)
			}
			slices.Sort(xAxis.Ticks)
		}
	} else {
		xAxis.Categories = xs
	}
	byName := map[string]*Series{}
	var order []string
	for _, p := range pts {
		if math.IsNaN(p.Y) {
			continue
		}
		var parts []string
		for i, k := range keys[:last] {
			parts = append(parts, k+"="+p.Values[i])
		}
		name := strings.Join(parts, ", ")
		if name == "" {
			name = yLabel
		}
		s, ok := byName[name]
		if !ok {
			s = &Series{Name: name}
			byName[name] = s
			order = append(order, name)
		}
		x := float64(slices.Index(xs, p.Values[last]))
		if numeric {
			x, _ = strconv.ParseFloat(p.Values[last], 64)
		}
		s.X, s.Y = append(s.X, x), append(s.Y, p.Y)
	}
	if len(order) == 0 {
		return Panel{}, fmt.Errorf("plots: no point of the grid ran")
	}
	pn := Panel{Title: title, X: xAxis, Y: Axis{Label: yLabel, Time: yTime}}
	ylo, yhi := math.Inf(1), 0.0
	for _, n := range order {
		pn.Series = append(pn.Series, *byName[n])
		for _, y := range byName[n].Y {
			ylo, yhi = math.Min(ylo, y), math.Max(yhi, y)
		}
	}
	pn.Y.Log = ylo > 0 && yhi/ylo >= 30 // values over more than a decade and a half
	return pn, nil
}
