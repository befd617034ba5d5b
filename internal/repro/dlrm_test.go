package repro

import (
	"fmt"
	"testing"

	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition/dlrm"
	"github.com/ddlest/ddlest/profile/roofline"
)

// RAMP Fig. 17 / §8.1, DLRM on Table 10's five configurations (256–65,536 GPUs), RAMP against
// TopoOpt and the SuperPod fat tree: "RAMP achieves a speed-up in iteration time with a
// reduction factor of up to 7.8-58× when compared to TOPOOPT and Fat-Tree, respectively. RAMP
// achieves this speedup while keeping a sub 1% network overhead, whereas the OCS and EPS
// baselines suffer from overhead ranging from 12.5-87% and 52-98% respectively."
//
// ddlest, roofline compute on the paper's A100 and TopoOpt with a circuit per all-to-all partner
// (RAMP §7.5, alltoall=direct), end points within ±30%:
//
//	RAMP overhead       0.5–1.2%    paper < 1%         ✓ (≤ 1.3%)
//	TopoOpt overhead    12.2–97.1%  paper 12.5–87%     ✓ both ends
//	fat-tree overhead   23–98.4%    paper 52–98%       ✓ top end; the low end is 23% (−56%)
//	speed-up vs FT      64×         paper 58×          ✓
//	speed-up vs TopoOpt 35×         paper 7.8×         ✗ (its 47 ms ring all-reduces of the MLP
//	                                                   gradients at 65,536 GPUs, in 25 MiB DDP
//	                                                   buckets, dominate; the paper's model seems
//	                                                   to hide them)
//
// The two misses are asserted as what ddlest does (the ordering), not as the paper's values.
func TestFig17(t *testing.T) {
	type over struct{ ramp, topo, ft, totalRAMP, totalTopo, totalFT float64 }
	rows := []string{"ramp-256", "ramp-1024", "ramp-4096", "ramp-16384", "ramp-65536"}
	res := map[string]over{}
	for _, name := range rows {
		p, _ := dlrm.Presets().Lookup(name)
		run := func(net string, params ...string) (float64, float64) {
			r, err := job.DLRM(job.DLRMOptions{Preset: name, Config: p.Config, RunOptions: job.RunOptions{GPU: "ramp-a100",
				Efficiency: roofline.DefaultEfficiency, Network: job.NetworkChoice{Name: net, Params: params}}})
			if err != nil {
				t.Fatalf("%s on %s: %v", name, net, err)
			}
			return r.Result.Iteration.CommFraction, float64(r.Result.Iteration.Total)
		}
		var o over
		o.ramp, o.totalRAMP = run("ramp")
		o.topo, o.totalTopo = run("topoopt", "alltoall=direct")
		o.ft, o.totalFT = run("superpod")
		res[name] = o
		if o.ramp > 0.013 {
			t.Errorf("%s: RAMP overhead %.2f%%, paper < 1%%", name, 100*o.ramp)
		}
		if !(o.ramp < o.topo && o.topo < o.ft) {
			t.Errorf("%s: overheads RAMP %.3g, TopoOpt %.3g, fat tree %.3g: want that order", name, o.ramp, o.topo, o.ft)
		}
	}
	first, last := res[rows[0]], res[rows[len(rows)-1]]
	check := func(what string, got, want float64) {
		if !within(got, want, 0.30) {
			t.Errorf("%s %.3g, paper %.3g", what, got, want)
		}
	}
	check("TopoOpt overhead at 256 GPUs", first.topo, 0.125)
	check("TopoOpt overhead at 65,536 GPUs", last.topo, 0.87)
	check("fat-tree overhead at 65,536 GPUs", last.ft, 0.98)
	check("speed-up over the fat tree at 65,536 GPUs", last.totalFT/last.totalRAMP, 58)
	prev := 0.0
	for _, name := range rows {
		if o := res[name]; o.ft <= prev {
			t.Errorf("%s: fat-tree overhead %.3g does not grow with scale", name, o.ft)
		} else {
			prev = o.ft
		}
	}
	if sp := last.totalTopo / last.totalRAMP; sp >= last.totalFT/last.totalRAMP {
		t.Errorf("speed-up over TopoOpt %.3g should stay below the one over the fat tree", sp)
	}
	if testing.Verbose() {
		for _, name := range rows {
			o := res[name]
			fmt.Printf("%s: RAMP %.2f%%, TopoOpt %.1f%%, FT %.1f%%; speed-ups %.3g× / %.3g×\n", name, 100*o.ramp, 100*o.topo, 100*o.ft,
				o.totalTopo/o.totalRAMP, o.totalFT/o.totalRAMP)
		}
	}
}
