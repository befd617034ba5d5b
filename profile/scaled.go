package profile

import (
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
)

// Scaled calibrates a profile to measured phase totals: on the plan's slowest stage, the base
// profile's forward (with recomputation) and backward times per micro-batch are scaled to fwd and
// bwd seconds, and every op of that phase is scaled by the same factor. The optimizer step keeps
// the base time. With the measured configuration itself the estimate's compute equals the
// measurement exactly; other configurations inherit the measured-to-modelled ratio.
func Scaled(base Profile, plan *partition.Plan, fwd, bwd float64) Profile {
	var bf, bb, worst float64
	for _, st := range plan.Stages {
		var f, b float64
		for _, blk := range st.Blocks {
			for _, op := range blk.Ops {
				t := float64(base.OpTime(op)) * float64(blk.Repeat)
				switch op.Phase {
				case partition.Forward, partition.Recompute:
					f += t
				case partition.Backward:
					b += t
				}
			}
		}
		if f+b > worst {
			worst, bf, bb = f+b, f, b
		}
	}
	s := &scaled{base: base, fwd: 1, bwd: 1}
	if bf > 0 {
		s.fwd = fwd / bf
	}
	if bb > 0 {
		s.bwd = bwd / bb
	}
	return s
}

type scaled struct {
	base     Profile
	fwd, bwd float64
}

func (s *scaled) Name() string { return "scaled " + s.base.Name() }

func (s *scaled) OpTime(op partition.Op) units.Seconds {
	t := s.base.OpTime(op)
	switch op.Phase {
	case partition.Forward, partition.Recompute:
		return t * units.Seconds(s.fwd)
	case partition.Backward:
		return t * units.Seconds(s.bwd)
	}
	return t
}

func (s *scaled) PeakFLOP(dt dtype.DType) units.FLOPPerSecond { return s.base.PeakFLOP(dt) }
