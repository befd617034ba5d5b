package repro

import (
	"testing"

	"github.com/ddlest/ddlest/network"
)

// Fig. 15: a reduce-scatter's algorithmic steps. The ring takes p − 1 (a hand count: every
// rank passes one chunk per step until all p − 1 others' have arrived); the hierarchical ring
// Σ(p_i − 1) < p − 1 beyond one DGX; RAMP-x never more than 4 at any scale (its 65,536-node
// value is a row) and never fewer as the scale grows.
func TestFig15Steps(t *testing.T) {
	a := must(Algo())
	prev := 0
	for k, n := range AlgoNodes {
		if got := a.ReduceScatter["ring"][k].Steps; int(got) != n-1 {
			t.Errorf("ring on %d: %d steps, want %d", n, got, n-1)
		}
		if h := a.ReduceScatter["hierarchical"][k].Steps; n > 8 && int(h) >= n-1 {
			t.Errorf("hierarchical on %d: %d steps, not fewer than the ring's", n, h)
		}
		r := int(a.ReduceScatter["ramp"][k].Steps)
		if r > 4 || r < prev {
			t.Errorf("ramp on %d: %d steps (previous %d)", n, r, prev)
		}
		prev = r
	}
}

// Fig. 19 / §8.3: "The best performing baseline (disregarding Broadcast) is always Fat-Tree",
// and apart from all-to-all and broadcast RAMP's speed-up over the fat tree and TopoOpt grows
// with the rate ("the speed-up further increases when the data-rate increases").
func TestFig19Shape(t *testing.T) {
	f := must(Fig19())
	for i, op := range f.Ops {
		if op == network.Broadcast {
			continue
		}
		for r := range Fig19Rates {
			ft := f.Speedup["superpod"][i][r]
			for _, net := range Fig19Nets[1:] {
				if f.Speedup[net][i][r] < ft {
					t.Errorf("%v at %g Tb/s: %s is a better baseline than the fat tree", op, Fig19Rates[r], net)
				}
			}
		}
		if op == network.AllToAll {
			continue
		}
		for _, net := range []string{"superpod", "topoopt"} {
			sp := f.Speedup[net][i]
			for r := 1; r < len(sp); r++ {
				if sp[r] < sp[r-1] {
					t.Errorf("%s %v: speed-up falls from %.3g to %.3g at %g Tb/s", net, op, sp[r-1], sp[r], Fig19Rates[r])
				}
			}
		}
	}
}

// Fig. 22 / §8.4.1: the ring-based strategies slide from data-transfer bound towards H2H bound
// as the scale grows, while "the small number of algorithmic steps in RAMP keep the ratio
// approximately constant with the number of nodes": within a factor 5 from 16 to 65,536 GPUs,
// where the single ring's falls by more than 10³.
func TestFig22Shape(t *testing.T) {
	a := must(Algo())
	for i, size := range AlgoSizes {
		spread := func(s string) float64 {
			lo, hi := h2tOverH2H(a.AllReduce[s][i][0]), h2tOverH2H(a.AllReduce[s][i][0])
			for _, c := range a.AllReduce[s][i] {
				lo, hi = min(lo, h2tOverH2H(c)), max(hi, h2tOverH2H(c))
			}
			return hi / lo
		}
		if r, ring := spread("ramp"), spread("ring"); r > 5 || ring < 1e3 {
			t.Errorf("%v: H2T/H2H spread %.3g for RAMP, %.3g for the ring", size, r, ring)
		}
	}
}

// Fig. 23: summing the scattered 1 GB from many sources at once is faster than the ring's
// single source at every scale (the 65,536-GPU ratio is a row).
func TestFig23Shape(t *testing.T) {
	a := must(Algo())
	for k, n := range AlgoNodes {
		if r, ring := a.ReduceScatter["ramp"][k].Compute, a.ReduceScatter["ring"][k].Compute; !(r < ring) {
			t.Errorf("%d GPUs: RAMP compute %v, ring %v", n, r, ring)
		}
	}
}
