package megatron

import (
	"strings"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/moe"
	"gorgonia.org/tensor"
)

// geom is the per-GPU geometry of one micro-batch.
type geom struct {
	gr            *partition.Graph
	m, s, h, a, t int // micro-batch, sequence, hidden, heads, tensor-parallel degree
	tpStride      int // rank distance between tensor-parallel neighbours
	dpStride      int // rank distance between data-parallel neighbours
	// phases, tpBlock, epBlock: under 1F1B with several stages only every other stage's groups
	// (phases = 2) run their collectives at once; the blocks are the groups per stage.
	phases, tpBlock, epBlock int
	// cp is the context-parallel degree (s is then each rank's 1/cp of the sequence), cpStride
	// the rank distance of its ring.
	cp, cpStride           int
	vocab                  int // padded vocabulary (0: none)
	sp, asyncTP, tpOverlap bool
	flash                  bool // FlashAttention kernels (AttnFlash)
	tpc                    TPComm
	rc                     Recompute
	dt                     dtype.DType
	sh                     shape // the layer's widths (Arch resolved)
	// The layer's parameters on this GPU (all, the attention half's, the four weight
	// matrices'), counted once per geometry: stage footprints read them for every stage.
	layerP, attnP, linearW float64
	// zero ≥ 2: the layer's own ZeRO collectives over the data(-and-context)-parallel group
	// dpGroup, its gradients in gradDT.
	zero    int
	dpGroup network.Group
	gradDT  dtype.DType
	moe     moe.Spec    // Experts > 0: MoE FF layers instead of the dense MLP
	gemmDT  dtype.DType // the linear layers' GEMM inputs (FP8 under MixedFP8)
	moeAct  *moeActivations
}

// moeActivations caches what one MoE layer saves per micro-batch (stageActivations).
type moeActivations struct {
	perMB, workspace units.Bytes
	ok               bool
}

// sl is the sequence length of the residual stream on one GPU (sequence parallelism shards it).
func (g geom) sl() int {
	if g.sp {
		return g.s / g.t
	}
	return g.s
}

func (g geom) sz() float64 { return float64(g.dt.Size()) }

// actBytes is the whole [m, s, h] activation: the nccl-tests size S of every tensor-parallel
// collective on the residual stream (all-reduce buffer, all-gather output, reduce-scatter input).
func (g geom) actBytes() units.Bytes { return units.Bytes(float64(g.m*g.s) * float64(g.h) * g.sz()) }

func (g geom) tpGroup() network.Group {
	return network.Group{Size: g.t, Stride: max(1, g.tpStride), Every: g.phases, Block: g.tpBlock}
}

// LayerParamsPerGPU is the parameter count of one GPT-3 layer of hidden size h on one GPU at
// tensor parallelism t: 12h²/t + 7h/t + 6h (shape.weights).
func LayerParamsPerGPU(h, t int) float64 { return gpt(h).layerParams(t) }

// tpCollective is a tensor-parallel collective on the residual stream.
func (g geom) tpCollective(name string, op network.Op, ph partition.Phase, count int) partition.Collective {
	return partition.Collective{
		Name:       name,
		Collective: network.Collective{Op: op, Bytes: g.actBytes(), Group: g.tpGroup(), DType: g.dt},
		Dim:        partition.DimTP, Phase: ph, Count: count,
	}
}

// enterTP / exitTP are Megatron's conjugate operators around a column-parallel → row-parallel
// pair: without sequence parallelism f is the identity forward and an all-reduce backward, g an
// all-reduce forward and the identity backward (Shoeybi et al. 2019 Fig. 3). With sequence
// parallelism f becomes an all-gather forward / reduce-scatter backward and g a reduce-scatter
// forward / all-gather backward (Korthikanti et al. 2022 §4.2.2).
func (g geom) tpCollectives() []partition.Collective {
	if g.t == 1 {
		return nil
	}
	var cs []partition.Collective
	add := func(name string, op network.Op, ph partition.Phase, n int) {
		cs = append(cs, g.tpCollective(name, op, ph, n))
	}
	if g.tpc == TPCommRAMP {
		add("tp.mlp.fwd", network.AllReduce, partition.Forward, 1)
		add("tp.attn.bwd", network.AllReduce, partition.Backward, 1)
		return cs
	}
	if !g.sp {
		add("tp.g.fwd", network.AllReduce, partition.Forward, 2)
		cs = g.backwardDgrad(cs, "tp.f.bwd", network.AllReduce)
		if g.rc == RecomputeFull {
			add("tp.g.recompute", network.AllReduce, partition.Recompute, 2)
		}
		return cs
	}
	if g.tpOverlap {
		return g.overlappedSP(cs)
	}
	add("sp.f.fwd", network.AllGather, partition.Forward, 2)
	add("sp.g.fwd", network.ReduceScatter, partition.Forward, 2)
	add("sp.g.bwd", network.AllGather, partition.Backward, 2)
	cs = g.backwardDgrad(cs, "sp.f.bwd", network.ReduceScatter)
	// The column-parallel weight gradients need the gathered input again; Megatron-LM re-gathers
	// it concurrently with the data-gradient GEMM instead of storing it.
	for _, behind := range []string{"mlp.fc1.dgrad", "attn.qkv.dgrad"} {
		c := g.tpCollective("sp.regather.bwd", network.AllGather, partition.Backward, 1)
		c.Overlap, c.HideBehind = partition.BehindOp, behind
		cs = append(cs, c)
	}
	if g.rc == RecomputeFull {
		add("sp.f.recompute", network.AllGather, partition.Recompute, 2)
		add("sp.g.recompute", network.ReduceScatter, partition.Recompute, 2)
	}
	return cs
}

// attnTPCollectives is the attention half's share of a layer's tensor-parallel collectives (a
// MoE layer: the MoE half brings its own, moe.Build): those of tpCollectives that enter or leave
// the attention block, or hide behind its GEMMs.
func (g geom) attnTPCollectives() []partition.Collective {
	all := g.tpCollectives()
	cs := all[:0:0]
	for _, c := range all {
		switch {
		case strings.HasPrefix(c.HideBehind, "mlp."):
			continue
		case c.HideBehind == "" && c.Count == 2: // one per half
			c.Count = 1
		}
		cs = append(cs, c)
	}
	return cs
}

// ring is the context-parallel ring a FlashAttention kernel runs as (partition.Op.Ring): the CP
// degree, 0 without context parallelism.
func (g geom) ring() int {
	if g.cp < 2 {
		return 0
	}
	return g.cp
}

// rankKV is the bytes of this rank's keys and values in one layer, 2·b·s·kv·dh/t elements: what
// each context-parallel ring step sends.
func (g geom) rankKV() units.Bytes {
	return units.Bytes(2 * float64(g.m*g.s) * float64(g.sh.kv*g.sh.dh/g.t) * g.sz())
}

// ringMerge is the memory traffic around the c = cp ring steps of Transformer Engine's
// context-parallel attention, counted on the rank that does the most of it (the last, whose
// every step covers all its queries) from NVIDIA/TransformerEngine
// transformer_engine/pytorch/attention.py @001b7360, AttnFuncWithCPAndKVP2P, with O the
// output's (and dQ's) bytes and KV the rank's keys and values:
//
//	forward   torch.cat of K and V into the ring's send buffer    read KV, write KV
//	          out = torch.zeros_like(q)                            write O
//	          c × flash_attn_fwd_out_correction (out += out_i·e^Δ)  read 2O, write O each
//	backward  p2p_comm_buffers[0][0].copy_(kv)                     read KV, write KV
//	          dq.copy_(dq_) once, then c − 1 × dq.add_(dq_)        read (2c − 1)·O, write c·O
//	          each step: torch.cat of dk_, dv_ and dkv.add_/copy_   read 3, write 2 × its
//	          (half the keys and values but at the last step)      (c + 1)/2 · KV in all
//
// The per-step softmax statistics (one value per query row) are left out. qk is the rank's
// per-head queries [B·a/t, s, d].
func (g geom) ringMerge(ph partition.Phase, qk tensor.Shape) partition.Op {
	c := float64(g.ring())
	o := g.gr.Shape(qk[0], qk[1], g.sh.dv)
	kv := g.rankKV()
	if ph == partition.Backward {
		half := (c + 1) / 2 // the steps' key/value gradients, in units of KV
		return g.gr.Pointwise("attn.cp.merge.bwd", partition.Elementwise, ph, o, g.dt, c-1, 2*c-1, c,
			kv*units.Bytes(1+3*half), kv*units.Bytes(1+2*half))
	}
	return g.gr.Pointwise("attn.cp.merge", partition.Elementwise, ph, o, g.dt, 2*c, 2*c, c+1, kv, kv)
}

// cpCollectives is context parallelism's ring exchange in one layer (Megatron-Core with
// Transformer Engine's default cp_comm_type p2p: each sequence split into 2·cp chunks, rank i
// holding chunks i and 2cp − 1 − i so that causal attention costs every rank the same;
// transformer_engine/pytorch/attention AttnFuncWithCPAndKVP2P): forward, cp − 1 steps each send
// the rank's current key and value chunk to the next rank of the ring while attention runs on the
// chunk it holds; backward the keys and values travel again with their gradients, 2(cp − 1)
// sends; a recomputed attention core repeats the forward ring. Each send is the K and V of the
// rank's s tokens, 2·b·s·kv·dh/t elements, hidden behind the attention kernel of its pass.
func (g geom) cpCollectives() []partition.Collective {
	if g.cp < 2 {
		return nil
	}
	fwd, bwd := "attn.scores", "attn.scores.dA"
	if g.flash {
		fwd, bwd = "attn.flash", "attn.flash.bwd"
	}
	kv := g.rankKV()
	ring := func(name string, ph partition.Phase, sends int, behind string) partition.Collective {
		return partition.Collective{
			Name: name, Dim: partition.DimCP, Phase: ph, Count: sends, Overlap: partition.BehindOp, HideBehind: behind,
			Collective: network.Collective{Op: network.SendRecv, Bytes: kv, DType: g.dt,
				Group: network.Group{Size: 2, Stride: max(1, g.cpStride)}}, // a ring step: every rank to its neighbour
		}
	}
	cs := []partition.Collective{ring("cp.kv.fwd", partition.Forward, g.cp-1, fwd), ring("cp.kv.bwd", partition.Backward, 2*(g.cp-1), bwd)}
	if g.rc != RecomputeNone { // full and selective recomputation both rerun the attention core
		cs = append(cs, ring("cp.kv.recompute", partition.Recompute, g.cp-1, fwd))
	}
	return cs
}

// zeroCollectives is a dense layer's own ZeRO-2/3 traffic per micro-batch over the data-parallel
// group (Config.ZeRO): its gradients reduce-scattered behind fc1's weight-gradient GEMM (the last
// of the MLP's backward), and under ZeRO-3 its parameters all-gathered before the forward pass
// (behind fc1, standing for the prefetch during the previous layer), the recomputation and the
// backward pass (behind fc2's data-gradient GEMM). nccl-tests sizes: the whole layer on this GPU.
func (g geom) zeroCollectives() []partition.Collective {
	if g.zero < 2 {
		return nil
	}
	coll := func(name string, op network.Op, dt dtype.DType, ph partition.Phase, behind string) partition.Collective {
		return partition.Collective{Name: name, Dim: partition.DimDP, Phase: ph, Count: 1, Overlap: partition.BehindOp, HideBehind: behind,
			Collective: network.Collective{Op: op, Bytes: units.Bytes(g.layerP * float64(dt.Size())), Group: g.dpGroup, DType: dt}}
	}
	cs := []partition.Collective{coll("zero.grads", network.ReduceScatter, g.gradDT, partition.Backward, "mlp.fc1.wgrad")}
	if g.zero == 3 {
		cs = append(cs, coll("zero.params.fwd", network.AllGather, g.dt, partition.Forward, "mlp.fc1"),
			coll("zero.params.bwd", network.AllGather, g.dt, partition.Backward, "mlp.fc2.dgrad"))
		if g.rc == RecomputeFull {
			cs = append(cs, coll("zero.params.recompute", network.AllGather, g.dt, partition.Recompute, "mlp.fc1"))
		}
	}
	return cs
}

// overlappedSP is the sequence-parallel collectives under TP communication overlap
// (Megatron-Core tp_comm_overlap with Transformer Engine's userbuffers, NVIDIA/Megatron-LM
// megatron/core/model_parallel_config.py @02aa3ee4: "overlapping of Linear layer execution with
// tensor parallel communication collectives like AllGather/ReduceScatter … wherever possible
// during the forward and the backward pass"), each behind the GEMM it feeds or drains with the
// defaults of that file: the all-gathers before QKV and fc1 pipelined with those GEMMs
// (tp_comm_overlap_ag), the reduce-scatters after the projection and fc2 with those
// (tp_comm_overlap_rs), in the forward pass and its recomputation; backward, the output
// gradient's all-gather with the projection's and fc2's data-gradient GEMMs (tp_comm_overlap_ag)
// and the input gradient's reduce-scatter with the QKV and fc1 weight-gradient GEMMs
// (tp_comm_bulk_dgrad). The pipeline's start-up chunk is not charged [D].
//
// Userbuffers moves the bytes itself (partition.Driver), as Transformer Engine's initialize_ub
// sets each GEMM up by default (NVIDIA/TransformerEngine transformer_engine/pytorch/module/base.py
// of 2024: methods ring_exchange for qkv_fprop, fc1_fprop, proj_dgrad and fc2_dgrad, pipeline
// for proj_fprop and fc2_fprop, bulk for qkv_dgrad, qkv_wgrad, fc1_dgrad and fc1_wgrad; add_ub's
// defaults num_sm 16 and use_ce True): the ring-exchange all-gathers on copy engines
// (ubCopyEngine), the pipelined reduce-scatters and the bulk transfers in 16 SMs' kernels (ubSMs).
func (g geom) overlappedSP(cs []partition.Collective) []partition.Collective {
	behind := func(name string, op network.Op, ph partition.Phase, d partition.Driver, ops ...string) {
		for _, o := range ops {
			c := g.tpCollective(name, op, ph, 1)
			c.Overlap, c.HideBehind, c.Driver = partition.BehindOp, o, d
			cs = append(cs, c)
		}
	}
	behind("sp.f.fwd", network.AllGather, partition.Forward, ubCopyEngine, "attn.qkv", "mlp.fc1")
	behind("sp.g.fwd", network.ReduceScatter, partition.Forward, ubSMs, "attn.proj", "mlp.fc2")
	behind("sp.g.bwd", network.AllGather, partition.Backward, ubCopyEngine, "attn.proj.dgrad", "mlp.fc2.dgrad")
	behind("sp.f.bwd", network.ReduceScatter, partition.Backward, ubSMs, "attn.qkv.wgrad", "mlp.fc1.wgrad")
	for _, o := range []string{"mlp.fc1.dgrad", "attn.qkv.dgrad"} {
		behind("sp.regather.bwd", network.AllGather, partition.Backward, ubSMs, o)
	}
	if g.rc == RecomputeFull {
		behind("sp.f.recompute", network.AllGather, partition.Recompute, ubCopyEngine, "attn.qkv", "mlp.fc1")
		behind("sp.g.recompute", network.ReduceScatter, partition.Recompute, ubSMs, "attn.proj", "mlp.fc2")
	}
	return cs
}

// The drivers of Transformer Engine's userbuffers (overlappedSP).
var (
	ubCopyEngine = partition.Driver{Set: true}
	ubSMs        = partition.Driver{Set: true, SMs: 16}
)

// backwardDgrad appends the backward collective of the two column-parallel linears' input
// gradients (attention's QKV and the MLP's fc1): after each backward, or, with asyncTP, running
// during that linear's weight-gradient GEMM, as Megatron-LM launches it (NVIDIA/Megatron-LM
// megatron/core/tensor_parallel/layers.py @000c4ac2, LinearWithGradAccumulationAndAsyncCommunication
// .backward: the input gradient's all-reduce, or reduce-scatter under sequence parallelism, with
// async_op=True before the weight-gradient GEMM, waited for after it).
func (g geom) backwardDgrad(cs []partition.Collective, name string, op network.Op) []partition.Collective {
	if !g.asyncTP {
		return append(cs, g.tpCollective(name, op, partition.Backward, 2))
	}
	for _, behind := range []string{"attn.qkv.wgrad", "mlp.fc1.wgrad"} {
		c := g.tpCollective(name, op, partition.Backward, 1)
		c.Overlap, c.HideBehind = partition.BehindOp, behind
		cs = append(cs, c)
	}
	return cs
}

// layerForwardOps is the number of forward ops of a layer, in order: ln1, attn.qkv, attn.scores,
// attn.softmax, attn.dropout, attn.context, attn.proj, attn.residual, ln2, mlp.fc1, mlp.gelu,
// mlp.fc2, mlp.residual.
const layerForwardOps = 13

// layerActivations is the activation memory one layer keeps per micro-batch, per forward op
// (Korthikanti et al. 2022 §4.1, in bytes of the training dtype; dropout masks are bytes), and
// the workspace alive while one layer is recomputed and back-propagated.
//
//	ln1, ln2          their inputs, 2sbh each (sequence shard with SP)
//	attn.qkv, fc1     their inputs, 2sbh, replicated across TP ranks without SP; the SP shard
//	                  2sbh/t with SP (re-gathered in the backward pass, §4.2.2)
//	attn.scores       Q and K, 4sbh/t (2sb(a + kv)·dh/t with kv key/value heads of width dh;
//	                  MLA: 2sb·2a·(dh + dr)/t)
//	softmax, dropout  softmax output 2as²b/t and dropout mask as²b/t (not with selective recompute)
//	attn.context      V 2sbh/t (2sb·kv·dv/t), plus the dropout output 2as²b/t (not with selective recompute)
//	attn.proj         its input 2sbh/t (2sb·a·dv/t)
//	MLA latents       with attn.qkv: each latent RMSNorm's input and each up-projection's,
//	                  2sb(qr + kvr) twice (DeepSeek-V2 §2.1.2, Eqs. 9–10 and 12)
//	residuals         dropout masks sbh (shard with SP)
//	gelu, fc2         their inputs 8sbh/t each (2sbf/t; SwiGLU's input is fc1's 2f-wide output)
//
// For GPT-3 the sum is sbh(10 + 24/t + 5as/(ht)) without SP and sbh(34/t + 5as/(ht)) with it
// (their Table 2).
// With FlashAttention (AttnFlash) the 5as²b/t core is never in memory; the kernel keeps Q, K, V
// and the fp32 row log-sum-exp L, 4asb/t bytes (FlashAttention-2 Algorithm 1), counted with Q
// and K (with selective recomputation L is the workspace); its output is the projection's input.
// Full recomputation keeps only the layer input; its workspace is one layer's full set.
// Selective recomputation drops the 5as²b/t attention core, which becomes the workspace.
func layerActivations(g geom) (saved [layerForwardOps]units.Bytes, workspace units.Bytes) {
	m, s, h, t, sz := float64(g.m), float64(g.s), float64(g.h), float64(g.t), g.sz()
	sh := g.sh
	resid := m * float64(g.sl()) * h         // elements of the residual stream on this GPU
	q := m * s * float64(sh.a*sh.dqk()) / t  // queries on this GPU
	k := m * s * float64(sh.kv*sh.dqk()) / t // keys
	v := m * s * float64(sh.kv*sh.dv) / t    // values
	o := m * s * float64(sh.a*sh.dv) / t     // the attention output (the projection's input)
	act := m * s * float64(sh.fc1Width(g.t)) // the MLP activation's input (fc1's output)
	ffn := m * s * float64(sh.f) / t         // fc2's input
	// The linear layers keep their inputs for the weight gradients in the GEMM dtype (FP8 under
	// MixedFP8: Transformer Engine saves the FP8 casts).
	gsz := float64(g.gemmDT.Size())
	gemmIn := m * s * h * gsz // input of QKV / fc1, replicated across TP ranks...
	if g.sp {
		gemmIn = resid * gsz // ...or kept as the sequence shard
	}
	// MLA's latents: each RMSNorm keeps its input, each up-projection its (normalised) input.
	latents := m * s * float64(sh.qr+sh.kvr) * (sz + gsz)
	core := m * float64(g.a) / t * s * s * float64(g.cp) // attention-core elements (keys: the whole sequence)
	keepCore := g.rc != RecomputeSelective
	var lse float64 // FlashAttention keeps the fp32 row log-sum-exp instead of the s² core
	if g.flash {
		core, lse = 0, float64(partition.FlashLSE(m*float64(g.a)/t*s))
	}
	keptLSE := lse
	if !keepCore { // selective recomputation re-runs the kernel, which writes L again
		keptLSE = 0
	}
	b := func(x float64) units.Bytes { return units.Bytes(x) }
	saved = [layerForwardOps]units.Bytes{
		b(resid * sz),         // ln1
		b(gemmIn + latents),   // attn.qkv (MLA: its projections and latent norms)
		b((q+k)*sz + keptLSE), // attn.scores: Q, K (FlashAttention: and L)
		0, 0,                  // attn.softmax, attn.dropout (below)
		b(v * sz),  // attn.context: V (+ probabilities below)
		b(o * gsz), // attn.proj
		b(resid * partition.MaskBytes),
		b(resid * sz), // ln2
		b(gemmIn),     // mlp.fc1
		b(act * sz),   // mlp.gelu / mlp.swiglu
		b(ffn * gsz),  // mlp.fc2
		b(resid * partition.MaskBytes),
	}
	if keepCore {
		saved[3] = b(core * sz)
		saved[4] = b(core * partition.MaskBytes)
		saved[5] += b(core * sz)
	}
	switch g.rc {
	case RecomputeFull:
		for _, x := range saved {
			workspace += x
		}
		saved = [layerForwardOps]units.Bytes{b(resid * sz)}
	case RecomputeSelective:
		workspace = b(core*(2*sz+partition.MaskBytes) + lse)
	}
	return saved, workspace
}

// mlpOps is the position of ln2, the first op of the MLP half of a layer, in forward order.
const mlpOps = 8

// moeParamsPerGPU is a MoE layer's parameters on one GPU: attention, the router (replicated) and
// shared experts (reduced over the data-parallel group), and the E/EP routed experts, each split
// over the tensor-parallel ranks.
func moeParamsPerGPU(g geom) (dense, experts float64) {
	return g.attnP + g.moe.RouterParams(g.h) + g.moe.SharedParamsTP(g.h, g.t), float64(g.moe.ExpertsPerGPU()) * g.moe.ExpertParamsTP(g.h, g.t)
}

// layerBlocks builds one transformer layer: forward ops (with the activations each keeps for
// the backward pass), recomputation, backward ops and the tensor-parallel collectives. A dense
// layer is one block; a MoE layer is two, the attention half (reduced over the data-parallel
// group) and the MoE half (its experts reduced over the expert-data-parallel group, Sync 1).
func layerBlocks(g geom, repeat int) []partition.Block {
	m, s, h, a, t := g.m, g.s, g.h, g.a, g.t
	dt, sz, sh := g.dt, g.sz(), g.sh
	at, ft := a/t, sh.f/t
	gr := g.gr
	wqkv, wproj, wfc1, wfc2 := gr.Shape(sh.qIn(), sh.qkvWidth(t)), gr.Shape(at*sh.dv, h), gr.Shape(h, sh.fc1Width(t)), gr.Shape(ft, h)
	x := gr.Shape(m, g.sl(), h)                    // residual stream on this GPU
	xs := gr.Shape(m*s, h)                         // gathered input of the column-parallel GEMMs
	qk := gr.Shape(m*at, s, sh.dqk())              // per-head Q (and K) on this GPU
	sk := s * g.cp                                 // keys: the whole sequence (the CP ring's)
	kt := gr.Shape(m*at, sh.dqk(), sk)             // Kᵀ (a key head serves a/kv query heads)
	vk := gr.Shape(m*at, sk, sh.dv)                // V
	sc := gr.Shape(m*at, s, sk)                    // attention scores / probabilities
	ffn := gr.Shape(m*s, sh.fc1Width(t))           // fc1 output
	ffnOut := gr.Shape(m*s, ft)                    // fc2 input
	pin := gr.Shape(m*s, at*sh.dv)                 // projection input
	lnExtra := units.Bytes(sh.normParams() * sz)   // γ (and β)
	resid := float64(m*g.sl()) * float64(h)        // elements of x
	rotated := gr.Shape(m*s, (sh.a+sh.kv)*sh.dh/t) // queries and keys (RoPE)
	if sh.mla {                                    // the heads' rotary query parts and the shared rotary key
		rotated = gr.Shape(m*s, at*sh.dr+sh.dr)
	}

	core := float64(m*at) * float64(s) * float64(sk) // attention-core elements
	saved, workspace := layerActivations(g)

	ln1 := gr.Pointwise("ln1", partition.Norm, partition.Forward, x, dt, partition.FlopNorm, 1, 1, lnExtra, 0)
	qkv := gr.MatMul("attn.qkv", partition.Forward, xs, wqkv, g.gemmDT)
	scores := gr.BMM("attn.scores", partition.Forward, qk, kt, dt)
	softmax := gr.Pointwise("attn.softmax", partition.Softmax, partition.Forward, sc, dt, partition.FlopSoftmax, 1, 1, 0, 0)
	drop := gr.Pointwise("attn.dropout", partition.Elementwise, partition.Forward, sc, dt, partition.FlopDropout, 1, 1, 0, units.Bytes(core*partition.MaskBytes))
	context := gr.BMM("attn.context", partition.Forward, sc, vk, dt)
	proj := gr.MatMul("attn.proj", partition.Forward, pin, wproj, g.gemmDT)
	res1 := gr.Pointwise("attn.residual", partition.Elementwise, partition.Forward, x, dt, partition.FlopResidual, 2, 1, 0, units.Bytes(resid*partition.MaskBytes))
	ln2 := gr.Pointwise("ln2", partition.Norm, partition.Forward, x, dt, partition.FlopNorm, 1, 1, lnExtra, 0)
	res2 := gr.Pointwise("mlp.residual", partition.Elementwise, partition.Forward, x, dt, partition.FlopResidual, 2, 1, 0, units.Bytes(resid*partition.MaskBytes))

	// Saved activations: the dense layer's per-op accounting (layerActivations); RoPE keeps
	// nothing (its backward is the inverse rotation); a MoE half keeps ln2's input, the residual
	// mask and what its ops save.
	ln1.Saved, qkv.Saved, scores.Saved, softmax.Saved = saved[0], saved[1], saved[2], saved[3]
	drop.Saved, context.Saved, proj.Saved, res1.Saved = saved[4], saved[5], saved[6], saved[7]
	ln2.Saved, res2.Saved = saved[mlpOps], saved[layerForwardOps-1]

	// Scratch on the stack: the ops are copied into the block's own slice at the end (plans are
	// built on the estimator's hot path).
	var attnArr [16]partition.Op
	var mlpArr, mlpBwdArr [16]partition.Op
	var attnBwdArr [16]partition.Op
	attn := append(attnArr[:0], ln1)
	var mlaBwd []partition.Op // MLA: the projections' backward, in backward order
	if sh.mla {
		var fwd []partition.Op
		fwd, mlaBwd = g.mlaProjections(xs, wqkv, qkv.Saved)
		attn = append(attn, fwd...)
	} else {
		attn = append(attn, qkv)
	}
	if sh.rope {
		attn = append(attn, gr.Pointwise("attn.rope", partition.Elementwise, partition.Forward, rotated, dt, partition.FlopRoPE, 1, 1, 0, 0))
	}
	core0 := len(attn) // the attention core's first op
	if g.flash {       // one kernel for the attention core: scores, softmax, dropout, context
		flash := gr.FlashAttention("attn.flash", partition.Forward, qk, sk, m*sh.kv/t, sh.dv, dt)
		flash.Saved = saved[2] + saved[3] + saved[4] + saved[5] // Q, K, L and V
		flash.Ring = g.ring()
		attn = append(attn, flash)
		if g.ring() > 1 {
			attn = append(attn, g.ringMerge(partition.Forward, qk))
		}
	} else {
		attn = append(attn, scores, softmax, drop, context)
	}
	attn = append(g.fp8Cast(attn, "attn.proj.cast", pin, partition.Forward), proj, res1)
	mlp := mlpArr[:0] // forward, from ln2 to the residual
	var moeLayer moe.Layer
	if g.moe.Experts > 0 {
		moeLayer = moe.Build(gr, g.moe, moe.Inputs{N: m * s, H: h, DT: dt, GEMMDT: g.gemmDT, TP: g.tpGroup(), Recompute: g.rc == RecomputeFull,
			EP: network.Group{Size: g.moe.EP, Stride: max(1, g.dpStride), Every: g.phases, Block: g.epBlock}})
		mlp = append(append(append(mlp, ln2), moeLayer.Forward...), res2)
	} else {
		fc1 := gr.MatMul("mlp.fc1", partition.Forward, xs, wfc1, g.gemmDT)
		act := mlpActivation(g, ffn, partition.Forward)
		fc2 := gr.MatMul("mlp.fc2", partition.Forward, ffnOut, wfc2, g.gemmDT)
		fc1.Saved, act.Saved, fc2.Saved = saved[mlpOps+1], saved[mlpOps+2], saved[mlpOps+3]
		mlp = append(g.fp8Cast(append(mlp, ln2, fc1, act), "mlp.fc2.cast", ffnOut, partition.Forward), fc2, res2)
	}
	if g.rc == RecomputeFull { // only the layer input stays (layerActivations)
		for i := range mlp {
			mlp[i].Saved = 0
		}
		for i := 1; i < len(attn); i++ {
			attn[i].Saved = 0
		}
		if g.moe.Experts > 0 { // the workspace holds the MoE half's activations, not the MLP's
			keep := g
			keep.rc = RecomputeNone
			dense, _ := layerActivations(keep)
			workspace += moeLayer.Saved - dense[mlpOps+1] - dense[mlpOps+2] - dense[mlpOps+3]
		}
	}
	// recompute appends to dst the recomputation of the forward ops fwd (the attention half or
	// the MLP half): all of them with full recomputation, the attention core with selective.
	recompute := func(dst, fwd []partition.Op) []partition.Op {
		switch g.rc {
		case RecomputeFull:
			for _, op := range fwd {
				dst = append(dst, partition.AsPhase(op, partition.Recompute))
			}
		case RecomputeSelective:
			switch {
			case len(fwd) != len(attn) || fwd[0].Name != "ln1":
			case g.flash: // the kernel, and the ring's merge under context parallelism
				dst = append(dst, partition.AsPhase(attn[core0], partition.Recompute))
				if g.ring() > 1 {
					dst = append(dst, partition.AsPhase(attn[core0+1], partition.Recompute))
				}
			default:
				dst = append(dst, partition.AsPhase(scores, partition.Recompute), partition.AsPhase(softmax, partition.Recompute),
					partition.AsPhase(drop, partition.Recompute), partition.AsPhase(context, partition.Recompute))
			}
		}
		return dst
	}

	// Backward, in reverse order of the forward pass.
	maskRead := units.Bytes(resid * partition.MaskBytes)
	mlpBwd := append(mlpBwdArr[:0], gr.Pointwise("mlp.residual.bwd", partition.Elementwise, partition.Backward, x, dt, partition.FlopDropout, 1, 1, maskRead, 0))
	if g.moe.Experts > 0 {
		mlpBwd = append(mlpBwd, moeLayer.Backward...)
	} else {
		mlpBwd = g.fp8Cast(mlpBwd, "mlp.fc2.dgrad.cast", gr.Shape(m*s, h), partition.Backward)
		d2, w2 := gr.LinearBackward("mlp.fc2.dgrad", "mlp.fc2.wgrad", ffnOut, wfc2, g.gemmDT)
		mlpBwd = append(mlpBwd, d2, w2, mlpActivation(g, ffn, partition.Backward))
		mlpBwd = g.fp8Cast(mlpBwd, "mlp.fc1.dgrad.cast", ffn, partition.Backward)
		d1, w1 := gr.LinearBackward("mlp.fc1.dgrad", "mlp.fc1.wgrad", xs, wfc1, g.gemmDT)
		mlpBwd = append(mlpBwd, d1, w1)
	}
	mlpBwd = append(mlpBwd, gr.Pointwise("ln2.bwd", partition.Norm, partition.Backward, x, dt, 2*partition.FlopNorm, 2, 1, lnExtra, lnExtra))
	attnBwd := append(attnBwdArr[:0], gr.Pointwise("attn.residual.bwd", partition.Elementwise, partition.Backward, x, dt, partition.FlopDropout, 1, 1, maskRead, 0))
	attnBwd = g.fp8Cast(attnBwd, "attn.proj.dgrad.cast", gr.Shape(m*s, h), partition.Backward)
	d, w := gr.LinearBackward("attn.proj.dgrad", "attn.proj.wgrad", pin, wproj, g.gemmDT)
	attnBwd = append(attnBwd, d, w)
	if g.flash {
		fb := gr.FlashAttentionBackward("attn.flash.bwd", qk, sk, m*sh.kv/t, sh.dv, dt)
		fb.Ring = g.ring()
		attnBwd = append(attnBwd, fb)
		if g.ring() > 1 {
			attnBwd = append(attnBwd, g.ringMerge(partition.Backward, qk))
		}
	} else {
		da, db := gr.BMMBackward("attn.context.dA", "attn.context.dB", sc, vk, dt)
		attnBwd = append(attnBwd, da, db,
			gr.Pointwise("attn.dropout.bwd", partition.Elementwise, partition.Backward, sc, dt, partition.FlopDropout, 1, 1, units.Bytes(core*partition.MaskBytes), 0),
			gr.Pointwise("attn.softmax.bwd", partition.Softmax, partition.Backward, sc, dt, partition.FlopSoftmax, 2, 1, 0, 0))
		da, db = gr.BMMBackward("attn.scores.dA", "attn.scores.dB", qk, kt, dt)
		attnBwd = append(attnBwd, da, db)
	}
	if sh.rope {
		attnBwd = append(attnBwd, gr.Pointwise("attn.rope.bwd", partition.Elementwise, partition.Backward, rotated, dt, partition.FlopRoPE, 1, 1, 0, 0))
	}
	if sh.mla {
		attnBwd = append(attnBwd, mlaBwd...)
	} else {
		attnBwd = g.fp8Cast(attnBwd, "attn.qkv.dgrad.cast", gr.Shape(m*s, sh.qkvWidth(t)), partition.Backward)
		d, w = gr.LinearBackward("attn.qkv.dgrad", "attn.qkv.wgrad", xs, wqkv, g.gemmDT)
		attnBwd = append(attnBwd, d, w)
	}
	attnBwd = append(attnBwd, gr.Pointwise("ln1.bwd", partition.Norm, partition.Backward, x, dt, 2*partition.FlopNorm, 2, 1, lnExtra, lnExtra))

	if g.moe.Experts == 0 {
		ops := make([]partition.Op, 0, 61) // 17 forward, up to 17 recomputed, 28 backward (FP8 casts, CP merges)
		ops = append(append(ops, attn...), mlp...)
		ops = recompute(recompute(ops, attn), mlp)
		ops = append(append(ops, mlpBwd...), attnBwd...)
		markLayer(ops)
		return []partition.Block{{Name: "layer", Repeat: repeat, Ops: ops, Collectives: append(append(g.tpCollectives(), g.cpCollectives()...), g.zeroCollectives()...),
			Params: g.layerP, Workspace: workspace}}
	}
	dense, experts := moeParamsPerGPU(g)
	attnOps := append(recompute(append(make([]partition.Op, 0, 2*len(attn)+len(attnBwd)), attn...), attn), attnBwd...)
	moeOps := append(recompute(append(make([]partition.Op, 0, 2*len(mlp)+len(mlpBwd)), mlp...), mlp), mlpBwd...)
	markLayer(attnOps)
	markLayer(moeOps)
	return []partition.Block{
		{Name: "layer.attn", Repeat: repeat, Ops: attnOps, Collectives: g.attnTPCollectives(), Params: dense, Workspace: workspace},
		{Name: "layer.moe", Repeat: repeat, Ops: moeOps, Collectives: moeLayer.Collectives, Params: experts, Sync: 1},
	}
}

// mlaProjections is multi-head latent attention's projections from the normalised input xs
// (DeepSeek-V2 §2.1.2–2.1.3, Eqs. 9–14): the query latent (x·W^DQ, RMSNorm) and its
// up-projection W^UQ with the rotary part W^QR fused (wq, of the query latent's rows; without a
// query latent one h-row projection), and the key/value latent with the rotary key
// (x·[W^DKV W^KR], RMSNorm on the latent) and its up-projection [W^UK W^UV]. saved is what the
// attn.qkv slot of layerActivations keeps: the input, and each latent twice (the norm's input
// and the up-projection's). It returns the forward ops in order and their backward in backward
// order (the up-projections, the norms, then the down-projections).
func (g geom) mlaProjections(xs, wq tensor.Shape, saved units.Bytes) (fwd, bwd []partition.Op) {
	gr, sh, dt, gdt := g.gr, g.sh, g.dt, g.gemmDT
	rows := g.m * g.s
	norm := func(name string, ph partition.Phase, r int) partition.Op {
		x, gain := gr.Shape(rows, r), units.Bytes(float64(r)*g.sz())
		if ph == partition.Backward {
			return gr.Pointwise(name, partition.Norm, ph, x, dt, 2*partition.FlopNorm, 2, 1, gain, gain)
		}
		op := gr.Pointwise(name, partition.Norm, ph, x, dt, partition.FlopNorm, 1, 1, gain, 0)
		op.Saved = units.Bytes(partition.Elems(x) * g.sz())
		return op
	}
	up := func(name string, r int, w tensor.Shape) (partition.Op, tensor.Shape) {
		x := gr.Shape(rows, r)
		op := gr.MatMul(name, partition.Forward, x, w, gdt)
		op.Saved = units.Bytes(partition.Elems(x) * float64(gdt.Size()))
		return op, x
	}
	latents := units.Bytes(float64(rows)*float64(sh.qr+sh.kvr)) * units.Bytes(g.sz()+float64(gdt.Size()))
	var bwdArr [12]partition.Op
	bwd = bwdArr[:0]
	wkvDown, wkvUp := gr.Shape(sh.h, sh.kvr+sh.dr), gr.Shape(sh.kvr, sh.a*(sh.dh+sh.dv)/g.t)
	kvDown := gr.MatMul("attn.kv_down", partition.Forward, xs, wkvDown, gdt)
	kvUp, kvIn := up("attn.kv_up", sh.kvr, wkvUp)
	if sh.qr > 0 {
		wqDown := gr.Shape(sh.h, sh.qr)
		qDown := gr.MatMul("attn.q_down", partition.Forward, xs, wqDown, gdt)
		qDown.Saved = saved - latents
		qUp, qIn := up("attn.q_up", sh.qr, wq)
		fwd = []partition.Op{qDown, norm("attn.q_norm", partition.Forward, sh.qr), qUp}
		d, w := gr.LinearBackward("attn.q_up.dgrad", "attn.q_up.wgrad", qIn, wq, gdt)
		d2, w2 := gr.LinearBackward("attn.q_down.dgrad", "attn.q_down.wgrad", xs, wqDown, gdt)
		bwd = append(bwd, d, w, norm("attn.q_norm.bwd", partition.Backward, sh.qr), d2, w2)
	} else {
		q := gr.MatMul("attn.q", partition.Forward, xs, wq, gdt)
		q.Saved = saved - latents
		fwd = []partition.Op{q}
		d, w := gr.LinearBackward("attn.q.dgrad", "attn.q.wgrad", xs, wq, gdt)
		bwd = append(bwd, d, w)
	}
	fwd = append(fwd, kvDown, norm("attn.kv_norm", partition.Forward, sh.kvr), kvUp)
	d, w := gr.LinearBackward("attn.kv_up.dgrad", "attn.kv_up.wgrad", kvIn, wkvUp, gdt)
	d2, w2 := gr.LinearBackward("attn.kv_down.dgrad", "attn.kv_down.wgrad", xs, wkvDown, gdt)
	bwd = append(bwd, d, w, norm("attn.kv_norm.bwd", partition.Backward, sh.kvr), d2, w2)
	return fwd, bwd
}

// mlpActivation is the dense MLP's activation over fc1's output x (partition.MLPActivation).
func mlpActivation(g geom, x tensor.Shape, ph partition.Phase) partition.Op {
	return g.gr.MLPActivation(&mlpActivationNames, g.sh.act, ph, x, g.dt)
}

var mlpActivationNames = partition.ActivationNames{GeLU: "mlp.gelu", GeLUBwd: "mlp.gelu.bwd", SwiGLU: "mlp.swiglu", SwiGLUBwd: "mlp.swiglu.bwd",
	SquaredReLU: "mlp.squared_relu", SquaredReLUBwd: "mlp.squared_relu.bwd"}

// fp8Cast appends to ops, under FP8 training, the cast of a linear layer's bf16 input x to FP8
// and its transpose (Transformer Engine's cast_transpose: the amax, the scaled FP8 copy for the
// GEMM and the transposed one for the other backward GEMM; 2 bytes read, 2 written per
// element): forward the inputs of the projection and fc2 (QKV's and fc1's come out of
// LayerNormLinear's fused normalisation), backward the output gradient of every linear layer.
func (g geom) fp8Cast(ops []partition.Op, name string, x tensor.Shape, ph partition.Phase) []partition.Op {
	if g.gemmDT != dtype.FP8 {
		return ops
	}
	return append(ops, g.gr.Pointwise(name, partition.Elementwise, ph, x, g.dt, partition.FlopCast, 1, 1, 0, 0))
}

// markLayer flags a transformer layer's ops as layer ops (partition.Op.InLayer).
func markLayer(ops []partition.Op) {
	for i := range ops {
		ops[i].InLayer = true
	}
}
