package repro

import (
	"fmt"
	"testing"
)

// RAMP Fig. 17 / §8.1, DLRM on Table 10's five configurations (Fig17): the overheads' and
// speed-ups' ends are rows of the table (rampRows, with the two documented deviations); here,
// the orderings the paper's figure shows: RAMP < TopoOpt < fat tree at every size, the fat
// tree's overhead growing with scale, the speed-up over TopoOpt below the one over the fat tree.
func TestFig17Order(t *testing.T) {
	res := must(Fig17())
	prev := 0.0
	for i, o := range res {
		name := Fig17Presets[i]
		if !(o.RAMP < o.Topo && o.Topo < o.FT) {
			t.Errorf("%s: overheads RAMP %.3g, TopoOpt %.3g, fat tree %.3g: want that order", name, o.RAMP, o.Topo, o.FT)
		}
		if o.FT <= prev {
			t.Errorf("%s: fat-tree overhead %.3g does not grow with scale", name, o.FT)
		}
		prev = o.FT
		if testing.Verbose() {
			fmt.Printf("%s: RAMP %.2f%%, TopoOpt %.1f%%, FT %.1f%%; speed-ups %.3g× / %.3g×\n", name, 100*o.RAMP, 100*o.Topo, 100*o.FT,
				o.TotalTopo/o.TotalRAMP, o.TotalFT/o.TotalRAMP)
		}
	}
	last := res[len(res)-1]
	if sp := last.TotalTopo / last.TotalRAMP; sp >= last.TotalFT/last.TotalRAMP {
		t.Errorf("speed-up over TopoOpt %.3g should stay below the one over the fat tree", sp)
	}
}
