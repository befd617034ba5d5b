package megatron

import (
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
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
