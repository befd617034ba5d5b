// Package resnet builds ResNet-50/101/152 (He et al. 2016) layer by layer for data-parallel
// training, and the HammingMesh paper's ResNet-152 job (§V-B2): D ∈ {256, 512, 1024} GPUs,
// minibatch M = 32,768 (M/D per GPU), FP32, gradients of the 60.2M parameters in 10 equal groups,
// each all-reduced as soon as it is ready, overlapped with the rest of the backward pass.
package resnet
