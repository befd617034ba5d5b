package partition

import (
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/units"
)

// GradAccum is how a GPU adds each micro-batch's weight gradients to the gradients it keeps for
// the optimizer (gradient accumulation over the micro-batches of an iteration).
type GradAccum int

const (
	// AccumGEMM: the weight-gradient GEMM accumulates into the gradient buffer itself, so no
	// pass of its own (Megatron-LM's gradient_accumulation_fusion: fused_weight_gradient_mlp_cuda
	// .wgrad_gemm_accum_fp32 into weight.main_grad, megatron/core/tensor_parallel/layers.py
	// @000c4ac2). ddlest's default.
	AccumGEMM GradAccum = iota
	// AccumAdd: after each micro-batch's backward pass one pass main_grad.add_(grad) per
	// parameter (Megatron-LM DistributedDataParallel._make_param_hook, megatron/model/
	// distributed.py @01d65bde, the path without gradient_accumulation_fusion): it reads the
	// fresh gradient (training dtype) and the buffer (gradient dtype) and writes the buffer.
	AccumAdd
	// AccumCastAdd: DeepSpeed's BF16_Optimizer.update_hp_grads after each micro-batch's backward
	// (deepspeed/runtime/bf16_optimizer.py @06e39a56, called from pipe/engine.py
	// _exec_backward_pass): hp_grad.add_(lp.grad.to(fp32)) — the cast writes an fp32 copy of the
	// bf16 gradient, the add reads it and the buffer and writes the buffer.
	AccumCastAdd
)

var gradAccumNames = []string{"gemm", "add", "cast-add"}

func (a GradAccum) String() string { return gradAccumNames[a] }

// MarshalText renders the name in JSON and YAML.
func (a GradAccum) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (a *GradAccum) UnmarshalText(b []byte) error { return enum.Unmarshal(a, b, gradAccumNames) }

// GradAccumName is the accumulation pass's op name.
const GradAccumName = "grad.accumulate"

// GradAccumOp is the per-micro-batch accumulation pass over params parameters whose fresh
// gradients are in the training dtype dt and whose kept gradients are in gt; ok is false when
// the GEMM accumulates them (AccumGEMM: no pass). Bytes per parameter:
//
//	add       read dt + gt, write gt                   (bf16 into fp32: 6 + 4 = 10)
//	cast-add  cast: read dt, write gt; add: read 2·gt, write gt   (bf16: 2 + 4 + 8 + 4 = 18)
func GradAccumOp(params float64, a GradAccum, dt, gt dtype.DType) (op Op, ok bool) {
	d, g := dt.Size(), gt.Size()
	var read, written units.Bytes
	switch a {
	case AccumAdd:
		read, written = d+g, g
	case AccumCastAdd:
		read, written = d+2*g, 2*g
	default:
		return Op{}, false
	}
	n := units.Bytes(params)
	return Op{Name: GradAccumName, Kind: Elementwise, Phase: Backward, DType: gt,
		FLOP: units.FLOP(params), Read: n * read, Written: n * written}, true
}

// StepImpl is the implementation of the optimizer step: the same update rule moves different
// bytes depending on the passes around it.
type StepImpl int

const (
	// StepFused is one fused pass over the optimizer state, the gradients and the working
	// weights (ZeRO §3.1's accounting, OptimizerOp). ddlest's default.
	StepFused StepImpl = iota
	// StepMegatron is Megatron-LM's MixedPrecisionOptimizer.step (FP32Optimizer.step in fp32),
	// NVIDIA/Megatron-LM megatron/optimizer/optimizer.py @d657a3ef and clip_grads.py @82945c1a,
	// per updated parameter, in order:
	//
	//	_copy_model_grads_to_main_grads  main_grad.float(): a copy (read gt, write 4) unless the
	//	                                 gradients are already fp32 (then the same tensor)
	//	_unscale_main_grads_and_check…   fp16 only (bf16 has no grad scaler): read 4, write 4
	//	clip_grad_norm_fp32              multi_tensor_l2norm: read 4; multi_tensor_scale when the
	//	                                 norm exceeds clip_grad (1.0 by default): read 4, write 4
	//	optimizer.step (apex FusedAdam)  read the fp32 master weights, moments and gradient,
	//	                                 write weights and moments (state + 4, state)
	//	_copy_main_params_to_model_params  multi_tensor_scale by 1.0: read 4, write dt
	//
	// and, per parameter the GPU holds (all of them, also under the distributed optimizer), the
	// gradient buffer zeroed before the next iteration (DistributedDataParallel.zero_grad_buffer:
	// write gt). Mixed bf16 with fp32 gradients: 46 B per updated parameter + 4 B per held one,
	// 50 B/param without sharding (fused: 28).
	StepMegatron
	// StepDeepSpeed is DeepSpeed's BF16_Optimizer.step (deepspeed/runtime/bf16_optimizer.py
	// @06e39a56; bf16 with fp32 gradients only): over every held parameter's fp32 gradient the
	// global norm (read 4), the clip (read 4, write 4) and clear_hp_grads (write 4); over the
	// rank's partition FusedAdam (state + 4, state) and update_lp_params (read 4, write 2): 16 B
	// per held parameter + 34 B per updated one.
	StepDeepSpeed
)

var stepImplNames = []string{"fused", "megatron", "deepspeed"}

func (s StepImpl) String() string { return stepImplNames[s] }

// MarshalText renders the name in JSON and YAML.
func (s StepImpl) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the name (config files, --set).
func (s *StepImpl) UnmarshalText(b []byte) error { return enum.Unmarshal(s, b, stepImplNames) }

// Per-parameter operation counts of the passes around the update rule [X]: the norm squares and
// adds (2), the clip and the unscale multiply (1 each).
const (
	flopNorm  = 2
	flopScale = 1
)

// Op names of the optimizer's passes (built once: plans are built on hot paths).
var stepOpNames = [...]string{StepMegatron: "optimizer.megatron", StepDeepSpeed: "optimizer.deepspeed"}

const optimizerGradsName = "optimizer.grads"

// OptimizerOps appends to dst the per-iteration optimizer work of a GPU that holds held
// parameters and updates shard of them (shard = held without a sharded optimizer), with
// gradients kept in gt: one op for the fused step, two for the others (the passes over the
// updated shard, then those over every held gradient).
func OptimizerOps(dst []Op, impl StepImpl, o Optimizer, p Precision, gt dtype.DType, held, shard float64) []Op {
	if impl == StepFused {
		return append(dst, OptimizerOp(shard, o, p))
	}
	dt := p.DType()
	state := StateBytes(o, p)
	fp32 := dtype.FP32.Size()
	// The update rule on fp32 master weights (or, in fp32 training, the weights themselves).
	read, written := state+fp32, state
	if !p.Mixed() {
		read, written = read+fp32, written+fp32
	}
	flop := units.FLOP(flopAdam)
	if o == SGD {
		flop = flopSGD
	}
	var heldRead, heldWritten units.Bytes
	var heldFLOP units.FLOP
	switch impl {
	case StepMegatron:
		if p.Mixed() {
			if gt != dtype.FP32 {
				read, written = read+gt.Size(), written+fp32 // main_grad.float()
			}
			if p == MixedFP16 {
				read, written, flop = read+fp32, written+fp32, flop+flopScale // unscale
			}
			read, written = read+fp32, written+dt.Size() // main → model copy
		}
		read, written, flop = read+2*fp32, written+fp32, flop+flopNorm+flopScale // norm, clip
		heldWritten = gt.Size()                                                  // zero_grad_buffer
	case StepDeepSpeed:
		read, written = read+fp32, written+dt.Size() // update_lp_params
		heldRead, heldWritten = 2*fp32, 2*fp32       // norm, clip; clear_hp_grads
		heldFLOP = flopNorm + flopScale
	}
	s, h := units.Bytes(shard), units.Bytes(held)
	return append(dst,
		Op{Name: stepOpNames[impl], Kind: OptimizerStep, Phase: Update, DType: dt,
			FLOP: flop * units.FLOP(shard), Read: s * read, Written: s * written},
		Op{Name: optimizerGradsName, Kind: OptimizerStep, Phase: Update, DType: gt,
			FLOP: heldFLOP * units.FLOP(held), Read: h * heldRead, Written: h * heldWritten})
}
