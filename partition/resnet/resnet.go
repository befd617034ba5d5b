package resnet

import (
	"fmt"

	"github.com/ddlest/ddlest/partition/nn"
)

// Depths are the bottleneck blocks per stage (He et al. 2016, Table 1).
var Depths = map[int][4]int{
	50:  {3, 4, 6, 3},
	101: {3, 4, 23, 3},
	152: {3, 8, 36, 3},
}

// Net builds ResNet-depth (bottleneck blocks) for 224×224 RGB images and 1000 classes, layer by
// layer as torchvision's ResNet v1.5 (stride on the 3×3 convolution): a 7×7 stem, four stages of
// bottlenecks (1×1 → 3×3 → 1×1, expansion 4, projection shortcut on each stage's first block),
// global average pooling and a 1000-way classifier. ResNet-50 has 25,557,032 parameters and
// ResNet-152 60,192,808 (the HammingMesh paper's gradient buckets sum to exactly that).
func Net(depth int) (*nn.Net, error) {
	blocks, ok := Depths[depth]
	if !ok {
		return nil, fmt.Errorf("resnet: no ResNet-%d; valid: 50, 101, 152", depth)
	}
	b := nn.New(fmt.Sprintf("resnet%d", depth), 3, 224, 224)
	b.Conv("stem.conv", 64, 7, 2, 3).BN("stem.bn").Act("stem.relu").MaxPool("stem.pool", 3, 2, 1)
	for s, n := range blocks {
		width := 64 << s
		stride := 1
		if s > 0 {
			stride = 2
		}
		bottleneck(b, fmt.Sprintf("layer%d.0", s+1), width, stride, true)
		if n > 1 { // the other n−1 bottlenecks are identical: one repeated unit
			name := fmt.Sprintf("layer%d.1-%d", s+1, n-1)
			b.Repeat(n-1, func(b *nn.Builder) { bottleneck(b, name, width, 1, false) })
		}
	}
	b.GlobalAvgPool("avgpool").Linear("fc", 1000, true)
	return b.Net()
}

// bottleneck is one residual unit: 1×1 → 3×3 (stride) → 1×1 with expansion 4, batch norms and
// ReLUs, and a projection shortcut on a stage's first unit (identity otherwise).
func bottleneck(b *nn.Builder, name string, width, stride int, project bool) {
	in := b.Shape()
	b.Conv(name+".conv1", width, 1, 1, 0).BN(name + ".bn1").Act(name + ".relu1")
	b.Conv(name+".conv2", width, 3, stride, 1).BN(name + ".bn2").Act(name + ".relu2")
	b.Conv(name+".conv3", 4*width, 1, 1, 0).BN(name + ".bn3")
	other := in // identity shortcut
	if project {
		other = b.Shape()
		b.From(in).Conv(name+".downsample", 4*width, 1, stride, 0).BN(name + ".downsample.bn")
	}
	b.Add(name+".add", other).Act(name + ".relu3")
}
