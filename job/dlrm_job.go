package job

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/dlrm"
)

// Widths are an MLP's layer widths, written "1024-512-1".
type Widths []int

// MarshalText writes the widths joined by '-'.
func (w Widths) MarshalText() ([]byte, error) {
	s := make([]string, len(w))
	for i, x := range w {
		s[i] = strconv.Itoa(x)
	}
	return []byte(strings.Join(s, "-")), nil
}

// UnmarshalText reads widths ≥ 1 joined by '-'.
func (w *Widths) UnmarshalText(b []byte) error {
	var out Widths
	for _, part := range strings.Split(string(b), "-") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return fmt.Errorf("%q: want widths ≥ 1 joined by '-', such as 1024-512-1", string(b))
		}
		out = append(out, n)
	}
	*w = out
	return nil
}

// DLRMModel is a DLRM (Naumov et al. 2019): embedding tables, a bottom MLP over the dense
// features, the pairwise interaction and a top MLP.
type DLRMModel struct {
	ModelPreset
	Tables  int     `json:"tables" help:"embedding tables"`
	Rows    float64 `json:"rows_per_table" flag:"rows" help:"rows per table"`
	Dim     int     `json:"dim" help:"embedding dimension (sparse feature size)"`
	Pooling int     `json:"pooling" help:"lookups per table per sample (1: one-hot)"`
	Dense   int     `json:"dense_features" flag:"dense" help:"dense features"`
	Bottom  Widths  `json:"bottom_mlp" help:"bottom MLP widths, e.g. 512-256-128 (the last must equal dim)"`
	Top     Widths  `json:"top_mlp" help:"top MLP widths, e.g. 1024-1024-512-256-1"`
}

// DLRMExecution is DLRM's 3D partitioning: sharded tables, data-parallel MLPs.
type DLRMExecution struct {
	GPUs        int                 `json:"gpus" help:"GPUs"`
	GlobalBatch int                 `json:"global_batch" help:"samples per iteration"`
	Batch       int                 `json:"batch" help:"MLP samples per GPU (0: the largest that fits memory, up to global batch / tables)"`
	DimPart     int                 `json:"dim_part" help:"columns per table shard (0: table-wise first, column-wise as the GPUs require)"`
	A2A         dlrm.A2ASize        `json:"a2a_size" help:"all-to-all sizing: shard (global batch × shard columns) or local (MLP batch × tables × dim)"`
	Precision   partition.Precision `json:"precision" help:"training precision: fp16 or bf16 (mixed), fp32, or tf32"`
	DPBucket    units.Bytes         `json:"dp_bucket_bytes" flag:"dp-bucket" help:"MLP gradient bucket size (0: PyTorch DDP's 25 MiB)"`
	NoDPOverlap bool                `json:"no_dp_overlap" help:"all-reduce the MLP gradients after the backward pass"`
	TrainingRun
}

type dlrmWorkload struct{}

func (dlrmWorkload) Name() string { return "dlrm" }
func (dlrmWorkload) Summary() string {
	return "DLRM with 3D partitioning: sharded embedding tables, data-parallel MLPs (RAMP Table 10, HammingMesh)"
}

// NewModel and NewExecution are RAMP Table 10's first row (dlrm preset ramp-256).
func (dlrmWorkload) NewModel() any {
	p, _ := dlrm.Presets().Lookup("ramp-256")
	m, _ := dlrmFromConfig(p.Config)
	return m
}

func (dlrmWorkload) NewExecution() any {
	p, _ := dlrm.Presets().Lookup("ramp-256")
	_, e := dlrmFromConfig(p.Config)
	return e
}

func dlrmFromConfig(c dlrm.Config) (*DLRMModel, *DLRMExecution) {
	return &DLRMModel{Tables: c.Tables, Rows: c.RowsPerTable, Dim: c.Dim, Pooling: c.Pooling, Dense: c.DenseFeatures,
			Bottom: Widths(append([]int(nil), c.Bottom...)), Top: Widths(append([]int(nil), c.Top...))},
		&DLRMExecution{GPUs: c.GPUs, GlobalBatch: c.GlobalBatch, Batch: c.LocalBatch, DimPart: c.DimPart, A2A: c.A2A,
			Precision: c.Precision, DPBucket: c.BucketBytes, NoDPOverlap: c.NoOverlap}
}

// config is the partitioner's configuration; Name is the preset's (it says whether the job is
// the measured one).
func (m *DLRMModel) config(e *DLRMExecution) dlrm.Config {
	return dlrm.Config{Name: m.Preset, Tables: m.Tables, RowsPerTable: m.Rows, Dim: m.Dim, DimPart: e.DimPart, Pooling: m.Pooling,
		DenseFeatures: m.Dense, Bottom: m.Bottom, Top: m.Top, GPUs: e.GPUs, GlobalBatch: e.GlobalBatch, LocalBatch: e.Batch,
		A2A: e.A2A, Precision: e.Precision, BucketBytes: e.DPBucket, NoOverlap: e.NoDPOverlap}
}

func (dlrmWorkload) Run(j *Job) (*Report, error) {
	m, e := j.Model.(*DLRMModel), j.Execution.(*DLRMExecution)
	name := m.Preset
	if name == "" {
		name = "dlrm"
	}
	return DLRM(DLRMOptions{Preset: name, Config: m.config(e), RunOptions: e.run(&j.Cluster)})
}

// dlrmPresets are the partitioner's DLRM configurations (RAMP Table 10's rows, the HammingMesh
// DLRM; partition/dlrm is their one home) as model presets with their executions.
func dlrmPresets() []ModelPresetEntry {
	var out []ModelPresetEntry
	for _, p := range dlrm.Presets().All() {
		m, e := dlrmFromConfig(p.Config)
		out = append(out, ModelPresetEntry{Name: p.Name, Workload: "dlrm", Description: "DLRM of " + p.Source,
			Source: p.Source, model: m, execution: e})
	}
	return out
}
