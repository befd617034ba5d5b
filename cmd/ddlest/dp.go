package main

import (
	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/internal/workflow"
	"github.com/ddlest/ddlest/partition/zoo"
)

func newDPCommand() *cobra.Command {
	var (
		f                        runFlags
		model, bucket            string
		gpus, batch, micro, nbkt int
		noOverlap                bool
	)
	cmd := &cobra.Command{
		Use:   "dp",
		Short: "Data-parallel training of a zoo model (VGG, ResNet, AlexNet, LeNet-5, MobileNetV2, BEiT-L, BERT-large)",
		Example: `  ddlest dp --model vgg19 --gpus 1024 --net superpod
  ddlest dp --model resnet50 --gpus 256 --batch 64 --epochs 40 --format json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			run, prec, opt, err := f.toRun()
			if err != nil {
				return err
			}
			o := workflow.DataParallelOptions{Model: model, GPUs: gpus, Batch: batch, MicroBatch: micro, Precision: prec,
				Optimizer: opt, Buckets: nbkt, NoOverlap: noOverlap, Run: run}
			if bucket != "" {
				b, err := units.ParseBytes(bucket)
				if err != nil {
					return usagef("--dp-bucket: %v", err)
				}
				o.BucketBytes = b
			}
			rep, err := workflow.DataParallel(o)
			if err != nil {
				return err
			}
			return f.emit(cmd.OutOrStdout(), rep)
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&model, "model", "resnet50", "model: "+joinNames(zoo.Models().Names()))
	fs.IntVar(&gpus, "gpus", 64, "GPUs (= data-parallel degree)")
	fs.IntVar(&batch, "batch", 0, "samples per GPU per iteration (default: the model's)")
	fs.IntVar(&micro, "micro-batch", 0, "samples per micro-batch (default: the whole per-GPU batch)")
	fs.IntVar(&nbkt, "buckets", 0, "split the gradients into this many equal all-reduces (default: 25 MiB buckets)")
	fs.StringVar(&bucket, "dp-bucket", "", "gradient bucket size, e.g. 25MiB")
	fs.BoolVar(&noOverlap, "no-dp-overlap", false, "all-reduce after the backward pass instead of overlapping buckets with it")
	addRunFlags(cmd, &f, "fp32", "sgd")
	_ = cmd.RegisterFlagCompletionFunc("model", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return zoo.Models().Names(), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}
