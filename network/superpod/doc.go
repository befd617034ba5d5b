// Package superpod models the RAMP paper's electrical baseline (§7.5): a fat tree after the NVIDIA
// DGX-A100 SuperPod scaled to 65,536 GPUs with four tiers — NVSwitch inside a DGX (8 GPUs at
// node_tbps, default 2.4 Tb/s per GPU), then InfiniBand leaf, spine and core switches (QM8790,
// 350 ns) at node_tbps/oversubscription per GPU (default 1:12, i.e. 200 Gb/s; 1 for the paper's
// bandwidth-matched studies). The IB tree itself is non-blocking and rail-optimised: every GPU has
// its own NIC, so parallel rings do not share links.
//
// A job's ranks fill DGX nodes, then leaves, then spine groups (network/topology); a collective's
// group becomes one level per tier. Strategies (network/collective): ring, hierarchical ring,
// 2D-torus, recursive halving/doubling and the binary tree; "best" picks the cheapest per
// collective and size, and the algorithm is reported. All-to-all uses the ring's pairwise exchange
// unless extended_alltoall is set (then also Bruck and per-level phases): RAMP §7.6 compares
// ring-based strategies, the reading that reproduces Fig. 18's 171×.
//
// The same fat tree as a routed graph (Fabric: an NVSwitch per DGX, an InfiniBand port per GPU,
// leaf → spine → core bundles) carries raw traffic (collective --pattern) and, with routed=true,
// every collective flow by flow: that adds the mesh (every GPU to every other at once: 7 flows on
// a GPU's NVLink, p − 8 on its InfiniBand port), SiPAC Table II's hierarchical ring (k = a DGX)
// and the linear all-to-all, which the tiers cannot price. The tiers are exact for the others.
package superpod
