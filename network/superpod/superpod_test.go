package superpod

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/profile/roofline"
)

func model(t *testing.T, gpus int, pairs ...string) network.Model {
	t.Helper()
	cfg := DefaultConfig()
	if err := params.SetPairs(cfg, pairs); err != nil {
		t.Fatal(err)
	}
	m, err := Spec().New(cfg, network.Env{GPUs: gpus})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func cost(t *testing.T, m network.Model, op network.Op, s units.Bytes, size, stride int) network.Cost {
	t.Helper()
	c, err := m.Price(network.Collective{Op: op, Bytes: s, Group: network.Group{Size: size, Stride: stride}, DType: dtype.FP16})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// RAMP §7.5 component latencies give one-way paths (reference/ramp.md §4.1) of 140 ns inside a
// DGX, 370 ns under one leaf, 1,170 ns via a spine and 4,370 ns via the core, plus the 100 ns
// in-out latency; NVLink runs at 2.4 Tb/s per GPU and InfiniBand at 2.4/12 = 200 Gb/s.
func TestTiers(t *testing.T) {
	tiers := DefaultConfig().Tiers()
	wantNs := []float64{240, 470, 1270, 4470}
	wantGbit := []float64{2400, 200, 200, 200}
	wantSpan := []int{8, 160, 3200, 65536}
	for i, tr := range tiers {
		if math.Abs(float64(tr.Link.Latency)-wantNs[i]*1e-9) > 1e-15 || math.Abs(tr.Link.Bandwidth.Gbit()-wantGbit[i]) > 1e-9 || tr.Span != wantSpan[i] {
			t.Errorf("tier %s: %v %v span %d", tr.Name, tr.Link.Latency, tr.Link.Bandwidth, tr.Span)
		}
	}
}

// A tensor-parallel group of 8 stays on NVSwitch: its ring all-reduce is 2·7 steps of 240 ns plus
// 2·7/8 · S / 300 GB/s.
func TestNVLinkGroup(t *testing.T) {
	c := cost(t, model(t, 64, "strategy=ring"), network.AllReduce, 1e9, 8, 1)
	want := 14*240e-9 + 2*7.0/8*1e9/300e9
	if math.Abs(float64(c.Total)-want) > 1e-12 {
		t.Errorf("all-reduce %v, want %g s", c.Total, want)
	}
}

// Best chooses per collective and size and reports the algorithm; at 65,536 GPUs a hierarchical
// algorithm beats the single ring by orders of magnitude for small messages (RAMP Fig. 21).
func TestBest(t *testing.T) {
	best := cost(t, model(t, 65536), network.AllReduce, 1e6, 65536, 1)
	ring := cost(t, model(t, 65536, "strategy=ring"), network.AllReduce, 1e6, 65536, 1)
	if best.Algorithm == "ring" || !(ring.Total > 1000*best.Total) {
		t.Errorf("best %v (%s) vs ring %v", best.Total, best.Algorithm, ring.Total)
	}
	// All-to-all is the ring's pairwise exchange unless extended_alltoall is set.
	a2a := cost(t, model(t, 65536), network.AllToAll, 1e9, 65536, 1)
	ext := cost(t, model(t, 65536, "extended_alltoall=true"), network.AllToAll, 1e9, 65536, 1)
	if a2a.Algorithm != "pairwise exchange" || !(ext.Total < a2a.Total) {
		t.Errorf("all-to-all %v (%s), extended %v (%s)", a2a.Total, a2a.Algorithm, ext.Total, ext.Algorithm)
	}
	if _, err := model(t, 64, "strategy=hierarchical").Price(network.Collective{Op: network.AllToAll, Bytes: 1, Group: network.Group{Size: 64, Stride: 1}}); errs.ExitCode(err) != errs.ExitUsage {
		t.Errorf("hierarchical all-to-all without extended_alltoall: %v", err)
	}
}

// Bandwidth-matched (oversubscription 1): the inter-node tiers run at 2.4 Tb/s too.
func TestOversubscription(t *testing.T) {
	c := DefaultConfig()
	c.Oversubscription = 1
	if g := c.Tiers()[3].Link.Bandwidth.Gbit(); math.Abs(g-2400) > 1e-9 {
		t.Errorf("core bandwidth %g Gb/s", g)
	}
	c.Oversubscription = 0.5
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "oversubscription 0.5") {
		t.Errorf("validate: %v", err)
	}
}

func TestErrors(t *testing.T) {
	_, err := Spec().New(DefaultConfig(), network.Env{GPUs: 70000})
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "65536") {
		t.Errorf("oversized job: %v", err)
	}
	cfg := DefaultConfig()
	cfg.Strategy = "ramp"
	_, err = Spec().New(cfg, network.Env{GPUs: 8})
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "best, ring, hierarchical, torus2d, rhd, tree") {
		t.Errorf("ramp strategy on a fat tree: %v", err)
	}
}

// Target: pricing one collective (best of five strategies) on 65,536 GPUs in ≤ 5 µs.
func BenchmarkPriceSuperPod65536(b *testing.B) {
	m, _ := Spec().New(DefaultConfig(), network.Env{GPUs: 65536})
	col := network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 65536, Stride: 1}, DType: dtype.FP16}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Price(col); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPriceSuperPod65536Cold prices a new size every time (the model's memo never hits):
// the best of five algorithms mapped onto four levels.
func BenchmarkPriceSuperPod65536Cold(b *testing.B) {
	m, _ := Spec().New(DefaultConfig(), network.Env{GPUs: 65536})
	col := network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 65536, Stride: 1}, DType: dtype.FP16}
	b.ReportAllocs()
	for b.Loop() {
		col.Bytes++
		if _, err := m.Price(col); err != nil {
			b.Fatal(err)
		}
	}
}

// Models of one configuration share priced collectives across estimates, never across what the
// price depends on: the same all-reduce after a model on A100s costs its V100 reduction time on
// a V100 job (HBM 1.555 vs 2.039 TB/s: the reductions are memory-bound), none without a reducer,
// and the A100's again on a new A100 profile (a new pointer with the same numbers).
func TestSharedMemo(t *testing.T) {
	col := network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 64, Stride: 1}, DType: dtype.FP16}
	price := func(gpu string) network.Cost {
		var red network.Reducer
		if gpu != "" {
			g, err := roofline.LookupGPU(gpu)
			if err != nil {
				t.Fatal(err)
			}
			r, err := roofline.New(g, roofline.DefaultEfficiency, dtype.FP16)
			if err != nil {
				t.Fatal(err)
			}
			red = r
		}
		m, err := Spec().New(DefaultConfig(), network.Env{GPUs: 64, Reducer: red})
		if err != nil {
			t.Fatal(err)
		}
		c, err := m.Price(col)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a100, v100, none, again := price("a100-80gb"), price("v100"), price(""), price("a100-80gb")
	if !(v100.Compute > a100.Compute) || none.Compute != 0 || again != a100 {
		t.Errorf("reduction times: A100 %v, V100 %v, none %v, A100 again %v", a100.Compute, v100.Compute, none.Compute, again.Compute)
	}
}

// TestRouted checks routed=true against the tiers and closed forms counted by hand on 64 GPUs
// (8 DGXs under one leaf; RAMP §7.5's defaults: NVLink 2.4 Tb/s = 300 GB/s and 240 ns per step
// (100 in-out + 2 × 20 + 100 NVSwitch), InfiniBand 200 Gb/s = 25 GB/s and 470 ns (100 + 2 × 10 +
// 350 leaf)):
//   - ring and hierarchical cost what they cost on the tiers;
//   - the mesh sends S/64 from every GPU to every other: 7 flows on its NVLink, 56 on its
//     InfiniBand port: 2·(470 ns + 56·(S/64)/25 GB/s);
//   - SiPAC Table II's H-Ring with k = 8 (a DGX): 4·7 NVLink steps and 2·7 InfiniBand steps,
//     each of S/8.
func TestRouted(t *testing.T) {
	const S = 1e8
	for _, strat := range []string{"ring", "hierarchical"} {
		lv := cost(t, model(t, 64, "strategy="+strat), network.AllReduce, S, 64, 1)
		rt := cost(t, model(t, 64, "strategy="+strat, "routed=true"), network.AllReduce, S, 64, 1)
		if math.Abs(float64(rt.Total)/float64(lv.Total)-1) > 1e-9 {
			t.Errorf("%s: routed %v, tiers %v", strat, rt.Total, lv.Total)
		}
	}
	for _, c := range []struct {
		strat string
		want  float64
	}{
		{"mesh", 2 * (470e-9 + 56*S/64/25e9)},
		{"hring", 28*(240e-9+S/8/300e9) + 14*(470e-9+S/8/25e9)},
	} {
		got := cost(t, model(t, 64, "strategy="+c.strat, "routed=true"), network.AllReduce, S, 64, 1)
		if math.Abs(float64(got.Total)/c.want-1) > 1e-9 {
			t.Errorf("%s: %v, want %g s", c.strat, got.Total, c.want)
		}
	}
	cfg := DefaultConfig()
	cfg.Strategy = "mesh"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "routed=true") {
		t.Errorf("mesh on the tiers: %v, want a pointer to routed=true", err)
	}
}

// The closed-form distance equals the exact weighted search on the fat tree's graph from every
// node to every GPU: whole and partial DGXs, leaves and spines, one spine (no core traffic) and
// several.
func TestTreeDist(t *testing.T) {
	small := DefaultConfig()
	small.NodesPerLeaf, small.LeavesPerSpine = 2, 2
	for _, c := range []struct {
		cfg  *Config
		gpus int
	}{{DefaultConfig(), 8}, {DefaultConfig(), 100}, {DefaultConfig(), 512}, {small, 100}, {small, 64}, {small, 5}} {
		g, err := c.cfg.Fabric(c.gpus)
		if err != nil {
			t.Fatal(err)
		}
		exact := fabric.NewLazyDist(g)
		for u := range int32(g.Nodes()) {
			for v := range int32(c.gpus) {
				if got, want := g.Distance(u, v), exact.Dist(u, v); got != want {
					t.Fatalf("%d GPUs (%d per leaf, %d leaves per spine): distance %d → %d is %d, exact %d", c.gpus,
						c.cfg.GPUsPerNode*c.cfg.NodesPerLeaf, c.cfg.LeavesPerSpine, u, v, got, want)
				}
			}
		}
	}
}
