package dtype

import (
	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/units"
)

// DType is a tensor element format.
type DType int

const (
	FP32 DType = iota
	FP16
	BF16
	FP8
	// TF32 is fp32 storage with TensorFloat-32 tensor-core math (NVIDIA Ampere and later), what
	// "fp32" training in PyTorch/TensorFlow runs on an A100 by default for convolutions.
	TF32
)

var names = []string{"fp32", "fp16", "bf16", "fp8", "tf32"}

// Count is the number of dtypes: arrays indexed by DType have this length.
const Count = 5

// sizes in bytes per element (IEEE 754 binary32/binary16, bfloat16, OCP FP8 E4M3/E5M2; TF32 is
// stored as binary32).
var sizes = []units.Bytes{4, 2, 2, 1, 4}

func (d DType) String() string { return names[d] }

// Size is the element size.
func (d DType) Size() units.Bytes { return sizes[d] }

// Parse reads a dtype name.
func Parse(s string) (DType, error) { return enum.Parse[DType]("dtype", s, names) }

// Names lists the valid names.
func Names() []string { return append([]string(nil), names...) }
