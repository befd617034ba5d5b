package zoo

import (
	"math"
	"strings"
	"testing"
)

// Parameter counts against the papers that train these models (each cited in Models()), within 1%.
// BERT-large is the exception: its architecture has 336.2M parameters (HuggingFace
// BertForPreTraining; BertModel 335,141,888), which Devlin et al. round to "340M" (−1.1%); we check
// the exact architecture count instead.
func TestParamCounts(t *testing.T) {
	exact := map[string]float64{ // the architectures' exact counts (torchvision / HuggingFace)
		"resnet50": 25557032, "resnet101": 44549160, "resnet152": 60192808, "vgg16": 138357544, "vgg19": 143667240,
		"alexnet": 62378344, "lenet5": 61706, "mobilenetv2": 3504872, "bert-large": 336226108,
	}
	r := Models()
	for _, name := range r.Names() {
		m, _ := r.Lookup(name)
		n, err := m.Build()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := n.Params()
		if want, ok := exact[name]; ok && p != want {
			t.Errorf("%s: %.0f parameters, architecture has %.0f", name, p, want)
		}
		if name == "bert-large" || name == "resnet152" { // HammingMesh's 60.2M: the row hammingmesh/params-resnet152
			continue
		}
		if math.Abs(p-m.PaperParams) > 0.01*m.PaperParams {
			t.Errorf("%s: %.4g parameters, %s says %.4g", name, p, m.ParamsSource, m.PaperParams)
		}
	}
}

// Forward multiply-accumulates per 224×224 image, against the commonly quoted figures:
// ResNet-50 4.1G, ResNet-152 11.5G, VGG-16 15.5G, MobileNetV2 300M (Sandler et al. 2018 Table 4).
func TestMACs(t *testing.T) {
	for name, want := range map[string]float64{"resnet50": 4.1e9, "resnet152": 11.5e9, "vgg16": 15.5e9, "mobilenetv2": 300e6} {
		m, _ := Models().Lookup(name)
		n, _ := m.Build()
		if got := n.MACs(); math.Abs(got-want) > 0.02*want {
			t.Errorf("%s: %.4g MACs, want %.3g", name, got, want)
		}
	}
}

func TestUnknownModel(t *testing.T) {
	_, err := Models().Lookup("gpt5")
	if err == nil {
		t.Fatal("unknown model accepted")
	}
	for _, want := range []string{`"gpt5"`, "resnet50", "bert-large"} {
		if !contains(err.Error(), want) {
			t.Errorf("%v lacks %s", err, want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
