package wdmring

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// newModel builds the ring for n GPUs with the default configuration changed by set.
func newModel(t testing.TB, n int, set func(*Config)) *model {
	t.Helper()
	c := DefaultConfig()
	if set != nil {
		set(c)
	}
	m, err := Spec().New(c, network.Env{GPUs: n})
	if err != nil {
		t.Fatal(err)
	}
	return m.(*model)
}

// allReduce prices an all-reduce of b bytes over the whole ring with strategy st.
func allReduce(t testing.TB, n int, b units.Bytes, st string, set func(*Config)) network.Cost {
	t.Helper()
	m := newModel(t, n, func(c *Config) {
		c.Strategy = st
		if set != nil {
			set(c)
		}
	})
	c, err := m.Price(network.Collective{Op: network.AllReduce, Bytes: b, Group: network.Group{Size: n, Stride: 1}, DType: dtype.FP32})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// reference/wrht.md §2.8's step tables (exact integer arithmetic): Fig. 4 (N = 1,024, w = 64, m
// varied), Fig. 5 (N = 1,024, m = 2w+1), Fig. 6 (w = 64, m = 129) and Fig. 7's optical side; the
// model's all-reduce takes θ steps under both rules.
func TestStepTables(t *testing.T) {
	for _, r := range []struct {
		n, w, m, k, mstar, a2a, exact, lemma int
	}{
		// Fig. 4
		{1024, 64, 17, 3, 4, 2, 5, 6},
		{1024, 64, 33, 2, 32, 128, 4, 4},
		{1024, 64, 65, 2, 16, 32, 3, 4},
		{1024, 64, 129, 2, 8, 8, 3, 4},
		// Fig. 5
		{1024, 4, 9, 4, 2, 1, 7, 8},
		{1024, 16, 33, 2, 32, 128, 4, 4},
		{1024, 256, 513, 2, 2, 1, 3, 4},
		// Fig. 6
		{2048, 64, 129, 2, 16, 32, 3, 4},
		{3072, 64, 129, 2, 24, 72, 4, 4},
		{4096, 64, 129, 2, 32, 128, 4, 4},
		// Fig. 7
		{128, 64, 129, 1, 128, 2048, 2, 2},
		{256, 64, 129, 2, 2, 1, 3, 4},
		{512, 64, 129, 2, 4, 2, 3, 4},
		// N ≤ m with a fitting all-to-all: one step (§2.7 edge cases).
		{8, 64, 129, 1, 8, 8, 1, 2},
	} {
		pl := NewPlan(r.n, r.m, r.w, false)
		if pl.K != r.k || pl.MStar != r.mstar || pl.A2A != r.a2a || pl.Theta != r.exact {
			t.Errorf("N=%d w=%d m=%d: k=%d m*=%d ⌈m*²/8⌉=%d θ=%d, §2.8 says %d %d %d %d", r.n, r.w, r.m, pl.K, pl.MStar, pl.A2A, pl.Theta, r.k, r.mstar, r.a2a, r.exact)
		}
		if l := NewPlan(r.n, r.m, r.w, true); l.Theta != r.lemma {
			t.Errorf("N=%d w=%d m=%d lemma: θ=%d, §2.8 says %d", r.n, r.w, r.m, l.Theta, r.lemma)
		}
		for _, lemma := range []bool{false, true} {
			want := r.exact
			if lemma {
				want = r.lemma
			}
			c := allReduce(t, r.n, 1e6, "wrht", func(c *Config) {
				c.Wavelengths, c.Group = r.w, r.m
				if lemma {
					c.StepRule = ruleLemma
				}
			})
			if int(c.Steps) != want {
				t.Errorf("N=%d w=%d m=%d lemma %v: priced %d steps, want %d", r.n, r.w, r.m, lemma, c.Steps, want)
			}
		}
	}
}

// ⌈log_m N⌉ in integers: N = 125, m = 5 is 3 (a float log gives 4), N = 1,000, m = 10 is 3.
func TestCeilLog(t *testing.T) {
	for _, tc := range []struct{ n, m, k int }{{125, 5, 3}, {126, 5, 4}, {1000, 10, 3}, {1, 2, 0}, {2, 2, 1}, {1024, 129, 2}} {
		if k := CeilLog(tc.n, tc.m); k != tc.k {
			t.Errorf("CeilLog(%d, %d) = %d, want %d", tc.n, tc.m, k, tc.k)
		}
	}
	if pl := NewPlan(125, 5, 2, false); pl.K != 3 {
		t.Errorf("N=125 m=5: k=%d, want 3", pl.K)
	}
}

// m = 129 needs ⌊129/2⌋ = 64 wavelengths: 64 are enough, 63 are not (a usage error naming the
// bound); the first fit of WRHT's first level at N = 1,024 uses exactly 64.
func TestGroupWavelengths(t *testing.T) {
	c := DefaultConfig()
	c.Group = 129
	if err := c.Validate(); err != nil {
		t.Fatalf("m=129, w=64: %v", err)
	}
	c.Wavelengths = 63
	err := c.Validate()
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "group ≤ 2w+1 = 127") {
		t.Errorf("m=129, w=63: %v", err)
	}
	m := newModel(t, 1024, nil)
	g := network.Group{Size: 1024, Stride: 1}
	for _, tc := range []struct {
		key  stepKey
		want int
	}{
		{stepKey{kind: kGather, level: 1, size: 129}, 64}, // ⌊129/2⌋ per fibre
		{stepKey{kind: kBcast, level: 1, size: 129}, 64},
		{stepKey{kind: kBTUp, level: 10}, 1}, // one wavelength (§3.3)
	} {
		var a Assignment
		as, err := m.assign(tc.key, g, &a)
		if err != nil {
			t.Fatal(err)
		}
		if as.Used != tc.want {
			t.Errorf("%+v: first fit used %d wavelengths, want %d", tc.key, as.Used, tc.want)
		}
	}
}

// The check finds a wavelength used twice on a segment, and only then.
func TestCheckCatchesConflicts(t *testing.T) {
	a := Assignment{N: 8, Paths: []Path{{From: 0, To: 3, CW: true}, {From: 2, To: 5, CW: true}, {From: 5, To: 2, CW: false}}, Lambda: []int32{0, 1, 0}}
	if err := a.Check(0); err != nil {
		t.Errorf("valid assignment: %v", err)
	}
	a.Lambda[1] = 0 // 0→3 and 2→5 share segment 2 → 3 clockwise
	if err := a.Check(0); err == nil || !strings.Contains(err.Error(), "used twice on segment 2") {
		t.Errorf("conflict not found: %v", err)
	}
	a.Lambda = []int32{0, 1, 0}
	if err := a.Check(1); err == nil {
		t.Error("wavelength 1 with a limit of 1 not refused")
	}
}

// Eq. 6, T = θ(d/B + a), equals the schedule's price with a = 25 µs, B = 40 Gb/s, d = 4 B × 307M
// (BEiT-L, float32), O/E/O in and no reduction: WRHT 736.9, O-Ring 541.9, BT 4912.7 ms
// (reference/wrht.md §5.4, ±0.1%).
func TestEq6(t *testing.T) {
	const d = 4 * 307e6
	for _, tc := range []struct {
		st   string
		want float64 // ms
	}{{"wrht", 736.9}, {"ring", 541.9}, {"tree", 4912.7}} {
		c := allReduce(t, 1024, d, tc.st, nil)
		got := float64(c.Total) * 1e3
		if math.Abs(got-tc.want) > 1e-3*tc.want {
			t.Errorf("%s: %.1f ms, Eq. 6 gives %.1f", tc.st, got, tc.want)
		}
	}
	// Eq. 6 itself for WRHT: θ = 3 steps of d/B + a (O/E/O 497 fs × ⌈d/72⌉ per step is 8.5 µs).
	c := allReduce(t, 1024, d, "wrht", func(c *Config) { c.OEOFs = 0 })
	if eq6 := 3 * (d*8/40e9 + 25e-6); math.Abs(float64(c.Total)-eq6) > 1e-9 {
		t.Errorf("wrht without O/E/O: %.6f s, Eq. 6 %.6f s", float64(c.Total), eq6)
	}
}

// Real tensors: running WRHT's lightpaths (a reduce step sums what arrives, a broadcast step
// copies it) leaves every rank with the sum, for N = 15 (w = 2, the paper's Fig. 2), 64 and 1,024
// (partial last groups), under both rules.
func TestWRHTSums(t *testing.T) {
	for _, tc := range []struct{ n, w, m int }{{15, 2, 5}, {64, 64, 0}, {64, 4, 0}, {1024, 64, 0}, {1024, 16, 0}, {1000, 8, 7}} {
		for _, rule := range stepRules {
			m := newModel(t, tc.n, func(c *Config) { c.Wavelengths, c.Group, c.StepRule = tc.w, tc.m, rule })
			var steps []ringStep
			if _, err := (WRHT{}).steps(m, network.AllReduce, 1, tc.n, &steps); err != nil {
				t.Fatal(err)
			}
			const l = 3
			r := rand.New(rand.NewPCG(uint64(tc.n), l))
			bufs := make([]*tensor.Dense, tc.n)
			var total *tensor.Dense
			for i := range bufs {
				d := make([]float64, l)
				for k := range d {
					d[k] = float64(r.IntN(1000))
				}
				bufs[i] = tensor.New(tensor.WithShape(l), tensor.WithBacking(d))
				if total == nil {
					total = bufs[i].Clone().(*tensor.Dense)
				} else if _, err := total.Add(bufs[i], tensor.UseUnsafe()); err != nil {
					t.Fatal(err)
				}
			}
			for _, st := range steps {
				lps, err := m.lightpaths(st.key, tc.n, nil)
				if err != nil {
					t.Fatal(err)
				}
				old := make([]*tensor.Dense, tc.n)
				for i, b := range bufs {
					old[i] = b.Clone().(*tensor.Dense)
				}
				for _, lp := range lps {
					if st.fanIn > 1 {
						if _, err := bufs[lp.Dst].Add(old[lp.Src], tensor.UseUnsafe()); err != nil {
							t.Fatal(err)
						}
					} else {
						bufs[lp.Dst] = old[lp.Src].Clone().(*tensor.Dense)
					}
				}
				var a Assignment
				as, err := m.assign(st.key, network.Group{Size: tc.n, Stride: 1}, &a)
				if err != nil {
					t.Fatal(err)
				}
				if as.Used > tc.w {
					t.Errorf("N=%d w=%d %s step %+v: %d wavelengths", tc.n, tc.w, rule, st.key, as.Used)
				}
			}
			for i, b := range bufs {
				eq, err := b.ElEq(total, tensor.AsSameType())
				if err != nil {
					t.Fatal(err)
				}
				for k, ok := range eq.Data().([]float64) {
					if ok != 1 {
						t.Fatalf("N=%d w=%d %s: rank %d value %d = %v, want %v", tc.n, tc.w, rule, i, k, b.Data().([]float64)[k], total.Data().([]float64)[k])
					}
				}
			}
		}
	}
}

// Strided groups interleave on the ring: the DP groups of a job with TP 4 share every segment, so
// WRHT's first level needs 4 × ⌊m/2⌋ wavelengths (hand count: 4 groups × 2 senders per side for
// m = 5), more than w = 4, and each of its steps runs in 2 rounds.
func TestStridedGroupsShareWavelengths(t *testing.T) {
	m := newModel(t, 60, func(c *Config) { c.Wavelengths, c.Group, c.Strategy = 4, 5, "wrht" })
	g := network.Group{Size: 15, Stride: 4}
	var a Assignment
	as, err := m.assign(stepKey{kind: kGather, level: 1, size: 5}, g, &a)
	if err != nil {
		t.Fatal(err)
	}
	if as.Used != 8 {
		t.Errorf("first level of 4 interleaved groups: %d wavelengths, want 8", as.Used)
	}
	c, err := m.Price(network.Collective{Op: network.AllReduce, Bytes: 1e6, Group: g, DType: dtype.FP32})
	if err != nil {
		t.Fatal(err)
	}
	// N = 15, m = 5: gather (2 rounds), all-to-all of the 3 representatives 20 nodes apart (each
	// sends one neighbour clockwise and the other counter-clockwise: 1 wavelength per fibre and
	// group, 4 for four groups, 1 round), broadcast (2 rounds): 5 steps.
	if c.Steps != 5 {
		t.Errorf("strided WRHT: %d steps, want 5", c.Steps)
	}
}

func BenchmarkWRHTPrice4096(b *testing.B) {
	m := newModel(b, 4096, func(c *Config) { c.Strategy = "wrht" })
	col := network.Collective{Op: network.AllReduce, Bytes: 1e8, Group: network.Group{Size: 4096, Stride: 1}, DType: dtype.FP32}
	sc := new(priceScratch)
	if _, err := m.price(WRHT{}, col, sc); err != nil { // assigns the wavelengths once
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		col.Bytes = units.Bytes(1e8 + i) // a new size each time: no memo
		if _, err := m.price(WRHT{}, col, sc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWRHTAssign4096(b *testing.B) {
	m := newModel(b, 4096, func(c *Config) { c.Strategy = "wrht" })
	var steps []ringStep
	if _, err := (WRHT{}).steps(m, network.AllReduce, 1, 4096, &steps); err != nil {
		b.Fatal(err)
	}
	g := network.Group{Size: 4096, Stride: 1}
	var a Assignment
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, st := range steps {
			if _, err := m.assign(st.key, g, &a); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// One model serves concurrent prices (Shareable): goroutines pricing the same and different
// collectives agree with a model used alone.
func TestConcurrentPrices(t *testing.T) {
	want := allReduce(t, 512, 1e8, "best", nil)
	m := newModel(t, 512, nil)
	errc := make(chan error, 8)
	for i := range 8 {
		go func() {
			c, err := m.Price(network.Collective{Op: network.AllReduce, Bytes: 1e8, Group: network.Group{Size: 512, Stride: 1}, DType: dtype.FP32})
			if err == nil && c != want {
				err = fmt.Errorf("goroutine %d: %+v, alone %+v", i, c, want)
			}
			if err == nil {
				_, err = m.Price(network.Collective{Op: network.AllReduce, Bytes: units.Bytes(1e6 * (i + 1)), Group: network.Group{Size: 64, Stride: 8}, DType: dtype.FP32})
			}
			errc <- err
		}()
	}
	for range 8 {
		if err := <-errc; err != nil {
			t.Error(err)
		}
	}
}
