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
// intermediate_size, num_experts_per_tok of them per token).
var hfArchitectures = []string{"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "MixtralForCausalLM"}

// HFArchitectures lists the architectures ImportHF reads.
func HFArchitectures() string { return strings.Join(hfArchitectures, ", ") }

// hfConfig is what ImportHF reads of a config.json (the fields of transformers' LlamaConfig,
// MistralConfig, Qwen2Config and MixtralConfig that set the layer's shapes); the rest of the file is ignored.
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
	NumExpertsPerTok  int      `json:"num_experts_per_tok"` // Mixtral
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
	if c.HiddenAct != "silu" {
		return HFModel{}, errs.Usage("%s: hidden_act %q: %s's gated MLP is modelled as SwiGLU; valid: silu", name, c.HiddenAct, arch)
	}
	kv := c.NumAttentionHeads
	if c.NumKeyValueHeads != nil {
		kv = *c.NumKeyValueHeads
	}
	headDim := 0
	if c.HeadDim != nil && *c.HeadDim != c.HiddenSize/c.NumAttentionHeads {
		headDim = *c.HeadDim
	}
	noBias, qkvBias := true, arch == "Qwen2ForCausalLM"
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
		{"mlp", "swiglu"}, {"norm", "rmsnorm"}, {"positions", "rope"},
		{"no_bias", strconv.FormatBool(noBias)}, {"qkv_bias", strconv.FormatBool(qkvBias && noBias)},
		{"untied_embeddings", strconv.FormatBool(!c.TieWordEmbeddings)}, {"vocab", itoa(c.VocabSize)},
	}}
	if arch == "MixtralForCausalLM" {
		if c.NumLocalExperts < 1 || c.NumExpertsPerTok < 1 {
			return HFModel{}, errs.Usage("%s: num_local_experts %d and num_experts_per_tok %d: want positive integers", name, c.NumLocalExperts, c.NumExpertsPerTok)
		}
		// Mixtral routes without dropping tokens; capacity factor 1 is that with balanced
		// experts [D] (moe.Spec.Capacity).
		m.Keys = append(m.Keys, [2]string{"moe.experts", itoa(c.NumLocalExperts)}, [2]string{"moe.top_k", itoa(c.NumExpertsPerTok)},
			[2]string{"moe.expert_hidden", itoa(c.IntermediateSize)}, [2]string{"moe.capacity_factor", "1"})
	}
	return m, nil
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
