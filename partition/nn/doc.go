// Package nn describes feed-forward networks layer by layer (per-sample shapes, parameters and
// multiply-accumulates) and turns them into per-GPU op graphs for data-parallel training.
//
// A Net is built with a Builder that tracks the current shape: Conv (1D/2D/3D, grouped,
// depthwise), Linear, BN, LN, Act, Dropout, pooling, Flatten, residual Add, Attention and
// Embedding. For each layer:
//
//	Conv          MACs = C_out · (C_in/groups) · k^d · |output map|; params = weights (+ bias)
//	Linear        MACs = in · out · (tokens); params = in·out (+ out)
//	Attention     2 · T² · F MACs per sample (QKᵀ and probabilities·V)
//
// Blocks turns each layer into ops for a micro-batch of m samples: a GEMM (implicit GEMM for
// convolutions, op kind partition.Convolution) of 2·MACs·m FLOP forward, and data-gradient plus
// weight-gradient GEMMs of the same size backward (the first layer's data gradient is skipped);
// normalisations, activations, pooling, residual adds and dropout are memory-bound kernels whose
// bytes are the tensors they read and write. Saved activations are what PyTorch autograd keeps:
// GEMM and normalisation inputs, activation outputs, max-pool inputs, dropout masks.
//
// DataParallel replicates the network on every GPU: the local batch runs in micro-batches, and
// the gradients (parameters × dtype size) are all-reduced over all GPUs in buckets that overlap
// the last micro-batch's backward pass — PyTorch DDP's 25 MiB buckets by default, or a number of
// equal groups (the HammingMesh ResNet-152 model uses 10). Memory is weights, gradients and
// optimizer state (partition.StaticMemory) plus the saved activations of one micro-batch.
//
// References: He et al. 2016 (ResNet); PyTorch DistributedDataParallel (bucket_cap_mb = 25);
// Hoefler et al., HammingMesh, SC'22 §V-B2 (10 gradient groups).
package nn
