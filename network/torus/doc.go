// Package torus models the RAMP paper's 2D-torus baseline (§7.5): dim_x × dim_y nodes (128 × 512),
// each with node_tbps (2.4 Tb/s) split over its ports (±x, ±y: 600 Gb/s each by default), and a
// per-hop latency of the in-out time plus the dimension's worst-case propagation (156 ns along x,
// 520 ns along y). Jobs fill x first, then y. Strategies: a ring (snake through the torus), the
// bidirectional ring (both directions of every dimension at once), and the 2D-torus algorithm
// (one ring per dimension). Messages between non-neighbours travel several hops and share links
// (all-to-all is bisection-limited).
//
// routed=true prices every collective flow by flow on the torus graph (Fabric: closed-form
// distances, minimal routes split evenly, the translations as symmetry; a path of h hops costs
// h·(io + prop), as h level hops do). It adds what levels cannot see: the mesh (uniform all-to-all:
// an x link carries Y·X²/8 flows, a y link X·Y²/8), SiPAC Table II's hierarchical ring with
// k = dim_x, and the linear all-to-all; the ring then runs in snake (mixed-radix Gray) order,
// every neighbour one hop away as the levels assume. Raw traffic (collective --pattern) is
// routed on the same graph.
package torus
