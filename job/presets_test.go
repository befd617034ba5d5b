package job

import (
	"testing"

	"github.com/ddlest/ddlest/partition/megatron"
)

// The Llama 2 and Nemotron presets count the parameters of their sources. Hand counts, per
// layer: attention h·(h + 2·kv·d_h) + h² (QKV and projection, no biases), the MLP 3·h·f (SwiGLU)
// or 2·h·f (squared ReLU, two matrices), the norms 2·h (RMSNorm γ) or 2·2h (LayerNorm γ, β);
// then the untied embedding and LM head 2·V·h and the final norm. Sources: Llama 2's sizes on
// the model cards (meta-llama/Llama-2-7b-hf, -13b-hf, -70b-hf: 6.74B, 13.0B, 69.0B; the
// safetensors indexes' totals 6,738,415,616, 13,015,864,320 and 68,976,648,192, which the hand
// count meets exactly); Nemotron-4 340B: "340 billion parameters" (nvidia/Nemotron-4-340B-Base
// model card; the report arXiv 2406.11704 rounds to 340B as well); each within 1%.
func TestLlama2NemotronParameters(t *testing.T) {
	llama := func(l, h, f, a, kv float64) float64 {
		return l*(h*(h+2*kv*h/a)+h*h+3*h*f+2*h) + 2*32000*h + h
	}
	const l, h, v = 96.0, 18432.0, 256000.0
	nemotron340 := l*(h*(h+2*8*h/96)+h*h+2*h*4*h+2*2*h) + 2*v*h + 2*h
	for _, c := range []struct {
		preset          string
		hand, published float64
	}{
		{"llama2-7b", llama(32, 4096, 11008, 32, 32), 6.74e9},
		{"llama2-13b", llama(40, 5120, 13824, 40, 40), 13.0e9},
		{"llama2-70b", llama(80, 8192, 28672, 64, 8), 69.0e9},
		{"nemotron-4-340b", nemotron340, 340e9},
	} {
		cfg, err := PresetConfig(c.preset)
		if err != nil {
			t.Fatal(err)
		}
		total, _ := megatron.Params(cfg)
		if total != c.hand {
			t.Errorf("%s: %.0f parameters, hand count %.0f", c.preset, total, c.hand)
		}
		if r := total / c.published; r < 0.99 || r > 1.01 {
			t.Errorf("%s: %.4g parameters, more than 1%% from the source's %.4g", c.preset, total, c.published)
		}
	}
	for _, c := range []struct {
		preset string
		exact  float64
	}{{"llama2-7b", 6_738_415_616}, {"llama2-13b", 13_015_864_320}, {"llama2-70b", 68_976_648_192}} {
		cfg, _ := PresetConfig(c.preset)
		if total, _ := megatron.Params(cfg); total != c.exact {
			t.Errorf("%s: %.0f parameters, the safetensors index has %.0f", c.preset, total, c.exact)
		}
	}
}
