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
	// deepseek-ai/DeepSeek-V3 config.json (also in the DeepSeek-V3 report §4.2) and
	// Qwen/Qwen2-57B-A14B config.json.
	hfDeepSeekV3 = `{"architectures": ["DeepseekV3ForCausalLM"], "attention_bias": false, "first_k_dense_replace": 3,
  "hidden_act": "silu", "hidden_size": 7168, "intermediate_size": 18432, "kv_lora_rank": 512, "moe_intermediate_size": 2048,
  "moe_layer_freq": 1, "n_group": 8, "n_routed_experts": 256, "n_shared_experts": 1, "num_attention_heads": 128,
  "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 128, "num_nextn_predict_layers": 1,
  "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "tie_word_embeddings": false, "topk_group": 4,
  "v_head_dim": 128, "vocab_size": 129280}`
	hfQwen2_57B = `{"architectures": ["Qwen2MoeForCausalLM"], "decoder_sparse_step": 1, "hidden_act": "silu", "hidden_size": 3584,
  "intermediate_size": 18944, "max_position_embeddings": 131072, "model_type": "qwen2_moe", "moe_intermediate_size": 2560,
  "mlp_only_layers": [], "num_attention_heads": 28, "num_experts": 64, "num_experts_per_tok": 8, "num_hidden_layers": 28,
  "num_key_value_heads": 4, "shared_expert_intermediate_size": 20480, "tie_word_embeddings": false, "vocab_size": 151936}`
	// A Nemotron config.json as transformers' NeMo converter
	// (src/transformers/models/nemotron/convert_nemotron_nemo_to_hf.py) writes it from the NeMo
	// launcher's nemotron_8b.yaml (the nemotron-8b preset's source): hidden 4,096, FFN 16,384,
	// 32 layers, 32 heads (num_query_groups null), squared ReLU, untied, 256,000 tokens.
	hfNemotron8B = `{"architectures": ["NemotronForCausalLM"], "attention_bias": false, "hidden_act": "relu2",
  "hidden_size": 4096, "intermediate_size": 16384, "max_position_embeddings": 4096, "mlp_bias": false,
  "model_type": "nemotron", "norm_eps": 1e-05, "num_attention_heads": 32, "num_hidden_layers": 32,
  "num_key_value_heads": 32, "partial_rotary_factor": 0.5, "rope_theta": 10000, "tie_word_embeddings": false,
  "vocab_size": 256000}`
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
		{"DeepSeek-V3", hfDeepSeekV3, 671_026_404_352},  // deepseek_test.go's hand count
		// Qwen2-57B-A14B by hand: per layer attention 3,584² · 2 + 2·512·3,584 with q, k, v biases
		// 3,584 + 2·512 (29,364,736), two RMSNorms 7,168, router 3,584·64, 64 experts of
		// 3·3,584·2,560 and a shared one of 3·3,584·20,480 (2,011,409,920 in all); untied
		// embeddings 2·151,936·3,584 and the final norm: 57,408,558,592, Qwen's "57B" (its shared
		// expert's 3,584-wide gate per layer is not modelled).
		{"Qwen2-57B-A14B", hfQwen2_57B, 28*2_011_409_920 + 2*151_936*3_584 + 3_584},
		// Nemotron-8B by hand: per layer attention 4 · 4,096², MLP 2 · 4,096 · 16,384 (up and
		// down, no gate), two LayerNorms with bias 4 · 4,096 (201,342,976); untied embeddings
		// 2 · 256,000 · 4,096 and the final LayerNorm 2 · 4,096: 8,540,135,424.
		{"Nemotron-8B", hfNemotron8B, 32*201_342_976 + 2*256_000*4_096 + 2*4_096},
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
		{strings.Replace(hfMistral7B, "MistralForCausalLM", "GemmaForCausalLM", 1), []string{`"GemmaForCausalLM"`, "known: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, MixtralForCausalLM, Qwen2MoeForCausalLM, DeepseekV3ForCausalLM, NemotronForCausalLM"}},
		{strings.Replace(hfNemotron8B, `"relu2"`, `"silu"`, 1), []string{`hidden_act "silu"`, "modelled as squared-relu; valid: relu2"}},
		{strings.Replace(hfQwen2_57B, `"decoder_sparse_step": 1`, `"decoder_sparse_step": 2`, 1), []string{"decoder_sparse_step 2", "valid: 1"}},
		{strings.Replace(hfQwen2_57B, `"mlp_only_layers": []`, `"mlp_only_layers": [3]`, 1), []string{"mlp_only_layers [3]"}},
		{strings.Replace(hfDeepSeekV3, `"moe_layer_freq": 1`, `"moe_layer_freq": 2`, 1), []string{"moe_layer_freq 2", "valid: 1"}},
		{strings.Replace(hfDeepSeekV3, `"kv_lora_rank": 512`, `"kv_lora_rank": 0`, 1), []string{"kv_lora_rank 0"}},
		{strings.Replace(hfDeepSeekV3, `"n_routed_experts": 256`, `"n_routed_experts": 0`, 1), []string{"n_routed_experts 0"}},
		{strings.Replace(hfMistral7B, "MistralForCausalLM", "MixtralForCausalLM", 1), []string{"num_local_experts 0, num_experts_per_tok 0 and intermediate_size 14336"}},
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

// FuzzImportHF: Hugging Face config.json files through ImportHF. No panic; a file ImportHF
// refuses is a one-line usage error (exit 2); one it reads gives keys that UseHF sets on a
// megatron job or refuses in one line, exit 2 (a width the model keys reject). The seeds (the
// public configs above and broken variants) run in CI.
func FuzzImportHF(f *testing.F) {
	for _, s := range []string{hfLlama31_8B, hfMistral7B, hfMixtral8x7B, hfDeepSeekV3, hfQwen2_57B, hfQwen25_7B, hfNemotron8B,
		`{"architectures": ["LlamaForCausalLM"], "hidden_size": 1e400}`,
		`{"architectures": ["NemotronForCausalLM"], "hidden_act": "relu2", "hidden_size": 7, "intermediate_size": 3,
		  "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 5, "num_key_value_heads": 0}`,
		`{"architectures": ["DeepseekV3ForCausalLM"], "hidden_act": "silu", "q_lora_rank": null}`,
		`[]`, ``, `{"architectures": [1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		oneLine := func(what string, err error) {
			if errs.ExitCode(err) != errs.ExitUsage || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%s: not a one-line usage error: %v", what, err)
			}
		}
		m, err := ImportHF(data, "config.json")
		if err != nil {
			oneLine("ImportHF", err)
			return
		}
		j, err := New("megatron")
		if err != nil {
			t.Fatal(err)
		}
		if err := j.UseHF(m); err != nil {
			oneLine("UseHF", err)
		}
	})
}
