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
	var bf, bb, bu, worst float64
	for _, st := range plan.Stages {
		var f, b, u float64
		for _, blk := range st.Blocks {
			for _, op := range blk.Ops {
				t := float64(base.OpTime(op)) * float64(blk.Repeat)
				switch op.Phase {
				case partition.Forward:
					f += t
				case partition.Backward:
					b += t
				}
			}
		}
		for _, op := range st.PerIteration {
			u += float64(base.OpTime(op))
		}
		if f+b > worst {
			worst, bf, bb, bu = f+b, f, b, u
		}
	}
	s := &scaled{base: base, fwd: 1, bwd: 1, upd: 1}
	if bf > 0 {
		s.fwd = m.Forward / bf
	}
	if bb > 0 {
		s.bwd = m.Backward / bb
	}
	if bu > 0 {
		s.upd = m.Update / bu
	}
	return s
}

type scaled struct {
	base          Profile
	fwd, bwd, upd float64
}

func (s *scaled) Name() string { return "scaled " + s.base.Name() }

func (s *scaled) OpTime(op partition.Op) units.Seconds {
	t := s.base.OpTime(op)
	switch op.Phase {
	case partition.Forward, partition.Recompute:
		return t * units.Seconds(s.fwd)
	case partition.Backward:
		return t * units.Seconds(s.bwd)
	case partition.Update:
		return t * units.Seconds(s.upd)
	}
	return t
}

func (s *scaled) PeakFLOP(dt dtype.DType) units.FLOPPerSecond { return s.base.PeakFLOP(dt) }
