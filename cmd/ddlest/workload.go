package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition"
)

// pickCluster is the cluster preset a command runs on: --cluster when given; else --gpu alone
// picks the GPU's own cluster and --net alone the system of its paper (ramp → ramp-65536); else
// the flag's default.
func pickCluster(fs *pflag.FlagSet, flagValue string) string {
	switch {
	case fs.Changed("cluster"):
	case fs.Changed("gpu"):
		if name, ok := job.ClusterForGPU(fs.Lookup("gpu").Value.String()); ok {
			return name
		}
	case fs.Changed("net") && !fs.Changed("net-preset"):
		if name, ok := job.ClusterForNetwork(fs.Lookup("net").Value.String()); ok {
			return name
		}
	}
	return flagValue
}

type workloadDoc struct {
	Workload string            `json:"workload"`
	Model    workloadModelDoc  `json:"model"`
	Training workloadTrainDoc  `json:"training"`
	Parallel partition.Layout  `json:"parallel"`
	Details  map[string]string `json:"details,omitempty"`
	resultDoc
}

type workloadModelDoc struct {
	Name   string  `json:"name"`
	Params float64 `json:"params"`
}

type workloadTrainDoc struct {
	GlobalBatch  int     `json:"global_batch"`
	MicroBatch   int     `json:"micro_batch"`
	MicroBatches int     `json:"micro_batches"`
	Steps        float64 `json:"steps"`
	Dataset      string  `json:"dataset"`
	Samples      float64 `json:"samples"`
	Epochs       float64 `json:"epochs"`
}

// workloadJSON is the report document of the workloads other than the transformer's.
func workloadJSON(r *job.Report) workloadDoc {
	lay := r.Plan.Layout
	return workloadDoc{Workload: r.Workload, Model: workloadModelDoc{Name: r.Model, Params: r.Params},
		Training: workloadTrainDoc{GlobalBatch: lay.GlobalBatch, MicroBatch: lay.MicroBatch, MicroBatches: lay.MicroBatches,
			Steps: r.Steps, Dataset: r.Dataset, Samples: r.Samples, Epochs: r.Epochs},
		Parallel:  lay,
		resultDoc: newResultDoc(r.Result, r.GPU.Name, r.Efficiency, r.Profile, r.Network, r.NetConfig),
	}
}

// jobJSON is a report's JSON document, the job beside it: what `ddlest run` reads back.
func jobJSON(r *job.Report) any {
	if r.Transformer != nil {
		return withJob(r, megatronJSON(r))
	}
	return withJob(r, workloadJSON(r))
}

func writeReport(w io.Writer, r *job.Report, f format) error {
	switch f {
	case formatJSON:
		return writeJSON(w, jobJSON(r))
	case formatCSV:
		return writeRowsCSV(w, nil, []*job.Report{r}, func(int) []string { return nil })
	}
	b := &strings.Builder{}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	lay := r.Plan.Layout
	fmt.Fprintf(b, "%s: %s\n\n", r.Workload, r.Model)
	row("model", fmt.Sprintf("%s parameters", units.Count(r.Params)))
	for _, n := range r.Notes {
		row("", n)
	}
	row("training", fmt.Sprintf("global batch %d = %d GPUs × %d micro-batches of %d; %s steps = %s epochs × %s samples (%s)",
		lay.GlobalBatch, lay.DP, lay.MicroBatches, lay.MicroBatch, units.Count(r.Steps), units.Count(r.Epochs), units.Count(r.Samples), r.Dataset))
	if lay.DP*lay.TP*lay.PP == lay.GPUs {
		row("parallelism", fmt.Sprintf("%d GPUs = DP %d × model-parallel %d × PP %d", lay.GPUs, lay.DP, lay.TP, lay.PP))
	} else { // DLRM: the MLPs data-parallel over every GPU, the tables sharded over groups of them
		row("parallelism", fmt.Sprintf("%d GPUs: data parallel over %d (MLPs), model parallel over %d (embedding shards)", lay.GPUs, lay.DP, lay.TP))
	}
	if r.Cluster != nil {
		row("cluster", describeCluster(*r.Cluster))
	}
	row("gpu", fmt.Sprintf("%s: %s", r.GPU.Name, r.GPU.Description))
	row("profile", r.Profile)
	row("network", r.Network+" "+changedParams(r.Network, r.NetConfig))
	fmt.Fprintln(tw)
	if err := writeResultTable(b, tw, r.Result); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func completeProfiles(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"roofline", "published", "*.parquet"}, cobra.ShellCompDirectiveDefault
}
