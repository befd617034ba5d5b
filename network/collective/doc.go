// Package collective holds the collective algorithms and the one cost function that prices them.
//
// Algorithms emit traffic, not times. A generic algorithm (Ring, BiRing, Hierarchical, Torus2D,
// RHD, RD, Tree, Linear, and the grid algorithms of HammingMesh: Rings on two edge-disjoint
// Hamiltonian cycles, HMTorus and HMTorusSST) is a registered value whose Rounds say, for one group of p members, who
// sends how many bytes to whom in each synchronised round (a Pattern of parts: a shift or XOR of
// one digit of the member index, a chain, a binary heap, a uniform all-to-all, an explicit
// successor table), with the reduction each receiver does and any circuit set-up before it. Every
// concurrent group of the job runs the same rounds. Networks offer algorithms (no closed enum:
// network packages add their own, RAMP-x, HammingMesh's rings); Choose is the one best-of loop,
// and a Choice is a strategy ("best", a name, or op=name pairs). ChooseBounded is the same loop
// given a lower bound on each candidate's price: it prices them in increasing order of their
// bounds and skips those whose bound exceeds the cheapest price found (the same pick and cost,
// the routing of the losers spared). T below is monotone in every step's α (up) and B (down), so
// the rounds priced on links no slower and no narrower than the real ones bound an algorithm; one
// whose rounds are sized on a routed link (the tree's pipeline) bounds itself (Bounder: each pass
// of the tree costs at least d·α + S/B, whatever its chunk count); one whose patterns name
// successor tables it has yet to build (Rings) outlines its rounds (Outliner: the rounds without
// their patterns, every member sending and receiving w along permutations without fixed points),
// so that a loser's tables are never built.
//
// Two pricers turn rounds into Steps, and Price sums the steps (RAMP §7.4.1):
//
//		T = Σ_steps repeat · ( reconfig + α + bytes · load / B + reduce(fanIn, bytes) )
//		                      set-up   H2H   H2T (head-to-tail)   compute (GPU roofline)
//
//	  - a routed fabric (network/fabric) routes every flow of every concurrent group and takes
//	    the slowest path as α and the busiest link as B/load;
//	  - OnLevels, the fast path of networks whose tiers capture all sharing, maps each round onto
//	    the level it spans: a ring step (whose wrap-around crosses every level) onto the critical
//	    level, a digit shift onto its level (multi-hop on a physical ring: min(k, n−k) hops and as
//	    many messages per link), a binary-tree round onto the critical level with two chunks per
//	    parent port. A test proves the two pricers equal on non-blocking fabrics.
//
// Closed forms from papers (ring all-reduce 2(n−1)/n·S/B, RAMP Table 8, …) are tests of the
// schedules, not second implementations.
//
// Sizes follow nccl-tests: S is the whole buffer (all-gather output, reduce-scatter input,
// all-to-all per-rank send buffer).
//
// References: Patarasuk & Yuan 2009 (ring all-reduce), Thakur, Rabenseifner & Gropp 2005 (MPICH
// collectives), Ueno & Yokota 2019 (hierarchical rings), Mikami et al. 2018 (2D torus), RAMP
// (Ottino et al.) §7.4 and Eq. (1) for the pipelined broadcast, HammingMesh (Hoefler et al. 2022)
// §V-A for the linear all-to-all.
package collective
