package megatron

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/moe"
)

// llama3 is a Llama 3 shape (Dubey et al. 2024, Table 3; vocabulary 128,256 from the released
// config.json) at tensor parallelism tp.
func llama3(layers, hidden, ffn, heads, tp int) Config {
	return Config{Layers: layers, Hidden: hidden, Heads: heads, Seq: 8192, Vocab: 128256, UntiedEmbeddings: true,
		Arch:        Arch{KVHeads: 8, FFNHidden: ffn, MLP: MLPSwiGLU, Norm: NormRMS, NoBias: true, Positions: PosRoPE},
		GlobalBatch: 2048, MicroBatch: 1, TP: tp, PP: 1, DP: 1, Interleave: 1, Recompute: RecomputeFull,
		Precision: MixedBF16, Optimizer: Adam, Capacity: 80 * units.GB}
}

// Llama 3's parameter counts, counted by hand from Table 3's shapes (head width 128 = d/heads):
// per layer the query and output projections d², the key and value projections 2·8·128·d, the
// SwiGLU MLP 3·d·f and two RMSNorm gains 2d; the untied input and output embeddings 2·128,256·d
// and the final RMSNorm d. Each total is within 1% of the size the model card names
// (meta-llama Llama 3.1 model card: 8B, 70B, 405B).
func TestLlama3ParameterCounts(t *testing.T) {
	for _, c := range []struct {
		name                    string
		layers, hidden, ffn, a  int
		hand, nominal           float64
		perLayer, embeddingsTwo float64
	}{
		// 32 × (4096² · 2 + 2·1024·4096 + 3·4096·14336 + 2·4096) + 2·128256·4096 + 4096
		{"8B", 32, 4096, 14336, 32, 8_030_261_248, 8e9, 218_112_000, 1_050_673_152},
		// 80 × (8192² · 2 + 2·1024·8192 + 3·8192·28672 + 2·8192) + 2·128256·8192 + 8192
		{"70B", 80, 8192, 28672, 64, 70_553_706_496, 70e9, 855_654_400, 2_101_346_304},
		// 126 × (16384² · 2 + 2·1024·16384 + 3·16384·53248 + 2·16384) + 2·128256·16384 + 16384
		{"405B", 126, 16384, 53248, 128, 405_853_388_800, 405e9, 3_187_703_808, 4_202_692_608},
	} {
		cfg := llama3(c.layers, c.hidden, c.ffn, c.a, 1)
		if got := c.perLayer*float64(c.layers) + c.embeddingsTwo + float64(c.hidden); got != c.hand {
			t.Fatalf("%s: the hand count's parts sum to %.0f, not %.0f", c.name, got, c.hand)
		}
		total, nonEmb := Params(cfg)
		if total != c.hand {
			t.Errorf("Llama 3 %s: %.0f parameters, hand count %.0f", c.name, total, c.hand)
		}
		if want := c.perLayer * float64(c.layers); nonEmb != want {
			t.Errorf("Llama 3 %s: %.0f non-embedding parameters, want %.0f", c.name, nonEmb, want)
		}
		if math.Abs(total/c.nominal-1) > 0.01 {
			t.Errorf("Llama 3 %s: %.4g parameters, more than 1%% from the model card's %g", c.name, total, c.nominal)
		}
	}
}

// A grouped-query SwiGLU layer's GEMM FLOPs per micro-batch (b sequences of s, hidden h, a query
// heads and kv key/value heads of width dh, FFN width f, tensor parallelism t), forward:
//
//	QKV 2bsh(a + 2kv)dh/t + scores and context 4bs²·a·dh/t + projection 2bs·a·dh·h/t
//	+ gate and up 2bsh·2f/t + down 2bsfh/t
//
// and twice that backward; the layer keeps, without recomputation or sequence parallelism, in
// bytes of a 2-byte dtype, sbh·10 (norm inputs, GEMM inputs, residual masks) + 2sb(a + kv)dh/t
// (Q, K) + 2sb·kv·dh/t (V) + 2sb·a·dh/t (projection input) + 2sb·2f/t (SwiGLU input) + 2sbf/t
// (down-projection input) + 5as²b/t (attention core, Korthikanti et al. 2022 §4.1).
func TestGQASwiGLULayer(t *testing.T) {
	for _, tp := range []int{1, 2, 4, 8} {
		c := baseConfig()
		c.Arch = Arch{KVHeads: 8, HeadDim: 96, FFNHidden: 2816, MLP: MLPSwiGLU, Norm: NormRMS, NoBias: true, Positions: PosRoPE}
		c.Heads, c.TP = 16, tp
		l := layerOf(build(t, c))
		b, s, h, tf := float64(c.MicroBatch), float64(c.Seq), float64(c.Hidden), float64(tp)
		a, kv, dh, f := 16.0, 8.0, 96.0, 2816.0
		fwd := (2*b*s*h*(a+2*kv)*dh + 4*b*s*s*a*dh + 2*b*s*a*dh*h + 2*b*s*h*2*f + 2*b*s*f*h) / tf
		if got := sumFLOP(l, matmulIn(partition.Forward)); rel(got, fwd) > 1e-12 {
			t.Errorf("tp=%d: forward GEMM FLOP %g, want %g", tp, got, fwd)
		}
		if got := sumFLOP(l, matmulIn(partition.Backward)); rel(got, 2*fwd) > 1e-12 {
			t.Errorf("tp=%d: backward GEMM FLOP %g, want %g", tp, got, 2*fwd)
		}
		var saved float64
		for _, op := range l.Ops {
			saved += float64(op.Saved)
		}
		want := s*b*h*10 + (2*s*b*(a+kv)*dh+2*s*b*kv*dh+2*s*b*a*dh+2*s*b*2*f+2*s*b*f+5*a*s*s*b)/tf
		if rel(saved, want) > 1e-12 {
			t.Errorf("tp=%d: saved %g bytes, want %g", tp, saved, want)
		}
		// RoPE runs over the queries and keys once forward and once backward.
		rope := 0
		for _, op := range l.Ops {
			if strings.HasPrefix(op.Name, "attn.rope") {
				rope++
				if n := partition.Elems(op.Output); n != b*s*(a+kv)*dh/tf {
					t.Errorf("tp=%d: %s over %g elements, want %g", tp, op.Name, n, b*s*(a+kv)*dh/tf)
				}
			}
		}
		if rope != 2 {
			t.Errorf("tp=%d: %d RoPE ops, want forward and backward", tp, rope)
		}
	}
}

// GPT-3's architecture is the zero Arch: the layer, its parameters and its activations are
// those of the hand-written GPT-3 forms (12h²/t + 7h/t + 6h parameters, the Korthikanti memory).
func TestZeroArchIsGPT(t *testing.T) {
	for _, tp := range []int{1, 4} {
		h, tf := 1024.0, float64(tp)
		if got, want := LayerParamsPerGPU(1024, tp), 12*h*h/tf+7*h/tf+6*h; got != want {
			t.Errorf("tp=%d: %g parameters, want %g", tp, got, want)
		}
	}
}

func TestArchValidate(t *testing.T) {
	for _, c := range []struct {
		arch Arch
		tp   int
		want string
	}{
		{Arch{KVHeads: 3}, 1, "--kv-heads 3 does not divide the 16 heads"},
		{Arch{KVHeads: 2}, 4, "--tp 4 does not divide the 2 kv heads"},
		{Arch{FFNHidden: 1001}, 2, "--tp 2 does not divide --ffn-hidden 1001"},
		{Arch{KVHeads: -1}, 1, "must be ≥ 0"},
	} {
		cfg := baseConfig()
		cfg.Arch, cfg.TP = c.arch, c.tp
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v tp=%d: %v, want %q", c.arch, c.tp, err, c.want)
		}
	}
	cfg := baseConfig()
	cfg.Hidden, cfg.Heads, cfg.Arch.HeadDim = 1000, 16, 64 // hidden need not split into the heads
	if err := cfg.Validate(); err != nil {
		t.Errorf("head_dim 64 with hidden 1000: %v", err)
	}
}

// Grouped-query attention and SwiGLU under tensor parallelism, with real tensors: each rank holds
// its query heads' and its key/value heads' columns of W_Q, W_K, W_V (query head i uses key/value
// head i / (a/kv), and a rank's query heads use only its own key/value heads), and its columns of
// the gate and up projections with the matching rows of the down projection. The plan's shard
// shapes are what the ranks hold, and the forward all-reduce of their partial outputs equals the
// unsharded block.
func TestGQASwiGLUTensorParallelEqualsUnsharded(t *testing.T) {
	const tp, h, s, a, kv, dh, f = 2, 8, 4, 4, 2, 2, 12
	c := tinyConfig(tp, false)
	c.Heads, c.Arch = a, Arch{KVHeads: kv, FFNHidden: f, MLP: MLPSwiGLU, Norm: NormRMS, NoBias: true}
	plan, err := Build(c)
	if err != nil {
		t.Fatal(err)
	}
	l := layerOf(plan)
	r := rand.New(rand.NewPCG(3, 4))
	x := randDense(r, s, h)
	wq, wk, wv, wo := randDense(r, h, a*dh), randDense(r, h, kv*dh), randDense(r, h, kv*dh), randDense(r, a*dh, h)
	wg, wu, wd := randDense(r, h, f), randDense(r, h, f), randDense(r, f, h)
	silu := func(z float64) float64 { return z / (1 + math.Exp(-z)) }
	swiglu := func(xg, xu *tensor.Dense) *tensor.Dense {
		p, err := tensor.Mul(apply(xg, silu), xu)
		if err != nil {
			t.Fatal(err)
		}
		return p.(*tensor.Dense)
	}
	head := func(q, k, v *tensor.Dense, i int) *tensor.Dense {
		g := i / (a / kv)
		return attention(t, cols(t, q, i*dh, (i+1)*dh), cols(t, k, g*dh, (g+1)*dh), cols(t, v, g*dh, (g+1)*dh))
	}

	// Unsharded reference.
	q, k, v := mm(t, x, wq), mm(t, x, wk), mm(t, x, wv)
	var ctx []*tensor.Dense
	for i := 0; i < a; i++ {
		ctx = append(ctx, head(q, k, v, i))
	}
	attn := mm(t, concatCols(t, ctx...), wo)
	mlp := mm(t, swiglu(mm(t, x, wg), mm(t, x, wu)), wd)

	qkv, proj := opShapes(t, l, "attn.qkv"), opShapes(t, l, "attn.proj")
	fc1, fc2 := opShapes(t, l, "mlp.fc1"), opShapes(t, l, "mlp.fc2")
	var attnSum, mlpSum *tensor.Dense
	qpr, kvpr, fpr := a/tp, kv/tp, f/tp
	for rank := 0; rank < tp; rank++ {
		wqI := cols(t, wq, rank*qpr*dh, (rank+1)*qpr*dh)
		wkI, wvI := cols(t, wk, rank*kvpr*dh, (rank+1)*kvpr*dh), cols(t, wv, rank*kvpr*dh, (rank+1)*kvpr*dh)
		if w := concatCols(t, wqI, wkI, wvI); !w.Shape().Eq(qkv.Inputs[1]) {
			t.Fatalf("rank %d: QKV shard %v, plan says %v", rank, w.Shape(), qkv.Inputs[1])
		}
		woI := rows(t, wo, rank*qpr*dh, (rank+1)*qpr*dh)
		if !woI.Shape().Eq(proj.Inputs[1]) {
			t.Fatalf("rank %d: projection shard %v, plan says %v", rank, woI.Shape(), proj.Inputs[1])
		}
		qi, ki, vi := mm(t, x, wqI), mm(t, x, wkI), mm(t, x, wvI)
		var ctxI []*tensor.Dense
		for i := 0; i < qpr; i++ {
			ctxI = append(ctxI, head(qi, ki, vi, i)) // local query head i uses local kv head i/(a/kv)
		}
		attnI := mm(t, concatCols(t, ctxI...), woI)

		wgI, wuI := cols(t, wg, rank*fpr, (rank+1)*fpr), cols(t, wu, rank*fpr, (rank+1)*fpr)
		if w := concatCols(t, wgI, wuI); !w.Shape().Eq(fc1.Inputs[1]) {
			t.Fatalf("rank %d: gate/up shard %v, plan says %v", rank, w.Shape(), fc1.Inputs[1])
		}
		wdI := rows(t, wd, rank*fpr, (rank+1)*fpr)
		if !wdI.Shape().Eq(fc2.Inputs[1]) {
			t.Fatalf("rank %d: down shard %v, plan says %v", rank, wdI.Shape(), fc2.Inputs[1])
		}
		mlpI := mm(t, swiglu(mm(t, x, wgI), mm(t, x, wuI)), wdI)
		if rank == 0 {
			attnSum, mlpSum = attnI, mlpI
		} else { // the forward all-reduce (g)
			attnSum, mlpSum = add(t, attnSum, attnI), add(t, mlpSum, mlpI)
		}
	}
	assertClose(t, "GQA attention all-reduce", attnSum, attn)
	assertClose(t, "SwiGLU MLP all-reduce", mlpSum, mlp)
}

// Qwen2.5 (Qwen/Qwen2.5-7B and -72B config.json): biases on the QKV projection only. Hand count
// per layer: QKV weight h(a + 2kv)·128 and bias (a + 2kv)·128, output projection h², SwiGLU
// 3hf, two RMSNorm gains 2h; plus the untied embeddings 2·152,064·h and the final norm h. The
// model cards name 7.61B and 72.7B.
func TestQwen25ParameterCounts(t *testing.T) {
	for _, c := range []struct {
		name                       string
		layers, hidden, ffn, a, kv int
		perLayer, hand, nominal    float64
	}{
		// 3584·36·128 + 36·128 + 3584² + 3·3584·18944 + 2·3584
		{"7B", 28, 3584, 18944, 28, 4, 16_515_072 + 4_608 + 12_845_056 + 203_685_888 + 7_168, 7_615_616_512, 7.61e9},
		// 8192·80·128 + 80·128 + 8192² + 3·8192·29568 + 2·8192
		{"72B", 80, 8192, 29568, 64, 8, 83_886_080 + 10_240 + 67_108_864 + 726_663_168 + 16_384, 72_706_203_648, 72.7e9},
	} {
		cfg := llama3(c.layers, c.hidden, c.ffn, c.a, 1)
		cfg.Vocab, cfg.Arch.KVHeads, cfg.Arch.QKVBias = 152064, c.kv, true
		if got := c.perLayer*float64(c.layers) + 2*152064*float64(c.hidden) + float64(c.hidden); got != c.hand {
			t.Fatalf("%s: the hand count's parts sum to %.0f, not %.0f", c.name, got, c.hand)
		}
		if total, _ := Params(cfg); total != c.hand || math.Abs(total/c.nominal-1) > 0.01 {
			t.Errorf("Qwen2.5 %s: %.0f parameters, hand count %.0f, model card %g", c.name, total, c.hand, c.nominal)
		}
	}
}

// FP8 training (Transformer Engine): the four linear layers' GEMMs, forward and backward, take
// FP8 inputs, the attention core and the LM head stay bf16; each FP8 GEMM input is cast with its
// transpose (2 bytes read, 2 written per element): forward the projection's and fc2's inputs,
// backward every linear layer's output gradient. The GEMM inputs kept for the weight gradients
// are the FP8 casts, 1 byte instead of 2: sbh (QKV) + sb·a·dh/t (projection) + sbh (fc1) +
// sbf/t (fc2) fewer bytes per layer. The stage keeps each linear layer's FP8 weight and its
// transpose: 2 bytes per weight-matrix parameter.
func TestFP8Layer(t *testing.T) {
	const tp = 4
	c := llama3(8, 1024, 3584, 8, tp)
	c.Arch.KVHeads, c.Recompute, c.MicroBatch, c.Seq, c.GlobalBatch = 4, RecomputeNone, 1, 2048, 16
	bf := layerOf(build(t, c))
	c.Precision = partition.MixedFP8
	p8 := build(t, c)
	l := layerOf(p8)
	b, s, h, a, kv, dh, f := 1.0, 2048.0, 1024.0, 8.0, 4.0, 128.0, 3584.0
	casts := map[string]float64{ // elements of each cast
		"attn.proj.cast": b * s * a * dh / tp, "mlp.fc2.cast": b * s * f / tp,
		"attn.proj.dgrad.cast": b * s * h, "mlp.fc2.dgrad.cast": b * s * h,
		"mlp.fc1.dgrad.cast": b * s * 2 * f / tp, "attn.qkv.dgrad.cast": b * s * (a + 2*kv) * dh / tp,
	}
	seen := 0
	for _, op := range l.Ops {
		linear := strings.HasPrefix(op.Name, "attn.qkv") || strings.HasPrefix(op.Name, "attn.proj") || strings.HasPrefix(op.Name, "mlp.fc")
		switch {
		case op.Kind.IsMatMul() && linear && op.DType != dtype.FP8:
			t.Errorf("%s: %s, want fp8", op.Name, op.DType)
		case op.Kind.IsMatMul() && !linear && op.DType != dtype.BF16:
			t.Errorf("%s: %s, want bf16", op.Name, op.DType)
		}
		if n, ok := casts[op.Name]; ok {
			seen++
			if op.Read != units.Bytes(2*n) || op.Written != units.Bytes(2*n) {
				t.Errorf("%s: reads %v, writes %v; want %v each", op.Name, op.Read, op.Written, units.Bytes(2*n))
			}
		}
	}
	if seen != len(casts) {
		t.Errorf("%d of the %d FP8 casts", seen, len(casts))
	}
	saved := func(b partition.Block) (n float64) {
		for _, op := range b.Ops {
			n += float64(op.Saved)
		}
		return n
	}
	if got, want := saved(bf)-saved(l), s*b*h+s*b*a*dh/tp+s*b*h+s*b*f/tp; got != want {
		t.Errorf("FP8 keeps %g fewer activation bytes per layer, want %g", got, want)
	}
	// Weight matrices per layer per GPU: QKV 1024·(8 + 8)·128/4, projection 256·1024, SwiGLU
	// 1024·1792 + 896·1024 (8 layers on the one stage).
	wm := 1024.0*16*128/tp + 8*128/tp*1024 + 1024*2*3584/tp + 3584/tp*1024
	bfMem := build(t, func() Config { c := c; c.Precision = MixedBF16; return c }()).MaxMemory()
	if got, want := float64(p8.MaxMemory().Weights-bfMem.Weights), 8*wm*2; got != want {
		t.Errorf("FP8 weight cache %g bytes, want %g", got, want)
	}
}

// Context parallelism (Megatron-Core; Transformer Engine's p2p ring): each of CP ranks holds
// 1/CP of every sequence, so per GPU every token-proportional quantity is 1/CP of the CP = 1
// layer's and so is attention's, whose s/CP queries meet all s keys: the GEMM FLOPs and the
// activations kept per layer are exactly 1/CP. Per layer and micro-batch the ring sends the
// rank's K and V, 2·b·(s/CP)·kv·dh/t elements, CP − 1 times forward (and again in the recomputed
// forward), 2(CP − 1) times backward, between ranks TP apart; the gradients are reduced over the
// DP·CP ranks holding the same weights, TP apart; the model FLOPs of the iteration do not change.
func TestContextParallel(t *testing.T) {
	const cp, tp = 4, 2
	c := llama3(4, 1024, 3584, 8, tp)
	c.Seq, c.GlobalBatch, c.DP, c.Recompute, c.Attention = 8192, 8, 2, RecomputeNone, AttnFlash
	one := build(t, c)
	c.CP = cp
	p := build(t, c)
	l1, l := layerOf(one), layerOf(p)
	saved := func(b partition.Block) (n float64) {
		for _, op := range b.Ops {
			n += float64(op.Saved)
		}
		return n
	}
	if got, want := saved(l), saved(l1)/cp; got != want {
		t.Errorf("saved %g bytes per layer, want 1/%d of CP 1's %g", got, cp, saved(l1))
	}
	for _, ph := range []partition.Phase{partition.Forward, partition.Backward} {
		if got, want := sumFLOP(l, matmulIn(ph)), sumFLOP(l1, matmulIn(ph))/cp; rel(got, want) > 1e-12 {
			t.Errorf("%s GEMM FLOP %g, want %g", ph, got, want)
		}
	}
	find := func(b partition.Block, name string) (partition.Op, bool) {
		for _, op := range b.Ops {
			if op.Name == name {
				return op, true
			}
		}
		return partition.Op{}, false
	}
	for _, name := range []string{"attn.flash", "attn.flash.bwd"} {
		op, ok := find(l, name)
		op1, _ := find(l1, name)
		if !ok || rel(float64(op.FLOP), float64(op1.FLOP)/cp) > 1e-12 {
			t.Errorf("%s FLOP %g, want %g", name, float64(op.FLOP), float64(op1.FLOP)/cp)
		}
		if op.Ring != cp || op1.Ring != 0 {
			t.Errorf("%s runs as a ring of %d (CP 1: %d), want %d (0)", name, op.Ring, op1.Ring, cp)
		}
	}
	// The ring's merges (Transformer Engine attention.py @001b7360, AttnFuncWithCPAndKVP2P), hand
	// counted on the last rank: O = 4 heads · 2048 queries · 128 · 2 B = 2,097,152 B of output,
	// KV = 4,194,304 B of keys and values. Forward: the K/V concatenation (read and write KV),
	// out's zeroing (write O) and 4 output corrections (read 2O, write O each): 8O + KV read,
	// 5O + KV written. Backward: the K/V buffer copy (KV, KV), dq's copy and 3 adds (read 7O,
	// write 4O), per step the dK/dV concatenation and accumulation, read 3 and written 2 × their
	// size, half KV at the first 3 steps and KV at the last (7.5KV read, 5KV written): 8.5KV read and
	// 6KV written with the copy.
	const o, kvb = 2_097_152, 4_194_304
	for _, w := range []struct {
		name      string
		read, wrt float64
	}{{"attn.cp.merge", 8*o + kvb, 5*o + kvb}, {"attn.cp.merge.bwd", 7*o + 8.5*kvb, 4*o + 6*kvb}} {
		op, ok := find(l, w.name)
		if !ok || float64(op.Read) != w.read || float64(op.Written) != w.wrt {
			t.Errorf("%s reads %g and writes %g bytes, want %g and %g", w.name, float64(op.Read), float64(op.Written), w.read, w.wrt)
		}
		if _, ok := find(l1, w.name); ok {
			t.Errorf("CP 1 has a %s", w.name)
		}
	}
	kv := units.Bytes(2 * 1 * (8192 / cp) * (8 * 128 / tp) * 2) // K and V of the rank's tokens, bf16
	for _, w := range []struct {
		name  string
		count int
	}{{"cp.kv.fwd", cp - 1}, {"cp.kv.bwd", 2 * (cp - 1)}} {
		found := false
		for _, col := range l.Collectives {
			if col.Name == w.name {
				found = true
				if col.Count != w.count || col.Bytes != kv || col.Group.Stride != tp || col.Dim != partition.DimCP {
					t.Errorf("%s: %d × %v at stride %d (%s), want %d × %v at stride %d", w.name, col.Count, col.Bytes, col.Group.Stride, col.Dim, w.count, kv, tp)
				}
			}
		}
		if !found {
			t.Errorf("no %s", w.name)
		}
	}
	g := p.Stages[0].Grads[0]
	if g.Group.Size != c.DP*cp || g.Group.Stride != tp {
		t.Errorf("gradients over %d ranks at stride %d, want DP × CP = %d at stride %d", g.Group.Size, g.Group.Stride, c.DP*cp, tp)
	}
	if p.ModelFLOP != one.ModelFLOP || p.Layout.GPUs != tp*cp*c.DP {
		t.Errorf("model FLOP %g (CP 1: %g), %d GPUs", float64(p.ModelFLOP), float64(one.ModelFLOP), p.Layout.GPUs)
	}
	c.Seq = 8196 // not 2·CP = 8 equal chunks
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--cp 4 needs --seq 8196 to split into 2 × 4 = 8 equal chunks") {
		t.Errorf("seq 8196: %v", err)
	}
}

// Mixtral (Jiang et al. 2024 Table 1; Mixtral 8×22B's config.json): per layer the GQA attention
// h(32 + 16)·128 + h² … as Llama's, two RMSNorm gains, a router h × 8 and 8 SwiGLU experts of
// 3·h·f each; a token passes through 2 of them. Hand counts: 8×7B 46,702,792,704 in all,
// 12,879,925,248 active (the paper: 47B and 13B; the model card: 46.7B, 12.9B); 8×22B
// 140,630,071,296 and 39,161,468,928 (Mistral AI: 141B, 39B).
func TestMixtralParameters(t *testing.T) {
	for _, c := range []struct {
		name                          string
		layers, hidden, ffn, a, vocab int
		attn, expert                  float64 // per layer: attention with norms; one expert
		total, active                 float64
	}{
		{"8x7B", 32, 4096, 14336, 32, 32000, 25_165_824 + 16_777_216 + 8_192, 176_160_768, 46_702_792_704, 12_879_925_248},
		{"8x22B", 56, 6144, 16384, 48, 32768, 50_331_648 + 37_748_736 + 12_288, 301_989_888, 140_630_071_296, 39_161_468_928},
	} {
		h, l := float64(c.hidden), float64(c.layers)
		emb := 2*float64(c.vocab)*h + h
		if got := l*(c.attn+8*h+8*c.expert) + emb; got != c.total {
			t.Fatalf("%s: the hand count's parts sum to %.0f, not %.0f", c.name, got, c.total)
		}
		if got := l*(c.attn+8*h+2*c.expert) + emb; got != c.active {
			t.Fatalf("%s: the active parts sum to %.0f, not %.0f", c.name, got, c.active)
		}
		cfg := llama3(c.layers, c.hidden, c.ffn, c.a, 1)
		cfg.Vocab, cfg.DP = c.vocab, 8
		cfg.MoE = moe.Spec{Experts: 8, TopK: 2, CapacityFactor: 1, ExpertHidden: c.ffn, EP: 8}
		total, _ := Params(cfg)
		if total != c.total {
			t.Errorf("Mixtral %s: %.0f parameters, hand count %.0f", c.name, total, c.total)
		}
		if active := ActiveParams(cfg, total); active != c.active {
			t.Errorf("Mixtral %s: %.0f active parameters, hand count %.0f", c.name, active, c.active)
		}
	}
}

// SwiGLU experts: per GPU and micro-batch the E/EP = 1 expert runs its E·C received tokens
// through gate and up (2·slots·h·2f) and down (2·slots·f·h) GEMMs, 6·slots·h·f FLOP forward,
// C = ⌈cf·k·n/E⌉ (moe.Spec.Capacity).
func TestGatedExperts(t *testing.T) {
	c := llama3(2, 1024, 2816, 8, 1)
	c.Seq, c.GlobalBatch, c.DP, c.Recompute = 2048, 8, 8, RecomputeNone
	c.MoE = moe.Spec{Experts: 8, TopK: 2, CapacityFactor: 1, ExpertHidden: 2816, EP: 8}
	p := build(t, c)
	var fwd float64
	for _, b := range p.Stages[0].Blocks {
		for _, op := range b.Ops {
			if strings.HasPrefix(op.Name, "moe.expert.fc") && op.Phase == partition.Forward {
				fwd += float64(op.FLOP)
			}
		}
	}
	slots := 8.0 * math.Ceil(1*2*2048/8.0)
	if want := 6 * slots * 1024 * 2816; fwd != want {
		t.Errorf("expert GEMM FLOP %g, want 6·slots·h·f = %g", fwd, want)
	}
}

// FlashAttention under grouped-query attention reads Q of the a/t query heads but K and V of the
// kv/t key/value heads only: (b·s·a·dh + 2·b·s·kv·dh)/t elements of 2 bytes forward.
func TestFlashGQAReads(t *testing.T) {
	c := llama3(2, 1024, 2816, 16, 2)
	c.Arch.KVHeads, c.Attention, c.Seq, c.GlobalBatch, c.MicroBatch = 4, AttnFlash, 2048, 8, 1
	l := layerOf(build(t, c))
	b, s, a, kv, dh, tp := 1.0, 2048.0, 16.0, 4.0, 64.0, 2.0
	for _, op := range l.Ops {
		if op.Name == "attn.flash" && op.Phase == partition.Forward {
			if want := units.Bytes((b*s*a*dh + 2*b*s*kv*dh) / tp * 2); op.Read != want {
				t.Errorf("flash reads %v, want %v", op.Read, want)
			}
			return
		}
	}
	t.Fatal("no attn.flash op")
}

// Squared ReLU (Nemotron; So et al. 2021 "Primer" §3): GeLU's two matrices, so the same
// parameters and GEMMs, and relu(x)² over fc1's output, b·s × f/t elements: by hand for
// s = 4096, f = 16384, t = 2 in bf16, 33,554,432 elements, forward 2 operations each (max,
// square) reading and writing them once (67,108,864 B each way), backward 3 each (2·relu(x)·dy)
// reading x and dy and writing dx. With MoE layers it is refused (experts are GeLU or SwiGLU).
func TestSquaredReLU(t *testing.T) {
	c := Config{Layers: 2, Hidden: 4096, Heads: 32, Seq: 4096, Vocab: 256000, GlobalBatch: 2, MicroBatch: 1,
		TP: 2, PP: 1, DP: 1, Interleave: 1, SeqParallel: true, Precision: MixedBF16, Optimizer: Adam, Capacity: 80 * units.GB,
		Arch: Arch{FFNHidden: 16384, NoBias: true, Positions: PosRoPE}}
	gelu := build(t, c)
	c.MLP = MLPSquaredReLU
	sq := build(t, c)
	if sq.Params != gelu.Params || sq.ModelFLOP != gelu.ModelFLOP {
		t.Errorf("params %g, model FLOP %g; want GeLU's %g, %g", sq.Params, float64(sq.ModelFLOP), gelu.Params, float64(gelu.ModelFLOP))
	}
	const n = 4096 * 16384 / 2
	for _, w := range []struct {
		name             string
		flop, read, wrte float64
	}{{"mlp.squared_relu", 2 * n, 2 * n, 2 * n}, {"mlp.squared_relu.bwd", 3 * n, 4 * n, 2 * n}} {
		found := false
		for _, op := range layerOf(sq).Ops {
			if op.Name == w.name {
				found = true
				if float64(op.FLOP) != w.flop || float64(op.Read) != w.read || float64(op.Written) != w.wrte {
					t.Errorf("%s: %g FLOP, %g B read, %g written; want %g, %g, %g", w.name, float64(op.FLOP), float64(op.Read), float64(op.Written), w.flop, w.read, w.wrte)
				}
			}
		}
		if !found {
			t.Errorf("no %s", w.name)
		}
	}
	c.MoE = moe.Spec{Experts: 8, TopK: 2, CapacityFactor: 1, ExpertHidden: 2048, EP: 1}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--mlp squared-relu with MoE layers is not modelled") {
		t.Errorf("squared ReLU with MoE: %v", err)
	}
}
