package main

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/job"
)

func newDLRMCommand() *cobra.Command {
	return workloadCommand("dlrm", "dlrm", "ramp-256",
		"DLRM with 3D partitioning: sharded embedding tables, data-parallel MLPs (RAMP Table 10, HammingMesh)",
		`Estimates a DLRM iteration: embedding tables split table-wise, then column-wise when there are more
GPUs than tables (RAMP §7.2.2 after Mudigere et al. 2022), data-parallel bottom and top MLPs, and a
forward and a backward all-to-all between them. Model presets (--model): RAMP Table 10's five rows
and the HammingMesh DLRM (ddlest models); any flag you set overrides the preset's value. --gpus
alone re-shards the tables (dim_part 0).`,
		`  ddlest dlrm --model ramp-256 --net ramp
  ddlest dlrm --model ramp-65536 --net topoopt
  ddlest dlrm --model hammingmesh --profile published --net alphabeta --net-bw 200GB/s
  ddlest dlrm --tables 64 --rows 2e7 --dim 256 --gpus 512 --global-batch 131072`,
		dlrmShorthands)
}

// dlrmShorthands are flags that set several keys of a DLRM job: --params (rows from a total),
// --hidden with --bottom-layers and --top-layers (both MLPs), and --gpus alone re-sharding.
func dlrmShorthands(cmd *cobra.Command, jf *jobFlags) {
	var params string
	var hidden, bottom, top int
	fs := cmd.Flags()
	fs.StringVar(&params, "params", "", "total embedding parameters, e.g. 328e9 (sets rows = params / (tables × dim))")
	fs.IntVar(&hidden, "hidden", 0, "MLP hidden size (with --bottom-layers and --top-layers; sets bottom_mlp and top_mlp)")
	fs.IntVar(&bottom, "bottom-layers", 0, "bottom MLP layers (the last outputs the embedding dimension)")
	fs.IntVar(&top, "top-layers", 0, "top MLP layers (the last outputs one logit)")
	jf.shorthands = append(jf.shorthands, func(j *job.Job) error {
		m, e := j.Model.(*job.DLRMModel), j.Execution.(*job.DLRMExecution)
		set := fs.Changed
		if set("gpus") && !set("dim-part") {
			e.DimPart = 0 // re-shard for the new GPU count
		}
		if set("params") {
			n, err := strconv.ParseFloat(params, 64)
			if err != nil || !(n > 0) {
				return usagef("--params %q must be a positive number such as 328e9", params)
			}
			m.Rows = n / float64(m.Tables*m.Dim)
		}
		if set("hidden") || set("bottom-layers") || set("top-layers") || set("dim") {
			h, nb, nt := m.Top[0], len(m.Bottom), len(m.Top)
			if set("hidden") {
				h = hidden
			}
			if set("bottom-layers") {
				nb = bottom
			}
			if set("top-layers") {
				nt = top
			}
			if nb < 1 || nt < 1 || h < 1 {
				return usagef("--hidden %d, --bottom-layers %d and --top-layers %d must be ≥ 1", h, nb, nt)
			}
			if !set("bottom-mlp") { // explicit widths win
				m.Bottom = append(repeat(h, nb-1), m.Dim)
			}
			if !set("top-mlp") {
				m.Top = append(repeat(h, nt-1), 1)
			}
		}
		return nil
	})
}

func repeat(v, n int) job.Widths {
	s := make(job.Widths, n)
	for i := range s {
		s[i] = v
	}
	return s
}
