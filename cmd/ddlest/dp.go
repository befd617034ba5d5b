package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition/resnet"
	"github.com/ddlest/ddlest/partition/zoo"
)

// dpFlags are the options of the data-parallel commands (dp and resnet).
type dpFlags struct {
	run                      runFlags
	model, bucket            string
	depth                    int
	gpus, batch, micro, nbkt int
	noOverlap                bool
}

func (f *dpFlags) options(cmd *cobra.Command, workload string) (job.DataParallelOptions, error) {
	run, prec, opt, err := f.run.toRun(cmd)
	if err != nil {
		return job.DataParallelOptions{}, err
	}
	model := f.model
	if workload == "resnet" {
		if _, ok := resnet.Depths[f.depth]; !ok {
			return job.DataParallelOptions{}, usagef("--depth %d is not a ResNet this tool builds; valid: 50, 101, 152", f.depth)
		}
		model = fmt.Sprintf("resnet%d", f.depth)
	}
	o := job.DataParallelOptions{Workload: workload, Model: model, GPUs: f.gpus, Batch: f.batch, MicroBatch: f.micro,
		Precision: prec, Optimizer: opt, Buckets: f.nbkt, NoOverlap: f.noOverlap, RunOptions: run}
	o.BucketBytes, err = parseBucket(f.bucket)
	return o, err
}

func newDPCommand() *cobra.Command {
	f := &dpFlags{}
	cmd := &cobra.Command{
		Use:   "dp",
		Short: "Data-parallel training of a zoo model (VGG, ResNet, AlexNet, LeNet-5, MobileNetV2, BEiT-L, BERT-large)",
		Example: `  ddlest dp --model vgg19 --gpus 1024 --net superpod
  ddlest dp --model resnet50 --gpus 256 --batch 64 --epochs 40 --format json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDP(cmd, f, "dp") },
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&f.model, "model", "resnet50", "model: "+joinNames(zoo.Models().Names()))
	addDPFlags(cmd, f, 64, 0, 0, "fp32")
	_ = cmd.RegisterFlagCompletionFunc("model", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return zoo.Models().Names(), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// newResNetCommand is the HammingMesh ResNet-152 job (§V-B2): pure data parallelism on 1,024
// A100s, minibatch 32,768 (32 per GPU), gradients in 10 equal groups all-reduced non-blocking
// during the backward pass. FP32 training on an A100 runs convolutions on TF32 tensor cores
// (PyTorch's cudnn.allow_tf32 default), hence --precision tf32.
func newResNetCommand() *cobra.Command {
	f := &dpFlags{}
	cmd := &cobra.Command{
		Use:   "resnet",
		Short: "ResNet (152 by default) data parallel: the HammingMesh job of 1,024 A100s, 32 images each, 10 gradient groups",
		Example: `  ddlest resnet
  ddlest resnet --profile published --net alphabeta --net-bw 200GB/s
  ddlest resnet --depth 50 --gpus 256 --batch 256 --precision fp16`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDP(cmd, f, "resnet") },
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.IntVar(&f.depth, "depth", 152, "ResNet depth: 50, 101 or 152")
	addDPFlags(cmd, f, 1024, 32, 10, "tf32")
	return cmd
}

func addDPFlags(cmd *cobra.Command, f *dpFlags, gpus, batch, buckets int, precision string) {
	fs := cmd.Flags()
	fs.IntVar(&f.gpus, "gpus", gpus, "GPUs (= data-parallel degree)")
	fs.IntVar(&f.batch, "batch", batch, "samples per GPU per iteration (0: the model's default)")
	fs.IntVar(&f.micro, "micro-batch", 0, "samples per micro-batch (default: the whole per-GPU batch)")
	fs.IntVar(&f.nbkt, "buckets", buckets, "split the gradients into this many equal all-reduces (0: --dp-bucket sized buckets)")
	fs.StringVar(&f.bucket, "dp-bucket", "", "gradient bucket size when --buckets is 0 (default 25MiB, PyTorch DDP)")
	fs.BoolVar(&f.noOverlap, "no-dp-overlap", false, "all-reduce after the backward pass instead of overlapping buckets with it")
	addRunFlags(cmd, &f.run, precision, "sgd")
}

func runDP(cmd *cobra.Command, f *dpFlags, workload string) error {
	o, err := f.options(cmd, workload)
	if err != nil {
		return err
	}
	rep, err := job.DataParallel(o)
	if err != nil {
		return err
	}
	return f.run.emit(cmd.OutOrStdout(), rep)
}
