package profile

import (
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
)

// Profile gives compute times on one GPU.
type Profile interface {
	// Name says which profile and device, e.g. "roofline ramp-a100".
	Name() string
	// OpTime is the duration of one execution of op.
	OpTime(op partition.Op) units.Seconds
	// PeakFLOP is the dense matrix peak for dt, the denominator of model FLOP utilisation.
	PeakFLOP(dt dtype.DType) units.FLOPPerSecond
}
