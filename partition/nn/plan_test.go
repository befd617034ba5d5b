package nn_test

import (
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/nn"
	"github.com/ddlest/ddlest/partition/resnet"
)

// HammingMesh §V-B2: ResNet-152's parameters in 10 equal gradient groups, all-reduced over all
// 1,024 GPUs during the backward pass: the SST motif's ten buckets sum to 60,192,808 floats
// (reference/hammingmesh.md §6.1; the paper's "60.2M" is the row hammingmesh/params-resnet152),
// × 4 B (FP32) / 10 = 24.08 MB each.
// Model FLOP: 3 × 2 × 11.5G MACs per image (forward, data and weight gradients) × 32,768 images.
func TestResNet152DataParallel(t *testing.T) {
	net, err := resnet.Net(152)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := nn.DataParallel(net, nn.Training{Workload: "resnet", DP: 1024, LocalBatch: 32, Precision: partition.TF32,
		Optimizer: partition.SGD, Buckets: 10, Capacity: 80 * units.GiB})
	if err != nil {
		t.Fatal(err)
	}
	g := plan.Stages[0].Grads[0]
	if g.Bytes != 60192808*4 || g.BucketBytes != g.Bytes/10 || g.Group != (network.Group{Size: 1024, Stride: 1}) || !g.Overlap {
		t.Errorf("gradients %+v", g)
	}
	if full, rest := g.Buckets(); full != 10 || rest != 0 {
		t.Errorf("buckets %d + %v, want 10 equal", full, rest)
	}
	// The stem's data gradient is skipped (the image needs none): 3·2·MACs minus 2·stem MACs.
	stem := net.Layers[0].MACs
	want := (6*net.MACs() - 2*stem) * 32768
	if got := float64(plan.ModelFLOP); got != want {
		t.Errorf("model FLOP %.4g, want %.4g", got, want)
	}
	if plan.Layout.GlobalBatch != 32768 || plan.Layout.MicroBatches != 1 {
		t.Errorf("layout %+v", plan.Layout)
	}
}

// DDP's 25 MiB buckets: ResNet-50's 25,557,032 × 4 B = 102.2 MB is 3 full buckets + 23.6 MB.
func TestDefaultBuckets(t *testing.T) {
	net, _ := resnet.Net(50)
	plan, err := nn.DataParallel(net, nn.Training{Workload: "dp", DP: 8, LocalBatch: 32, Precision: partition.FP32,
		Optimizer: partition.SGD, Capacity: 80 * units.GiB})
	if err != nil {
		t.Fatal(err)
	}
	full, rest := plan.Stages[0].Grads[0].Buckets()
	if full != 3 || rest != units.Bytes(25557032*4)-3*25*units.MiB {
		t.Errorf("buckets %d + %v", full, rest)
	}
}

func TestTrainingValidate(t *testing.T) {
	net, _ := resnet.Net(50)
	_, err := nn.DataParallel(net, nn.Training{Workload: "dp", DP: 0, LocalBatch: 32, MicroBatch: 5, Capacity: units.GiB})
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "--gpus") || !strings.Contains(err.Error(), "--micro-batch 5") {
		t.Errorf("%v", err)
	}
}

// A repeated unit is one block with the unit's Repeat; it must keep the shape. ResNet-152's
// stage 3 has 36 bottlenecks: the first, then one unit of 35.
func TestRepeatedUnits(t *testing.T) {
	net, _ := resnet.Net(152)
	plan, err := nn.DataParallel(net, nn.Training{Workload: "dp", DP: 2, LocalBatch: 8, Precision: partition.FP32,
		Optimizer: partition.SGD, Capacity: 80 * units.GiB})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, b := range plan.Stages[0].Blocks {
		if b.Name == "layer3.1-35.conv1" {
			found = b.Repeat == 35
		}
	}
	if !found {
		t.Error("no 35-fold block for layer3.1-35")
	}
	b := nn.New("bad", 8)
	b.Repeat(3, func(b *nn.Builder) { b.Linear("grow", 16, false) })
	if _, err := b.Net(); err == nil || !strings.Contains(err.Error(), "changes the shape") {
		t.Errorf("shape-changing unit: %v", err)
	}
}
