package moe

import (
	"math"

	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
)

// Spec is a Mixture-of-Experts FF layer and its expert parallelism.
type Spec struct {
	Experts        int     // E
	TopK           int     // experts per token (k)
	CapacityFactor float64 // cf
	ExpertHidden   int     // H_e, each expert's FFN width
	EP             int     // GPUs the experts are spread over (a divisor of the DP degree)
	// Gated experts are SwiGLU FFNs (gate and up fused into an h × 2H_e GEMM, Swish(gate) ⊙ up,
	// down H_e × h: Mixtral, Qwen-MoE, DeepSeek); NoBias drops their biases. The transformer
	// sets both from its layer's MLP (megatron.Arch).
	Gated, NoBias bool
	// SharedHidden is the FFN width of the shared experts every token passes through beside
	// its top-k (DeepSeekMoE, Dai et al. 2024 §3.2 "shared expert isolation"; DeepSeek-V3
	// n_shared_experts × moe_intermediate_size = 1 × 2,048): one dense FFN of that width in the
	// experts' form, replicated on every expert-parallel rank and reduced over the data-parallel
	// group (Megatron-Core SharedExpertMLP). 0: none.
	SharedHidden int
	// DenseLayers is how many of the stack's first layers keep the dense MLP (DeepSeek-V3
	// first_k_dense_replace = 3, §4.2: "all FFNs except for the first three layers" are MoE).
	DenseLayers int
}

// Validate checks the spec against the data-parallel degree it lives in.
func (s Spec) Validate(dp int) error {
	var p params.Problems
	p.AtLeast("--experts", s.Experts, 1)
	p.AtLeast("--ep", s.EP, 1)
	p.AtLeast("--expert-hidden", s.ExpertHidden, 1)
	if s.TopK < 1 || s.TopK > s.Experts {
		p.Addf("--top-k %d must be between 1 and the %d experts", s.TopK, s.Experts)
	}
	if !(s.CapacityFactor > 0) || math.IsInf(s.CapacityFactor, 0) {
		p.Addf("--capacity-factor %g must be > 0", s.CapacityFactor)
	}
	if s.EP >= 1 && s.Experts >= 1 && s.Experts%s.EP != 0 {
		p.Addf("--ep %d must divide the %d experts", s.EP, s.Experts)
	}
	if s.SharedHidden < 0 {
		p.Addf("--shared-hidden %d must be ≥ 0", s.SharedHidden)
	}
	if s.DenseLayers < 0 {
		p.Addf("--dense-layers %d must be ≥ 0", s.DenseLayers)
	}
	if s.EP >= 1 && dp >= 1 && dp%s.EP != 0 {
		p.Addf("--ep %d must divide the data-parallel degree %d (experts are spread over data-parallel ranks)", s.EP, dp)
	}
	return p.Err("moe")
}

// Capacity is the tokens each expert accepts from one GPU routing n tokens: ⌈cf·k·n/E⌉.
func (s Spec) Capacity(n int) int {
	return int(math.Ceil(s.CapacityFactor * float64(s.TopK) * float64(n) / float64(s.Experts)))
}

// ExpertsPerGPU is E/EP.
func (s Spec) ExpertsPerGPU() int { return s.Experts / s.EP }

// ExpertParams is one expert's parameters: two weight matrices (three when gated) and their
// biases.
func (s Spec) ExpertParams(h int) float64 { return s.ExpertParamsTP(h, 1) }

// SharedParams is the shared experts' parameters (an FFN of width SharedHidden).
func (s Spec) SharedParams(h int) float64 { return s.SharedParamsTP(h, 1) }

// ExpertParamsTP is one expert's parameters on one of t tensor-parallel ranks (Megatron-Core's
// expert tensor parallelism of the tensor-parallel degree, expert_tensor_parallel_size's
// default).
func (s Spec) ExpertParamsTP(h, t int) float64 { return s.ffnParamsTP(h, s.ExpertHidden, t) }

// SharedParamsTP is the shared experts' parameters on one of t tensor-parallel ranks.
func (s Spec) SharedParamsTP(h, t int) float64 {
	if s.SharedHidden == 0 {
		return 0
	}
	return s.ffnParamsTP(h, s.SharedHidden, t)
}

// ffnMatrices is one of t tensor-parallel ranks' share of the weight matrices of an FFN of width
// f in the experts' form: h·f in, f·h out, and h·f more for the gate.
func (s Spec) ffnMatrices(h, f, t int) float64 {
	p := 2 * float64(h) * float64(f)
	if s.Gated {
		p += float64(h) * float64(f)
	}
	return p / float64(t)
}

// ffnParamsTP is one of t tensor-parallel ranks' share of an FFN of width f in the experts' form:
// fc1 column-parallel (weights and bias split), fc2 row-parallel (weights split, bias
// replicated), as Megatron-LM's dense MLP (Shoeybi et al. 2019 §3).
func (s Spec) ffnParamsTP(h, f, t int) float64 {
	p := s.ffnMatrices(h, f, t)
	if !s.NoBias {
		p += float64(s.fc1Width(f))/float64(t) + float64(h)
	}
	return p
}

// LinearPerGPU is the weight-matrix parameters of one GPU's experts (its E/EP routed experts
// and the shared ones, 1/t of each): what FP8 training keeps an FP8 copy and transpose of.
func (s Spec) LinearPerGPU(h, t int) float64 {
	return float64(s.ExpertsPerGPU())*s.ffnMatrices(h, s.ExpertHidden, t) + s.ffnMatrices(h, s.SharedHidden, t)
}

// fc1Width is the first GEMM's output width of an FFN of width f in the experts' form: f, or 2·f
// (gate and up) when gated.
func (s Spec) fc1Width(f int) int {
	if s.Gated {
		return 2 * f
	}
	return f
}

// RouterParams is the router's h × E weight.
func (s Spec) RouterParams(h int) float64 { return float64(h) * float64(s.Experts) }

// slots is the token vectors a GPU sends in the dispatch (and receives for its experts): E·C.
func (s Spec) slots(n int) int { return s.Experts * s.Capacity(n) }

// A2ABytes is one GPU's dispatch (or combine) all-to-all buffer for n tokens of width h.
func (s Spec) A2ABytes(n, h int, dt dtype.DType) units.Bytes {
	return units.Bytes(float64(s.slots(n)) * float64(h) * float64(dt.Size()))
}

// Layer is the ops, collectives and saved activations of one MoE FF layer on one GPU, for n
// tokens of width h per micro-batch (without the residual and norm around it).
type Layer struct {
	Forward, Backward []partition.Op
	Collectives       []partition.Collective // per micro-batch
	Saved             units.Bytes            // activations kept for the backward pass
}

var sharedActivationNames = partition.ActivationNames{GeLU: "moe.shared.gelu", GeLUBwd: "moe.shared.gelu.bwd",
	SwiGLU: "moe.shared.swiglu", SwiGLUBwd: "moe.shared.swiglu.bwd"}

var expertActivationNames = partition.ActivationNames{GeLU: "moe.expert.gelu", GeLUBwd: "moe.expert.gelu.bwd",
	SwiGLU: "moe.expert.swiglu", SwiGLUBwd: "moe.expert.swiglu.bwd"}

// Inputs are what one MoE layer is built for: N tokens of width H per micro-batch on the
// tensor-parallel group, the training dtype DT and the experts' GEMM input type GEMMDT (FP8
// under FP8 training, else DT), the expert- and tensor-parallel groups, and whether the forward
// pass is recomputed.
type Inputs struct {
	N, H       int
	DT, GEMMDT dtype.DType
	EP, TP     network.Group
	Recompute  bool
}

// Build lays out one MoE FF layer on one GPU, for n tokens of width h per micro-batch. ep is the
// expert-parallel group (EP ranks at the rank distance of data-parallel neighbours, and which of
// them run at once); tp the tensor-parallel group, of t ranks: with t > 1 (sequence parallelism,
// which Megatron-Core requires for MoE with TP: megatron/training/arguments.py, "When using MoE
// and tensor parallelism, sequence parallelism must be used") each rank routes its n/t tokens,
// all-to-alls them over ep, all-gathers the received tokens over tp so that every rank's 1/t
// share of each expert's weights sees them all, and reduce-scatters the outputs before the
// all-to-all back (Megatron-Core MoEAlltoAllTokenDispatcher; expert tensor parallelism of t).
// Shared experts are a sequence-parallel MLP of the t ranks. recompute adds the forward
// collectives again when the layer's forward pass is recomputed.
//
// gemmDT is the experts' GEMM input type: under FP8 training (Transformer Engine; DeepSeek-V3
// §3.3.1 "the majority of core computation kernels, i.e., GEMM operations, are implemented in
// FP8") the routed and shared experts' GEMMs take FP8 inputs, each preceded by its cast and
// transpose (the received tokens and fc2's input forward, the output gradients backward), and
// keep their inputs for the weight gradients in FP8; the router, the activation and the
// all-to-alls stay in the training dtype dt (Megatron-Core's dispatcher sends bf16).
func Build(gr *partition.Graph, s Spec, in Inputs) Layer {
	n, h, dt, gemmDT, ep, tp, recompute := in.N, in.H, in.DT, in.GEMMDT, in.EP, in.TP, in.Recompute
	t := max(1, tp.Size)
	n /= t // this rank's sequence shard
	sz, gsz := float64(dt.Size()), float64(gemmDT.Size())
	fp8 := gemmDT != dt
	cast := func(name string, ph partition.Phase, x tensor.Shape) []partition.Op {
		if !fp8 {
			return nil
		}
		return []partition.Op{gr.Pointwise(name, partition.Elementwise, ph, x, dt, partition.FlopCast, 1, 1, 0, 0)}
	}
	x := gr.Shape(n, h)
	wr := gr.Shape(h, s.Experts)
	router := gr.MatMul("moe.router", partition.Forward, x, wr, dt)
	logits := gr.Shape(n, s.Experts)
	gate := gr.Pointwise("moe.gate", partition.Softmax, partition.Forward, logits, dt, partition.FlopSoftmax, 1, 1, 0, 0)
	// Experts: this GPU's E/EP experts over the E·C received vectors.
	// (With TP: its 1/t of each, over the vectors received by all t ranks.)
	rows, he := t*s.slots(n), s.ExpertHidden/t
	recv := gr.Shape(rows, h)
	w1, w2 := gr.Shape(h, s.fc1Width(he)), gr.Shape(he, h)
	fc1 := gr.MatMul("moe.expert.fc1", partition.Forward, recv, w1, gemmDT)
	mid := gr.Shape(rows, s.fc1Width(he)) // the activation's input
	midOut := gr.Shape(rows, he)          // fc2's input
	back := gr.Shape(s.slots(n), h)       // this rank's returned slots (after the reduce-scatter)
	act := gr.MLPActivation(&expertActivationNames, partition.GatedActivation(s.Gated), partition.Forward, mid, dt)
	actBwd := gr.MLPActivation(&expertActivationNames, partition.GatedActivation(s.Gated), partition.Backward, mid, dt)
	fc2 := gr.MatMul("moe.expert.fc2", partition.Forward, midOut, w2, gemmDT)
	// Combine: the k gate-weighted outputs of each token, a multiply-add per element of the
	// returned slots [D]; it writes the n·h output (at most the slots' size, taken as equal).
	comb := gr.Pointwise("moe.combine", partition.Elementwise, partition.Forward, back, dt, 2, 1, 1, 0, 0)
	router.Saved = units.Bytes(partition.Elems(x) * sz)
	gate.Saved = units.Bytes(partition.Elems(logits) * sz)
	fc1.Saved = units.Bytes(partition.Elems(recv) * gsz)
	act.Saved = units.Bytes(partition.Elems(mid) * sz)
	fc2.Saved = units.Bytes(partition.Elems(midOut) * gsz)
	comb.Saved = units.Bytes(partition.Elems(back) * sz) // expert outputs, for the gate gradient
	// Sized to the ops it will hold (an estimate builds it once per geometry): router, gate,
	// fc1, activation, fc2, combine and the shared experts' three, each GEMM with its cast in FP8.
	nfwd, nbwd := 6, 9
	if s.SharedHidden > 0 {
		nfwd, nbwd = nfwd+3, nbwd+5
	}
	if fp8 {
		nfwd, nbwd = nfwd+2+2*min(1, s.SharedHidden), nbwd+2+2*min(1, s.SharedHidden)
	}
	l := Layer{Forward: append(make([]partition.Op, 0, nfwd), router, gate)}
	l.Forward = append(append(l.Forward, cast("moe.expert.fc1.cast", partition.Forward, recv)...), fc1, act)
	l.Forward = append(append(l.Forward, cast("moe.expert.fc2.cast", partition.Forward, midOut)...), fc2, comb)
	// The shared experts: a dense FFN beside the routed ones, over the t ranks' gathered tokens
	// with 1/t of its weights (its input is the router's, saved once with the router; under TP
	// the gathered copy is re-gathered for the backward pass, as a sequence-parallel MLP's).
	var sharedArr [7]partition.Op
	sharedBwd := sharedArr[:0]
	xs := gr.Shape(n*t, h)
	if sf := s.SharedHidden; sf > 0 {
		f := sf / t
		sw1, sw2 := gr.Shape(h, s.fc1Width(f)), gr.Shape(f, h)
		smid, smidOut := gr.Shape(n*t, s.fc1Width(f)), gr.Shape(n*t, f)
		sfc1 := gr.MatMul("moe.shared.fc1", partition.Forward, xs, sw1, gemmDT)
		sact := gr.MLPActivation(&sharedActivationNames, partition.GatedActivation(s.Gated), partition.Forward, smid, dt)
		sfc2 := gr.MatMul("moe.shared.fc2", partition.Forward, smidOut, sw2, gemmDT)
		sact.Saved = units.Bytes(partition.Elems(smid) * sz)
		sfc2.Saved = units.Bytes(partition.Elems(smidOut) * gsz)
		l.Forward = append(append(l.Forward, cast("moe.shared.fc1.cast", partition.Forward, xs)...), sfc1, sact)
		l.Forward = append(append(l.Forward, cast("moe.shared.fc2.cast", partition.Forward, smidOut)...), sfc2)
		d2, g2 := gr.LinearBackward("moe.shared.fc2.dgrad", "moe.shared.fc2.wgrad", smidOut, sw2, gemmDT)
		d1, g1 := gr.LinearBackward("moe.shared.fc1.dgrad", "moe.shared.fc1.wgrad", xs, sw1, gemmDT)
		sharedBwd = append(sharedBwd, cast("moe.shared.fc2.dgrad.cast", partition.Backward, gr.Shape(n*t, h))...)
		sharedBwd = append(sharedBwd, d2, g2, gr.MLPActivation(&sharedActivationNames, partition.GatedActivation(s.Gated), partition.Backward, smid, dt))
		sharedBwd = append(append(sharedBwd, cast("moe.shared.fc1.dgrad.cast", partition.Backward, smid)...), d1, g1)
	}
	for _, op := range l.Forward {
		l.Saved += op.Saved
	}
	d2, g2 := gr.LinearBackward("moe.expert.fc2.dgrad", "moe.expert.fc2.wgrad", midOut, w2, gemmDT)
	d1, g1 := gr.LinearBackward("moe.expert.fc1.dgrad", "moe.expert.fc1.wgrad", recv, w1, gemmDT)
	dr, gw := gr.LinearBackward("moe.router.dgrad", "moe.router.wgrad", x, wr, dt)
	// Combine backward [D]: the slots' gradient (gate × output gradient) and the gate's (dot of
	// slot output and output gradient): 3 operations per element, reading both.
	bwd := append(make([]partition.Op, 0, nbwd), gr.Pointwise("moe.combine.bwd", partition.Elementwise, partition.Backward, back, dt, 3, 2, 1, 0, 0))
	bwd = append(append(bwd, cast("moe.expert.fc2.dgrad.cast", partition.Backward, recv)...), d2, g2, actBwd)
	bwd = append(append(bwd, cast("moe.expert.fc1.dgrad.cast", partition.Backward, mid)...), d1, g1,
		gr.Pointwise("moe.gate.bwd", partition.Softmax, partition.Backward, logits, dt, partition.FlopSoftmax, 2, 1, 0, 0),
		dr, gw)
	l.Backward = append(bwd, sharedBwd...) // within bwd's capacity: no copy
	a2a := network.Collective{Op: network.AllToAll, Bytes: s.A2ABytes(n, h, dt), Group: ep, DType: dt}
	add := func(name string, c network.Collective, dim partition.Dim, ph partition.Phase, count int) {
		l.Collectives = append(l.Collectives, partition.Collective{Name: name, Collective: c, Dim: dim, Phase: ph, Count: count})
	}
	// Per pass: the dispatch and the combine all-to-all; under TP the received tokens'
	// all-gather and the outputs' reduce-scatter (nccl-tests sizes: the gathered t·E·C vectors),
	// whose backward is the other collective, and the shared experts' sequence-parallel
	// all-gather and reduce-scatter of the n·t tokens.
	passes := []struct {
		suffix string
		ph     partition.Phase
	}{{"fwd", partition.Forward}, {"bwd", partition.Backward}, {"recompute", partition.Recompute}}
	if !recompute {
		passes = passes[:2]
	}
	for _, p := range passes {
		add("ep.a2a."+p.suffix, a2a, partition.DimEP, p.ph, 2)
		if t == 1 {
			continue
		}
		gathered := units.Bytes(float64(rows) * float64(h) * sz)
		add("moe.tp.ag."+p.suffix, network.Collective{Op: network.AllGather, Bytes: gathered, Group: tp, DType: dt}, partition.DimTP, p.ph, 1)
		add("moe.tp.rs."+p.suffix, network.Collective{Op: network.ReduceScatter, Bytes: gathered, Group: tp, DType: dt}, partition.DimTP, p.ph, 1)
		if s.SharedHidden > 0 {
			tokens := units.Bytes(float64(n*t) * float64(h) * sz)
			add("moe.shared.ag."+p.suffix, network.Collective{Op: network.AllGather, Bytes: tokens, Group: tp, DType: dt}, partition.DimTP, p.ph, 1)
			add("moe.shared.rs."+p.suffix, network.Collective{Op: network.ReduceScatter, Bytes: tokens, Group: tp, DType: dt}, partition.DimTP, p.ph, 1)
		}
	}
	return l
}
