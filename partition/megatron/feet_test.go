package megatron

import (
	"fmt"
	"testing"
)

// TestBuildCheckedReusesFootprints: the footprints BuildChecked takes over from its memory
// check give every stage the memory that Build (which computes each stage's footprint itself)
// gives it: first, middle and last stages, one and two stages, and a MoE model whose dense
// first layers reach past stage 0.
func TestBuildCheckedReusesFootprints(t *testing.T) {
	dense := smallDeepSeek()
	dense.Layers, dense.MoE.DenseLayers = 12, 5 // at PP 4 the dense layers fill stage 0 and reach into stage 1
	for _, c := range []Config{baseConfig(), smallDeepSeek(), dense} {
		for _, pp := range []int{1, 2, 4} {
			c.PP = pp
			name := fmt.Sprintf("layers%d-moe%d-pp%d", c.Layers, c.MoE.Experts, pp)
			want, err := Build(c)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got, _, err := BuildChecked(c, true)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for i := range want.Stages {
				if got.Stages[i].Memory != want.Stages[i].Memory {
					t.Errorf("%s stage %d: memory %+v, want %+v", name, i, got.Stages[i].Memory, want.Stages[i].Memory)
				}
			}
		}
	}
}
