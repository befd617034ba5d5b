// Package ramp models RAMP (Ottino, Benjamin, Zervas): a flat, single-hop, all-to-all optical
// circuit-switched network of x communication groups × J racks × Λ nodes (N = Λ·J·x; 65,536 at
// Λ = 64, x = J = 32), each node with x transceiver groups of b transceivers at B (12.8 Tb/s at
// B = 400 Gb/s), and its RAMP-x collectives.
//
// RAMP-x (§5–6, Tables 5–8): a group of p nodes is factored into four subgroup sizes
// n_1 ≤ x, n_2 ≤ x, n_3 ≤ J, n_4 ≤ Λ/x; in step i every node exchanges with its n_i − 1
// subgroup peers at once, contention-free. Per step
//
//	H2H = propagation (1.3 µs) + in-out (100 ns), which hides the < 1 ns circuit reconfiguration
//	      (RAMP §3.1, §7.5; it would count only if longer than the in-out time)
//	H2T = ⌈bytes per transceiver / (B·20 ns)⌉ slots × 20 ns
//	      with t(n_i) = max(1, ⌊x/(n_i−1)⌋) transceiver groups per peer (Eqs. 2–5 as corrected in
//	      reference/ramp.md §2.7; trx_rule=paper keeps Eq. 3 as printed)
//	compute = the n_i-to-1 reduction of the step's chunk on the node's GPU (roofline)
//
// Reduce-scatter sends S/(n_1⋯n_i) per peer in step i, all-gather the same in reverse, all-reduce
// both (≤ 8 steps); all-to-all sends S/n_i per peer in each of the 4 steps; broadcast is the
// pipelined multicast tree of Eq. (1) with β inside the square root. Ring and recursive
// halving/doubling at full node capacity (§6.3.1) are also available; "best" takes the fastest.
//
// Scale is bounded by the optical power budget (§4.2, Fig. 6): the weakest point after the subnet
// must stay ≥ −20 dBm and the receiver ≥ −15 dBm; a configuration that fails is infeasible. Cost
// (Table 3) and power (Table 4) models are in economics.go.
package ramp
