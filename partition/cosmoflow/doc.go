// Package cosmoflow partitions the MLPerf HPC CosmoFlow network with hybrid data and spatial
// (operator) parallelism, as in the HammingMesh paper's CosmoFlow job (Hoefler et al., SC'22
// §V-B3: D = 256, O = 4, minibatch 8,192, local batch 32).
//
// Network (MLPerf HPC CosmoFlow reference; Mathuriya et al. 2018): a 128³ × 4 input volume,
// five 3×3×3 convolutions with 32·2^i filters (same padding, bias), each followed by leaky ReLU
// and 2×2×2 max pooling (128³ → 4³ × 512), then fully connected layers 32,768 → 128 → 64 → 4 with
// leaky ReLU between them. 8,907,556 parameters (the paper's "8.9M"): the convolutions hold
// 4,704,608 and the dense layers 4,202,948.
//
// Spatial parallelism: O GPUs split every activation volume over a gy × gx grid of its H and W
// axes (gy·gx = O, most square, gy ≥ gx). A GPU computes its slab, so every per-sample op count
// is 1/O of the whole. Before each convolution it needs a one-voxel halo from its grid
// neighbours (k = 3): per neighbour a face of C·D·w (H neighbours) or C·D·h (W neighbours)
// elements, plus a C·D edge per diagonal neighbour for the stencil's corners, exchanged as send/recv and overlapped with the convolution's interior; the backward
// pass exchanges the faces of the pooled output gradient (one value per pooling window, which
// the neighbour's max-pool backward scatters) behind the data-gradient convolution. The first
// convolution's input halo is read by the data loader with the slab, and it needs no data
// gradient, so it exchanges nothing.
//
// The dense layers are model parallel over the same O GPUs: each layer all-gathers its input
// (B·in elements in total), computes out/O of the outputs, and reduce-scatters the input
// gradient in the backward pass (§V-B3: "allgather to collect the input data … reducescatter"
// backward).
//
// Gradients: the convolution weights are replicated on all D·O GPUs, and each spatial rank holds
// a partial weight gradient over its slab, so they are all-reduced over all D·O GPUs; the dense
// shards are all-reduced over the D data-parallel replicas (stride O). Ranks are numbered with
// the O spatial ranks consecutive (HammingMesh SST motif).
//
// [D] This resolves reference/hammingmesh.md [AMB] 7: the SST motif's six gradient all-reduces
// (1,050,737 + 3,539,456 + 884,992 + 221,312 + 55,360 + 3,488 floats) are the five convolutions
// whole plus the dense layers divided by O = 4 (4,202,948 / 4 = 1,050,737). The motif reduces
// the convolutions over the 256 data-parallel ranks only; ddlest reduces them over all 1,024
// GPUs, which the spatial split requires. The motif's halo sizes are exactly these faces times
// the local batch of 32 (the motif omits the small corner edges; forward 2,097,152, 1,048,576, 524,288, 262,144 floats; backward
// 1,048,576 … 131,072).
package cosmoflow
