package megatron

import (
	"math"
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/scaling"
)

func rel(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

// RAMP's Megatron runs: fp16 mixed precision, Adam, full activation checkpointing (§7.3), no
// embedding table ("random embedding vectors as input to the transformer block", §7.3).
func rampAuto(t *testing.T, ce float64) AutoResult {
	t.Helper()
	tg, err := scaling.Resolve(scaling.DefaultRequest(ce))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Auto(AutoConfig{Target: tg, MaxGPUs: DefaultMaxGPUs, ParamsPerGPU: DefaultParamsPerGPU,
		Capacity: 80 * units.GB, Vocab: 0, Recompute: RecomputeFull, Precision: MixedFP16, Optimizer: Adam})
	if err != nil {
		t.Fatalf("CE %g: %v", ce, err)
	}
	return res
}

// RAMP Table 9's cells (heads, MP, DP, #GPUs, global batch, #Params, #Params per GPU, DP and MP
// messages, steps) are rows of the reproduction table (internal/repro: ramp/table9-loss-*), with
// the same settings. Here, what is not a printed number: with no vocabulary there are no
// embedding parameters, and the tensor-parallel message is the closed form b·s·d·2 bytes (the
// whole local batch as one micro-batch, activations offloaded, §7.3) — on the rows 2.2, 2.0 and
// 1.8 too, whose printed 150/268/402 MB are b = 32 (reference/ramp.md §5.4) — and absent at MP 1.
func TestRAMPTable9ClosedForms(t *testing.T) {
	for _, row := range scaling.Table9 {
		res := rampAuto(t, row.Loss)
		c := res.Config
		if total, nonEmb := Params(c); total != nonEmb {
			t.Errorf("CE %g: vocab 0 should have no embedding parameters", row.Loss)
		}
		c.MicroBatch = res.LocalBatch
		plan, err := Build(c)
		if err != nil {
			t.Fatal(err)
		}
		var mp float64
		for _, col := range plan.Stages[0].Blocks[0].Collectives {
			if col.Dim == partition.DimTP && col.Phase == partition.Forward {
				mp = float64(col.Bytes)
			}
		}
		want := float64(res.LocalBatch * 1024 * c.Hidden * 2)
		if c.TP == 1 {
			want = 0
		}
		if mp != want {
			t.Errorf("CE %g: MP msg %.4g, want b·s·d·2 = %.4g (MP %d)", row.Loss, mp, want, c.TP)
		}
	}
}
