package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/ddlest/ddlest/internal/atomicfile"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/rows"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition/moe"
	"github.com/ddlest/ddlest/plots"
)

// jobWorkload is a command built on a job: the workload and the model preset it starts from.
type jobWorkload struct {
	use, workload, model, short string
	searchable                  bool // the workload has a layout search (job.Search)
}

// jobWorkloads are the workload commands that search, sweep and compare take.
var jobWorkloads = []jobWorkload{
	{"megatron", "megatron", "", "Megatron-LM transformer (target loss or explicit model)", true},
	{"gpt3", "megatron", "gpt3", "GPT-3 175B, the HammingMesh partitioning", true},
	{"moe", "megatron", "gpt3-moe", "GPT-3 with Mixture-of-Experts layers", true},
	{"dp", "dp", "resnet50", "data-parallel zoo model", false},
	{"resnet", "dp", "resnet152-hammingmesh", "ResNet-152, the HammingMesh job", false},
	{"cosmoflow", "cosmoflow", "", "CosmoFlow, the HammingMesh job", false},
	{"dlrm", "dlrm", "ramp-256", "DLRM", false},
}

// exampleModel is the model flag of a command's examples: the transformer command has no default
// model.
func exampleModel(w jobWorkload) string {
	if w.use == "megatron" {
		return " --model gpt3-175b"
	}
	return ""
}

// ---- search ----

func newSearchCommand() *cobra.Command {
	parent := &cobra.Command{
		Use:   "search",
		Short: "The fastest parallel layouts of a model on N GPUs of a cluster, and why the others lost",
		Long: `Enumerate every parallel layout of the job's model on --gpus GPUs — tensor, pipeline and data
parallelism (TP × PP × DP = GPUs), micro-batch, interleaved stages, activation recomputation,
sequence parallelism and, for MoE models, expert parallelism — drop those that do not fit in GPU
memory, price the others on the cluster's network and list the fastest, best first, with how
much slower each is than the best and where the difference lies (compute, pipeline bubble or
exposed communication). --format json is a list, best first, of the workload command's own
JSON document (job and report): each runs again with ddlest run.`,
		Args: noArgs,
	}
	for _, w := range jobWorkloads {
		if !w.searchable {
			continue
		}
		var top int
		var f format
		cmd := &cobra.Command{Use: w.use, Short: "search the layouts of " + w.short, Args: noArgs,
			Example: "  ddlest search " + w.use + exampleModel(w) + " --gpus 512"}
		cmd.Flags().SortFlags = false
		jf := addJobFlags(cmd, w.workload, w.model)
		cmd.Flags().IntVar(&top, "top", 5, "layouts to list, best first")
		addFormatFlag(cmd.Flags(), &f)
		cmd.RunE = func(cmd *cobra.Command, _ []string) error {
			if top < 1 {
				return usagef("--top %d must be ≥ 1", top)
			}
			j, err := jf.build()
			if err != nil {
				return err
			}
			res, err := job.Search(j, job.SearchOptions{Top: top})
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
	fmt.Fprintf(tw, "search\t%s parameters on %d GPUs: %s\n", units.Count(best.Params), s.GPUs, describeSearch(s))
	if best.Cluster != nil {
		fmt.Fprintf(tw, "cluster\t%s\n", describeCluster(*best.Cluster))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "rank\tGPUs = DP × TP × PP\tinterleave\tmicro-batch\trecompute\tseq-par\tEP\titeration\tvs best\tlost on\ttime to accuracy\tMFU\tmemory")
	bt := best.Result.Iteration
	for i, r := range res.Reports {
		c := r.Config
		it := r.Result.Iteration
		vs, lost := "—", "—"
		if i > 0 {
			vs = fmt.Sprintf("+%.1f%%", 100*float64(it.Total/bt.Total-1))
			lost = job.LostTo(it, bt)
		}
		sp := "off"
		if c.SeqParallel {
			sp = "on"
		}
		fmt.Fprintf(tw, "%d\t%d = %d × %d × %d\t%d\t%d\t%s\t%s\t%s\t%v\t%s\t%s\t%v\t%s\t%v\n", i+1, c.GPUs(), c.DP, c.TP, c.PP,
			c.Interleave, c.MicroBatch, c.Recompute, sp, epText(c.MoE), it.Total, vs, lost, r.Result.TimeToAccuracy,
			pct(r.Result.MFU), r.Result.Memory.Total)
	}
	return tw.Flush()
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

// ---- sweep ----

func newSweepCommand() *cobra.Command {
	o := &sweepFlags{}
	parent := &cobra.Command{
		Use:   "sweep FILE.yaml | sweep <workload> --grid key=v1,v2 …",
		Short: "Run a grid of jobs: one CSV or parquet row per point, infeasible points counted with their reason",
		Long: `Run every point of a grid over a job and write one row per point (CSV, or parquet with --out
F.parquet), in grid order (the first
key varies slowest): the swept values, the status (ok, infeasible, invalid), the reason for the
points that did not run, then the same columns for every point (ddlest run … --format csv).
The swept values' columns are named grid.KEY.
A point that does not fit or whose values do not combine is a row, not an error; a key that
does not exist or a value of the wrong type or unit stops the sweep before it starts. Points run
on every core (--workers); the rows are the same for any number of workers.

The sweep file holds the job (as ddlest run reads it) and the grid:

  job: {workload: megatron, model: gpt3-175b, execution: {gpus: 512}}
  grid:
    execution.tp: [1, 2, 4, 8]
    execution.pp: [1, 2, 4, 8, 16]`,
		Example: `  ddlest sweep sweep.yaml --out points.csv
  ddlest sweep megatron --model gpt3-175b --gpus 512 --grid tp=1,2,4,8 --grid pp=1,2,4,8,16
  ddlest sweep gpt3 --grid cluster.network.model=superpod,torus,ideal`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("sweep: give a sweep file (FILE.yaml) or a workload (%s) with --grid key=v1,v2", strings.Join(jobUses(), ", "))
			}
			var sf job.SweepFile
			data, err := os.ReadFile(args[0])
			if err != nil {
				return usagef("sweep: %v", err)
			}
			if err := params.Decode(data, args[0], &sf); err != nil {
				return err
			}
			g, err := o.grid()
			if err != nil {
				return err
			}
			return o.run(cmd, &sf.Job, append(sf.Grid, g...), nil)
		},
	}
	o.add(parent)
	for _, w := range jobWorkloads {
		sub := &sweepFlags{}
		cmd := &cobra.Command{Use: w.use, Short: "sweep " + w.short, Args: noArgs}
		cmd.Flags().SortFlags = false
		jf := addJobFlags(cmd, w.workload, w.model)
		sub.add(cmd)
		cmd.RunE = func(cmd *cobra.Command, _ []string) error {
			j, err := jf.build()
			if err != nil {
				return err
			}
			g, err := sub.grid()
			if err != nil {
				return err
			}
			if len(g) == 0 {
				return usagef("sweep %s: give at least one --grid key=v1,v2 (e.g. --grid tp=1,2,4,8)", w.use)
			}
			return sub.run(cmd, j, g, jf)
		}
		parent.AddCommand(cmd)
	}
	return parent
}

func jobUses() []string {
	var out []string
	for _, w := range jobWorkloads {
		out = append(out, w.use)
	}
	return out
}

type sweepFlags struct {
	grids   []string
	workers int
	out     string
}

func (o *sweepFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringArrayVar(&o.grids, "grid", nil, "swept key and values, key=v1,v2,… (repeatable; keys as in --set)")
	fs.IntVar(&o.workers, "workers", 0, "points run at once (0: every core)")
	fs.StringVar(&o.out, "out", "", "write the rows to this file, .csv or .parquet (default: CSV on standard output)")
}

func (o *sweepFlags) grid() (job.Grid, error) {
	var g job.Grid
	for _, s := range o.grids {
		a, err := job.ParseAxis(s)
		if err != nil {
			return nil, err
		}
		g = append(g, a)
	}
	return g, nil
}

func (o *sweepFlags) run(cmd *cobra.Command, base *job.Job, g job.Grid, jf *jobFlags) error {
	if o.workers < 0 {
		return usagef("--workers %d must be ≥ 0 (0: every core)", o.workers)
	}
	if ext := strings.ToLower(filepath.Ext(o.out)); o.out != "" && ext != ".csv" && ext != ".parquet" {
		return usagef("--out %s: the sweep writes CSV or parquet; name a .csv or .parquet file", o.out)
	}
	if err := base.Validate(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cols := job.Columns(base.Workload)
	stderr := cmd.ErrOrStderr()
	progress := sweepProgress(stderr)
	var sum job.SweepSummary
	head := make([]rows.Column, 0, len(g)+2+len(cols))
	for _, k := range g.Keys() {
		head = append(head, rows.Column{Name: "grid." + k, Kind: rows.Text}) // apart from the columns of the same name
	}
	head = append(head, rows.Column{Name: "status", Kind: rows.Text}, rows.Column{Name: "reason", Kind: rows.Text})
	head = append(head, job.RowColumns(cols)...)
	parquetOut := strings.EqualFold(filepath.Ext(o.out), ".parquet")
	keys := newKeyNamer(base) // reasons name the job's keys, as the grid does
	write := func(w io.Writer) error {
		var rw rows.Writer
		var err error
		if parquetOut {
			rw, err = rows.NewParquet(w, head)
		} else {
			rw, err = rows.NewCSV(w, head)
		}
		if err != nil {
			return err
		}
		row := make([]job.Cell, 0, len(head))
		sum, err = job.Sweep(ctx, base, g, job.SweepOptions{Workers: o.workers, Progress: progress}, func(p *job.Point) error {
			row = row[:0]
			for _, v := range p.Values {
				row = append(row, job.Cell{Kind: rows.Text, Text: v})
			}
			row = append(row, job.Cell{Kind: rows.Text, Text: p.Status.String()})
			if p.Report == nil {
				row = append(row, job.Cell{Kind: rows.Text, Text: oneLine(keys.rewrite(p.Err).Error())})
				for _, c := range cols {
					row = append(row, job.Cell{Kind: c.Kind, Null: true})
				}
			} else {
				row = append(row, job.Cell{Kind: rows.Text, Null: true})
				for _, c := range cols {
					row = append(row, c.Get(p.Report))
				}
			}
			return rw.Write(row)
		})
		if cerr := rw.Close(); err == nil {
			err = cerr
		}
		return err
	}
	var err error
	if o.out != "" {
		err = atomicfile.Write(o.out, write)
	} else {
		err = write(cmd.OutOrStdout())
	}
	if err != nil {
		if ctx.Err() != nil {
			if o.out != "" {
				return fmt.Errorf("sweep interrupted; nothing written to %s", o.out)
			}
			return fmt.Errorf("sweep interrupted")
		}
		if jf != nil {
			return jf.flagNames(err)
		}
		return err
	}
	fmt.Fprintf(stderr, "sweep: %d points: %d ok, %d infeasible, %d invalid\n", sum.Points, sum.OK, sum.Infeasible, sum.Invalid)
	return nil
}

// progressBar draws the sweep's progress on a terminal (nil elsewhere, and under CI).
func sweepProgress(w io.Writer) func(done, total int) {
	f := terminal(w)
	if f == nil || os.Getenv("CI") != "" {
		return nil
	}
	return func(done, total int) {
		const width = 40
		n := width * done / max(1, total)
		fmt.Fprintf(f, "\r[%s%s] %d/%d", strings.Repeat("#", n), strings.Repeat(" ", width-n), done, total)
		if done == total {
			fmt.Fprint(f, "\r\033[K")
		}
	}
}

// ---- compare ----

func newCompareCommand() *cobra.Command {
	parent := &cobra.Command{
		Use:   "compare",
		Short: "One job on several networks or clusters, side by side: iteration, time to accuracy, communication, speed-up",
		Long: `Run one job on each network model of --nets (on the job's cluster, each with its own default
parameters) or on each cluster preset of --clusters (the job's other flags apply to each), and
list iteration time, time to accuracy, exposed communication share and the speed-up over the
baseline (--baseline, default the first). The numbers are those of the single commands: each
entry of --format json is the workload command's own document.`,
		Args: noArgs,
	}
	for _, w := range jobWorkloads {
		var nets, clusters []string
		var baseline, plotPath string
		var f format
		cmd := &cobra.Command{Use: w.use, Short: "compare " + w.short + " across networks or clusters", Args: noArgs,
			Example: "  ddlest compare " + w.use + exampleModel(w) + " --nets superpod,torus,ideal"}
		cmd.Flags().SortFlags = false
		jf := addJobFlags(cmd, w.workload, w.model)
		cmd.Flags().StringSliceVar(&nets, "nets", nil, "network models to compare (ddlest nets), comma-separated")
		cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "cluster presets to compare (ddlest clusters), comma-separated")
		cmd.Flags().StringVar(&baseline, "baseline", "", "entry the speed-ups are relative to (default: the first)")
		cmd.Flags().StringVar(&plotPath, "plot", "", "also draw the iteration breakdowns side by side to this image (.png, .svg or .pdf)")
		addFormatFlag(cmd.Flags(), &f)
		cmd.RunE = func(cmd *cobra.Command, _ []string) error {
			entries, key := nets, "cluster.network.model"
			switch {
			case len(nets) > 0 && len(clusters) > 0:
				return usagef("compare: give --nets or --clusters, not both")
			case len(clusters) > 0:
				entries, key = clusters, "cluster"
			case len(nets) == 0:
				return usagef("compare: give --nets a,b,… (ddlest nets) or --clusters a,b,… (ddlest clusters)")
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
			if plotPath != "" {
				bars := make([]plots.Bar, len(reps))
				for i, r := range reps {
					bars[i] = plots.BreakdownBar(entries[i], r.Result)
				}
				p, err := plots.Breakdown(fmt.Sprintf("%s, %d GPUs", w.use, reps[0].Plan.Layout.GPUs), bars)
				if err != nil {
					return err
				}
				if err := plots.Save(p, plotPath, vg.Length(2+1.2*float64(len(bars)))*vg.Inch, 4*vg.Inch); err != nil {
					return err
				}
			}
			return renderCompare(cmd.OutOrStdout(), entries, reps, base, f)
		}
		parent.AddCommand(cmd)
	}
	return parent
}

// buildWith builds the job with one more flag value: the cluster preset (before the other flags,
// as --cluster) or the network model (after them).
func (f *jobFlags) buildWith(key, value string) (*job.Job, error) {
	if key == "cluster" {
		if err := f.fs.Set("cluster", value); err != nil {
			return nil, err
		}
		return f.build()
	}
	j, err := f.build()
	if err != nil {
		return nil, err
	}
	if err := j.Set(key, value); err != nil {
		return nil, errs.Usage("--nets %s: %v", value, err)
	}
	return j, nil
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
