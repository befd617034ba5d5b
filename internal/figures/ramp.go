package figures

import (
	"fmt"

	"github.com/ddlest/ddlest/internal/repro"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/plots"
	"github.com/ddlest/ddlest/scaling"
)

func init() {
	register(
		Figure{Name: "ramp-fig16", Title: "RAMP Fig. 16: Megatron to the Table 9 losses, iteration time and communication share per network",
			Panels: fig16},
		Figure{Name: "ramp-fig18", Title: "RAMP Fig. 18: 1 GB collectives at 65,536 nodes per network and RAMP's speed-up over the best",
			Panels: fig18},
	)
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
