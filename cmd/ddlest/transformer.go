package main

import "github.com/spf13/cobra"

func newGPT3Command() *cobra.Command {
	return workloadCommand("gpt3", "megatron", "gpt3",
		"GPT-3 175B with pipeline and tensor parallelism: the HammingMesh job (P=96, O=4, D=1), full iteration and 1F1B step",
		"The megatron workload with the model preset gpt3 (HammingMesh §V-B5's partitioning); every flag of\n`ddlest megatron` applies.",
		`  ddlest gpt3
  ddlest gpt3 --profile published --net alphabeta --net-bw 200GB/s
  ddlest gpt3 --gpus 3072 --global-batch 1536 --vocab 50257`)
}

func newMoECommand() *cobra.Command {
	cmd := moeCommand()
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		// The preset's header would name 16 experts over a dense model.
		if f := c.Flags().Lookup("experts"); f != nil && f.Value.String() == "0" {
			return usagef("--experts 0: the moe command trains Mixture-of-Experts layers, at least 1 expert; a dense model is ddlest gpt3 or ddlest megatron")
		}
		return run(c, args)
	}
	return cmd
}

func moeCommand() *cobra.Command {
	return workloadCommand("moe", "megatron", "gpt3-moe",
		"GPT-3 with Mixture-of-Experts FF layers and expert parallelism: the HammingMesh job (16 experts, P=96, EP=16)",
		"The megatron workload with the model preset gpt3-moe (HammingMesh §V-B5); every flag of\n`ddlest megatron` applies.",
		`  ddlest moe
  ddlest moe --profile published --net torus
  ddlest moe --experts 64 --ep 16 --top-k 2 --capacity-factor 1.25 --expert-hidden 12288`)
}
