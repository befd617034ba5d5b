package partition

import (
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
)

// Precision is the training number format.
type Precision int

const (
	// MixedFP16: fp16 weights, activations and gradients, fp32 master weights in the optimizer
	// (Micikevicius et al. 2018; the RAMP paper's setting, §7.3).
	MixedFP16 Precision = iota
	// MixedBF16: as MixedFP16 with bfloat16.
	MixedBF16
	// FP32: everything in fp32.
	FP32
	// TF32: fp32 storage, GEMMs on TF32 tensor cores (Ampere and later).
	TF32
	// MixedFP8 is Transformer Engine's FP8 training (NVIDIA TransformerEngine, "Using FP8 with
	// Transformer Engine"; Micikevicius et al. 2022, "FP8 Formats for Deep Learning"): the
	// transformer's linear-layer GEMMs take FP8 inputs (E4M3 forward, E5M2 gradients, per-tensor
	// scales from an amax history) on the FP8 tensor cores (Hopper and later); weights,
	// activations and communication stay bf16, master weights fp32 as MixedBF16.
	MixedFP8
)

var precisionNames = []string{"fp16", "bf16", "fp32", "tf32", "fp8"}

// Mixed reports whether the precision keeps fp32 master weights beside 16-bit working weights.
func (p Precision) Mixed() bool { return p == MixedFP16 || p == MixedBF16 || p == MixedFP8 }

func (p Precision) String() string { return precisionNames[p] }

// DType is the format of weights, activations and communicated tensors.
func (p Precision) DType() dtype.DType {
	return [...]dtype.DType{dtype.FP16, dtype.BF16, dtype.FP32, dtype.TF32, dtype.BF16}[p]
}

// GEMMDType is the input format of the linear layers' GEMMs: FP8 under MixedFP8, else DType.
func (p Precision) GEMMDType() dtype.DType {
	if p == MixedFP8 {
		return dtype.FP8
	}
	return p.DType()
}

// OnlyTransformers is the usage error of a workload whose layers FP8 is not modelled for.
func (p Precision) OnlyTransformers(workload string) error {
	if p == MixedFP8 {
		return errs.Usage("--precision fp8 (Transformer Engine's FP8 linear layers) is modelled for transformers (megatron), not %s; valid: fp16, bf16, fp32, tf32", workload)
	}
	return nil
}

// Optimizer is the parameter update rule.
type Optimizer int

const (
	Adam Optimizer = iota // Kingma & Ba 2015: two moments per parameter
	SGD                   // SGD with momentum: one moment per parameter
)

var optimizerNames = []string{"adam", "sgd"}

// optimizerOpNames are the optimizer steps' op names (built once: plans are built on hot paths).
var optimizerOpNames = []string{"optimizer.adam", "optimizer.sgd"}

func (o Optimizer) String() string { return optimizerNames[o] }

// stateBytes is the optimizer state per parameter (Rajbhandari et al. 2020, ZeRO §3.1: mixed-
// precision Adam keeps fp32 master weights, momentum and variance, K = 12 bytes). In fp32 the
// master copy is the weights themselves.
func StateBytes(o Optimizer, p Precision) units.Bytes {
	moments := units.Bytes(2)
	if o == SGD {
		moments = 1
	}
	state := moments * 4 // fp32 moments
	if p.Mixed() {
		state += 4 // fp32 master weights
	}
	return state
}

// Optimizer-step operation counts per parameter [X], from the update formulas: Adam reads the
// gradient, updates two moments, bias-corrects and applies (≈12 FLOP); SGD with momentum ≈4.
const (
	flopAdam = 12
	flopSGD  = 4
)

// OptimizerOp is the per-iteration parameter update of params parameters: it reads the optimizer
// state and the gradients (and, without a master copy, the weights) and writes the state and the
// working weights. It has no output shape (Output is read for GEMMs only, roofline's shape
// model), as OptimizerOps' passes: a plan built on a sweep's hot path allocates none.
func OptimizerOp(params float64, o Optimizer, p Precision) Op {
	dt := p.DType()
	state := StateBytes(o, p)
	read := state + dt.Size()
	written := state + dt.Size()
	if !p.Mixed() {
		read += dt.Size() // weights are read too (no master copy in the state)
	}
	flop := float64(flopAdam)
	if o == SGD {
		flop = flopSGD
	}
	return Op{
		Name: optimizerOpNames[o], Kind: OptimizerStep, Phase: Update, DType: dt,
		FLOP: units.FLOP(flop * params),
		Read: units.Bytes(params) * read, Written: units.Bytes(params) * written,
	}
}

// StaticMemory is the footprint of params parameters without activations: weights and gradients
// in the training dtype and the optimizer state (ZeRO §3.1 accounting).
func StaticMemory(params float64, o Optimizer, p Precision, capacity units.Bytes) Memory {
	dt := p.DType()
	m := Memory{
		Weights:   units.Bytes(params) * dt.Size(),
		Grads:     units.Bytes(params) * dt.Size(),
		Optimizer: units.Bytes(params) * StateBytes(o, p),
		Capacity:  capacity,
	}
	m.Total = m.Weights + m.Grads + m.Optimizer
	return m
}

// WithOptimizerShard keeps the optimizer state of only params parameters (a sharded optimizer:
// ZeRO stage 1, Megatron-LM's distributed optimizer).
func (m Memory) WithOptimizerShard(params float64, o Optimizer, p Precision) Memory {
	m.Optimizer = units.Bytes(params) * StateBytes(o, p)
	m.Total = m.Weights + m.Grads + m.Optimizer + m.Activations
	return m
}

// WithGrads sets the gradient buffer (gradients kept in another dtype than the weights, e.g.
// fp32 accumulation of bf16 training).
func (m Memory) WithGrads(g units.Bytes) Memory {
	m.Grads = g
	m.Total = m.Weights + m.Grads + m.Optimizer + m.Activations
	return m
}

// WithActivations adds activation memory to a footprint.
func (m Memory) WithActivations(a units.Bytes) Memory {
	m.Activations = a
	m.Total = m.Weights + m.Grads + m.Optimizer + a
	return m
}

// MarshalText renders the name in JSON and YAML.
func (x Precision) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (x *Precision) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, precisionNames) }

// MarshalText renders the name in JSON and YAML.
func (x Optimizer) MarshalText() ([]byte, error) { return []byte(x.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (x *Optimizer) UnmarshalText(b []byte) error { return enum.Unmarshal(x, b, optimizerNames) }
