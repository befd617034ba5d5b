package zoo

import (
	"sync"

	"github.com/ddlest/ddlest/internal/registry"
	"github.com/ddlest/ddlest/partition/nn"
	"github.com/ddlest/ddlest/partition/resnet"
)

// Model is a zoo entry: how to build it, its published size and its default training run.
type Model struct {
	Name  string
	Build func() (*nn.Net, error)
	// PaperParams is the parameter count the citing paper states, and ParamsSource the citation.
	PaperParams  float64
	ParamsSource string
	// Dataset, Samples (training set size) and Epochs are the defaults for time to accuracy.
	Dataset      string
	Samples      float64
	Epochs       float64
	EpochsSource string
	// Batch is the default samples per GPU per iteration.
	Batch int
}

// ImageNet1k is the training images of ImageNet-1k (Russakovsky et al. 2015) [X].
const ImageNet1k = 1281167

// Models lists the zoo in one place (the explicit registry). It is built once; each model's
// network is built on first use and shared (nets are not modified after building).
func Models() *registry.Registry[Model] { return models() }

var models = sync.OnceValue(func() *registry.Registry[Model] {
	r := registry.New[Model]("model")
	for _, m := range []Model{
		{Name: "resnet50", Build: ResNet50, PaperParams: 25.6e6, ParamsSource: "He et al. 2016; ODDL §5 and WRHT §5.1 (≈25M)",
			Dataset: "ImageNet-1k", Samples: ImageNet1k, Epochs: 90, EpochsSource: "[X] He et al. 2016 / Goyal et al. 2017: 90 epochs", Batch: 32},
		{Name: "resnet101", Build: func() (*nn.Net, error) { return resnet.Net(101) }, PaperParams: 44.5e6, ParamsSource: "[X] He et al. 2016 / torchvision: 44.5M",
			Dataset: "ImageNet-1k", Samples: ImageNet1k, Epochs: 90, EpochsSource: "[X] He et al. 2016: 90 epochs", Batch: 32},
		{Name: "resnet152", Build: ResNet152, PaperParams: 60.2e6, ParamsSource: "HammingMesh §V-B2: 60.2M parameters",
			Dataset: "ImageNet-1k", Samples: ImageNet1k, Epochs: 90, EpochsSource: "[X] He et al. 2016: 90 epochs", Batch: 32},
		{Name: "vgg16", Build: func() (*nn.Net, error) { return VGG(16) }, PaperParams: 138e6, ParamsSource: "WRHT §5.1: 138M",
			Dataset: "ImageNet-1k", Samples: ImageNet1k, Epochs: 74, EpochsSource: "[X] Simonyan & Zisserman 2015 §3.1: stopped after 74 epochs", Batch: 32},
		{Name: "vgg19", Build: func() (*nn.Net, error) { return VGG(19) }, PaperParams: 143.7e6, ParamsSource: "ODDL reference extraction: VGG19 ≈ 143.67M (torchvision)",
			Dataset: "ImageNet-1k", Samples: ImageNet1k, Epochs: 74, EpochsSource: "[X] Simonyan & Zisserman 2015 §3.1: 74 epochs", Batch: 32},
		{Name: "alexnet", Build: AlexNet, PaperParams: 62.3e6, ParamsSource: "WRHT §5.1: 62.3M",
			Dataset: "ImageNet-1k", Samples: ImageNet1k, Epochs: 90, EpochsSource: "[X] Krizhevsky et al. 2012 §5: roughly 90 cycles", Batch: 128},
		{Name: "lenet5", Build: LeNet5, PaperParams: 61706, ParamsSource: "LeCun et al. 1998; ODDL reference extraction: ≈61.7k",
			Dataset: "MNIST", Samples: 60000, Epochs: 20, EpochsSource: "[X] LeCun et al. 1998 §III: 20 passes", Batch: 64},
		{Name: "mobilenetv2", Build: MobileNetV2, PaperParams: 3.5e6, ParamsSource: "Sandler et al. 2018 Table 4: 3.4M (torchvision 3.5M); SiPAC testbed workload",
			Dataset: "ImageNet-1k", Samples: ImageNet1k, Epochs: 300, EpochsSource: "[X] torchvision MobileNetV2 recipe: 300 epochs", Batch: 128},
		{Name: "beit-large", Build: BEiTLarge, PaperParams: 307e6, ParamsSource: "WRHT §5.1: BEiT-L 307M (Bao et al. 2022)",
			Dataset: "ImageNet-1k", Samples: ImageNet1k, Epochs: 30, EpochsSource: "[X] Bao et al. 2022: BEiT-L ImageNet-1k fine-tuning, 30 epochs", Batch: 16},
		{Name: "bert-large", Build: BERTLarge, PaperParams: 340e6, ParamsSource: "Devlin et al. 2019 Table: BERT-large 340M (rounded; the architecture has 336.2M)",
			Dataset: "BooksCorpus + Wikipedia, 512-token sequences", Samples: 6.4e6, Epochs: 40,
			EpochsSource: "[X] Devlin et al. 2019 App. A.2: 1M steps × 256 sequences ≈ 40 epochs over 3.3B words (6.4M sequences per epoch [D])", Batch: 8},
	} {
		m.Build = sync.OnceValues(m.Build)
		r.Add(m.Name, m)
	}
	return r
})
