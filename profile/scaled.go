package profile

import (
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
)

// Measured are measured compute totals of one configuration: forward and backward seconds per
// micro-batch on the plan's slowest stage, and the optimizer step per iteration.
type Measured struct {
	Forward, Backward, Update float64
}

// Scaled calibrates a profile to measured phase totals: on the plan's slowest stage, the base
// profile's forward, backward and update times are scaled to the measured ones, and every op of
// a phase is scaled by that phase's factor; recomputed ops are forward ops run again and take
// the forward factor. With the measured configuration itself the estimate's forward, backward
// and update equal the measurement exactly; other configurations (another batch, more layers)
// inherit the measured-to-modelled ratio of each phase.
func Scaled(base Profile, plan *partition.Plan, m Measured) Profile {
	t := stageTimes(base, plan)
	bf, bb, bu := t.fwd, t.bwd, t.upd
	f := Factors{Forward: 1, Backward: 1, Update: 1}
	if bf > 0 {
		f.Forward = m.Forward / bf
	}
	if bb > 0 {
		f.Backward = m.Backward / bb
	}
	if bu > 0 {
		f.Update = m.Update / bu
	}
	return Factored(base, f)
}

// Factors multiply a profile's op times phase by phase (recomputation takes the forward factor).
// LayerForward and LayerBackward, when > 0, replace the forward and backward factors for ops of
// the model's repeated layers (partition.Op.InLayer).
type Factors struct {
	Forward, Backward, Update   float64
	LayerForward, LayerBackward float64
}

// Factored is base with every op time multiplied by its phase's factor.
func Factored(base Profile, f Factors) Profile { return &factored{base: base, f: f} }

type factored struct {
	base Profile
	f    Factors
}

func (s *factored) Name() string { return "scaled " + s.base.Name() }

func (s *factored) OpTime(op partition.Op) units.Seconds {
	t := s.base.OpTime(op)
	switch op.Phase {
	case partition.Forward, partition.Recompute:
		if op.InLayer && s.f.LayerForward > 0 {
			return t * units.Seconds(s.f.LayerForward)
		}
		return t * units.Seconds(s.f.Forward)
	case partition.Backward:
		if op.InLayer && s.f.LayerBackward > 0 {
			return t * units.Seconds(s.f.LayerBackward)
		}
		return t * units.Seconds(s.f.Backward)
	case partition.Update:
		return t * units.Seconds(s.f.Update)
	}
	return t
}

func (s *factored) PeakFLOP(dt dtype.DType) units.FLOPPerSecond { return s.base.PeakFLOP(dt) }

// HostCopyTime is the base profile's: a calibration scales compute, not the host link.
func (s *factored) HostCopyTime(b units.Bytes) (units.Seconds, bool) {
	if h, ok := s.base.(HostCopier); ok {
		return h.HostCopyTime(b)
	}
	return 0, false
}

// PhaseTimes are a profile's forward (without recomputation), backward (with it) and update
// times for one iteration of the plan's slowest stage: per micro-batch times × micro-batches,
// plus the per-iteration ops.
func PhaseTimes(p Profile, plan *partition.Plan) (fwd, bwd, upd float64) {
	t := stageTimes(p, plan)
	mbs := float64(max(1, plan.Layout.MicroBatches))
	return t.fwd * mbs, (t.rc + t.bwd) * mbs, t.upd
}

// LayerPhaseTimes are PhaseTimes' forward and backward for the ops of the model's repeated
// layers only (partition.Op.InLayer).
func LayerPhaseTimes(p Profile, plan *partition.Plan) (fwd, bwd float64) {
	t := stageTimes(p, plan)
	mbs := float64(max(1, plan.Layout.MicroBatches))
	return t.layerFwd * mbs, t.layerBwd * mbs
}

// phaseSums are the slowest stage's op times per micro-batch by phase (and of layer ops), and
// its update.
type phaseSums struct{ fwd, rc, bwd, upd, layerFwd, layerBwd float64 }

func stageTimes(p Profile, plan *partition.Plan) phaseSums {
	var worst phaseSums
	for _, st := range plan.Stages {
		var s phaseSums
		for _, blk := range st.Blocks {
			for _, op := range blk.Ops {
				t := float64(p.OpTime(op)) * float64(blk.Repeat)
				switch op.Phase {
				case partition.Forward:
					s.fwd += t
				case partition.Recompute:
					s.rc += t
				case partition.Backward:
					s.bwd += t
				}
				if op.InLayer {
					if op.Phase == partition.Forward {
						s.layerFwd += t
					} else if op.Phase != partition.Update {
						s.layerBwd += t
					}
				}
			}
		}
		for _, op := range st.PerIteration {
			s.upd += float64(p.OpTime(op))
		}
		if s.fwd+s.rc+s.bwd > worst.fwd+worst.rc+worst.bwd {
			worst = s
		}
	}
	return worst
}
