package megatron

import (
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
)

// TestUserbuffersDrivers: under TP communication overlap each sequence-parallel collective is
// moved as Transformer Engine's initialize_ub sets its GEMM up by default (transformer_engine/
// pytorch/module/base.py of 2024): ring_exchange (qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad) on
// copy engines, pipeline (proj_fprop, fc2_fprop) and bulk (qkv_dgrad, qkv_wgrad, fc1_dgrad,
// fc1_wgrad) in add_ub's default num_sm = 16 SMs. Without the overlap NCCL moves them (no driver).
func TestUserbuffersDrivers(t *testing.T) {
	ce, sms := partition.Driver{Set: true}, partition.Driver{Set: true, SMs: 16}
	want := map[string]partition.Driver{
		"sp.f.fwd":        ce,  // all-gathers before qkv_fprop and fc1_fprop
		"sp.g.fwd":        sms, // reduce-scatters after proj_fprop and fc2_fprop
		"sp.g.bwd":        ce,  // output-gradient all-gathers of proj_dgrad and fc2_dgrad
		"sp.f.bwd":        sms, // input-gradient reduce-scatters during qkv_wgrad and fc1_wgrad
		"sp.regather.bwd": sms, // input re-gathers during qkv_dgrad and fc1_dgrad
	}
	c := Config{Layers: 2, Hidden: 1024, Heads: 16, Seq: 2048, Vocab: 32000, GlobalBatch: 2, MicroBatch: 1,
		TP: 2, PP: 1, DP: 1, Interleave: 1, SeqParallel: true, Precision: MixedBF16, Optimizer: Adam, Capacity: 80 * units.GB}
	for _, overlap := range []bool{false, true} {
		c.TPCommOverlap = overlap
		seen := map[string]int{}
		for _, k := range layerOf(build(t, c)).Collectives {
			d, ok := want[k.Name]
			if !ok {
				continue
			}
			seen[k.Name]++
			if !overlap {
				d = partition.Driver{}
			}
			if k.Driver != d {
				t.Errorf("overlap %v: %s behind %q moved by %+v, want %+v", overlap, k.Name, k.HideBehind, k.Driver, d)
			}
		}
		if overlap && len(seen) != len(want) {
			t.Errorf("overlapped layer has %v of the collectives %v", seen, want)
		}
	}
}
