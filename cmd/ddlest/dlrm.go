package main

import (
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition/dlrm"
)

type dlrmFlags struct {
	run                                                runFlags
	preset, a2a, bucket, topMLP, bottomMLP, params     string
	tables, dim, dimPart, pooling, dense, gpus, global int
	batch, hidden, topLayers, bottomLayers             int
	rows                                               float64
	noOverlap                                          bool
}

func newDLRMCommand() *cobra.Command {
	f := &dlrmFlags{}
	cmd := &cobra.Command{
		Use:   "dlrm",
		Short: "DLRM with 3D partitioning: sharded embedding tables, data-parallel MLPs (RAMP Table 10, HammingMesh)",
		Long: `Estimates a DLRM iteration: embedding tables split table-wise, then column-wise when there are more
GPUs than tables (RAMP §7.2.2 after Mudigere et al. 2022), data-parallel bottom and top MLPs, and a
forward and a backward all-to-all between them. Presets: RAMP Table 10's five rows and the HammingMesh
DLRM; any flag you set overrides the preset's value.`,
		Example: `  ddlest dlrm --preset ramp-256 --net ramp
  ddlest dlrm --preset ramp-65536 --net topoopt
  ddlest dlrm --preset hammingmesh --profile published --net alphabeta --net-bw 200GB/s
  ddlest dlrm --tables 64 --rows 2e7 --dim 256 --gpus 512 --global-batch 131072`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.options(cmd)
			if err != nil {
				return err
			}
			rep, err := job.DLRM(o)
			if err != nil {
				return err
			}
			return f.run.emit(cmd.OutOrStdout(), rep)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&f.preset, "preset", "ramp-256", "configuration: "+joinNames(dlrm.Presets().Names()))
	fs.IntVar(&f.tables, "tables", 0, "embedding tables")
	fs.Float64Var(&f.rows, "rows", 0, "rows per table")
	fs.StringVar(&f.params, "params", "", "total embedding parameters, e.g. 328e9 (sets --rows = params / (tables × dim))")
	fs.IntVar(&f.dim, "dim", 0, "embedding dimension (sparse feature size)")
	fs.IntVar(&f.dimPart, "dim-part", 0, "columns per table shard (0: table-wise first, column-wise as the GPUs require)")
	fs.IntVar(&f.pooling, "pooling", 0, "lookups per table per sample (1: one-hot)")
	fs.IntVar(&f.dense, "dense", 0, "dense features")
	fs.IntVar(&f.hidden, "hidden", 0, "MLP hidden size (with --bottom-layers and --top-layers)")
	fs.IntVar(&f.bottomLayers, "bottom-layers", 0, "bottom MLP layers (the last outputs the embedding dimension)")
	fs.IntVar(&f.topLayers, "top-layers", 0, "top MLP layers (the last outputs one logit)")
	fs.StringVar(&f.bottomMLP, "bottom-mlp", "", "bottom MLP widths, e.g. 512-256-128 (the last must equal --dim)")
	fs.StringVar(&f.topMLP, "top-mlp", "", "top MLP widths, e.g. 1024-1024-512-256-1")
	fs.IntVar(&f.gpus, "gpus", 0, "GPUs")
	fs.IntVar(&f.global, "global-batch", 0, "samples per iteration")
	fs.IntVar(&f.batch, "batch", -1, "MLP samples per GPU (0: the largest that fits memory, up to global batch / tables)")
	fs.StringVar(&f.a2a, "a2a-size", "shard", "all-to-all sizing: shard (global batch × shard columns) or local (MLP batch × tables × dim)")
	fs.StringVar(&f.bucket, "dp-bucket", "", "MLP gradient bucket size (default 25MiB)")
	fs.BoolVar(&f.noOverlap, "no-dp-overlap", false, "all-reduce the MLP gradients after the backward pass")
	addRunFlags(cmd, &f.run, "fp16", "sgd")
	_ = cmd.RegisterFlagCompletionFunc("preset", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return dlrm.Presets().Names(), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func (f *dlrmFlags) options(cmd *cobra.Command) (job.DLRMOptions, error) {
	var o job.DLRMOptions
	p, err := dlrm.Presets().Lookup(f.preset)
	if err != nil {
		return o, err
	}
	run, prec, _, err := f.run.toRun(cmd)
	if err != nil {
		return o, err
	}
	c := p.Config
	set := cmd.Flags().Changed
	if set("precision") {
		c.Precision = prec
	}
	for _, v := range []struct {
		flag string
		dst  *int
		val  int
	}{{"tables", &c.Tables, f.tables}, {"dim", &c.Dim, f.dim}, {"dim-part", &c.DimPart, f.dimPart}, {"pooling", &c.Pooling, f.pooling},
		{"dense", &c.DenseFeatures, f.dense}, {"gpus", &c.GPUs, f.gpus}, {"global-batch", &c.GlobalBatch, f.global}, {"batch", &c.LocalBatch, f.batch}} {
		if set(v.flag) {
			*v.dst = v.val
		}
	}
	if set("gpus") && !set("dim-part") {
		c.DimPart = 0 // re-shard for the new GPU count
	}
	if set("rows") {
		c.RowsPerTable = f.rows
	}
	if set("params") {
		n, err := strconv.ParseFloat(f.params, 64)
		if err != nil || !(n > 0) {
			return o, usagef("--params %q must be a positive number such as 328e9", f.params)
		}
		c.RowsPerTable = n / float64(c.Tables*c.Dim)
	}
	if set("hidden") || set("bottom-layers") || set("top-layers") || set("dim") {
		h, nb, nt := c.Top[0], len(c.Bottom), len(c.Top)
		if set("hidden") {
			h = f.hidden
		}
		if set("bottom-layers") {
			nb = f.bottomLayers
		}
		if set("top-layers") {
			nt = f.topLayers
		}
		if nb < 1 || nt < 1 {
			return o, usagef("--bottom-layers %d and --top-layers %d must be ≥ 1", nb, nt)
		}
		c.Bottom = append(repeat(h, nb-1), c.Dim)
		c.Top = append(repeat(h, nt-1), 1)
	}
	for _, m := range []struct {
		flag, val string
		dst       *[]int
	}{{"bottom-mlp", f.bottomMLP, &c.Bottom}, {"top-mlp", f.topMLP, &c.Top}} {
		if set(m.flag) {
			w, err := parseWidths(m.flag, m.val)
			if err != nil {
				return o, err
			}
			*m.dst = w
		}
	}
	if c.A2A, err = dlrm.ParseA2ASize(f.a2a); err != nil {
		return o, err
	}
	if c.BucketBytes, err = parseBucket(f.bucket); err != nil {
		return o, err
	}
	c.NoOverlap = f.noOverlap
	return job.DLRMOptions{Preset: f.preset, Config: c, RunOptions: run}, nil
}

func repeat(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func parseWidths(flag, s string) ([]int, error) {
	var w []int
	for _, part := range strings.Split(s, "-") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, usagef("--%s %q: want widths ≥ 1 joined by '-', such as 1024-512-1", flag, s)
		}
		w = append(w, n)
	}
	return w, nil
}
