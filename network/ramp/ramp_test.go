package ramp

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

func newModel(t *testing.T, gpus int, pairs ...string) network.Model {
	t.Helper()
	spec := Spec()
	cfg := spec.NewConfig()
	if err := params.SetPairs(cfg, pairs); err != nil {
		t.Fatal(err)
	}
	m, err := spec.New(cfg, network.Env{GPUs: gpus})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func price(t *testing.T, m network.Model, op network.Op, s units.Bytes, p int) network.Cost {
	t.Helper()
	g := network.Group{Size: p, Stride: 1}
	c, err := m.Price(network.Collective{Op: op, Bytes: s, Group: g, DType: dtype.FP16})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// RAMP §3, Table 3: Λ = 64, x = J = 32, b = 1, B = 400 Gb/s give 65,536 nodes at 12.8 Tb/s
// (rows ramp/nodes and ramp/node-capacity of the reproduction table, internal/repro). Here, the
// closed form: node_tbps = 2.4 (the algorithmic comparison, §7.5) sets B = 2.4T/32 = 75 Gb/s.
func TestDefaults(t *testing.T) {
	c := DefaultConfig()
	c.NodeTbps = 2.4
	if math.Abs(c.TrxRate().Gbit()-75) > 1e-9 {
		t.Errorf("B at 2.4 Tb/s = %v", c.TrxRate())
	}
}

// RAMP §5's "up to 4 (8 for reduce and all-reduce) algorithmic steps" at every scale up to 65,536
// nodes are rows of the reproduction table (internal/repro: ramp/steps-4, ramp/steps-8). Here,
// that every collective takes at least one step, and how the node count factors into the
// subgroup sizes x, x, J, Λ/x of Table 5.
func TestStepCountsUpToMaxScale(t *testing.T) {
	m := newModel(t, 65536, "strategy=ramp")
	for _, p := range []int{2, 3, 7, 32, 33, 100, 1000, 1024, 2048, 4096, 30000, 65536} {
		for _, op := range []network.Op{network.ReduceScatter, network.AllGather, network.AllToAll, network.Scatter, network.Gather,
			network.AllReduce, network.Reduce} {
			if c := price(t, m, op, 1e9, p); c.Steps < 1 {
				t.Errorf("%s on %d nodes: %d steps", op, p, c.Steps)
			}
		}
	}
	n, _ := DefaultConfig().Subgroups(65536)
	if n != [4]int{32, 32, 32, 2} {
		t.Errorf("65,536 nodes factor as %v, want x, x, J, Λ/x = 32, 32, 32, 2", n)
	}
	if n, _ := DefaultConfig().Subgroups(2048); n != [4]int{32, 32, 2, 1} {
		t.Errorf("2,048 nodes factor as %v", n)
	}
	if _, err := DefaultConfig().Subgroups(65537); errs.ExitCode(err) != errs.ExitUsage {
		t.Errorf("65,537 nodes: %v", err)
	}
}

// Eqs. 3–5, per reference/ramp.md §2.7: the corrected rule gives each of the d−1 peers
// ⌊x/(d−1)⌋ groups — 12.8 Tb/s at d = 2, 3, 5; 12.0 at d = 4; 12.4 at d = 32 — and Eq. 3 as
// printed gives 6.8, 3.6, 2.8, 6.0 and 12.4 Tb/s at d = 2, 4, 8, 16, 32.
func TestEffectiveBandwidth(t *testing.T) {
	c := DefaultConfig()
	io := func(step, d int) float64 { return float64(c.groupsPerPeer(step, d)*(d-1)) * 0.4 } // Tb/s
	for d, want := range map[int]float64{2: 12.8, 3: 12.8, 4: 12.0, 5: 12.8, 32: 12.4} {
		if got := io(0, d); math.Abs(got-want) > 1e-9 {
			t.Errorf("corrected, d=%d: %g Tb/s, want %g", d, got, want)
		}
	}
	c.TrxRule = "paper"
	for d, want := range map[int]float64{2: 6.8, 4: 3.6, 8: 2.8, 16: 6.0, 32: 12.4} {
		if got := io(0, d); math.Abs(got-want) > 1e-9 {
			t.Errorf("paper Eq. 3, d=%d: %g Tb/s, want %g", d, got, want)
		}
	}
	// Step 4 (formula 1) always drives all x groups.
	if got := io(3, 2); got != 12.8 {
		t.Errorf("step 4: %g Tb/s", got)
	}
}

// reference/ramp.md §2.8 sanity example: 1 GB all-reduce on 65,536 nodes at 12.8 Tb/s — step 1
// H2T (1 GB/32)/50 GB/s = 625 µs, step 2 19.5 µs, step 3 0.6 µs, step 4 one slot; 8 steps of
// 1.4 µs H2H = 11.2 µs. Steps 1–3 serve each of the 31 peers with one 400 Gb/s group.
func TestAllReduceByHand(t *testing.T) {
	c := price(t, newModel(t, 65536, "strategy=ramp"), network.AllReduce, 1e9, 65536)
	if c.Steps != 8 || math.Abs(float64(c.H2H)-11.2e-6) > 1e-12 {
		t.Errorf("steps %d H2H %v", c.Steps, c.H2H)
	}
	slot := 20e-9
	chunk := []float64{1e9 / 32, 1e9 / 1024, 1e9 / 32768, 1e9 / 65536}
	want := 0.0
	for i, b := range chunk {
		groups := 1.0
		if i == 3 {
			groups = 32
		}
		slots := math.Ceil(b / groups / 1000) // 1000 B per 20 ns slot at 400 Gb/s
		want += 2 * slots * slot              // reduce-scatter and all-gather
	}
	if math.Abs(float64(c.H2T)-want) > 1e-12 {
		t.Errorf("H2T %v, want %g s (step 1 ≈ 625 µs each way)", c.H2T, want)
	}
	if s1 := math.Ceil(chunk[0]/1000) * slot; math.Abs(s1-625e-6) > 1e-9 {
		t.Errorf("step 1 H2T %g", s1)
	}
}

// memBound is a memory-bound reducer ((fan-in + 1) × bytes at bw) for the benchmarks.
type memBound struct{ bw float64 }

func (r memBound) ReduceTime(fanIn int, b units.Bytes, _ dtype.DType) units.Seconds {
	return units.Seconds(float64(fanIn+1) * float64(b) / r.bw)
}

// Best picks RAMP-x at scale; the full-capacity ring (§6.3.1) is far slower there.
func TestStrategies(t *testing.T) {
	best := price(t, newModel(t, 65536), network.AllReduce, 1e6, 65536)
	ring := price(t, newModel(t, 65536, "strategy=ring"), network.AllReduce, 1e6, 65536)
	if best.Algorithm != "RAMP-x" || !(ring.Total > 100*best.Total) {
		t.Errorf("best %v (%s), ring %v", best.Total, best.Algorithm, ring.Total)
	}
	// Broadcast, Eq. (1) with β inside the root: within x² = 1024 nodes one multicast stage
	// (diameter 2) sends the whole message; beyond, the tree has diameter s = 3 and
	// k* = √((s−2)·S·β/α) = √(1e9 / 1.6e12 B/s / 1.4 µs) = 21.1 → k = 21 (T(21) = 22 × 31.16 µs
	// < T(22) = 23 × 29.81 µs), so k + s − 2 = 22 steps.
	small := price(t, newModel(t, 65536, "strategy=ramp"), network.Broadcast, 1e9, 1000)
	b := price(t, newModel(t, 65536, "strategy=ramp"), network.Broadcast, 1e9, 65536)
	if small.Steps != 1 || b.Steps != 22 {
		t.Errorf("broadcast steps %d (1,000 nodes) and %d (65,536), want 1 and 22", small.Steps, b.Steps)
	}
}

// §4.2, Fig. 6: at Λ = 64, x = J = 32 with broadcast-and-select subnets Fig. 6 prints −18 dBm on
// the path and −11 dBm at the receiver (rows ramp/fig6-* of the reproduction table,
// internal/repro). Here, the closed form from the components (8 dBm transmitter, 1:32 splitter,
// 22 dB SOA, 2,048-port star coupler, SOA, 32:1 combiner), inside the −20/−15 dBm bounds; doubling
// Λ breaks the −20 dBm bound (an infeasible configuration, exit code 3).
func TestPowerBudget(t *testing.T) {
	c := DefaultConfig()
	pMin, pRx := c.PowerBudget()
	wantMin := 8 - 10*math.Log10(32) + 22 - 10*math.Log10(2048)
	if math.Abs(pMin-wantMin) > 1e-9 || math.Abs(pRx-(wantMin+22-10*math.Log10(32))) > 1e-9 {
		t.Errorf("power %.2f / %.2f dBm, want %.2f / %.2f", pMin, pRx, wantMin, wantMin+22-10*math.Log10(32))
	}
	if err := c.CheckPowerBudget(); err != nil {
		t.Error(err)
	}
	c.Lambda = 128
	err := c.CheckPowerBudget()
	if errs.ExitCode(err) != errs.ExitInfeasible || !strings.Contains(err.Error(), "-21.2 dBm") {
		t.Errorf("Λ = 128: %v", err)
	}
	c.Subnet = "rb" // AWGR + J×J coupler: 5 + 15.1 dB instead of 36.1
	if err := c.CheckPowerBudget(); err != nil {
		t.Errorf("route-and-broadcast at Λ = 128: %v", err)
	}
}

func TestValidate(t *testing.T) {
	c := DefaultConfig()
	c.J, c.Lambda, c.Subnet, c.Strategy = 64, 60, "mesh", "torus2d"
	err := c.Validate()
	for _, want := range []string{"racks 64 must be ≤ x 32", "lambda 60", `subnet "mesh"`, "torus2d"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v lacks %q", err, want)
		}
	}
	spec := Spec()
	_, err = spec.New(DefaultConfig(), network.Env{GPUs: 70000})
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "65536") {
		t.Errorf("oversized job: %v", err)
	}
}

// The structural check at maximum scale (65,536 nodes): every subgroup of every step has the
// right size and is consistent (members share the earlier information digits and hold distinct
// current ones), and steps 1, 2 and 4 are contention-free with Eq. 2's transceiver map. Step 3
// with the corrected subgroups puts racks j and j + 16 of odd device groups in the same
// communication group, so each (subnet, wavelength) is needed twice — the price of consistency;
// the printed step-3 rule is contention-free but mixes portions (TestPrintedStep3).
func TestStructuralCheckMaxScale(t *testing.T) {
	c := DefaultConfig()
	rep := c.CheckSchedule()
	for s, r := range rep {
		if r.Inconsistent != 0 || r.Subgroups*r.Size != 65536 {
			t.Errorf("step %d: %+v", s+1, r)
		}
	}
	if rep[0].Reuse != 1 || rep[1].Reuse != 1 || rep[3].Reuse != 1 {
		t.Errorf("steps 1, 2, 4 reuse %d, %d, %d; want contention-free", rep[0].Reuse, rep[1].Reuse, rep[3].Reuse)
	}
	if rep[2].Reuse != 2 || c.Step3Reuse(c.J) != 2 {
		t.Errorf("step 3 reuse %d (closed form %d), want 2", rep[2].Reuse, c.Step3Reuse(c.J))
	}
	// Odd x: 1 + q is always invertible, every step is contention-free.
	odd := engineConfig(31, 31, 62)
	for s, r := range odd.CheckSchedule() {
		if r.Reuse != 1 || r.Inconsistent != 0 {
			t.Errorf("x = 31 step %d: %+v", s+1, r)
		}
	}
	// contention=exact charges the second round of step 3.
	paper := price(t, newModel(t, 65536, "strategy=ramp"), network.AllToAll, 1e9, 65536)
	exact := price(t, newModel(t, 65536, "strategy=ramp", "contention=exact"), network.AllToAll, 1e9, 65536)
	// Step 3 of all-to-all sends 1 GB/32 per peer on one 400 Gb/s group: 625 µs more.
	if d := float64(exact.Total - paper.Total); math.Abs(d-625e-6) > 1e-9 {
		t.Errorf("exact contention adds %g s, want 625 µs", d)
	}
}

// Table 5/6's step 3 as printed (same λ, same (j − g) mod x) breaks Table 7's information map
// when ⌊λ/x⌋ ≥ 1 (reference/ramp.md §2.4): a reduce-scatter would mix portions.
func TestPrintedStep3(t *testing.T) {
	c := engineConfig(3, 3, 6)
	inconsistent := 0
	by := map[int][]int32{}
	coords := make([]Coord, c.Nodes())
	for n := range coords {
		coords[n] = c.Coord(n)
		a := coords[n]
		id := a.L + c.Lambda*mod(a.J-a.G, c.X) // printed rule, mod Λx
		by[id] = append(by[id], int32(n))
	}
	for _, m := range by {
		if !c.consistent(2, m, coords) {
			inconsistent++
		}
	}
	if inconsistent == 0 {
		t.Error("the printed step-3 rule should be inconsistent for ⌊λ/x⌋ ≥ 1")
	}
}

// Target: the structural check of the 65,536-node schedule in ≤ 10 s.
func BenchmarkCheckSchedule65536(b *testing.B) {
	c := DefaultConfig()
	for b.Loop() {
		c.CheckSchedule()
	}
}

// Target: pricing one collective on 65,536 GPUs in ≤ 5 µs.
func BenchmarkPriceRAMP65536(b *testing.B) {
	spec := Spec()
	m, _ := spec.New(spec.NewConfig(), network.Env{GPUs: 65536, Reducer: memBound{1.5e12}})
	col := network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 65536, Stride: 1}, DType: dtype.FP16}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Price(col); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPriceRAMP65536Cold prices a new size every time (the model's memo never hits).
func BenchmarkPriceRAMP65536Cold(b *testing.B) {
	spec := Spec()
	m, _ := spec.New(spec.NewConfig(), network.Env{GPUs: 65536, Reducer: memBound{1.5e12}})
	col := network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 65536, Stride: 1}, DType: dtype.FP16}
	b.ReportAllocs()
	for b.Loop() {
		col.Bytes++
		if _, err := m.Price(col); err != nil {
			b.Fatal(err)
		}
	}
}
