package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/internal/atomicfile"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/rows"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/plots"
)

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
		Args: positional(0, 1),
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
	plot    *plotFlags
}

func (o *sweepFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringArrayVar(&o.grids, "grid", nil, "swept key and values, key=v1,v2,… (repeatable; keys as in --set)")
	fs.IntVar(&o.workers, "workers", 0, "points run at once (0: every core)")
	fs.StringVar(&o.out, "out", "", "write the rows to this file, .csv or .parquet (default: CSV on standard output)")
	o.plot = addPlotFlags(cmd, "iteration time against the last --grid key, one line per value of the others,")
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
	if err := o.plot.check(); err != nil {
		return err
	}
	if err := base.Validate(); err != nil {
		return err
	}
	if err := g.Check(base); err != nil { // before the header goes out
		if jf != nil {
			return jf.flagNames(err)
		}
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
	var points []plots.GridPoint
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
		sum, err = job.Sweep(ctx, base, g, job.SweepOptions{Workers: o.workers, Progress: progress,
			Reason: func(err error) string { return oneLine(keys.text(err.Error())) }}, func(p *job.Point) error {
			if o.plot.on() {
				y := math.NaN()
				if p.Report != nil {
					y = float64(p.Report.Result.Iteration.Total)
				}
				points = append(points, plots.GridPoint{Values: slices.Clone(p.Values), Y: y})
			}
			row = row[:0]
			for _, v := range p.Values {
				row = append(row, job.Cell{Kind: rows.Text, Text: v})
			}
			row = append(row, job.Cell{Kind: rows.Text, Text: p.Status.String()})
			if p.Report == nil {
				row = append(row, job.Cell{Kind: rows.Text, Text: p.Reason})
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
	if o.plot.on() {
		if sum.OK == 0 {
			return errs.Infeasible("", "sweep --plot: no point of the grid ran; nothing to draw")
		}
		fig, err := plots.Grid(fmt.Sprintf("sweep of %s: %d of %d points ran", base.Workload, sum.OK, sum.Points),
			g.Keys(), points, "time per iteration", true)
		if err != nil {
			return err
		}
		return o.plot.save(fig)
	}
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
