package figures

import (
	"fmt"
	"math"
	"slices"

	"github.com/ddlest/ddlest/internal/repro"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition/dlrm"
	"github.com/ddlest/ddlest/plots"
	"github.com/ddlest/ddlest/scaling"
)

func init() {
	register(
		Figure{Name: "ramp-fig15", Title: "RAMP Fig. 15: algorithmic steps of a reduce-scatter per strategy against the number of nodes",
			Panels: fig15},
		Figure{Name: "ramp-fig16", Title: "RAMP Fig. 16: Megatron to the Table 9 losses, iteration time and communication share per network",
			Panels: fig16},
		Figure{Name: "ramp-fig17", Title: "RAMP Fig. 17: DLRM (Table 10) network overhead per network and RAMP's speed-up against the GPUs",
			Panels: fig17},
		Figure{Name: "ramp-fig18", Title: "RAMP Fig. 18: 1 GB collectives at 65,536 nodes per network and RAMP's speed-up over the best",
			Panels: fig18},
		Figure{Name: "ramp-fig19", Title: "RAMP Fig. 19: RAMP's speed-up over bandwidth-matched baselines against the node bandwidth, 1 GB, 65,536 nodes",
			Panels: fig19},
		Figure{Name: "ramp-fig20", Title: "RAMP Fig. 20: all-reduce at 65,536 GPUs, 10 MB–10 GB: time, RAMP's speed-up and the H2T/H2H/compute shares",
			Panels: fig20},
		Figure{Name: "ramp-fig21", Title: "RAMP Fig. 21: all-reduce against the GPUs per strategy and size (2.4 Tb/s, 1:1 fat tree) and the ratio to RAMP",
			Panels: fig21},
		Figure{Name: "ramp-fig22", Title: "RAMP Fig. 22: H2T/H2H of an all-reduce against the GPUs per strategy and size",
			Panels: fig22},
		Figure{Name: "ramp-fig23", Title: "RAMP Fig. 23: compute of summing 1 GB scattered over the GPUs, single source (ring) against RAMP's many",
			Panels: fig23},
	)
}

// fig16 is Section81's iteration times and communication shares against the Table 9 losses.
func fig16() ([]plots.Panel, error) {
	r, err := repro.Section81()
	if err != nil {
		return nil, err
	}
	var ce []float64
	for _, row := range scaling.Table9 {
		ce = append(ce, row.Loss)
	}
	tp := plots.Panel{Title: "Megatron to the Table 9 losses (RAMP §8.1): iteration time",
		X: plots.Axis{Label: "target cross-entropy loss (CE)", Ticks: ce}, Y: plots.Axis{Label: "time per iteration", Time: true}}
	sp := plots.Panel{Title: "exposed communication share",
		X: plots.Axis{Label: "target cross-entropy loss (CE)", Ticks: ce}, Y: plots.Axis{Label: "communication share (%)"}}
	for _, net := range repro.Section81Nets {
		tp.Series = append(tp.Series, plots.Series{Name: net, X: ce, Y: r.Times[net]})
		var pct []float64
		for _, s := range r.Shares[net] {
			pct = append(pct, 100*s)
		}
		sp.Series = append(sp.Series, plots.Series{Name: net, X: ce, Y: pct})
	}
	return []plots.Panel{tp, sp}, nil
}

// fig18 is each network's time per operation and RAMP's speed-up over the best of the others.
func fig18() ([]plots.Panel, error) {
	r, err := repro.Fig18()
	if err != nil {
		return nil, err
	}
	var ops []string
	var xs, speed []float64
	for i, op := range r.Ops {
		ops = append(ops, op.String())
		xs = append(xs, float64(i))
		speed = append(speed, r.Speedup[op])
	}
	tp := plots.Panel{Title: fmt.Sprintf("%v collectives over 65,536 nodes (RAMP Fig. 18)", units.Bytes(1e9)),
		X: plots.Axis{Label: "operation", Categories: ops}, Y: plots.Axis{Label: "completion time", Log: true, Time: true}}
	for _, net := range repro.Fig18Nets {
		tp.Series = append(tp.Series, plots.Series{Name: net, X: xs, Y: r.Times[net]})
	}
	sp := plots.Panel{Title: "RAMP's speed-up over the best baseline (§8.2: 7.6–171×)",
		X: plots.Axis{Label: "operation", Categories: ops}, Y: plots.Axis{Label: "speed-up (×)", Log: true},
		Series: []plots.Series{{Name: "speed-up", X: xs, Y: speed}}}
	return []plots.Panel{tp, sp}, nil
}

// logIfWide keeps a panel's log y axis only where its values span two decades or more: a
// narrower log axis would label one tick at most.
func logIfWide(pns []plots.Panel) []plots.Panel {
	for i := range pns {
		lo, hi := math.Inf(1), 0.0
		for _, s := range pns[i].Series {
			lo, hi = min(lo, slices.Min(s.Y)), max(hi, slices.Max(s.Y))
		}
		pns[i].Y.Log = pns[i].Y.Log && hi >= 100*lo
	}
	return pns
}

// algoGPUs is the algorithmic comparison's x axis: the GPUs (repro.AlgoNodes).
func algoGPUs() ([]float64, plots.Axis) {
	var xs []float64
	for _, n := range repro.AlgoNodes {
		xs = append(xs, float64(n))
	}
	return xs, plots.Axis{Label: "GPUs (nodes)", Log: true, Ticks: xs}
}

// fig15 is Algo's reduce-scatter steps per strategy.
func fig15() ([]plots.Panel, error) {
	a, err := repro.Algo()
	if err != nil {
		return nil, err
	}
	xs, x := algoGPUs()
	pn := plots.Panel{Title: "reduce-scatter: algorithmic steps (RAMP Fig. 15)", X: x, Y: plots.Axis{Label: "algorithmic steps", Log: true}}
	for _, s := range repro.AlgoStrategies {
		var ys []float64
		for _, c := range a.ReduceScatter[s] {
			ys = append(ys, float64(c.Steps))
		}
		pn.Series = append(pn.Series, plots.Series{Name: s, X: xs, Y: ys})
	}
	return logIfWide([]plots.Panel{pn}), nil
}

// fig17 is Fig17's exposed-communication shares and RAMP's speed-ups against the GPUs.
func fig17() ([]plots.Panel, error) {
	r, err := repro.Fig17()
	if err != nil {
		return nil, err
	}
	var xs []float64
	for _, name := range repro.Fig17Presets {
		p, _ := dlrm.Presets().Lookup(name)
		xs = append(xs, float64(p.GPUs))
	}
	x := plots.Axis{Label: "GPUs (Table 10 configuration)", Log: true, Ticks: xs}
	op := plots.Panel{Title: "DLRM: network overhead (RAMP Fig. 17 bars)", X: x, Y: plots.Axis{Label: "exposed communication (%)"}}
	sp := plots.Panel{Title: "RAMP's speed-up in iteration time (§8.1: 7.8–58×)", X: x, Y: plots.Axis{Label: "speed-up over the network (×)", Log: true}}
	share := map[string]func(repro.DLRMOverheads) float64{
		"ramp":     func(o repro.DLRMOverheads) float64 { return 100 * o.RAMP },
		"topoopt":  func(o repro.DLRMOverheads) float64 { return 100 * o.Topo },
		"superpod": func(o repro.DLRMOverheads) float64 { return 100 * o.FT },
	}
	speed := map[string]func(repro.DLRMOverheads) float64{
		"topoopt":  func(o repro.DLRMOverheads) float64 { return o.TotalTopo / o.TotalRAMP },
		"superpod": func(o repro.DLRMOverheads) float64 { return o.TotalFT / o.TotalRAMP },
	}
	series := func(name string, get func(repro.DLRMOverheads) float64) plots.Series {
		s := plots.Series{Name: name, X: xs}
		for _, o := range r {
			s.Y = append(s.Y, get(o))
		}
		return s
	}
	for _, net := range []string{"ramp", "topoopt", "superpod"} {
		op.Series = append(op.Series, series(net, share[net]))
		if speed[net] != nil {
			sp.Series = append(sp.Series, series(net, speed[net]))
		}
	}
	return logIfWide([]plots.Panel{op, sp}), nil
}

// fig19 is Fig19's speed-ups, one panel per baseline, one line per operation.
func fig19() ([]plots.Panel, error) {
	r, err := repro.Fig19()
	if err != nil {
		return nil, err
	}
	x := plots.Axis{Label: "node bandwidth (Tb/s)", Log: true, Ticks: repro.Fig19Rates}
	var out []plots.Panel
	for _, net := range repro.Fig19Nets {
		pn := plots.Panel{Title: fmt.Sprintf("RAMP's speed-up over the bandwidth-matched %s (best strategy)", net), X: x,
			Y: plots.Axis{Label: "speed-up (×)", Log: true}}
		for i, op := range r.Ops {
			pn.Series = append(pn.Series, plots.Series{Name: op.String(), X: repro.Fig19Rates, Y: r.Speedup[net][i]})
		}
		out = append(out, pn)
	}
	return logIfWide(out), nil
}

// sizes is the x axis of the all-reduce sizes (repro.AlgoSizes).
func sizes() ([]float64, plots.Axis) {
	var xs []float64
	for _, s := range repro.AlgoSizes {
		xs = append(xs, float64(s))
	}
	return xs, plots.Axis{Label: "all-reduce size", Log: true, Ticks: xs, Format: plots.ByteTicks}
}

// fig20 is Fig20's all-reduce times, RAMP's speed-ups and, one panel per part (H2T, H2H,
// reduction compute), each configuration's share of its time in it: every configuration keeps
// its colour in all five panels.
func fig20() ([]plots.Panel, error) {
	r, err := repro.Fig20()
	if err != nil {
		return nil, err
	}
	xs, x := sizes()
	tp := plots.Panel{Title: "all-reduce, 65,536 GPUs (SuperPod 1:12, RAMP 12.8 Tb/s)", X: x,
		Y: plots.Axis{Label: "completion time", Log: true, Time: true}}
	sp := plots.Panel{Title: "RAMP's speed-up (§8.3: 9–3.26·10⁴×)", X: x, Y: plots.Axis{Label: "speed-up (×)", Log: true}}
	for _, cfg := range repro.Fig20Configs {
		s := plots.Series{Name: cfg, X: xs}
		v := plots.Series{Name: cfg, X: xs}
		for i, c := range r.Costs[cfg] {
			s.Y = append(s.Y, float64(c.Total))
			v.Y = append(v.Y, r.Speedup(cfg, i))
		}
		tp.Series = append(tp.Series, s)
		if cfg != "ramp" {
			sp.Series = append(sp.Series, v)
		}
	}
	out := []plots.Panel{tp, sp}
	for _, part := range []struct {
		title string
		of    func(network.Cost) units.Seconds
	}{
		{"head-to-tail (H2T) share", func(c network.Cost) units.Seconds { return c.H2T }},
		{"head-to-head (H2H) share", func(c network.Cost) units.Seconds { return c.H2H }},
		{"reduction compute share (§8.3: RAMP's 56% at 10 GB)", func(c network.Cost) units.Seconds { return c.Compute }},
	} {
		pn := plots.Panel{Title: part.title, X: x, Y: plots.Axis{Label: "share of the completion time (%)"}}
		for _, cfg := range repro.Fig20Configs {
			s := plots.Series{Name: cfg, X: xs}
			for _, c := range r.Costs[cfg] {
				s.Y = append(s.Y, 100*float64(part.of(c)/c.Total))
			}
			pn.Series = append(pn.Series, s)
		}
		out = append(out, pn)
	}
	return logIfWide(out), nil
}

// byScale is one series per strategy of an Algo all-reduce quantity at size index i.
func byScale(a repro.AlgoResult, i int, strategies []string, get func(s string, k int) float64) []plots.Series {
	xs, _ := algoGPUs()
	var out []plots.Series
	for _, s := range strategies {
		ser := plots.Series{Name: s, X: xs}
		for k := range repro.AlgoNodes {
			ser.Y = append(ser.Y, get(s, k))
		}
		out = append(out, ser)
	}
	return out
}

// fig21 is Algo's all-reduce times at every size (10 MB to 10 GB), and each strategy's time over
// RAMP's per size.
func fig21() ([]plots.Panel, error) {
	a, err := repro.Algo()
	if err != nil {
		return nil, err
	}
	xs, x := algoGPUs()
	var out []plots.Panel
	for i := range repro.AlgoSizes {
		// Log axes with 1-2-5 ticks: at 1 GB and 10 GB the strategies span one to two decades,
		// and a linear axis would flatten all but the ring's curve onto its floor.
		ser := byScale(a, i, repro.AlgoStrategies, func(s string, k int) float64 { return float64(a.AllReduce[s][i][k].Total) })
		var ys [][]float64
		for _, s := range ser {
			ys = append(ys, s.Y)
		}
		out = append(out, plots.Panel{Title: fmt.Sprintf("%v all-reduce, 2.4 Tb/s per node (RAMP Fig. 21)", repro.AlgoSizes[i]), X: x,
			Y: plots.Axis{Label: "completion time", Log: true, Time: true, Ticks: ticks125(ys...)}, Series: ser})
	}
	ratios := len(out)
	quote := map[string]string{"ring": " (§8.4.1: 9–10,000×)", "hierarchical": " (§8.4.1: 1.16–10×)"}
	for _, s := range repro.AlgoStrategies[:3] {
		pn := plots.Panel{Title: fmt.Sprintf("%s time over RAMP's%s", s, quote[s]), X: x,
			Y: plots.Axis{Label: "time ratio (×)", Log: true}}
		for i, size := range repro.AlgoSizes {
			ser := plots.Series{Name: size.String(), X: xs}
			for k := range repro.AlgoNodes {
				ser.Y = append(ser.Y, float64(a.AllReduce[s][i][k].Total/a.AllReduce["ramp"][i][k].Total))
			}
			pn.Series = append(pn.Series, ser)
		}
		out = append(out, pn)
	}
	return append(out[:ratios], logIfWide(out[ratios:])...), nil
}

// fig22 is Algo's H2T/H2H per strategy, one panel per size.
func fig22() ([]plots.Panel, error) {
	a, err := repro.Algo()
	if err != nil {
		return nil, err
	}
	_, x := algoGPUs()
	var out []plots.Panel
	for i, size := range repro.AlgoSizes {
		out = append(out, plots.Panel{Title: fmt.Sprintf("%v all-reduce: H2T/H2H (H2H negligible above 10, H2H-bound below 1)", size), X: x,
			Y: plots.Axis{Label: "H2T / H2H", Log: true},
			Series: byScale(a, i, repro.AlgoStrategies, func(s string, k int) float64 {
				c := a.AllReduce[s][i][k]
				return float64(c.H2T / c.H2H)
			})})
	}
	return logIfWide(out), nil
}

// fig23 is Algo's reduce-scatter compute, single source (ring) and RAMP's many, and the ratio.
func fig23() ([]plots.Panel, error) {
	a, err := repro.Algo()
	if err != nil {
		return nil, err
	}
	xs, x := algoGPUs()
	tp := plots.Panel{Title: "compute of a 1 GB reduce-scatter (fp16, A100 roofline)", X: x, Y: plots.Axis{Label: "compute time", Time: true},
		Series: byScale(a, 0, []string{"ring", "ramp"}, func(s string, k int) float64 { return float64(a.ReduceScatter[s][k].Compute) })}
	ratio := plots.Series{Name: "speed-up", X: xs}
	for k := range repro.AlgoNodes {
		ratio.Y = append(ratio.Y, float64(a.ReduceScatter["ring"][k].Compute/a.ReduceScatter["ramp"][k].Compute))
	}
	sp := plots.Panel{Title: "RAMP's compute speed-up (§8.4.2: up to 2.8×)", X: x, Y: plots.Axis{Label: "speed-up (×)", Format: func(v float64) string { return fmt.Sprintf("%.2f", v) }},
		Series: []plots.Series{ratio}}
	return []plots.Panel{tp, sp}, nil
}
