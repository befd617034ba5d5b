package megatron

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/moe"
)

// deepSeekV3 is DeepSeek-V3's model (arXiv 2412.19437 §4.2; deepseek-ai/DeepSeek-V3 config.json)
// on one GPU: the layout is the caller's.
func deepSeekV3() Config {
	return Config{Layers: 61, Hidden: 7168, Heads: 128, Seq: 4096, Vocab: 129280, UntiedEmbeddings: true,
		Arch: Arch{HeadDim: 128, FFNHidden: 18432, MLP: MLPSwiGLU, Norm: NormRMS, NoBias: true, Positions: PosRoPE,
			QRank: 1536, KVRank: 512, RopeDim: 64, VHeadDim: 128},
		MoE:         moe.Spec{Experts: 256, TopK: 8, CapacityFactor: 1, ExpertHidden: 2048, EP: 1, SharedHidden: 2048, DenseLayers: 3},
		GlobalBatch: 1, MicroBatch: 1, TP: 1, PP: 1, DP: 1, Interleave: 1, Recompute: RecomputeFull,
		Precision: MixedBF16, Optimizer: Adam, Capacity: 80 * units.GB}
}

// DeepSeek-V3's parameters, counted by hand from its shapes. Per layer, multi-head latent
// attention: W^DQ 7,168 × 1,536, its RMSNorm 1,536, W^UQ with W^QR 1,536 × 128·(128 + 64),
// W^DKV with W^KR 7,168 × (512 + 64), its RMSNorm 512, W^UK with W^UV 512 × 128·(128 + 128), W^O
// 128·128 × 7,168: 187,107,328; two RMSNorm gains 2·7,168. The first 3 layers have a SwiGLU MLP
// of 18,432 (3·7,168·18,432); the other 58 a router 7,168 × 256, 256 routed and 1 shared SwiGLU
// experts of 2,048 (3·7,168·2,048 = 44,040,192 each), 8 routed ones per token. Untied embedding
// and head 2·129,280·7,168, final norm 7,168. Total 671,026,404,352: the report's 671B (§4.2).
//
// Active 37,552,282,624. Documented deviation: the report says 37B (+1.5%) and the weights'
// README (README_WEIGHTS.md) 36.7B (+2.3%) without their counting rule; every projection and
// expert a token passes through is counted here. The README's figure is this count less one
// 7,168 × 2,048 matrix per MoE layer (58 × 14,680,064 = 851,443,712) [AMB].
func TestDeepSeekV3Parameters(t *testing.T) {
	const h = 7168.0
	attn := h*1536 + 1536 + 1536*128*192 + h*576 + 512 + 512*128*256 + 128*128*h
	if attn != 187_107_328 {
		t.Fatalf("hand count: MLA %.0f", attn)
	}
	expert := 3 * h * 2048
	dense := attn + 2*h + 3*h*18432
	moeLayer := attn + 2*h + h*256 + 257*expert
	emb := 2*129280*h + h
	wantTotal := 3*dense + 58*moeLayer + emb
	wantActive := wantTotal - 58*(256-8)*expert
	if wantTotal != 671_026_404_352 || wantActive != 37_552_282_624 {
		t.Fatalf("hand count: %.0f total, %.0f active", wantTotal, wantActive)
	}
	c := deepSeekV3()
	total, _ := Params(c)
	if total != wantTotal {
		t.Errorf("DeepSeek-V3: %.0f parameters, hand count %.0f", total, wantTotal)
	}
	if active := ActiveParams(c, total); active != wantActive {
		t.Errorf("DeepSeek-V3: %.0f active parameters, hand count %.0f", active, wantActive)
	}
	if math.Abs(total/671e9-1) > 0.01 {
		t.Errorf("DeepSeek-V3: %.4g parameters, not within 1%% of the report's 671B", total)
	}
}

// A small DeepSeek-shaped model: 8 layers of which 3 dense, MLA, 8 routed experts and a shared
// one, on 4 pipeline stages (2 layers each: stage 0 holds 2 dense layers, stage 1 one dense and
// one MoE layer, the others MoE layers only).
func smallDeepSeek() Config {
	return Config{Layers: 8, Hidden: 256, Heads: 4, Seq: 128, Vocab: 1024, UntiedEmbeddings: true,
		Arch: Arch{HeadDim: 32, FFNHidden: 512, MLP: MLPSwiGLU, Norm: NormRMS, NoBias: true, Positions: PosRoPE,
			QRank: 64, KVRank: 32, RopeDim: 16, VHeadDim: 48},
		MoE:         moe.Spec{Experts: 8, TopK: 2, CapacityFactor: 1, ExpertHidden: 64, EP: 4, SharedHidden: 96, DenseLayers: 3},
		GlobalBatch: 64, MicroBatch: 2, TP: 1, PP: 4, DP: 8, Interleave: 1, Recompute: RecomputeNone,
		Precision: MixedBF16, Optimizer: Adam, Capacity: 80 * units.GB}
}

// The dense first layers sit on the first stages, and every stage's memory accounting (params,
// activations, workspace) equals what its blocks' ops record, for every recomputation, with and
// without FlashAttention and interleaving, with MLA at TP 1 and with grouped-query attention at
// TP 2 (sequence parallel, experts split over the TP ranks), in bf16 and FP8.
func TestDenseFirstLayersAndMLAAccounting(t *testing.T) {
	for _, rc := range []Recompute{RecomputeNone, RecomputeSelective, RecomputeFull} {
		for i, flash := range []bool{false, true, false, true} {
			for _, v := range []int{1, 2} {
				c := smallDeepSeek()
				c.Recompute, c.Interleave, c.PP = rc, v, 4/v
				if flash {
					c.Attention = AttnFlash
				}
				if i >= 2 {
					c.Arch.QRank, c.Arch.KVRank, c.Arch.RopeDim, c.Arch.VHeadDim = 0, 0, 0, 0
					c.TP, c.SeqParallel = 2, true
				}
				if i == 3 {
					c.Precision = MixedFP8 // FP8 experts (moe.Build), dense layers and attention
				}
				// Dense layers per stage by hand: 2 layers a stage in order (v = 1: 2, 1, 0, 0); with
				// 2 chunks of 2 layers on 2 stages, stage 0 holds layers 0–1 and 4–5, stage 1 2–3 and 6–7.
				want := map[int][]int{1: {2, 1, 0, 0}, 2: {2, 1}}[v]
				p := build(t, c)
				for i, st := range p.Stages {
					var dense, moeLayers int
					var params float64
					var saved, ws units.Bytes
					for _, b := range st.Blocks {
						switch b.Name {
						case "layer":
							dense += b.Repeat
						case "layer.moe":
							moeLayers += b.Repeat
						}
						params += b.Params * float64(b.Repeat)
						for _, op := range b.Ops {
							saved += op.Saved * units.Bytes(b.Repeat)
						}
						ws = max(ws, b.Workspace)
					}
					if dense != want[i] || dense+moeLayers != c.StageLayers(i) {
						t.Errorf("%s v=%d stage %d: %d dense and %d MoE layers, want %d dense of %d", rc, v, i, dense, moeLayers, want[i], c.StageLayers(i))
					}
					g := geometry(c)
					perMB, workspace := stageActivations(&g, &c, i)
					split := stageParams(&g, &c, i)
					if params != st.Params || params != split[0]+split[1] || saved != perMB || ws != workspace {
						t.Errorf("%s flash=%v v=%d stage %d: params %g/%g saved %v/%v workspace %v/%v", rc, flash, v, i,
							params, split[0]+split[1], saved, perMB, ws, workspace)
					}
				}
				if err := CheckMemory(c); err != nil {
					t.Errorf("%s: %v", rc, err)
				}
			}
		}
	}
}

// MLA's projections, forward, for b·s tokens on one GPU, by hand (DeepSeek-V2 Eqs. 9–14):
// 2·b·s·(h·qr + qr·a·(dh + dr) + h·(kvr + dr) + kvr·a·(dh + dv) + a·dv·h); the attention core
// 2·b·a·s²·(dh + dr) for the scores and 2·b·a·s²·dv for the context; the shared expert 6·b·s·h·S.
func TestMLAAndSharedExpertFLOP(t *testing.T) {
	c := smallDeepSeek()
	c.PP, c.MoE.DenseLayers = 1, 0
	p := build(t, c)
	tok := float64(c.MicroBatch * c.Seq)
	const h, a, dh, dr, dv, qr, kvr, shared = 256.0, 4.0, 32.0, 16.0, 48.0, 64.0, 32.0, 96.0
	wantProj := 2 * tok * (h*qr + qr*a*(dh+dr) + h*(kvr+dr) + kvr*a*(dh+dv) + a*dv*h)
	s := float64(c.Seq)
	wantCore := 2*float64(c.MicroBatch)*a*s*s*(dh+dr) + 2*float64(c.MicroBatch)*a*s*s*dv
	var proj, core, sh float64
	for _, b := range p.Stages[0].Blocks {
		for _, op := range b.Ops {
			if op.Phase != partition.Forward {
				continue
			}
			switch {
			case op.Kind == partition.MatMul && strings.HasPrefix(op.Name, "attn."):
				proj += float64(op.FLOP)
			case op.Kind == partition.BatchedMatMul && strings.HasPrefix(op.Name, "attn."):
				core += float64(op.FLOP)
			case op.Kind == partition.MatMul && strings.HasPrefix(op.Name, "moe.shared."):
				sh += float64(op.FLOP)
			}
		}
	}
	if proj != wantProj || core != wantCore || sh != 6*tok*h*shared {
		t.Errorf("forward FLOP: projections %g (want %g), core %g (want %g), shared expert %g (want %g)",
			proj, wantProj, core, wantCore, sh, 6*tok*h*shared)
	}
	c.Attention = AttnFlash
	for _, op := range layerOf(func() *partition.Plan { c.MoE = moe.Spec{}; return build(t, c) }()).Ops {
		if op.Name == "attn.flash" && float64(op.FLOP) != wantCore {
			t.Errorf("FlashAttention under MLA: %g FLOP, want the unfused %g", float64(op.FLOP), wantCore)
		}
	}
}

func TestDeepSeekValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"MLA with TP", func(c *Config) { c.MoE = moe.Spec{}; c.TP = 2 }, "--tp 2: multi-head latent attention"},
		{"MLA rank without kv rank", func(c *Config) { c.KVRank = 0 }, "need --kv-lora-rank"},
		{"MLA with kv heads", func(c *Config) { c.KVHeads = 2 }, "--kv-heads 2: multi-head latent attention"},
		{"all dense", func(c *Config) { c.MoE.DenseLayers = 8 }, "--dense-layers 8 must be below the 8 layers"},
		{"shared without experts", func(c *Config) { c.MoE = moe.Spec{SharedHidden: 64} }, "need --experts"},
		{"MLA with CP", func(c *Config) { c.MoE = moe.Spec{}; c.CP = 2 }, "--cp 2: context parallelism is modelled for grouped-query"},
	} {
		c := smallDeepSeek()
		tc.edit(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// Uneven pipelines in the search (shorterEnds), by hand: the middle stages take ⌈L/pp⌉ layers,
// the ends share the rest. Llama 3 405B's 126 layers on 16 stages: 8 each and 7 + 7 (Dubey et
// al. 2024 §3.3.2); DeepSeek-V3's 61: 4 each and 2 + 3 either way round; 61 on 61 stages
// divides; 10 on 8 stages leaves 10 − 6·2 < 2 for the ends (none); fixed ends: none.
func TestShorterEnds(t *testing.T) {
	for _, c := range []struct {
		layers, pp int
		fixed      bool
		want       [][2]int
	}{
		{126, 16, false, [][2]int{{7, 7}}},
		{61, 16, false, [][2]int{{2, 3}, {3, 2}}},
		{10, 8, false, nil},
		{61, 16, true, nil},
	} {
		cfg := Config{Layers: c.layers}
		got := shorterEnds(cfg, Space{FixedEnds: c.fixed}, c.pp)
		if len(got) != len(c.want) {
			t.Errorf("%d layers on %d stages: %v, want %v", c.layers, c.pp, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%d layers on %d stages: %v, want %v", c.layers, c.pp, got, c.want)
			}
		}
	}
}

// FP8 training of a MoE stack keeps an FP8 copy and transpose of every linear layer's weights
// (stageFootprint) — for a MoE layer its attention's and this GPU's experts', by hand for the
// small model without latent attention at TP 1 (4 heads of 32, hidden 256): attention QKV
// 256 × 384 and projection 128 × 256 (131,072); a dense layer's SwiGLU MLP 256 × 1,024 and
// 512 × 256 (393,216); a MoE layer's 8/4 = 2 experts of 3 · 256 · 64 and the shared one of
// 3 · 256 · 96 (172,032). Eight layers, three dense: 3 · 524,288 + 5 · 303,104 = 3,088,384
// matrix parameters, 2 bytes each (FP8 weight and transpose).
func TestFP8MoEWeightCache(t *testing.T) {
	c := smallDeepSeek()
	c.Arch.QRank, c.Arch.KVRank, c.Arch.RopeDim, c.Arch.VHeadDim = 0, 0, 0, 0
	c.PP, c.Precision = 1, MixedBF16
	bf := PeakMemory(c)
	c.Precision = MixedFP8
	f8 := PeakMemory(c)
	if d := f8.Weights - bf.Weights; float64(d) != 2*3_088_384 {
		t.Errorf("FP8 weight cache %v, want 2 × 3,088,384 B", d)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("FP8 MoE refused: %v", err)
	}
	p := build(t, c)
	for _, b := range p.Stages[0].Blocks {
		for _, op := range b.Ops {
			if strings.HasPrefix(op.Name, "moe.expert.fc") && op.Kind == partition.MatMul && op.DType.String() != "fp8" {
				t.Errorf("%s in %v", op.Name, op.DType)
			}
		}
	}
}

// The search yields only layouts the model runs: latent attention refuses TP > 1, so a
// DeepSeek-shaped model on 16 GPUs gets TP 1 only (an MoE layer alone would take TP 2 or 4
// with sequence parallelism), and every layout passes Config.Validate. Before Layouts
// validated, TP 2 reached the estimate and stopped the whole search.
func TestLayoutsRespectTheModel(t *testing.T) {
	base := smallDeepSeek()
	base.PP, base.DP, base.MoE.EP = 1, 1, 1
	n := 0
	Layouts(base, Space{GPUs: 16}, func(c Config) bool {
		n++
		if err := c.Validate(); err != nil || c.TP != 1 {
			t.Fatalf("layout TP %d PP %d DP %d: %v", c.TP, c.PP, c.DP, err)
		}
		return true
	})
	if n == 0 {
		t.Fatal("no layouts")
	}
}
