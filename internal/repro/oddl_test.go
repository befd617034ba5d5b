package repro

import (
	"math"
	"slices"
	"testing"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/internal/units"
)

// The ODDL paper's published numbers are rows (oddl.go). These are its claims that are not one
// number: orderings and growth, on the same shared computations, and the hand counts behind
// the documented deviations.

// oddlIter is one iteration (s) of the §5A job, as the rows' runs.
func oddlIter(t testing.TB, model string, nodes int, s ODDLSetting, net ODDLNet, extra ...string) float64 {
	t.Helper()
	r, err := ODDLRun(model, nodes, s, net, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return float64(r.Result.Iteration.Total)
}

// oddlNet is the ODDLNets entry of a name.
func oddlNet(t testing.TB, name string) ODDLNet {
	t.Helper()
	i := slices.IndexFunc(ODDLNets, func(n ODDLNet) bool { return n.Name == name })
	if i < 0 {
		t.Fatalf("no network %q", name)
	}
	return ODDLNets[i]
}

// At 1,024 nodes: V15, ODDL's advantage is higher under VGG19 than VGG16 (the largest speed-up
// over SiP-Ring and over the fat tree + ring); V14, the fat tree + HD is slower than + ring for
// VGG below 400 Gb/s ("increased long-distance traffic"); V11, ODDL_10 stays faster than every
// baseline in all twelve settings.
//
// Documented deviation (doc.go): at 400 Gb/s with 16 MiB buffers VGG19's fat tree + HD (1.15×)
// is not slower than + ring (1.17×), the flow model's collisions costing only their bytes.
func TestODDLOrders(t *testing.T) {
	r, err := ODDL1024()
	if err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{"sip-ring", "fattree (ring)"} {
		if a, b := slices.Max(r.Speedups("vgg16", base)), slices.Max(r.Speedups("vgg19", base)); a >= b {
			t.Errorf("V15: over %s VGG16's largest speed-up %.3f is not below VGG19's %.3f", base, a, b)
		}
	}
	for _, model := range ODDLVGG {
		for i, s := range ODDLSettings {
			it := func(name string) float64 { return r.Iter[model][name][i] }
			if s.NIC < 400 && it("fattree (hd)") <= it("fattree (ring)") {
				t.Errorf("V14, %s at %d Gb/s, %v: fat tree + HD %.1f ms, not slower than + ring %.1f ms", model, s.NIC, s.Fusion, it("fattree (hd)")*1e3, it("fattree (ring)")*1e3)
			}
			for _, base := range []string{"sip-ring", "fattree (ring)", "fattree (hd)"} {
				if it(base) <= it("oddl_10") {
					t.Errorf("V11, %s at %d Gb/s, %v: ODDL_10 %.1f ms not faster than %s %.1f ms", model, s.NIC, s.Fusion, it("oddl_10")*1e3, base, it(base)*1e3)
				}
			}
		}
	}
}

// The cause of the documented V11 deviation (row oddl/v11-oddl10-change), by hand count: each HD
// step's gap grows by Δ = 5 µs + 2 × 5 µs × H (Eq. 1), 55 µs with the default H = 5 (A4: the L3
// fat tree's cross-pod path), and at 100 Gb/s with 16 MiB buffers every step of every fused
// buffer lies on the critical path, so VGG16's iteration grows by steps × Δ. A fused buffer's HD
// all-reduce takes 2·log2 1024 = 20 steps.
func TestODDLReconfigurationCause(t *testing.T) {
	s := ODDLSettings[0]
	r5, err := ODDLRun("vgg16", 1024, s, oddlNet(t, "oddl"))
	if err != nil {
		t.Fatal(err)
	}
	r10, err := ODDLRun("vgg16", 1024, s, oddlNet(t, "oddl_10"))
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for _, c := range r5.Result.Collectives {
		steps += 20 * c.Count
	}
	const delta = 55e-6 // (10 − 5) µs + 2 × (10 − 5) µs × 5 hops
	got := float64(r10.Result.Iteration.Total - r5.Result.Iteration.Total)
	if want := float64(steps) * delta; math.Abs(got-want) > 0.02*want {
		t.Errorf("ODDL_10 − ODDL = %.2f ms, want %d steps × 55 µs = %.2f ms (every gap on the critical path)", got*1e3, steps, want*1e3)
	}
}

// V3 (Table 4): ODDL on the testbed is not faster than the ideal one-switch network it is
// compared with (its circuits pay a gap per step and the WSS set-up; the paper: 97.8 ≥ 97.3).
func TestODDLTestbedOrder(t *testing.T) {
	r, err := ODDLTestbed()
	if err != nil {
		t.Fatal(err)
	}
	if r.ODDL < r.Switch {
		t.Errorf("ODDL %.2f min faster than one switch %.2f min", r.ODDL, r.Switch)
	}
}

// V7: ODDL's utilisation "maintains stability even with an increasing number of nodes" (its
// level, ≈ 85%, is two rows): VGG16 at 100 Gb/s and 16 MiB, within 5 pp from 128 to 1,024 nodes.
//
// From 64 nodes it is 5.6 pp, a documented deviation (doc.go): A4 reads H = 3 control hops at 64
// nodes or fewer (a 2-level control tree) and 5 above, so the per-step gap drops from 55 to
// 35 µs below 128 nodes; with H = 5 throughout the spread is 3.5 pp (checked).
func TestODDLUtilisationStable(t *testing.T) {
	r, err := ODDLFig12()
	if err != nil {
		t.Fatal(err)
	}
	var by []float64
	for i, n := range ODDLNodes {
		if n >= 128 {
			by = append(by, r.Util[0]["oddl"][i])
		}
	}
	if spread := slices.Max(by) - slices.Min(by); spread > 0.05 {
		t.Errorf("V7: utilisation spreads %.1f pp from 128 to 1,024 nodes, want within 5", 100*spread)
	}
	util := func(n int) float64 {
		rep, err := ODDLRun("vgg16", n, ODDLSettings[0], oddlNet(t, "oddl"), "ctrl_hops=5")
		if err != nil {
			t.Fatal(err)
		}
		return ODDLPointOf(rep, 100).Util
	}
	if spread := util(64) - util(1024); math.Abs(spread) > 0.05 {
		t.Errorf("V7 with H = 5 throughout: %.1f pp from 64 to 1,024 nodes, want within 5", 100*spread)
	}
}

// Utilisation by hand: one all-reduce of 8 MB over 4 nodes taking 1 ms at 100 Gb/s moves
// 2 × 3/4 × 8 MB = 12 MB per node, against 12.5 MB the line carries in 1 ms: 96%.
func TestUtilisation(t *testing.T) {
	got := Utilisation([]estimator.CollectiveTime{{Bytes: 8e6, Group: 4, Count: 1, Time: 1e-3}}, units.Gbps(100))
	if math.Abs(got-0.96) > 1e-12 {
		t.Errorf("utilisation %g, want 0.96", got)
	}
}

// V12, ResNet-50: ODDL, SiP-Ring and fat tree + ring perform similarly (within 10%), and fat tree
// + HD is the slowest when the network grows beyond 256 nodes (Fig. 10).
//
// Met: within 10% at 64 and 128 nodes in all six settings; fat tree + HD the slowest at 100 Gb/s
// from 256 to 512 nodes. Documented deviation: at 512–1,024 nodes the rings fall 1.15–2.34×
// behind, and at 1,024 SiP-Ring is the slowest. A ring all-reduce takes 2(N−1) = 2,046 steps of
// α each per fused buffer, and ResNet-50's ≈ 100 MB of gradients make about seven 16 MiB
// buffers: no single SiP-Ring α gives both V2 (1.7× for VGG19) and V12 (checked below: a small α
// that makes ResNet-50 similar leaves VGG19 under 1.2×).
func TestODDLResNet(t *testing.T) {
	oddl := oddlNet(t, "oddl")
	for _, n := range []int{64, 128} {
		for _, s := range ODDLSettings {
			o := oddlIter(t, "resnet50", n, s, oddl)
			for _, base := range []string{"sip-ring", "fattree (ring)"} {
				if b := oddlIter(t, "resnet50", n, s, oddlNet(t, base)); b/o > 1.1 || b/o < 1/1.1 {
					t.Errorf("V12, %d nodes, %d Gb/s, %v: %s %.2f× ODDL's iteration, want within 10%%", n, s.NIC, s.Fusion, base, b/o)
				}
			}
		}
	}
	r, err := ODDLFig10()
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range ODDLNodes {
		if n < 256 || n > 512 {
			continue
		}
		hd := r.Epoch[0]["fattree (hd)"][i]
		for _, base := range []string{"oddl", "sip-ring", "fattree (ring)"} {
			if b := r.Epoch[0][base][i]; b >= hd {
				t.Errorf("V12, %d nodes at 100 Gb/s: %s's epoch %.1f s, not faster than fat tree + HD %.1f s", n, base, b, hd)
			}
		}
	}
	// The inconsistency: for every α, V2 (≥ 1.6×) and ResNet-50 within 10% exclude each other.
	s, ring := ODDLSettings[0], oddlNet(t, "sip-ring")
	for _, alpha := range []string{"0.5", "1", "2", "3", "6"} {
		resnet := oddlIter(t, "resnet50", 1024, s, ring, "ring_alpha_us="+alpha) / oddlIter(t, "resnet50", 1024, s, oddl)
		v2 := oddlIter(t, "vgg19", 1024, s, ring, "ring_alpha_us="+alpha) / oddlIter(t, "vgg19", 1024, s, oddl)
		if v2 >= 1.6 && resnet <= 1.1 {
			t.Errorf("α = %s µs gives V2 %.2f× and ResNet-50 %.2f×: the documented V2/V12 inconsistency is gone", alpha, v2, resnet)
		}
	}
}

// V14: "ODDL achieves better bandwidth utilization than other networks in all cases" (§5A; the
// conclusion: "in all scenarios"). No number is quoted, so the claim is a shape: ddlest meets it
// — ODDL's utilisation the highest of the five networks — for VGG16 and VGG19 from 128 nodes up
// in all six Table 2 settings and for ResNet-50 from 128 nodes up at 100 and 200 Gb/s, and
// contradicts it everywhere else (documented deviation, network/oddl/doc.go): at 16–64 nodes
// the fat tree + ring (or + HD) is ahead for every model and setting, the fat tree + HD for
// ResNet-50 at 400 Gb/s at every size and for LeNet-5 everywhere. The test holds the region
// exactly, so that a change moving its edge fails.
//
// The cause is Eq. 1's gap before every HD step (5 + 2·5·H µs: 35 µs with H = 3 up to 64 nodes,
// 55 µs above) against the fat tree's 1 µs per switch: where a step's bytes take little time
// (small systems' large ring steps beside ODDL's 2·log2 N gaps, 400 Gb/s, LeNet's 247 kB) the
// gaps decide. Checked: with no gap (reconfig_us = ctrl_hop_us = 0) ODDL is the highest again at
// three of the contradicting corners.
func TestODDLUtilisationAllCases(t *testing.T) {
	sweeps := map[string]func() (ODDLScaling, error){"resnet50": ODDLFig10, "lenet5": ODDLFig11, "vgg16": ODDLFig12, "vgg19": ODDLFig13}
	highest := func(r ODDLScaling, si, k int) (bool, string) {
		for _, net := range ODDLNets[1:] {
			if r.Util[si][net.Name][k] > r.Util[si]["oddl"][k] {
				return false, net.Name
			}
		}
		return true, ""
	}
	for model, sweep := range sweeps {
		r, err := sweep()
		if err != nil {
			t.Fatal(err)
		}
		for si, s := range ODDLSettings {
			for k, n := range ODDLNodes {
				want := model != "lenet5" && n >= 128 && !(model == "resnet50" && s.NIC == 400)
				if got, by := highest(r, si, k); got != want {
					t.Errorf("V14, %s at %d nodes, %d Gb/s, %v: ODDL's utilisation the highest %v (above it: %q), documented %v", model, n, s.NIC, s.Fusion, got, by, want)
				}
			}
		}
	}
	for _, c := range []struct {
		model string
		n, si int
	}{{"vgg16", 16, 0}, {"resnet50", 1024, ODDLSettingIndex(400, 16*units.MiB)}, {"lenet5", 1024, 0}} {
		r, err := sweeps[c.model]()
		if err != nil {
			t.Fatal(err)
		}
		s, k := ODDLSettings[c.si], slices.Index(ODDLNodes, c.n)
		rep, err := ODDLRun(c.model, c.n, s, oddlNet(t, "oddl"), "reconfig_us=0", "ctrl_hop_us=0")
		if err != nil {
			t.Fatal(err)
		}
		u := ODDLPointOf(rep, s.NIC).Util
		for _, net := range ODDLNets[1:] {
			if o := r.Util[c.si][net.Name][k]; o > u {
				t.Errorf("V14 cause, %s at %d nodes, %d Gb/s: without the gap ODDL's utilisation %.1f%% is still below %s's %.1f%%", c.model, c.n, s.NIC, 100*u, net.Name, 100*o)
			}
		}
	}
}

// V13's cause (row oddl/v13-lenet-16mib), by count: LeNet-5's 61,706 FP32 parameters are
// 247 kB of gradients, under either fusion threshold, so the 16 and 32 MiB runs are the same
// job (the paper's "outperforms" at 16 MB against "similar" at 32 MB cannot appear); and
// without Eq. 1's gap ODDL is the fastest network at 1,024 nodes.
func TestODDLLeNetCause(t *testing.T) {
	r, err := ODDLFig11()
	if err != nil {
		t.Fatal(err)
	}
	if grads := 61706 * 4.0; grads >= float64(ODDLFusions[0]) {
		t.Fatalf("LeNet-5's %g B of gradients do not fit one 16 MiB buffer", grads)
	}
	for _, nic := range []int{100, 200, 400} {
		a, b := ODDLSettingIndex(nic, ODDLFusions[0]), ODDLSettingIndex(nic, ODDLFusions[1])
		for _, net := range ODDLNets {
			if !slices.Equal(r.Epoch[a][net.Name], r.Epoch[b][net.Name]) {
				t.Errorf("V13, %s at %d Gb/s: 16 MiB epochs %v differ from 32 MiB's %v (one buffer holds the gradients)", net.Name, nic, r.Epoch[a][net.Name], r.Epoch[b][net.Name])
			}
		}
	}
	rep, err := ODDLRun("lenet5", 1024, ODDLSettings[0], oddlNet(t, "oddl"), "reconfig_us=0", "ctrl_hop_us=0")
	if err != nil {
		t.Fatal(err)
	}
	k := slices.Index(ODDLNodes, 1024)
	for _, net := range ODDLNets[1:] {
		if e := r.Epoch[0][net.Name][k]; e < ODDLPointOf(rep, 100).Epoch {
			t.Errorf("V13 cause: without the gap ODDL's epoch %.3g s is still slower than %s's %.3g s", ODDLPointOf(rep, 100).Epoch, net.Name, e)
		}
	}
}
