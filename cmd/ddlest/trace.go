package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/internal/atomicfile"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/plots"
	"github.com/ddlest/ddlest/traces"
)

func newTraceCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Import profiler traces into ddlest's parquet format, summarise, export and calibrate against network models",
		Long: `Profiled traces give measured compute and communication. ddlest imports PyTorch profiler output
(Kineto Chrome-trace JSON, or the legacy autograd-profiler JSON array; plain or gzip), one file
per rank, into one parquet file (schema: see 'go doc ./traces'). Workload commands take that file
as --profile FILE.parquet.`,
		Args: cobra.ArbitraryArgs,
		RunE: needs("subcommand"),
	}
	cmd.AddCommand(newTraceImportCommand(), newTraceShowCommand(), newTraceExportCommand(), newTraceCollectivesCommand(), newTraceFitCommand())
	return cmd
}

func newTraceImportCommand() *cobra.Command {
	var out string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "import TRACE.json[.gz]... -o OUT.parquet",
		Short: "Import PyTorch profiler traces (one per rank) into one parquet trace",
		Example: `  ddlest trace import rank0.json.gz rank1.json.gz -o job.parquet
  ddlest trace import trace.json -o trace.parquet && ddlest trace show trace.parquet`,
		Args: positional(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("trace import: give the output file with -o OUT.parquet")
			}
			if !strings.HasSuffix(out, ".parquet") {
				return usagef("-o %q: the output must end in .parquet", out)
			}
			if err := atomicfile.NotAnInput("-o", out, args...); err != nil {
				return err
			}
			opt := traces.ImportOptions{}
			if !quiet {
				opt.Progress = progressBar(cmd.ErrOrStderr(), args)
			}
			sum, err := traces.Import(args, out, opt)
			if err != nil {
				return err
			}
			cats := make([]string, 0, len(sum.ByCategory))
			for _, c := range traces.Categories {
				if n := sum.ByCategory[c]; n > 0 {
					cats = append(cats, fmt.Sprintf("%s %d", c, n))
				}
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d events of %d rank(s) (%s)\n", out, sum.Rows, len(sum.Ranks), strings.Join(cats, ", "))
			if err != nil || len(sum.Skipped) == 0 {
				return err
			}
			skipped := make([]string, 0, len(sum.Skipped))
			for c, n := range sum.Skipped {
				skipped = append(skipped, fmt.Sprintf("%s %d", orDash(c), n))
			}
			slices.Sort(skipped)
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "skipped complete events of categories ddlest does not model: %s\n", strings.Join(skipped, ", "))
			return err
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output parquet file (written atomically)")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "no progress bar")
	return cmd
}

// progressBar draws a progress line on stderr for inputs over 32 MB when stderr is a terminal.
func progressBar(w io.Writer, files []string) func(string, int64, int64) {
	if terminal(w) == nil {
		return nil
	}
	last := map[string]int64{}
	return func(file string, read, size int64) {
		if size < 32<<20 {
			return
		}
		pct := read * 100 / size
		if pct == last[file] && read < size {
			return
		}
		last[file] = pct
		bar := strings.Repeat("#", int(pct/4)) + strings.Repeat(".", 25-int(pct/4))
		fmt.Fprintf(w, "\r%s [%s] %3d%%", filepath.Base(file), bar, pct)
		if read >= size {
			fmt.Fprintln(w)
		}
	}
}

// terminal is w when it is a terminal, else nil.
func terminal(w io.Writer) *os.File {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return f
}

func newTraceShowCommand() *cobra.Command {
	var top int
	var f format
	var stepsFlag string
	var pf *plotFlags
	cmd := &cobra.Command{
		Use:     "show FILE.parquet",
		Short:   "Per rank: step time, compute vs communication vs idle, top kernels, collectives with bus bandwidth",
		Example: `  ddlest trace show job.parquet --top 5`,
		Args:    positional(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if top < 1 {
				return usagef("--top %d must be ≥ 1", top)
			}
			sel, err := traces.ParseSteps(stepsFlag)
			if err != nil {
				return err
			}
			if err := pf.check(); err != nil {
				return err
			}
			tf, ranks, err := summarizeSteps(args[0], sel)
			if err != nil {
				return err
			}
			defer tf.Close()
			if pf.on() {
				fig, err := plots.TraceRanks(filepath.Base(args[0]), ranks)
				if err != nil {
					return err
				}
				if err := pf.save(fig); err != nil {
					return err
				}
			}
			return writeTraceShow(cmd.OutOrStdout(), tf, ranks, top, f)
		},
	}
	pf = addPlotFlags(cmd, "each rank's GPU time breakdown")
	cmd.Flags().IntVar(&top, "top", 10, "kernels to list per rank")
	cmd.Flags().StringVar(&stepsFlag, "steps", "complete", "profiler steps to break down: complete (every step but the last, which the profiler may cut short: HTA's default), all (the whole trace), N or N:M (ProfilerStep#N to #M)")
	addFormatFlag(cmd, &f)
	return cmd
}

type traceShowDoc struct {
	File     string            `json:"file"`
	Metadata map[string]string `json:"metadata"`
	Ranks    []rankDoc         `json:"ranks"`
}

type rankDoc struct {
	Rank     int32   `json:"rank"`
	Events   int64   `json:"events"`
	Steps    int     `json:"steps"`
	Selected int     `json:"steps_selected"`
	StepS    float64 `json:"step_s"`
	gpuTimeDoc
	PerStep     []traceStepDoc     `json:"per_step,omitempty"`
	PhaseS      map[string]float64 `json:"compute_by_phase_s"`
	LayerS      map[int32]float64  `json:"compute_by_layer_s,omitempty"`
	Kernels     []kernelDoc        `json:"top_kernels"`
	Collectives []traceCollDoc     `json:"collectives"`
}

// gpuTimeDoc is a GPU time breakdown (HTA's temporal breakdown) of a rank or a step.
type gpuTimeDoc struct {
	WindowS  float64 `json:"gpu_window_s"`
	BusyS    float64 `json:"gpu_busy_s"`
	ComputeS float64 `json:"compute_s"`
	CommS    float64 `json:"communication_s"`
	MemoryS  float64 `json:"memory_s"`
	OverlapS float64 `json:"overlap_s"`
	IdleS    float64 `json:"idle_s"`
}

type traceStepDoc struct {
	Step int `json:"step"`
	gpuTimeDoc
}

func gpuTime(window, busy, compute, comm, memory, overlap, idle int64) gpuTimeDoc {
	return gpuTimeDoc{WindowS: secs(window), BusyS: secs(busy), ComputeS: secs(compute), CommS: secs(comm),
		MemoryS: secs(memory), OverlapS: secs(overlap), IdleS: secs(idle)}
}

type kernelDoc struct {
	Name   string  `json:"name"`
	Count  int64   `json:"count"`
	TotalS float64 `json:"total_s"`
}

type traceCollDoc struct {
	Collective string  `json:"collective"`
	Bytes      int64   `json:"bytes"`
	Group      int32   `json:"group"`
	Count      int64   `json:"count"`
	MeanS      float64 `json:"mean_s"`
	AlgBW      float64 `json:"algbw_bytes_per_s"`
	BusBW      float64 `json:"busbw_bytes_per_s"`
}

func secs(ns int64) float64 { return float64(units.Ns(float64(ns))) }

func showDoc(tf *traces.File, ranks []traces.RankSummary, top int) traceShowDoc {
	d := traceShowDoc{File: tf.Path, Metadata: tf.Meta}
	delete(d.Metadata, traces.MetaDeviceProps) // long JSON; in the file's footer
	for _, r := range ranks {
		rd := rankDoc{Rank: r.Rank, Events: r.Events, Steps: r.Steps, Selected: r.Selected, StepS: secs(r.StepNs),
			gpuTimeDoc: gpuTime(r.WindowNs, r.BusyNs, r.ComputeNs, r.CommNs, r.MemoryNs, r.OverlapNs, r.IdleNs), PhaseS: map[string]float64{}}
		for _, st := range r.PerStep {
			rd.PerStep = append(rd.PerStep, traceStepDoc{st.Step, gpuTime(st.WindowNs, st.BusyNs, st.ComputeNs, st.CommNs, st.MemoryNs, st.OverlapNs, st.IdleNs)})
		}
		for p, ns := range r.ByPhase {
			rd.PhaseS[p] = secs(ns)
		}
		if len(r.ByLayer) > 0 {
			rd.LayerS = map[int32]float64{}
			for l, ns := range r.ByLayer {
				rd.LayerS[l] = secs(ns)
			}
		}
		for i, k := range r.Kernels {
			if i == top {
				break
			}
			rd.Kernels = append(rd.Kernels, kernelDoc{Name: k.Name, Count: k.Count, TotalS: secs(k.TotalNs)})
		}
		for _, c := range r.Collectives {
			mean := secs(c.TotalNs) / float64(c.Count)
			cd := traceCollDoc{Collective: c.Collective, Bytes: c.Bytes, Group: c.GroupSize, Count: c.Count, MeanS: mean}
			if mean > 0 {
				cd.AlgBW = float64(c.Bytes) / mean
				cd.BusBW = cd.AlgBW * job.TraceBusFactor(c.Collective, int(c.GroupSize))
			}
			rd.Collectives = append(rd.Collectives, cd)
		}
		d.Ranks = append(d.Ranks, rd)
	}
	return d
}

func writeTraceShow(w io.Writer, tf *traces.File, ranks []traces.RankSummary, top int, f format) error {
	d := showDoc(tf, ranks, top)
	switch f {
	case formatJSON:
		return writeJSON(w, d)
	case formatCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"rank", "events", "steps", "steps_selected", "step_s", "gpu_window_s", "gpu_busy_s", "compute_s", "communication_s", "memory_s", "overlap_s", "idle_s"})
		for _, r := range d.Ranks {
			_ = cw.Write([]string{fmt.Sprint(r.Rank), fmt.Sprint(r.Events), fmt.Sprint(r.Steps), fmt.Sprint(r.Selected), ftoa(r.StepS), ftoa(r.WindowS),
				ftoa(r.BusyS), ftoa(r.ComputeS), ftoa(r.CommS), ftoa(r.MemoryS), ftoa(r.OverlapS), ftoa(r.IdleS)})
		}
		cw.Flush()
		return cw.Error()
	}
	b := &strings.Builder{}
	m := tf.Meta
	fmt.Fprintf(b, "%s: %d events, %s, device %s, world size %s, ranks %s (from %s)\n", filepath.Base(tf.Path), tf.Rows,
		m[traces.MetaSourceFormat], orDash(m[traces.MetaDeviceName]), orDash(m[traces.MetaWorldSize]), m[traces.MetaRank], m[traces.MetaOriginalFile])
	pct := func(x, of float64) string {
		if of <= 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f%%", 100*x/of)
	}
	for _, r := range d.Ranks {
		fmt.Fprintf(b, "\nrank %d: %d events", r.Rank, r.Events)
		switch {
		case r.Selected > 0:
			fmt.Fprintf(b, ", %d of %d profiler steps, %v each on the host", r.Selected, r.Steps, units.Seconds(r.StepS))
		case r.Steps > 0:
			fmt.Fprintf(b, ", %d profiler steps of %v (the whole trace)", r.Steps, units.Seconds(r.StepS))
		}
		fmt.Fprintln(b)
		if r.WindowS == 0 {
			fmt.Fprintln(b, "  no GPU events: a CPU-only trace (its ranges still mark phases for `ddlest trace export`)")
			continue
		}
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  GPU window\t%v\n", units.Seconds(r.WindowS))
		fmt.Fprintf(tw, "  compute\t%v\t%s\n", units.Seconds(r.ComputeS), pct(r.ComputeS, r.WindowS))
		fmt.Fprintf(tw, "  communication\t%v\t%s\t(overlapped with compute %v)\n", units.Seconds(r.CommS), pct(r.CommS, r.WindowS), units.Seconds(r.OverlapS))
		fmt.Fprintf(tw, "  memory\t%v\t%s\t(copies and sets)\n", units.Seconds(r.MemoryS), pct(r.MemoryS, r.WindowS))
		fmt.Fprintf(tw, "  idle\t%v\t%s\n", units.Seconds(r.IdleS), pct(r.IdleS, r.WindowS))
		phases := make([]string, 0, len(r.PhaseS))
		for _, p := range traces.Phases {
			if s, ok := r.PhaseS[p]; ok {
				phases = append(phases, fmt.Sprintf("%s %v", p, units.Seconds(s)))
			}
		}
		fmt.Fprintf(tw, "  compute by phase\t%s\n", strings.Join(phases, ", "))
		if len(r.LayerS) > 0 {
			layers := make([]int32, 0, len(r.LayerS))
			for l := range r.LayerS {
				layers = append(layers, l)
			}
			slices.Sort(layers)
			var parts []string
			for _, l := range layers {
				parts = append(parts, fmt.Sprintf("%d: %v", l, units.Seconds(r.LayerS[l])))
			}
			fmt.Fprintf(tw, "  compute by layer\t%s\n", strings.Join(parts, ", "))
		}
		tw.Flush()
		if len(r.Kernels) > 0 {
			fmt.Fprintf(b, "  top kernels\n")
			kt := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
			for _, k := range r.Kernels {
				fmt.Fprintf(kt, "    %v\t×%d\t%s\n", units.Seconds(k.TotalS), k.Count, shorten(k.Name, 90))
			}
			kt.Flush()
		}
		if len(r.Collectives) > 0 {
			fmt.Fprintf(b, "  collectives\n")
			ct := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(ct, "    collective\tsize\tgroup\tcount\tmean\tbus bandwidth\t")
			for _, c := range r.Collectives {
				fmt.Fprintf(ct, "    %s\t%v\t%d\t%d\t%v\t%s\t\n", c.Collective, units.Bytes(c.Bytes), c.Group, c.Count, units.Seconds(c.MeanS), gbps(c.BusBW))
			}
			ct.Flush()
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func gbps(bytesPerS float64) string {
	if bytesPerS <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.3g GB/s", bytesPerS/1e9)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func newTraceExportCommand() *cobra.Command {
	var out, f string
	cmd := &cobra.Command{
		Use:     "export FILE.parquet [--format csv] [-o OUT.csv]",
		Short:   "Export a trace's rows as CSV (to stdout or a file)",
		Example: `  ddlest trace export job.parquet -o job.csv`,
		Args:    positional(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f != "csv" {
				return usagef("--format %q is not valid for export; valid: csv", f)
			}
			if err := atomicfile.NotAnInput("-o", out, args[0]); err != nil {
				return err
			}
			tf, err := traces.Open(args[0])
			if err != nil {
				return err
			}
			defer tf.Close()
			write := func(w io.Writer) error { return exportCSV(w, tf) }
			if out == "" {
				return write(cmd.OutOrStdout())
			}
			return atomicfile.Write(out, write)
		},
	}
	cmd.Flags().StringVar(&f, "format", "csv", "output format: csv")
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default: stdout)")
	return cmd
}

var exportHeader = []string{"rank", "device", "stream", "name", "category", "start_ns", "dur_ns", "phase", "layer",
	"correlation", "shapes", "dtype", "collective", "bytes", "group_size"}

func exportCSV(w io.Writer, tf *traces.File) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(exportHeader); err != nil {
		return err
	}
	i64 := func(v int64) string { return fmt.Sprint(v) }
	err := tf.Scan(func(batch []traces.Event) error {
		for _, e := range batch {
			if err := cw.Write([]string{i64(int64(e.Rank)), i64(int64(e.Device)), i64(e.Stream), e.Name, e.Category, i64(e.StartNs),
				i64(e.DurNs), e.Phase, i64(int64(e.Layer)), i64(e.Correlation), e.Shapes, e.DType, e.Collective, i64(e.Bytes),
				i64(int64(e.GroupSize))}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

func newTraceCollectivesCommand() *cobra.Command {
	var nf netFlags
	var f format
	var cluster string
	cmd := &cobra.Command{
		Use:   "collectives FILE.parquet --net MODEL | --cluster NAME",
		Short: "Compare each measured collective with a network model's prediction for the same size and group",
		Example: `  ddlest trace collectives job.parquet --net alphabeta --net-bw 200GB/s --net-latency 5us
  ddlest trace collectives job.parquet --net superpod --format csv
  ddlest trace collectives job.parquet --cluster dgx-a100`,
		Args: positional(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			choice, err := nf.choice()
			if err != nil {
				return err
			}
			tf, ranks, err := summarize(args[0])
			if err != nil {
				return err
			}
			defer tf.Close()
			c, err := clusterFor(cluster, &nf)
			if err != nil {
				return err
			}
			rows, netName, err := job.CalibrateCollectives(ranks, c, choice)
			if err != nil {
				return err
			}
			return writeCalibration(cmd.OutOrStdout(), tf.Path, netName, rows, f)
		},
	}
	addNetFlags(cmd, &nf, "alphabeta")
	addClusterFlag(cmd, &cluster)
	addFormatFlag(cmd, &f)
	return cmd
}

func newTraceFitCommand() *cobra.Command {
	var f format
	var nf netFlags
	var cluster string
	cmd := &cobra.Command{
		Use:   "fit FILE.parquet [--net alphabeta|superpod | --cluster NAME]",
		Short: "Fit a network model's per-tier latency and bandwidth to a trace's measured collectives, with the fit's error",
		Long: `Fit a network's per-step latency α and per-GPU bandwidth, tier by tier, to the fastest call of
every collective the trace sized (the call that waited least for its peers), minimising the
relative errors, then price every collective with the fitted parameters. alphabeta has one tier;
superpod (the network of the DGX cluster presets, --cluster dgx-a100|dgx-h100|…) has NVLink inside
a node and InfiniBand across nodes: calls within a node fit NVLink, calls spanning nodes fit
InfiniBand given the NVLink fit (priced with the network's own hierarchical ring, nccl=off). A tier
no call exercises keeps its preset value. The parameters print as the --net-param flags that
reproduce them.`,
		Example: `  ddlest trace fit job.parquet --net alphabeta
  ddlest trace fit job.parquet --cluster dgx-a100 --format json
  ddlest collective --net alphabeta --net-param latency_ns=… --net-param bandwidth_gbit_per_s=… --op all-reduce --size 64MB --gpus 2`,
		Args: positional(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cluster == "" && nf.net == "" && nf.preset == "" {
				nf.net = "alphabeta"
			}
			choice, err := nf.choice()
			if err != nil {
				return err
			}
			c, err := clusterFor(cluster, &nf)
			if err != nil {
				return err
			}
			tf, ranks, err := summarize(args[0])
			if err != nil {
				return err
			}
			defer tf.Close()
			fit, err := job.CollectiveFits(ranks, c, choice)
			if err != nil {
				return err
			}
			return writeFit(cmd.OutOrStdout(), tf.Path, fit, f)
		},
	}
	addNetFlags(cmd, &nf, "")
	addClusterFlag(cmd, &cluster)
	addFormatFlag(cmd, &f)
	return cmd
}

// writeFit renders a fit: per tier α, bandwidth, rows used and MAPE, the flags that reproduce
// it, then every row priced with it (table, JSON); CSV lists the tiers and an "overall" row.
func writeFit(w io.Writer, path string, fit *job.CollectiveFit, f format) error {
	switch f {
	case formatJSON:
		return writeJSON(w, fit)
	case formatCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"tier", "constrained", "alpha_s", "bandwidth_bytes_per_s", "rows_used", "mape", "note"})
		for _, t := range fit.Tiers {
			mape := ""
			if t.Constrained {
				mape = ftoa(t.MAPE)
			}
			_ = cw.Write([]string{t.Name, fmt.Sprint(t.Constrained), ftoa(float64(t.Alpha)), ftoa(float64(t.Bandwidth)), fmt.Sprint(t.Calls), mape, t.Note})
		}
		_ = cw.Write([]string{"overall", "", "", "", fmt.Sprint(fit.Used), ftoa(fit.MAPE), strings.Join(fitFlags(fit), " ")})
		cw.Flush()
		return cw.Error()
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s: %s fitted to %d collectives; MAPE %.1f%% against the fastest calls\n", filepath.Base(path), fit.Network, fit.Used, 100*fit.MAPE)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  tier\tα\tbandwidth\trows\tMAPE\t")
	for _, t := range fit.Tiers {
		if !t.Constrained {
			fmt.Fprintf(tw, "  %s\t%v\t%v\t–\t–\t(%s)\n", t.Name, t.Alpha, t.Bandwidth, t.Note)
			continue
		}
		fmt.Fprintf(tw, "  %s\t%v\t%v (%.4g Gb/s)\t%d\t%.1f%%\t\n", t.Name, t.Alpha, t.Bandwidth, t.Bandwidth.Gbit(), t.Calls, 100*t.MAPE)
	}
	tw.Flush()
	fmt.Fprintf(b, "  %s\n\n", strings.Join(fitFlags(fit), " "))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return writeCalibration(w, path, fit.Network+" (fitted)", fit.Rows, f)
}

// fitFlags are the command-line flags that reproduce a fit.
func fitFlags(fit *job.CollectiveFit) []string {
	flags := []string{"--net " + fit.Network}
	if fit.Cluster != "" {
		flags = []string{"--cluster " + fit.Cluster}
	}
	for _, p := range fit.Params {
		flags = append(flags, "--net-param "+p)
	}
	return flags
}

// writeCalibration renders the measured collectives against a network: measured, wait and
// transfer, predicted and errors; a cell with no value is "—" in the table, null in JSON, empty
// in CSV, and the row's reason says why.
func writeCalibration(w io.Writer, file, net string, rows []job.CollectiveCalibration, f format) error {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Rank < rows[j].Rank })
	switch f {
	case formatJSON:
		return writeJSON(w, map[string]any{"file": file, "network": net, "collectives": rows})
	case formatCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"rank", "collective", "bytes", "group", "count", "measured_s", "fastest_s", "wait_s", "transfer_s", "matched", "ranks",
			"predicted_s", "error", "error_fastest", "error_transfer", "algorithm", "reason"})
		for _, r := range rows {
			_ = cw.Write([]string{fmt.Sprint(r.Rank), r.Collective, fmt.Sprint(int64(r.Bytes)), fmt.Sprint(r.Group), fmt.Sprint(r.Count),
				ftoa(float64(r.Measured)), ftoa(float64(r.Fastest)), optCell(r.Wait, ""), optCell(r.Transfer, ""), fmt.Sprint(r.Matched), fmt.Sprint(r.Ranks),
				optCell(r.Predicted, ""), optCell(r.Error, ""), optCell(r.ErrorFastest, ""), optCell(r.ErrorTransfer, ""), r.Algorithm, r.Reason})
		}
		cw.Flush()
		return cw.Error()
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s: measured collectives against %s\n\n", filepath.Base(file), net)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tcollective\tsize\tgroup\tcount\tmeasured\twait\ttransfer\tpredicted\terror\tvs transfer\talgorithm\t  reason")
	pct := func(e *float64) string {
		if e == nil {
			return "—"
		}
		return fmt.Sprintf("%+.0f%%", 100**e)
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s\t%v\t%d\t%d\t%v\t%s\t%s\t%s\t%s\t%s\t%s\t  %s\n", r.Rank, r.Collective, r.Bytes, r.Group, r.Count, r.Measured,
			optCell(r.Wait, "—"), optCell(r.Transfer, "—"), optCell(r.Predicted, "—"), pct(r.Error), pct(r.ErrorTransfer), r.Algorithm, r.Reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(b, "\nA rank's collective kernel runs from its launch until every peer has joined: wait is the time before the")
	fmt.Fprintln(b, "last rank of the trace started the same call, transfer the time after it (what the network prices).")
	_, err := io.WriteString(w, b.String())
	return err
}

// optCell is a value that may be absent: seconds as the unit prints them in a table (SI seconds
// in CSV, empty=""), a float as ftoa; none when absent.
func optCell[T units.Seconds | float64](v *T, none string) string {
	switch {
	case v == nil:
		return none
	case none == "":
		return ftoa(float64(*v))
	}
	if s, ok := any(*v).(units.Seconds); ok {
		return s.String()
	}
	return ftoa(float64(*v))
}

// summarize opens a trace and summarises its ranks (the caller closes the file).
func summarize(path string) (*traces.File, []traces.RankSummary, error) {
	return summarizeSteps(path, traces.StepsAll)
}

func summarizeSteps(path string, sel traces.Steps) (*traces.File, []traces.RankSummary, error) {
	tf, err := traces.Open(path)
	if err != nil {
		return nil, nil, err
	}
	ranks, err := tf.SummarizeSteps(sel)
	if err != nil {
		tf.Close()
		return nil, nil, err
	}
	return tf, ranks, nil
}
