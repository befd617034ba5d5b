package job

import (
	"math"
	"strings"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/profile"
	"github.com/ddlest/ddlest/profile/roofline"
	proftrace "github.com/ddlest/ddlest/profile/trace"
)

// RunOptions is what every workload command shares: the GPU and its roofline efficiencies, the compute
// profile, the network, and the training length.
type RunOptions struct {
	GPU        string
	Efficiency roofline.Efficiency
	// Profile is "roofline", "published" (the measured compute times that ship with some
	// workloads) or a ddlest trace file (.parquet; profile/trace).
	Profile string
	// TraceBatch and TraceTP describe the traced configuration when it differs from the plan's
	// (samples or sequences per micro-batch; tensor-parallel degree); 0 keeps the plan's.
	TraceBatch, TraceTP int
	// ForceProfile uses a trace that fails the checks of profile/trace (Measured.Check), the
	// report naming them; never one faster than the GPU's peak.
	ForceProfile bool
	Network      NetworkChoice
	// Cluster, when set, supplies the network instead of Network and bounds the job's size.
	Cluster *Cluster
	// Epochs × Samples / global batch gives the steps (0: the workload's defaults).
	Epochs, Samples float64
	// trace is the trace file, read once for the many plans of a search.
	trace *proftrace.Measured
}

// Report is the one record of an estimate: the job that produced it, what the workload resolved
// (model, layout, training length) and the estimator's result. Every output — table, JSON, CSV,
// sweep rows, comparisons, figures — renders from it.
type Report struct {
	Job *Job
	// Cluster is the cluster the job ran on (nil: a bare network choice).
	Cluster    *Cluster
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
	// Transformer is set for the transformer workloads.
	*Transformer
}

// Published is a measured compute time for one workload configuration: the phases' totals
// (forward and backward per micro-batch on the plan's critical stage, the optimizer step per
// iteration), which scale the roofline's op times phase by phase.
type Published struct {
	profile.Measured
	Source string
}

// tracedPlan rebuilds a workload's plan for the traced configuration (batch per micro-batch,
// tensor-parallel degree; 0 keeps the plan's).
type tracedPlan func(batch, tp int) (*partition.Plan, error)

// computeProfile picks the compute profile — the roofline, the published measurements, or a
// trace file scaled by roofline ratios — and describes it for the report.
func (r RunOptions) computeProfile(roof *roofline.Roofline, plan *partition.Plan, published *Published, workload string, rebuild tracedPlan) (profile.Profile, string, error) {
	switch {
	case r.Profile == "" || r.Profile == "roofline":
		if r.TraceBatch != 0 || r.TraceTP != 0 {
			return nil, "", errs.Usage("--trace-batch and --trace-tp describe a trace: give --profile FILE.parquet")
		}
		return roof, "roofline", nil
	case r.Profile == "published":
		if published == nil {
			return nil, "", errs.Usage("--profile published: no measured compute ships with this %s configuration; valid: roofline or a trace file (.parquet)", workload)
		}
		return profile.Scaled(roof, plan, published.Measured), "published (" + published.Source + ")", nil
	case strings.HasSuffix(r.Profile, ".parquet"):
		m := r.trace
		if m == nil {
			var err error
			if m, err = proftrace.Load(r.Profile); err != nil {
				return nil, "", err
			}
		}
		traced := plan
		if r.TraceBatch < 0 || r.TraceTP < 0 {
			return nil, "", errs.Usage("--trace-batch %d and --trace-tp %d must be ≥ 1 (0: the plan's)", r.TraceBatch, r.TraceTP)
		}
		if r.TraceBatch != 0 || r.TraceTP != 0 {
			if rebuild == nil {
				return nil, "", errs.Usage("%s: --trace-batch/--trace-tp are not supported here; the trace must be of the plan's own configuration", workload)
			}
			var err error
			if traced, err = rebuild(r.TraceBatch, r.TraceTP); err != nil {
				return nil, "", err
			}
		}
		overridden, err := m.Checked(traced, roof.GPU, r.ForceProfile)
		if err != nil {
			return nil, "", err
		}
		p, cal, err := m.Calibrate(traced, roof)
		if err != nil {
			return nil, "", err
		}
		cal.Overridden = overridden
		return p, "compute measured: " + m.Describe(cal) + "; communication modelled", nil
	}
	return nil, "", errs.Usage("--profile %q is not valid; valid: roofline, published, or a ddlest trace file (.parquet, from `ddlest trace import`)", r.Profile)
}

// estimate runs the common tail of every workload: memory check, profile, network, estimator.
func (r RunOptions) estimate(rep *Report, plan *partition.Plan, published *Published, rebuild tracedPlan) error {
	if err := plan.CheckMemory(); err != nil {
		return err
	}
	gpu, err := roofline.LookupGPU(r.GPU)
	if err != nil {
		return err
	}
	rep.GPU, rep.Efficiency, rep.Plan = gpu, r.Efficiency.On(gpu), plan
	dt := plan.DType()
	roof, err := roofline.New(gpu, r.Efficiency, dt)
	if err != nil {
		return err
	}
	prof, desc, err := r.computeProfile(roof, plan, published, rep.Workload, rebuild)
	if err != nil {
		return err
	}
	rep.Profile = desc
	net, cfg, err := buildNetwork(r.Cluster, r.Network, network.Env{GPUs: plan.Layout.GPUs, Reducer: roof})
	if err != nil {
		return err
	}
	rep.Cluster = r.Cluster
	rep.Network, rep.NetConfig = net.Name(), cfg
	rep.Result, err = estimator.Estimate(estimator.Input{Plan: plan, Profile: prof, Network: net, Steps: rep.Steps})
	return err
}

// steps resolves epochs × samples / global batch with the workload's defaults.
func (r RunOptions) steps(rep *Report, defEpochs, defSamples float64, globalBatch int) error {
	rep.Epochs, rep.Samples = defEpochs, defSamples
	if r.Epochs != 0 {
		rep.Epochs = r.Epochs
	}
	if r.Samples != 0 {
		rep.Samples = r.Samples
	}
	if !(rep.Epochs > 0) || math.IsInf(rep.Epochs, 0) {
		return errs.Usage("execution.epochs %g must be > 0", rep.Epochs)
	}
	if !(rep.Samples > 0) || math.IsInf(rep.Samples, 0) {
		return errs.Usage("execution.samples %g must be > 0", rep.Samples)
	}
	rep.Steps = math.Ceil(rep.Epochs * rep.Samples / float64(globalBatch))
	return nil
}

// lookupCapacity returns a GPU's memory.
func lookupCapacity(name string) (units.Bytes, error) {
	g, err := roofline.LookupGPU(name)
	if err != nil {
		return 0, err
	}
	return g.Memory(), nil
}
