// Package collective turns MPI collectives into step schedules and prices them with one cost
// function.
//
// A Schedule is a list of Steps; each step has the Link it runs on (latency α, per-rank bandwidth
// B), the bytes each rank sends, the load on the most shared resource (effective bandwidth
// B/load) and an optional local n-to-1 reduction. Price sums, per step (RAMP §7.4.1):
//
//	T = Σ_steps repeat · ( α  +  bytes · load / B  +  reduce(fanIn, bytes) )
//	    H2H (head-to-head)   H2T (head-to-tail)      compute (GPU roofline)
//
// Every network model builds schedules and calls Price; no model writes its own time formula.
// Closed forms from papers (ring all-reduce 2(n−1)/n·S/B, RAMP Table 8, …) are tests of the
// schedules, not second implementations.
//
// Sizes follow nccl-tests: S is the whole buffer (all-gather output, reduce-scatter input,
// all-to-all per-rank send buffer).
//
// References: Patarasuk & Yuan 2009 (ring all-reduce), Thakur, Rabenseifner & Gropp 2005 (MPICH
// collectives), RAMP (Ottino et al.) §7.4 and Eq. (1) for the pipelined broadcast.
package collective
