package megatron

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/scaling"
)

func baseConfig() Config {
	return Config{Layers: 8, Hidden: 1024, Heads: 16, Seq: 2048, Vocab: 51200, GlobalBatch: 64, MicroBatch: 2,
		TP: 4, PP: 2, DP: 4, Interleave: 1, Recompute: RecomputeNone, Precision: MixedBF16, Optimizer: Adam,
		Capacity: 80 * units.GB}
}

func build(t *testing.T, c Config) *partition.Plan {
	t.Helper()
	p, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func layerOf(p *partition.Plan) partition.Block {
	for _, b := range p.Stages[0].Blocks {
		if b.Name == "layer" {
			return b
		}
	}
	panic("no layer block")
}

// sumFLOP adds the FLOP of a block's ops in the given phases whose kind passes keep.
func sumFLOP(b partition.Block, keep func(partition.Op) bool) float64 {
	s := 0.0
	for _, op := range b.Ops {
		if keep(op) {
			s += float64(op.FLOP)
		}
	}
	return s
}

func matmulIn(phases ...partition.Phase) func(partition.Op) bool {
	return func(op partition.Op) bool {
		if !op.Kind.IsMatMul() {
			return false
		}
		for _, ph := range phases {
			if op.Phase == ph {
				return true
			}
		}
		return false
	}
}

// Forward GEMM FLOPs of one layer: 24·b·s·h² + 4·b·s²·h (Narayanan et al. 2021 §5.1; Korthikanti
// et al. 2022 §5), split evenly over the t tensor-parallel ranks. Backward is twice the forward;
// recomputation adds one forward (full) or the attention core's 4·b·s²·h (selective, Megatron-LM
// re-runs QKᵀ and attention over V under checkpoint).
func TestLayerFLOPClosedForm(t *testing.T) {
	for _, rc := range []Recompute{RecomputeNone, RecomputeSelective, RecomputeFull} {
		for _, tp := range []int{1, 2, 4, 8} {
			c := baseConfig()
			c.TP, c.Recompute = tp, rc
			l := layerOf(build(t, c))
			b, s, h := float64(c.MicroBatch), float64(c.Seq), float64(c.Hidden)
			fwd := (24*b*s*h*h + 4*b*s*s*h) / float64(tp)
			if got := sumFLOP(l, matmulIn(partition.Forward)); rel(got, fwd) > 1e-12 {
				t.Errorf("%s tp=%d: forward %g, want %g", rc, tp, got, fwd)
			}
			if got := sumFLOP(l, matmulIn(partition.Backward)); rel(got, 2*fwd) > 1e-12 {
				t.Errorf("%s tp=%d: backward %g, want %g", rc, tp, got, 2*fwd)
			}
			want := map[Recompute]float64{RecomputeNone: 0, RecomputeSelective: 4 * b * s * s * h / float64(tp), RecomputeFull: fwd}[rc]
			if got := sumFLOP(l, matmulIn(partition.Recompute)); math.Abs(got-want) > 1e-9*fwd {
				t.Errorf("%s tp=%d: recompute %g, want %g", rc, tp, got, want)
			}
		}
	}
}

// Model FLOPs per iteration over all GPUs: 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) (Narayanan et al.
// 2021 Eq. 3 without recomputation); with full recomputation the hardware FLOPs are
// 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) (their Eq. 3), the LM head not being recomputed.
func TestModelFLOPNarayanan(t *testing.T) {
	c := baseConfig()
	c.Recompute = RecomputeFull
	p := build(t, c)
	B, s, l, h := float64(c.GlobalBatch), float64(c.Seq), float64(c.Layers), float64(c.Hidden)
	V := float64(PaddedVocab(c.Vocab, c.TP))
	model := 72 * B * s * l * h * h * (1 + s/(6*h) + V/(12*l*h))
	if rel(float64(p.ModelFLOP), model) > 1e-12 {
		t.Errorf("model FLOP %g, want %g", float64(p.ModelFLOP), model)
	}
	var hw float64
	for _, st := range p.Stages {
		for _, b := range st.Blocks {
			hw += sumFLOP(b, matmulIn(partition.Forward, partition.Backward, partition.Recompute)) * float64(b.Repeat)
		}
	}
	hw *= float64(c.MicroBatches() * c.TP * c.DP)
	want := 96 * B * s * l * h * h * (1 + s/(6*h) + V/(16*l*h))
	if rel(hw, want) > 1e-12 {
		t.Errorf("hardware FLOP %g, want %g", hw, want)
	}
}

// Activation memory per layer per micro-batch, Korthikanti et al. 2022 Table 2 (fp16/bf16):
// no recompute sbh(10 + 24/t + 5as/(ht)), with sequence parallelism sbh(34/t + 5as/(ht));
// selective drops the 5as/(ht) term; full keeps 2sbh (2sbh/t with SP).
func TestActivationMemoryKorthikanti(t *testing.T) {
	for _, sp := range []bool{false, true} {
		for _, rc := range []Recompute{RecomputeNone, RecomputeSelective, RecomputeFull} {
			c := baseConfig()
			c.SeqParallel, c.Recompute = sp, rc
			l := layerOf(build(t, c))
			var saved float64
			for _, op := range l.Ops {
				saved += float64(op.Saved)
			}
			s, b, h, a, tp := float64(c.Seq), float64(c.MicroBatch), float64(c.Hidden), float64(c.Heads), float64(c.TP)
			attn := 5 * a * s / (h * tp)
			var coef float64
			switch {
			case rc == RecomputeFull && sp:
				coef = 2 / tp
			case rc == RecomputeFull:
				coef = 2
			case sp:
				coef = 34 / tp
			default:
				coef = 10 + 24/tp
			}
			if rc == RecomputeNone {
				coef += attn
			}
			want := s * b * h * coef
			if rel(saved, want) > 1e-12 {
				t.Errorf("sp=%v %s: saved %g, want %g", sp, rc, saved, want)
			}
		}
	}
}

// Activation offloading (Transformer Engine cpu_offload.py @00382b96: with k of L layers
// offloaded, "peak memory usage of saving activations is (num_layers - num_offloaded_layers) *
// T"): each offloaded layer takes its Korthikanti et al. 2022 Table 2 activations,
// sbh(10 + 24/t + 5as/(ht)) without recomputation, off the footprint, and the offloaded layers
// copy what the layer's ops save. Megatron-Core's checks refuse k ≥ L, PP > 1 and recomputation.
func TestActivationOffloading(t *testing.T) {
	c := baseConfig()
	c.PP, c.DP = 1, 8
	s, b, h, a, tp := float64(c.Seq), float64(c.MicroBatch), float64(c.Hidden), float64(c.Heads), float64(c.TP)
	layer := s * b * h * (10 + 24/tp + 5*a*s/(h*tp))
	none := build(t, c).Stages[0]
	for _, k := range []int{1, 5, c.Layers - 1} {
		c.OffloadLayers = k
		st := build(t, c).Stages[0]
		if got := float64(none.Memory.Activations - st.Memory.Activations); rel(got, float64(k)*layer) > 1e-12 {
			t.Errorf("k = %d: activations %v lower, want %d × %g", k, units.Bytes(got), k, layer)
		}
		l := layerOf(build(t, c))
		if st.Offload != k || rel(float64(l.Saved()), layer) > 1e-12 {
			t.Errorf("k = %d: stage offloads %d layers of %v", k, st.Offload, l.Saved())
		}
	}
	for _, tc := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.OffloadLayers = c.Layers }, "--offload-layers 8: offload 0 (none) to 7 layers"},
		{func(c *Config) { c.OffloadLayers = -1 }, "--offload-layers -1"},
		{func(c *Config) { c.OffloadLayers, c.PP, c.DP = 2, 2, 4 }, "needs --pp 1"},
		{func(c *Config) { c.OffloadLayers, c.Recompute = 2, RecomputeSelective }, "needs --recompute none"},
	} {
		c := baseConfig()
		c.PP, c.DP = 1, 8
		tc.set(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", c.Stack, err, tc.want)
		}
	}
}

func countColl(b partition.Block, op network.Op, ph partition.Phase) int {
	n := 0
	for _, c := range b.Collectives {
		if c.Op == op && c.Phase == ph {
			n += c.Count
		}
	}
	return n
}

// Megatron-LM: 2 all-reduces forward and 2 backward per layer (Shoeybi et al. 2019 §3), plus 2 when
// the forward pass is recomputed; sequence parallelism replaces each by a reduce-scatter and an
// all-gather (Korthikanti et al. 2022 §4.2.2) and re-gathers the column-parallel inputs in the
// backward pass.
func TestTensorParallelCollectives(t *testing.T) {
	c := baseConfig()
	c.Recompute = RecomputeFull
	l := layerOf(build(t, c))
	if f, b, r := countColl(l, network.AllReduce, partition.Forward), countColl(l, network.AllReduce, partition.Backward),
		countColl(l, network.AllReduce, partition.Recompute); f != 2 || b != 2 || r != 2 {
		t.Errorf("TP all-reduces fwd/bwd/recompute = %d/%d/%d, want 2/2/2", f, b, r)
	}
	for _, col := range l.Collectives {
		// S = b·s·h·2 bytes over the TP group.
		if want := units.Bytes(c.MicroBatch * c.Seq * c.Hidden * 2); col.Bytes != want || col.Group.Size != c.TP || col.Group.Stride != 1 {
			t.Errorf("%s: %v over %+v, want %v over TP", col.Name, col.Bytes, col.Group, want)
		}
	}
	c.SeqParallel, c.Recompute = true, RecomputeNone
	l = layerOf(build(t, c))
	if n := countColl(l, network.AllReduce, partition.Forward) + countColl(l, network.AllReduce, partition.Backward); n != 0 {
		t.Errorf("sequence parallel still has %d all-reduces", n)
	}
	if rs, ag := countColl(l, network.ReduceScatter, partition.Forward), countColl(l, network.AllGather, partition.Forward); rs != 2 || ag != 2 {
		t.Errorf("SP forward RS/AG = %d/%d, want 2/2", rs, ag)
	}
	if rs, ag := countColl(l, network.ReduceScatter, partition.Backward), countColl(l, network.AllGather, partition.Backward); rs != 2 || ag != 4 {
		t.Errorf("SP backward RS/AG = %d/%d, want 2/2 (+2 re-gathers)", rs, ag)
	}
	c.TP = 1
	if l = layerOf(build(t, c)); len(l.Collectives) != 0 {
		t.Errorf("TP=1 has collectives %+v", l.Collectives)
	}
}

// Data parallelism: the gradient all-reduce carries every parameter the GPU holds, over the DP
// group (stride TP in Megatron's tp-dp-pp rank order), in Megatron-Core's default buckets.
func TestGradSyncAndPipeline(t *testing.T) {
	c := baseConfig()
	p := build(t, c)
	for _, st := range p.Stages {
		if want := units.Bytes(st.Params * 2); st.Grads[0].Bytes != want {
			t.Errorf("stage %d grads %v, want %v", st.Index, st.Grads[0].Bytes, want)
		}
		if st.Grads[0].Group != (network.Group{Size: 4, Stride: 4}) || !st.Grads[0].Overlap {
			t.Errorf("stage %d grad group %+v overlap %v", st.Index, st.Grads[0].Group, st.Grads[0].Overlap)
		}
		// max(4e7, 1e6·4) parameters × 2 B.
		if st.Grads[0].BucketBytes != 8e7 {
			t.Errorf("bucket %v, want 80 MB", st.Grads[0].BucketBytes)
		}
		// Tied embeddings on the first and last stage: one all-reduce between them.
		if len(st.PerIterationCollectives) != 1 || st.PerIterationCollectives[0].Group != (network.Group{Size: 2, Stride: 16}) {
			t.Errorf("stage %d embedding-group collectives %+v", st.Index, st.PerIterationCollectives)
		}
	}
	// Layers split evenly, embedding first, head last.
	if n := len(p.Stages[0].Blocks); n != 2 || p.Stages[0].Blocks[0].Name != "embedding" || p.Stages[1].Blocks[1].Name != "head" {
		t.Errorf("stage blocks wrong: %d", n)
	}
	// P2P: b·s·h·2 per micro-batch, forward and backward: 2 × (64 / (4 DP × 2)) = 16 per iteration.
	if p.P2P == nil || p.P2P.Bytes != units.Bytes(2*2048*1024*2) || p.P2P.Count != 16 || p.P2P.Group != (network.Group{Size: 2, Stride: 16}) {
		t.Errorf("p2p = %+v", p.P2P)
	}
	// Parameter total: layers (12h²+13h) + padded vocab·h + positions s·h + final LayerNorm 2h.
	total, nonEmb := Params(c)
	h := 1024.0
	if want := 8 * (12*h*h + 13*h); nonEmb != want {
		t.Errorf("non-embedding %g, want %g", nonEmb, want)
	}
	if want := nonEmb + 51200*h + 2048*h + 2*h; total != want {
		t.Errorf("total %g, want %g", total, want)
	}
	// Per-GPU shards add up to the model: TP shards of everything sharded, replicas counted once.
	if got := scaling.NonEmbeddingParams(1024, 8); got != nonEmb {
		t.Errorf("scaling and megatron disagree on N: %g vs %g", got, nonEmb)
	}
}

func TestPaddedVocab(t *testing.T) {
	// GPT-2's 50,257 tokens padded to a multiple of 128·TP (Megatron-LM prints 50304 at TP 1).
	cases := []struct{ v, t, want int }{{50257, 1, 50304}, {50257, 8, 51200}, {0, 8, 0}, {51200, 4, 51200}}
	for _, c := range cases {
		if got := PaddedVocab(c.v, c.t); got != c.want {
			t.Errorf("PaddedVocab(%d, %d) = %d, want %d", c.v, c.t, got, c.want)
		}
	}
}

func TestMemoryFootprint(t *testing.T) {
	c := baseConfig()
	c.PP, c.TP, c.DP, c.GlobalBatch, c.Vocab = 1, 1, 1, 2, 0
	p := build(t, c)
	m := p.Stages[0].Memory
	// Mixed-precision Adam: 2 + 2 + 12 bytes per parameter (ZeRO §3.1).
	P := p.Stages[0].Params
	if m.Weights != units.Bytes(2*P) || m.Grads != units.Bytes(2*P) || m.Optimizer != units.Bytes(12*P) {
		t.Errorf("static memory %+v for %g params", m, P)
	}
	if m.Total != m.Weights+m.Grads+m.Optimizer+m.Activations {
		t.Errorf("total is not the sum: %+v", m)
	}
	// SGD with momentum in fp32: 4 + 4 + 4.
	c.Precision, c.Optimizer = FP32, SGD
	m = build(t, c).Stages[0].Memory
	if m.Optimizer != units.Bytes(4*P) || m.Weights != units.Bytes(4*P) {
		t.Errorf("fp32 SGD memory %+v", m)
	}
	// A plan that does not fit is infeasible (exit 3) and the error shows the footprint.
	c.Capacity = 1 * units.GB
	err := build(t, c).CheckMemory()
	if errs.ExitCode(err) != errs.ExitInfeasible || !strings.Contains(err.Error(), "capacity 1 GB") || !strings.Contains(err.Error(), "optimizer") {
		t.Errorf("CheckMemory = %v", err)
	}
}

// Under 1F1B the first stage holds p micro-batches in flight, the last one; interleaving
// multiplies by 1 + (p−1)/(p·v) (Korthikanti et al. 2022 §4.2.3).
func TestInFlight(t *testing.T) {
	cases := []struct {
		p, v, i, m int
		want       float64
	}{
		{1, 1, 0, 8, 1}, {4, 1, 0, 8, 4}, {4, 1, 3, 8, 1}, {4, 1, 0, 2, 2}, {4, 2, 0, 8, 4 * (1 + 3.0/8)},
	}
	for _, c := range cases {
		if got := inFlight(c.p, c.v, c.i, c.m); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("inFlight%+v = %g", c, got)
		}
	}
}

func TestValidateErrors(t *testing.T) {
	cases := []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.TP = 3; c.Heads = 64; c.Hidden = 4096 }, "--tp 3 does not divide the 64 heads; valid: 1, 2, 4, 8, 16, 32, 64"},
		{func(c *Config) { c.TP = 0 }, "--tp 0 must be ≥ 1"},
		{func(c *Config) { c.Heads = 24 }, "--heads 24 does not divide --hidden 1024"},
		{func(c *Config) { c.PP = 1; c.Interleave = 2 }, "--interleave 2 needs --pp > 1"},
		{func(c *Config) { c.PP = 3 }, "does not divide the 8 layers"},
		{func(c *Config) { c.GlobalBatch = 10 }, "--global-batch 10 is not a multiple"},
		{func(c *Config) { c.SeqParallel = true; c.Seq = 1022 }, "--seq-parallel needs"},
		{func(c *Config) { c.Vocab = -1 }, "--vocab -1"},
	}
	for _, tc := range cases {
		c := baseConfig()
		tc.mod(&c)
		_, err := Build(c)
		if err == nil || errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want usage error containing %q", err, tc.want)
		}
	}
	// All problems at once, on one line.
	c := baseConfig()
	c.TP, c.DP = 0, 0
	err := c.Validate()
	if !strings.Contains(err.Error(), "--tp 0") || !strings.Contains(err.Error(), "--dp 0") || strings.Contains(err.Error(), "\n") {
		t.Errorf("combined error %q", err)
	}
}

func TestAutoErrors(t *testing.T) {
	tg, _ := scaling.Resolve(scaling.DefaultRequest(1.8))
	base := AutoConfig{Target: tg, MaxGPUs: DefaultMaxGPUs, ParamsPerGPU: DefaultParamsPerGPU, Capacity: 80 * units.GB,
		Recompute: RecomputeFull}
	a := base
	a.MaxGPUs = 0
	if _, err := Auto(a); errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "--max-gpus 0") {
		t.Errorf("max-gpus 0: %v", err)
	}
	// CE 1.8 needs MP 32 (Table 9); 16 GPUs cannot hold it.
	a = base
	a.MaxGPUs = 16
	if _, err := Auto(a); errs.ExitCode(err) != errs.ExitInfeasible {
		t.Errorf("max-gpus 16: %v", err)
	}
	a = base
	a.MicroBatch = 3 // Table 9's local batch is 170
	if _, err := Auto(a); errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "170") {
		t.Errorf("micro-batch 3: %v", err)
	}
	a = base
	a.Capacity = 10 * units.GB // 1B params × 16 B do not fit
	if _, err := Auto(a); errs.ExitCode(err) != errs.ExitInfeasible {
		t.Errorf("10 GB: %v", err)
	}
}

// Auto mode fills memory: the chosen micro-batch fits and the next divisor of the local batch
// would not.
func TestAutoMicroBatchFillsMemory(t *testing.T) {
	tg, _ := scaling.Resolve(scaling.DefaultRequest(1.8))
	res, err := Auto(AutoConfig{Target: tg, MaxGPUs: DefaultMaxGPUs, ParamsPerGPU: DefaultParamsPerGPU,
		Capacity: 80 * units.GB, Vocab: DefaultVocab, Recompute: RecomputeFull})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Config
	if res.LocalBatch%c.MicroBatch != 0 {
		t.Fatalf("micro-batch %d does not divide %d", c.MicroBatch, res.LocalBatch)
	}
	if err := build(t, c).CheckMemory(); err != nil {
		t.Errorf("chosen micro-batch %d does not fit: %v", c.MicroBatch, err)
	}
	for d := c.MicroBatch + 1; d <= res.LocalBatch; d++ {
		if res.LocalBatch%d == 0 {
			c2 := c
			c2.MicroBatch = d
			if build(t, c2).CheckMemory() == nil {
				t.Errorf("micro-batch %d also fits; auto chose %d", d, c.MicroBatch)
			}
			break
		}
	}
}

// The memory accounting auto mode uses without building ops (stageParams, stageActivations)
// agrees with the ops and blocks of the built plan.
func TestMemoryAccountingMatchesGraph(t *testing.T) {
	for _, rc := range []Recompute{RecomputeNone, RecomputeSelective, RecomputeFull} {
		for _, sp := range []bool{false, true} {
			for i, untied := range []bool{false, true, false} {
				c := baseConfig()
				c.Recompute, c.SeqParallel, c.UntiedEmbeddings = rc, sp, untied
				if i == 2 {
					c.Attention = AttnFlash
				}
				p := build(t, c)
				for i, st := range p.Stages {
					var params float64
					var saved, ws units.Bytes
					for _, b := range st.Blocks {
						params += b.Params * float64(b.Repeat)
						for _, op := range b.Ops {
							saved += op.Saved * units.Bytes(b.Repeat)
						}
						ws = max(ws, b.Workspace)
					}
					g := geometry(c)
					perMB, workspace := stageActivations(&g, &c, i)
					split := stageParams(&g, &c, i)
					if params != st.Params || params != split[0]+split[1] || saved != perMB || ws != workspace {
						t.Errorf("%s sp=%v untied=%v %s stage %d: params %g/%g saved %v/%v workspace %v/%v", rc, sp, untied, c.Attention, i,
							params, split[0]+split[1], saved, perMB, ws, workspace)
					}
				}
			}
		}
	}
}

func TestBuckets(t *testing.T) {
	cases := []struct {
		bytes, bucket units.Bytes
		full          int
		rest          units.Bytes
	}{
		{100, 30, 3, 10}, {90, 30, 3, 0}, {10, 30, 1, 0}, {10, 0, 1, 0}, {0, 30, 0, 0},
	}
	for _, c := range cases {
		g := partition.GradSync{Collective: network.Collective{Bytes: c.bytes}, BucketBytes: c.bucket}
		if full, rest := g.Buckets(); full != c.full || rest != c.rest {
			t.Errorf("Buckets(%v, %v) = %d, %v; want %d, %v", c.bytes, c.bucket, full, rest, c.full, c.rest)
		}
	}
}

// TestAsyncTP: Megatron-LM's asynchronous dgrad collective (megatron/core/tensor_parallel/
// layers.py, LinearWithGradAccumulationAndAsyncCommunication.backward) keeps the same backward
// traffic, two per layer, each now running during its column-parallel linear's weight-gradient
// GEMM (QKV and fc1), with and without sequence parallelism.
func TestAsyncTP(t *testing.T) {
	for _, sp := range []bool{false, true} {
		c := baseConfig()
		c.SeqParallel = sp
		sync := layerOf(build(t, c))
		c.AsyncTP = true
		async := layerOf(build(t, c))
		op := network.AllReduce
		if sp {
			op = network.ReduceScatter
		}
		if a, s := countColl(async, op, partition.Backward), countColl(sync, op, partition.Backward); a != 2 || s != 2 {
			t.Errorf("sp=%v: backward %v count async %d sync %d, want 2 and 2", sp, op, a, s)
		}
		ops := map[string]bool{}
		for _, o := range async.Ops {
			ops[o.Name] = true
		}
		var behind []string
		for _, col := range async.Collectives {
			if col.Op == op && col.Phase == partition.Backward {
				if col.Overlap != partition.BehindOp || !ops[col.HideBehind] {
					t.Errorf("sp=%v: %s overlap %v behind %q (not an op of the layer)", sp, col.Name, col.Overlap, col.HideBehind)
				}
				behind = append(behind, col.HideBehind)
			}
		}
		if len(behind) != 2 || behind[0] != "attn.qkv.wgrad" || behind[1] != "mlp.fc1.wgrad" {
			t.Errorf("sp=%v: hidden behind %v, want the QKV and fc1 weight-gradient GEMMs", sp, behind)
		}
		for _, col := range sync.Collectives {
			if col.Op == op && col.Phase == partition.Backward && col.Overlap == partition.BehindOp {
				t.Errorf("sp=%v: synchronous %s overlaps", sp, col.Name)
			}
		}
	}
}

// FlashAttention (AttnFlash) replaces the attention core's six forward and backward kernels by
// one per pass, keeps the Megatron-LM FLOP convention (so model and hardware FLOPs are those of
// TestLayerFLOPClosedForm: forward 24·b·s·h² + 4·b·s²·h over t, backward twice that) and never
// holds the s² core: Korthikanti et al. 2022 Table 2's no-recompute sbh(10 + 24/t) without the
// 5as/(ht) term, plus the fp32 row log-sum-exp, 4·a·s·b/t bytes (FlashAttention-2 Algorithm 1);
// with selective recomputation, Table 2's selective value (the kernel re-runs).
func TestFlashAttentionLayer(t *testing.T) {
	for _, rc := range []Recompute{RecomputeNone, RecomputeSelective, RecomputeFull} {
		c := baseConfig()
		c.Recompute, c.Attention, c.Precision = rc, AttnFlash, MixedBF16
		l := layerOf(build(t, c))
		b, s, h, a, tp := float64(c.MicroBatch), float64(c.Seq), float64(c.Hidden), float64(c.Heads), float64(c.TP)
		fwd := (24*b*s*h*h + 4*b*s*s*h) / tp
		if got := sumFLOP(l, matmulIn(partition.Forward)); rel(got, fwd) > 1e-12 {
			t.Errorf("%s: forward %g, want %g", rc, got, fwd)
		}
		if got := sumFLOP(l, matmulIn(partition.Backward)); rel(got, 2*fwd) > 1e-12 {
			t.Errorf("%s: backward %g, want %g", rc, got, 2*fwd)
		}
		var kinds []string
		var saved float64
		for _, op := range l.Ops {
			saved += float64(op.Saved)
			if op.Kind == partition.FusedAttention {
				kinds = append(kinds, op.Name+"/"+op.Phase.String())
			}
			if op.Kind == partition.Softmax || op.Kind == partition.BatchedMatMul || op.Name == "attn.dropout" {
				t.Errorf("%s: unfused attention op %s/%s with flash attention", rc, op.Name, op.Phase)
			}
		}
		want := map[Recompute]string{RecomputeNone: "attn.flash/fwd attn.flash.bwd/bwd", RecomputeSelective: "attn.flash/fwd attn.flash/recompute attn.flash.bwd/bwd",
			RecomputeFull: "attn.flash/fwd attn.flash/recompute attn.flash.bwd/bwd"}[rc]
		if got := strings.Join(kinds, " "); got != want {
			t.Errorf("%s: fused attention ops %q, want %q", rc, got, want)
		}
		wantSaved := map[Recompute]float64{RecomputeNone: s*b*h*(10+24/tp) + 4*a*s*b/tp, RecomputeSelective: s * b * h * (10 + 24/tp), RecomputeFull: 2 * s * b * h}[rc]
		if rel(saved, wantSaved) > 1e-12 {
			t.Errorf("%s: saved %g, want %g", rc, saved, wantSaved)
		}
	}
	c := baseConfig()
	c.Attention, c.Precision = AttnFlash, FP32
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--attention flash runs in fp16 or bf16") {
		t.Errorf("flash attention in fp32: %v, want a refusal naming the precisions", err)
	}
}
