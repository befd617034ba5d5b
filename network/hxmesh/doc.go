// Package hxmesh is HammingMesh (Hoefler et al., SC'22) and its relatives on the routed engine
// (network/fabric): Hx2Mesh and Hx4Mesh (2×2 and 4×4 boards), HyperX (1×1 boards: Hx1Mesh) and
// the paper's 2D torus of 2×2 boards (global = torus).
//
// Structure (§III). x × y boards of a × b accelerators joined on the board by PCB traces into a
// 2D mesh (1 ns, Table III). Every accelerator row is joined across the x boards by a row
// network on its W and E edge ports, every column by a column network on its N and S ports:
// one switch when the 2x ports fit its radix k, else a two-level non-blocking fat tree. With
// global = torus the edge ports are cabled to the neighbouring board instead (wrapping).
//
//	switches = per row (leaves + ⌈leaves/2⌉) or ⌈rows / ⌊k/2x⌋⌉ single switches, likewise per column
//	DAC = the row networks' ports (short, along the boards), AoC = the column networks' ports
//	      and every tree's second level; the torus: (a + b)·x·y cables, AoC in Table II
//	diameter = longest row distance + longest column distance of the routing graph
//	bisection = 1/(2a) of the injection for square boards (§III-A), 1/n for an n × n torus
//
// over 4 planes (each uses the E, W, N, S ports of a 16-port accelerator) at $14,280 / $272 /
// $603 (Table II; the torus's AoC pricing and the large HyperX's 3,072 switches per plane are
// the readings that reproduce the table, reference/hammingmesh.md §3).
//
// Graph and routing. The fabric is a product: a row network × a column network, so
//
//	dist(u, t) = H(h_u, h_t) + V(v_u, v_t)
//
// from two small all-pairs tables, and a link lies on a minimal path iff it shortens its own
// dimension's distance: the next hops come from per-dimension tables (fabric.Product), checked
// against the exact search. The board symmetries (translations of leaves, rotations of boards
// within a leaf) let a uniform all-to-all over every accelerator route towards one board's
// accelerators only, and any round that a subgroup of them maps onto itself towards one
// destination per orbit of the subgroup (the symmetry names its elements: fabric.Symmetry.Factors;
// with row and column fat trees of several leaves, rotations within a leaf's block fix the leaf
// and its uplinks, so the subgroups move whole blocks only: fabric's Symmetry.fixers);
// any other round routes one flow per type (source's place on its board, destination moved
// with it) and, where it repeats under a board translation (GPT-3's stride-96 rings: every
// three board rows), one period. Placement: board (fill a board, then boards row-major, as the SST motifs)
// or rows (row-major over the accelerator grid).
//
// One simulated plane has 4 ports of 400 Gb/s (1.6 Tb/s per accelerator, §III-D); sim_planes = 4
// models the four-plane reading that Table II's HyperX bandwidth needs. Algorithms: ring,
// bidirectional ring, hierarchical ring (board, board row, all), RHD, tree, linear all-to-all,
// and the grid algorithms of §IV: "rings" on two edge-disjoint Hamiltonian cycles of the group's
// grid (refused with the reason when Bae et al.'s condition fails), "torus" (§IV-A: two transposed
// halves, the default torus variant) and "torus-sst" (the SST motif's sequence).
//
// Reproduced (internal/repro): Table II's costs, diameters, global and all-reduce bandwidth and
// savings; §V-B's GPT-3, MoE, ResNet-152, DLRM and CosmoFlow runtimes with the paper's order, and
// a hand-counted busiest link of GPT-3's stride-96 rings on the torus. Deviations (MoE on the
// large torus +18%, CosmoFlow's torus 2.7% against 4.4%) are documented there.
package hxmesh
