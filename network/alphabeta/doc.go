// Package alphabeta is a flat α–β network: each GPU injects at bandwidth B (each direction) with a
// per-step latency α, and every collective runs the ring schedule of network/collective on that
// single tier:
//
//	all-reduce      2(p−1)·α + 2(p−1)/p · S/B  (+ p−1 two-to-one reductions of S/p)
//	reduce-scatter  (p−1)·α + (p−1)/p · S/B    (+ reductions)
//	all-gather      (p−1)·α + (p−1)/p · S/B
//	all-to-all      (p−1)·α + (p−1)/p · S/B    (pairwise exchange)
//	broadcast       (k+p−2)·(α + S/(k·B)), k optimal (pipelined chain)
//
// Parameters: bandwidth_gbit_per_s (default 200, the SuperPod's per-GPU InfiniBand rate, RAMP
// §7.5) and latency_ns (default 1370, RAMP §7.5's leaf–spine–leaf path including the 100 ns node
// in-out latency at both ends). It stands in for a real topology until one is chosen, and is the
// baseline the topology models reduce to on a single tier.
package alphabeta
