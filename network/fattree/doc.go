// Package fattree is the fat tree of HammingMesh (Hoefler et al., SC'22, App. A-C) on the routed
// engine (network/fabric): radix-k switches, two levels while one spine layer reaches every
// leaf, else three with pods of k/2 leaves, and tapering.
//
// Structure. A leaf of radix k keeps a share t ∈ (0, 1] of its bandwidth towards the spines:
//
//	down = ⌊k / (1 + t)⌋,  up = k − down,  leaves = ⌈E / down⌉
//
// (t = 1, 0.5, 0.25 give the paper's 32/32, 42/22, 51/13 ports of a 64-port leaf and its 1,024,
// 1,050 and 1,071 small-cluster endpoints). Switches = leaves + ⌈leaves·up / k⌉ per level above;
// DAC = leaves·down (accelerator to leaf), AoC = leaves·up per level; over 16 planes at $14,280 /
// $272 / $603 this reproduces Table II's costs (bill.go; the large 50% tree's 419 M$ against its
// own counts' 418.26 is documented). Diameter = 2·levels cables.
//
// Graph. Every switch level above the leaves is aggregated into one node per pod (or one spine)
// joined by bundles of width up: under split routing a leaf spreads its upward traffic evenly
// over its up links, so every spine of a level carries the same share and the bundle is exact.
// Distances are closed form (up to the lowest common level and down: 2, 4 or 6 cables between
// endpoints), and so are the next hops: below the lowest common level the one bundle up, at or
// above it the one link down (the router's Stepper; tests compare both with the exact search).
//
// A uniform all-to-all is routed switch by switch (all of a leaf's members towards all of
// another's at once). Algorithms: ring, bidirectional ring, hierarchical ring, 2D torus, RHD,
// tree, linear all-to-all; `best` picks per size.
//
// Reproduced (internal/repro): Table II's bill, diameter and global bandwidth (54.5% for the 50%
// tree by hand, paper 51.2%), ResNet-152's ring as fast on the 75% tree as on the non-blocking
// one while GPT-3's stride-96 rings slow with tapering (§V-B2, §V-B5).
package fattree
