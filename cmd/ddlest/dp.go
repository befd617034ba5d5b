package main

import "github.com/spf13/cobra"

func newDPCommand() *cobra.Command {
	return workloadCommand("dp", "dp", "resnet50",
		"Data-parallel training of a zoo model (VGG, ResNet, AlexNet, LeNet-5, MobileNetV2, BEiT-L, BERT-large)",
		`Estimate pure data-parallel training of a network of the model zoo (ddlest models lists them with
their sources) on a cluster (default dgx-a100): every GPU holds the model, the gradients are
all-reduced in buckets overlapped with the backward pass. Every flag sets one key of the job (see
--format json); --set key=value sets any of them.`,
		`  ddlest dp --model vgg19 --gpus 1024
  ddlest dp --model resnet50 --gpus 256 --batch 64 --epochs 40 --format json`)
}

// newResNetCommand is the HammingMesh ResNet-152 job (§V-B2, model preset resnet152-hammingmesh):
// pure data parallelism on 1,024 A100s, minibatch 32,768 (32 per GPU), gradients in 10 equal
// groups all-reduced non-blocking during the backward pass.
func newResNetCommand() *cobra.Command {
	return workloadCommand("resnet", "dp", "resnet152-hammingmesh",
		"ResNet-152 data parallel: the HammingMesh job of 1,024 A100s, 32 images each, 10 gradient groups",
		`The dp workload with the model preset resnet152-hammingmesh (HammingMesh §V-B2); every flag of
`+"`ddlest dp`"+` applies, and --model resnet50 or resnet101 keeps the job's execution.`,
		`  ddlest resnet
  ddlest resnet --profile published --net alphabeta --net-bw 200GB/s
  ddlest resnet --model resnet50 --gpus 256 --batch 256 --precision fp16`)
}
