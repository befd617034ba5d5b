package megatron

import (
	"fmt"
	"math"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/scaling"
)

// Auto-mode defaults (RAMP §7.2.1).
const (
	// DefaultParamsPerGPU is the model-parallel limit: "the number of parameters available in a
	// single device is as close as possible to the upper limit acceptable by an NVIDIA A100 GPU
	// (1.6B [64])" (RAMP §7.2.1, citing ZeRO-Offload).
	DefaultParamsPerGPU = 1.6e9
	// DefaultMaxGPUs is RAMP's largest system, 65,536 nodes (§3, Table 9).
	DefaultMaxGPUs = 65536
	// DefaultVocab is the GPT-2 BPE vocabulary of Kaplan et al.'s WebText2 models (§2).
	DefaultVocab = 50257
)

// AutoConfig is the auto-mode request: a scaling-law target and the cluster limits.
type AutoConfig struct {
	Target       scaling.Target
	MaxGPUs      int
	ParamsPerGPU float64     // transformer-layer parameters allowed per GPU (MP rule)
	Capacity     units.Bytes // GPU memory
	Vocab        int
	SeqParallel  bool
	TPComm       TPComm
	Recompute    Recompute
	Precision    Precision
	Optimizer    Optimizer
	MicroBatch   int // 0: the largest divisor of the local batch that fits in memory
	// Passed through to Config.
	UntiedEmbeddings bool
	DPBucketBytes    units.Bytes
	Stack            Stack
	RankOrder        RankOrder
}

// AutoResult is the configuration auto mode settles on and the training length it implies.
type AutoResult struct {
	Config Config
	// Steps is the number of iterations for the global batch (Kaplan: S_min (1 + B_crit/B)).
	Steps float64
	// LocalBatch is the per-DP-rank batch (global batch / DP).
	LocalBatch int
	// LocalBatchSource says where the local batch came from.
	LocalBatchSource string
}

// Auto turns a scaling-law target into an explicit configuration, following RAMP §7.2.1:
//
//  1. MP: the smallest power of two t with n_layer·(12h²/t + 7h/t + 6h) ≤ ParamsPerGPU.
//  2. Heads: the law's heads raised to the smallest multiple of t that divides h (Table 9:
//     heads = max(MP, d/96 or d/128)).
//  3. Local batch b: the Table 9 preset's, else the largest that fits in GPU memory.
//  4. DP = 2^round(log2(B_crit/b)), at least 1 and at most MaxGPUs/t; global batch B = DP·b.
//  5. Micro-batch: the largest divisor of b that fits in memory (gradient accumulation over
//     b/micro-batch steps), unless given.
//  6. Steps from the law at the global batch.
func Auto(a AutoConfig) (AutoResult, error) {
	tg := a.Target
	if a.MaxGPUs < 1 {
		return AutoResult{}, errs.Usage("--max-gpus %d must be ≥ 1", a.MaxGPUs)
	}
	if !(a.ParamsPerGPU > 0) || math.IsInf(a.ParamsPerGPU, 0) {
		return AutoResult{}, errs.Usage("--params-per-gpu %g must be > 0", a.ParamsPerGPU)
	}
	if a.MicroBatch < 0 {
		return AutoResult{}, errs.Usage("--micro-batch %d must be ≥ 1", a.MicroBatch)
	}
	h, layers := tg.Shape.DModel, tg.Shape.Layers

	t, layer := 1, gpt(h)
	for float64(layers)*layer.layerParams(t) > a.ParamsPerGPU {
		t *= 2
		if t > a.MaxGPUs || t > h {
			return AutoResult{}, errs.Infeasible(
				fmt.Sprintf("%d layers × %.4g parameters per layer need tensor parallelism > %d to stay under %.3g parameters per GPU",
					layers, layer.layerParams(1), t/2, a.ParamsPerGPU),
				"the %.3g-parameter model does not fit on --max-gpus %d", tg.Params, a.MaxGPUs)
		}
	}
	heads := -1
	for n := roundUp(max(tg.Shape.Heads, t), t); n <= h; n += t {
		if h%n == 0 {
			heads = n
			break
		}
	}
	if heads < 0 {
		return AutoResult{}, errs.Infeasible(fmt.Sprintf("hidden size %d", h),
			"no head count that is a multiple of the tensor-parallel degree %d divides the hidden size", t)
	}

	cfg := Config{
		Layers: layers, Hidden: h, Heads: heads, Seq: tg.Seq, Vocab: a.Vocab,
		TP: t, PP: 1, DP: 1, Interleave: 1, GlobalBatch: 1, MicroBatch: 1,
		SeqParallel: a.SeqParallel, TPComm: a.TPComm, Recompute: a.Recompute, Precision: a.Precision, Optimizer: a.Optimizer, RankOrder: a.RankOrder,
		UntiedEmbeddings: a.UntiedEmbeddings, DPBucketBytes: a.DPBucketBytes, Stack: a.Stack,
		Capacity: a.Capacity,
	}
	maxMicro, mem1, err := maxMicroBatch(cfg)
	if err != nil {
		return AutoResult{}, err
	}
	if maxMicro < 1 {
		return AutoResult{}, errs.Infeasible(mem1.String(),
			"even one sequence per micro-batch does not fit in GPU memory at tensor parallelism %d", t)
	}

	res := AutoResult{}
	b := tg.LocalBatch
	res.LocalBatchSource = "RAMP Table 9 (global batch / DP level)"
	if b == 0 {
		b = maxMicro
		res.LocalBatchSource = "largest micro-batch that fits in GPU memory (RAMP §7.2.1)"
		if a.MicroBatch > 0 {
			b = a.MicroBatch
			res.LocalBatchSource = "--micro-batch"
		}
		if float64(b) > tg.CriticalBatch {
			b = max(1, int(math.Round(tg.CriticalBatch)))
			res.LocalBatchSource = "the critical batch (smaller than what fits in memory)"
		}
	}
	dp := 1
	if r := tg.CriticalBatch / float64(b); r > 1 {
		dp = 1 << int(math.Round(math.Log2(r)))
	}
	dp = max(1, min(dp, a.MaxGPUs/t))

	micro := a.MicroBatch
	if micro == 0 {
		micro = largestDivisorAtMost(b, maxMicro)
	} else if b%micro != 0 {
		return AutoResult{}, errs.Usage("--micro-batch %d does not divide the local batch %d (%s); valid: %s",
			micro, b, res.LocalBatchSource, divisorList(b))
	}
	cfg.DP, cfg.GlobalBatch, cfg.MicroBatch = dp, dp*b, micro
	res.Config, res.LocalBatch = cfg, b
	res.Steps = tg.Steps(float64(cfg.GlobalBatch))
	return res, nil
}

// maxMicroBatch returns the largest micro-batch whose footprint fits, using that every saved
// activation is proportional to the micro-batch: footprint(m) = static + m·activations(1). It
// needs no op graph: the memory accounting is the one Build uses.
func maxMicroBatch(c Config) (int, partition.Memory, error) {
	if err := c.Validate(); err != nil {
		return 0, partition.Memory{}, err
	}
	c.MicroBatch = 1
	g := geometry(c)
	m := stageMemory(&g, &c, 0)
	static := m.Weights + m.Grads + m.Optimizer
	if m.Activations <= 0 {
		return math.MaxInt32, m, nil
	}
	free := float64(c.Capacity - static)
	if free < float64(m.Activations) {
		return 0, m, nil
	}
	return int(math.Min(free/float64(m.Activations), math.MaxInt32)), m, nil
}

func largestDivisorAtMost(n, limit int) int {
	for d := min(n, limit); d > 1; d-- {
		if n%d == 0 {
			return d
		}
	}
	return 1
}
