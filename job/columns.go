package job

import (
	"github.com/ddlest/ddlest/internal/rows"
	"github.com/ddlest/ddlest/partition/megatron"
)

// Kind and Cell are the typed values of a row (internal/rows writes them as CSV or parquet).
type (
	Kind = rows.Kind
	Cell = rows.Cell
)

// The kinds of cells.
const (
	Int   = rows.Int
	Float = rows.Float
	Text  = rows.Text
	Bool  = rows.Bool
)

// Column is one field of a report's row: the one specification from which CSV output, sweep
// rows, comparisons and figures read a report. Names end with their unit (_s seconds, _bytes
// bytes, _per_s rates); fractions and counts have none.
type Column struct {
	Name string
	Help string
	Kind Kind
	Get  func(*Report) Cell
}

func num(k Kind, f func(*Report) float64) func(*Report) Cell {
	return func(r *Report) Cell { return Cell{Kind: k, Num: f(r)} }
}

func text(f func(*Report) string) func(*Report) Cell {
	return func(r *Report) Cell { return Cell{Kind: Text, Text: f(r)} }
}

func flag(f func(*Report) bool) func(*Report) Cell {
	return func(r *Report) Cell {
		if f(r) {
			return Cell{Kind: Bool, Num: 1}
		}
		return Cell{Kind: Bool}
	}
}

// tf reads a transformer report's configuration.
func tf(f func(c megatron.Config) float64) func(*Report) float64 {
	return func(r *Report) float64 {
		if r.Transformer == nil {
			return 0
		}
		return f(r.Config)
	}
}

// commonColumns are every workload's: the job's cluster and layout, then the estimate.
var commonColumns = []Column{
	{"workload", "workload", Text, text(func(r *Report) string { return r.Workload })},
	{"model", "model or model preset", Text, text(func(r *Report) string {
		if r.Transformer != nil {
			return r.Preset
		}
		return r.Model
	})},
	{"params", "parameters", Float, num(Float, func(r *Report) float64 { return r.Params })},
	{"cluster", "cluster preset", Text, text(func(r *Report) string {
		if r.Cluster == nil {
			return ""
		}
		return r.Cluster.Preset
	})},
	{"gpu", "GPU", Text, text(func(r *Report) string { return r.GPU.Name })},
	{"network", "network model", Text, text(func(r *Report) string { return r.Network })},
	{"precision", "training precision", Text, text(func(r *Report) string {
		if r.Transformer != nil {
			return r.Config.Precision.String()
		}
		return r.Plan.DType().String() // the GEMMs' datatype
	})},
	{"gpus", "GPUs of the job", Int, num(Int, func(r *Report) float64 { return float64(r.Plan.Layout.GPUs) })},
	{"dp", "data-parallel degree", Int, num(Int, func(r *Report) float64 { return float64(r.Plan.Layout.DP) })},
	{"tp", "tensor- or model-parallel degree", Int, num(Int, func(r *Report) float64 { return float64(r.Plan.Layout.TP) })},
	{"pp", "pipeline stages", Int, num(Int, func(r *Report) float64 { return float64(r.Plan.Layout.PP) })},
	{"global_batch", "samples (sequences) per iteration", Int, num(Int, func(r *Report) float64 { return float64(r.Plan.Layout.GlobalBatch) })},
	{"micro_batch", "samples per micro-batch", Int, num(Int, func(r *Report) float64 { return float64(r.Plan.Layout.MicroBatch) })},
	{"steps", "training iterations", Float, num(Float, func(r *Report) float64 { return r.Steps })},
	{"compute_s", "compute per iteration", Float, num(Float, func(r *Report) float64 { return float64(r.Result.Iteration.Compute) })},
	{"exposed_comm_s", "exposed communication per iteration", Float, num(Float, func(r *Report) float64 { return float64(r.Result.Iteration.ExposedComm) })},
	{"bubble_s", "pipeline bubble per iteration", Float, num(Float, func(r *Report) float64 { return float64(r.Result.Iteration.Bubble) })},
	{"total_s", "iteration time", Float, num(Float, func(r *Report) float64 { return float64(r.Result.Iteration.Total) })},
	{"comm_fraction", "exposed communication / iteration", Float, num(Float, func(r *Report) float64 { return r.Result.Iteration.CommFraction })},
	{"time_to_accuracy_s", "steps × iteration + the network's set-up", Float, num(Float, func(r *Report) float64 { return float64(r.Result.TimeToAccuracy) })},
	{"network_setup_s", "the network's set-up once per job (ODDL's WSS configuration)", Float, num(Float, func(r *Report) float64 { return float64(r.Result.Setup) })},
	{"samples_per_s", "throughput", Float, num(Float, func(r *Report) float64 { return r.Result.SamplesPerS })},
	{"hw_tflops_per_gpu", "executed FLOP/s per GPU (recomputation included) / 1e12", Float, num(Float, func(r *Report) float64 { return float64(r.Result.HWFLOPPerGPU) / 1e12 })},
	{"model_tflops_per_gpu", "model FLOP/s per GPU / 1e12", Float, num(Float, func(r *Report) float64 { return float64(r.Result.ModelFLOPPerGPU) / 1e12 })},
	{"mfu", "model FLOP utilisation", Float, num(Float, func(r *Report) float64 { return r.Result.MFU })},
	{"memory_total_bytes", "footprint of the fullest GPU", Float, num(Float, func(r *Report) float64 { return float64(r.Result.Memory.Total) })},
	{"memory_capacity_bytes", "GPU memory", Float, num(Float, func(r *Report) float64 { return float64(r.Result.Memory.Capacity) })},
}

// transformerColumns follow the common ones for the megatron workload.
var transformerColumns = []Column{
	{"mode", "auto (target loss) or explicit", Text, text(func(r *Report) string { return r.Mode.String() })},
	{"law", "scaling law (auto mode)", Text, text(func(r *Report) string {
		if r.Transformer == nil || r.Target == nil {
			return ""
		}
		return r.Target.Law.String()
	})},
	{"target_loss", "target loss in nats/token (auto mode)", Float, num(Float, func(r *Report) float64 {
		if r.Transformer == nil || r.Target == nil {
			return 0
		}
		return r.Target.Loss
	})},
	{"non_embedding_params", "parameters without embedding and LM head (Kaplan's N)", Float, num(Float, func(r *Report) float64 {
		if r.Transformer == nil {
			return 0
		}
		return r.NonEmbedding
	})},
	{"layers", "transformer layers", Int, num(Int, tf(func(c megatron.Config) float64 { return float64(c.Layers) }))},
	{"hidden", "hidden size", Int, num(Int, tf(func(c megatron.Config) float64 { return float64(c.Hidden) }))},
	{"heads", "attention heads", Int, num(Int, tf(func(c megatron.Config) float64 { return float64(c.Heads) }))},
	{"seq", "sequence length", Int, num(Int, tf(func(c megatron.Config) float64 { return float64(c.Seq) }))},
	{"vocab", "vocabulary (before padding)", Int, num(Int, tf(func(c megatron.Config) float64 { return float64(c.Vocab) }))},
	{"interleave", "model chunks per stage", Int, num(Int, tf(func(c megatron.Config) float64 { return float64(c.Interleave) }))},
	{"ep", "expert-parallel degree", Int, num(Int, tf(func(c megatron.Config) float64 { return float64(c.MoE.EP) }))},
	{"recompute", "activation recomputation", Text, text(func(r *Report) string { return r.Config.Recompute.String() })},
	{"seq_parallel", "sequence parallelism", Bool, flag(func(r *Report) bool { return r.Config.SeqParallel })},
	{"tokens", "training tokens", Float, num(Float, func(r *Report) float64 { return r.Tokens })},
	{"tokens_per_s", "throughput", Float, num(Float, func(r *Report) float64 { return r.Result.TokensPerS })},
}

// Columns are the columns of a workload's rows.
func Columns(workload string) []Column {
	if workload == "megatron" {
		return append(commonColumns[:len(commonColumns):len(commonColumns)], transformerColumns...)
	}
	return commonColumns
}

// Row is a report's cells under cols.
func Row(r *Report, cols []Column) []Cell {
	out := make([]Cell, len(cols))
	for i, c := range cols {
		out[i] = c.Get(r)
	}
	return out
}

// RowColumns are the columns' names and kinds, for a rows.Writer.
func RowColumns(cols []Column) []rows.Column {
	out := make([]rows.Column, len(cols))
	for i, c := range cols {
		out[i] = rows.Column{Name: c.Name, Kind: c.Kind}
	}
	return out
}
