package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition/moe"
)

func newCompareCommand() *cobra.Command {
	parent := &cobra.Command{
		Use:   "compare",
		Short: "One job on several networks or clusters, side by side: iteration, time to accuracy, communication, speed-up",
		Long: `Run one job on each network of --nets (on the job's cluster: a network model with its default
parameters or a network preset, each entry NAME[:KEY=VALUE…], --net-param applying to all) or
on each cluster preset of --clusters (the job's other flags apply to each), and list iteration time, time to accuracy, exposed communication share and the speed-up over the
baseline (--baseline, default the first). The numbers are those of the single commands: each
entry of --format json is the workload command's own document.`,
		Args: cobra.ArbitraryArgs,
		RunE: needs("workload"),
	}
	for _, w := range jobWorkloads {
		var nets, clusters []string
		var baseline string
		var f format
		cmd := &cobra.Command{Use: w.use, Short: "compare " + w.short + " across networks or clusters", Args: noArgs,
			Example: "  ddlest compare " + w.use + exampleModel(w) + " --nets superpod,torus,ideal"}
		cmd.Flags().SortFlags = false
		jf := addJobFlags(cmd, w.workload, w.model)
		cmd.Flags().StringSliceVar(&nets, "nets", nil, "networks to compare, comma-separated: each a network model or preset (ddlest nets), with its own parameters as NAME:KEY=VALUE[:KEY=VALUE…]; --net-param applies to every entry")
		cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "cluster presets to compare (ddlest clusters), comma-separated")
		cmd.Flags().StringVar(&baseline, "baseline", "", "entry the speed-ups are relative to (default: the first)")
		pf := addPlotFlags(cmd, "the iteration breakdowns side by side")
		addFormatFlag(cmd, &f)
		cmd.RunE = func(cmd *cobra.Command, _ []string) error {
			if err := pf.check(); err != nil {
				return err
			}
			entries, key := nets, "network"
			switch {
			case len(nets) > 0 && len(clusters) > 0:
				return usagef("compare: give --nets or --clusters, not both")
			case len(clusters) > 0:
				entries, key = clusters, "cluster"
			case len(nets) == 0:
				return usagef("compare: give --nets a,b,… (ddlest nets) or --clusters a,b,… (ddlest clusters)")
			}
			for i, e := range entries {
				if slices.Contains(entries[:i], e) {
					return usagef("compare: %s is listed twice", e)
				}
			}
			var reps []*job.Report
			for _, e := range entries {
				j, err := jf.buildWith(key, e)
				if err != nil {
					return err
				}
				r, err := job.Run(j)
				if err != nil {
					return jf.flagNames(fmt.Errorf("%s: %w", e, err))
				}
				reps = append(reps, r)
			}
			base := 0
			if baseline != "" {
				base = -1
				for i, e := range entries {
					if e == baseline {
						base = i
					}
				}
				if base < 0 {
					return usagef("--baseline %q is not compared; valid: %s", baseline, strings.Join(entries, ", "))
				}
			}
			if err := pf.saveReports(key, entries, reps); err != nil {
				return err
			}
			return renderCompare(cmd.OutOrStdout(), entries, reps, base, f)
		}
		parent.AddCommand(cmd)
	}
	return parent
}

// buildWith builds the job with one more flag value: the cluster preset (before the other flags,
// as --cluster) or the network entry (in place of --net and --net-preset, see applyEntry).
func (f *jobFlags) buildWith(key, value string) (*job.Job, error) {
	if key == "cluster" {
		if err := f.fs.Set("cluster", value); err != nil {
			return nil, err
		}
		return f.build()
	}
	f.netEntry = value
	defer func() { f.netEntry = "" }()
	return f.build()
}

type compareDoc struct {
	Entry   string  `json:"entry"`
	Speedup float64 `json:"speedup"`
	Run     any     `json:"run"`
}

func renderCompare(w io.Writer, entries []string, reps []*job.Report, base int, f format) error {
	b := reps[base].Result.Iteration.Total
	speedup := func(i int) float64 { return float64(b / reps[i].Result.Iteration.Total) }
	switch f {
	case formatJSON:
		docs := make([]compareDoc, len(reps))
		for i, r := range reps {
			docs[i] = compareDoc{Entry: entries[i], Speedup: speedup(i), Run: jobJSON(r)}
		}
		return writeJSON(w, docs)
	case formatCSV:
		return writeRowsCSV(w, []string{"entry", "speedup"}, reps, func(i int) []string { return []string{entries[i], ftoa(speedup(i))} })
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "entry\tnetwork\tGPUs\titeration\tcompute\texposed comm\tbubble\tcomm share\ttime to accuracy\tMFU\tspeed-up")
	for i, r := range reps {
		it := r.Result.Iteration
		fmt.Fprintf(tw, "%s\t%s\t%d\t%v\t%v\t%v\t%v\t%s\t%v\t%s\t%.2f×\n", entries[i], r.Network, r.Plan.Layout.GPUs, it.Total, it.Compute,
			it.ExposedComm, it.Bubble, pct(it.CommFraction), r.Result.TimeToAccuracy, pct(r.Result.MFU), speedup(i))
	}
	fmt.Fprintf(tw, "\nspeed-up: iteration time of %s / iteration time\n", entries[base])
	return tw.Flush()
}

// epText is the expert-parallel degree, or "—" for a dense model.
func epText(m moe.Spec) string {
	if m.Experts == 0 {
		return "—"
	}
	return itoa(m.EP)
}
