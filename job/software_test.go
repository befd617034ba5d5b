package job

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/megatron"
	"github.com/ddlest/ddlest/profile/roofline"
)

// TestSoftwarePresets: a software preset sets its defaults, later keys override them within what
// it supports, and a value it does not support stops the job with exit 2 naming the key.
func TestSoftwarePresets(t *testing.T) {
	exec := func(j *Job) *TransformerExecution { return j.Execution.(*TransformerExecution) }
	// The defaults each preset's source gives (configs/software.json).
	want := map[string][5]bool{ // no_dp_overlap, async_tp, pp_scatter_gather, p2p_overlap, distributed_optimizer
		"megatron-2021": {true, false, true, false, false},
		"megatron-2022": {true, true, true, false, false},
		"megatron-core": {false, true, false, true, true},
		"deepspeed":     {true, false, false, false, true},
		"nemo-24.07":    {false, true, false, true, true},
	}
	// NeMo 24.07's recipes keep bf16 gradients in distributed fused Adam, whose step is one fused
	// pass, with the weight-gradient accumulation fused into the GEMM and fused attention
	// (configs/software.json's sources).
	nemo, _ := New("megatron")
	if err := nemo.Set("software", "nemo-24.07"); err != nil {
		t.Fatal(err)
	}
	if e := exec(nemo); e.FP32GradReduce || e.OptimizerStep != partition.StepFused || e.GradAccum != partition.AccumGEMM || e.Attention != megatron.AttnFlash {
		t.Errorf("nemo-24.07: fp32_grad_reduce %v optimizer_step %v grad_accum %v attention %v, want false, fused, gemm, flash", e.FP32GradReduce, e.OptimizerStep, e.GradAccum, e.Attention)
	}
	for name, w := range want {
		j, _ := New("megatron")
		if err := j.Set("software", name); err != nil {
			t.Fatal(err)
		}
		e := exec(j)
		got := [5]bool{e.NoDPOverlap, e.AsyncTP, e.PPScatterGather, e.P2POverlap, e.DistOptimizer}
		if got != w || e.Software != name {
			t.Errorf("%s: settings %v (software %q), want %v", name, got, e.Software, w)
		}
	}
	// An override the software supports is kept; one it does not is refused when the job runs.
	j, _ := New("megatron")
	for _, kv := range [][2]string{{"software", "megatron-core"}, {"layers", "2"}, {"hidden", "1024"}, {"heads", "8"},
		{"global_batch", "8"}, {"steps", "1"}, {"distributed_optimizer", "false"}} {
		if err := j.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if e := exec(j); e.DistOptimizer || !e.P2POverlap {
		t.Errorf("megatron-core then distributed_optimizer=false: dist %v p2p %v, want false, true", e.DistOptimizer, e.P2POverlap)
	}
	if _, err := Run(j); err != nil {
		t.Fatalf("supported override: %v", err)
	}
	for _, c := range []struct{ software, key, value, named string }{
		{"megatron-2021", "seq_parallel", "true", "execution.seq_parallel true: software megatron-2021 does not support it"},
		{"megatron-2021", "recompute", "selective", "execution.recompute selective"},
		{"megatron-2022", "no_dp_overlap", "false", "execution.no_dp_overlap false"},
		{"megatron-core", "pp_scatter_gather", "true", "execution.pp_scatter_gather true"},
		{"deepspeed", "interleave", "2", "execution.interleave 2"},
		{"nemo-24.07", "async_tp", "false", "execution.async_tp false"},
		{"nemo-24.07", "optimizer_step", "megatron", "execution.optimizer_step megatron"},
	} {
		j := j.Clone()
		if err := j.Set("software", c.software); err != nil {
			t.Fatal(err)
		}
		if err := j.Set(c.key, c.value); err != nil {
			t.Fatal(err)
		}
		_, err := Run(j)
		if err == nil || errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), c.named) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s with %s=%s: err %v, want one line with exit 2 naming %q", c.software, c.key, c.value, err, c.named)
		}
	}
	if err := j.Set("software", "megatron-2025"); err == nil || errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "megatron-2021, megatron-2022, megatron-core, deepspeed") {
		t.Errorf("unknown preset: %v, want the list of presets", err)
	}
	dp, _ := New("dp")
	if err := dp.Set("software", "deepspeed"); err == nil || errs.ExitCode(err) != errs.ExitUsage {
		t.Errorf("software on a data-parallel job: %v, want exit 2", err)
	}
}

// TestSoftwareDecode: in a job file the software preset applies before the execution's other
// keys, wherever it stands.
func TestSoftwareDecode(t *testing.T) {
	src := "workload: megatron\nexecution:\n  p2p_overlap: false\n  software: megatron-core\n"
	var j Job
	if err := params.Decode([]byte(src), "job.yaml", &j); err != nil {
		t.Fatal(err)
	}
	if e := j.Execution.(*TransformerExecution); e.P2POverlap || !e.DistOptimizer || e.Software != "megatron-core" {
		t.Errorf("decoded %+v, want megatron-core's defaults with p2p_overlap false", e)
	}
	bad := "workload: megatron\nexecution:\n  software: megatron-3000\n"
	if err := params.Decode([]byte(bad), "job.yaml", &j); err == nil || !strings.Contains(err.Error(), "job.yaml:3") || !strings.Contains(err.Error(), "megatron-3000") {
		t.Errorf("unknown software in a file: %v, want its line and value", err)
	}
}

// TestSoftwareTable: a table entry without a source, an unknown key, an unparsable value or a
// default it does not support is refused with exit 2.
func TestSoftwareTable(t *testing.T) {
	for _, c := range []struct{ table, want string }{
		{`[{"name":"x","source":"s","settings":[{"key":"async_tp","default":"true"}]}]`, "no source"},
		{`[{"name":"x","source":"s","settings":[{"key":"asynch_tp","default":"true","source":"s"}]}]`, `"asynch_tp": not an execution key`},
		{`[{"name":"x","source":"s","settings":[{"key":"interleave","supported":["two"],"source":"s"}]}]`, "interleave"},
		{`[{"name":"x","source":"s","settings":[{"key":"async_tp","default":"true","supported":["false"],"source":"s"}]}]`, "not among its supported"},
		{`[{"name":"x","settings":[]}]`, "needs a name and a source"},
		{`[{"name":"x","source":"s","setings":[]}]`, "setings"},
	} {
		_, err := decodeSoftware([]byte(c.table), "software.json")
		if err == nil || errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want exit 2 with %q", c.table, err, c.want)
		}
	}
	if _, err := Softwares(); err != nil {
		t.Fatalf("configs/software.json: %v", err)
	}
}

// TestSoftwareSearch: a search only enumerates what the software supports (DeepSpeed: one chunk
// per stage; Megatron-LM 2021: no sequence parallelism, no selective recomputation).
func TestSoftwareSearch(t *testing.T) {
	for _, c := range []struct {
		software string
		ok       func(megatron.Config) bool
	}{
		{"deepspeed", func(c megatron.Config) bool { return c.Interleave == 1 }},
		{"megatron-2021", func(c megatron.Config) bool { return !c.SeqParallel && c.Recompute != megatron.RecomputeSelective }},
	} {
		j, _ := New("megatron")
		for _, kv := range [][2]string{{"software", c.software}, {"layers", "8"}, {"hidden", "1024"}, {"heads", "16"},
			{"global_batch", "64"}, {"steps", "1"}, {"layout", "search"}, {"gpus", "16"}} {
			if err := j.Set(kv[0], kv[1]); err != nil {
				t.Fatal(err)
			}
		}
		o, err := megatronWorkload{}.options(j)
		if err != nil {
			t.Fatal(err)
		}
		n, bad := 0, 0
		o.Search.Visit = func(cand Candidate) {
			n++
			if !c.ok(cand.Config) {
				bad++
			}
		}
		if _, err := Megatron(o); err != nil {
			t.Fatal(err)
		}
		if n == 0 || bad > 0 {
			t.Errorf("%s: %d layouts enumerated, %d the software does not support", c.software, n, bad)
		}
	}
}

// TestStackDirections: each software setting moves the estimate the way its source says, by the
// amount the estimator's formulas (estimator/doc.go) give from one call's price, on 4 DGX A100
// (TP 8 in a node, PP 2 and DP 2 across nodes; the pipeline and the gradients cross InfiniBand).
func TestStackDirections(t *testing.T) {
	cl, err := LookupCluster("dgx-a100")
	if err != nil {
		t.Fatal(err)
	}
	base := megatron.Config{Layers: 4, Hidden: 4096, Heads: 32, Seq: 2048, GlobalBatch: 16, MicroBatch: 1,
		TP: 8, PP: 2, DP: 2, Interleave: 1, Recompute: megatron.RecomputeNone, Precision: megatron.MixedBF16, Optimizer: megatron.Adam,
		DPBucketBytes: 16 * units.MiB} // 8M-parameter buckets: a layer's 25M fill three during the backward pass
	run := func(c megatron.Config) estimator.Result {
		t.Helper()
		o := MegatronOptions{Mode: ModeExplicit, GPU: "a100-80gb", Efficiency: roofline.DefaultEfficiency, Cluster: &cl, Config: c, Steps: 1}
		r, err := Megatron(o)
		if err != nil {
			t.Fatal(err)
		}
		return r.Result
	}
	// coll is the named collective: its first entry, with the time of all its entries (a
	// gradient reduction's full buckets and its remainder are two).
	coll := func(r estimator.Result, name string) estimator.CollectiveTime {
		var out estimator.CollectiveTime
		for _, c := range r.Collectives {
			if c.Name == name {
				if out.Name == "" {
					out = c
				} else {
					out.Time += c.Time
				}
			}
		}
		if out.Name == "" {
			t.Fatalf("no collective %s", name)
		}
		return out
	}
	const mbs, pp = 8, 2
	hops := float64(2*mbs + 2*(pp-1)) // every send/receive of a stage plus fill and drain

	// Scatter/gather: 1/8 of the activation over InfiniBand, then an NVLink all-gather.
	plain := run(base)
	c := base
	c.PPScatterGather = true
	sg := run(c)
	p2p, gather := coll(sg, "pp.p2p"), coll(sg, "pp.gather")
	if want := hops * float64(p2p.Cost.Total+gather.Cost.Total); !near(float64(sg.Breakdown.PP), want) {
		t.Errorf("scatter/gather: pipeline %v, want (2M + 2(p−1))·(t_p2p + t_gather) = %v", sg.Breakdown.PP, want)
	}
	if !(sg.Breakdown.PP < plain.Breakdown.PP) {
		t.Errorf("scatter/gather should cut the pipeline's time across nodes: %v ≥ %v", sg.Breakdown.PP, plain.Breakdown.PP)
	}

	// Overlapped sends (interleaved schedule): only the 2(p−1) fill and drain hops stay.
	c = base
	c.Interleave = 2
	blocking := run(c)
	c.P2POverlap = true
	overlapped := run(c)
	one := float64(coll(overlapped, "pp.p2p").Cost.Total)
	if want := float64(2*(pp-1)) * one; !near(float64(overlapped.Breakdown.PP), want) {
		t.Errorf("overlapped p2p: pipeline %v, want 2(p−1)·t_p2p = %v", overlapped.Breakdown.PP, want)
	}
	if want := float64(2*2*mbs+2*(pp-1)) * one; !near(float64(blocking.Breakdown.PP), want) {
		t.Errorf("blocking p2p: pipeline %v, want (2vM + 2(p−1))·t_p2p = %v", blocking.Breakdown.PP, want)
	}

	// Gradients after the backward pass are exposed whole; overlapped buckets hide behind it.
	c = base
	c.NoDPOverlap = true
	after := run(c)
	if !(plain.Breakdown.DP < after.Breakdown.DP) {
		t.Errorf("overlapped gradients %v should expose less than after the backward pass %v", plain.Breakdown.DP, after.Breakdown.DP)
	}

	// Distributed optimizer without overlap: the reduce-scatter and the parameter all-gather are
	// both exposed; the step updates 1/DP of the parameters.
	c.DistOptimizer = true
	dist := run(c)
	rs, ag := coll(dist, "dp.grads"), coll(dist, "dp.params")
	if rs.Kind.String() != "reduce-scatter" || ag.Kind.String() != "all-gather" {
		t.Fatalf("distributed optimizer: %v and %v, want reduce-scatter and all-gather", rs.Kind, ag.Kind)
	}
	if want := float64(rs.Time + ag.Time); !near(float64(dist.Breakdown.DP), want) {
		t.Errorf("distributed optimizer after backward: DP %v, want reduce-scatter + all-gather %v", dist.Breakdown.DP, want)
	}
	if !near(float64(dist.Breakdown.Optimizer), float64(after.Breakdown.Optimizer)/2) {
		t.Errorf("optimizer step %v, want half of %v (DP 2)", dist.Breakdown.Optimizer, after.Breakdown.Optimizer)
	}
	c.NoDPOverlap = false
	if d := run(c); !(d.Breakdown.DP < dist.Breakdown.DP) {
		t.Errorf("overlapped reduce-scatter and parameter gather %v should expose less than %v", d.Breakdown.DP, dist.Breakdown.DP)
	}

	// Gradient accumulation in a pass of its own (DeepSpeed's BF16_Optimizer.update_hp_grads):
	// every micro-batch's backward pass reads the bf16 gradient, writes its fp32 copy, reads it
	// and the fp32 buffer and writes the buffer, 18 B per parameter of the stage (2 layers of
	// 12h²/8 + 7h/8 + 6h), at 85% of the A100 80GB's 2,039 GB/s (datasheet; the roofline's
	// memory efficiency).
	const hbm = 2.039e12 * 0.85
	stageParams := 2 * megatron.LayerParamsPerGPU(4096, 8)
	c = base
	c.FP32GradReduce = true
	fused := run(c)
	c.GradAccum = partition.AccumCastAdd
	castAdd := run(c)
	for i := range castAdd.Stages {
		if got, want := castAdd.Stages[i].Backward-fused.Stages[i].Backward, units.Seconds(18*stageParams/hbm); !near(float64(got), float64(want)) {
			t.Errorf("cast-add: stage %d's backward pass grows by %v per micro-batch, want 18 B × %.0f / HBM = %v", i, got, stageParams, want)
		}
	}
	if !(castAdd.Iteration.Total > fused.Iteration.Total) {
		t.Errorf("an accumulation pass per micro-batch should slow the iteration: %v ≤ %v", castAdd.Iteration.Total, fused.Iteration.Total)
	}

	// The optimizer step as implemented: Megatron-LM's moves 50 B per parameter (bf16 with fp32
	// gradients) where the fused pass moves 28; DeepSpeed's BF16_Optimizer with the state
	// sharded over DP 2 moves 16 B per held and 34 per updated parameter, (16 + 34/2) against
	// the fused step's 28/2. Every pass is memory-bound.
	c = base
	c.FP32GradReduce = true
	c.OptimizerStep = partition.StepMegatron
	if got, want := run(c).Breakdown.Optimizer, fused.Breakdown.Optimizer*50/28; !near(float64(got), float64(want)) {
		t.Errorf("megatron optimizer step %v, want 50/28 of the fused %v = %v", got, fused.Breakdown.Optimizer, want)
	}
	c.OptimizerStep, c.DistOptimizer = partition.StepFused, true
	fusedShard := run(c).Breakdown.Optimizer
	c.OptimizerStep = partition.StepDeepSpeed
	if got, want := run(c).Breakdown.Optimizer, fusedShard*(16+17)/14; !near(float64(got), float64(want)) {
		t.Errorf("deepspeed optimizer step %v, want (16 + 34/2)/(28/2) of the fused %v = %v", got, fusedShard, want)
	}
}

// TestFlashAttentionDirection: FlashAttention (Dao 2023) replaces the attention core's four
// forward kernels (scores GEMM, softmax, dropout, context GEMM) by one that runs half the
// convention's FLOP (causal) at 73% of the A100's 312 TFLOP/s (FlashAttention-2 §4.1): each
// stage's forward pass per micro-batch shrinks by its layers × (the four kernels' time − that
// kernel's), the four priced by the same roofline on the standard plan; and the activations
// lose the s² core, so the stage's memory falls.
func TestFlashAttentionDirection(t *testing.T) {
	cl, err := LookupCluster("dgx-a100")
	if err != nil {
		t.Fatal(err)
	}
	c := megatron.Config{Layers: 4, Hidden: 4096, Heads: 32, Seq: 2048, GlobalBatch: 16, MicroBatch: 1,
		TP: 8, PP: 2, DP: 2, Interleave: 1, Recompute: megatron.RecomputeNone, Precision: megatron.MixedBF16, Optimizer: megatron.Adam}
	run := func(c megatron.Config) *Report {
		t.Helper()
		r, err := Megatron(MegatronOptions{Mode: ModeExplicit, GPU: "a100-80gb", Efficiency: roofline.DefaultEfficiency, Cluster: &cl, Config: c, Steps: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	std := run(c)
	c.Attention = megatron.AttnFlash
	flash := run(c)
	g, _ := roofline.LookupGPU("a100-80gb")
	r, err := roofline.New(g, roofline.DefaultEfficiency, dtype.BF16) // the job's

	if err != nil {
		t.Fatal(err)
	}
	var core units.Seconds
	for _, b := range std.Plan.Stages[0].Blocks {
		if b.Name != "layer" {
			continue
		}
		for _, op := range b.Ops {
			switch op.Name {
			case "attn.scores", "attn.softmax", "attn.dropout", "attn.context":
				core += r.OpTime(op)
			}
		}
	}
	// B·heads/t = 4 heads of d = 128 over s = 2048 on each GPU.
	kernel := units.Seconds(4 * 4 * 2048.0 * 2048 * 128 / 2 / (312e12 * 0.73))
	for i := range flash.Result.Stages {
		got := flash.Result.Stages[i].Forward - std.Result.Stages[i].Forward
		if want := 2 * (kernel - core); !near(float64(got), float64(want)) {
			t.Errorf("stage %d: forward changes by %v per micro-batch, want 2 layers × (%v − %v) = %v", i, got, kernel, core, want)
		}
		if !(got < 0) {
			t.Errorf("stage %d: flash attention should shorten the forward pass (%v)", i, got)
		}
		if !(flash.Plan.Stages[i].Memory.Activations < std.Plan.Stages[i].Memory.Activations) {
			t.Errorf("stage %d: activations %v with flash attention, want below %v", i, flash.Plan.Stages[i].Memory.Activations, std.Plan.Stages[i].Memory.Activations)
		}
	}
	if flash.Plan.ModelFLOP != std.Plan.ModelFLOP {
		t.Errorf("model FLOP %v with flash attention, want the convention's %v", flash.Plan.ModelFLOP, std.Plan.ModelFLOP)
	}
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(math.Abs(want), 1e-12) }

// FP8 training shortens the iteration by its GEMMs only: on an H100 each compute-bound FP8 GEMM
// takes 792.1/1402.6 = 0.565 of its bf16 time (the two measured MAMF ceilings, configs/gemm.json,
// with the same tile and wave quantisation), and the casts, the bf16 attention core and the
// other kernels do not get faster. So the compute time falls, but to no less than 0.565 of it.
func TestFP8Direction(t *testing.T) {
	cl, err := LookupCluster("dgx-h100")
	if err != nil {
		t.Fatal(err)
	}
	c := megatron.Config{Layers: 4, Hidden: 4096, Heads: 32, Seq: 4096, GlobalBatch: 16, MicroBatch: 1, TP: 4, PP: 1, DP: 4,
		Interleave: 1, Recompute: megatron.RecomputeNone, Precision: megatron.MixedBF16, Optimizer: megatron.Adam,
		Arch: megatron.Arch{KVHeads: 8, FFNHidden: 14336, MLP: megatron.MLPSwiGLU, Norm: megatron.NormRMS, NoBias: true, Positions: megatron.PosRoPE}}
	run := func(p megatron.Precision) estimator.Result {
		t.Helper()
		c := c
		c.Precision = p
		r, err := Megatron(MegatronOptions{Mode: ModeExplicit, GPU: "h100", Efficiency: roofline.DefaultEfficiency, Cluster: &cl, Config: c, Steps: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r.Result
	}
	bf, f8 := run(megatron.MixedBF16), run(partition.MixedFP8)
	compute := func(r estimator.Result) float64 {
		return float64(r.Breakdown.Forward + r.Breakdown.Backward + r.Breakdown.Recompute)
	}
	if ratio := compute(f8) / compute(bf); ratio >= 1 || ratio < 792.1/1402.6 {
		t.Errorf("FP8 compute %.3f of bf16's, want in [%.3f, 1)", ratio, 792.1/1402.6)
	}
	if f8.Iteration.Total >= bf.Iteration.Total {
		t.Errorf("FP8 iteration %v, bf16 %v", f8.Iteration.Total, bf.Iteration.Total)
	}
}
