package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/plots"
	"github.com/ddlest/ddlest/profile/roofline"
)

type collectiveFlags struct {
	ops, sizes, gpus, gpu, dtype string
	cluster, pattern             string
	group, stride, root          int
	seed                         uint64
	noReduce                     bool
	network                      netFlags
	format                       format
	plot                         *plotFlags
}

func newCollectiveCommand() *cobra.Command {
	f := &collectiveFlags{}
	cmd := &cobra.Command{
		Use:   "collective",
		Short: "Price MPI collectives on a network: completion time, head-to-head, head-to-tail and compute, bus bandwidth",
		Long: `Price collectives with the best strategy the network allows (or the one given by --strategy).
Sizes follow nccl-tests (the whole buffer: all-gather output, reduce-scatter input, all-to-all
per-rank send buffer). --op, --size and --gpus take comma-separated lists for sweeps.
--group N --stride S prices one group of N ranks S apart while every group of that shape in the
job runs the same collective (routed networks charge the links they share); the bottleneck
column names the resource that limits the slowest step.`,
		Example: `  ddlest collective --op all-reduce --size 1GB --gpus 65536 --net ramp
  ddlest collective --op all --size 1GB --gpus 65536 --net superpod
  ddlest collective --op all-reduce --size 1MB,100MB,10GB --gpus 16,256,4096,65536 --net superpod \
      --strategy ring --net-param oversubscription=1 --format csv
  ddlest collective --op all-reduce --size 100MB --gpus 384 --group 4 --stride 96 --net-preset torus-small --strategy ring
  ddlest collective --op all-reduce --size 1GB --gpus 8,64,1024 --cluster dgx-h100
  ddlest collective --op all-reduce --size 8B:8GiB:x2 --gpus 8 --cluster dgx-h100   # an nccl-tests sweep
  ddlest collective --net sipac --net-param r=8 --net-param levels=3 --node-tbps 2.048 --op all-reduce \
      --strategy sipco --size 100MB --gpus 512
  ddlest collective --net-preset sipac-512 --gpus 512 --pattern one-to-all --size 1MB`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.plot.check(); err != nil {
				return err
			}
			o, err := f.toOptions()
			if err != nil {
				return err
			}
			if o.Cluster, err = clusterFor(f.cluster, &f.network); err != nil {
				return err
			}
			if o.Cluster != nil && !cmd.Flags().Changed("gpu") {
				o.GPU = o.Cluster.GPU
			}
			rows, err := job.Collectives(o)
			if err != nil {
				return err
			}
			if f.plot.on() {
				pts := make([]plots.CollectivePoint, len(rows))
				for i, r := range rows {
					name := r.Op.String()
					if r.Pattern != "" {
						name = r.Pattern
					}
					pts[i] = plots.CollectivePoint{Name: name, Network: r.Network, GPUs: r.GPUs, Bytes: r.Bytes, Cost: r.Cost}
				}
				fig, err := plots.Collectives(pts)
				if err != nil {
					return err
				}
				if err := f.plot.save(fig); err != nil {
					return err
				}
			}
			return writeCollectives(cmd.OutOrStdout(), rows, f.format)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&f.ops, "op", "all-reduce", "collective(s): "+strings.Join(opNames(), ", ")+", or all")
	fs.StringVar(&f.sizes, "size", "1GB", "message size(s), e.g. 1GB, 1GiB, 10MB, 1e9, or an nccl-tests sweep MIN:MAX:xFACTOR or MIN:MAX:+STEP (8B:8GiB:x2 is -b 8 -e 8G -f 2)")
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "sizes" { // --sizes is an alias of --size
			name = "size"
		}
		return pflag.NormalizedName(name)
	})
	fs.StringVar(&f.gpus, "gpus", "65536", "GPUs in the job (and the group), e.g. 16,256,65536")
	fs.IntVar(&f.group, "group", 0, "ranks in the priced group (0: the whole job)")
	fs.IntVar(&f.stride, "stride", 0, "rank distance between the group's members (0: 1)")
	fs.StringVar(&f.pattern, "pattern", "", "price raw traffic instead of --op, no algorithm: "+strings.Join(patternNames(), ", ")+" (--size per flow; routed networks)")
	fs.IntVar(&f.root, "root", -1, "root member of one-to-all and all-to-one (-1: drawn at random from --seed)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the random root")
	addNetFlags(cmd, &f.network, "ramp")
	addClusterFlag(cmd, &f.cluster)
	fs.StringVar(&f.gpu, "gpu", roofline.DefaultGPU, "GPU that performs the local reductions (roofline; default the cluster's with --cluster)")
	fs.BoolVar(&f.noReduce, "no-reduce-compute", false, "price no local reductions at the receivers (the WRHT paper prices none)")
	fs.StringVar(&f.dtype, "dtype", "fp16", "element type: "+strings.Join(dtype.Names(), ", "))
	f.plot = addPlotFlags(cmd, "completion time against size (several sizes), GPUs (several job sizes) or per operation")
	addFormatFlag(cmd, &f.format)
	_ = cmd.RegisterFlagCompletionFunc("op", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return append(opNames(), "all"), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func patternNames() []string {
	var ns []string
	for _, p := range job.Patterns() {
		ns = append(ns, p.Name)
	}
	return ns
}

func opNames() []string {
	var ns []string
	for _, op := range network.Ops() {
		ns = append(ns, op.String())
	}
	return ns
}

// splitList splits a flag's comma-separated list; an empty item (a,,b or a trailing comma) is
// a usage error rather than a value silently dropped.
func splitList(flag, s string) ([]string, error) {
	var out []string
	for i, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			return nil, errs.Usage("--%s %q: item %d is empty; give the values separated by single commas", flag, s, i+1)
		}
		out = append(out, p)
	}
	return out, nil
}

func (f *collectiveFlags) toOptions() (job.CollectiveOptions, error) {
	var o job.CollectiveOptions
	ops, err := splitList("op", f.ops)
	if err != nil {
		return o, err
	}
	sizes, err := splitList("size", f.sizes)
	if err != nil {
		return o, err
	}
	gpus, err := splitList("gpus", f.gpus)
	if err != nil {
		return o, err
	}
	for _, s := range ops {
		if s == "all" {
			o.Ops = append(o.Ops, network.Ops()...)
			continue
		}
		op, err := network.ParseOp(s)
		if err != nil {
			return o, errs.Usage("--op: %v", err)
		}
		o.Ops = append(o.Ops, op)
	}
	for _, s := range sizes {
		if strings.Contains(s, ":") {
			bs, err := units.ParseBytesSweep(s)
			if err != nil {
				return o, errs.Usage("--size: %v", err)
			}
			o.Sizes = append(o.Sizes, bs...)
			continue
		}
		b, err := units.ParseBytes(s)
		if err != nil {
			return o, errs.Usage("--size: %v", err)
		}
		o.Sizes = append(o.Sizes, b)
	}
	for _, s := range gpus {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return o, errs.Usage("--gpus %q: want a whole number of GPUs ≥ 1", s)
		}
		o.GPUs = append(o.GPUs, n)
	}
	if len(o.Ops) == 0 || len(o.Sizes) == 0 || len(o.GPUs) == 0 {
		return o, errs.Usage("--op, --size and --gpus must each name at least one value")
	}
	o.NoReduceCompute = f.noReduce
	if o.DType, err = dtype.Parse(f.dtype); err != nil {
		return o, errs.Usage("--dtype: %v", err)
	}
	o.GPU, o.Group, o.Stride = f.gpu, f.group, f.stride
	if f.pattern != "" {
		if _, err := job.LookupPattern(f.pattern); err != nil {
			return o, err
		}
		if f.root < -1 {
			return o, errs.Usage("--root %d must be a member (≥ 0) or -1 (random)", f.root)
		}
		o.Pattern, o.Root, o.Seed = f.pattern, f.root, f.seed
	}
	o.Network, err = f.network.choice()
	return o, err
}

type collectiveDocRow struct {
	Op         string  `json:"op"`
	GPUs       int     `json:"gpus"`
	Group      int     `json:"group"`
	Stride     int     `json:"stride"`
	Bytes      float64 `json:"bytes"`
	Network    string  `json:"network"`
	Algorithm  string  `json:"algorithm"`
	Steps      int     `json:"steps"`
	H2HS       float64 `json:"h2h_s"`
	H2TS       float64 `json:"h2t_s"`
	ComputeS   float64 `json:"compute_s"`
	ReconfigS  float64 `json:"reconfig_s"`
	TotalS     float64 `json:"total_s"`
	AlgBW      float64 `json:"algbw_bytes_per_s"`
	BusBW      float64 `json:"busbw_bytes_per_s"`
	Bottleneck string  `json:"bottleneck"`
}

func writeCollectives(w io.Writer, rows []job.CollectiveRow, f format) error {
	docs := make([]collectiveDocRow, len(rows))
	for i, r := range rows {
		op := r.Op.String()
		if r.Pattern != "" {
			op = r.Pattern
		}
		docs[i] = collectiveDocRow{Op: op, GPUs: r.GPUs, Group: r.Group.Size, Stride: r.Group.Stride, Bytes: float64(r.Bytes),
			Network: r.Network, Algorithm: r.Cost.Algorithm, Steps: int(r.Cost.Steps), H2HS: float64(r.Cost.H2H), H2TS: float64(r.Cost.H2T),
			ComputeS: float64(r.Cost.Compute), ReconfigS: float64(r.Cost.Reconfig), TotalS: float64(r.Cost.Total), AlgBW: float64(r.AlgBW),
			BusBW: float64(r.BusBW), Bottleneck: r.Cost.Bottleneck}
	}
	switch f {
	case formatJSON:
		return writeJSON(w, docs)
	case formatCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"op", "gpus", "group", "stride", "bytes", "network", "algorithm", "steps", "h2h_s", "h2t_s", "compute_s",
			"reconfig_s", "total_s", "algbw_bytes_per_s", "busbw_bytes_per_s", "bottleneck"})
		for _, d := range docs {
			_ = cw.Write([]string{d.Op, itoa(d.GPUs), itoa(d.Group), itoa(d.Stride), ftoa(d.Bytes), d.Network, d.Algorithm, itoa(d.Steps),
				ftoa(d.H2HS), ftoa(d.H2TS), ftoa(d.ComputeS), ftoa(d.ReconfigS), ftoa(d.TotalS), ftoa(d.AlgBW), ftoa(d.BusBW), d.Bottleneck})
		}
		cw.Flush()
		return cw.Error()
	}
	b := &strings.Builder{}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	grouped := false
	for _, r := range rows {
		grouped = grouped || (r.Group.Size != r.GPUs && r.Op != network.SendRecv && r.Pattern == "") || r.Group.Stride != 1
	}
	reconfig := false
	for _, r := range rows {
		reconfig = reconfig || r.Cost.Reconfig > 0
	}
	head := "op\tgpus\t"
	if grouped {
		head += "group\t"
	}
	head += "size\tnetwork\talgorithm\tsteps\th2h\th2t\tcompute\t"
	if reconfig {
		head += "reconfig\t"
	}
	fmt.Fprintln(tw, head+"total\talg bw\tbus bw\tbottleneck\t")
	for i, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t", docs[i].Op, r.GPUs)
		if grouped {
			fmt.Fprintf(tw, "%d@%d\t", r.Group.Size, r.Group.Stride)
		}
		fmt.Fprintf(tw, "%v\t%s\t%s\t%d\t%v\t%v\t%v\t", r.Bytes, r.Network, r.Cost.Algorithm, r.Cost.Steps, r.Cost.H2H, r.Cost.H2T, r.Cost.Compute)
		if reconfig {
			fmt.Fprintf(tw, "%v\t", r.Cost.Reconfig)
		}
		fmt.Fprintf(tw, "%v\t%v\t%v\t%s\t\n", r.Cost.Total, r.AlgBW, r.BusBW, r.Cost.Bottleneck)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}
