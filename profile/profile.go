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

// SMCounter is a profile that prices compute from the GPU's hardware (a roofline), with the GPU's
// streaming-multiprocessor count: compute overlapped with a communication kernel cannot use the
// SMs that kernel holds (network.Cost.SMs; estimator). Measured profiles do not implement it:
// their compute ran beside the job's communication. SMs 0: not known.
type SMCounter interface {
	SMs() int
}

// HostCopier is a profile whose GPU has a measured host link: HostCopyTime is a copy of b bytes
// between GPU and host memory in one direction (activation offloading); ok is false when the
// GPU's rate is not known.
type HostCopier interface {
	HostCopyTime(b units.Bytes) (t units.Seconds, ok bool)
}
