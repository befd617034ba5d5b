package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ddlest/ddlest/internal/errs"
)

// hfArchitectures are the Hugging Face transformers model classes ImportHF reads: decoders with
// grouped-query attention, a SwiGLU MLP (gate_proj, up_proj, down_proj), RMSNorm and rotary
// positions (transformers models/llama/modeling_llama.py LlamaAttention, LlamaMLP,
// LlamaRMSNorm; models/mistral, models/qwen2 the same layer, Qwen2Attention with biases on q, k
// and v only; models/mixtral the same attention with num_local_experts SwiGLU experts of
// intermediate_size, num_experts_per_tok of them per token; models/qwen2_moe Qwen2's attention
// with num_experts experts of moe_intermediate_size and a shared expert of
// shared_expert_intermediate_size; models/deepseek_v3 multi-head latent attention, the first
// first_k_dense_replace layers dense, then n_routed_experts experts of moe_intermediate_size and
// n_shared_experts more; models/nemotron Llama's attention with partial rotary positions, an MLP
// of up_proj and down_proj with hidden_act relu2 between them (NemotronMLP, no gate) and
// NemotronLayerNorm1P, a LayerNorm with bias).
var hfArchitectures = []string{"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "MixtralForCausalLM",
	"Qwen2MoeForCausalLM", "DeepseekV3ForCausalLM", "NemotronForCausalLM"}

// HFArchitectures lists the architectures ImportHF reads.
func HFArchitectures() string { return strings.Join(hfArchitectures, ", ") }

// hfConfig is what ImportHF reads of a config.json (the fields of transformers' LlamaConfig,
// MistralConfig, Qwen2Config, MixtralConfig, Qwen2MoeConfig, DeepseekV3Config and NemotronConfig
// that set the layer's shapes); the rest of the file is ignored.
type hfConfig struct {
	Architectures     []string `json:"architectures"`
	HiddenSize        int      `json:"hidden_size"`
	IntermediateSize  int      `json:"intermediate_size"`
	NumHiddenLayers   int      `json:"num_hidden_layers"`
	NumAttentionHeads int      `json:"num_attention_heads"`
	NumKeyValueHeads  *int     `json:"num_key_value_heads"` // absent: as many as the heads
	HeadDim           *int     `json:"head_dim"`            // absent or null: hidden / heads
	VocabSize         int      `json:"vocab_size"`
	TieWordEmbeddings bool     `json:"tie_word_embeddings"` // the four classes default to false
	HiddenAct         string   `json:"hidden_act"`
	AttentionBias     bool     `json:"attention_bias"`      // Llama: q, k, v and o biases
	MLPBias           bool     `json:"mlp_bias"`            // Llama: gate, up and down biases
	NumLocalExperts   int      `json:"num_local_experts"`   // Mixtral
	NumExpertsPerTok  int      `json:"num_experts_per_tok"` // Mixtral, Qwen2-MoE, DeepSeek-V3
	// Qwen2-MoE
	NumExperts          int   `json:"num_experts"`
	MoEIntermediateSize int   `json:"moe_intermediate_size"` // and DeepSeek-V3
	SharedExpertSize    int   `json:"shared_expert_intermediate_size"`
	DecoderSparseStep   *int  `json:"decoder_sparse_step"`
	MLPOnlyLayers       []int `json:"mlp_only_layers"`
	// DeepSeek-V3
	NRoutedExperts     int  `json:"n_routed_experts"`
	NSharedExperts     int  `json:"n_shared_experts"`
	FirstKDenseReplace int  `json:"first_k_dense_replace"`
	MoELayerFreq       *int `json:"moe_layer_freq"`
	QLoRARank          *int `json:"q_lora_rank"` // null: a full query projection (DeepSeek-V2-Lite)
	KVLoRARank         int  `json:"kv_lora_rank"`
	QKNopeHeadDim      int  `json:"qk_nope_head_dim"`
	QKRopeHeadDim      int  `json:"qk_rope_head_dim"`
	VHeadDim           int  `json:"v_head_dim"`
}

// HFModel is a model imported from a Hugging Face config.json: the megatron model keys it sets,
// in order, as key=value texts (what --set and a job file take).
type HFModel struct {
	Architecture string
	Keys         [][2]string
}

// ImportHF reads a Hugging Face config.json (name names it in errors). An architecture outside
// hfArchitectures, a missing or non-positive shape, or a setting the layer model does not have
// is a usage error naming the field.
func ImportHF(data []byte, name string) (HFModel, error) {
	var c hfConfig
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&c); err != nil {
		return HFModel{}, errs.Usage("%s: not a Hugging Face config.json: %v", name, err)
	}
	if len(c.Architectures) != 1 {
		return HFModel{}, errs.Usage("%s: architectures %v: want one of %s", name, c.Architectures, HFArchitectures())
	}
	arch := c.Architectures[0]
	if !slices.Contains(hfArchitectures, arch) {
		return HFModel{}, errs.Usage("%s: architecture %q is not one ddlest reads; known: %s", name, arch, HFArchitectures())
	}
	for _, f := range []struct {
		key string
		v   int
	}{{"hidden_size", c.HiddenSize}, {"intermediate_size", c.IntermediateSize}, {"num_hidden_layers", c.NumHiddenLayers},
		{"num_attention_heads", c.NumAttentionHeads}, {"vocab_size", c.VocabSize}} {
		if f.v < 1 {
			return HFModel{}, errs.Usage("%s: %s %d: want a positive integer", name, f.key, f.v)
		}
	}
	// Every class but Nemotron has Llama's gated MLP (SwiGLU) and RMSNorm; Nemotron's MLP is
	// up_proj, relu(x)², down_proj and its norm a LayerNorm with bias
	// (transformers src/transformers/models/nemotron/configuration_nemotron.py @05cd1ec1:
	// hidden_act "relu2" by default; modeling_nemotron.py NemotronMLP, NemotronLayerNorm1P).
	mlp, norm, act := "swiglu", "rmsnorm", "silu"
	if arch == "NemotronForCausalLM" {
		mlp, norm, act = "squared-relu", "layernorm", "relu2"
	}
	if c.HiddenAct != act {
		return HFModel{}, errs.Usage("%s: hidden_act %q: %s's MLP is modelled as %s; valid: %s", name, c.HiddenAct, arch, mlp, act)
	}
	kv := c.NumAttentionHeads
	if c.NumKeyValueHeads != nil {
		kv = *c.NumKeyValueHeads
	}
	headDim := 0
	if c.HeadDim != nil && *c.HeadDim != c.HiddenSize/c.NumAttentionHeads {
		headDim = *c.HeadDim
	}
	noBias, qkvBias := true, arch == "Qwen2ForCausalLM" || arch == "Qwen2MoeForCausalLM"
	switch {
	case c.AttentionBias && c.MLPBias:
		noBias = false
	case c.AttentionBias || c.MLPBias:
		return HFModel{}, errs.Usage("%s: attention_bias %t with mlp_bias %t: ddlest's layers have biases on every linear layer, on none, or on QKV only", name, c.AttentionBias, c.MLPBias)
	}
	itoa := strconv.Itoa
	m := HFModel{Architecture: arch, Keys: [][2]string{
		{"layers", itoa(c.NumHiddenLayers)}, {"hidden", itoa(c.HiddenSize)}, {"heads", itoa(c.NumAttentionHeads)},
		{"kv_heads", itoa(kv)}, {"head_dim", itoa(headDim)}, {"ffn_hidden", itoa(c.IntermediateSize)},
		{"mlp", mlp}, {"norm", norm}, {"positions", "rope"},
		{"no_bias", strconv.FormatBool(noBias)}, {"qkv_bias", strconv.FormatBool(qkvBias && noBias)},
		{"untied_embeddings", strconv.FormatBool(!c.TieWordEmbeddings)}, {"vocab", itoa(c.VocabSize)},
	}}
	// The MoE layers route without dropping tokens; capacity factor 1 is that with balanced
	// experts [D] (moe.Spec.Capacity).
	experts := func(nKey string, n int, hiddenKey string, hidden int, extra ...[2]string) error {
		if n < 1 || c.NumExpertsPerTok < 1 || hidden < 1 {
			return errs.Usage("%s: %s %d, num_experts_per_tok %d and %s %d: want positive integers", name, nKey, n, c.NumExpertsPerTok, hiddenKey, hidden)
		}
		m.Keys = append(append(m.Keys, [2]string{"moe.experts", itoa(n)}, [2]string{"moe.top_k", itoa(c.NumExpertsPerTok)},
			[2]string{"moe.expert_hidden", itoa(hidden)}, [2]string{"moe.capacity_factor", "1"}), extra...)
		return nil
	}
	var err error
	switch arch {
	case "MixtralForCausalLM":
		err = experts("num_local_experts", c.NumLocalExperts, "intermediate_size", c.IntermediateSize)
	case "Qwen2MoeForCausalLM":
		// Every layer MoE (decoder_sparse_step 1, no mlp_only_layers); its shared expert's
		// sigmoid gate (h × 1 per layer) is not modelled [D].
		switch {
		case c.DecoderSparseStep != nil && *c.DecoderSparseStep != 1:
			err = errs.Usage("%s: decoder_sparse_step %d: ddlest's MoE stacks have MoE layers throughout; valid: 1", name, *c.DecoderSparseStep)
		case len(c.MLPOnlyLayers) > 0:
			err = errs.Usage("%s: mlp_only_layers %v: ddlest's dense layers come first (moe.dense_layers); valid: []", name, c.MLPOnlyLayers)
		default:
			err = experts("num_experts", c.NumExperts, "moe_intermediate_size", c.MoEIntermediateSize, [2]string{"moe.shared_hidden", itoa(c.SharedExpertSize)})
		}
	case "DeepseekV3ForCausalLM":
		err = c.deepSeek(&m, name, experts)
	}
	if err != nil {
		return HFModel{}, err
	}
	return m, nil
}

// deepSeek sets DeepSeek-V3's keys on m: multi-head latent attention (head_dim is its
// qk_nope_head_dim; every head its own key and value) and the MoE stack with its dense first
// layers and shared experts.
func (c *hfConfig) deepSeek(m *HFModel, name string, experts func(string, int, string, int, ...[2]string) error) error {
	if c.MoELayerFreq != nil && *c.MoELayerFreq != 1 {
		return errs.Usage("%s: moe_layer_freq %d: ddlest's MoE stacks have MoE layers throughout after the dense ones; valid: 1", name, *c.MoELayerFreq)
	}
	if c.KVLoRARank < 1 || c.QKNopeHeadDim < 1 || c.QKRopeHeadDim < 0 || c.VHeadDim < 0 {
		return errs.Usage("%s: kv_lora_rank %d, qk_nope_head_dim %d, qk_rope_head_dim %d, v_head_dim %d: want positive widths", name,
			c.KVLoRARank, c.QKNopeHeadDim, c.QKRopeHeadDim, c.VHeadDim)
	}
	qr := 0
	if c.QLoRARank != nil {
		qr = *c.QLoRARank
	}
	itoa := strconv.Itoa
	for i, kv := range m.Keys {
		switch kv[0] {
		case "kv_heads":
			m.Keys[i][1] = "0"
		case "head_dim":
			m.Keys[i][1] = itoa(c.QKNopeHeadDim)
		}
	}
	m.Keys = append(m.Keys, [2]string{"q_lora_rank", itoa(qr)}, [2]string{"kv_lora_rank", itoa(c.KVLoRARank)},
		[2]string{"rope_head_dim", itoa(c.QKRopeHeadDim)}, [2]string{"v_head_dim", itoa(c.VHeadDim)})
	return experts("n_routed_experts", c.NRoutedExperts, "moe_intermediate_size", c.MoEIntermediateSize,
		[2]string{"moe.shared_hidden", itoa(c.NSharedExperts * c.MoEIntermediateSize)}, [2]string{"moe.dense_layers", itoa(c.FirstKDenseReplace)})
}

// UseHF replaces the job's model with one imported from a Hugging Face config.json: the
// workload's model defaults (sequence length, scaling-law settings), then the imported keys.
// The execution is kept.
func (j *Job) UseHF(m HFModel) error {
	if j.Workload != "megatron" {
		return errs.Usage("a Hugging Face config.json is a megatron model, not %s", j.Workload)
	}
	j.Model = megatronWorkload{}.NewModel()
	for _, kv := range m.Keys {
		if err := j.Set("model."+kv[0], kv[1]); err != nil {
			return fmt.Errorf("%s: %w", m.Architecture, err)
		}
	}
	return nil
}
