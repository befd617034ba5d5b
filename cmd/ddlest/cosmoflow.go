package main

import (
	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/job"
)

func newCosmoFlowCommand() *cobra.Command {
	var (
		f                           runFlags
		gpus, spatial, batch, micro int
		bucket, convGrads           string
		noOverlap                   bool
	)
	cmd := &cobra.Command{
		Use:   "cosmoflow",
		Short: "CosmoFlow with data + spatial parallelism: the HammingMesh job (1,024 A100s, D=256, O=4, 32 samples per replica)",
		Example: `  ddlest cosmoflow
  ddlest cosmoflow --profile published --format json
  ddlest cosmoflow --gpus 512 --spatial 8 --net superpod`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			run, prec, opt, err := f.toRun(cmd)
			if err != nil {
				return err
			}
			o := job.CosmoFlowOptions{GPUs: gpus, Spatial: spatial, Batch: batch, MicroBatch: micro, Precision: prec,
				Optimizer: opt, NoOverlap: noOverlap, RunOptions: run}
			switch convGrads {
			case "all":
			case "dp":
				o.ConvGradsDP = true
			default:
				return usagef("--conv-grads %q is not valid; valid: all, dp", convGrads)
			}
			if o.BucketBytes, err = parseBucket(bucket); err != nil {
				return err
			}
			rep, err := job.CosmoFlow(o)
			if err != nil {
				return err
			}
			return f.emit(cmd.OutOrStdout(), rep)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.IntVar(&gpus, "gpus", 1024, "GPUs = data-parallel replicas × --spatial")
	fs.IntVar(&spatial, "spatial", 4, "GPUs sharing one sample's volume (O): 1, 2, 4, 8 or 16")
	fs.IntVar(&batch, "batch", 32, "samples per data-parallel replica per iteration")
	fs.IntVar(&micro, "micro-batch", 0, "samples per micro-batch (default: the whole local batch)")
	fs.StringVar(&bucket, "dp-bucket", "", "gradient bucket size (default 25MiB, PyTorch DDP)")
	fs.BoolVar(&noOverlap, "no-dp-overlap", false, "all-reduce the gradients after the backward pass")
	fs.StringVar(&convGrads, "conv-grads", "all", "group that sums the convolutions' gradients: all (every GPU: the spatial shards hold partial gradients) or dp (a shard's D replicas only, the HammingMesh SST motif)")
	addRunFlags(cmd, &f, "tf32", "sgd")
	return cmd
}
