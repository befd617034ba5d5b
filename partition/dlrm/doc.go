// Package dlrm partitions the Deep Learning Recommendation Model (Naumov et al. 2019) in three
// dimensions, as the RAMP paper does (§7.2.2, after Mudigere et al. 2022): embedding tables
// model-parallel, table-wise first and column-wise when there are more GPUs than tables, and
// the bottom and top MLPs data-parallel.
//
// Model: T tables of R rows × D columns (one-hot or pooled multi-hot lookups), a bottom MLP on
// the dense features ending at D, a dot interaction over the T + 1 vectors (T(T+1)/2 pairwise
// products concatenated with the bottom output) and a top MLP ending in one logit.
//
// Sharding (Config.Shard): with G ≤ T GPUs each takes T/G whole tables; with G > T each table is
// cut into G/T column shards of D·T/G columns (RAMP Table 10: #GPUs = #Tables × D/D_part). A GPU
// holds R × (its columns) parameters, updated in place by sparse SGD (no gradient buffer or
// optimizer state for them).
//
// Per iteration and GPU:
//
//	embedding      look up and pool its shard for the samples it serves; backward scatters the
//	               pooled gradients into the rows (sparse SGD, fused)
//	all-to-all     forward: the pooled shard embeddings go to the GPUs that run the samples'
//	               MLPs; backward: their gradients return. Size per GPU (nccl-tests send buffer):
//	                 shard  B_global × columns held × dtype (the default; what the lookups
//	                        produce, conserved across the exchange)
//	                 local  b × T × D × dtype (what a GPU's MLP batch b needs)
//	               (reference/ramp.md §6.4 [AMB]: RAMP gives no sizes)
//	MLPs           bottom, interaction (a batched GEMM), top, on the MLP batch b per GPU
//	all-reduce     the MLP gradients over all G GPUs, in DDP buckets overlapping the backward pass
//
// The MLP batch b defaults to RAMP Table 10's "batch size per GPU" for its presets; otherwise it
// fills memory up to B_global/T (the rule four of the table's five rows follow). RAMP's rows are
// not conservation-consistent: b·G ≠ B_global (reference/ramp.md §6.3); ddlest keeps both numbers
// as the table gives them and counts samples/s by the global batch.
//
// Presets: RAMP Table 10's five rows (ramp-256 … ramp-65536) and the HammingMesh DLRM
// (hammingmesh: 1 MiB all-to-all per rank, 2.91 MB + 0.198 MB MLP all-reduces, 128 GPUs).
package dlrm
