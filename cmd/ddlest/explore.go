package main

import (
	"strings"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/spf13/cobra"
)

// jobWorkload is a command built on a job: the workload and the model preset it starts from.
type jobWorkload struct {
	use, workload, model, short string
	searchable                  bool // the workload has a layout search (job.Search)
}

// jobWorkloads are the workload commands that search, sweep and compare take.
var jobWorkloads = []jobWorkload{
	{"megatron", "megatron", "", "Megatron-LM transformer (target loss or explicit model)", true},
	{"gpt3", "megatron", "gpt3", "GPT-3 175B, the HammingMesh partitioning", true},
	{"moe", "megatron", "gpt3-moe", "GPT-3 with Mixture-of-Experts layers", true},
	{"dp", "dp", "resnet50", "data-parallel zoo model", false},
	{"resnet", "dp", "resnet152-hammingmesh", "ResNet-152, the HammingMesh job", false},
	{"cosmoflow", "cosmoflow", "", "CosmoFlow, the HammingMesh job", false},
	{"dlrm", "dlrm", "ramp-256", "DLRM", false},
}

// exampleModel is the model flag of a command's examples: the transformer command has no default
// model.
func exampleModel(w jobWorkload) string {
	if w.use == "megatron" {
		return " --model gpt3-175b"
	}
	return ""
}

// needs is the run of a command that only groups subcommands (search and compare: workloads;
// trace: its tools): a usage error naming them, instead of cobra's help on exit 0.
func needs(what string) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		if len(args) == 0 {
			return errs.Usage("%s needs a %s: %s", cmd.CommandPath(), what, strings.Join(names, ", "))
		}
		return errs.Usage("%s: no %s %q; valid: %s", cmd.CommandPath(), what, args[0], strings.Join(names, ", "))
	}
}
