package figures

import (
	"fmt"
	"maps"
	"slices"

	"github.com/ddlest/ddlest/internal/repro"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/plots"
)

// oddlModels are Figs. 10–13: the figure number, the model as the titles name it, its sweep.
var oddlModels = []struct {
	fig   int
	model string
	sweep func() (repro.ODDLScaling, error)
}{
	{10, "ResNet-50", repro.ODDLFig10},
	{11, "LeNet-5", repro.ODDLFig11},
	{12, "VGG16", repro.ODDLFig12},
	{13, "VGG19", repro.ODDLFig13},
}

// oddlRates are Table 2's NIC rates (Gb/s): one figure each, 100 Gb/s named as the paper's
// figure (oddl-fig10), the others with the rate (oddl-fig10-200g).
var oddlRates = []int{100, 200, 400}

func init() {
	for _, m := range oddlModels {
		for _, nic := range oddlRates {
			name := fmt.Sprintf("oddl-fig%d", m.fig)
			if nic != oddlRates[0] {
				name += fmt.Sprintf("-%dg", nic)
			}
			title := fmt.Sprintf("ODDL Fig. %d: %s on 16–1,024 nodes at %d Gb/s, epoch time and bandwidth utilisation per network, 16 and 32 MiB fusion", m.fig, m.model, nic)
			if m.fig == 11 {
				title += " (V13 not reproduced: LeNet-5's gradients fit one buffer at both)"
			}
			register(Figure{Name: name, Title: title, Panels: oddlFigure(m.model, m.sweep, nic)})
		}
	}
}

// oddlFigure draws a model's sweep at one NIC rate as the paper lays Figs. 10–13 out: per fusion
// threshold, the epoch time of every network against the system size (the paper's histograms,
// here on log axes: 16 to 1,024 nodes span a factor 64) and the bandwidth utilisation (its
// curves).
func oddlFigure(model string, sweep func() (repro.ODDLScaling, error), nic int) func() ([]plots.Panel, error) {
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
		// Epoch times with 1-2-5 ticks: powers of ten alone leave the 1,024-node end, where the
		// networks part, unlabelled.
		var out []plots.Panel
		for _, f := range repro.ODDLFusions {
			i := repro.ODDLSettingIndex(nic, f)
			if i < 0 {
				return nil, fmt.Errorf("no ODDL setting of %d Gb/s and %v fusion", nic, f)
			}
			mib := int(f / units.MiB) // Table 2's "16 MB / 32 MB", Horovod's MiB
			ep := plots.Panel{Title: fmt.Sprintf("%s, %d MiB fusion, %d Gb/s: epoch time", model, mib, nic), X: x,
				Y: plots.Axis{Label: "epoch time (s)", Log: true, Ticks: ticks125(slices.Collect(maps.Values(r.Epoch[i]))...)}}
			ut := plots.Panel{Title: fmt.Sprintf("%s, %d MiB fusion, %d Gb/s: bandwidth utilisation", model, mib, nic), X: x,
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
