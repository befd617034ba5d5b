// Package nccl prices collectives as NCCL runs them: a per-call software latency, the choice of
// algorithm (ring, or tree for all-reduce) and protocol (LL, LL128, Simple) that minimises NCCL's
// own cost model, and the bandwidth each protocol reaches on NVLink and on the network. It is an
// option of the electrical networks whose nodes are DGX-like (network/superpod, network/alphabeta):
// the seeds' papers price their own α–β schedules, so it is off unless a cluster preset or the user
// sets it (nccl=ampere|hopper|volta).
//
// The model (NCCL 2.20.3, src/graph/tuning.cc, NVIDIA/nccl commit b6475625): for a communicator of
// n ranks on N nodes (p = n/N per node), algorithm a and protocol q, NCCL estimates
//
//	t̂(S) = L(a, q) + S / A(a, q)
//
// where S is the nccl-tests size and A the algorithm bandwidth, and runs the (a, q) of least t̂.
// ddlest makes the same choice, and charges it
//
//	t(S) = L₀(a, q) + max(L(a, q) − L₀(a, q), S / A(a, q))
//
// with L₀ the per-call base latency: a step's latency is hidden behind the transfer of the chunks
// already in flight once the message fills the pipeline (NCCL keeps several chunks in flight per
// step), so large messages run at the protocol's bandwidth plus one call's latency, small ones pay
// NCCL's whole latency. On nccl-tests issue #119 (3 × 8 A100, 4 HDR NICs per node) the additive
// form is 12–19% slow from 23 MB to 133 MB while this one is within 7% (configs/measured.json, ddlest validate --measured). The
// ring's latency is
//
//	L = base(a, q) + (s − s_net)·max(hw_nvlink(q), o_net) + s_net·hw_net(q)
//
// with s = 2(n−1) steps for all-reduce (n−1 for reduce-scatter and all-gather), s_net = 2N (N−1) of
// them crossing nodes when N > 1, and o_net the network post overhead (1 µs on Intel hosts, 2 µs on
// AMD, tripled for Simple) that each step pays once the job spans nodes. The tree's (all-reduce
// only) is base + 2·((p−1)·hw_nvlink + ⌊log2 N⌋·hw_net). A Simple ring all-reduce across nodes
// multiplies its latency by 1.4 (1.9 before Ampere), NCCL's "plateau effect of ring" (NCCL applies
// it once every rank's share of a channel exceeds 64 B; the channel count comes from NCCL's
// topology search, and below a few tens of kB Simple is never chosen, so ddlest always applies it).
//
// NVLS. On Hopper in one node NCCL runs all-reduce on NVLink SHARP by default: 23 µs (hwLat
// NVLink NVLS) and ≈275 GB/s of algorithm bandwidth on 8 H100s (sjeaugey, nccl-tests #212), taken
// as 275/450 of the GPU's NVLink rate; across nodes (NVLS tree) it is not modelled.
//
// SMs. Every channel runs one CTA on an SM of its own ("NCCL CTAs won't share an SM with compute
// kernels", sjeaugey, NVIDIA/nccl issue #689), so a call holds as many SMs as it has channels
// (network.Cost.SMs; the estimator charges them to the compute it overlaps). The counts are
// NCCL's INFO lines on 8-H100 nodes (aws-samples/aws-do-eks nccl-test README @701c554a): rings
// and trees 24 in one node and 16 across nodes, NVLS 16, point-to-point 32 in one node, 16 for an
// all-to-all and 2 per peer for one send/receive across nodes. Volta and Ampere are not measured:
// their calls hold no SMs in the model.
//
// Bandwidth. B is the bus bandwidth of the Simple ring: one node, the GPU's NVLink rate times
// NCCL's per-link model of NVLink (20 GB/s of 25 on Volta and Ampere, 20.6 on Hopper: topo.h
// SM80_NVLINK_BW, SM90_NVLINK_BW); across nodes, the smaller of that and p NICs at their
// achievable rate (nccl_nic_efficiency: 24 GB/s per 200 Gb/s NIC and 48 per 400 Gb/s, NCCL's
// maintainers in nccl-tests issues #119 and #319). The protocols scale it as NCCL does: ring LL B/4 (B/3 for one-node
// reduce-scatter and all-gather) capped by llMaxBw, ring LL128 ×0.92 (×0.7 with one rank per
// node), tree ×0.92 and then LL ÷3.8 (capped), LL128 ×7/9 in one node, ×120/128 across. The
// algorithm bandwidth is A = B·n/s for the ring and B/2 for the tree, whose bandwidth NCCL also
// multiplies by its per-size correction factor (64 B … 256 MB).
//
// Operations outside NCCL's tuner are modelled the same way [D]: broadcast and reduce are rings of
// n steps; all-to-all and send/recv are grouped point-to-point calls of the Simple protocol (one
// base + one hardware latency; all-to-all moves (p−1)/n·S over NVLink and (n−p)/n·S over the
// rank's NIC, whichever is slower bounds it). Scatter, gather and barrier fall back to the
// network's own schedules.
//
// Deviations from NCCL, with their reasons: the per-channel bandwidth caps (perChMax…) need the
// channel count NCCL's topology search finds, and bind only with few channels, so they are left
// out; NVLS, CollNet and PAT are not modelled (they need switch-side reduction or recent NCCL);
// broadcast and reduce take NCCL's latency for rings that differ per channel (every step pays the
// hardware latency; NCCL charges one step when all channels share a ring, [AMB]).
//
// References: NVIDIA/nccl src/graph/tuning.cc and src/graph/topo.h (2.20.3); nccl-tests
// doc/PERFORMANCE.md (algorithm and bus bandwidth); NCCL maintainers' statements in nccl-tests
// issues #119, #149, #212 and #319 (effective NVLink and NIC bandwidths).
package nccl
