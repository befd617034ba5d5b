package estimator

import (
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
)

// copyProfile is unitProfile with a host link of 1 byte per second (a copy of b bytes takes b
// seconds); rate 0 is a GPU without a measured link.
type copyProfile struct {
	unitProfile
	rate float64
}

func (p copyProfile) HostCopyTime(b units.Bytes) (units.Seconds, bool) {
	return units.Seconds(float64(b) / p.rate), p.rate > 0
}

// offloadPlan is one stage of L layers (forward 1 s, backward 2 s, saving copy bytes) between an
// embedding and a head that are not layers, one micro-batch, k layers offloaded.
func offloadPlan(L, k int, copy units.Bytes) *partition.Plan {
	f, b := op("f", partition.Forward, 1), op("b", partition.Backward, 2)
	f.InLayer, b.InLayer, f.Saved = true, true, copy
	return &partition.Plan{
		Layout: partition.Layout{GPUs: 1, DP: 1, TP: 1, PP: 1, Interleave: 1, GlobalBatch: 1, MicroBatch: 1, MicroBatches: 1},
		Stages: []partition.Stage{{Offload: k, Blocks: []partition.Block{
			{Name: "embedding", Repeat: 1, Ops: []partition.Op{op("e", partition.Forward, 5), op("e.bwd", partition.Backward, 5)}},
			{Name: "layer", Repeat: L, Ops: []partition.Op{f, b}},
			{Name: "head", Repeat: 1, Ops: []partition.Op{op("h", partition.Forward, 7), op("h.bwd", partition.Backward, 7)}},
		}}},
	}
}

// TestOffloadWait hand-counts Transformer Engine's offload schedule (cpu_offload.py @00382b96,
// _default_offload_sync_init): layers 0 … k−1 go out after their forward pass, one copy at a
// time, and must be out before layer L−k+i's forward; they come back from layer L−1−k+i's
// backward pass on and must be back before their own.
func TestOffloadWait(t *testing.T) {
	for _, tc := range []struct {
		name string
		L, k int
		copy units.Bytes
		wait float64
	}{
		// Forward (1 s layers): copy 0 runs [1, 4], copy 1 [4, 7]; layer 2 waits for copy 0
		// (starts 4 instead of 2), layer 3 for copy 1 (7 instead of 5): 4 s. Backward (2 s
		// layers, from layer 3): copy back 1 starts with layer 2's backward at 2 → 5, copy back 0
		// with layer 1's at 5 (the stream is busy until 5) → 8; layer 1 starts at 5 instead of
		// 4, layer 0 at 8 instead of 7: 2 s. 6 s per micro-batch.
		{"L4k2", 4, 2, 3, 6},
		// A copy shorter than the layers hides entirely (k = 1): copy 0 runs [1, 1.5], due
		// before layer 3's forward at 3; copy back 0 starts with layer 2's backward (L−1−k = 2)
		// at 2 and ends at 2.5, due before layer 0's at 6.
		{"hidden", 4, 1, 0.5, 0},
		// k = L − 1: every copy must be out before the next layer and comes back only when its
		// own backward pass begins. Forward: copy 0 runs [1, 4], so layer 1 starts at 4; copy 1
		// [5, 8], layer 2 at 8, copy 2 [9, 12], layer 3 at
		// 12 and ends at 13: 13 − 4 = 9 s. Backward: layer 3 [0, 2]; copy back 2 [2, 5], layer 2
		// [5, 7]; copy back 1 [7, 10], layer 1 [10, 12]; copy back 0 [12, 15], layer 0 [15, 17]:
		// 17 − 8 = 9 s. 18 s.
		{"all-but-one", 4, 3, 3, 18},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Estimate(Input{Plan: offloadPlan(tc.L, tc.k, tc.copy), Profile: copyProfile{rate: 1}, Network: byteNet{}})
			if err != nil {
				t.Fatal(err)
			}
			// The layers' and the ends' compute: L × 3 s + 10 s + 14 s.
			busy := float64(tc.L)*3 + 10 + 14
			if !near(float64(r.Breakdown.OffloadWait), tc.wait) || !near(float64(r.Iteration.Compute), busy+tc.wait) ||
				!near(float64(r.Iteration.Total), busy+tc.wait) {
				t.Errorf("offload wait %v, compute %v, total %v; want %g, %g", r.Breakdown.OffloadWait, r.Iteration.Compute,
					r.Iteration.Total, tc.wait, busy+tc.wait)
			}
		})
	}
	// Without a measured host link the estimate refuses the plan.
	_, err := Estimate(Input{Plan: offloadPlan(4, 2, 3), Profile: copyProfile{}, Network: byteNet{}})
	if err == nil || !strings.Contains(err.Error(), "host link") {
		t.Errorf("no host link: %v", err)
	}
	_, err = Estimate(Input{Plan: offloadPlan(4, 2, 3), Profile: unitProfile{}, Network: byteNet{}})
	if err == nil || !strings.Contains(err.Error(), "host link") {
		t.Errorf("a profile without HostCopyTime: %v", err)
	}
}
