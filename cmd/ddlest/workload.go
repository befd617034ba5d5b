package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gonum.org/v1/plot/vg"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/plots"
)

// runFlags are the options every non-LLM workload command shares.
type runFlags struct {
	profile              string
	traceBatch, traceTP  int
	hw                   hwFlags
	epochs, samples      float64
	precision, optimizer string
	network              netFlags
	cluster              string
	plot                 string
	format               format
}

func addRunFlags(cmd *cobra.Command, f *runFlags, precision, optimizer string) {
	fs := cmd.Flags()
	fs.StringVar(&f.precision, "precision", precision, "training precision: fp16, bf16 (mixed), fp32, tf32 (fp32 with TF32 tensor cores)")
	fs.StringVar(&f.optimizer, "optimizer", optimizer, "optimizer: adam or sgd (with momentum)")
	fs.Float64Var(&f.epochs, "epochs", 0, "passes over the training set for time to accuracy (default: the workload's, see the output)")
	fs.Float64Var(&f.samples, "samples", 0, "training-set size in samples (default: the workload's dataset)")
	fs.StringVar(&f.cluster, "cluster", job.DefaultCluster, "cluster preset (see `ddlest clusters`): GPU, nodes and network; --gpu alone picks the GPU's own cluster, --net alone its paper's system")
	addHWFlags(fs, &f.hw, "a100-80gb", true)
	addProfileFlags(fs, &f.profile, &f.traceBatch, &f.traceTP)
	addNetFlags(cmd, &f.network, "")
	fs.StringVar(&f.plot, "plot", "", "also draw the iteration breakdown to this image (.png, .svg or .pdf)")
	addFormatFlag(fs, &f.format)
	_ = cmd.RegisterFlagCompletionFunc("format", completeFormats)
	_ = cmd.RegisterFlagCompletionFunc("profile", completeProfiles)
}

func (f *runFlags) toRun(cmd *cobra.Command) (job.RunOptions, partition.Precision, partition.Optimizer, error) {
	var r job.RunOptions
	p, err := partition.ParsePrecision(f.precision)
	if err != nil {
		return r, 0, 0, err
	}
	o, err := partition.ParseOptimizer(f.optimizer)
	if err != nil {
		return r, 0, 0, err
	}
	for _, v := range []struct {
		flag string
		val  float64
	}{{"epochs", f.epochs}, {"samples", f.samples}} {
		if cmd.Flags().Changed(v.flag) && !(v.val > 0 && v.val < math.Inf(1)) {
			return r, 0, 0, errs.Usage("--%s %g must be > 0", v.flag, v.val)
		}
	}
	c, err := job.LookupCluster(pickCluster(cmd.Flags(), f.cluster))
	if err != nil {
		return r, 0, 0, errs.Usage("--cluster: %v", err)
	}
	if cmd.Flags().Changed("gpu") {
		c.GPU = f.hw.gpu
	}
	c.Efficiency = f.hw.eff
	if err := f.network.applyTo(&c.Network); err != nil {
		return r, 0, 0, err
	}
	if err := c.Validate(); err != nil {
		return r, 0, 0, err
	}
	r = job.RunOptions{GPU: c.GPU, Efficiency: c.Efficiency, Cluster: &c,
		Profile: f.profile, TraceBatch: f.traceBatch, TraceTP: f.traceTP, Epochs: f.epochs, Samples: f.samples}
	return r, p, o, nil
}

// pickCluster is the cluster preset a command runs on: --cluster when given; else --gpu alone
// picks the GPU's own cluster and --net alone the system of its paper (ramp → ramp-65536); else
// the flag's default.
func pickCluster(fs *pflag.FlagSet, flagValue string) string {
	switch {
	case fs.Changed("cluster"):
	case fs.Changed("gpu"):
		if name, ok := job.ClusterForGPU(fs.Lookup("gpu").Value.String()); ok {
			return name
		}
	case fs.Changed("net") && !fs.Changed("net-preset"):
		if name, ok := job.ClusterForNetwork(fs.Lookup("net").Value.String()); ok {
			return name
		}
	}
	return flagValue
}

// emit draws the optional plot (first, so a bad path leaves no output) and renders the report.
func (f *runFlags) emit(w io.Writer, rep *job.Report) error {
	return emitReport(rep, f.format, f.plot, w)
}

// emitReport draws the optional plot (first, so a bad path leaves no output) and renders a
// workload report.
func emitReport(rep *job.Report, f format, plot string, w io.Writer) error {
	if plot != "" {
		title := fmt.Sprintf("%s, %d GPUs, %s", rep.Model, rep.Plan.Layout.GPUs, rep.Network)
		p, err := plots.Breakdown(title, []plots.Bar{plots.BreakdownBar(rep.Model, rep.Result)})
		if err != nil {
			return err
		}
		if err := plots.Save(p, plot, 5*vg.Inch, 4*vg.Inch); err != nil {
			return err
		}
	}
	return writeReport(w, rep, f)
}

type workloadDoc struct {
	Workload string            `json:"workload"`
	Model    workloadModelDoc  `json:"model"`
	Training workloadTrainDoc  `json:"training"`
	Parallel partition.Layout  `json:"parallel"`
	Details  map[string]string `json:"details,omitempty"`
	resultDoc
}

type workloadModelDoc struct {
	Name   string  `json:"name"`
	Params float64 `json:"params"`
}

type workloadTrainDoc struct {
	GlobalBatch  int     `json:"global_batch"`
	MicroBatch   int     `json:"micro_batch"`
	MicroBatches int     `json:"micro_batches"`
	Steps        float64 `json:"steps"`
	Dataset      string  `json:"dataset"`
	Samples      float64 `json:"samples"`
	Epochs       float64 `json:"epochs"`
}

func writeReport(w io.Writer, r *job.Report, f format) error {
	lay := r.Plan.Layout
	d := workloadDoc{Workload: r.Workload, Model: workloadModelDoc{Name: r.Model, Params: r.Params},
		Training: workloadTrainDoc{GlobalBatch: lay.GlobalBatch, MicroBatch: lay.MicroBatch, MicroBatches: lay.MicroBatches,
			Steps: r.Steps, Dataset: r.Dataset, Samples: r.Samples, Epochs: r.Epochs},
		Parallel:  lay,
		resultDoc: newResultDoc(r.Result, r.GPU.Name, r.Efficiency, r.Profile, r.Network, r.NetConfig),
	}
	switch f {
	case formatJSON:
		return writeJSON(w, withJob(r, d))
	case formatCSV:
		it := d.Iteration
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"workload", "model", "params", "gpus", "global_batch", "steps", "gpu", "network", "compute_s",
			"exposed_comm_s", "bubble_s", "total_s", "comm_fraction", "time_to_accuracy_s", "samples_per_s", "mfu", "memory_total_bytes"})
		_ = cw.Write([]string{d.Workload, d.Model.Name, ftoa(d.Model.Params), itoa(lay.GPUs), itoa(lay.GlobalBatch), ftoa(r.Steps),
			d.Hardware.GPU, d.Network.Name, ftoa(float64(it.Compute)), ftoa(float64(it.ExposedComm)), ftoa(float64(it.Bubble)),
			ftoa(float64(it.Total)), ftoa(it.CommFraction), ftoa(d.TimeToAccuracyS), ftoa(d.Throughput.SamplesPerS),
			ftoa(d.Throughput.MFU), ftoa(float64(d.Memory.Total))})
		cw.Flush()
		return cw.Error()
	}
	b := &strings.Builder{}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	fmt.Fprintf(b, "%s: %s\n\n", r.Workload, r.Model)
	row("model", fmt.Sprintf("%s parameters", units.Count(r.Params)))
	for _, n := range r.Notes {
		row("", n)
	}
	row("training", fmt.Sprintf("global batch %d = %d GPUs × %d micro-batches of %d; %s steps = %s epochs × %s samples (%s)",
		lay.GlobalBatch, lay.DP, lay.MicroBatches, lay.MicroBatch, units.Count(r.Steps), units.Count(r.Epochs), units.Count(r.Samples), r.Dataset))
	row("parallelism", fmt.Sprintf("%d GPUs = DP %d × model-parallel %d × PP %d", lay.GPUs, lay.DP, lay.TP, lay.PP))
	if r.Cluster != nil {
		row("cluster", describeCluster(*r.Cluster))
	}
	row("gpu", fmt.Sprintf("%s: %s", r.GPU.Name, r.GPU.Description))
	row("profile", r.Profile)
	row("network", r.Network+" "+changedParams(r.Network, r.NetConfig))
	fmt.Fprintln(tw)
	if err := writeResultTable(b, tw, r.Result); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// addProfileFlags registers --profile and the traced-configuration flags.
func addProfileFlags(fs *pflag.FlagSet, profile *string, batch, tp *int) {
	fs.StringVar(profile, "profile", "roofline", "compute profile: roofline, published (the HammingMesh A100 times shipped with some workloads), or a trace FILE.parquet from `ddlest trace import`")
	fs.IntVar(batch, "trace-batch", 0, "samples (sequences) per micro-batch in the profiled run, when not the plan's")
	fs.IntVar(tp, "trace-tp", 0, "tensor-parallel (spatial) degree of the profiled run, when not the plan's")
}

func completeProfiles(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"roofline", "published", "*.parquet"}, cobra.ShellCompDirectiveDefault
}
