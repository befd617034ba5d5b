package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/internal/rows"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition/megatron"
)

func newSearchCommand() *cobra.Command {
	parent := &cobra.Command{
		Use:   "search",
		Short: "The fastest parallel layouts of a model on N GPUs of a cluster, and why the others lost",
		Long: `Enumerate every parallel layout of the job's model on --gpus GPUs — tensor, pipeline and data
parallelism (TP × PP × DP = GPUs), micro-batch, interleaved stages, activation recomputation,
sequence parallelism, the ZeRO stage, fewer layers on the end stages where the pipeline depth
does not divide the layers and, for MoE models, expert parallelism (context parallelism and the
precision stay as given unless --cps or --precisions lists the values to try) — drop those that do not fit in GPU memory, price the others on the cluster's network and
list the fastest, best first, with how much slower each is than the best and where the difference
lies (compute, pipeline bubble or exposed communication). --gpu-counts searches several job sizes
at once; --rank orders by iteration time (default), GPU-hours (GPUs × time, what a cluster bill is
proportional to) or GPU energy (GPUs × maximum power × time, an upper bound), per iteration of the
global batch; with several sizes, more GPUs finish sooner but may cost more. --format json is a
list, best first, of the workload command's own JSON document (job and report): each runs again
with ddlest run.`,
		Args: cobra.ArbitraryArgs,
		RunE: needs("workload"),
	}
	for _, w := range jobWorkloads {
		if !w.searchable {
			continue
		}
		var top int
		var f format
		var sizes []int
		var rank string
		var cps []int
		var precs []string
		cmd := &cobra.Command{Use: w.use, Short: "search the layouts of " + w.short, Args: noArgs,
			Example: "  ddlest search " + w.use + exampleModel(w) + " --gpus 512\n  ddlest search " + w.use + exampleModel(w) + " --gpu-counts 256,512,1024 --rank gpu-hours"}
		cmd.Flags().SortFlags = false
		jf := addJobFlags(cmd, w.workload, w.model)
		cmd.Flags().IntVar(&top, "top", 5, "layouts to list, best first")
		cmd.Flags().IntSliceVar(&sizes, "gpu-counts", nil, "search these job sizes together (`N,N,…`; instead of --gpus)")
		cmd.Flags().StringVar(&rank, "rank", "time", "order layouts by "+strings.Join(job.Ranks(), ", ")+" per iteration")
		if w.workload == "megatron" {
			cmd.Flags().IntSliceVar(&cps, "cps", nil, "also search these context-parallel degrees (`N,N,…`; default: --cp as given)")
			cmd.Flags().StringSliceVar(&precs, "precisions", nil, "also search these training precisions (`P,P,…`, e.g. bf16,fp8; default: --precision as given)")
		}
		_ = cmd.RegisterFlagCompletionFunc("rank", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return job.Ranks(), cobra.ShellCompDirectiveNoFileComp
		})
		addFormatFlag(cmd, &f)
		cmd.RunE = func(cmd *cobra.Command, _ []string) error {
			if top < 1 {
				return usagef("--top %d must be ≥ 1", top)
			}
			r, err := job.ParseRank(rank)
			if err != nil {
				return usagef("--rank %q is not valid; valid: %s", rank, strings.Join(job.Ranks(), ", "))
			}
			for _, n := range sizes {
				if n < 1 {
					return usagef("--gpu-counts %s: %d must be ≥ 1", joinInts(sizes), n)
				}
			}
			if len(sizes) > 0 && cmd.Flags().Changed("gpus") {
				return usagef("--gpu-counts %s and --gpus %s: give one of them", joinInts(sizes), cmd.Flags().Lookup("gpus").Value)
			}
			so := job.SearchOptions{Top: top, Sizes: sizes, Rank: r}
			for _, cp := range cps {
				if cp < 1 {
					return usagef("--cps %s: %d must be ≥ 1", joinInts(cps), cp)
				}
			}
			so.Space.CP = cps
			for _, p := range precs {
				var x megatron.Precision
				if err := x.UnmarshalText([]byte(p)); err != nil {
					return usagef("--precisions %s: %v", strings.Join(precs, ","), err)
				}
				so.Space.Precision = append(so.Space.Precision, x)
			}
			j, err := jf.build()
			if err != nil {
				return err
			}
			res, err := job.Search(j, so)
			if err != nil {
				return jf.flagNames(err)
			}
			return renderSearch(cmd.OutOrStdout(), res, f)
		}
		parent.AddCommand(cmd)
	}
	return parent
}

func renderSearch(w io.Writer, res *job.SearchResult, f format) error {
	switch f {
	case formatJSON:
		docs := make([]any, len(res.Reports))
		for i, r := range res.Reports {
			docs[i] = jobJSON(r)
		}
		return writeJSON(w, docs)
	case formatCSV:
		return writeRowsCSV(w, []string{"rank"}, res.Reports, func(i int) []string { return []string{itoa(i + 1)} })
	}
	best := res.Reports[0]
	s := res.Summary
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "search\t%s parameters: %s\n", units.Count(best.Params), describeSearch(s))
	if best.Cluster != nil {
		fmt.Fprintf(tw, "cluster\t%s\n", describeCluster(*best.Cluster))
	}
	fmt.Fprintln(tw)
	rk := s.Rank
	measure := ""
	switch rk {
	case job.RankGPUHours:
		measure = "\tGPU-hours"
	case job.RankEnergy:
		measure = "\tGPU energy"
	}
	if measure != "" {
		if best.Steps > 0 {
			measure += " to train"
		} else {
			measure += " per iteration"
		}
	}
	head, withCP := "GPUs = DP × TP × PP", len(s.CPs) > 0 || best.Config.CPs() > 1
	if withCP {
		head = "GPUs = DP × TP × CP × PP"
	}
	precision := len(s.Precisions) > 0 // a column when the search chose it
	if precision {
		head += "\tprecision"
	}
	fmt.Fprintln(tw, "rank\t"+head+"\tinterleave\tmicro-batch\trecompute\tseq-par\tEP\tZeRO\titeration"+measure+"\tvs best\tlost on\ttime to accuracy\tMFU\tmemory")
	bm := rk.Measure(best)
	for i, r := range res.Reports {
		c := r.Config
		it := r.Result.Iteration
		vs, lost := "—", "—"
		if i > 0 {
			vs = fmt.Sprintf("+%.1f%%", 100*(rk.Measure(r)/bm-1))
			lost = rk.LostOn(r, best).String()
		}
		m := ""
		if measure != "" {
			m = "\t" + measureText(rk, rk.Measure(r)*max(1, r.Steps))
		}
		sp := "off"
		if c.SeqParallel {
			sp = "on"
		}
		layout := fmt.Sprintf("%d = %d × %d × %d", c.GPUs(), c.DP, c.TP, c.PP)
		if withCP {
			layout = fmt.Sprintf("%d = %d × %d × %d × %d", c.GPUs(), c.DP, c.TP, c.CPs(), c.PP)
		}
		if c.PPFirstLayers > 0 || c.PPLastLayers > 0 {
			layout += fmt.Sprintf(" (ends %d, %d layers)", c.StageLayers(0), c.StageLayers(c.PP-1))
		}
		if precision {
			layout += "\t" + c.Precision.String()
		}
		zero := c.ZeRO
		if zero == 0 && c.DistOptimizer {
			zero = 1 // the distributed optimizer
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%s\t%d\t%v%s\t%s\t%s\t%v\t%s\t%v\n", i+1, layout,
			c.Interleave, c.MicroBatch, c.Recompute, sp, epText(c.MoE), zero, it.Total, m, vs, lost, r.Result.TimeToAccuracy,
			pct(r.Result.MFU), r.Result.Memory.Total)
	}
	return tw.Flush()
}

// measureText writes a rank's measure: GPU-hours, or energy in J as kWh/MWh/GWh.
func measureText(r job.Rank, v float64) string {
	if r == job.RankGPUHours {
		return units.Count(v) + " GPU-h"
	}
	kwh := v / 3.6e6 // 1 kWh = 3.6 MJ (SI)
	switch {
	case kwh >= 1e6:
		return fmt.Sprintf("%.3g GWh", kwh/1e6)
	case kwh >= 1e3:
		return fmt.Sprintf("%.3g MWh", kwh/1e3)
	}
	return fmt.Sprintf("%.3g kWh", kwh)
}

// writeRowsCSV writes reports as rows of the column specification, after lead columns.
func writeRowsCSV(w io.Writer, lead []string, reps []*job.Report, leadOf func(i int) []string) error {
	if len(reps) == 0 {
		return nil
	}
	cols := job.Columns(reps[0].Workload)
	var head []rows.Column
	for _, l := range lead {
		head = append(head, rows.Column{Name: l, Kind: rows.Text})
	}
	rw, err := rows.NewCSV(w, append(head, job.RowColumns(cols)...))
	if err != nil {
		return err
	}
	for i, r := range reps {
		var row []job.Cell
		for _, l := range leadOf(i) {
			row = append(row, job.Cell{Kind: rows.Text, Text: l})
		}
		if err := rw.Write(append(row, job.Row(r, cols)...)); err != nil {
			return err
		}
	}
	return rw.Close()
}
