// Package partition defines the Plan: a workload split onto GPUs, as each GPU sees it.
//
// A Plan has one Stage per pipeline stage (all tensor- and data-parallel ranks of a stage do the
// same work). A stage is a list of Blocks in forward order (embedding, a repeated transformer
// layer, head…); each block holds the Ops of one repetition for one micro-batch — forward,
// recomputed and backward kernels, each with gorgonia.org/tensor shapes, dtype, FLOP, bytes read
// and written, and the activation bytes it keeps for the backward pass — and the Collectives it
// issues (kind, nccl-tests size S, group and stride, parallel dimension, phase, count, what it may
// overlap). Per stage there are also the per-iteration ops (optimizer step), per-iteration
// collectives, the gradient reductions (GradSyncs, in buckets: the data-parallel group, and for
// MoE experts or spatially sharded layers a smaller group; each block says which one reduces its
// parameters, or none for sharded embeddings) and the memory footprint (weights, gradients,
// optimizer state, activations against the GPU's capacity). Parallel dimensions: dp, tp, pp,
// ep (experts), mp (embedding tables), sp (spatial).
//
// The optimizer step and the per-micro-batch gradient accumulation are ops too, with the bytes
// their implementation moves (optimizer.go: one fused pass, Megatron-LM's mixed-precision
// optimizer or DeepSpeed's BF16_Optimizer, each counted from its code).
//
// Sub-packages build plans for workloads: partition/megatron (GPT-style transformers, with MoE
// layers from partition/moe), partition/nn (layer-by-layer networks, data parallel; zoo models
// in partition/zoo and partition/resnet), partition/cosmoflow and partition/dlrm. Plans carry no seconds: a
// profile prices the ops, a network model the collectives, and the estimator combines them.
package partition
