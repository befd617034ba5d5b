package workflow

import (
	"math"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/profile"
	"github.com/ddlest/ddlest/profile/roofline"
)

// Run is what every workload command shares: the GPU and its roofline efficiencies, the compute
// profile, the network, and the training length.
type Run struct {
	GPU        string
	Efficiency roofline.Efficiency
	// Profile is "roofline" or "published" (the measured compute times that ship with some
	// workloads).
	Profile string
	Network NetworkChoice
	// Epochs × Samples / global batch gives the steps (0: the workload's defaults).
	Epochs, Samples float64
}

// Report is the result of a workload estimate, for rendering.
type Report struct {
	Workload   string
	Model      string
	Params     float64
	Plan       *partition.Plan
	GPU        roofline.GPU
	Efficiency roofline.Efficiency
	Profile    string
	Network    string
	NetConfig  network.Config
	Dataset    string
	Samples    float64
	Epochs     float64
	Steps      float64
	Result     estimator.Result
	// Notes are workload-specific facts for the table output.
	Notes []string
}

// Published is a measured compute time for one workload configuration: the phases' totals
// (forward and backward per micro-batch on the plan's critical stage, the optimizer step per
// iteration), which scale the roofline's op times phase by phase.
type Published struct {
	profile.Measured
	Source string
}

// estimate runs the common tail of every workload: memory check, profile, network, estimator.
func (r Run) estimate(rep *Report, plan *partition.Plan, published *Published) error {
	if err := plan.CheckMemory(); err != nil {
		return err
	}
	gpu, err := roofline.LookupGPU(r.GPU)
	if err != nil {
		return err
	}
	rep.GPU, rep.Efficiency, rep.Plan = gpu, r.Efficiency, plan
	dt := planDType(plan)
	roof, err := roofline.New(gpu, r.Efficiency, dt)
	if err != nil {
		return err
	}
	var prof profile.Profile = roof
	rep.Profile = "roofline"
	switch r.Profile {
	case "", "roofline":
	case "published":
		if published == nil {
			return errs.Usage("--profile published: no measured compute ships with %s; valid: roofline", rep.Workload)
		}
		prof = profile.Scaled(roof, plan, published.Measured)
		rep.Profile = "published (" + published.Source + ")"
	default:
		return errs.Usage("--profile %q is not valid; valid: roofline, published", r.Profile)
	}
	net, cfg, err := r.Network.Build(network.Env{GPUs: plan.Layout.GPUs, Reducer: roof})
	if err != nil {
		return err
	}
	rep.Network, rep.NetConfig = net.Name(), cfg
	rep.Result, err = estimator.Estimate(estimator.Input{Plan: plan, Profile: prof, Network: net, Steps: rep.Steps})
	return err
}

// steps resolves epochs × samples / global batch with the workload's defaults.
func (r Run) steps(rep *Report, defEpochs, defSamples float64, globalBatch int) error {
	rep.Epochs, rep.Samples = defEpochs, defSamples
	if r.Epochs != 0 {
		rep.Epochs = r.Epochs
	}
	if r.Samples != 0 {
		rep.Samples = r.Samples
	}
	if !(rep.Epochs > 0) || math.IsInf(rep.Epochs, 0) {
		return errs.Usage("--epochs %g must be > 0", rep.Epochs)
	}
	if !(rep.Samples > 0) || math.IsInf(rep.Samples, 0) {
		return errs.Usage("--samples %g must be > 0", rep.Samples)
	}
	rep.Steps = math.Ceil(rep.Epochs * rep.Samples / float64(globalBatch))
	return nil
}

// planDType is the dtype of the plan's GEMMs.
func planDType(p *partition.Plan) dtype.DType {
	for _, st := range p.Stages {
		for _, b := range st.Blocks {
			for _, op := range b.Ops {
				if op.Kind.IsMatMul() {
					return op.DType
				}
			}
		}
	}
	return 0
}

// lookupCapacity returns a GPU's memory.
func lookupCapacity(name string) (units.Bytes, error) {
	g, err := roofline.LookupGPU(name)
	if err != nil {
		return 0, err
	}
	return g.Memory(), nil
}
