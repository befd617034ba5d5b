// Package estimator combines a partition.Plan, a compute profile and a network model into the
// time of one training iteration, its breakdown, and the time to accuracy. It holds no workload
// or network formula: ops are priced by the profile, collectives by the network model, and this
// package only schedules them.
//
// Per pipeline stage s and micro-batch (blocks × repetitions):
//
//	F_s, R_s, B_s  forward, recomputation and backward compute (Σ op times)
//	C_s            collectives on the critical path (tensor/sequence, expert, embedding and
//	               dense-layer model parallel), plus the part of "behind-op" collectives (SP
//	               re-gathers, halo exchanges) longer than the op they overlap: collectives behind
//	               the same op of the same phase (a recomputed op is its own) share it, their
//	               summed time beyond it is exposed
//	period_s       F_s + R_s + B_s + C_s; the slowest stage sets the pace: T = max_s period_s
//	               (stages with the same blocks are priced once)
//
// One iteration with M micro-batches, p stages and v interleaved chunks (1F1B, Narayanan et al.
// 2021 §2.2):
//
//	pipeline       M · T
//	bubble         (p − 1) · max_s chunk_s: the pipeline fills and drains one model chunk at a
//	               time, at the pace of the heaviest; chunk_s = (period_s − W_s)/v + W_s, W_s the
//	               stage's blocks that do not split over the v chunks (repetitions not a multiple
//	               of v: the embedding on stage 0's first chunk, the LM head on the last stage's
//	               last chunk). Equal chunks give (p − 1)/v · T; v = 1 gives (p − 1) · T
//	p2p            (count + 2(p − 1)) · t_p2p: every send/receive of a stage (2·v·M) is blocking,
//	               plus the fill and drain hops; with P2POverlap (interleaved schedule,
//	               Megatron-Core overlap_p2p_comm) only the 2(p − 1) hops are exposed. A
//	               scatter/gather pipeline (P2PGather) adds an all-gather over the tensor-parallel
//	               group after every receive: (count + 2(p − 1)) · t_gather
//	DP gradients   bucket simulation during the last micro-batch's backward pass: block
//	               repetitions finish in reverse order, their gradients fill the buckets of the
//	               GradSync their block names, buckets of all GradSyncs are all-reduced one after
//	               another on one communication stream; what ends after the backward pass is
//	               exposed (all of it without overlap). A stage
//	               i > 0 ends its backward pass i backward steps before stage 0, which hides that
//	               much of its tail.
//	contention     on a network whose collectives share links (network.Overlapping: the routed
//	               fabrics), the buckets share them, from the first bucket's issue t₀ on, with the
//	               backward and recomputation collectives of the block repetitions still to run
//	               and the pipeline's backward sends (one per chunk). The window's traffic cannot
//	               drain faster than its busiest shared link allows, so the gradients end at
//	               max(stream end, t₀ + max_i n_i·H2T_i' + Σ_i n_i·(Total_i − H2T_i)) over the
//	               bucket sizes i (n_i calls, H2T_i' from PriceConcurrent). The backward pass
//	               keeps its time; the delay is charged to the gradients. On disjoint links,
//	               or with idle link time between buckets, nothing changes.
//	param gather   distributed optimizer (ParamGathers): the updated parameters' all-gather, in
//	               the gradient buckets, after the optimizer step; exposed whole, or overlapped
//	               with the next iteration's forward pass: max(first bucket, Σ buckets − F_s)
//	               (charged with the DP gradients)
//	offload wait   activation offloading (partition.Stage.Offload = k of the stage's L layers;
//	               Transformer Engine cpu_offload.py @00382b96, the schedule of
//	               _default_offload_sync_init): layer i < k is copied to host memory from the end
//	               of its forward pass and must be there before layer L−k+i's forward pass
//	               starts; it is copied back from the start of layer L−1−k+i's backward pass and
//	               must be back before layer i's. The copies take Σ op.Saved of the layer over the
//	               profile's host link (profile.HostCopier) one after another on one stream; the
//	               compute stream's waits, per micro-batch, are part of compute [AMB: the copies
//	               may start as each saved tensor is ready, inside the layer; the layer's end is
//	               their latest start]
//	per-iteration  collectives after the backward pass (tied-embedding gradients between the
//	               first and last stage), exposed, counted with the pipeline communication
//	optimizer      the stage's update ops
//	comm kernels   a communication kernel holds k_c of the GPU's N SMs while it runs (NCCL: one
//	               CTA per channel, never sharing its SM with compute kernels, sjeaugey in
//	               NVIDIA/nccl issue #689; network.Cost.SMs, or the partition's Driver), so compute
//	               overlapped with it runs on N − k_c: over the critical stage's collectives,
//	               lost = Σ_c (time_c − exposed_c) · k_c / N, part of compute. Charged only when
//	               the profile prices compute from the hardware and knows N (profile.SMCounter; a
//	               measured profile ran beside its communication). First order [D]: the lost
//	               compute does not delay the collectives it overlaps, and a GEMM's wave
//	               quantisation on N − k_c SMs is not repriced
//
//	total = compute (M·(F+R+B+offload wait) + optimizer + comm kernels) + exposed communication
//	        (M·C + p2p + DP + per-iteration) + bubble;   comm_fraction = exposed communication / total
//
// Throughput: samples/s = global batch / total; tokens/s = samples/s · sequence; hardware
// TFLOP/s per GPU counts every executed GEMM including recomputation (Megatron-LM convention,
// Narayanan et al. 2021 §5.1), model TFLOP/s per GPU counts the model's GEMMs once, and
// MFU = model FLOP/s per GPU / dense peak (Chowdhery et al. 2022 App. B). Time to accuracy is
// steps × total.
package estimator
