package partition

import (
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
)

// TestOptimizerOpsBytes: bytes per parameter of each step implementation, hand-counted from the
// code walk in StepImpl's comment (Megatron-LM optimizer.py @d657a3ef, clip_grads.py @82945c1a,
// distributed.py @01d65bde; DeepSpeed bf16_optimizer.py @06e39a56). shardBytes is per updated
// parameter, heldBytes per held parameter.
func TestOptimizerOpsBytes(t *testing.T) {
	for _, c := range []struct {
		name                  string
		impl                  StepImpl
		p                     Precision
		gt                    dtype.DType
		shardBytes, heldBytes units.Bytes
	}{
		// ZeRO §3.1: read and write the 12 B state and the 2 B weights.
		{"fused bf16", StepFused, MixedBF16, dtype.BF16, 28, 0},
		// no grad copy (fp32 main grads), no unscale (bf16), norm 4, clip 4+4, FusedAdam 16+12,
		// master → model 4+2; zero_grad_buffer 4.
		{"megatron bf16 fp32 grads", StepMegatron, MixedBF16, dtype.FP32, 46, 4},
		// grad copy 2+4, unscale 4+4, norm 4, clip 8, FusedAdam 28, master → model 6; zero 2.
		{"megatron fp16", StepMegatron, MixedFP16, dtype.FP16, 60, 2},
		// bf16 gradients kept in bf16 (--grad-reduce-in-bf16): grad copy 2+4, no unscale.
		{"megatron bf16 bf16 grads", StepMegatron, MixedBF16, dtype.BF16, 52, 2},
		// FP32Optimizer: grad = main_grad, norm 4, clip 8, Adam on the weights 16+12; zero 4.
		{"megatron fp32", StepMegatron, FP32, dtype.FP32, 40, 4},
		// FusedAdam 16+12, update_lp_params 4+2; norm 4, clip 4+4, clear_hp_grads 4.
		{"deepspeed bf16", StepDeepSpeed, MixedBF16, dtype.FP32, 34, 16},
	} {
		ops := OptimizerOps(nil, c.impl, Adam, c.p, c.gt, 1, 1)
		var shard, held units.Bytes
		for i, op := range ops {
			if op.Phase != Update || op.Kind != OptimizerStep {
				t.Errorf("%s: op %s is %v/%v, want an optimizer op of the update phase", c.name, op.Name, op.Phase, op.Kind)
			}
			if i == 0 {
				shard = op.Read + op.Written
			} else {
				held += op.Read + op.Written
			}
		}
		if shard != c.shardBytes || held != c.heldBytes {
			t.Errorf("%s: %v B per updated + %v B per held parameter, want %v + %v", c.name, shard, held, c.shardBytes, c.heldBytes)
		}
	}
	// Sharded: the passes over held gradients scale with held, the step with the shard.
	ops := OptimizerOps(nil, StepDeepSpeed, Adam, MixedBF16, dtype.FP32, 800, 100)
	if got, want := ops[0].Read+ops[0].Written+ops[1].Read+ops[1].Written, units.Bytes(34*100+16*800); got != want {
		t.Errorf("deepspeed, 800 held and 100 updated: %v B, want 34·100 + 16·800 = %v", got, want)
	}
}

// TestGradAccumOp: the per-micro-batch accumulation pass, bytes per parameter by hand.
func TestGradAccumOp(t *testing.T) {
	for _, c := range []struct {
		name   string
		a      GradAccum
		dt, gt dtype.DType
		bytes  units.Bytes
		ok     bool
	}{
		{"gemm", AccumGEMM, dtype.BF16, dtype.FP32, 0, false},
		{"add bf16 into fp32", AccumAdd, dtype.BF16, dtype.FP32, 2 + 4 + 4, true},
		{"add fp16 into fp16", AccumAdd, dtype.FP16, dtype.FP16, 2 + 2 + 2, true},
		// cast: read 2, write 4; add: read 4 + 4, write 4.
		{"cast-add bf16 into fp32", AccumCastAdd, dtype.BF16, dtype.FP32, 18, true},
	} {
		op, ok := GradAccumOp(1000, c.a, c.dt, c.gt)
		if ok != c.ok || op.Read+op.Written != 1000*c.bytes {
			t.Errorf("%s: ok %v, %v B for 1000 parameters, want %v, %v", c.name, ok, op.Read+op.Written, c.ok, 1000*c.bytes)
		}
		if ok && (op.Phase != Backward || op.Name != GradAccumName) {
			t.Errorf("%s: %s in phase %v, want %s in the backward pass", c.name, op.Name, op.Phase, GradAccumName)
		}
	}
}
