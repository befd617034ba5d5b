package megatron

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
)

// TestPPScatterGather: SC'21 §4.1 — with TP > 1 and no sequence parallelism each tensor-parallel
// rank sends 1/TP of the activation to the next stage, which all-gathers the whole of it over its
// tensor-parallel group. Hand count for baseConfig (b = 2, s = 2048, h = 1024, bf16, TP 4, PP 2,
// DP 4, M = 64/(4·2) = 8 micro-batches): the activation is 2·2048·1024·2 B = 8 MiB; each
// rank sends 2 MiB; the gather is an all-gather of the 8 MiB output over the 4 TP ranks at stride 1;
// both run 2·M = 16 times per stage (forward activations and backward gradients).
func TestPPScatterGather(t *testing.T) {
	const whole = 2 * 2048 * 1024 * 2
	c := baseConfig()
	plain := build(t, c)
	if plain.P2P.Bytes != whole || plain.P2PGather != nil {
		t.Fatalf("off: p2p %v, gather %v; want the whole %d B and none", plain.P2P.Bytes, plain.P2PGather, whole)
	}
	c.PPScatterGather = true
	p := build(t, c)
	if p.P2P.Bytes != whole/4 || p.P2P.Count != 16 {
		t.Errorf("p2p %v × %d, want %d B × 16", p.P2P.Bytes, p.P2P.Count, whole/4)
	}
	g := p.P2PGather
	if g == nil || g.Op != network.AllGather || g.Bytes != whole || g.Group != (network.Group{Size: 4, Stride: 1}) || g.Count != 16 {
		t.Fatalf("gather %+v, want an all-gather of %d B over 4 ranks at stride 1, 16 times", g, whole)
	}
	// Sequence parallelism already sends 1/TP (the sequence shard): nothing to scatter.
	c.SeqParallel = true
	sp := build(t, c)
	if sp.P2P.Bytes != whole/4 || sp.P2PGather != nil {
		t.Errorf("with seq_parallel: p2p %v, gather %v; want %d B and no gather", sp.P2P.Bytes, sp.P2PGather, whole/4)
	}
}

// TestP2POverlap: Megatron-Core's overlap_p2p_comm exists for the interleaved schedule only.
func TestP2POverlap(t *testing.T) {
	c := baseConfig()
	c.P2POverlap = true
	if build(t, c).P2POverlap {
		t.Error("interleave 1: the non-interleaved schedule refuses overlap_p2p_comm, want no overlap")
	}
	c.Layers, c.Interleave = 8, 2
	if !build(t, c).P2POverlap {
		t.Error("interleave 2: want overlapped sends")
	}
}

// TestDistOptimizer: the distributed optimizer (Megatron-LM dist_optimizer.md; ZeRO stage 1)
// reduce-scatters the gradients, updates 1/DP of the parameters and all-gathers them, and keeps
// 1/DP of the optimizer state: with Adam in mixed precision 12 B per parameter (fp32 master
// weights, momentum, variance; ZeRO §3.1 K = 12) becomes 12/DP.
func TestDistOptimizer(t *testing.T) {
	c := baseConfig()
	plain := build(t, c)
	c.DistOptimizer = true
	p := build(t, c)
	for i, st := range p.Stages {
		ref := plain.Stages[i]
		if len(st.Grads) != 1 || st.Grads[0].Op != network.ReduceScatter || st.Grads[0].Bytes != ref.Grads[0].Bytes {
			t.Fatalf("stage %d grads %+v, want one reduce-scatter of the all-reduce's %v", i, st.Grads, ref.Grads[0].Bytes)
		}
		if len(st.ParamGathers) != 1 {
			t.Fatalf("stage %d: %d parameter gathers, want 1", i, len(st.ParamGathers))
		}
		ag := st.ParamGathers[0]
		if ag.Op != network.AllGather || ag.Bytes != units.Bytes(st.Params)*2 || ag.Group != ref.Grads[0].Group || ag.Name != "dp.params" || !ag.Overlap {
			t.Errorf("stage %d gather %+v, want an overlapped all-gather of the %g bf16 parameters over the DP group", i, ag, st.Params)
		}
		if want := units.Bytes(st.Params) * 12 / 4; st.Memory.Optimizer != want {
			t.Errorf("stage %d optimizer state %v, want 12 B × %g params / DP 4 = %v", i, st.Memory.Optimizer, st.Params, want)
		}
		if st.Memory.Weights != ref.Memory.Weights || st.Memory.Grads != ref.Memory.Grads {
			t.Errorf("stage %d: weights and gradients are not sharded (dist_optimizer.md), got %v %v", i, st.Memory.Weights, st.Memory.Grads)
		}
		if got, want := st.PerIteration[0].FLOP, ref.PerIteration[0].FLOP/4; got != want {
			t.Errorf("stage %d optimizer step %v FLOP, want 1/DP of %v", i, got, ref.PerIteration[0].FLOP)
		}
	}
	c.NoDPOverlap = true
	if build(t, c).Stages[0].ParamGathers[0].Overlap {
		t.Error("no_dp_overlap: the parameter gather should not overlap the next forward pass")
	}
	if got, want := PeakMemory(c), p.MaxMemory(); got != want {
		t.Errorf("closed-form peak footprint %v, want the built plan's %v", got, want)
	}
}

// TestPPEmbeddingSlot: BLOOM-176B's --pp-partition-method 'type:transformer|embedding'
// (bigscience train/tr11-176B-ml/README.md, "Architecture"): 70 layers on 12 stages give
// "pp rank 0: [embed | 5 transformer blocks], pp rank 1 … 10: [6 transformer blocks],
// pp rank 11: [5 transformer blocks | embed]". Parameters (README "Sizes of each layer", TP 1):
// a layer is 12h² + 13h = 2,466,437,120 and the embedding v·h = 250880·14336 = 3,596,615,680;
// ddlest's GPT model adds the learned position table s·h = 2048·14336 = 29,360,128 to the first
// stage (BLOOM's ALiBi has none) and the final LayerNorm 2h = 28,672 plus the tied output
// weights (another v·h) to the last.
func TestPPEmbeddingSlot(t *testing.T) {
	c := Config{Layers: 70, Hidden: 14336, Heads: 112, Seq: 2048, Vocab: 250880, GlobalBatch: 2048, MicroBatch: 2,
		TP: 1, PP: 12, DP: 8, Interleave: 1, Recompute: RecomputeFull, Precision: MixedBF16, Optimizer: Adam,
		Capacity: 800 * units.GB, Stack: Stack{PPPartition: PPEmbeddingSlot}}
	p := build(t, c)
	const layer, embed, pos = 2466437120.0, 3596615680.0, 29360128.0
	want := map[int]float64{0: 5*layer + embed + pos, 1: 6 * layer, 10: 6 * layer, 11: 5*layer + embed + 28672}
	for i, w := range want {
		if got := p.Stages[i].Params; got != w {
			t.Errorf("stage %d: %.0f parameters, want %.0f", i, got, w)
		}
	}
	layers := 0
	for i := range p.Stages {
		layers += c.StageLayers(i)
	}
	if layers != 70 {
		t.Errorf("the stages hold %d layers, want 70", layers)
	}
	if got, want := PeakMemory(c), p.MaxMemory(); got != want {
		t.Errorf("closed-form peak footprint %v, want the built plan's %v", got, want)
	}
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.PP = 5 }, "--pp 5 does not divide the 70 layers + embedding + head = 72 slots"},
		{func(c *Config) { c.PP = 36; c.Interleave = 2 }, "one model chunk per stage"},
		{func(c *Config) { c.Vocab = 0 }, "needs an embedding"},
	} {
		bad := c
		tc.edit(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", err, tc.want)
		}
	}
	// A search enumerates the pipeline depths that split 72 slots into stages of ≥ 2 (on 72
	// GPUs, a global batch of 576 that every DP = 72/PP divides).
	var pps []int
	c.GlobalBatch = 576
	Layouts(c, Space{GPUs: 72, TP: []int{1}, MicroBatch: []int{1}, Recompute: []Recompute{RecomputeFull}, SeqParallel: []bool{false}, ZeRO: []int{0}}, func(x Config) bool {
		pps = append(pps, x.PP)
		return true
	})
	if want := []int{1, 2, 3, 4, 6, 8, 9, 12, 18, 24, 36}; !slices.Equal(pps, want) {
		t.Errorf("search pipeline depths %v, want %v", pps, want)
	}
}

// TestFP32GradReduce: bf16 training with fp32 gradient accumulation (Megatron-LM's default for
// bf16, DeepSpeed's BF16_Optimizer) reduces 4 B per parameter and keeps a 4 B gradient buffer;
// the distributed optimizer still all-gathers 2 B bf16 parameters. fp16 training is unchanged.
// GradAllReduce turns the distributed optimizer's reduce-scatter into an all-reduce of the same
// buffer (DeepSpeed _bf16_reduce_grads).
func TestFP32GradReduce(t *testing.T) {
	c := baseConfig()
	c.DistOptimizer, c.FP32GradReduce = true, true
	p := build(t, c)
	for i, st := range p.Stages {
		g, ag := st.Grads[0], st.ParamGathers[0]
		if g.Bytes != units.Bytes(st.Params)*4 || g.Op != network.ReduceScatter {
			t.Errorf("stage %d: gradients %v by %v, want a reduce-scatter of 4 B × %g", i, g.Bytes, g.Op, st.Params)
		}
		if ag.Bytes != units.Bytes(st.Params)*2 {
			t.Errorf("stage %d: parameter gather %v, want 2 B × %g", i, ag.Bytes, st.Params)
		}
		if st.Memory.Grads != units.Bytes(st.Params)*4 || st.Memory.Weights != units.Bytes(st.Params)*2 {
			t.Errorf("stage %d: gradients %v, weights %v; want 4 and 2 B per parameter", i, st.Memory.Grads, st.Memory.Weights)
		}
	}
	c.GradAllReduce = true
	if g := build(t, c).Stages[0].Grads[0]; g.Op != network.AllReduce || g.Bytes != units.Bytes(p.Stages[0].Params)*4 {
		t.Errorf("grad_allreduce: %v of %v, want an all-reduce of the same 4 B per parameter", g.Op, g.Bytes)
	}
	c.Precision = MixedFP16
	if st := build(t, c).Stages[0]; st.Grads[0].Bytes != units.Bytes(st.Params)*2 || st.Memory.Grads != units.Bytes(st.Params)*2 {
		t.Errorf("fp16: gradients %v on the wire, %v kept; want 2 B per parameter", st.Grads[0].Bytes, st.Memory.Grads)
	}
}

// Uneven first and last stages (Megatron-Core num_layers_in_first/last_pipeline_stage): Llama 3
// 405B's 126 layers on 16 stages with one layer fewer on the first and the last (Dubey et al.
// 2024 §3.3.2) are 7, then 8 on each of the 14 middle stages (112 / 14), then 7; the plan's
// stages hold exactly those layers, and their parameters add up to the model's.
func TestPPFirstLastLayers(t *testing.T) {
	c := llama3(126, 1024, 3584, 8, 8) // Llama 3 405B's depth on a narrow layer
	c.PP, c.DP, c.GlobalBatch, c.PPFirstLayers, c.PPLastLayers = 16, 1, 32, 7, 7
	want := []int{7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7}
	p := build(t, c)
	total := 0
	for i, st := range p.Stages {
		n := 0
		for _, b := range st.Blocks {
			if b.Name == "layer" {
				n += b.Repeat
			}
		}
		if n != want[i] || c.StageLayers(i) != want[i] {
			t.Errorf("stage %d: %d layers in the plan, StageLayers %d; want %d", i, n, c.StageLayers(i), want[i])
		}
		total += n
	}
	if total != 126 {
		t.Errorf("%d layers in all, want 126", total)
	}
	// 126 − 7 − 6 = 113 layers do not split over 14 stages; with only the first given (6), the
	// other 15 stages split the remaining 120 layers, 8 each.
	c.PPLastLayers = 6
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "leave 113 of the 126 layers to 14 stages") {
		t.Errorf("first 7, last 6: %v", err)
	}
	c.PPFirstLayers, c.PPLastLayers = 6, 0
	if err := c.Validate(); err != nil {
		t.Fatalf("first 6 only: %v", err)
	}
	if got := []int{c.StageLayers(0), c.StageLayers(1), c.StageLayers(15)}; got[0] != 6 || got[1] != 8 || got[2] != 8 {
		t.Errorf("first 6 only: stages %v, want 6, 8, 8", got)
	}
	c.PPFirstLayers = 7 // 119 layers do not split over 15 stages
	for _, bad := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.PPFirstLayers = -1 }, "must be ≥ 0"},
		{func(c *Config) { c.PP, c.DP = 1, 16 }, "need --pp > 1"},
		{func(c *Config) { c.PPPartition = PPEmbeddingSlot }, "replace --pp-partition embedding-slot"},
		{func(c *Config) { c.Interleave = 2 }, "one model chunk per stage"},
		{func(c *Config) { c.PPFirstLayers = 126 }, "leave -7 of the 126 layers"},
	} {
		b := c
		b.PPLastLayers = 7
		bad.mod(&b)
		if err := b.Validate(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v", bad.want, err)
		}
	}
}

// ZeRO stages (Rajbhandari et al. 2020 §5.2, Figure 1): with Ψ parameters on a GPU, K = 12 bytes
// of mixed-precision Adam state and N_d data-parallel ranks, the model states take
// (2 + 2 + K)Ψ (stage 0), 2Ψ + 2Ψ + KΨ/N_d (1, P_os), 2Ψ + (2 + K)Ψ/N_d (2, P_os+g) and
// (2 + 2 + K)Ψ/N_d (3, P_os+g+p; ddlest adds the two layers it keeps gathered). Stage 1 is the
// distributed optimizer. From stage 2 every micro-batch reduce-scatters each layer's gradients
// over the N_d ranks (2 bytes per layer parameter, nccl-tests size), and stage 3 all-gathers its
// parameters before the forward and the backward pass.
func TestZeROStages(t *testing.T) {
	c := baseConfig()
	c.PP, c.DP, c.TP, c.Precision, c.GlobalBatch = 1, 16, 2, MixedFP16, 64
	psi := func(p *partition.Plan) float64 { return p.Stages[0].Params }
	for _, z := range []int{0, 1, 2, 3} {
		c.ZeRO = z
		p := build(t, c)
		m, n, l := p.MaxMemory(), float64(c.DP), layerOf(p)
		state := float64(m.Weights + m.Grads + m.Optimizer)
		var want float64
		switch z {
		case 0:
			want = 16 * psi(p)
		case 1:
			want = 4*psi(p) + 12*psi(p)/n
		case 2:
			want = 2*psi(p) + 14*psi(p)/n
		case 3:
			want = 16*psi(p)/n + 2*2*l.Params
		}
		if rel(state, want) > 1e-12 {
			t.Errorf("ZeRO-%d: model states %g bytes, want %g", z, state, want)
		}
		counts := map[string]int{}
		for _, col := range l.Collectives {
			if strings.HasPrefix(col.Name, "zero.") {
				counts[col.Name] += col.Count
				if col.Group.Size != c.DP || col.Bytes != units.Bytes(2*l.Params) {
					t.Errorf("ZeRO-%d %s: %v over %d ranks, want %v over %d", z, col.Name, col.Bytes, col.Group.Size, units.Bytes(2*l.Params), c.DP)
				}
			}
		}
		want3 := map[string]int{}
		if z >= 2 {
			want3["zero.grads"] = 1
		}
		if z == 3 {
			want3["zero.params.fwd"], want3["zero.params.bwd"] = 1, 1
		}
		if fmt.Sprint(counts) != fmt.Sprint(want3) {
			t.Errorf("ZeRO-%d per-layer collectives %v, want %v", z, counts, want3)
		}
	}
	c.ZeRO, c.PP = 2, 2
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "it needs --pp 1") {
		t.Errorf("ZeRO-2 with PP 2: %v", err)
	}
	c.ZeRO, c.PP = 4, 1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "valid: 0, 1, 2, 3") {
		t.Errorf("ZeRO-4: %v", err)
	}
}
