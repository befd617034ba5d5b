// Package moe describes Mixture-of-Experts feed-forward layers (Shazeer et al. 2017; GShard,
// Lepikhin et al. 2021; Switch Transformer, Fedus et al. 2022) under expert parallelism, for the
// transformer partitioner (partition/megatron) to put in place of the dense MLP.
//
// A layer has E experts, each an FFN h → H_e → h (GeLU), and a router (an h × E GEMM, softmax,
// top-k). Expert parallelism spreads the experts over EP GPUs of the data-parallel group
// (E/EP experts each); every GPU routes its own n tokens. Per micro-batch and GPU:
//
//	capacity        C = ⌈cf · k · n / E⌉ tokens per expert from each source GPU (tokens over
//	                capacity are dropped; cf is the capacity factor)
//	dispatch        all-to-all over the EP group: each GPU sends E · C token vectors
//	                (cf · k · n · h elements, the nccl-tests per-rank buffer), one block of
//	                (E/EP) · C vectors to every member
//	experts         each GPU runs its E/EP experts on the E · C vectors it received:
//	                2 · 2 · (E·C) · h · H_e FLOP forward (two GEMMs), twice that backward
//	combine         the inverse all-to-all, then the gate-weighted sum of the k outputs
//
// Forward: 2 all-to-alls per MoE layer; backward: 2 more (the gradients take the inverse paths)
// — "MoEs perform two alltoalls for FF in both the forward and backward passes" (HammingMesh
// §V-B5). Expert parameters are replicated only over the DP/EP expert-data-parallel ranks, so
// their gradients are all-reduced there; the router's over the whole data-parallel group.
//
// Gated experts (SwiGLU: Mixtral, Qwen-MoE, DeepSeek) have three matrices, gate and up fused
// into one h × 2H_e GEMM. Shared experts (DeepSeekMoE, Dai et al. 2024 §3.2) are one dense FFN
// of SharedHidden every token passes through beside its top-k, replicated over the EP ranks and
// reduced over the data-parallel group. Dense first layers (DeepSeek-V3's
// first_k_dense_replace) are the transformer's business (partition/megatron).
//
// With tensor parallelism t (sequence parallel, as Megatron-Core requires for MoE) every rank
// routes its n/t tokens, so C is taken on n/t; after the dispatch the t ranks of a TP group
// all-gather their received E·C vectors and each runs its 1/t of every local expert's weights
// on all t·E·C of them (2 · 2 · t·E·C · h · H_e/t FLOP forward: the same work as TP 1 on n/t
// tokens), then reduce-scatters the outputs before the combine (Megatron-Core's alltoall token
// dispatcher with expert tensor parallelism of t). The shared experts are a sequence-parallel
// MLP: all-gather the n tokens, reduce-scatter the output.
//
// The HammingMesh GPT-3 MoE splits GPT-3's FF layer into 16 experts (H_e = 4h/16, one expert
// per GPU, k = 1): parameters stay those of the dense FF (reference/hammingmesh.md §6.5).
package moe
