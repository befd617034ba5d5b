package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/plots"
)

// plotFlags are --plot, --plot-size and --dpi, the same on every command that draws.
type plotFlags struct {
	path, size string
	dpi        int
	cmd        *cobra.Command
}

// defaultPlotSize is a figure's size when --plot-size is not given: a two-column-wide figure.
const defaultPlotSize = "7inx4.5in"

// addPlotFlags registers the flags; what says what is drawn.
func addPlotFlags(cmd *cobra.Command, what string) *plotFlags {
	p := &plotFlags{cmd: cmd}
	fs := cmd.Flags()
	fs.StringVar(&p.path, "plot", "", "also draw "+what+" to this image ("+strings.Join(plots.Formats, ", ")+")")
	fs.StringVar(&p.size, "plot-size", defaultPlotSize, "--plot's size: "+plots.SizeHelp)
	fs.IntVar(&p.dpi, "dpi", plots.DefaultDPI, "--plot's resolution for .png, dots per inch")
	return p
}

// check refuses a bad --plot, --plot-size or --dpi before any work is done.
func (p *plotFlags) check() error {
	if p.path == "" {
		for _, n := range []string{"plot-size", "dpi"} {
			if p.cmd.Flags().Changed(n) {
				return usagef("--%s needs --plot PATH (%s)", n, strings.Join(plots.Formats, ", "))
			}
		}
		return nil
	}
	if err := plots.CheckPath(p.path); err != nil {
		return err
	}
	_, err := plots.ParseSize(p.size, p.dpi)
	return err
}

// save draws f to --plot (nothing without it); without --plot-size, a figure of many bars
// is made wide enough for them.
func (p *plotFlags) save(f plots.Figure) error {
	if p.path == "" {
		return nil
	}
	s, err := plots.ParseSize(p.size, p.dpi)
	if err != nil {
		return err
	}
	if w := vg.Length(2.6+0.8*float64(f.Bars)) * vg.Inch; !p.cmd.Flags().Changed("plot-size") && w > s.W {
		s.W = w
	}
	return plots.Save(f, p.path, s)
}

// barsTitle names what several reports share (model, layout, GPUs: those of the first, when all
// agree) and returns each bar's label (the entry, with its layout where layouts differ).
func barsTitle(what string, entries []string, reps []*job.Report) (string, []string) {
	labels := slices.Clone(entries)
	first := reportTitle(reps[0])
	same := true
	for _, r := range reps[1:] {
		same = same && r.Plan.Layout == reps[0].Plan.Layout && r.Model == reps[0].Model
	}
	if !same {
		for i, r := range reps {
			labels[i] += "\n" + layoutText(r.Plan.Layout, repEP(r))
		}
		return fmt.Sprintf("%s, %d %s", reps[0].Workload, len(reps), what), labels
	}
	// The first report's title without its network: the bars are the networks.
	if i := strings.LastIndex(first, ", "); i > 0 && same {
		first = first[:i]
	}
	return first, labels
}

// on reports whether a plot is asked for.
func (p *plotFlags) on() bool { return p != nil && p.path != "" }

// layoutText is a layout as a figure's title shows it: "TP 8 · PP 8 · DP 24" (EP and CP where
// used, interleaving as "PP 8×2").
func layoutText(l partition.Layout, ep int) string {
	var parts []string
	add := func(name string, n int) {
		if n > 1 {
			parts = append(parts, fmt.Sprintf("%s %d", name, n))
		}
	}
	add("TP", l.TP)
	add("CP", l.CP)
	if l.PP > 1 && l.Interleave > 1 {
		parts = append(parts, fmt.Sprintf("PP %d×%d", l.PP, l.Interleave))
	} else {
		add("PP", l.PP)
	}
	add("EP", ep)
	add("DP", l.DP)
	if len(parts) == 0 {
		return "1 GPU"
	}
	return strings.Join(parts, " · ")
}

// reportTitle names what a report estimated: model (and size), layout, GPUs, network.
func reportTitle(rep *job.Report) string {
	name := rep.Model
	ep := 0
	if rep.Transformer != nil {
		name = "Megatron"
		if rep.Preset != "" {
			name = rep.Preset
		}
		if rep.Target != nil {
			name = fmt.Sprintf("loss %s", ftoa(rep.Target.Loss))
		}
		ep = repEP(rep)
	}
	l := rep.Plan.Layout
	return fmt.Sprintf("%s (%s params), %s, %d GPUs, %s", name, units.Count(rep.Params), layoutText(l, ep), l.GPUs, rep.Network)
}

// repEP is a report's expert-parallel degree (0: none).
func repEP(rep *job.Report) int {
	if rep.Transformer == nil {
		return 0
	}
	return rep.Config.MoE.EP
}

// reportBar is one report's breakdown bar, labelled.
func reportBar(label string, rep *job.Report) plots.Bar { return plots.BreakdownBar(label, rep.Result) }
