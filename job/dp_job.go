package job

import (
	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/zoo"
)

// TrainingRun is what the executions of the epoch-based workloads share: the training length
// and the compute profile.
type TrainingRun struct {
	Epochs     float64 `json:"epochs" help:"passes over the training set for time to accuracy (0: the workload's, see the output)"`
	Samples    float64 `json:"samples" help:"training-set size in samples (0: the workload's dataset)"`
	Profile    string  `json:"profile" help:"compute profile: roofline, published (measured compute shipped with some jobs) or a trace FILE.parquet"`
	TraceBatch int     `json:"trace_batch" help:"samples per micro-batch in the profiled run, when not the plan's"`
	TraceTP    int     `json:"trace_tp" help:"model-parallel degree of the profiled run, when not the plan's"`
	// ForceProfile: see RunOptions.
	ForceProfile bool `json:"force_profile,omitempty" flag:"force" help:"use a --profile trace that fails its checks (layer count, kernel mix, device), with a warning in the report; a trace faster than the GPU's peak is refused still"`
}

// run is the cluster and the training run as the pipeline's options.
func (t TrainingRun) run(c *Cluster) RunOptions {
	return RunOptions{GPU: c.GPU, Efficiency: c.Efficiency, Cluster: c, Profile: t.Profile, TraceBatch: t.TraceBatch,
		TraceTP: t.TraceTP, ForceProfile: t.ForceProfile, Epochs: t.Epochs, Samples: t.Samples}
}

// ZooModel is a network of the model zoo (partition/zoo).
type ZooModel struct {
	ModelPreset
	Arch string `json:"arch" help:"network of the zoo (ddlest models): vgg19, resnet152, bert-large, …"`
}

// DataParallelExecution is pure data parallelism: every GPU holds the whole model.
type DataParallelExecution struct {
	GPUs        int                 `json:"gpus" help:"GPUs (= data-parallel degree)"`
	Batch       int                 `json:"batch" help:"samples per GPU per iteration (0: the model's default)"`
	MicroBatch  int                 `json:"micro_batch" help:"samples per micro-batch (0: the whole per-GPU batch)"`
	Buckets     int                 `json:"buckets" help:"split the gradients into this many equal all-reduces (0: dp_bucket sized buckets)"`
	DPBucket    units.Bytes         `json:"dp_bucket_bytes" flag:"dp-bucket" help:"gradient bucket size when buckets is 0 (0: PyTorch DDP's 25 MiB)"`
	NoDPOverlap bool                `json:"no_dp_overlap" help:"all-reduce after the backward pass instead of overlapping buckets with it"`
	DPFusion    partition.Fusion    `json:"dp_fusion" help:"how gradients become buckets: chunks (cut at exactly dp_bucket_bytes) or horovod (whole tensors queued and packed up to dp_bucket_bytes whenever the stream is free, Horovod's tensor fusion)"`
	DPFusionUs  float64             `json:"dp_fusion_us" help:"time per fused bucket (µs; ODDL Table 2: fusion latency 1 µs)"`
	Precision   partition.Precision `json:"precision" help:"training precision: fp16 or bf16 (mixed), fp32, or tf32 (fp32 with TF32 tensor cores)"`
	Optimizer   partition.Optimizer `json:"optimizer" help:"optimizer: adam or sgd (with momentum)"`
	TrainingRun
}

type dataParallelWorkload struct{}

func (dataParallelWorkload) Name() string { return "dp" }
func (dataParallelWorkload) Summary() string {
	return "data-parallel training of a zoo model (VGG, ResNet, AlexNet, LeNet-5, MobileNetV2, BEiT-L, BERT-large)"
}
func (dataParallelWorkload) NewModel() any { return &ZooModel{Arch: "resnet50"} }
func (dataParallelWorkload) NewExecution() any {
	return &DataParallelExecution{GPUs: 64, Precision: partition.FP32, Optimizer: partition.SGD}
}

func (dataParallelWorkload) Run(j *Job) (*Report, error) {
	m, e := j.Model.(*ZooModel), j.Execution.(*DataParallelExecution)
	if _, err := zoo.Models().Lookup(m.Arch); err != nil {
		return nil, errs.Usage("model.arch: %v", err)
	}
	return DataParallel(DataParallelOptions{Workload: "dp", Model: m.Arch, GPUs: e.GPUs, Batch: e.Batch, MicroBatch: e.MicroBatch,
		Precision: e.Precision, Optimizer: e.Optimizer, Buckets: e.Buckets, BucketBytes: e.DPBucket, NoOverlap: e.NoDPOverlap,
		Fusion: e.DPFusion, FusionLatency: units.Us(e.DPFusionUs), RunOptions: e.run(&j.Cluster)})
}

// zooPresets are the zoo's networks as model presets of the dp workload (the zoo is their one
// home; its entries carry their sources).
func zooPresets() []ModelPresetEntry {
	var out []ModelPresetEntry
	for _, m := range zoo.Models().All() {
		out = append(out, ModelPresetEntry{Name: m.Name, Workload: "dp", Description: m.Name + " on " + m.Dataset,
			Source: m.ParamsSource, model: &ZooModel{Arch: m.Name}})
	}
	return out
}

// ConvGrads says which group sums CosmoFlow's convolution gradients.
type ConvGrads int

const (
	// ConvGradsAll: every GPU (the spatial shards hold partial gradients of the same weights).
	ConvGradsAll ConvGrads = iota
	// ConvGradsDP: a shard's data-parallel replicas only (the HammingMesh SST motif).
	ConvGradsDP
)

var convGradsNames = []string{"all", "dp"}

func (c ConvGrads) String() string { return convGradsNames[c] }

// MarshalText renders the name.
func (c ConvGrads) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads the name.
func (c *ConvGrads) UnmarshalText(b []byte) error { return enum.Unmarshal(c, b, convGradsNames) }

// CosmoFlowModel is MLPerf HPC's CosmoFlow (partition/cosmoflow); its architecture is fixed.
type CosmoFlowModel struct {
	ModelPreset
}

// CosmoFlowExecution is data parallelism over replicas that each split a sample's volume over
// Spatial GPUs.
type CosmoFlowExecution struct {
	GPUs        int                 `json:"gpus" help:"GPUs = data-parallel replicas × spatial"`
	Spatial     int                 `json:"spatial" help:"GPUs sharing one sample's volume (O): 1, 2, 4, 8 or 16"`
	Batch       int                 `json:"batch" help:"samples per data-parallel replica per iteration"`
	MicroBatch  int                 `json:"micro_batch" help:"samples per micro-batch (0: the whole local batch)"`
	DPBucket    units.Bytes         `json:"dp_bucket_bytes" flag:"dp-bucket" help:"gradient bucket size (0: PyTorch DDP's 25 MiB)"`
	NoDPOverlap bool                `json:"no_dp_overlap" help:"all-reduce the gradients after the backward pass"`
	ConvGrads   ConvGrads           `json:"conv_grads" help:"group that sums the convolutions' gradients: all (every GPU: the spatial shards hold partial gradients) or dp (a shard's replicas only, the HammingMesh SST motif)"`
	Precision   partition.Precision `json:"precision" help:"training precision: fp16 or bf16 (mixed), fp32, or tf32"`
	Optimizer   partition.Optimizer `json:"optimizer" help:"optimizer: adam or sgd (with momentum)"`
	TrainingRun
}

type cosmoFlowWorkload struct{}

func (cosmoFlowWorkload) Name() string { return "cosmoflow" }
func (cosmoFlowWorkload) Summary() string {
	return "CosmoFlow with data + spatial parallelism (the HammingMesh job)"
}
func (cosmoFlowWorkload) NewModel() any { return &CosmoFlowModel{} }

// NewExecution is the HammingMesh job (§V-B3): 1,024 A100s, D = 256 replicas of O = 4, 32
// samples per replica, FP32 on TF32 tensor cores.
func (cosmoFlowWorkload) NewExecution() any {
	return &CosmoFlowExecution{GPUs: 1024, Spatial: 4, Batch: 32, Precision: partition.TF32, Optimizer: partition.SGD}
}

func (cosmoFlowWorkload) Run(j *Job) (*Report, error) {
	e := j.Execution.(*CosmoFlowExecution)
	return CosmoFlow(CosmoFlowOptions{GPUs: e.GPUs, Spatial: e.Spatial, Batch: e.Batch, MicroBatch: e.MicroBatch,
		Precision: e.Precision, Optimizer: e.Optimizer, BucketBytes: e.DPBucket, NoOverlap: e.NoDPOverlap,
		ConvGradsDP: e.ConvGrads == ConvGradsDP, RunOptions: e.run(&j.Cluster)})
}
