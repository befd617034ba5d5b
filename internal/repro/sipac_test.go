package repro

import (
	"fmt"
	"testing"

	"github.com/ddlest/ddlest/partition/zoo"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/network"
)

// sipacCollective prices one collective on a preset at a per-CU bandwidth (Tb/s), with the
// paper's algorithm for that network and no reduction compute (SiPAC models communication only).
func sipacCollective(t testing.TB, preset string, nodeTbps float64, strategy string, op network.Op, size units.Bytes, gpus, group, stride int) float64 {
	t.Helper()
	params := []string{fmt.Sprintf("node_tbps=%g", nodeTbps)}
	if strategy != "" {
		params = append(params, "strategy="+strategy)
	}
	rows, err := job.Collectives(job.CollectiveOptions{Ops: []network.Op{op}, Sizes: []units.Bytes{size}, GPUs: []int{gpus},
		Group: group, Stride: stride, Network: job.NetworkChoice{Preset: preset, Params: params}, NoReduceCompute: true, GPU: "a100-80gb"})
	if err != nil {
		t.Fatal(err)
	}
	return float64(rows[0].Cost.Total)
}

// hybrid is Fig. 13's iteration (SiPAC §VI-A-3): d groups of m CUs each run an all-to-all among
// themselves, then the d groups all-reduce across (--group m, then --group d --stride m), 100 MB
// each (the paper does not say which collective the 100 MB is; both, reference/sipac.md §4.3).
// The paper's algorithms (§VI-A-3): SiPCO for both on SiPAC; mesh all-to-all and ring all-reduce
// on BCube and SuperPod (SuperPod's level model runs the all-to-all as a pairwise exchange, the
// mesh's bytes in m−1 steps); ring for both on the torus.
func hybrid(t testing.TB, net string, nodeTbps float64, p, m, d int) float64 {
	const size = 100 * units.MB
	algs := map[string][2]string{ // all-to-all, all-reduce
		"sipac": {"sipco", "sipco"}, "bcube": {"linear", "ring"}, "superpod": {"", "ring"}, "torus": {"ring", "ring"},
	}[net]
	preset := map[string]string{"sipac": "sipac-", "bcube": "bcube-", "superpod": "sipac-superpod", "torus": "sipac-torus-"}[net]
	if net != "superpod" {
		preset += fmt.Sprint(p)
	}
	return sipacCollective(t, preset, nodeTbps, algs[0], network.AllToAll, size, p, m, 1) +
		sipacCollective(t, preset, nodeTbps, algs[1], network.AllReduce, size, p, d, m)
}

// TestSiPACFig13 checks Fig. 13's shapes (SiPAC §VI-B-3, V11–V12) over 128 … 4,096 Gb/s per CU
// for both readings of p = 512 (text: m = 8, d = 64; caption: m = 64, d = 8) and p = 64 (m = 8,
// d = 8): SiPAC's time falls throughout (×≥ 16 from 128 to 4,096 Gb/s: it scales with its
// bandwidth), SuperPod's flattens (its 200 Gb/s InfiniBand per GPU is fixed: the last doubling
// gains < 10%), at p = 512 SiPAC is slower than SuperPod at 128 Gb/s ("lower per-CU bandwidth
// as compared to SuperPod when L = 3") and the fastest of the four at 4,096.
func TestSiPACFig13(t *testing.T) {
	bws := []float64{0.128, 0.256, 0.512, 1.024, 2.048, 4.096}
	for _, c := range []struct{ p, m, d int }{{512, 8, 64}, {512, 64, 8}, {64, 8, 8}} {
		times := map[string][]float64{}
		for _, net := range []string{"sipac", "bcube", "superpod", "torus"} {
			for _, bw := range bws {
				times[net] = append(times[net], hybrid(t, net, bw, c.p, c.m, c.d))
			}
		}
		s, sp := times["sipac"], times["superpod"]
		for i := 1; i < len(bws); i++ {
			if s[i] >= s[i-1] {
				t.Errorf("p=%d m=%d d=%d: SiPAC %.3g ms at %g Tb/s, not below %.3g at %g", c.p, c.m, c.d, s[i]*1e3, bws[i], s[i-1]*1e3, bws[i-1])
			}
		}
		if s[0]/s[len(s)-1] < 16 {
			t.Errorf("p=%d m=%d d=%d: SiPAC gains only %.1f× from 128 to 4,096 Gb/s", c.p, c.m, c.d, s[0]/s[len(s)-1])
		}
		if n := len(sp); sp[n-2]/sp[n-1] > 1.1 {
			t.Errorf("p=%d m=%d d=%d: SuperPod still gains %.2f× from 2,048 to 4,096 Gb/s; its InfiniBand should cap it", c.p, c.m, c.d, sp[n-2]/sp[n-1])
		}
		last := len(bws) - 1
		for _, net := range []string{"bcube", "superpod", "torus"} {
			if s[last] >= times[net][last] {
				t.Errorf("p=%d m=%d d=%d at 4,096 Gb/s: SiPAC %.3g ms, %s %.3g ms; the paper has SiPAC fastest", c.p, c.m, c.d, s[last]*1e3, net, times[net][last]*1e3)
			}
		}
		if c.p == 64 {
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
		if c.p == 512 && s[0] <= sp[0] {
			t.Errorf("p=512 m=%d d=%d at 128 Gb/s: SiPAC %.3g ms, SuperPod %.3g ms; the paper has SiPAC slower (V12)", c.m, c.d, s[0]*1e3, sp[0]*1e3)
		}
		t.Logf("p=%d m=%d d=%d (ms, 128 … 4,096 Gb/s): sipac %.3g, bcube %.3g, superpod %.3g, torus %.3g", c.p, c.m, c.d,
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

// pattern prices a raw pattern (Figs. 10–11: no algorithm, the size per flow, root 0: every
// network here is vertex-transitive or treats all roots alike).
func pattern(t testing.TB, preset, name string, size units.Bytes) float64 {
	t.Helper()
	rows, err := job.Collectives(job.CollectiveOptions{Sizes: []units.Bytes{size}, GPUs: []int{512}, Pattern: name,
		Network: job.NetworkChoice{Preset: preset}, GPU: "a100-80gb"})
	if err != nil {
		t.Fatal(err)
	}
	return float64(rows[0].Cost.Total)
}

// TestSiPACFig11 (SiPAC §VI-B-1, V1–V3; p = 512, 2,048 Gb/s per CU, r = 8, L = 3, 1 MB): SiPAC
// faster than SuperPod on every pattern (paper 3.6–5.3×) and than the torus on all-to-all (paper
// up to 5.9×), each ratio within 2× of the paper's end. The paper credits packet queueing, which
// an α–β fabric lacks, for the torus's rooted patterns (1.4×) and the electronic BCube (1.4–3.4×):
// those ratios are only logged, and SiPAC ≤ BCube is asserted where latency dominates (≤ 10 kB,
// Fig. 10). At 1 MB the two are bandwidth-bound alike (b = B/r caps a root at its links).
func TestSiPACFig11(t *testing.T) {
	for _, pt := range []string{"one-to-all", "all-to-one", "all-to-all"} {
		s := pattern(t, "sipac-512", pt, units.MB)
		sp := pattern(t, "sipac-superpod", pt, units.MB) / s
		if sp < 1 || sp < 3.6/2 || sp > 5.3*2 {
			t.Errorf("%s: SiPAC %.2f× faster than SuperPod; the paper 3.6–5.3× (within 2× of its ends)", pt, sp)
		}
		to := pattern(t, "sipac-torus-512", pt, units.MB) / s
		if pt == "all-to-all" && (to < 5.9/2 || to > 5.9*2) {
			t.Errorf("all-to-all: SiPAC %.2f× faster than the torus; the paper up to 5.9×", to)
		}
		bc := pattern(t, "bcube-512", pt, units.MB) / s
		t.Logf("%s at 1 MB: SiPAC faster than SuperPod %.2f×, torus %.2f×, BCube %.2f×", pt, sp, to, bc)
		for _, small := range []units.Bytes{100, 10 * units.KB} {
			if a, b := pattern(t, "sipac-512", pt, small), pattern(t, "bcube-512", pt, small); a > b {
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
					at[p][n.name][a] = sipacCollective(t, preset, 2.048, a, network.AllReduce, size, p, 0, 0)
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
