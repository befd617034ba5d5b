package figures

import (
	"fmt"
	"slices"

	"github.com/ddlest/ddlest/internal/repro"
	"github.com/ddlest/ddlest/plots"
)

func init() {
	register(
		Figure{Name: "sipac-fig7", Title: "SiPAC Fig. 7: Table II's all-reduces against network size (100 MB) and message size (1,024 CUs), α = 1 µs, 512 Gb/s",
			Panels: sipacFig7},
		Figure{Name: "sipac-fig9", Title: "SiPAC Fig. 9: links, transceivers and switches against network size (one plane; a transceiver at both ends of every link but SiPAC's WSS side)",
			Panels: sipacFig9},
		Figure{Name: "sipac-fig11", Title: "SiPAC Fig. 11: raw one-to-all, all-to-one and all-to-all of 1 MB per flow on 512 CUs per network",
			Panels: sipacFig11},
		Figure{Name: "sipac-fig13", Title: "SiPAC Fig. 13: hybrid-parallel iteration (all-to-all in MP groups, all-reduce across) of 100 MB against per-CU bandwidth",
			Panels: sipacFig13},
	)
}

// sipacAlgName is a Table II algorithm's series name: the network or strategy whose colour it
// takes (SiPCO is SiPAC's, H-Ring the hierarchical ring's).
var sipacAlgName = map[string]string{"ring": "ring", "mesh": "mesh", "hring": "hierarchical (H-Ring)", "sipco": "sipac (SiPCO)"}

// sipacFig7 is SiPACFig7's times against p at 100 MB and against the message size at p = 1,024.
func sipacFig7() ([]plots.Panel, error) {
	r, err := repro.SiPACFig7()
	if err != nil {
		return nil, err
	}
	var ps []float64
	for _, s := range repro.SiPACFig7Sizes {
		ps = append(ps, float64(s.P))
	}
	bp := plots.Panel{Title: "100 MB against network size (r = k = √p, L = 2; p = 4,096: r = 16, L = 3)",
		X: plots.Axis{Label: "network size p (CUs)", Log: true, Ticks: ps},
		Y: plots.Axis{Label: "all-reduce time", Log: true, Time: true, Ticks: msTicks}}
	mp := plots.Panel{Title: "1,024 CUs against message size (r = k = 32, L = 2)",
		X: plots.Axis{Label: "message size n (per CU)", Log: true, Format: plots.ByteTicks}, Y: plots.Axis{Label: "all-reduce time", Log: true, Time: true}}
	for _, alg := range repro.SiPACFig7Algs {
		bp.Series = append(bp.Series, plots.Series{Name: sipacAlgName[alg], X: ps, Y: r.BySize[alg]})
		mp.Series = append(mp.Series, plots.Series{Name: sipacAlgName[alg], X: repro.SiPACFig7Messages, Y: r.ByMessage[alg]})
	}
	return []plots.Panel{bp, mp}, nil
}

// sipacFig9 is SiPACFig9's counts against the network size, one panel per kind of equipment:
// SiPAC and BCube at L = 2 and 3 (r = 4 … 32), the three-level fat tree, the canonical Dragonfly
// and the 2D torus on repro.SiPACFig9's convention (the torus has no switch: it is left out of
// the switches panel, whose log axis cannot show 0).
func sipacFig9() ([]plots.Panel, error) {
	counts, err := repro.SiPACFig9()
	if err != nil {
		return nil, err
	}
	x := plots.Axis{Label: "network size p (CUs)", Log: true}
	var out []plots.Panel
	for _, kind := range []string{"links", "transceivers", "switches (WSS or packet switch; the torus has none)"} {
		pn := plots.Panel{Title: kind, X: x, Y: plots.Axis{Label: "count", Log: true}}
		for _, c := range counts {
			y := map[string][]float64{"links": c.Links, "transceivers": c.Transceivers}[kind]
			if y == nil {
				if y = c.Switches; slices.Max(y) == 0 {
					continue
				}
			}
			pn.Series = append(pn.Series, plots.Series{Name: Fig9Name(c), X: c.CUs, Y: y})
		}
		out = append(out, pn)
	}
	return out, nil
}

// Fig9Name is a Fig. 9 network's series name: the registry name, with SiPAC's and BCube's levels.
func Fig9Name(c repro.SiPACFig9Count) string {
	if c.L == 0 {
		return c.Fabric
	}
	return fmt.Sprintf("%s (L = %d)", c.Fabric, c.L)
}

// msTicks label a log time axis between its decades (1, 2, 5 × 10^k ms).
var msTicks = []float64{1e-3, 2e-3, 5e-3, 10e-3, 20e-3, 50e-3, 100e-3, 200e-3, 500e-3}

// sipacFig11 is SiPACFig11's time per pattern and network, and SiPAC's speed-up over each.
func sipacFig11() ([]plots.Panel, error) {
	r, err := repro.SiPACFig11()
	if err != nil {
		return nil, err
	}
	var xs []float64
	for i := range repro.SiPACPatterns {
		xs = append(xs, float64(i))
	}
	x := plots.Axis{Label: "traffic pattern (no collective algorithm)", Categories: repro.SiPACPatterns}
	tp := plots.Panel{Title: "1 MB per flow, 512 CUs, 2,048 Gb/s per CU (SiPAC r = 8, L = 3)",
		X: x, Y: plots.Axis{Label: "completion time", Log: true, Time: true, Ticks: msTicks}}
	sp := plots.Panel{Title: "SiPAC's speed-up (paper: SuperPod 3.6–5.3×, torus 1.4–5.9×, BCube 1.4–3.4×)",
		X: x, Y: plots.Axis{Label: "speed-up (×)", Log: true, Ticks: []float64{1, 1.5, 2, 3, 5, 10}}}
	for _, net := range repro.SiPACFig11Nets {
		tp.Series = append(tp.Series, plots.Series{Name: net, X: xs, Y: r.Times[net]})
		if net != "sipac" {
			sp.Series = append(sp.Series, plots.Series{Name: net, X: xs, Y: r.Speedups(net)})
		}
	}
	return []plots.Panel{tp, sp}, nil
}

// sipacFig13 is SiPACFig13's iteration times against the per-CU bandwidth, one panel per case.
func sipacFig13() ([]plots.Panel, error) {
	cases, err := repro.SiPACFig13()
	if err != nil {
		return nil, err
	}
	var out []plots.Panel
	for i, c := range cases {
		reading := map[int]string{1: " (the caption's reading)", 2: " (the text's reading)"}[i]
		pn := plots.Panel{Title: fmt.Sprintf("p = %d: d = %d DP groups of m = %d MP CUs%s", c.P, c.D, c.M, reading),
			X: plots.Axis{Label: "per-CU bandwidth (Gb/s)", Log: true, Ticks: repro.SiPACFig13Bandwidths},
			Y: plots.Axis{Label: "iteration time", Log: true, Time: true, Ticks: msTicks}}
		for _, net := range repro.SiPACFig13Nets {
			pn.Series = append(pn.Series, plots.Series{Name: net, X: repro.SiPACFig13Bandwidths, Y: c.Times[net]})
		}
		out = append(out, pn)
	}
	return out, nil
}
