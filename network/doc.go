// Package network defines what every network model shares: the collective operations (Op), the
// collective call (Collective: op, nccl-tests size S, group of ranks with a stride in the job's
// rank order, dtype), its priced result (Cost: steps, head-to-head latency, head-to-tail transfer,
// reduction compute, total — RAMP §7.4.1) and the Model interface.
//
// A network is a sub-package with a Name constant, a typed Config (internal/params tags: keys
// carry units, defaults carry sources) and a Spec; network/all lists them. Models build step
// schedules and price them with network/collective.Price, the single α–β cost function, so each
// new topology is one more package: hierarchical ones describe their tiers and reuse
// network/topology (placement of groups on tiers) and the strategies of network/collective.
//
// Models: ideal (zero time), alphabeta (flat α–β ring), ramp (RAMP with RAMP-x collectives, power
// budget, cost and power), superpod (DGX SuperPod fat tree), torus (2D torus), topoopt (TopoOpt
// circuit rings). Configs that implement Costing have a cost and power model (ddlest cost).
//
// Sizes: S is the whole buffer as nccl-tests counts it, so the bus bandwidth of an all-reduce is
// 2(n−1)/n · S/t and a ring all-reduce on links of bandwidth B takes 2(n−1)/n · S/B at zero
// latency (Op.BusFactor).
package network
