package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/job"
)

func newRunCommand() *cobra.Command {
	var pf *plotFlags
	var f format
	var sets []string
	cmd := &cobra.Command{
		Use:   "run FILE...",
		Short: "Run saved jobs (YAML or JSON: a workload's --format json output, or a hand-written job)",
		Long: `Run jobs saved as files. A job has four keys: workload, model, execution and cluster; model and
cluster may be preset names (ddlest models, ddlest clusters) or mappings whose preset key is applied
first. Keys are strict: an unknown key is an error naming its line and the valid keys. The JSON a
workload command writes is a job plus its report, so it runs again here with the same numbers.`,
		Example: `  ddlest megatron --model gpt3-175b --tp 8 --pp 8 --dp 24 --format json > run.json
  ddlest run run.json
  ddlest run job.yaml --set execution.tp=4 --format csv`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errs.Usage("run needs at least one job file (YAML or JSON)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			if err := pf.check(); err != nil {
				return err
			}
			var reps []*job.Report
			for _, path := range args {
				j, err := job.Load(path)
				if err != nil {
					return err
				}
				for _, s := range sets {
					k, v, ok := strings.Cut(s, "=")
					if !ok {
						return errs.Usage("--set %q is not key=value", s)
					}
					if err := j.Set(strings.TrimSpace(k), v); err != nil {
						return errs.Usage("--set: %v", err)
					}
				}
				rep, err := job.Run(j)
				if err != nil {
					return fmt.Errorf("%s: %w", path, keyNames(j, err))
				}
				reps = append(reps, rep)
			}
			// The plot first, so a bad path leaves no output.
			if err := pf.saveReports("job file", args, reps); err != nil {
				return err
			}
			for i, rep := range reps {
				if i > 0 && f == formatTable {
					fmt.Fprintln(w)
				}
				if err := renderJob(rep, f, nil, w); err != nil {
					return err
				}
			}
			return nil
		},
	}
	pf = addPlotFlags(cmd, "the jobs' iteration breakdowns side by side")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "set a key of every job, key=value (repeatable), e.g. execution.tp=8")
	addFormatFlag(cmd, &f)
	return cmd
}

func newClustersCommand() *cobra.Command {
	var f format
	cmd := &cobra.Command{
		Use:   "clusters",
		Short: "List the cluster presets (GPU, nodes, network) with their sources",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := job.Clusters()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if f == formatJSON {
				return writeJSON(w, r.All())
			}
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "name\tgpu\tper node\tnodes\tnetwork\tdescription")
			for _, p := range r.All() {
				c := p.Cluster
				nodes := "job's"
				if c.Nodes > 0 {
					nodes = fmt.Sprint(c.Nodes)
				}
				net := c.Network.Model
				if c.Network.Preset != "" {
					net += " (" + c.Network.Preset + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", p.Name, c.GPU, c.GPUsPerNode, nodes, net, p.Description)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(w, "\ndefault: %s; sources of every number: ddlest clusters --format json\n", job.DefaultCluster)
			return nil
		},
	}
	addFormatFlag(cmd, &f)
	return cmd
}

func newModelsCommand() *cobra.Command {
	var f format
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the model presets of every workload, with their sources",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := job.Models()
			if err != nil {
				return err
			}
			return writeModels(cmd.OutOrStdout(), r.All(), f)
		},
	}
	addFormatFlag(cmd, &f)
	cmd.AddCommand(newModelsImportCommand())
	return cmd
}

// newModelsImportCommand prints the megatron model a Hugging Face config.json describes, as the
// "model" mapping of a job file.
func newModelsImportCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "import CONFIG.json",
		Short: "Print the model of a Hugging Face config.json (" + job.HFArchitectures() + ") as a job file's model",
		Example: `  ddlest models import config.json > model.json
  ddlest megatron --hf-config config.json --seq 8192 --gpus 64 --tp 8`,
		Args: positional(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := readHF(args[0])
			if err != nil {
				return err
			}
			j, err := job.New("megatron")
			if err != nil {
				return err
			}
			if err := j.UseHF(m); err != nil { // the keys are checked as a job would take them
				return errs.Usage("%s: %v", args[0], err)
			}
			// The keys in order, those under moe. as a nested mapping.
			var top, nested []string
			for _, kv := range m.Keys {
				v := kv[1]
				if _, err := strconv.ParseFloat(v, 64); err != nil && v != "true" && v != "false" {
					v = strconv.Quote(v)
				}
				if k, ok := strings.CutPrefix(kv[0], "moe."); ok {
					nested = append(nested, fmt.Sprintf("%q: %s", k, v))
				} else {
					top = append(top, fmt.Sprintf("%q: %s", kv[0], v))
				}
			}
			if len(nested) > 0 {
				top = append(top, `"moe": {`+strings.Join(nested, ", ")+"}")
			}
			_, err = io.WriteString(cmd.OutOrStdout(), `{"model": {`+strings.Join(top, ", ")+"}}\n")
			return err
		},
	}
}

func writeModels(w io.Writer, ms []job.ModelPresetEntry, f format) error {
	if f == formatJSON {
		out := make([]map[string]string, len(ms))
		for i, m := range ms {
			out[i] = map[string]string{"name": m.Name, "workload": m.Workload, "description": m.Description, "source": m.Source}
		}
		return writeJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "name\tworkload\tdescription")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.Name, m.Workload, m.Description)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nsources: ddlest models --format json")
	return err
}

func newSoftwareCommand() *cobra.Command {
	var f format
	cmd := &cobra.Command{
		Use:   "software",
		Short: "List the training-software presets (--software): the execution settings each defaults and supports, with sources",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := job.Softwares()
			if err != nil {
				return err
			}
			return writeSoftware(cmd.OutOrStdout(), r.All(), f)
		},
	}
	addFormatFlag(cmd, &f)
	return cmd
}

func writeSoftware(w io.Writer, ss []*job.Software, f format) error {
	switch f {
	case formatJSON:
		return writeJSON(w, ss)
	case formatCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"software", "key", "default", "supported", "source"})
		for _, s := range ss {
			for _, st := range s.Settings {
				_ = cw.Write([]string{s.Name, st.Key, st.Default, strings.Join(st.Supported, " "), st.Source})
			}
		}
		cw.Flush()
		return cw.Error()
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "software\tkey\tdefault\tsupported")
	for _, s := range ss {
		for _, st := range s.Settings {
			def, sup := st.Default, strings.Join(st.Supported, ", ")
			if def == "" {
				def = "-"
			}
			if sup == "" {
				sup = "any"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, st.Key, def, sup)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nkeys given after --software override its defaults within what it supports; sources: ddlest software --format json")
	return err
}
