// Package topoopt models TopoOpt (Wang et al., NSDI 2023) as the RAMP paper evaluates it (§7.5–7.6):
// an optical circuit-switched network scaled to 65,536 nodes whose circuits are established before
// the job (reconfiguration time ignored), giving each node node_tbps (1.6 Tb/s) towards its ring
// neighbours at 260 ns. Each collective group gets its own circuit ring (the circuits are set up for
// the job, so members are neighbours whatever their rank stride). Its >10 ms reconfiguration
// allows only single-ring strategies; messages for non-neighbours (all-to-all) are relayed around
// the ring.
package topoopt
