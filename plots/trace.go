package plots

import (
	"fmt"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/traces"
)

// TraceRanks draws a profiled trace's temporal breakdown (ddlest trace show, Holistic Trace
// Analysis's): one bar per rank, its GPU window split into parts that do not overlap, so that
// they add up to the window — compute alone (compute − overlap), compute overlapped with
// communication, exposed communication (communication − overlap), memory copies and sets
// outside both (busy − compute ∪ communication), idle. Per step (the mean of the selected
// steps) when the trace has steps, else over the whole trace.
func TraceRanks(file string, ranks []traces.RankSummary) (Figure, error) {
	bars, quantity := traceBars(ranks)
	return Bars(fmt.Sprintf("GPU time breakdown of %s", file), "rank", quantity, bars)
}

func traceBars(ranks []traces.RankSummary) ([]Bar, string) {
	quantity := "GPU time per step"
	bars := make([]Bar, len(ranks))
	for i, r := range ranks {
		per := float64(max(r.Selected, 1))
		if r.Selected == 0 {
			quantity = "GPU time over the trace"
		}
		s := func(ns int64) float64 { return float64(units.Ns(float64(ns))) / per }
		union := r.ComputeNs + r.CommNs - r.OverlapNs
		bars[i] = Bar{Label: fmt.Sprint(r.Rank), Segments: []Segment{
			{"compute", s(r.ComputeNs - r.OverlapNs)},
			{"compute ∩ communication", s(r.OverlapNs)},
			{"exposed communication", s(r.CommNs - r.OverlapNs)},
			{"memory (alone)", s(max(0, r.BusyNs-union))},
			{"idle", s(r.IdleNs)},
		}}
	}
	return bars, quantity
}
