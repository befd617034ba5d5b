// Package network defines what every network model shares: the collective operations (Op), the
// collective call (Collective: op, nccl-tests size S, group of ranks with a stride in the job's
// rank order, dtype), its priced result (Cost: steps, head-to-head latency, head-to-tail transfer,
// reduction compute, total — RAMP §7.4.1) and the Model interface.
//
// A network is a sub-package with a Name constant, a typed Config (internal/params tags: keys
// carry units, defaults carry sources) and a Spec; network/all lists them (and the presets of
// configs/networks.json). Collective algorithms are registered values of network/collective that
// emit rounds of flows; a network offers some of them, and either maps the rounds onto its
// levels (network/topology: exact where the levels see all the sharing) or routes them on its
// graph (network/fabric: every concurrent group at once, busiest link and slowest path). Both end
// in network/collective.Price, the single α–β cost function, so each new topology is one more
// package and each new algorithm one more registered value.
//
// Groups. A collective names its group (Size ranks, Stride apart in the job's rank order) and,
// through Group.Groups, every identical group that tiles the job and runs it in lockstep
// (Concurrent caps them; Every/Block keep only the stages of one 1F1B phase). A model may also
// price collectives that overlap in time (Overlapping). Cost carries the reconfiguration time
// and the bottleneck resource.
//
// Models: ideal (zero time), alphabeta (flat α–β ring), ramp (RAMP with RAMP-x collectives, power
// budget, cost and power), superpod (DGX SuperPod fat tree), torus (2D torus), topoopt (TopoOpt
// circuit rings), fattree, dragonfly and hxmesh (HammingMesh, HyperX, torus of boards; routed),
// wdmring (WRHT's WDM optical ring: lightpaths assigned wavelengths by first fit).
// Electrical networks with DGX-style nodes (superpod, alphabeta) can run their collectives
// through NCCL's cost model instead (network/nccl: per-call latency, ring or tree, LL/LL128/Simple,
// NVLS), as the DGX cluster presets do; the seeds' networks keep their papers' schedules.
// Configs that implement Costing have a cost and power model, Structured ones a bill, diameter,
// bisection and bandwidth shares (ddlest cost).
//
// Memo: a model keeps its priced collectives; level models share them process-wide with every
// model of the same configuration and reduction speed (Share, ReducerKey), routed ones share
// routed rounds through their graph.
//
// Sizes: S is the whole buffer as nccl-tests counts it, so the bus bandwidth of an all-reduce is
// 2(n−1)/n · S/t and a ring all-reduce on links of bandwidth B takes 2(n−1)/n · S/B at zero
// latency (Op.BusFactor).
package network
