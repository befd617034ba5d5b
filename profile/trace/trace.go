package trace

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/profile"
	"github.com/ddlest/ddlest/profile/roofline"
	"github.com/ddlest/ddlest/traces"
)

// Measured is a trace's compute per step.
type Measured struct {
	Path                      string
	Forward, Backward, Update float64 // seconds per step, unplaced time shared out
	Unplaced                  float64 // seconds per step no phase claimed
	// LayerForward and LayerBackward are the parts of Forward and Backward in layer-annotated
	// kernels (0 when the trace names no layers).
	LayerForward, LayerBackward float64
	Steps, Ranks                int
	Device                      string // as the trace names it
	GPU                         roofline.GPU
	KnownGPU                    bool
	// Layers is each rank's number of distinct layers its kernels are annotated with (0: none).
	Layers []int
	// Mix is the trace's computation kernel time by class (traces.KernelClass), seconds summed
	// over ranks and steps.
	Mix map[string]float64
}

// Load reads a trace file's measured compute.
func Load(path string) (*Measured, error) {
	f, err := traces.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ranks, err := f.Summarize()
	if err != nil {
		return nil, err
	}
	m := &Measured{Path: path, Device: f.Meta[traces.MetaDeviceName], Ranks: len(ranks), Mix: map[string]float64{}}
	var fwd, bwd, opt, unk, lf, lb float64
	for _, r := range ranks {
		m.Layers = append(m.Layers, len(r.ByLayer))
		for _, k := range r.Kernels {
			if c := traces.KernelClass(k.Name); c != "" {
				m.Mix[c] += float64(units.Ns(float64(k.TotalNs)))
			}
		}
		steps := float64(max(1, r.Steps))
		m.Steps = max(m.Steps, r.Steps)
		fwd += float64(units.Ns(float64(r.ByPhase["fwd"]))) / steps
		bwd += float64(units.Ns(float64(r.ByPhase["bwd"]))) / steps
		opt += float64(units.Ns(float64(r.ByPhase["optimizer"]))) / steps
		unk += float64(units.Ns(float64(r.ByPhase["unknown"]))) / steps
		lf += float64(units.Ns(float64(r.LayerByPhase["fwd"]))) / steps
		lb += float64(units.Ns(float64(r.LayerByPhase["bwd"]))) / steps
	}
	n := float64(max(1, len(ranks)))
	fwd, bwd, opt, unk = fwd/n, bwd/n, opt/n, unk/n
	m.LayerForward, m.LayerBackward = lf/n, lb/n
	if fwd+bwd+opt+unk <= 0 {
		return nil, errs.Usage("%s: no GPU compute in the trace (no kernels, copies or sets); a compute profile needs a GPU trace", path)
	}
	m.Unplaced = unk
	if known := fwd + bwd + opt; known > 0 {
		s := (known + unk) / known
		m.Forward, m.Backward, m.Update = fwd*s, bwd*s, opt*s
	} else {
		m.Forward = unk // one factor for everything (see Calibrate)
	}
	m.GPU, m.KnownGPU = roofline.MatchGPU(m.Device, deviceMemory(f.Meta[traces.MetaDeviceProps]))
	return m, nil
}

// deviceMemory reads totalGlobalMem of the first device in Kineto's deviceProperties.
func deviceMemory(props string) int64 {
	var devs []struct {
		TotalGlobalMem int64 `json:"totalGlobalMem"`
	}
	if json.Unmarshal([]byte(props), &devs) != nil || len(devs) == 0 {
		return 0
	}
	return devs[0].TotalGlobalMem
}

// placed reports whether the trace placed kernels in phases.
func (m *Measured) placed() bool { return m.Backward > 0 || m.Update > 0 || m.Unplaced == 0 }

// Calibration is the scaling a trace applies to a plan.
type Calibration struct {
	Factors  profile.Factors
	TraceGPU string
	// Measured and modelled (roofline of the traced configuration on the traced GPU) seconds
	// per iteration: forward, backward, update.
	Measured, Modelled [3]float64
	// Layered: the model's layers took their own factors from layer-annotated time.
	Layered bool
	Notes   []string
	// Overridden are the checks (Check) the trace failed and --force overrode.
	Overridden []string
}

// Calibrate builds the plan's compute profile from the trace: traced is the configuration the
// trace ran (the plan itself unless the workload rebuilt it), planRoof the plan's roofline; the
// traced GPU's roofline takes planRoof's efficiencies.
func (m *Measured) Calibrate(traced *partition.Plan, planRoof *roofline.Roofline) (profile.Profile, Calibration, error) {
	var c Calibration
	traceRoof := planRoof
	c.TraceGPU = planRoof.GPU.Name
	if m.KnownGPU {
		r, err := roofline.New(m.GPU, planRoof.Eff, traced.DType())
		if err == nil {
			traceRoof, c.TraceGPU = r, m.GPU.Name
		}
	} else {
		c.Notes = append(c.Notes, fmt.Sprintf("trace device %q not in the GPU table: assumed to be the plan's %s", orUnknown(m.Device), planRoof.GPU.Name))
	}
	rf, rb, ru := profile.PhaseTimes(traceRoof, traced)
	c.Modelled = [3]float64{rf, rb, ru}
	c.Measured = [3]float64{m.Forward, m.Backward, m.Update}
	// The trace cannot have done the traced configuration's work faster than the GPU's peak: a
	// trace of another model (a CNN's for a transformer) would scale its compute below what any
	// GPU can do. Every op's FLOP at the GPU's best peak for its dtype is a lower bound.
	pf, pb, pu := profile.PhaseTimes(peakBound{traceRoof.GPU}, traced)
	if meas, bound := m.Forward+m.Backward+m.Update, pf+pb+pu; meas > 0 && meas < bound {
		return nil, c, errs.Usage("%s: the trace's compute, %v per iteration, is below the %v the %s's peak needs for the plan's FLOPs: it is not a trace of this model and layout (trace the same model; --trace-batch and --trace-tp give its batch and TP)",
			m.Path, units.Seconds(meas), units.Seconds(bound), traceRoof.GPU.Name)
	}
	ratio := func(meas, model float64) float64 {
		if meas > 0 && model > 0 {
			return meas / model
		}
		return 0
	}
	f := profile.Factors{Forward: ratio(m.Forward, rf), Backward: ratio(m.Backward, rb), Update: ratio(m.Update, ru)}
	total := ratio(m.Forward+m.Backward+m.Update, rf+rb+ru)
	if !m.placed() {
		f = profile.Factors{Forward: total, Backward: total, Update: total}
		c.Notes = append(c.Notes, "the trace places no kernel in a phase: one measured/modelled factor for all compute")
	}
	// A phase the trace did not see (no optimizer kernels, say) keeps the overall factor.
	for _, p := range []*float64{&f.Forward, &f.Backward, &f.Update} {
		if *p == 0 {
			*p = total
		}
	}
	// Layer-annotated time calibrates the model's layers apart from the rest of its phase.
	lf, lb := profile.LayerPhaseTimes(traceRoof, traced)
	split := func(meas, measLayer, model, modelLayer float64, rest, layer *float64) {
		if m.placed() && measLayer > 0 && modelLayer > 0 && model > modelLayer && meas > measLayer {
			*layer = measLayer / modelLayer
			*rest = (meas - measLayer) / (model - modelLayer)
			c.Layered = true
		}
	}
	split(m.Forward, m.LayerForward, rf, lf, &f.Forward, &f.LayerForward)
	split(m.Backward, m.LayerBackward, rb, lb, &f.Backward, &f.LayerBackward)
	if f.Forward == 0 {
		return nil, c, errs.Usage("%s: the traced configuration has no modelled compute to compare with", m.Path)
	}
	c.Factors = f
	return profile.Factored(planRoof, f), c, nil
}

// peakBound runs every op at its GPU's best peak for the op's dtype (tensor or vector): a lower
// bound of any run's time.
type peakBound struct{ gpu roofline.GPU }

func (p peakBound) Name() string { return "peak " + p.gpu.Name }

func (p peakBound) OpTime(op partition.Op) units.Seconds {
	peak := p.PeakFLOP(op.DType)
	if peak <= 0 {
		return 0
	}
	return units.Seconds(float64(op.FLOP) / float64(peak))
}

func (p peakBound) PeakFLOP(dt dtype.DType) units.FLOPPerSecond {
	peak := p.gpu.VectorPeak(dt)
	if t, err := p.gpu.TensorPeak(dt); err == nil {
		peak = max(peak, t)
	}
	return peak
}

// Describe is the one-line account of a calibration for reports.
func (m *Measured) Describe(c Calibration) string {
	s := fmt.Sprintf("trace %s (%s, %d step(s) × %d rank(s)): measured fwd %v, bwd %v, update %v per iteration vs roofline %v, %v, %v on %s → ×%.3g, ×%.3g, ×%.3g",
		filepath.Base(m.Path), orUnknown(m.Device), max(1, m.Steps), m.Ranks,
		units.Seconds(c.Measured[0]), units.Seconds(c.Measured[1]), units.Seconds(c.Measured[2]),
		units.Seconds(c.Modelled[0]), units.Seconds(c.Modelled[1]), units.Seconds(c.Modelled[2]), c.TraceGPU,
		c.Factors.Forward, c.Factors.Backward, c.Factors.Update)
	if c.Layered {
		s += fmt.Sprintf(" (layers apart: fwd ×%.3g, bwd ×%.3g from layer-annotated kernels)", c.Factors.LayerForward, c.Factors.LayerBackward)
	}
	if len(c.Notes) > 0 {
		s += "; " + strings.Join(c.Notes, "; ")
	}
	if len(c.Overridden) > 0 {
		s = fmt.Sprintf("WARNING: the trace failed %d check(s), overridden by --force: %s. ", len(c.Overridden), strings.Join(c.Overridden, "; ")) + s
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown device"
	}
	return s
}
