package repro

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ddlest/ddlest/partition/zoo"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// TestSiPACFig13 checks Fig. 13's shapes (SiPAC §VI-B-3, V11–V12) over 128 … 4,096 Gb/s per CU
// for both readings of p = 512 (text: m = 8, d = 64; caption: m = 64, d = 8) and p = 64 (m = 8,
// d = 8): SiPAC's time falls throughout (×≥ 16 from 128 to 4,096 Gb/s: it scales with its
// bandwidth), SuperPod's flattens (its 200 Gb/s InfiniBand per GPU is fixed: the last doubling
// gains < 10%), at p = 512 SiPAC is slower than SuperPod at 128 Gb/s ("lower per-CU bandwidth
// as compared to SuperPod when L = 3") and the fastest of the four at 4,096.
func TestSiPACFig13(t *testing.T) {
	cases, err := SiPACFig13()
	if err != nil {
		t.Fatal(err)
	}
	bws := SiPACFig13Bandwidths
	for _, c := range cases {
		times := c.Times
		s, sp := times["sipac"], times["superpod"]
		for i := 1; i < len(bws); i++ {
			if s[i] >= s[i-1] {
				t.Errorf("p=%d m=%d d=%d: SiPAC %.3g ms at %g Gb/s, not below %.3g at %g", c.P, c.M, c.D, s[i]*1e3, bws[i], s[i-1]*1e3, bws[i-1])
			}
		}
		if s[0]/s[len(s)-1] < 16 {
			t.Errorf("p=%d m=%d d=%d: SiPAC gains only %.1f× from 128 to 4,096 Gb/s", c.P, c.M, c.D, s[0]/s[len(s)-1])
		}
		if n := len(sp); sp[n-2]/sp[n-1] > 1.1 {
			t.Errorf("p=%d m=%d d=%d: SuperPod still gains %.2f× from 2,048 to 4,096 Gb/s; its InfiniBand should cap it", c.P, c.M, c.D, sp[n-2]/sp[n-1])
		}
		last := len(bws) - 1
		for _, net := range []string{"bcube", "superpod", "torus"} {
			if s[last] >= times[net][last] {
				t.Errorf("p=%d m=%d d=%d at 4,096 Gb/s: SiPAC %.3g ms, %s %.3g ms; the paper has SiPAC fastest", c.P, c.M, c.D, s[last]*1e3, net, times[net][last]*1e3)
			}
		}
		if c.P == 64 {
			// V11: at 128 Gb/s per CU BCube, SuperPod and SiPAC have "similar JCT". SiPAC and
			// BCube do (the same graph and bytes; BCube adds 120 ns per switch). Documented
			// deviation: SuperPod is faster here, because its InfiniBand is fixed at 200 Gb/s
			// per GPU (§VI-A-1), more than the whole 128 Gb/s a CU has on SiPAC; an α–β fabric
			// has none of the queueing the packet simulation charges it. Asserted as such.
			if b := times["bcube"][0]; s[0] > b || b > 1.02*s[0] {
				t.Errorf("p=64 at 128 Gb/s: SiPAC %.3g ms, BCube %.3g ms; V11 has them similar (SiPAC ≤ BCube ≤ +2%%)", s[0]*1e3, b*1e3)
			}
			if sp[0] >= s[0] {
				t.Errorf("p=64 at 128 Gb/s: SuperPod %.3g ms not faster than SiPAC %.3g ms with 200 Gb/s InfiniBand per GPU against 128 Gb/s per CU", sp[0]*1e3, s[0]*1e3)
			}
		}
		if c.P == 512 && s[0] <= sp[0] {
			t.Errorf("p=512 m=%d d=%d at 128 Gb/s: SiPAC %.3g ms, SuperPod %.3g ms; the paper has SiPAC slower (V12)", c.M, c.D, s[0]*1e3, sp[0]*1e3)
		}
		t.Logf("p=%d m=%d d=%d (ms, 128 … 4,096 Gb/s): sipac %.3g, bcube %.3g, superpod %.3g, torus %.3g", c.P, c.M, c.D,
			ms(times["sipac"]), ms(times["bcube"]), ms(times["superpod"]), ms(times["torus"]))
	}
}

func ms(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * 1e3
	}
	return out
}

// TestSiPACFig11: Fig. 11's speed-ups are rows (sipac/fig11-*); what is left is the shape the
// rows do not hold (Fig. 10, V10: SiPAC "outperforms the other topologies at small message
// sizes"): SiPAC no slower than the electronic BCube where latency dominates (≤ 10 kB per flow;
// at 1 MB the two are bandwidth-bound alike, b = B/r capping a root at its links), and faster
// than SuperPod on every pattern at 1 MB.
func TestSiPACFig11(t *testing.T) {
	r, err := SiPACFig11()
	if err != nil {
		t.Fatal(err)
	}
	for i, pt := range SiPACPatterns {
		if sp := r.Speedups("superpod")[i]; sp < 1 {
			t.Errorf("%s at 1 MB: SiPAC %.2f× faster than SuperPod; the paper has it faster on every pattern", pt, sp)
		}
		t.Logf("%s at 1 MB: SiPAC faster than SuperPod %.2f×, torus %.2f×, BCube %.2f×", pt,
			r.Speedups("superpod")[i], r.Speedups("torus")[i], r.Speedups("bcube")[i])
		for _, small := range []units.Bytes{100, 10 * units.KB} {
			a, err := sipacPattern("sipac-512", pt, small)
			if err != nil {
				t.Fatal(err)
			}
			b, err := sipacPattern("bcube-512", pt, small)
			if err != nil {
				t.Fatal(err)
			}
			if a > b {
				t.Errorf("%s at %v: SiPAC %.3g µs, BCube %.3g µs; latency-bound, SiPAC should not be slower", pt, small, a*1e6, b*1e6)
			}
		}
	}
}

// gradientBytes is a zoo model's gradient in fp32 (4 bytes per parameter): SiPAC §VI-A-4 takes
// its message sizes from TopoOpt's task graphs without quoting them (reference/sipac.md §4.4);
// [D] one all-reduce of the whole fp32 gradient per iteration.
func gradientBytes(t testing.TB, model string) units.Bytes {
	t.Helper()
	m, err := zoo.Models().Lookup(model)
	if err != nil {
		t.Fatal(err)
	}
	net, err := m.Build()
	if err != nil {
		t.Fatal(err)
	}
	return units.Bytes(4 * net.Params())
}

// TestSiPACFig12 checks Fig. 12's shapes (SiPAC §VI-B-2, V13; 2,048 Gb/s per CU, p = 64 and 512):
// mesh and H-Ring (Table II's, k = CUs per physical group: r on SiPAC and BCube, a DGX on
// SuperPod, a row on the torus) on every topology, SiPCO on SiPAC and BCube, the gradients of
// VGG16, VGG19 and BERT-large from the zoo. The paper: H-Ring is the worst on every topology,
// SiPCO beats mesh on SiPAC and BCube, SiPAC beats BCube, and from p = 64 to 512 H-Ring's time
// grows while SiPCO's stays about constant (Table II at a fixed per-CU bandwidth gives +33%:
// (L+1)(r−1)/r·S/B_CU from L = 2 to 3 at r = 8; asserted ≤ 35%, and H-Ring ≥ 3×: 42 → 154
// steps of S/8 at 2/3 of the link rate, 5.5×). The ring is left out as in the paper (it does not
// finish within its 2 s window) but must be slower than SiPCO.
//
// Documented deviation, the 16 × 32 torus (p = 512): the mesh is bisection-bound there (a y link
// carries X·Y²/8 = 2,048 flows of S/512: 4·S/port per step, network/torus TestRouted), while
// H-Ring with k = 16 moves 122 steps of S/16, 7.625·S/port against the mesh's 8·S/port: H-Ring
// comes out ≈ 5% faster, not the worst, and grows only 1.45× from the 8 × 8 torus (k = 8: 42
// steps of S/8) since its group grows with the row. The paper's packet simulation does not say
// how its H-Ring used the torus (reference/sipac.md §4.4); the test asserts these closed forms.
func TestSiPACFig12(t *testing.T) {
	nets := []struct {
		name, preset string
		algs         []string
	}{
		{"sipac", "sipac-", []string{"sipco", "mesh", "hring", "ring"}},
		{"bcube", "bcube-", []string{"sipco", "mesh", "hring", "ring"}},
		{"superpod", "sipac-superpod", []string{"mesh", "hring"}},
		{"torus", "sipac-torus-", []string{"mesh", "hring"}},
	}
	for _, model := range []string{"vgg16", "vgg19", "bert-large"} {
		size := gradientBytes(t, model)
		at := map[int]map[string]map[string]float64{}
		for _, p := range []int{64, 512} {
			at[p] = map[string]map[string]float64{}
			for _, n := range nets {
				preset := n.preset
				if n.name != "superpod" {
					preset += fmt.Sprint(p)
				}
				at[p][n.name] = map[string]float64{}
				for _, a := range n.algs {
					v, err := sipacCollective(preset, 2.048, a, network.AllReduce, size, p, 0, 0)
					if err != nil {
						t.Fatal(err)
					}
					at[p][n.name][a] = v
				}
				tm := at[p][n.name]
				t.Logf("%s (%.0f MB) p=%d %s (ms): %v", model, float64(size)/1e6, p, n.name, msMap(tm))
				if n.name == "torus" && p == 512 {
					const port, hop = 64e9, 1e-6
					want := (122*hop + 7.625*float64(size)/port) / (48*hop + 8*float64(size)/port)
					if r := tm["hring"] / tm["mesh"]; r > want*(1+1e-6) || r < want*(1-1e-6) {
						t.Errorf("%s torus 512: H-Ring / mesh = %.4f, the closed forms give %.4f", model, r, want)
					}
					continue
				}
				for _, a := range n.algs {
					if a != "hring" && a != "ring" && tm["hring"] <= tm[a] {
						t.Errorf("%s p=%d %s: H-Ring %.3g ms not slower than %s %.3g ms (V13: worst everywhere)", model, p, n.name, tm["hring"]*1e3, a, tm[a]*1e3)
					}
				}
				if s, ok := tm["sipco"]; ok && (s >= tm["mesh"] || s >= tm["ring"]) {
					t.Errorf("%s p=%d %s: SiPCO %.3g ms, mesh %.3g, ring %.3g; V13 has SiPCO fastest", model, p, n.name, s*1e3, tm["mesh"]*1e3, tm["ring"]*1e3)
				}
			}
			if s, b := at[p]["sipac"]["sipco"], at[p]["bcube"]["sipco"]; s > b {
				t.Errorf("%s p=%d: SiPCO on SiPAC %.3g ms, on BCube %.3g ms; V13 has SiPAC ahead", model, p, s*1e3, b*1e3)
			}
		}
		for _, n := range []string{"sipac", "bcube"} {
			if g := at[512][n]["sipco"] / at[64][n]["sipco"]; g > 1.35 {
				t.Errorf("%s %s: SiPCO grows %.2f× from p = 64 to 512; V13 ~constant (Table II: 1.33×)", model, n, g)
			}
		}
		for _, n := range nets {
			least := 3.0
			if n.name == "torus" {
				least = 1.4 // the deviation above: 7.625/5.25 = 1.45×
			}
			if g := at[512][n.name]["hring"] / at[64][n.name]["hring"]; g < least {
				t.Errorf("%s %s: H-Ring grows only %.2f× from p = 64 to 512; V13 has it grow several-fold", model, n.name, g)
			}
		}
	}
}

func msMap(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = float64(int(v*1e6)) / 1e3
	}
	return out
}

// TestSiPACFig7 checks Fig. 7's stated shapes (§V-A) on Table II's all-reduces: at 100 MB SiPCO
// is the fastest at every network size and "remains relatively constant across topology sizes"
// (within 1.3× from 16 to 4,096 CUs: (L+1)(r−1)/(Lr) lies in [1.125, 1.5) × nβ), while the
// ring grows more than 3× (2(p−1)α reaches 8 ms at 4,096 CUs); at 1,024 CUs SiPCO is the
// fastest from 1 MB up, where the bandwidth term rules ("better scaling … with increasing
// message sizes"), and the mesh below 100 kB (2α against SiPCO's 3α).
func TestSiPACFig7(t *testing.T) {
	r, err := SiPACFig7()
	if err != nil {
		t.Fatal(err)
	}
	s := r.BySize["sipco"]
	if slices.Max(s)/slices.Min(s) > 1.3 {
		t.Errorf("SiPCO at 100 MB varies %.2f× over p", slices.Max(s)/slices.Min(s))
	}
	if ring := r.BySize["ring"]; ring[len(ring)-1]/ring[0] < 3 {
		t.Errorf("the ring grows only %.2f× from 16 to 4,096 CUs", ring[len(ring)-1]/ring[0])
	}
	for _, alg := range SiPACFig7Algs[:3] {
		for i, v := range r.BySize[alg] {
			if s[i] >= v {
				t.Errorf("p = %d: SiPCO %.4g ms, %s %.4g ms", SiPACFig7Sizes[i].P, s[i]*1e3, alg, v*1e3)
			}
		}
		for i, n := range SiPACFig7Messages {
			v, sp := r.ByMessage[alg][i], r.ByMessage["sipco"][i]
			if n >= 1e6 && sp >= v {
				t.Errorf("%g B: SiPCO %.4g ms, %s %.4g ms", n, sp*1e3, alg, v*1e3)
			}
			if alg == "mesh" && n < 1e5 && v >= sp {
				t.Errorf("%g B: mesh %.4g µs not below SiPCO %.4g µs (2α < 3α)", n, v*1e6, sp*1e6)
			}
		}
	}
}

// Fig. 9's baselines (§VI-C), by hand at 512 CUs on SiPACFig9's convention: the three-level fat
// tree of 14-port switches (k³/4 = 686 ≥ 512, 12 ports reach 432) has ⌈512/7⌉ = 74 leaves of 7
// down and 7 up ports, 518 leaf uplinks over 74 second-level and 37 top switches: 185 switches,
// 518 endpoint cables + 2·518 between switches = 1,554 links; the Dragonfly has a = 10 (11 groups
// of 50 CUs reach 550; a = 8 reaches 288), p' = 5, h = 1: 11 groups, 110 routers, 550 endpoint
// cables + 11·45 local + 55 global = 1,100 links; the 16 × 32 torus 2·512 = 1,024. Each has a
// transceiver at both ends of every link. And the text's findings: "SiPAC(L = 3) requires a
// similar number of switches as a 3-level fat tree" (within ±25% at each L = 3 size), "SiPAC(L =
// 2) would require much fewer switches" (at most half), "SiPAC also requires fewer
// transceivers" (per CU, than every baseline at every size), and SiPAC(L = 2)'s links equal the
// 2D torus's (also a row, sipac/fig9-links-torus).
func TestSiPACFig9Baselines(t *testing.T) {
	r, err := SiPACFig9()
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]SiPACFig9Count{}
	for _, c := range r {
		by[fmt.Sprint(c.Fabric, c.L)] = c
	}
	at := func(c SiPACFig9Count, cus float64) int { return slices.Index(c.CUs, cus) }
	ft, df, tor := by["fattree0"], by["dragonfly0"], by["torus0"]
	i := slices.Index(SiPACFig9Sizes, 512)
	for _, c := range []struct {
		name                 string
		got                  SiPACFig9Count
		cus, links, switches float64
	}{{"fattree", ft, 512, 1554, 185}, {"dragonfly", df, 550, 1100, 110}, {"torus", tor, 512, 1024, 0}} {
		if c.got.CUs[i] != c.cus || c.got.Links[i] != c.links || c.got.Transceivers[i] != 2*c.links || c.got.Switches[i] != c.switches {
			t.Errorf("%s at 512: %v CUs, %v links, %v transceivers, %v switches; by hand %v, %v, %v, %v", c.name,
				c.got.CUs[i], c.got.Links[i], c.got.Transceivers[i], c.got.Switches[i], c.cus, c.links, 2*c.links, c.switches)
		}
	}
	for l, s := range map[int]SiPACFig9Count{2: by["sipac2"], 3: by["sipac3"]} {
		for k, p := range s.CUs {
			j := at(ft, p)
			if j < 0 {
				t.Fatalf("no fat tree of %v CUs", p)
			}
			if q := s.Switches[k] / ft.Switches[j]; l == 3 && (q < 0.8 || q > 1.25) || l == 2 && q > 0.5 {
				t.Errorf("SiPAC(L = %d) of %v CUs: %v switches, the fat tree %v", l, p, s.Switches[k], ft.Switches[j])
			}
			for _, b := range []SiPACFig9Count{ft, df, tor} {
				if mine, theirs := s.Transceivers[k]/p, b.Transceivers[j]/b.CUs[j]; mine >= theirs {
					t.Errorf("SiPAC(L = %d) of %v CUs: %v transceivers per CU, %s %v", l, p, mine, b.Fabric, theirs)
				}
			}
			if l == 2 && s.Links[k] != tor.Links[at(tor, p)] {
				t.Errorf("SiPAC(L = 2) of %v CUs: %v links, the 2D torus %v", p, s.Links[k], tor.Links[at(tor, p)])
			}
		}
	}
}

// The testbed rows' cause, by hand: MobileNetV2's 3,504,872 FP32 gradients (torchvision's count)
// are S = 14,019,488 B; a ring all-reduce over 4 GPUs moves 2·3/4·S per GPU, one 10 Gb/s port
// at a time on SiPAC(2, 2) and at 20 Gb/s through the leaf-spine's NIC, so SiPAC's iteration is
// longer by 1.5·S·(1/1.25 − 1/2.5) ns = 8.41 ms (within 2%: the steps' latencies); the binary
// tree sends to both children at once, over both ports or through the one NIC alike: within 0.1%.
func TestSiPACTestbedCause(t *testing.T) {
	r, err := SiPACTestbed()
	if err != nil {
		t.Fatal(err)
	}
	const s = 14019488.0
	want := 1.5 * s * (1/1.25e9 - 1/2.5e9)
	if d := r["sipac-testbed"]["ring"] - r["sipac-testbed-leafspine"]["ring"]; d < 0.98*want || d > 1.02*want {
		t.Errorf("ring: SiPAC − leaf-spine = %.3g s, by hand %.3g", d, want)
	}
	if q := r["sipac-testbed"]["tree"] / r["sipac-testbed-leafspine"]["tree"]; q < 0.999 || q > 1.001 {
		t.Errorf("tree: SiPAC / leaf-spine = %.4f, want 1", q)
	}
}
