package roofline

import (
	"strings"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
)

// Efficiency is the fraction of each peak that real kernels achieve.
type Efficiency struct {
	// MatMul is the fraction of the tensor-core peak reached by the GEMMs of a training step.
	MatMul float64 `json:"matmul" help:"fraction of the tensor-core peak GEMMs achieve" flag:"matmul-eff"`
	// Conv is the fraction of the tensor-core peak reached by convolutions (cuDNN implicit GEMM),
	// forward and backward, averaged over a CNN's layers.
	// 0 is auto: the GPU type's own calibration (GPU.ConvEfficiency) where it has one, else
	// DefaultConv.
	Conv float64 `json:"conv" help:"fraction of the tensor-core peak convolutions achieve (0: the GPU type's own calibration, conv_efficiency in ddlest gpus, else 0.25)" flag:"conv-eff"`
	// Vector is the fraction of the non-matrix peak reached by elementwise math.
	Vector float64 `json:"vector" help:"fraction of the vector peak elementwise kernels achieve" flag:"vector-eff"`
	// Memory is the fraction of the HBM peak reached by streaming kernels.
	Memory float64 `json:"memory" help:"fraction of the HBM bandwidth memory-bound kernels achieve" flag:"mem-eff"`
	// GEMM chooses the GEMM efficiency: MatMul for every GEMM (constant), or the GPU's measured
	// ceiling with tile and wave quantisation over its SMs (shape, configs/gemm.json).
	GEMM GEMMModel `json:"gemm" help:"GEMM efficiency: constant (matmul_eff for every GEMM), shape (the GPU's measured matmul ceiling × tile and wave quantisation over its SMs; configs/gemm.json, listed by ddlest gpus) or auto (shape where the table has the GPU and dtype, else constant)" flag:"gemm"`
}

// Default efficiencies [X]:
//   - MatMul 0.75: large fp16/bf16 GEMMs run at 70–80% of the dense tensor peak on A100/H100
//     (cuBLAS; NVIDIA "Matrix Multiplication Background" user guide). The end-to-end 52% that
//     Narayanan et al. 2021 report for GPT-3 175B on A100s includes communication and pipeline
//     bubbles, which ddlest models separately.
//   - Memory 0.85: STREAM/BabelStream-style kernels reach about 85–90% of A100 and H100 HBM
//     peak bandwidth.
//   - Conv 0 (auto): the GPU type's ConvEfficiency where its table has one, else DefaultConv.
//   - DefaultConv 0.25 [D]: fitted to NVIDIA DeepLearningExamples ResNet-50 v1.5 (PyTorch, 1× A100 80GB,
//     batch 256): 938 img/s in TF32 and 2,470 img/s in mixed precision. ddlest's ResNet-50
//     gives 1,028 (+10%) and 2,053 img/s (−17%) at 0.25; no single fraction fits both, since
//     cuDNN's TF32 kernels sit further from their peak. Convolutions with few channels, strides
//     and 7×7/1×1 shapes keep CNNs far below GEMM efficiency.
//   - Vector 0.5: elementwise kernels are memory-bound at these intensities; the value rarely
//     matters.
var DefaultEfficiency = Efficiency{MatMul: 0.75, Vector: 0.5, Memory: 0.85}

// DefaultConv is the convolution efficiency of a GPU type without its own calibration.
const DefaultConv = 0.25

// Validate checks that every fraction is in (0, 1] (Conv: or 0, auto).
func (e Efficiency) Validate() error {
	var p params.Problems
	for _, f := range []struct {
		flag string
		v    float64
	}{{"--matmul-eff", e.MatMul}, {"--vector-eff", e.Vector}, {"--mem-eff", e.Memory}} {
		if !(f.v > 0 && f.v <= 1) {
			p.Addf("%s %g must be in (0, 1]", f.flag, f.v)
		}
	}
	if !(e.Conv >= 0 && e.Conv <= 1) {
		p.Addf("--conv-eff %g must be in (0, 1], or 0 for the GPU type's own calibration", e.Conv)
	}
	return p.Err("roofline")
}

// On is e with its automatic fractions resolved for GPU type g: what an estimate on g uses and
// reports.
func (e Efficiency) On(g GPU) Efficiency {
	if e.Conv == 0 {
		e.Conv = DefaultConv
		if g.ConvEfficiency > 0 {
			e.Conv = g.ConvEfficiency
		}
	}
	return e
}

// Roofline prices ops with the roofline model (Williams, Waterman & Patterson 2009):
//
//	t(op) = max( FLOP / (peak(kind, dtype) · eff_compute),  bytes / (HBM · eff_memory) )
//
// where GEMMs use the dense tensor-core peak and everything else the vector peak.
type Roofline struct {
	GPU GPU
	Eff Efficiency

	hbm units.BytesPerSecond
	// The GPU table's peaks per dtype, read once (OpTime runs for every op of every estimate):
	// tensor (0 when unsupported) and vector (fp32's when the table has none).
	tensor, vector [dtype.Count]units.FLOPPerSecond
	// gemm is the shape-aware GEMM model per input dtype (Eff.GEMM shape or auto), where
	// configs/gemm.json measured the GPU in that dtype (shaped): the training dtype's, and FP8's
	// for the FP8 GEMMs of MixedFP8.
	gemm   [dtype.Count]gemmShape
	shaped [dtype.Count]bool
	dt     dtype.DType // the training dtype
	// flash is the GPU's FlashAttention efficiency for the training dtype (configs/gemm.json);
	// hasFlash reports whether it has one.
	flash    flashRates
	hasFlash bool
	// sms is the GPU's streaming multiprocessors (configs/gemm.json; 0 when not in the table).
	sms int
}

// SMs is the GPU's streaming-multiprocessor count from configs/gemm.json, 0 when the table has
// no entry for it (profile.SMCounter).
func (r *Roofline) SMs() int { return r.sms }

// New builds a roofline profile, checking that the GPU supports dt on its matrix engines.
func New(g GPU, eff Efficiency, dt dtype.DType) (*Roofline, error) {
	if err := eff.Validate(); err != nil {
		return nil, err
	}
	if _, err := g.TensorPeak(dt); err != nil {
		return nil, err
	}
	eff = eff.On(g)
	r := &Roofline{GPU: g, Eff: eff, hbm: units.BytesPerSecond(g.HBMBytesPerS * eff.Memory)}
	for d := range dtype.DType(dtype.Count) {
		r.tensor[d] = units.FLOPPerSecond(g.TensorFLOPs[d.String()]) // 0: unsupported (checked above for dt)
		r.vector[d] = g.VectorPeak(d)
	}
	if f, sustained, ok := flashEfficiency(g.Name, dt); ok {
		r.flash, r.hasFlash = newFlashRates(f, r.tensor[dt], sustained), true
	}
	r.dt = dt
	if t, err := GEMMTable(); err == nil {
		if e, ok := t.Get(g.Name); ok {
			r.sms = e.SMs
		}
	}
	if eff.GEMM != GEMMConstant {
		for d := range dtype.DType(dtype.Count) {
			if r.tensor[d] == 0 {
				continue
			}
			shape, err := newGEMMShape(g, d)
			switch {
			case err == nil:
				r.gemm[d], r.shaped[d] = shape, true
			case d == dt && eff.GEMM == GEMMShape:
				return nil, err
			}
		}
	}
	return r, nil
}

// Name identifies the profile (and the shape-aware GEMM model, when it applies).
func (r *Roofline) Name() string {
	if r.shaped[r.dt] {
		return "roofline " + r.GPU.Name + ", shape-aware GEMMs"
	}
	return "roofline " + r.GPU.Name
}

// PeakFLOP is the dense tensor peak for dt (0 when unsupported).
func (r *Roofline) PeakFLOP(dt dtype.DType) units.FLOPPerSecond { return r.tensor[dt] }

// OpTime is the roofline time of one op.
func (r *Roofline) OpTime(op partition.Op) units.Seconds {
	var rate units.FLOPPerSecond
	switch {
	case op.Kind == partition.FusedAttention:
		return units.Max(r.flashTime(op), (op.Read + op.Written).Over(r.hbm))
	case op.Kind == partition.Convolution:
		rate = r.PeakFLOP(op.DType) * units.FLOPPerSecond(r.Eff.Conv)
	case r.shaped[op.DType] && (op.Kind == partition.MatMul || op.Kind == partition.BatchedMatMul):
		e := r.gemmEfficiency(op)
		if op.Phase == partition.Backward {
			e *= r.gemm[op.DType].bwd
		}
		rate = r.PeakFLOP(op.DType) * units.FLOPPerSecond(e)
	case op.Kind.IsMatMul():
		rate = r.PeakFLOP(op.DType) * units.FLOPPerSecond(r.Eff.MatMul)
	default:
		rate = r.vector[op.DType] * units.FLOPPerSecond(r.Eff.Vector)
	}
	return units.Max(op.FLOP.Over(rate), (op.Read + op.Written).Over(r.hbm))
}

// HostCopyTime is a copy of b bytes between GPU and host memory over the GPU's measured host
// link (profile.HostCopier); ok is false when configs/gpus.json has no rate for the GPU.
func (r *Roofline) HostCopyTime(b units.Bytes) (units.Seconds, bool) {
	rate := r.GPU.HostLink()
	return b.Over(rate), rate > 0
}

// HostLinkMeasured checks that the GPU has a measured host link (configs/gpus.json
// host_link_bytes_per_s), which activation offloading copies over.
func (r *Roofline) HostLinkMeasured() error {
	if r.GPU.HostLink() > 0 {
		return nil
	}
	var measured []string
	if t, err := GPUs(); err == nil {
		for _, n := range t.Names() {
			if g, _ := t.Get(n); g.HostLink() > 0 {
				measured = append(measured, n)
			}
		}
	}
	return errs.Usage("GPU %s has no measured host-link rate (configs/gpus.json host_link_bytes_per_s), which offloaded activations are copied at; measured: %s",
		r.GPU.Name, strings.Join(measured, ", "))
}

// flashTime is a FusedAttention op's compute time: its executed work (partition.FlashWork) at
// the efficiency of its sequence and head dimension (the op's output is q = [B, s, d]); a
// context-parallel ring (op.Ring = c > 1) runs 1/c of it causal at s and the rest unmasked at
// partition.FlashRingStep(s).
func (r *Roofline) flashTime(op partition.Op) units.Seconds {
	s, d, bwd := op.Output[1], op.Output[2], op.Phase == partition.Backward
	peak := r.PeakFLOP(op.DType)
	work := op.FLOP * units.FLOP(partition.FlashWork(op.Phase))
	causal := work.Over(peak * units.FLOPPerSecond(r.flash.efficiency(s, d, bwd, true)))
	if op.Ring < 2 {
		return causal
	}
	c := units.Seconds(op.Ring)
	ring := work.Over(peak * units.FLOPPerSecond(r.flash.efficiency(partition.FlashRingStep(s), d, bwd, false)))
	return (causal + (c-1)*ring) / c
}

// FlashAttention checks that the GPU has a measured FlashAttention efficiency for the profile's
// dtype (configs/gemm.json), which ops of kind partition.FusedAttention run at.
func (r *Roofline) FlashAttention() error {
	if r.hasFlash {
		return nil
	}
	return errs.Usage("--attention flash: GPU %s has no measured FlashAttention efficiency in fp16/bf16 (configs/gemm.json); measured: %s (or --attention standard)",
		r.GPU.Name, strings.Join(flashGPUs(), ", "))
}

// gemmEfficiency is the shape model's efficiency for a GEMM's output, [M, N] or batched
// [B, M, N], with its short-K share (K = FLOP / (2·B·M·N)).
func (r *Roofline) gemmEfficiency(op partition.Op) float64 {
	o, g := op.Output, &r.gemm[op.DType]
	switch len(o) {
	case 2:
		return g.efficiency(1, o[0], o[1]) * g.shortK(float64(op.FLOP)/(2*float64(o[0])*float64(o[1])))
	case 3:
		return g.efficiency(o[0], o[1], o[2]) * g.shortK(float64(op.FLOP)/(2*float64(o[0])*float64(o[1])*float64(o[2])))
	}
	return g.ceiling
}

// ReduceKey is what ReduceTime depends on for dt: the vector rate and the memory bandwidth
// (network.ReducerKey: priced collectives are shared between estimates with equal keys).
func (r *Roofline) ReduceKey(dt dtype.DType) [2]float64 {
	return [2]float64{float64(r.vector[dt]) * r.Eff.Vector, float64(r.hbm)}
}

// ReduceTime is a local fanIn-to-1 sum of buffers of b bytes (network.Reducer): it reads fanIn
// buffers and writes one, and adds fanIn−1 elements per output element (reference/ramp.md §3.3).
func (r *Roofline) ReduceTime(fanIn int, b units.Bytes, dt dtype.DType) units.Seconds {
	if fanIn < 2 || b <= 0 {
		return 0
	}
	flop := units.FLOP(float64(fanIn-1) * float64(b) / float64(dt.Size()))
	return units.Max(flop.Over(r.vector[dt]*units.FLOPPerSecond(r.Eff.Vector)),
		(units.Bytes(fanIn+1) * b).Over(r.hbm))
}
