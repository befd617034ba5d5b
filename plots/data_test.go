package plots

import (
	"math"
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/traces"
)

// Collectives plots the rows' completion times exactly: against size (one line per operation),
// against GPUs, or per operation split into parts that add up to the total.
func TestCollectivesData(t *testing.T) {
	row := func(op network.Op, gpus int, b units.Bytes, h2h, h2t float64) CollectivePoint {
		return CollectivePoint{Name: op.String(), GPUs: gpus, Bytes: b, Network: "superpod",
			Cost: network.Cost{H2H: units.Seconds(h2h), H2T: units.Seconds(h2t), Total: units.Seconds(h2h + h2t)}}
	}
	bySize := []CollectivePoint{row(network.AllReduce, 8, 1e6, 1e-5, 1e-4), row(network.AllToAll, 8, 1e6, 2e-5, 3e-4),
		row(network.AllReduce, 8, 1e9, 1e-5, 0.1), row(network.AllToAll, 8, 1e9, 2e-5, 0.3)}
	pn, bars, _, err := collectiveData(bySize)
	if err != nil || bars != nil || len(pn.Series) != 2 || !pn.X.Log || !pn.Y.Log {
		t.Fatalf("by size: %+v %v %v", pn, bars, err)
	}
	if s := pn.Series[0]; s.Name != "all-reduce" || s.X[0] != 1e6 || s.X[1] != 1e9 || s.Y[0] != 1e-5+1e-4 || s.Y[1] != 1e-5+0.1 {
		t.Errorf("all-reduce series %+v", s)
	}
	byGPUs := []CollectivePoint{row(network.AllReduce, 8, 1e9, 1e-5, 0.1), row(network.AllReduce, 64, 1e9, 2e-5, 0.2)}
	pn, _, _, err = collectiveData(byGPUs)
	if err != nil || len(pn.Series) != 1 || pn.Series[0].X[1] != 64 || pn.Series[0].Y[1] != 2e-5+0.2 {
		t.Errorf("by GPUs: %+v %v", pn, err)
	}
	_, bars, _, err = collectiveData(bySize[2:])
	if err != nil || len(bars) != 2 || bars[1].Segments[0].Seconds != 2e-5 || bars[1].Segments[1].Seconds != 0.3 {
		t.Errorf("per operation: %+v %v", bars, err)
	}
}

// A trace's bars split each rank's window, per selected step, into parts that add up to it.
func TestTraceBarsAddUp(t *testing.T) {
	r := traces.RankSummary{Rank: 3, Selected: 2, WindowNs: 20e6, BusyNs: 17e6, ComputeNs: 12e6, CommNs: 6e6, OverlapNs: 2e6,
		MemoryNs: 3e6, IdleNs: 3e6}
	bars, quantity := traceBars([]traces.RankSummary{r})
	want := []float64{5e-3, 1e-3, 2e-3, 0.5e-3, 1.5e-3} // (12−2)/2, 2/2, (6−2)/2, (17−16)/2, 3/2 ms
	sum := 0.0
	for i, s := range bars[0].Segments {
		if math.Abs(s.Seconds-want[i]) > 1e-15 {
			t.Errorf("%s %g s, want %g", s.Name, s.Seconds, want[i])
		}
		sum += s.Seconds
	}
	if math.Abs(sum-10e-3) > 1e-15 || quantity != "GPU time per step" || bars[0].Label != "3" {
		t.Errorf("sum %g s (want the 20 ms window over 2 steps), %q, %q", sum, quantity, bars[0].Label)
	}
}

// A sweep's plot: the last key along x (numeric, log over ≥ 16×, every value a tick), a line per
// value of the others, points that did not run left out.
func TestGridData(t *testing.T) {
	pts := []GridPoint{{[]string{"1", "1"}, 3}, {[]string{"1", "16"}, 2}, {[]string{"2", "1"}, math.NaN()}, {[]string{"2", "16"}, 1}}
	pn, err := gridPanel("t", []string{"tp", "pp"}, pts, "time", true)
	if err != nil {
		t.Fatal(err)
	}
	if !pn.X.Log || len(pn.X.Ticks) != 2 || len(pn.Series) != 2 || pn.Series[0].Name != "tp=1" || len(pn.Series[1].X) != 1 ||
		pn.Series[1].X[0] != 16 || pn.Series[1].Y[0] != 1 {
		t.Errorf("panel %+v", pn)
	}
	pn, err = gridPanel("t", []string{"net"}, []GridPoint{{[]string{"superpod"}, 2}, {[]string{"torus"}, 3}}, "time", true)
	if err != nil || len(pn.X.Categories) != 2 || pn.Series[0].X[1] != 1 {
		t.Errorf("nominal: %+v %v", pn, err)
	}
	if _, err := gridPanel("t", []string{"tp"}, []GridPoint{{[]string{"1"}, math.NaN()}}, "time", true); err == nil {
		t.Error("a grid of which no point ran was drawn")
	}
}
