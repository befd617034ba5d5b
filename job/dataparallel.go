package job

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/nn"
	"github.com/ddlest/ddlest/partition/zoo"
	"github.com/ddlest/ddlest/profile"
)

// DataParallelOptions is a data-parallel job of a zoo model.
type DataParallelOptions struct {
	Workload      string // the command ("dp", "resnet")
	Model         string
	GPUs          int
	Batch         int // per GPU per iteration (0: the model's default)
	MicroBatch    int
	Precision     partition.Precision
	Optimizer     partition.Optimizer
	Buckets       int // > 0: that many equal gradient groups
	BucketBytes   units.Bytes
	NoOverlap     bool
	Fusion        partition.Fusion
	FusionLatency units.Seconds
	RunOptions
}

// publishedDP are measured compute times of data-parallel jobs, keyed by model and per-GPU batch.
var publishedDP = map[string]map[int]Published{
	// HammingMesh (Hoefler et al., SC'22) §V-B2: "The compute time in one training iteration of
	// ResNet-152 is 108 ms on 1,024 A100s" (M = 32,768, 32 per GPU, FP32); the SST motif splits it
	// into 36 ms forward and 10 × 7.2 ms backward, and gives 63 + 126 ms at 512 GPUs (64 per GPU)
	// and 119 + 238 ms at 256 (128 per GPU) (reference/hammingmesh.md §6.1). The motif has no
	// optimizer step: its iteration compute is forward + backward, so the update is 0.
	"resnet152": {
		32:  {Measured: profile.Measured{Forward: 36e-3, Backward: 72e-3}, Source: "HammingMesh §V-B2, A100, 32 images per GPU"},
		64:  {Measured: profile.Measured{Forward: 63e-3, Backward: 126e-3}, Source: "HammingMesh SST motif, A100, 64 images per GPU"},
		128: {Measured: profile.Measured{Forward: 119e-3, Backward: 238e-3}, Source: "HammingMesh SST motif, A100, 128 images per GPU"},
	},
}

// DataParallel estimates a data-parallel job of a zoo model.
func DataParallel(o DataParallelOptions) (*Report, error) {
	m, err := zoo.Models().Lookup(o.Model)
	if err != nil {
		return nil, err
	}
	net, err := m.Build()
	if err != nil {
		return nil, err
	}
	gpu, err := lookupCapacity(o.GPU)
	if err != nil {
		return nil, err
	}
	batch := o.Batch
	if batch == 0 {
		batch = m.Batch
	}
	rep := &Report{Workload: o.Workload, Model: m.Name, Params: net.Params(), Dataset: m.Dataset}
	train := nn.Training{Workload: m.Name, DP: o.GPUs, LocalBatch: batch, MicroBatch: o.MicroBatch,
		Precision: o.Precision, Optimizer: o.Optimizer, Buckets: o.Buckets, BucketBytes: o.BucketBytes, NoOverlap: o.NoOverlap,
		Fusion: o.Fusion, FusionLatency: o.FusionLatency, Capacity: gpu}
	plan, err := nn.DataParallel(net, train)
	if err != nil {
		return nil, err
	}
	if err := o.steps(rep, m.Epochs, m.Samples, plan.Layout.GlobalBatch); err != nil {
		return nil, err
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %s parameters (%s); %s epochs of %s samples (%s)", m.Name,
		units.Count(rep.Params), m.ParamsSource, units.Count(rep.Epochs), units.Count(rep.Samples), m.EpochsSource))
	var pub *Published
	if p, ok := publishedDP[m.Name][batch]; ok && o.MicroBatch <= 0 {
		pub = &p
	} else if o.Profile == "published" {
		return nil, errs.Usage("--profile published: measured compute exists for %s", publishedKeys())
	}
	rebuild := func(b, tp int) (*partition.Plan, error) {
		if tp != 0 {
			return nil, errs.Usage("--trace-tp %d: %s is data parallel only", tp, m.Name)
		}
		t := train
		t.LocalBatch, t.MicroBatch = b, 0
		return nn.DataParallel(net, t)
	}
	return rep, o.estimate(rep, plan, pub, rebuild)
}

func publishedKeys() string {
	var keys []string
	for name, byBatch := range publishedDP {
		for b := range byBatch {
			keys = append(keys, fmt.Sprintf("%s with --batch %d", name, b))
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}
