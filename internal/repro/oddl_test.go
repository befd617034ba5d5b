package repro

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/profile/roofline"
)

// oddlIter is one iteration of the ODDL simulation's data-parallel job (ODDL §5A, Table 2): a
// zoo model at batch 16 per 2080 Ti (its convolution efficiency fitted once, configs/gpus.json),
// FP32, Horovod fusion at the threshold with 1 µs per fused buffer, on 1,024 nodes.
func oddlIter(t testing.TB, model string, nic int, fusion units.Bytes, preset string, params ...string) float64 {
	t.Helper()
	iter, _ := oddlRun(t, model, 1024, nic, fusion, preset, params...)
	return iter
}

// oddlRun is oddlIter on gpus nodes; it also returns the gradient reductions' time per
// iteration (every fused buffer's all-reduce, end to end).
func oddlRun(t testing.TB, model string, gpus, nic int, fusion units.Bytes, preset string, params ...string) (iter, comm float64) {
	t.Helper()
	n := job.NetworkChoice{Preset: preset, Params: append([]string{fmt.Sprintf("nic_gbps=%d", nic)}, params...)}
	if preset == "oddl" {
		n = job.NetworkChoice{Name: "oddl", Params: n.Params}
	}
	r, err := job.DataParallel(job.DataParallelOptions{Workload: "dp", Model: model, GPUs: gpus, Batch: 16,
		Precision: partition.FP32, Optimizer: partition.SGD, BucketBytes: fusion, Fusion: partition.FuseTensors,
		FusionLatency: units.Us(1), RunOptions: job.RunOptions{GPU: "rtx2080ti", Efficiency: roofline.DefaultEfficiency, Network: n}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Result.Collectives {
		comm += float64(c.Time)
	}
	return float64(r.Result.Iteration.Total), comm
}

// ODDL's speed-ups at 1,024 nodes (reference/oddl.md §6): V1 (fat tree + ring, 1.6× at 100 Gb/s
// and 16 MB, ±25%, nothing fitted on it), V2 (SiP-Ring 1.7×, the point ring_alpha_us is fitted
// on), and out of sample over 100/200/400 Gb/s × 16/32 MiB the ranges of V4, V5, V8, V9 (ends
// ± 0.2), VGG16's largest below VGG19's (V15).
func TestODDLSpeedups(t *testing.T) {
	type rng struct{ lo, hi float64 }
	paper := map[string]map[string]rng{ // model → baseline → the paper's range
		"vgg16": {"sip-ring": {1.1, 1.6}, "oddl-ft": {1.1, 1.55}}, // V4, V5
		"vgg19": {"sip-ring": {1.1, 1.7}, "oddl-ft": {1.1, 1.6}},  // V8, V9
	}
	got := map[string]map[string]rng{}
	for _, model := range []string{"vgg16", "vgg19"} {
		got[model] = map[string]rng{}
		for _, base := range []string{"sip-ring", "oddl-ft"} {
			r := rng{lo: 1e9}
			for _, nic := range []int{100, 200, 400} {
				for _, f := range []units.Bytes{16 * units.MiB, 32 * units.MiB} {
					s := oddlIter(t, model, nic, f, base) / oddlIter(t, model, nic, f, "oddl")
					r.lo, r.hi = min(r.lo, s), max(r.hi, s)
					if model == "vgg19" && nic == 100 && f == 16*units.MiB {
						want := map[string]float64{"oddl-ft": 1.6, "sip-ring": 1.7}[base]
						tol := map[string]float64{"oddl-ft": 0.25, "sip-ring": 0.02}[base] // V1 ±25%; V2 is the fit
						if s < want*(1-tol) || s > want*(1+tol) {
							t.Errorf("VGG19 at 100 Gb/s, 16 MiB: ODDL %.3f× faster than %s, paper %.1f× (±%.0f%%)", s, base, want, 100*tol)
						}
					}
				}
			}
			got[model][base] = r
			p := paper[model][base]
			if r.lo < p.lo-0.2 || r.lo > p.lo+0.2 || r.hi < p.hi-0.2 || r.hi > p.hi+0.2 {
				t.Errorf("%s over %s: speed-ups %.2f–%.2f, paper %.2f–%.2f (ends ± 0.2)", model, base, r.lo, r.hi, p.lo, p.hi)
			}
		}
	}
	for _, base := range []string{"sip-ring", "oddl-ft"} {
		if got["vgg16"][base].hi >= got["vgg19"][base].hi {
			t.Errorf("V15: over %s VGG16's largest speed-up %.3f is not below VGG19's %.3f", base, got["vgg16"][base].hi, got["vgg19"][base].hi)
		}
	}
}

// V3 (Table 4): the 4-node testbed, ResNet-50 with HD, ODDL within [1.000, 1.02] of one 100 GE
// switch (paper 97.8 / 97.3 min = 1.005), on Ascend 910s.
func TestODDLTestbed(t *testing.T) {
	run := func(n job.NetworkChoice) float64 {
		r, err := job.DataParallel(job.DataParallelOptions{Workload: "dp", Model: "resnet50", GPUs: 4,
			Precision: partition.MixedFP16, Optimizer: partition.SGD, BucketBytes: 64 * units.MiB, Fusion: partition.FuseTensors,
			FusionLatency: units.Us(1), RunOptions: job.RunOptions{GPU: "ascend910", Efficiency: roofline.DefaultEfficiency, Epochs: 20, Network: n}})
		if err != nil {
			t.Fatal(err)
		}
		return float64(r.Result.TimeToAccuracy)
	}
	oddl := run(job.NetworkChoice{Name: "oddl", Params: []string{"strategy=hd"}})
	sw := run(job.NetworkChoice{Preset: "oddl-testbed"})
	if r := oddl / sw; r < 1 || r > 1.02 {
		t.Errorf("ODDL / one switch over 20 epochs = %.4f (%.1f / %.1f min), want [1.000, 1.02] (Table 4: 97.8 / 97.3)", r, oddl/60, sw/60)
	}
}

// oddlSettings are the six settings the paper's ranges span (reference/oddl.md §7.2): NIC
// 100/200/400 Gb/s × fusion threshold 16/32 MiB (Table 2).
var oddlSettings = []struct {
	nic    int
	fusion units.Bytes
}{{100, 16 * units.MiB}, {100, 32 * units.MiB}, {200, 16 * units.MiB}, {200, 32 * units.MiB}, {400, 16 * units.MiB}, {400, 32 * units.MiB}}

// Fat tree + HD at 1,024 nodes (ECMP-hashed, so long-distance HD steps collide): V6, VGG16
// 2.4–7× slower than ODDL, and V10, VGG19 2–7.1×, each end ±50%; V14, slower than fat tree + ring
// for VGG ("increased long-distance traffic").
//
// Documented deviations (doc.go, README): V10's top end is 3.44× (needs ≥ 3.55×) and at
// 400 Gb/s with 16 MiB buffers VGG19's HD is 1.15× against the ring's 1.17×: a flow model
// charges a collision its shared link's bytes and nothing more; the paper's packet-level
// OMNeT++ fat tree (routing, buffers and transport not given, A16) loses more to congestion
// than that.
func TestODDLFatTreeHD(t *testing.T) {
	for _, tc := range []struct {
		model  string
		lo, hi float64 // the paper's range
		v      string
	}{{"vgg16", 2.4, 7, "V6"}, {"vgg19", 2, 7.1, "V10"}} {
		lo, hi := 1e9, 0.0
		for _, s := range oddlSettings {
			oddl := oddlIter(t, tc.model, s.nic, s.fusion, "oddl")
			hd := oddlIter(t, tc.model, s.nic, s.fusion, "oddl-ft", "strategy=hd") / oddl
			ring := oddlIter(t, tc.model, s.nic, s.fusion, "oddl-ft") / oddl
			lo, hi = min(lo, hd), max(hi, hd)
			if s.nic < 400 && hd <= ring {
				t.Errorf("V14, %s at %d Gb/s, %s: fat tree + HD %.2f× ODDL's iteration, not slower than + ring %.2f×", tc.model, s.nic, s.fusion, hd, ring)
			}
		}
		if lo < tc.lo/2 || lo > tc.lo*1.5 {
			t.Errorf("%s, %s: smallest speed-up over fat tree + HD %.2f×, paper %.1f× (±50%%)", tc.v, tc.model, lo, tc.lo)
		}
		if tc.v == "V6" && (hi < tc.hi/2 || hi > tc.hi*1.5) {
			t.Errorf("V6, vgg16: largest speed-up over fat tree + HD %.2f×, paper %.1f× (±50%%)", hi, tc.hi)
		}
	}
}

// V11: from (5 µs, 5 µs) to (10 µs, 10 µs) of reconfiguration and control hop the epoch time
// changes by less than 4%, and ODDL_10 stays faster than every baseline (VGG16, VGG19).
//
// ODDL_10 stays fastest in all twelve settings. The < 4% holds in ten; at 100 Gb/s with 16 MiB
// buffers it is 6.5% (VGG16) and 5.4% (VGG19), a documented deviation. Its cause, checked here by
// hand count: each HD step's gap grows by Δ = 5 µs + 2 × 5 µs × H (Eq. 1), 55 µs with the
// default H = 5 (A4: the L3 fat tree's cross-pod path), and at that setting every step of every
// fused buffer lies on the critical path, so the iteration grows by steps × Δ. The paper does
// not give H; its V11 holds for H ≤ 2 (checked below), while V7's ≈ 85% utilisation holds for
// H = 5 (TestODDLUtilisation): the two claims pull H apart, and the default keeps A4's reading.
func TestODDLReconfigurationSensitivity(t *testing.T) {
	for _, hops := range []string{"", "ctrl_hops=2"} {
		worst := 0.0
		for _, model := range []string{"vgg16", "vgg19"} {
			for _, s := range oddlSettings {
				params := []string{}
				if hops != "" {
					params = append(params, hops)
				}
				o5 := oddlIter(t, model, s.nic, s.fusion, "oddl", params...)
				o10 := oddlIter(t, model, s.nic, s.fusion, "oddl-10", params...)
				worst = max(worst, o10/o5-1)
				for _, base := range [][]string{{"sip-ring"}, {"oddl-ft"}, {"oddl-ft", "strategy=hd"}} {
					if b := oddlIter(t, model, s.nic, s.fusion, base[0], base[1:]...); b <= o10 {
						t.Errorf("V11 (%s), %s at %d Gb/s, %s: ODDL_10 %.1f ms not faster than %v %.1f ms", hops, model, s.nic, s.fusion, o10*1e3, base, b*1e3)
					}
				}
			}
		}
		if hops == "ctrl_hops=2" && worst >= 0.04 {
			t.Errorf("V11 with H = 2: ODDL_10 changes the iteration by up to %.1f%%, paper < 4%%", 100*worst)
		}
	}
	// The cause at 100 Gb/s, 16 MiB, VGG16: ODDL_10 − ODDL = HD steps × 55 µs. A fused buffer's
	// HD all-reduce takes 2·log2 1024 = 20 steps.
	r5 := dpReport(t, "vgg16", "oddl")
	r10 := dpReport(t, "vgg16", "oddl-10")
	steps := 0
	for _, c := range r5.Result.Collectives {
		steps += 20 * c.Count
	}
	const delta = 55e-6 // (10 − 5) µs + 2 × (10 − 5) µs × 5 hops
	got := float64(r10.Result.Iteration.Total - r5.Result.Iteration.Total)
	if want := float64(steps) * delta; math.Abs(got-want) > 0.02*want {
		t.Errorf("ODDL_10 − ODDL = %.2f ms, want %d steps × 55 µs = %.2f ms (every gap on the critical path)", got*1e3, steps, want*1e3)
	}
	if share := got / float64(r5.Result.Iteration.Total); share < 0.04 {
		t.Errorf("the documented V11 deviation is gone (%.1f%% < 4%%): update doc.go and this test", 100*share)
	}
}

// dpReport is ODDL's VGG job at 1,024 nodes, 100 Gb/s, 16 MiB fusion on a network preset (or
// "oddl"), as oddlRun.
func dpReport(t *testing.T, model, preset string) *job.Report {
	t.Helper()
	n := job.NetworkChoice{Preset: preset, Params: []string{"nic_gbps=100"}}
	if preset == "oddl" {
		n = job.NetworkChoice{Name: "oddl", Params: n.Params}
	}
	r, err := job.DataParallel(job.DataParallelOptions{Workload: "dp", Model: model, GPUs: 1024, Batch: 16,
		Precision: partition.FP32, Optimizer: partition.SGD, BucketBytes: 16 * units.MiB, Fusion: partition.FuseTensors,
		FusionLatency: units.Us(1), RunOptions: job.RunOptions{GPU: "rtx2080ti", Efficiency: roofline.DefaultEfficiency, Network: n}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// V7: ODDL's bandwidth utilisation, 2(N−1)/N × gradient bytes / (all-reduce time × NIC rate)
// (the definition; the paper gives none, A15), is ≈ 85% at 100 Gb/s (±10 pp) and stable
// as the system grows. VGG16's gradients: 138.36 M FP32 parameters (torchvision, reference/
// oddl.md §5.1) = 553.44 MB.
//
// Stable within 5 pp from 128 to 1,024 nodes; from 64 nodes it is 5.6 pp, a documented
// deviation: A4 reads H = 3 control hops at 64 nodes or fewer (a 2-level control tree) and 5
// above, so the per-step gap drops from 55 to 35 µs below 128 nodes; with H = 5 throughout the
// spread is 3.5 pp (checked).
func TestODDLUtilisation(t *testing.T) {
	const gradBytes = 138.36e6 * 4
	util := func(n int, params ...string) float64 {
		_, comm := oddlRun(t, "vgg16", n, 100, 16*units.MiB, "oddl", params...)
		return 2 * float64(n-1) / float64(n) * gradBytes * 8 / 100e9 / comm
	}
	var by []float64
	for _, n := range []int{64, 128, 256, 512, 1024} {
		u := util(n)
		by = append(by, u)
		if u < 0.75 || u > 0.95 {
			t.Errorf("V7: utilisation %.1f%% at %d nodes, paper ≈ 85%% (±10 pp)", 100*u, n)
		}
	}
	if spread := slices.Max(by[1:]) - slices.Min(by[1:]); spread > 0.05 {
		t.Errorf("V7: utilisation spreads %.1f pp from 128 to 1,024 nodes, want within 5", 100*spread)
	}
	if spread := util(64, "ctrl_hops=5") - util(1024, "ctrl_hops=5"); math.Abs(spread) > 0.05 {
		t.Errorf("V7 with H = 5 throughout: %.1f pp from 64 to 1,024 nodes, want within 5", 100*spread)
	}
}

// V12, ResNet-50: ODDL, SiP-Ring and fat tree + ring perform similarly (within 10%), and fat tree
// + HD is the slowest when the network grows beyond 256 nodes.
//
// Met: within 10% at 64 and 128 nodes in all six settings; fat tree + HD the slowest at 100 Gb/s
// from 256 to 512 nodes. Documented deviation: at 512–1,024 nodes the rings fall 1.15–2.34×
// behind, and at 1,024 SiP-Ring is the slowest. A ring all-reduce takes 2(N−1) = 2,046 steps of
// α each per fused buffer, and ResNet-50's ≈ 100 MB of gradients make about seven 16 MiB
// buffers: no single SiP-Ring α gives both V2 (1.7× for VGG19) and V12 (checked below: a small α
// that makes ResNet-50 similar leaves VGG19 under 1.2×).
func TestODDLResNet(t *testing.T) {
	for _, n := range []int{64, 128} {
		for _, s := range oddlSettings {
			o, _ := oddlRun(t, "resnet50", n, s.nic, s.fusion, "oddl")
			for _, base := range []string{"sip-ring", "oddl-ft"} {
				if b, _ := oddlRun(t, "resnet50", n, s.nic, s.fusion, base); b/o > 1.1 || b/o < 1/1.1 {
					t.Errorf("V12, %d nodes, %d Gb/s, %s: %s %.2f× ODDL's iteration, want within 10%%", n, s.nic, s.fusion, base, b/o)
				}
			}
		}
	}
	for _, n := range []int{256, 512} {
		hd, _ := oddlRun(t, "resnet50", n, 100, 16*units.MiB, "oddl-ft", "strategy=hd")
		for _, base := range []string{"oddl", "sip-ring", "oddl-ft"} {
			if b, _ := oddlRun(t, "resnet50", n, 100, 16*units.MiB, base); b >= hd {
				t.Errorf("V12, %d nodes at 100 Gb/s: %s %.1f ms, not faster than fat tree + HD %.1f ms", n, base, b*1e3, hd*1e3)
			}
		}
	}
	// The inconsistency: for every α, V2 (≥ 1.6×) and ResNet-50 within 10% exclude each other.
	for _, alpha := range []string{"0.5", "1", "2", "3", "6"} {
		resnet := oddlIter(t, "resnet50", 100, 16*units.MiB, "sip-ring", "ring_alpha_us="+alpha) / oddlIter(t, "resnet50", 100, 16*units.MiB, "oddl")
		v2 := oddlIter(t, "vgg19", 100, 16*units.MiB, "sip-ring", "ring_alpha_us="+alpha) / oddlIter(t, "vgg19", 100, 16*units.MiB, "oddl")
		if v2 >= 1.6 && resnet <= 1.1 {
			t.Errorf("α = %s µs gives V2 %.2f× and ResNet-50 %.2f×: the documented V2/V12 inconsistency is gone", alpha, v2, resnet)
		}
	}
}
