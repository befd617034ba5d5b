// Package sipac is SiPAC (Wu et al., "Peta-Scale Embedded Photonics Architecture for Distributed
// Deep Learning Applications", JLT 2023): a BCube whose packet switches are r-port microring
// wavelength-selective switches, every CU with L optical ports, one into a WSS of each level, and
// SiPCO, the all-reduce that drives all L ports in every step. fabric=bcube is the electronic
// BCube of the paper's baselines on the same graph.
//
// Topology (§III-A; reference/sipac.md §1.2). p = r^L CUs, CU x with base-r digits x_0 … x_(L−1);
// the level-k WSS of x joins the r CUs differing from x in digit k only: L·r^(L−1) WSSs, L·p
// CU–WSS links, L(r−1) one-hop neighbours, diameter L (r = 16: 256 CUs at L = 2, 4,096 at L = 3).
// r and L default to the smallest L ≤ 3 whose r = p^(1/L) is whole and ≤ 32 (§VI-A-1's limits).
// Multi-hop traffic is relayed by the CUs (server-centric, as BCube; the paper does not say,
// reference/sipac.md §7.15). Distances have a closed form (h differing digits: h hops), and the
// digit-wise translations x ↦ x + a (mod r per digit) are the fabric's symmetry: a uniform or
// per-level all-to-all over the whole job is routed towards CU 0 only.
//
// Bandwidth (§III-B). Link B = w·u, or per-CU bandwidth / L (§VI-A-1's normalisation); the WSS
// gives each CU pair of a level its own group of w/r wavelengths, b = B/r (group g of input i
// dropped at output (g + i) mod r). Table II and §III-B disagree (reference/sipac.md §2.5(2)):
// wss_accounting=paper (default) lets a CU's r − 1 flows of one level share its link B, a step
// of x bytes to each peer costing α + (r−1)·x·β, which reproduces Table II; physical gives each
// pair its own link at b, α + r·x·β, r/(r−1) times every bandwidth term. α = hop_us = 1 µs per
// CU→WSS→CU hop; no reconfiguration (the rings are tuned once, §0). fabric=bcube adds switch_ns
// (120 ns, the paper's InfiniBand switch [78]: it gives none for BCube) per switch; the queueing
// that the paper credits for BCube's slowdown is outside an α–β model.
//
// Algorithms (Table II; priced by routing their rounds, collective.Price the one cost function):
//
//	sipco       Algorithm 1, L + 1 steps of (r−1)·S/(rL) per link: (L+1)α + (L+1)(r−1)/(Lr)·Sβ;
//	            L = 1 is the mesh. Reduce-scatter, all-gather (Lα + (p−1)/(pL)·Sβ) and
//	            all-to-all (Lα + (r−1)/r·Sβ), broadcast and reduce (Lα + (r−1)·Sβ, slices not
//	            pipelined) are the derived forms of reference/sipac.md §2.7, reported as
//	            "sipco (derived)": not from the paper.
//	sipco-rsag  all-reduce as the derived reduce-scatter + all-gather, 2Lα + 2(p−1)/(pL)·Sβ (the
//	            L-port bound; fewer bytes than SiPCO for L ≥ 2, more steps): not from the paper.
//	mesh        (collective.Mesh) all peers at once, 2 steps of S/p to each: 2α + 2(p−1)/p·Sβ on one port.
//	ring        the ring in reflected base-r Gray-code order (one WSS hop per neighbour).
//	hring       (collective.HRingTableII) exactly Table II: 4(k−1) + 2(p/k−1) steps of S/k, k = r (pessimistic: a
//	            standard two-level ring sends S/p across groups, reference/sipac.md §2.5(3)).
//	rhd, tree, linear: the generic algorithms (rooted ops, all-to-all as one linear round).
//
// Table II's Ring, Mesh and H-Ring rows are for a logical one-port topology (§V: "logical
// topologies with uniform link latency and bandwidth"): the tests run them on the α–β crossbar
// and SiPCO on SiPAC with B = 1/β per link.
//
// Checked (sipac_test.go): Table II's closed forms at p = 16 … 4,096 and n = 100 B … 1 GB
// (§2.6's values, 1e-4), SiPAC(2,2) 1.174875 ms, SiPCO = mesh at L = 1, Table III step by step,
// SiPCO on real tensors for (r, L) ∈ {(2,1), (2,2), (3,2), (2,3), (3,3), (4,3), (8,2)}, the
// derived forms' closed forms, the default r and L, neighbours and diameter, Fig. 9's counts by
// hand. The paper's published numbers (§III-A's sizes, Fig. 11's speed-ups) are rows of
// internal/repro (`ddlest validate --seed sipac`), its figures internal/figures' sipac-fig*.
package sipac
