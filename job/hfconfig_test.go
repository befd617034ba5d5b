package job

import (
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/partition/megatron"
)

// Public config.json files (the shape fields as published on Hugging Face; the other fields of
// each file are left out, ImportHF ignores them): meta-llama/Llama-3.1-8B, mistralai/Mistral-7B-v0.1,
// Qwen/Qwen2.5-7B and mistralai/Mixtral-8x7B-v0.1. The imported models have the hand-counted parameters of their layers:
// Llama 3.1 8B 8,030,261,248 (arch_test.go); Mistral 7B the same layer with a 32,000-token
// vocabulary, 32 × 218,112,000 + 2 · 32,000 · 4,096 + 4,096 = 7,241,732,096 (its model card: 7.3B
// [AMB: rounded up]); Qwen2.5 7B 7,615,616,512 (QKV biases, arch_test.go).
const (
	hfLlama31_8B = `{"architectures": ["LlamaForCausalLM"], "attention_bias": false, "hidden_act": "silu",
  "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 131072, "mlp_bias": false,
  "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": false, "vocab_size": 128256}`
	hfMistral7B = `{"architectures": ["MistralForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
  "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mistral", "num_attention_heads": 32,
  "num_hidden_layers": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
  "sliding_window": 4096, "tie_word_embeddings": false, "vocab_size": 32000}`
	hfMixtral8x7B = `{"architectures": ["MixtralForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
  "intermediate_size": 14336, "max_position_embeddings": 32768, "model_type": "mixtral", "num_attention_heads": 32,
  "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 1000000.0, "tie_word_embeddings": false, "vocab_size": 32000}`
	hfQwen25_7B = `{"architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu", "hidden_size": 3584,
  "intermediate_size": 18944, "max_position_embeddings": 131072, "model_type": "qwen2", "num_attention_heads": 28,
  "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06, "rope_theta": 1000000.0,
  "tie_word_embeddings": false, "vocab_size": 152064}`
)

func TestImportHF(t *testing.T) {
	for _, c := range []struct {
		name, config string
		params       float64
	}{
		{"Llama 3.1 8B", hfLlama31_8B, 8_030_261_248},
		{"Mistral 7B", hfMistral7B, 7_241_732_096},
		{"Qwen2.5 7B", hfQwen25_7B, 7_615_616_512},
		{"Mixtral 8x7B", hfMixtral8x7B, 46_702_792_704}, // arch_test.go's hand count
	} {
		m, err := ImportHF([]byte(c.config), c.name)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		j, err := New("megatron")
		if err != nil {
			t.Fatal(err)
		}
		if err := j.UseHF(m); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		cfg := j.Model.(*TransformerModel).config(j.Execution.(*TransformerExecution))
		cfg.TP = 1
		if total, _ := megatron.Params(cfg); total != c.params {
			t.Errorf("%s: %.0f parameters, hand count %.0f", c.name, total, c.params)
		}
	}
}

// Bad config files: one line naming the field and what would be valid, exit 2.
func TestImportHFBadInput(t *testing.T) {
	llama := func(from, to string) string { return strings.Replace(hfLlama31_8B, from, to, 1) }
	for _, c := range []struct {
		config string
		want   []string
	}{
		{strings.Replace(hfMistral7B, "MistralForCausalLM", "Qwen2MoeForCausalLM", 1), []string{`"Qwen2MoeForCausalLM"`, "known: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, MixtralForCausalLM"}},
		{strings.Replace(hfMistral7B, "MistralForCausalLM", "MixtralForCausalLM", 1), []string{"num_local_experts 0 and num_experts_per_tok 0"}},
		{llama(`"hidden_size": 4096, `, ""), []string{"hidden_size 0", "positive"}},
		{llama(`"silu"`, `"gelu"`), []string{`hidden_act "gelu"`, "valid: silu"}},
		{llama(`"attention_bias": false`, `"attention_bias": true`), []string{"attention_bias true with mlp_bias false"}},
		{llama(`"architectures": ["LlamaForCausalLM"], `, ""), []string{"architectures []", "want one of"}},
		{`{"hidden_size": "4096"`, []string{"not a Hugging Face config.json"}},
	} {
		_, err := ImportHF([]byte(c.config), "config.json")
		if err == nil || errs.ExitCode(err) != 2 || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v (exit %d), want one line, exit 2", c.want[0], err, errs.ExitCode(err))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: lacks %q", err, w)
			}
		}
	}
}
