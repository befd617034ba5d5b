package figures

import (
	"fmt"

	"github.com/ddlest/ddlest/internal/repro"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/plots"
)

func init() {
	register(
		Figure{Name: "oddl-fig10", Title: "ODDL Fig. 10: ResNet-50 on 16–1,024 nodes at 100 Gb/s, epoch time and bandwidth utilisation per network, 16 and 32 MiB fusion",
			Panels: oddlFigure("ResNet-50", repro.ODDLFig10)},
		Figure{Name: "oddl-fig12", Title: "ODDL Fig. 12: VGG16 on 16–1,024 nodes at 100 Gb/s, epoch time and bandwidth utilisation per network, 16 and 32 MiB fusion",
			Panels: oddlFigure("VGG16", repro.ODDLFig12)},
		Figure{Name: "oddl-fig13", Title: "ODDL Fig. 13: VGG19 on 16–1,024 nodes at 100 Gb/s, epoch time and bandwidth utilisation per network, 16 and 32 MiB fusion",
			Panels: oddlFigure("VGG19", repro.ODDLFig13)},
	)
}

// oddlFigure draws a model's sweep as the paper lays Figs. 10–13 out: per fusion threshold, the
// epoch time of every network against the system size (the paper's histograms, here on log
// axes: 16 to 1,024 nodes span a factor 64) and the bandwidth utilisation (its curves).
func oddlFigure(model string, sweep func() (repro.ODDLScaling, error)) func() ([]plots.Panel, error) {
	return func() ([]plots.Panel, error) {
		r, err := sweep()
		if err != nil {
			return nil, err
		}
		var nodes []float64
		for _, n := range repro.ODDLNodes {
			nodes = append(nodes, float64(n))
		}
		x := plots.Axis{Label: "nodes (one GPU each)", Log: true, Ticks: nodes}
		// Epoch times in seconds with 1-2-5 ticks: powers of ten alone leave the 1,024-node
		// end, where the networks part, unlabelled.
		var secs []float64
		for _, d := range []float64{1, 10, 100, 1000} {
			secs = append(secs, d, 2*d, 5*d)
		}
		var out []plots.Panel
		for i, f := range repro.ODDLFusions {
			mib := int(f / units.MiB) // Table 2's "16 MB / 32 MB", Horovod's MiB
			ep := plots.Panel{Title: fmt.Sprintf("%s, %d MiB fusion, 100 Gb/s: epoch time", model, mib), X: x,
				Y: plots.Axis{Label: "epoch time (s)", Log: true, Ticks: secs}}
			ut := plots.Panel{Title: fmt.Sprintf("%s, %d MiB fusion, 100 Gb/s: bandwidth utilisation", model, mib), X: x,
				Y: plots.Axis{Label: "all-reduce bus bandwidth / NIC rate (%)"}}
			for _, net := range repro.ODDLNets {
				ep.Series = append(ep.Series, plots.Series{Name: net.Name, X: nodes, Y: r.Epoch[i][net.Name]})
				var pct []float64
				for _, u := range r.Util[i][net.Name] {
					pct = append(pct, 100*u)
				}
				ut.Series = append(ut.Series, plots.Series{Name: net.Name, X: nodes, Y: pct})
			}
			out = append(out, ep, ut)
		}
		return out, nil
	}
}
