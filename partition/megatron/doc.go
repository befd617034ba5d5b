// Package megatron partitions a Megatron-LM decoder-only transformer onto GPUs with tensor,
// sequence, pipeline and data parallelism, activation recomputation and mixed precision. The
// layer is GPT-3's by default (d_ff = 4h, multi-head attention, GeLU, LayerNorm, biases, learned
// position embeddings, tied input/output embeddings); Arch makes it Llama's and its kin's:
//
//	kv_heads    grouped-query attention: Q has a·dh columns, K and V kv·dh each; the QKV GEMM is
//	            h × (a + 2kv)·dh/t per GPU (Megatron-Core splits the kv heads over TP, so t | kv)
//	head_dim    dh independent of h (the projection is (a·dh/t) × h)
//	ffn_hidden  f; mlp swiglu fuses gate and up into one column-parallel h × 2f/t GEMM, then
//	            Swish(gate) ⊙ up and the row-parallel (f/t) × h down projection (Shazeer 2020);
//	            mlp squared-relu keeps GeLU's two matrices with relu(x)² between them (Primer)
//	norm        rmsnorm keeps γ only (h parameters instead of 2h)
//	no_bias     no linear-layer biases;  positions rope: no position table, an elementwise
//	            rotation of Q and K (3 operations per element) forward and backward
//
// so that, forward, per layer: QKV 2bsh(a + 2kv)dh/t + scores and context 4bs²·a·dh/t +
// projection 2bs·a·dh·h/t + MLP 2bsh·f·(3 with SwiGLU, 2 with GeLU)/t; the GPT-3 forms below are
// the zero Arch. Parameters per layer: h(a + 2kv)dh + a·dh·h + (3 or 2)·h·f + the biases + two
// norms (Llama 3 8B: 218,112,000 per layer, 8,030,261,248 in all; arch_test.go).
//
// Context parallelism (cp, Megatron-Core with Transformer Engine's p2p ring): each of cp ranks
// holds s/cp tokens of every sequence (chunks i and 2cp − 1 − i of 2cp, so causal attention
// costs every rank the same), so every per-GPU count above takes s/cp, attention's s/cp queries
// against all s keys (FLOPs and the s² core /cp); per layer the ring sends the rank's K and V,
// 2b(s/cp)·kv·dh/t elements, cp − 1 times forward and 2(cp − 1) backward, behind the attention
// kernel; gradients are reduced over the DP·cp ranks that hold the same weights. With
// FlashAttention the kernel runs as the ring's cp steps (Op.Ring) and the ring's merges are two
// memory-bound ops (attn.cp.merge, forward and recomputed: (3cp + 1)·O + 2·KV bytes; backward
// (3cp − 1)·O + (2.5(cp + 1) + 2)·KV; O the rank's attention output, KV its keys and values).
//
// ZeRO (Rajbhandari et al. 2020 §5.2; Config.ZeRO): stage 1 is the distributed optimizer; from
// stage 2 each GPU keeps 1/(DP·cp) of the gradients, which every micro-batch's backward pass
// reduce-scatters layer by layer behind fc1's weight-gradient GEMM; stage 3 (FSDP) keeps
// 1/(DP·cp) of the parameters plus two layers gathered, all-gathered before each layer's
// forward, recomputation and backward pass. Stages 2 and 3 need PP = 1 (DeepSpeed).
//
// Per layer and micro-batch of b sequences of s tokens, hidden h, a heads, tensor parallelism t
// (Shoeybi et al. 2019; Narayanan et al. 2021 §5.1), forward GEMM FLOP per GPU:
//
//	QKV 6bsh²/t + scores 2bs²h/t + context 2bs²h/t + projection 2bsh²/t + fc1 8bsh²/t + fc2 8bsh²/t
//	  = (24bsh² + 4bs²h)/t;  backward = 2 × forward;  full recomputation adds one forward,
//	  selective recomputation the attention core (QKᵀ and attention over V, 4bs²h/t)
//
// Parameters per GPU per layer: 12h²/t + 7h/t + 6h (column-parallel QKV/fc1 with their biases,
// row-parallel projection/fc2 with replicated biases, replicated LayerNorms); this rule and
// "MP = smallest power of two keeping n_layer·(12h²/t + 7h/t + 6h) ≤ 1.6e9" reproduce RAMP Table 9.
//
// Collectives per layer per micro-batch, S = b·s·h·2 bytes (nccl-tests size) over the TP group:
//
//	no SP   2 all-reduces forward (g), 2 backward (f); 2 more when the forward is recomputed
//	SP      2 all-gathers + 2 reduce-scatters forward, the same backward, plus 2 all-gathers that
//	        re-gather the column-parallel inputs behind their data-gradient GEMMs (Korthikanti
//	        et al. 2022 §4.2.2)
//
// plus the vocabulary-parallel embedding (all-reduce / reduce-scatter) and cross-entropy (three
// fp32 all-reduces of one value per token); per iteration the data-parallel gradient all-reduce of
// every parameter the GPU holds (fp16/bf16, Megatron-Core buckets of max(4e7, 1e6·DP) parameters,
// overlapped with the last micro-batch's backward pass unless disabled), the tied-embedding
// all-reduce between the first and last pipeline stage, and pipeline send/receives of the
// activation (b·s·h·2 bytes, /t with SP) twice per micro-batch and model chunk.
//
// The cross-entropy over the b·s·V/t logits on a GPU runs as Megatron's unfused default
// (cross_entropy_loss_fusion off): one PyTorch kernel per step, (z + 20) B read and 16 B written
// per logit forward, 8 B read and 4 + z written backward with z-byte logits (52 B in bf16;
// crossEntropyTraffic, counted from megatron/core/tensor_parallel/cross_entropy.py @00611e6e and
// checked against Liger-Kernel's H100 measurement of it).
//
// Memory per GPU: weights and gradients at 2 bytes (4 in fp32), optimizer state 12 bytes per
// parameter for mixed-precision Adam (ZeRO §3.1), activations per Korthikanti et al. 2022
// (sbh(10 + 24/t + 5as/(ht)) per layer without SP, sbh(34/t + 5as/(ht)) with it, minus the
// attention core with selective recomputation, 2sbh with full recomputation plus one layer's
// workspace) times the micro-batches in flight under 1F1B (p − i on stage i, × (1 + (p−1)/(pv))
// interleaved). A plan over the GPU's capacity is infeasible (exit code 3).
//
// The software stack (Stack) changes what overlaps and what is sent, not the work:
//
//	NoDPOverlap      gradient buckets reduced after the backward pass instead of during it
//	AsyncTP          each column-parallel linear's backward TP collective behind its weight-gradient
//	                 GEMM (layers.py LinearWithGradAccumulationAndAsyncCommunication)
//	PPScatterGather  with t > 1 and no SP, each rank sends S_p/t of the activation S_p = b·s·h·2
//	                 and the receiver all-gathers S_p over the TP group (SC'21 §4.1)
//	P2POverlap       interleaved schedule only: sends and receives behind compute (overlap_p2p_comm)
//	TPCommOverlap    with SP: each all-gather / reduce-scatter behind the GEMM it feeds or drains
//	                 (Megatron-Core tp_comm_overlap, TE userbuffers): exposed max(0, T_c − T_gemm)
//	OffloadLayers    k of the L layers (PP = 1, no recomputation): the stage's first k layers'
//	                 activations leave the footprint, (L − k)·T kept (TE cpu_offload.py
//	                 @00382b96); Stage.Offload = k, the copies priced by the estimator
//	DistOptimizer    gradients reduce-scattered (same bytes as the all-reduce, nccl-tests size),
//	                 the step updates 1/DP of the parameters (1/(DP/EP) of the experts), the
//	                 parameters all-gathered in the same buckets, optimizer state 12/DP bytes per
//	                 parameter (Megatron-LM dist_optimizer.md; ZeRO stage 1 P_os)
//	GradAllReduce    with DistOptimizer, the gradients all-reduced (2(n−1)/n of the buffer on the
//	                 wire instead of (n−1)/n) before the shard's step (DeepSpeed BF16_Optimizer)
//	FP32GradReduce   bf16 training keeps and reduces 4-byte gradients: the DP buffer is 4·P bytes
//	                 (the parameter all-gather stays 2·P), gradient memory 4 bytes per parameter
//	PPPartition      uniform: L/p layers per stage; embedding-slot: the embedding and the LM head
//	                 each count as a layer, stage 0 holds (L+2)/p − 1 layers, the last (L+2)/p − 1,
//	                 the others (L+2)/p (DeepSpeed partition_method "type:transformer|embedding").
//	                 The pipeline runs at the pace of its slowest stage (estimator)
//
// Two settings change the memory traffic of the gradients' way to the optimizer (bytes per
// parameter counted from each stack's code in partition.GradAccumOp and partition.OptimizerOps):
//
//	GradAccum        gemm: accumulated inside the weight-gradient GEMM (gradient_accumulation_
//	                 fusion); add: main_grad.add_(grad) after every micro-batch's backward, 10 B
//	                 (bf16 into fp32); cast-add: DeepSpeed BF16_Optimizer.update_hp_grads, 18 B.
//	                 The pass is a block of the stage (its backward runs after the layers')
//	OptimizerStep    fused: 28 B per updated parameter (ZeRO §3.1); megatron: 46 B per updated +
//	                 4 per held parameter (bf16, fp32 gradients; grad copy, unscale in fp16, norm,
//	                 clip, FusedAdam, master → model copy, buffer zeroing); deepspeed: 34 B per
//	                 updated + 16 per held parameter (BF16_Optimizer)
//
// Attention is the attention kernel. standard: the scores and context batched GEMMs, the fused
// softmax and dropout, with the s² probabilities and mask in memory (Korthikanti et al. Table 2's
// 5as/h term). flash: one causal FlashAttention kernel per pass (Dao 2023, FlashAttention-2),
// an op of kind partition.FusedAttention whose FLOP keeps the Megatron convention (forward
// 4·b·a·s²·d/t, backward twice), so model FLOPs and MFU do not change; the kernel executes ½ of it
// forward (causal) and 5/8 backward (2.5 × its forward: it recomputes the scores), at the GPU's
// measured efficiency (configs/gemm.json: A100 73% / 63%, FlashAttention-2 §4.1; H100 75% / 61%,
// FlashAttention-3). It keeps Q, K, V and the fp32 row log-sum-exp, 4·a·s·b/t bytes, instead of
// the core; selective recomputation re-runs the kernel.
//
// Auto mode (RAMP §7.2.1) turns a scaling-law target into a configuration: MP as above, heads
// raised to a multiple of MP, the local batch from Table 9 or from memory, DP = 2^round(log2(
// B_crit/b)) capped by the GPU budget, the micro-batch as the largest divisor of the local batch
// that fits (gradient accumulation over the rest), steps from the law at the resulting global
// batch. The vocabulary is padded to a multiple of 128·t as Megatron-LM does.
//
// Building is on the hot path of sweeps and searches: BuildChecked checks the closed-form
// footprint before it builds (a layout that does not fit costs no plan; the middle stages'
// footprints fall with the index, so those over capacity are found by bisection), the layer
// blocks of a geometry are built once (cache.go), the middle stages share one stage's blocks and
// ops, and BuildCheckedInto builds into a Scratch whose slices the next build reuses.
//
// References: Shoeybi et al. 2019 (Megatron-LM), Narayanan et al. 2021 (PTD-P, interleaved 1F1B,
// FLOP formula), Korthikanti et al. 2022 (sequence parallelism, selective recomputation, memory),
// Rajbhandari et al. 2020 (ZeRO memory accounting), RAMP (Ottino et al.) §7.2.1 and Table 9.
package megatron
