// Package fabric is the routed network engine: a fabric described as a graph, a job placed on
// it, and the flow pricer that turns an algorithm's rounds into steps of the one cost function
// (collective.Price).
//
// Graph. Endpoints (accelerators, nodes 0 … E−1) and switches; directed links, each a bundle of
// Width identical physical links with a rate, a propagation latency, a routing weight and a class
// name; a forwarding latency per node (a switch's buffers and crossbar, an accelerator's on-chip
// router on a mesh board); one per-message endpoint overhead. Planes that a paper simulates as
// one wider NIC are one graph at the summed rate.
//
// Routing. Flows take minimal paths (least total weight). A family supplies its distance oracle
// (a fat tree's leaf/pod/core levels, the sum of row and column distances of a torus or
// HammingMesh, a Dragonfly's router table); LazyDist, the exact per-destination search, serves
// small fabrics and checks the oracles in tests. Split routing divides a node's traffic towards
// a destination over its minimal next hops in proportion to their widths (the fluid limit of
// adaptive routing); Hash routing sends it over one next hop picked by a seeded hash of
// (destination, node), as per-destination forwarding tables do, so flows collide.
//
// Next hops. A family's oracle may also name a node's minimal next hops (Stepper) instead of
// the router scanning every out-link: product tables for HammingMesh and tori, the fat tree's
// one link up or down, a Dragonfly router's table row. CheckNext compares them with the scan.
//
// Endpoints. Every round pays the endpoint's per-message overhead once (fitted once, on
// HammingMesh §V-B2's ResNet-152 on the non-blocking fat tree: 493 ns; common.go); a linear
// all-to-all whose p−1 sends leave through one port serialises them by the gap per message
// (fitted once, on the paper's DLRM: 187 ns). A NIC cap bounds what an endpoint injects and
// receives in all. Placement maps ranks to endpoints (default: rank r on endpoint r).
//
// Pricing one round of an algorithm: every concurrent group (network.Group.Groups: the groups of
// the collective's shape that tile the job, all in lockstep) maps its members to endpoints
// through the placement, each flow is routed, and
//
//	α   = endpoint overhead + the slowest path's latency (links + forwarding nodes)
//	B/L = the rate of the busiest physical link per unit of flow weight
//
// become a collective.Step with the round's bytes, repeat, reduction and reconfiguration; Price
// sums the steps. A uniform all-to-all is loaded from the aggregated traffic matrix (all sources
// routed towards each destination together, per switch on indirect fabrics, towards one orbit
// representative each under the fabric's symmetry), never flow by flow. Any round whose flows a
// subgroup H of the symmetry maps onto themselves (a ring in board order, all-to-alls of whole
// board rows) is routed towards one destination per H-orbit, each link carrying its H-orbit's
// sum (lattice.go: the same shares summed in another order; where Γ fixes some links, a fat-tree
// leaf under the moves of boards within its block, H moves along none of the factors that do,
// and acts freely on the links: Symmetry.fixers); a round of one group on the first
// endpoints in rank order (an all-reduce over the whole machine) finds H from each part's partners
// (its successor table as it is), each part's answer per step kept per model, and routes the flows
// into the representatives without collecting the others; a table registered with its inverse
// (the torus steps +x and −x) has its inverse's answers (a move keeps a permutation iff it keeps
// its inverse), and its flows into the representatives are read from the inverse; such a round
// whose parts are those of one routed so before in another order, every weight times one power
// of two (the torus all-reduce's phase 2, [+y, −y, +x, −x] of weight 1, after phases 1 and 3,
// [+x, −x, +y, −y] of weight R = C, on a square grid), is read from it, not routed, where the
// parts that load a common link orbit keep their order (permuted.go: each part's flows typed,
// their types naming the orbits; every H-orbit's sum the same shares in the same order, times
// the power of two, within the normal range; the busiest, of the H-orbits each part loaded
// first, taken in the new order, as finishSub does; TestPermutedRoundsExact against
// WithoutPermutedRounds, TestPermutedRounds' hand counts). Any other flow s → t is routed
// through its type (types.go): with s = g·R for a representative R, its shares are those of
// R → g⁻¹·t moved by g, so each (R, g⁻¹·t, weight) is routed once and its link shares are
// added, moved, for every flow of the type — every link receives the same shares in the same
// order as routing each flow (prices equal bit for bit); where Γ fixes some links, the flows
// into a sub-lattice's representatives are typed too (Γ's automorphisms keep split routing
// equivariant; a fixed link's moved image is the link of the move's projection onto the elements
// naming its orbit: Symmetry.typing). A round that repeats, its flows
// q later the earlier ones moved by one τ ∈ Γ (GPT-3's stride-96 rings: every two blocks of
// 384 ranks are three board rows down), routes its first q flows and adds their loads moved by
// τ^k for each further period (periods.go: the same shares grouped per period; within the first
// period, runs of groups that repeat moved by one τ' — 16 boards of rings one column apart — route
// their first groups and add the rest as moved copies, along the copies' cycles of links where
// their move is along one factor, and a run that is an earlier one moved, flow by flow, takes
// that run's sums moved, runs.go, the runs read from the groups' members once per group shape
// where every member is in a flow; where a few flows moved by every
// step of the sub-lattice search already leave the round, only those flows and the ones after
// the last whole period are collected); where τ moves
// one factor of Γ and only the round's price reads its loads, those copies are not added link
// by link: each τ-cycle of links carries a sliding window of K copies of the first period's
// few loads on it, and the busiest link is among the windows ending at those loads (windows.go:
// the same sums in the same order, prices equal bit for bit; a cycle whose loads lie beyond any
// one window's reach is bounded by their sum less the least, one whose loads lie K or more
// apart has its busiest window read from one or two of them, and its windows are not read
// where that falls short of the busiest found); the flows after the last whole
// period, where runs route them as they route the first period's first groups, are read from
// those groups' sums at distance K instead of routed. Routed rounds are
// cached per graph by (pattern, group shape, job size, placement, routing), so the next model
// of the same job routes nothing again; grid arrangements likewise; priced collectives per
// model. Collectives that overlap in time (PriceConcurrent: each with its number of calls in
// the window) sum their bytes per link, and each collective's calls last at least until the
// links they use have drained all of it.
//
// Best. Before routing any candidate, each gets a lower bound on its price: its rounds priced on
// loads no larger than routing leaves (what the busiest member of one group sends or receives
// over its endpoint's link rates, the endpoint overhead as the latency; bound.go), or the
// algorithm's own bound where its rounds are sized on a routed link (the tree's pipeline).
// collective.ChooseBounded prices the candidates in increasing order of their bounds and skips
// those whose bound exceeds the cheapest price found: the same pick at the same cost
// (TestBestWithBounds against WithoutBounds; TestBoundsBelowPrices checks every bound). A
// candidate is priced a pattern at a time, heaviest first (most bytes × repeats over its rounds),
// its rounds routed so far at their price and the others at their bound: a price is a sum of
// per-round terms, so once that partial sum passes the cheapest price found, or the next
// candidate's bound, pricing stops (collective.Above) and the candidate waits, its routed rounds
// kept, until its raised bound is the least left or exceeds the cheapest price
// (TestChooseBoundedPartial counts the rounds routed by hand). On GPT-3's stride-96 rings on the
// large torus, the hierarchical ring and the tree stop after one pattern each. Where best has a
// price, a round read by windows may stop before its windows are read, or before its first
// period is all routed: a link's first-period sum, or its sum after some stretches, is a lower
// bound on its load (copy 0 puts it there; every other term is positive), so where the
// candidate's rounds priced with the busiest of them already pass the cheapest price found by
// more than the chooser's slack, the candidate is never priced again, and that bound is kept
// as the pattern's (not its load: Cut short, windows.go; TestWindowsCut), in the graph's cache
// of routed rounds, marked as a bound, so that a new model of the job reads it in one lookup. On GPT-3's rings on
// the large Hx4Mesh the halving and doubling's second pattern stops after two of its first
// period's six stretches. A round
// routed before bounds itself by its routed load, so for the next model of a job the bounds are
// the prices and nothing is priced twice. An algorithm whose rounds name successor tables it has
// yet to build (the rings' Hamiltonian cycles) is bounded from its outline (collective.Outliner:
// the same rounds, every member sending and receiving w along permutations without fixed points),
// so the tables are built only for a candidate that is priced. A binary tree's round is bounded
// from the heap's shape (collective.Part.Fan: children send W once, member 0 receives from two,
// with W each: the sums listing the flows leaves, TestFan's hand counts), not flow by flow. On the
// data-parallel all-reduce over 16,384 accelerators of the large Hx4Mesh, the torus algorithm's
// 10.3 ms leaves six of the eight candidates unrouted (the tree's bound alone is 20 ms; the
// rings', 26 ms, is read without their tables: TestRingsOutlineBound's closed form).
//
// The level schedules of network/collective are the exact fast path on non-blocking fabrics: a
// test builds the SuperPod and α–β fabrics and checks that the flow pricer equals the level
// pricer for every generic algorithm (relative 1e-9).
package fabric
