package zoo

import (
	"fmt"

	"github.com/ddlest/ddlest/partition/nn"
	"github.com/ddlest/ddlest/partition/resnet"
)

// VGG builds VGG-16 (configuration D) or VGG-19 (E) of Simonyan & Zisserman 2015, Table 1:
// 3×3 convolutions with biases and ReLU, 2×2 max pooling, and three fully connected layers
// (25088 → 4096 → 4096 → 1000, dropout between them). 138,357,544 and 143,667,240 parameters.
func VGG(depth int) (*nn.Net, error) {
	cfg := map[int][]int{16: {2, 2, 3, 3, 3}, 19: {2, 2, 4, 4, 4}}[depth]
	if cfg == nil {
		return nil, fmt.Errorf("vgg: no VGG-%d; valid: 16, 19", depth)
	}
	b := nn.New(fmt.Sprintf("vgg%d", depth), 3, 224, 224)
	for s, n := range cfg {
		ch := min(64<<s, 512)
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("features.%d.%d", s, i)
			b.Conv(name, ch, 3, 1, 1, nn.Bias()).Act(name + ".relu")
		}
		b.MaxPool(fmt.Sprintf("pool%d", s), 2, 2, 0)
	}
	return classifier(b).Net()
}

// classifier is the head VGG and AlexNet share: flatten, two 4096-wide fully connected layers
// with ReLU and dropout, and a 1000-way output layer.
func classifier(b *nn.Builder) *nn.Builder {
	b.Flatten("flatten")
	b.Linear("fc6", 4096, true).Act("fc6.relu").Dropout("fc6.dropout")
	b.Linear("fc7", 4096, true).Act("fc7.relu").Dropout("fc7.dropout")
	return b.Linear("fc8", 1000, true)
}

// AlexNet is the single-tower network of Krizhevsky et al. 2012 (96-256-384-384-256 filters on
// 227×227 inputs, fully connected 9216 → 4096 → 4096 → 1000): 62,378,344 parameters, the 62.3M
// the WRHT paper trains (§5.1). (torchvision's later variant, 64-192-384-256-256, has 61.1M.)
func AlexNet() (*nn.Net, error) {
	b := nn.New("alexnet", 3, 227, 227)
	b.Conv("conv1", 96, 11, 4, 0, nn.Bias()).Act("relu1").MaxPool("pool1", 3, 2, 0)
	b.Conv("conv2", 256, 5, 1, 2, nn.Bias()).Act("relu2").MaxPool("pool2", 3, 2, 0)
	b.Conv("conv3", 384, 3, 1, 1, nn.Bias()).Act("relu3")
	b.Conv("conv4", 384, 3, 1, 1, nn.Bias()).Act("relu4")
	b.Conv("conv5", 256, 3, 1, 1, nn.Bias()).Act("relu5").MaxPool("pool5", 3, 2, 0)
	return classifier(b).Net()
}

// LeNet5 is LeCun et al. 1998's LeNet-5 on 32×32 MNIST images in its common form (full C3
// connectivity, max pooling): 61,706 parameters.
func LeNet5() (*nn.Net, error) {
	b := nn.New("lenet5", 1, 32, 32)
	b.Conv("c1", 6, 5, 1, 0, nn.Bias()).Act("c1.act").MaxPool("s2", 2, 2, 0)
	b.Conv("c3", 16, 5, 1, 0, nn.Bias()).Act("c3.act").MaxPool("s4", 2, 2, 0)
	b.Flatten("flatten").Linear("c5", 120, true).Act("c5.act").Linear("f6", 84, true).Act("f6.act").Linear("output", 10, true)
	return b.Net()
}

// MobileNetV2 is Sandler et al. 2018, Table 2 (width 1.0, 224×224): inverted residual blocks
// (1×1 expansion, 3×3 depthwise, 1×1 linear projection, residual when the shape is kept),
// 3,504,872 parameters.
func MobileNetV2() (*nn.Net, error) {
	b := nn.New("mobilenet_v2", 3, 224, 224)
	b.Conv("stem", 32, 3, 2, 1).BN("stem.bn").Act("stem.relu6")
	for bi, s := range [][4]int{{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}} {
		t, c, n, stride := s[0], s[1], s[2], s[3]
		for i := 0; i < n; i++ {
			st := 1
			if i == 0 {
				st = stride
			}
			name := fmt.Sprintf("block%d.%d", bi, i)
			in := b.Shape()
			hidden := in[0] * t
			if t != 1 {
				b.Conv(name+".expand", hidden, 1, 1, 0).BN(name + ".expand.bn").Act(name + ".expand.relu6")
			}
			b.Conv(name+".dw", hidden, 3, st, 1, nn.Groups(hidden)).BN(name + ".dw.bn").Act(name + ".dw.relu6")
			b.Conv(name+".project", c, 1, 1, 0).BN(name + ".project.bn")
			if st == 1 && in[0] == c {
				b.Add(name+".add", in)
			}
		}
	}
	b.Conv("last", 1280, 1, 1, 0).BN("last.bn").Act("last.relu6")
	b.GlobalAvgPool("avgpool").Dropout("dropout").Linear("classifier", 1000, true)
	return b.Net()
}

// encoderLayer appends one transformer layer over [T, F]: post-LN (BERT) or pre-LN with layer
// scale (BEiT). qkvBias is the number of QKV bias vectors (BERT 3; BEiT 2, q and v).
func encoderLayer(b *nn.Builder, name string, heads, qkvBias int, preLN bool) {
	shape := b.Shape()
	f := shape[len(shape)-1]
	in := b.Shape()
	if preLN {
		b.LN(name + ".ln1")
	}
	b.Linear(name+".qkv", 3*f, false).Params(name+".qkv.bias", float64(qkvBias*f))
	b.Attention(name+".attn", heads).Linear(name+".proj", f, true).Dropout(name + ".attn.dropout")
	b.Add(name+".attn.add", in)
	if !preLN {
		b.LN(name + ".ln1")
	}
	mid := b.Shape()
	if preLN {
		b.LN(name + ".ln2")
	}
	b.Linear(name+".fc1", 4*f, true).Act(name+".gelu").Linear(name+".fc2", f, true).Dropout(name + ".mlp.dropout")
	b.Add(name+".mlp.add", mid)
	if !preLN {
		b.LN(name + ".ln2")
	}
}

// BERTLarge is BERT-large (Devlin et al. 2019: L = 24, H = 1024, A = 16) for pre-training on
// 512-token sequences: word, position and token-type embeddings with a LayerNorm, 24 post-LN
// layers, the pooler, the masked-LM head (transform + LayerNorm, decoder tied to the word
// embeddings, output bias) and the next-sentence classifier: 336,226,108 parameters
// (HuggingFace BertForPreTraining; BertModel alone 335,141,888). Devlin et al. round it to "340M".
func BERTLarge() (*nn.Net, error) {
	const vocab, seq, h = 30522, 512, 1024
	b := nn.New("bert_large", seq)
	b.Embedding("embeddings.word", vocab, h, seq).Params("embeddings.position+type", float64(seq*h+2*h))
	b.LN("embeddings.ln").Dropout("embeddings.dropout")
	b.Repeat(24, func(b *nn.Builder) { encoderLayer(b, "layer0-23", 16, 3, false) })
	b.Params("pooler", float64(h*h+h))
	b.Linear("mlm.transform", h, true).Act("mlm.gelu").LN("mlm.ln")
	b.LinearTied("mlm.decoder", vocab).Params("mlm.bias", vocab)
	b.Params("nsp", float64(2*h+2))
	return b.Net()
}

// BEiTLarge is BEiT-large (Bao et al. 2022: ViT-L/16, 24 pre-LN layers, H = 1024, A = 16) on
// 224×224 images fine-tuned for ImageNet-1k: 16×16 patch embedding (196 patches + [CLS]), q and v
// biases, layer scale, a relative-position bias table per layer ((2·14−1)² + 3 entries × 16
// heads), a final LayerNorm and the 1000-way head: 304.4M parameters (the paper: 307M).
func BEiTLarge() (*nn.Net, error) {
	const h, heads, patches = 1024, 16, 196
	b := nn.New("beit_large", 3, 224, 224)
	b.Conv("patch_embed", h, 16, 16, 0, nn.Bias()).Reshape("patches", patches, h)
	b.Prepend("cls", 1).Params("cls_token", h)
	b.Repeat(24, func(b *nn.Builder) {
		const name = "layer0-23"
		encoderLayer(b, name, heads, 2, true)
		b.Params(name+".layer_scale", 2*h).Params(name+".rel_pos_bias", float64(((2*14-1)*(2*14-1)+3)*heads))
	})
	// Fine-tuning head: mean of the patch tokens, LayerNorm, classifier (BEiT §2.5).
	b.MeanTokens("pool").LN("fc_norm").Linear("head", 1000, true)
	return b.Net()
}

// ResNet50 and ResNet152 re-export the resnet package's builders.
func ResNet50() (*nn.Net, error)  { return resnet.Net(50) }
func ResNet152() (*nn.Net, error) { return resnet.Net(152) }
