package main

import (
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/job"
)

func newMegatronCommand() *cobra.Command {
	return workloadCommand("megatron", "megatron", "", "Megatron-LM transformer: time to a target loss (auto mode) or for an explicit configuration",
		`Estimate training a Megatron-LM GPT-style transformer on a cluster (default dgx-a100).

Auto mode (--loss): a scaling law (Kaplan 2020 by default, Chinchilla with --law chinchilla) gives
the model, the critical batch and the steps to reach the loss; the RAMP partitioner (§7.2.1,
--layout ramp) picks the tensor-parallel degree (smallest power of two under --params-per-gpu),
the data-parallel degree (critical batch / local batch, at most --max-gpus in all) and the
micro-batch that fills GPU memory. The ten losses of RAMP Table 9 use that table's shapes;
--net ramp runs on the RAMP paper's own system (--cluster ramp-65536).

Explicit mode (--layers --hidden --heads --global-batch [--tp --pp --dp --interleave] and
--steps or --tokens), or a model preset (--model gpt3-175b, see ddlest models): the
configuration is taken as given; no scaling law is involved.

Every flag sets one key of the job (see --format json); --set key=value sets any of them.`,
		`  ddlest megatron --loss 1.8 --net ramp
  ddlest megatron --loss 2.0 --law chinchilla --gpu h100 --format json
  ddlest megatron --model gpt3-175b --tp 8 --pp 8 --dp 24 --interleave 2 --seq-parallel
  ddlest megatron --layers 96 --hidden 12288 --heads 96 --global-batch 1536 --micro-batch 1 \
      --tp 8 --pp 8 --dp 24 --interleave 2 --seq 2048 --tokens 300e9 --seq-parallel`)
}

// workloadCommand is a workload command: flags generated from its job (the model preset's
// defaults shown), the run, the rendering.
func workloadCommand(use, workload, model, short, long, example string, extra ...func(*cobra.Command, *jobFlags)) *cobra.Command {
	var f format
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Example: example, Args: noArgs}
	fs := cmd.Flags()
	fs.SortFlags = false
	jf := addJobFlags(cmd, workload, model)
	for _, x := range extra {
		x(cmd, jf)
	}
	pf := addPlotFlags(cmd, "the iteration breakdown")
	addFormatFlag(cmd, &f)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := pf.check(); err != nil {
			return err
		}
		j, err := jf.build()
		if err != nil {
			return err
		}
		rep, err := job.Run(j)
		if err != nil {
			return jf.flagNames(err)
		}
		return renderJob(rep, f, pf, cmd.OutOrStdout())
	}
	return cmd
}

// renderJob draws the optional plot (first, so a bad path leaves no output) and renders a
// report of any workload.
func renderJob(rep *job.Report, f format, pf *plotFlags, w io.Writer) error {
	if err := pf.saveReports("", []string{jobLabel(rep)}, []*job.Report{rep}); err != nil {
		return err
	}
	if rep.Transformer != nil {
		return renderMegatron(rep, f, w)
	}
	return writeReport(w, rep, f)
}

// jobLabel is a report's bar label: the target loss, the preset or the model.
func jobLabel(rep *job.Report) string {
	switch {
	case rep.Transformer != nil && rep.Target != nil:
		return "loss " + ftoa(rep.Target.Loss)
	case rep.Transformer != nil && rep.Preset != "":
		return rep.Preset
	case rep.Transformer != nil:
		return "explicit"
	}
	return rep.Model
}

// renderMegatron writes a transformer report.
func renderMegatron(rep *job.Report, f format, w io.Writer) error {
	switch f {
	case formatJSON:
		return writeJSON(w, jobJSON(rep))
	case formatCSV:
		return writeMegatronCSV(w, rep)
	default:
		return writeMegatronTable(w, rep)
	}
}

// ftoa formats a float in its shortest exact form.
func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
