package plots

import (
	"fmt"
	"math"
	"slices"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// CollectivePoint is one priced collective: the operation (or raw pattern) name, the network,
// the job size, the message size (nccl-tests definition) and its cost.
type CollectivePoint struct {
	Name, Network string
	GPUs          int
	Bytes         units.Bytes
	Cost          network.Cost
}

// Collectives draws priced collectives (ddlest collective): completion time against message
// size when several sizes were priced (log–log, one line per operation and job size), else
// against GPUs (log–log, one line per operation), else one bar per operation split into its
// parts (head-to-head, head-to-tail, reduction compute, reconfiguration). Every plotted number
// is a row's.
func Collectives(rows []CollectivePoint) (Figure, error) {
	pn, bars, title, err := collectiveData(rows)
	if err != nil {
		return Figure{}, err
	}
	if bars != nil {
		return Bars(title, "operation", "completion time", bars)
	}
	return Lines(pn)
}

// collectiveData is the panel of lines, or the bars with their title, that Collectives draws.
func collectiveData(rows []CollectivePoint) (pn Panel, bars []Bar, title string, err error) {
	if len(rows) == 0 {
		return pn, nil, "", fmt.Errorf("plots: no collectives")
	}
	var sizes []float64
	var gpus []int
	var names []string
	for _, r := range rows {
		if s := float64(r.Bytes); !slices.Contains(sizes, s) {
			sizes = append(sizes, s)
		}
		if !slices.Contains(gpus, r.GPUs) {
			gpus = append(gpus, r.GPUs)
		}
		if n := r.Name; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	net := rows[0].Network
	switch {
	case len(sizes) > 1:
		byName := map[string]*Series{}
		var order []string
		for _, r := range rows {
			n := r.Name
			if len(gpus) > 1 {
				n = fmt.Sprintf("%s, %d GPUs", n, r.GPUs)
			}
			s, ok := byName[n]
			if !ok {
				s = &Series{Name: n}
				byName[n] = s
				order = append(order, n)
			}
			s.X, s.Y = append(s.X, float64(r.Bytes)), append(s.Y, float64(r.Cost.Total))
		}
		var ss []Series
		for _, n := range order {
			ss = append(ss, *byName[n])
		}
		return Panel{Title: fmt.Sprintf("collectives on %s vs message size", net),
			X: Axis{Label: "message size (nccl-tests definition)", Log: true, Format: ByteTicks},
			Y: Axis{Label: "completion time", Log: true, Time: true}, Series: ss}, nil, "", nil
	case len(gpus) > 1:
		var ss []Series
		for _, n := range names {
			s := Series{Name: n}
			for _, r := range rows {
				if r.Name == n {
					s.X, s.Y = append(s.X, float64(r.GPUs)), append(s.Y, float64(r.Cost.Total))
				}
			}
			ss = append(ss, s)
		}
		return Panel{Title: fmt.Sprintf("collectives of %s on %s vs GPUs", rows[0].Bytes.String(), net),
			X: Axis{Label: "GPUs", Log: true}, Y: Axis{Label: "completion time", Log: true, Time: true}, Series: ss}, nil, "", nil
	}
	// The parts add up to the total on every network ddlest has; a cost whose parts did not
	// would be drawn whole rather than misleadingly split.
	split := true
	for _, r := range rows {
		c := r.Cost
		sum := c.H2H + c.H2T + c.Compute + c.Reconfig
		split = split && math.Abs(float64(sum-c.Total)) <= 1e-9*float64(c.Total)
	}
	bars = make([]Bar, len(rows))
	for i, r := range rows {
		c := r.Cost
		bars[i] = Bar{Label: r.Name, Segments: []Segment{{"completion time", float64(c.Total)}}}
		if split {
			bars[i].Segments = []Segment{{"head-to-head", float64(c.H2H)}, {"head-to-tail", float64(c.H2T)},
				{"reduction compute", float64(c.Compute)}, {"reconfiguration", float64(c.Reconfig)}}
		}
	}
	return pn, bars, fmt.Sprintf("collectives of %s over %d GPUs on %s", rows[0].Bytes.String(), rows[0].GPUs, net), nil
}
