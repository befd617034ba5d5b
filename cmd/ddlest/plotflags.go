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

// saveReports draws reports' iteration breakdowns side by side, one bar per entry (nothing
// without --plot); xLabel names what the entries are ("network", "job file"; "" for one report).
func (p *plotFlags) saveReports(xLabel string, entries []string, reps []*job.Report) error {
	if !p.on() {
		return nil
	}
	title, labels := barsTitle(xLabel, entries, reps)
	bars := make([]plots.Bar, len(reps))
	for i, r := range reps {
		bars[i] = plots.BreakdownBar(labels[i], r.Result)
	}
	fig, err := plots.Breakdown(title, xLabel, bars)
	if err != nil {
		return err
	}
	return p.save(fig)
}

// barsTitle names what the reports share — model, layout and GPUs when all agree, and the
// network of a single report — and returns each bar's label (the entry, with its layout where
// layouts differ).
func barsTitle(xLabel string, entries []string, reps []*job.Report) (string, []string) {
	labels := slices.Clone(entries)
	if len(reps) == 1 {
		return reportSubject(reps[0]) + ", " + reps[0].Network, labels
	}
	for _, r := range reps[1:] {
		if r.Plan.Layout != reps[0].Plan.Layout || r.Model != reps[0].Model {
			for i, r := range reps {
				labels[i] += "\n" + layoutText(r.Plan.Layout, repEP(r))
			}
			return fmt.Sprintf("%s, %d %ss", reps[0].Workload, len(reps), xLabel), labels
		}
	}
	return reportSubject(reps[0]), labels
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

// reportSubject names what a report estimated: model (and size), layout, GPUs.
func reportSubject(rep *job.Report) string {
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
	return fmt.Sprintf("%s (%s params), %s, %d GPUs", name, units.Count(rep.Params), layoutText(l, ep), l.GPUs)
}

// repEP is a report's expert-parallel degree (0: none).
func repEP(rep *job.Report) int {
	if rep.Transformer == nil {
		return 0
	}
	return rep.Config.MoE.EP
}
