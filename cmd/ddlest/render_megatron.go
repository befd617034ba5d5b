package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/all"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/megatron"
	"github.com/ddlest/ddlest/profile/roofline"
)

// The JSON document of `ddlest megatron --format json`. Keys are stable; numbers are SI base
// units named by their suffix (_s seconds, _bytes bytes).
type megatronDoc struct {
	Mode     string      `json:"mode"`
	Preset   string      `json:"preset,omitempty"`
	Model    modelDoc    `json:"model"`
	Scaling  *scalingDoc `json:"scaling,omitempty"`
	Training trainingDoc `json:"training"`
	Parallel parallelDoc `json:"parallel"`
	Step     *stepDoc    `json:"step,omitempty"`
	// MemoryWarning: the plan does not fit and was estimated anyway (--ignore-memory).
	MemoryWarning string `json:"memory_warning,omitempty"`
	// Search: the layout search that chose the layout (execution.layout search).
	Search *job.SearchSummary `json:"search,omitempty"`
	resultDoc
}

// resultDoc holds the JSON sections every workload shares.
type resultDoc struct {
	Hardware        hardwareDoc         `json:"hardware"`
	Network         networkDoc          `json:"network"`
	Iteration       estimator.Iteration `json:"iteration"`
	Breakdown       breakdownDoc        `json:"breakdown"`
	Collectives     []collectiveDoc     `json:"collectives"`
	Throughput      throughputDoc       `json:"throughput"`
	TimeToAccuracyS float64             `json:"time_to_accuracy_s"`
	Memory          partition.Memory    `json:"memory"`
}

func newResultDoc(res estimator.Result, gpu string, eff roofline.Efficiency, profileName, net string, cfg network.Config) resultDoc {
	d := resultDoc{
		Hardware: hardwareDoc{GPU: gpu, Profile: profileName, MatMulEfficiency: eff.MatMul,
			ConvEfficiency: eff.Conv, VectorEfficiency: eff.Vector, MemoryEfficiency: eff.Memory},
		Network:   networkDoc{Name: net, Params: cfg},
		Iteration: res.Iteration,
		Breakdown: breakdownDoc{
			ForwardS: float64(res.Breakdown.Forward), RecomputeS: float64(res.Breakdown.Recompute),
			BackwardS: float64(res.Breakdown.Backward), OptimizerS: float64(res.Breakdown.Optimizer),
			OffloadWaitS: float64(res.Breakdown.OffloadWait), CommKernelsS: float64(res.Breakdown.CommKernels),
			TPCommS: float64(res.Breakdown.TP), EPCommS: float64(res.Breakdown.EP), MPCommS: float64(res.Breakdown.MP),
			SPCommS: float64(res.Breakdown.SP), CPCommS: float64(res.Breakdown.CP),
			PPCommS: float64(res.Breakdown.PP), DPCommS: float64(res.Breakdown.DP),
			DPSharedS: float64(res.Breakdown.DPShared),
			Stage:     res.Stage,
		},
		Collectives: []collectiveDoc{},
		Throughput: throughputDoc{TokensPerS: res.TokensPerS, SamplesPerS: res.SamplesPerS,
			HWTFLOPsPerGPU: float64(res.HWFLOPPerGPU) / 1e12, ModelTFLOPsPerGPU: float64(res.ModelFLOPPerGPU) / 1e12, MFU: res.MFU},
		TimeToAccuracyS: float64(res.TimeToAccuracy),
		Memory:          res.Memory,
	}
	for _, col := range res.Collectives {
		d.Collectives = append(d.Collectives, collectiveDoc{Name: col.Name, Kind: col.Kind.String(), Dim: col.Dim.String(),
			Phase: col.Phase.String(), Bytes: float64(col.Bytes), Group: col.Group, Stride: col.Stride, Count: col.Count,
			Algorithm: col.Cost.Algorithm, TimeS: float64(col.Time), ExposedS: float64(col.Exposed), SMs: int(col.Cost.SMs)})
	}
	return d
}

type modelDoc struct {
	Params             float64 `json:"params"`
	ActiveParams       float64 `json:"active_params"`
	NonEmbeddingParams float64 `json:"non_embedding_params"`
	Layers             int     `json:"layers"`
	Hidden             int     `json:"hidden"`
	Heads              int     `json:"heads"`
	KVHeads            int     `json:"kv_heads"`
	HeadDim            int     `json:"head_dim"`
	FFNHidden          int     `json:"ffn_hidden"`
	MLP                string  `json:"mlp"`
	Norm               string  `json:"norm"`
	Positions          string  `json:"positions"`
	Seq                int     `json:"seq"`
	Vocab              int     `json:"vocab"`
	PaddedVocab        int     `json:"padded_vocab"`
	MoE                *moeDoc `json:"moe,omitempty"`
}

type scalingDoc struct {
	Law              string  `json:"law"`
	TargetLoss       float64 `json:"target_loss"`
	ModelLoss        float64 `json:"model_loss"`
	ParamsForLoss    float64 `json:"params_for_loss"`
	Shape            string  `json:"shape_source"`
	CriticalBatch    float64 `json:"critical_batch"`
	StepsMin         float64 `json:"steps_min,omitempty"`
	TokenBudget      float64 `json:"token_budget,omitempty"`
	LossGap          float64 `json:"loss_gap,omitempty"`
	ComputeMinFLOP   float64 `json:"compute_min_flop"`
	LocalBatchSource string  `json:"local_batch_source"`
}

type trainingDoc struct {
	GlobalBatch  int     `json:"global_batch"`
	MicroBatch   int     `json:"micro_batch"`
	MicroBatches int     `json:"micro_batches"`
	Steps        float64 `json:"steps"`
	Tokens       float64 `json:"tokens"`
	ComputeFLOP  float64 `json:"compute_flop"`
	Precision    string  `json:"precision"`
	Optimizer    string  `json:"optimizer"`
}

// parallelDoc is the plan's layout plus the recomputation policy.
type parallelDoc struct {
	partition.Layout
	Recompute string `json:"recompute"`
	// OffloadLayers are the layers whose activations go to host memory (0: none).
	OffloadLayers int `json:"offload_layers,omitempty"`
}

type hardwareDoc struct {
	GPU              string  `json:"gpu"`
	Profile          string  `json:"profile"`
	MatMulEfficiency float64 `json:"matmul_efficiency"`
	ConvEfficiency   float64 `json:"conv_efficiency"`
	VectorEfficiency float64 `json:"vector_efficiency"`
	MemoryEfficiency float64 `json:"memory_efficiency"`
}

type networkDoc struct {
	Name   string         `json:"name"`
	Params network.Config `json:"params"`
}

type breakdownDoc struct {
	ForwardS   float64 `json:"forward_s"`
	RecomputeS float64 `json:"recompute_s"`
	BackwardS  float64 `json:"backward_s"`
	OptimizerS float64 `json:"optimizer_s"`
	// OffloadWaitS is compute's waiting for activations offloaded to host memory.
	OffloadWaitS float64 `json:"offload_wait_s,omitempty"`
	// CommKernelsS is compute lost to the SMs that overlapped communication kernels hold.
	CommKernelsS float64 `json:"comm_kernels_s,omitempty"`
	TPCommS      float64 `json:"tp_comm_s"`
	EPCommS      float64 `json:"ep_comm_s"`
	MPCommS      float64 `json:"mp_comm_s"`
	SPCommS      float64 `json:"sp_comm_s"`
	CPCommS      float64 `json:"cp_comm_s"`
	PPCommS      float64 `json:"pp_comm_s"`
	DPCommS      float64 `json:"dp_comm_s"`
	// DPSharedS is the part of DPCommS that links shared with the backward pass add.
	DPSharedS float64 `json:"dp_shared_links_s,omitempty"`
	Stage     int     `json:"critical_stage"`
}

type collectiveDoc struct {
	Name      string  `json:"name"`
	Kind      string  `json:"kind"`
	Dim       string  `json:"dim"`
	Phase     string  `json:"phase"`
	Bytes     float64 `json:"bytes"`
	Group     int     `json:"group"`
	Stride    int     `json:"stride"`
	Count     int     `json:"count"`
	Algorithm string  `json:"algorithm"`
	TimeS     float64 `json:"time_s"`
	ExposedS  float64 `json:"exposed_s"`
	// SMs is the streaming multiprocessors its kernels hold while it runs (network.Cost.SMs).
	SMs int `json:"sms,omitempty"`
}

type throughputDoc struct {
	TokensPerS        float64 `json:"tokens_per_s"`
	SamplesPerS       float64 `json:"samples_per_s"`
	HWTFLOPsPerGPU    float64 `json:"hw_tflops_per_gpu"`
	ModelTFLOPsPerGPU float64 `json:"model_tflops_per_gpu"`
	MFU               float64 `json:"mfu"`
}

type moeDoc struct {
	Experts        int     `json:"experts"`
	TopK           int     `json:"top_k"`
	CapacityFactor float64 `json:"capacity_factor"`
	ExpertHidden   int     `json:"expert_hidden"`
	EP             int     `json:"ep"`
}

// stepDoc is the steady-state 1F1B step (job.PipelineStep).
type stepDoc struct {
	Stage     int     `json:"stage"`
	ForwardS  float64 `json:"forward_s"`
	BackwardS float64 `json:"backward_s"`
	P2PS      float64 `json:"p2p_s"`
	TotalS    float64 `json:"total_s"`
}

func megatronJSON(r *job.Report) megatronDoc {
	c := r.Config
	arch := c.Arch.Resolved(c.Hidden, c.Heads)
	d := megatronDoc{
		Mode: r.Mode.String(),
		Model: modelDoc{Params: r.Params, ActiveParams: r.ActiveParams, NonEmbeddingParams: r.NonEmbedding, Layers: c.Layers, Hidden: c.Hidden,
			Heads: c.Heads, KVHeads: arch.KVHeads, HeadDim: arch.HeadDim, FFNHidden: arch.FFNHidden, MLP: arch.MLP.String(),
			Norm: arch.Norm.String(), Positions: arch.Positions.String(), Seq: c.Seq, Vocab: c.Vocab, PaddedVocab: megatron.PaddedVocab(c.Vocab, c.TP)},
		Training: trainingDoc{GlobalBatch: c.GlobalBatch, MicroBatch: c.MicroBatch, MicroBatches: c.MicroBatches(),
			Steps: r.Steps, Tokens: r.Tokens, ComputeFLOP: r.TrainingFLOP, Precision: c.Precision.String(), Optimizer: c.Optimizer.String()},
		Parallel:      parallelDoc{Layout: r.Plan.Layout, Recompute: c.Recompute.String(), OffloadLayers: c.OffloadLayers},
		resultDoc:     newResultDoc(r.Result, r.GPU.Name, r.Efficiency, r.Profile, r.Network, r.NetConfig),
		Preset:        r.Preset,
		MemoryWarning: r.MemoryWarning,
		Search:        r.Search,
	}
	if c.MoE.Experts > 0 {
		d.Model.MoE = &moeDoc{Experts: c.MoE.Experts, TopK: c.MoE.TopK, CapacityFactor: c.MoE.CapacityFactor,
			ExpertHidden: c.MoE.ExpertHidden, EP: c.MoE.EP}
	}
	if st := r.Step; st != nil {
		d.Step = &stepDoc{Stage: st.Stage, ForwardS: float64(st.Forward), BackwardS: float64(st.Backward),
			P2PS: float64(st.P2P), TotalS: float64(st.Total)}
	}
	if r.Target != nil {
		t := r.Target
		d.Scaling = &scalingDoc{Law: t.Law.String(), TargetLoss: t.Loss, ModelLoss: t.ModelLoss, ParamsForLoss: t.ParamsForLoss,
			Shape: t.Shape.Source, CriticalBatch: t.CriticalBatch, StepsMin: t.StepsMin, TokenBudget: t.Tokens,
			LocalBatchSource: r.Auto.LocalBatchSource, ComputeMinFLOP: r.ComputeMinFLOP}
		if t.Law.String() == "kaplan" {
			d.Scaling.LossGap = t.Gap
		}
	}
	return d
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeMegatronCSV is one header row and one data row of the column specification (job.Columns),
// the same as sweep rows.
func writeMegatronCSV(w io.Writer, r *job.Report) error {
	return writeRowsCSV(w, nil, []*job.Report{r}, func(int) []string { return nil })
}

// changedParams lists the network parameters that differ from the model's defaults.
func changedParams(name string, cfg network.Config) string {
	spec, err := all.Registry().Lookup(name)
	if err != nil || cfg == nil {
		return ""
	}
	def := map[string]string{}
	for _, p := range params.List(spec.NewConfig()) {
		def[p.Key] = p.Value
	}
	var out []string
	for _, p := range params.List(cfg) {
		if def[p.Key] != p.Value {
			out = append(out, p.Key+"="+p.Value)
		}
	}
	if len(out) == 0 {
		return "(default parameters, see `ddlest nets`)"
	}
	return strings.Join(out, " ")
}

func itoa(i int) string { return fmt.Sprint(i) }

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func writeMegatronTable(w io.Writer, r *job.Report) error {
	c, res := r.Config, r.Result
	b := &strings.Builder{}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }

	title := "Megatron, explicit configuration"
	if r.Preset != "" {
		title = fmt.Sprintf("%s: %s", r.Preset, r.PresetSource)
	}
	if r.Target != nil {
		title = fmt.Sprintf("Megatron to loss %s nats/token (%s law)", ftoa(r.Target.Loss), r.Target.Law)
	}
	fmt.Fprintf(b, "%s\n\n", title)
	heads := fmt.Sprintf("%d heads", c.Heads)
	if arch := c.Arch.Describe(); arch != "" {
		heads += " (" + arch + ")"
	}
	params := fmt.Sprintf("%s parameters (%s non-embedding)", units.Count(r.Params), units.Count(r.NonEmbedding))
	if r.ActiveParams < r.Params {
		params = fmt.Sprintf("%s parameters (%s active, %s non-embedding)", units.Count(r.Params), units.Count(r.ActiveParams), units.Count(r.NonEmbedding))
	}
	row("model", fmt.Sprintf("%s: %d layers, hidden %d, %s, seq %d, vocab %d (padded %d)",
		params, c.Layers, c.Hidden, heads, c.Seq, c.Vocab, megatron.PaddedVocab(c.Vocab, c.TP)))
	if t := r.Target; t != nil {
		s := fmt.Sprintf("law asks for %s parameters; shape from %s; model loss %.4g; critical batch %s sequences",
			units.Count(t.ParamsForLoss), t.Shape.Source, t.ModelLoss, units.Count(t.CriticalBatch))
		if t.Tokens > 0 {
			s += fmt.Sprintf("; compute-optimal budget %s tokens", units.Count(t.Tokens))
		}
		row("scaling", s)
		if r.Search != nil {
			row("batch", fmt.Sprintf("global batch %d from RAMP §7.2.1's rule (local batch %d from %s, DP %d)",
				r.Auto.Config.GlobalBatch, r.Auto.LocalBatch, r.Auto.LocalBatchSource, r.Auto.Config.DP))
		} else {
			row("local batch", fmt.Sprintf("%d per DP rank, from %s", r.Auto.LocalBatch, r.Auto.LocalBatchSource))
		}
	}
	mbs := "micro-batches"
	if c.MicroBatches() == 1 {
		mbs = "micro-batch"
	}
	row("training", fmt.Sprintf("global batch %d = DP %d × %d %s of %d; %s steps; %s tokens; %s, %s",
		c.GlobalBatch, c.DP, c.MicroBatches(), mbs, c.MicroBatch, units.Count(r.Steps), units.Count(r.Tokens), c.Precision, c.Optimizer))
	compute := fmt.Sprintf("6ND = %v", units.FLOP(r.TrainingFLOP))
	if r.Target != nil {
		compute += fmt.Sprintf(" (C_min at a small batch: %v)", units.FLOP(r.ComputeMinFLOP))
	}
	row("compute", compute)
	sp := "off"
	if c.SeqParallel {
		sp = "on"
	}
	cp := ""
	if c.CPs() > 1 {
		cp = fmt.Sprintf(" × CP %d", c.CPs())
	}
	offload := ""
	if c.OffloadLayers > 0 {
		offload = fmt.Sprintf("; activations of the first %d layers offloaded to host memory", c.OffloadLayers)
	}
	row("parallelism", fmt.Sprintf("%d GPUs = DP %d × TP %d%s × PP %d (interleave %d); sequence parallel %s; recompute %s%s",
		c.GPUs(), c.DP, c.TP, cp, c.PP, c.Interleave, sp, c.Recompute, offload))
	row("software", describeStack(r))
	if s := r.Search; s != nil {
		row("layout", "search: "+describeSearch(*s))
	}
	if m := c.MoE; m.Experts > 0 {
		var extra string
		if m.SharedHidden > 0 {
			extra += fmt.Sprintf(", shared experts of %d", m.SharedHidden)
		}
		if m.DenseLayers > 0 {
			extra += fmt.Sprintf(", the first %d layers dense", m.DenseLayers)
		}
		row("experts", fmt.Sprintf("%d per layer, top-%d, capacity factor %g, hidden %d%s; EP %d (%d per GPU)",
			m.Experts, m.TopK, m.CapacityFactor, m.ExpertHidden, extra, m.EP, m.ExpertsPerGPU()))
	}
	if r.Cluster != nil {
		row("cluster", describeCluster(*r.Cluster))
	}
	gemm := pct(r.Efficiency.MatMul)
	if ceil, ok := roofline.GEMMCeiling(r.Efficiency.GEMM, r.GPU, c.Precision.DType()); ok {
		gemm = "shape-aware: measured " + pct(ceil) + " × tile and wave quantisation"
	}
	row("gpu", fmt.Sprintf("%s: %s (roofline, GEMM %s / vector %s of peak, HBM %s)", r.GPU.Name, r.GPU.Description,
		gemm, pct(r.Efficiency.Vector), pct(r.Efficiency.Memory)))
	if r.Profile != "roofline" {
		row("profile", r.Profile)
	}
	row("network", r.Network+" "+changedParams(r.Network, r.NetConfig))
	if r.MemoryWarning != "" {
		row("memory", "NOT CHECKED (--ignore-memory): "+r.MemoryWarning)
	}
	fmt.Fprintln(tw)
	if st := r.Step; st != nil {
		row("1F1B step", fmt.Sprintf("%v = max(forward %v, backward %v) + p2p %v (stage %d; one micro-batch per stage, HammingMesh's \"iteration\")",
			st.Total, st.Forward, st.Backward, st.P2P, st.Stage))
	}
	if err := writeResultTable(b, tw, res); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeResultTable renders what every workload shares: iteration, breakdown, time to accuracy,
// throughput, memory and the collectives table. tw is the open key/value table.
func writeResultTable(b *strings.Builder, tw *tabwriter.Writer, res estimator.Result) error {
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	it := res.Iteration
	row("iteration", fmt.Sprintf("%v = compute %v + exposed communication %v + pipeline bubble %v (communication %s)",
		it.Total, it.Compute, it.ExposedComm, it.Bubble, pct(it.CommFraction)))
	bd := res.Breakdown
	compute := fmt.Sprintf("forward %v, recompute %v, backward %v, optimizer %v", bd.Forward, bd.Recompute, bd.Backward, bd.Optimizer)
	if bd.OffloadWait > 0 {
		compute += fmt.Sprintf(", waiting for offloaded activations %v", bd.OffloadWait)
	}
	if bd.CommKernels > 0 {
		compute += fmt.Sprintf(", SMs held by overlapped communication %v", bd.CommKernels)
	}
	row("  compute", compute)
	// Every dimension with exposed time, and always the pipeline and the gradients.
	var comm []string
	for _, d := range estimator.CommOrder {
		x := *bd.Comm(d)
		if x == 0 && d != partition.DimPP && d != partition.DimDP {
			continue
		}
		s := fmt.Sprintf("%s %v", d.Title(), x)
		if d == partition.DimDP && bd.DPShared > 0 {
			s += fmt.Sprintf(" (%v of it from links shared with the backward pass)", bd.DPShared)
		}
		comm = append(comm, s)
	}
	row("  exposed comm", strings.Join(comm, ", "))
	tta := res.TimeToAccuracy.String()
	if res.Setup > 0 {
		tta += fmt.Sprintf(" (with the network's set-up, %v once per job)", res.Setup)
	}
	row("time to accuracy", tta)
	tput := fmt.Sprintf("%s samples/s", units.Count(res.SamplesPerS))
	if res.TokensPerS > 0 {
		tput = fmt.Sprintf("%s tokens/s", units.Count(res.TokensPerS))
	}
	row("throughput", fmt.Sprintf("%s; %.4g hardware / %.4g model TFLOP/s per GPU; MFU %s",
		tput, float64(res.HWFLOPPerGPU)/1e12, float64(res.ModelFLOPPerGPU)/1e12, pct(res.MFU)))
	m := res.Memory
	row("memory per GPU", fmt.Sprintf("%v of %v: weights %v, gradients %v, optimizer %v, activations %v",
		m.Total, m.Capacity, m.Weights, m.Grads, m.Optimizer, m.Activations))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(b, "\ncollectives per iteration (stage %d)\n", res.Stage)
	ct := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(ct, "name\tkind\tdim\tphase\tsize\tgroup\tcount\talgorithm\ttime\texposed\t")
	for _, col := range res.Collectives {
		fmt.Fprintf(ct, "%s\t%s\t%s\t%s\t%v\t%d\t%d\t%s\t%v\t%v\t\n", col.Name, col.Kind, col.Dim, col.Phase, col.Bytes,
			col.Group, col.Count, col.Cost.Algorithm, col.Time, col.Exposed)
	}
	return ct.Flush()
}

// describeCluster says which cluster a report ran on.
func describeCluster(c job.Cluster) string {
	name := c.Preset
	if name == "" {
		name = "custom"
	}
	size := "sized to the job"
	if c.Nodes > 0 {
		size = fmt.Sprintf("%d nodes = %d GPUs", c.Nodes, c.GPUs())
	}
	return fmt.Sprintf("%s: %d %s per node, %s; network %s", name, c.GPUsPerNode, c.GPU, size, c.Network.Model)
}

// jobDoc is a report's JSON document: the job that produced it (a valid input of `ddlest run`)
// and the report.
type jobDoc struct {
	*job.Job
	Report any `json:"report"`
}

// withJob puts the job beside a report document, when the report has one.
func withJob(r *job.Report, doc any) any {
	if r.Job == nil {
		return doc
	}
	return jobDoc{Job: r.Job, Report: doc}
}

// describeSearch says what a layout search saw and why the other layouts lost.
func describeSearch(s job.SearchSummary) string {
	best := map[job.Rank]string{job.RankTime: "the fastest", job.RankGPUHours: "the fewest GPU-hours", job.RankEnergy: "the least GPU energy"}[s.Rank]
	on := fmt.Sprintf("%d GPUs", s.GPUs)
	if len(s.Sizes) > 0 {
		on = fmt.Sprintf("%s GPUs", joinInts(s.Sizes))
		if len(s.Infeasible) > 0 {
			on += fmt.Sprintf("; none fits on %s", joinInts(s.Infeasible))
		}
	}
	out := fmt.Sprintf("%s of %d layouts that fit in memory (%d enumerated on %s)", best, s.Feasible, s.Enumerated, on)
	l := s.Lost
	out += fmt.Sprintf("; the others lost on memory %d", l.Memory)
	if l.Memory > 0 {
		out += fmt.Sprintf(" (closest %v over)", s.Shortfall)
	}
	return out + fmt.Sprintf(", compute %d, pipeline bubble %d, communication %d", l.Compute, l.Bubble, l.Communication)
}

// joinInts writes whole numbers as a comma list.
func joinInts(xs []int) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(itoa(x))
	}
	return b.String()
}

// describeStack names the job's training software (if a preset) and what it overlaps and sends.
func describeStack(r *job.Report) string {
	st := r.Config.Stack
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	name := "ddlest defaults"
	if r.Job != nil {
		if e, ok := r.Job.Execution.(*job.TransformerExecution); ok && e.Software != "" {
			name = e.Software
		}
	}
	s := fmt.Sprintf("%s: DP overlap %s, async TP %s, pipeline scatter/gather %s, p2p overlap %s, distributed optimizer %s",
		name, onOff(!st.NoDPOverlap), onOff(st.AsyncTP), onOff(st.PPScatterGather), onOff(st.P2POverlap), onOff(st.DistOptimizer))
	if st.DistOptimizer && st.GradAllReduce {
		s += " (gradients all-reduced)"
	}
	if r.Config.GradDType() != r.Config.Precision.DType() {
		s += ", fp32 gradients"
	}
	if st.PPPartition != megatron.PPUniform {
		s += ", stages " + st.PPPartition.String()
	}
	if st.TPCommOverlap {
		s += ", TP communication overlapped with GEMMs"
	}
	if st.GradAccum != partition.AccumGEMM {
		s += ", gradient accumulation " + st.GradAccum.String()
	}
	if st.Attention != megatron.AttnStandard {
		s += ", " + st.Attention.String() + " attention"
	}
	if st.OptimizerStep != partition.StepFused {
		s += ", " + st.OptimizerStep.String() + " optimizer step"
	}
	return s
}
