package repro

import (
	"math"
	"testing"

	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/scaling"
)

// must unwraps a computation of the library for a test: an error stops the test binary with
// it (the library's runs do not fail on these fixed inputs).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// Fig. 18 / §8.2 ("a speed-up range of 7.6-171× (reduce-scatter and all-to-all)"): the ends are
// rows of the table (rampRows); here, that the smallest is reduce-scatter's and the largest
// all-to-all's.
func TestFig18Order(t *testing.T) {
	speedup := must(Fig18()).Speedup
	lo, hi := math.Inf(1), 0.0
	for _, sp := range speedup {
		lo, hi = math.Min(lo, sp), math.Max(hi, sp)
	}
	if speedup[network.ReduceScatter] != lo || speedup[network.AllToAll] != hi {
		t.Errorf("speed-ups %v: want the smallest for reduce-scatter and the largest for all-to-all", speedup)
	}
}

// §8.3–8.4, Fig. 21: bandwidth-matched (2.4 Tb/s per node, 1:1 fat tree) all-reduce (Algo).
// RAMP's speed-up over the ring grows with the number of GPUs for every size ("the speed-up
// increases with the number of devices involved"); its ends are rows of the table
// (fig21-ring-10mb, fig21-ring-10gb, fig21-hier-*). Over the hierarchical ring it never falls
// below 1.
func TestFig21Growth(t *testing.T) {
	a := must(Algo())
	for i, size := range AlgoSizes {
		prev := 0.0
		for k, n := range AlgoNodes {
			sp := float64(a.AllReduce["ring"][i][k].Total / a.AllReduce["ramp"][i][k].Total)
			if !(sp > prev) {
				t.Errorf("%v on %d GPUs: speed-up over ring %.3g does not grow (previous %.3g)", size, n, sp, prev)
			}
			prev = sp
		}
	}
	for i, sp := range must(Fig21()).Hier {
		if sp < 1 {
			t.Errorf("size %d: RAMP %.3g× the hierarchical ring, slower", i, sp)
		}
	}
}

// §8.1, Fig. 16: Megatron to the Table 9 losses on RAMP, the realistic SuperPod and TopoOpt
// (Section81). The shares and the speed-ups the paper quotes are rows of the table; here, the
// knee: the speed-up grows while the jobs are data-parallel dominant and flattens once they are
// model-parallel dominant (CE ≤ 1.67, all 65,536 GPUs in use).
func TestMegatronSection81Knee(t *testing.T) {
	speedups := must(Section81()).Speedups
	// Rows CE 2.5–1.7 are DP-dominant (CE > 1.67), rows 1.5–1.0 MP-dominant.
	for i := 1; i < 6; i++ {
		if speedups[i] < speedups[i-1] {
			t.Errorf("DP-dominant speed-up falls from %.2f to %.2f at CE %g", speedups[i-1], speedups[i], scaling.Table9[i].Loss)
		}
	}
	mp := speedups[6:]
	lo, hi := mp[0], mp[0]
	for _, s := range mp {
		lo, hi = math.Min(lo, s), math.Max(hi, s)
	}
	if hi/lo > 1.25 || lo < speedups[5] {
		t.Errorf("MP-dominant speed-ups %v should stay flat above the DP-dominant ones %v", mp, speedups[:6])
	}
}
