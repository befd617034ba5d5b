package job

import (
	"testing"

	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/dlrm"
	"github.com/ddlest/ddlest/profile/roofline"
)

func benchRun(net string) RunOptions {
	return RunOptions{GPU: "a100-80gb", Efficiency: roofline.DefaultEfficiency, Network: NetworkChoice{Name: net}}
}

// BenchmarkWorkloadEstimate builds and prices one plan of each workload (partition, roofline,
// network, estimator). Target (issue 4): ≤ 100 µs per estimate on one core; ResNet-152 has
// ~1,000 ops.
func BenchmarkWorkloadEstimate(b *testing.B) {
	p256, _ := dlrm.Presets().Lookup("ramp-256")
	gpt3, _ := PresetConfig("gpt3")
	moe, _ := PresetConfig("gpt3-moe")
	jobs := []struct {
		name string
		run  func() error
	}{
		{"resnet152", func() error {
			_, err := DataParallel(DataParallelOptions{Workload: "resnet", Model: "resnet152", GPUs: 1024, Batch: 32,
				Precision: partition.TF32, Optimizer: partition.SGD, Buckets: 10, RunOptions: benchRun("alphabeta")})
			return err
		}},
		{"vgg19", func() error {
			_, err := DataParallel(DataParallelOptions{Workload: "dp", Model: "vgg19", GPUs: 256, Precision: partition.FP32,
				Optimizer: partition.SGD, RunOptions: benchRun("superpod")})
			return err
		}},
		// One VGG19 epoch on ODDL (issue 11's speed target: ≤ 1 ms): the §5A job, 1,024 2080 Tis,
		// Horovod fusion of 16 MiB, time to accuracy over its epochs.
		{"vgg19-oddl", func() error {
			_, err := DataParallel(DataParallelOptions{Workload: "dp", Model: "vgg19", GPUs: 1024, Batch: 16, Precision: partition.FP32,
				Optimizer: partition.SGD, BucketBytes: 16 << 20, Fusion: partition.FuseTensors, FusionLatency: 1e-6,
				RunOptions: RunOptions{GPU: "rtx2080ti", Efficiency: roofline.DefaultEfficiency, Epochs: 1, Network: NetworkChoice{Name: "oddl", Params: []string{"nic_gbps=100"}}}})
			return err
		}},
		{"cosmoflow", func() error {
			_, err := CosmoFlow(CosmoFlowOptions{GPUs: 1024, Spatial: 4, Batch: 32, Precision: partition.TF32,
				Optimizer: partition.SGD, RunOptions: benchRun("alphabeta")})
			return err
		}},
		{"dlrm", func() error {
			_, err := DLRM(DLRMOptions{Preset: "ramp-256", Config: p256.Config, RunOptions: benchRun("ramp")})
			return err
		}},
		{"gpt3", func() error {
			_, err := TransformerPreset(TransformerOptions{Preset: "gpt3", Config: gpt3, RunOptions: benchRun("alphabeta")})
			return err
		}},
		{"moe", func() error {
			_, err := TransformerPreset(TransformerOptions{Preset: "gpt3-moe", Config: moe, RunOptions: benchRun("alphabeta")})
			return err
		}},
	}
	for _, j := range jobs {
		b.Run(j.name, func(b *testing.B) {
			if err := j.run(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := j.run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
