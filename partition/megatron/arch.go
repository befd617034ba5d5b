package megatron

import (
	"fmt"
	"strings"

	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/partition"
)

// MLP is the feed-forward block's form.
type MLP int

const (
	// MLPGeLU is GPT's: fc1 to the FFN width, GeLU, fc2 back (Radford et al. 2019; Brown et al.
	// 2020 §2.1).
	MLPGeLU MLP = iota
	// MLPSwiGLU is the gated linear unit with the Swish activation (Shazeer 2020, "GLU Variants
	// Improve Transformer" Eq. 6): FFN(x) = (Swish(xW) ⊙ xV)·W2, three matrices; Megatron-LM
	// fuses W and V into one column-parallel fc1 of twice the FFN width (--swiglu,
	// megatron/core/transformer/mlp.py gated_linear_unit). Llama, Mistral, Qwen, DeepSeek.
	MLPSwiGLU
	// MLPSquaredReLU is GeLU's two matrices with relu(x)² between them (So et al. 2021,
	// "Primer" §3; Nemotron-4, arXiv 2402.16819 §2; NeMo's activation squared-relu), one
	// compiled elementwise kernel in Megatron-Core (megatron/core/activations.py squared_relu,
	// @jit_fuser).
	MLPSquaredReLU
)

var mlpNames = []string{"gelu", "swiglu", "squared-relu"}

func (x MLP) String() string { return mlpNames[x] }

// MarshalText renders the name in JSON and YAML.
func (x MLP) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (x *MLP) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, mlpNames) }

// activation is the MLP's elementwise activation.
func (x MLP) activation() partition.Activation {
	if x == MLPSquaredReLU {
		return partition.ActSquaredReLU
	}
	return partition.GatedActivation(x == MLPSwiGLU)
}

// Norm is the normalisation of the residual stream.
type Norm int

const (
	// NormLayer is LayerNorm (Ba et al. 2016): mean and variance, a gain γ and a bias β.
	NormLayer Norm = iota
	// NormRMS is RMSNorm (Zhang & Sennrich 2019): root mean square only, a gain γ and no bias.
	NormRMS
)

var normNames = []string{"layernorm", "rmsnorm"}

func (x Norm) String() string { return normNames[x] }

// MarshalText renders the name in JSON and YAML.
func (x Norm) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (x *Norm) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, normNames) }

// Positions is how token positions enter the model.
type Positions int

const (
	// PosLearned adds a learned absolute position table of seq × hidden to the token embedding
	// (GPT-2/3; Megatron-LM --position-embedding-type learned_absolute).
	PosLearned Positions = iota
	// PosRoPE rotates every query and key by its position (Su et al. 2021, RoFormer): no table,
	// an elementwise pass over Q and K forward and backward (Megatron-LM
	// --position-embedding-type rope).
	PosRoPE
)

var positionNames = []string{"learned", "rope"}

func (x Positions) String() string { return positionNames[x] }

// MarshalText renders the name in JSON and YAML.
func (x Positions) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (x *Positions) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, positionNames) }

// Arch is a decoder layer's architecture beyond its hidden size and heads. The zero value is
// GPT-3's (Brown et al. 2020 §2.1): multi-head attention with hidden/heads per head, a GeLU MLP
// of 4·hidden, LayerNorm, biases on every linear layer, learned absolute positions.
type Arch struct {
	// KVHeads is the number of key/value heads (grouped-query attention, Ainslie et al. 2023:
	// every group of heads/kv_heads query heads shares one key and value head; 1 is multi-query
	// attention); 0: as many as the query heads (multi-head attention).
	KVHeads int
	// HeadDim is each head's width; 0: hidden/heads.
	HeadDim int
	// FFNHidden is the MLP's inner width (for SwiGLU, of each of the gate and the up
	// projection); 0: 4·hidden.
	FFNHidden int
	MLP       MLP
	Norm      Norm
	// NoBias drops the biases of every linear layer (Llama; Megatron-LM --disable-bias-linear).
	NoBias bool
	// QKVBias keeps the QKV projection's bias when NoBias drops the others (Qwen2; Megatron-Core
	// add_qkv_bias, megatron/core/transformer/transformer_config.py @002526d8).
	QKVBias   bool
	Positions Positions
	// Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434 §2.1; DeepSeek-V3, arXiv
	// 2412.19437 §2.1.1), when KVRank > 0: keys and values come up from one latent of KVRank per
	// token (W^DKV, RMSNorm, W^UK and W^UV fused), queries from a latent of QRank (0: one
	// h × heads·(HeadDim + RopeDim) projection), and a rotary key of RopeDim per token shared by
	// the heads (W^KR, computed with W^DKV) joins each head's HeadDim-wide key; values are
	// VHeadDim wide per head (0: HeadDim). Every head has its own key and value (KVHeads is
	// unused). Down-projections are replicated, up-projections split by heads over the
	// tensor-parallel ranks (deepseek-ai/DeepSeek-V3 inference/model.py, class MLA: wq_a and
	// wkv_a Linear, wq_b and wkv_b ColumnParallelLinear, wo RowParallelLinear).
	QRank, KVRank, RopeDim, VHeadDim int
}

// shape is an Arch resolved against the hidden size and heads: every width a layer's ops and
// parameter count need.
type shape struct {
	h, a, kv, dh, f     int
	rms                 bool
	act                 partition.Activation // gated (two fc1 halves) when SwiGLU
	bias, qkvBias, rope bool
	// dv is each value head's width (dh but with MLA); MLA's latent ranks qr, kvr and the rotary
	// key width dr (all 0 without it).
	dv, qr, kvr, dr int
	mla             bool
}

// resolve fills in Arch's defaults for a model of hidden size h and a heads.
func (x Arch) resolve(h, a int) shape {
	s := shape{h: h, a: a, kv: x.KVHeads, dh: x.HeadDim, f: x.FFNHidden,
		act: x.MLP.activation(), rms: x.Norm == NormRMS, bias: !x.NoBias, qkvBias: !x.NoBias || x.QKVBias,
		rope: x.Positions == PosRoPE}
	if s.kv == 0 {
		s.kv = a
	}
	if s.dh == 0 && a > 0 {
		s.dh = h / a
	}
	if s.f == 0 {
		s.f = 4 * h
	}
	s.dv = s.dh
	if x.KVRank > 0 {
		s.mla, s.kv, s.qr, s.kvr, s.dr = true, a, x.QRank, x.KVRank, x.RopeDim
		if x.VHeadDim > 0 {
			s.dv = x.VHeadDim
		}
	}
	return s
}

// dqk is each head's query and key width (MLA: with the rotary part).
func (s shape) dqk() int { return s.dh + s.dr }

// gpt is GPT-3's layer of hidden size h (the heads do not change its widths).
func gpt(h int) shape { return Arch{}.resolve(h, 1) }

// qkvWidth is the fused QKV projection's output width on one of t tensor-parallel ranks: the
// query heads and the key and value heads, each split over the ranks (Megatron-Core
// num_query_groups: the key/value heads are split, never replicated).
func (s shape) qkvWidth(t int) int {
	if s.mla { // MLA: the queries only, each head's key and rotary widths
		return s.a * s.dqk() / t
	}
	return (s.a + 2*s.kv) * s.dh / t
}

// fc1Width is fc1's output width on one rank: the gate and up projections fused under SwiGLU.
func (s shape) fc1Width(t int) int {
	if s.act == partition.ActSwiGLU {
		return 2 * s.f / t
	}
	return s.f / t
}

// normParams is one normalisation's vector parameters (γ, and β for LayerNorm).
func (s shape) normParams() float64 {
	if s.rms {
		return float64(s.h)
	}
	return 2 * float64(s.h)
}

// weights lists a layer's parameter tensors on one of t tensor-parallel ranks (Megatron-LM,
// Shoeybi et al. 2019 §3) as [rows, cols], biases as [n, 1] ({0, 0} when the layer has none):
// QKV and fc1 are column-parallel (weights and biases split), the attention projection and fc2
// row-parallel (weights split, biases replicated), the two normalisations replicated. For GPT-3
// the sum is 12h²/t + 7h/t + 6h, the #Params-per-GPU rule that reproduces RAMP Table 9
// (reference/ramp.md §5.3).
//
// With MLA the QKV slot is the query (up-)projection, and four more entries follow: the query
// and key/value down-projections (replicated), the key/value up-projection (split by heads),
// and the two latent RMSNorms' gains [qr + kvr, 1] (replicated; not a weight matrix).
func (s shape) weights(t int) [layerWeights][2]int {
	qkv, fc1 := s.qkvWidth(t), s.fc1Width(t) // each once: the divisions dominate a count
	var qkvB, projB, fc1B, fc2B [2]int
	if s.qkvBias {
		qkvB = [2]int{qkv, 1}
	}
	if s.bias {
		projB, fc1B, fc2B = [2]int{s.h, 1}, [2]int{fc1, 1}, [2]int{s.h, 1}
	}
	w := [layerWeights][2]int{
		{s.h, qkv}, qkvB, // attn.qkv
		{s.a * s.dv / t, s.h}, projB, // attn.proj
		{s.h, fc1}, fc1B, // mlp.fc1
		{s.f / t, s.h}, fc2B, // mlp.fc2
	}
	if s.mla {
		w[0] = [2]int{s.qIn(), qkv}
		if s.qr > 0 {
			w[8] = [2]int{s.h, s.qr} // attn.q_down
		}
		w[9] = [2]int{s.h, s.kvr + s.dr}               // attn.kv_down (with the rotary key)
		w[10] = [2]int{s.kvr, s.a * (s.dh + s.dv) / t} // attn.kv_up
		w[11] = [2]int{s.qr + s.kvr, 1}                // the latents' RMSNorm gains
	}
	return w
}

// layerWeights is the entries of shape.weights; the first 8 are GPT's, 8–10 MLA's matrices.
const layerWeights = 12

// isMatrix reports whether weights' entry i is a weight matrix (not a bias or a gain).
func isMatrix(i int) bool { return (i < 8 && i%2 == 0) || (i >= 8 && i <= 10) }

// qIn is the query projection's input width: the query latent's with MLA's QRank, else hidden.
func (s shape) qIn() int {
	if s.qr > 0 {
		return s.qr
	}
	return s.h
}

// counts is a layer's parameters on one of t tensor-parallel ranks: all of them, the attention
// half's (QKV, projection, both normalisations: the layer without the MLP's two linear layers)
// and the four weight matrices'.
func (s shape) counts(t int) (layer, attn, linear float64) {
	w := s.weights(t)
	var mlp float64
	for i, x := range w {
		n := float64(x[0]) * float64(x[1])
		layer += n
		if i >= 4 && i < 8 {
			mlp += n
		}
		if isMatrix(i) {
			linear += n
		}
	}
	layer += 2 * s.normParams()
	return layer, layer - mlp, linear
}

// mlpLinear is the MLP's weight matrices on one of t tensor-parallel ranks (fc1 and fc2).
func (s shape) mlpLinear(t int) float64 {
	w := s.weights(t)
	return float64(w[4][0])*float64(w[4][1]) + float64(w[6][0])*float64(w[6][1])
}

// layerParams is a layer's parameter count on one of t tensor-parallel ranks.
func (s shape) layerParams(t int) float64 {
	layer, _, _ := s.counts(t)
	return layer
}

// validate adds the architecture's problems to p (heads and hidden already checked positive).
func (x Arch) validate(p *params.Problems, hidden, heads, tp int, okA, okT bool) {
	if x.KVHeads < 0 || x.HeadDim < 0 || x.FFNHidden < 0 {
		p.Addf("--kv-heads %d, --head-dim %d and --ffn-hidden %d must be ≥ 0 (0: the GPT-3 default)", x.KVHeads, x.HeadDim, x.FFNHidden)
		return
	}
	if okA && x.KVHeads > 0 && heads%x.KVHeads != 0 {
		p.Addf("--kv-heads %d does not divide the %d heads; valid: %s", x.KVHeads, heads, divisorList(heads))
	}
	if okA && okT && x.KVHeads > 0 && x.KVHeads%tp != 0 {
		p.Addf("--tp %d does not divide the %d kv heads (Megatron-Core splits them over the tensor-parallel ranks); valid: %s", tp, x.KVHeads, divisorList(x.KVHeads))
	}
	if okT && x.FFNHidden > 0 && x.FFNHidden%tp != 0 {
		p.Addf("--tp %d does not divide --ffn-hidden %d", tp, x.FFNHidden)
	}
	switch {
	case x.QRank < 0 || x.KVRank < 0 || x.RopeDim < 0 || x.VHeadDim < 0:
		p.Addf("--q-lora-rank %d, --kv-lora-rank %d, --rope-head-dim %d and --v-head-dim %d must be ≥ 0", x.QRank, x.KVRank, x.RopeDim, x.VHeadDim)
	case x.KVRank == 0 && (x.QRank > 0 || x.RopeDim > 0 || x.VHeadDim > 0):
		p.Addf("--q-lora-rank, --rope-head-dim and --v-head-dim shape multi-head latent attention: they need --kv-lora-rank > 0")
	case x.KVRank > 0 && x.KVHeads > 0 && x.KVHeads != heads:
		p.Addf("--kv-heads %d: multi-head latent attention gives every one of the %d heads its own key and value; leave --kv-heads 0", x.KVHeads, heads)
	case x.KVRank > 0 && okT && tp > 1:
		p.Addf("--tp %d: multi-head latent attention is modelled with --tp 1 here (DeepSeek-V3 trains without tensor parallelism, arXiv 2412.19437 §3.2)", tp)
	}
}

// Describe names the parts of the architecture that differ from GPT-3's, e.g. "8 kv heads, FFN
// 14336 swiglu, rmsnorm, rope, no biases" ("" for GPT-3's).
func (x Arch) Describe() string {
	var parts []string
	if x.KVHeads > 0 {
		parts = append(parts, fmt.Sprintf("%d kv heads", x.KVHeads))
	}
	if x.HeadDim > 0 {
		parts = append(parts, fmt.Sprintf("head dim %d", x.HeadDim))
	}
	switch {
	case x.FFNHidden > 0:
		parts = append(parts, fmt.Sprintf("FFN %d %s", x.FFNHidden, x.MLP))
	case x.MLP != MLPGeLU:
		parts = append(parts, x.MLP.String())
	}
	if x.KVRank > 0 {
		parts = append(parts, fmt.Sprintf("MLA q/kv rank %d/%d, rope dim %d", x.QRank, x.KVRank, x.RopeDim))
	}
	if x.Norm != NormLayer {
		parts = append(parts, x.Norm.String())
	}
	if x.Positions != PosLearned {
		parts = append(parts, x.Positions.String())
	}
	switch {
	case x.NoBias && x.QKVBias:
		parts = append(parts, "QKV bias only")
	case x.NoBias:
		parts = append(parts, "no biases")
	}
	return strings.Join(parts, ", ")
}

// Resolved is x with its defaults filled in for a model of hidden size h and a heads: the
// key/value heads, head width and FFN width the model has.
func (x Arch) Resolved(h, a int) Arch {
	s := x.resolve(h, a)
	x.KVHeads, x.HeadDim, x.FFNHidden = s.kv, s.dh, s.f
	return x
}
