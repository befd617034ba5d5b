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
// The HammingMesh GPT-3 MoE splits GPT-3's FF layer into 16 experts (H_e = 4h/16, one expert
// per GPU, k = 1): parameters stay those of the dense FF (reference/hammingmesh.md §6.5).
package moe
