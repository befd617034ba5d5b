package megatron

import (
	"math"
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/scaling"
)

// table9 is RAMP Table 9 as printed (../shared/seeds/000_*.txt, §8.1). Sizes in GB = 1e9 B.
var table9 = []struct {
	ce                  float64
	heads               int
	steps               float64
	globalBatch         int
	params, paramsGPU   float64
	gpus, dp, mp        int
	dpMsgGB, mpMsgGB    float64
	stepsOK, mpMsgFixed bool // rows where the table is self-consistent (see below)
}{
	{2.5, 12, 65.6e3, 2480, 574e6, 574e6, 16, 16, 1, 1.14, 0, true, true},
	{2.4, 16, 70.5e3, 3424, 1.13e9, 1.13e9, 32, 32, 1, 2.27, 0, true, true},
	{2.2, 24, 78.9e3, 4896, 3.57e9, 893e6, 128, 32, 4, 1.78, 0.150, true, false},
	{2.0, 32, 87.5e3, 7168, 10.1e9, 1.2e9, 512, 64, 8, 2.52, 0.268, true, false},
	{1.8, 64, 98.1e3, 10880, 32.2e9, 1e9, 2048, 64, 32, 2.01, 0.402, true, false},
	{1.7, 128, 111e3, 16896, 103.1e9, 811e6, 32768, 256, 128, 1.62, 1.11, true, true},
	{1.5, 512, 191e3, 14080, 425.2e9, 843e6, 65536, 128, 512, 1.69, 3.69, true, true},
	{1.3, 2048, 3.7e6, 1024, 2.06e12, 1.03e9, 65536, 32, 2048, 2.08, 2.15, true, true},
	{1.2, 8192, 68e6, 64, 10.7e12, 1.35e9, 65536, 8, 8192, 2.7, 2.15, false, true},
	{1.0, 65536, 2.49e9, 4, 74.2e12, 1.27e9, 65536, 1, 65536, 2.55, 2.15, false, true},
}

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

func TestRAMPTable9(t *testing.T) {
	stepsWithin5 := 0
	for _, row := range table9 {
		res := rampAuto(t, row.ce)
		c := res.Config
		// Exact columns.
		if c.Heads != row.heads || c.TP != row.mp || c.DP != row.dp || c.GPUs() != row.gpus || c.GlobalBatch != row.globalBatch {
			t.Errorf("CE %g: heads %d MP %d DP %d GPUs %d batch %d; Table 9: %d %d %d %d %d", row.ce,
				c.Heads, c.TP, c.DP, c.GPUs(), c.GlobalBatch, row.heads, row.mp, row.dp, row.gpus, row.globalBatch)
		}
		// #Params and #Params per GPU within 2% (the table truncates some entries, e.g. 811.7M → "811M").
		total, nonEmb := Params(c)
		if total != nonEmb {
			t.Errorf("CE %g: vocab 0 should have no embedding parameters", row.ce)
		}
		if r := rel(total, row.params); r > 0.02 {
			t.Errorf("CE %g: #Params %.4g vs %.4g (%.1f%%)", row.ce, total, row.params, 100*r)
		}
		// RAMP reproduces Table 9 without gradient accumulation: the whole local batch is one
		// micro-batch (activations offloaded, §7.3), so its MP message is b·s·d·2 bytes.
		c.MicroBatch = res.LocalBatch
		plan, err := Build(c)
		if err != nil {
			t.Fatal(err)
		}
		st := plan.Stages[0]
		// Row 2.0 prints 1.26B truncated to "1.2B": its own DP msg, 2.52 GB = 2 B × 1.26e9, shows
		// the untruncated value, so that row is compared at the printed two digits.
		got := st.Params
		if row.ce == 2.0 {
			got = math.Trunc(got/1e8) * 1e8
		}
		if r := rel(got, row.paramsGPU); r > 0.02 {
			t.Errorf("CE %g: #Params/GPU %.4g vs %.4g (%.1f%%)", row.ce, st.Params, row.paramsGPU, 100*r)
		}
		// DP msg: the fp16 gradient all-reduce = 2 B × #Params/GPU.
		if r := rel(float64(st.Grads[0].Bytes), row.dpMsgGB*1e9); r > 0.02 {
			t.Errorf("CE %g: DP msg %v vs %g GB (%.1f%%)", row.ce, st.Grads[0].Bytes, row.dpMsgGB, 100*r)
		}
		// MP msg: the tensor-parallel all-reduce. Rows 2.2, 2.0 and 1.8 print 150/268/402 MB, which
		// is b = 32 (32·1024·2304·2 = 151 MB) instead of their own b = 153/112/170; we follow the
		// self-consistent reading b = global/DP (reference/ramp.md §5.4).
		var mp float64
		for _, col := range st.Blocks[0].Collectives {
			if col.Dim == 1 && col.Phase == 0 { // TP, forward
				mp = float64(col.Bytes)
			}
		}
		switch {
		case row.mp == 1 && mp != 0:
			t.Errorf("CE %g: MP msg %g with MP = 1", row.ce, mp)
		case row.mpMsgFixed && row.mp > 1 && rel(mp, row.mpMsgGB*1e9) > 0.02:
			t.Errorf("CE %g: MP msg %.4g vs %g GB", row.ce, mp, row.mpMsgGB)
		case !row.mpMsgFixed && rel(mp, float64(res.LocalBatch*1024*c.Hidden*2)) > 1e-12:
			t.Errorf("CE %g: MP msg %.4g, want b·s·d·2", row.ce, mp)
		}
		// Steps within 5% on the self-consistent rows. Rows 1.2 and 1.0 print about half of what
		// the formula gives (68M vs 125M, 2.49B vs 4.88B): no reading of Kaplan's laws reproduces
		// them (reference/ramp.md §5.4), so we check the known ≈2× deviation instead.
		r := res.Steps / row.steps
		if row.stepsOK {
			if math.Abs(r-1) <= 0.05 {
				stepsWithin5++
			} else {
				t.Errorf("CE %g: steps %.4g vs %.4g (ratio %.3f)", row.ce, res.Steps, row.steps, r)
			}
		} else if r < 1.7 || r > 2.1 {
			t.Errorf("CE %g: steps ratio %.3f, expected the documented ≈1.84–1.96 deviation", row.ce, r)
		}
	}
	if stepsWithin5 < 8 {
		t.Errorf("steps within 5%% on %d rows, want ≥ 8", stepsWithin5)
	}
}
