package main

import "github.com/spf13/cobra"

func newCosmoFlowCommand() *cobra.Command {
	return workloadCommand("cosmoflow", "cosmoflow", "",
		"CosmoFlow with data + spatial parallelism: the HammingMesh job (1,024 A100s, D=256, O=4, 32 samples per replica)",
		`Estimate MLPerf HPC's CosmoFlow: data-parallel replicas that each split a sample's 128³ volume over
--spatial GPUs (halo exchanges per convolution, all-gathers and reduce-scatters per dense layer).
The defaults are the HammingMesh job (§V-B3). Every flag sets one key of the job (see --format
json); --set key=value sets any of them.`,
		`  ddlest cosmoflow
  ddlest cosmoflow --profile published --format json
  ddlest cosmoflow --gpus 512 --spatial 8 --net superpod`)
}
