package figures

import (
	"slices"
	"testing"

	"github.com/ddlest/ddlest/internal/repro"
	"github.com/ddlest/ddlest/plots"
)

// checkSeries asserts that a panel plots exactly want[name] (by series name) at xs, every
// series of want present.
func checkSeries(t *testing.T, what string, pn plots.Panel, xs []float64, want map[string][]float64) {
	t.Helper()
	if len(pn.Series) != len(want) {
		t.Errorf("%s: %d series, want %d", what, len(pn.Series), len(want))
	}
	for _, s := range pn.Series {
		w, ok := want[s.Name]
		if !ok || !slices.Equal(s.Y, w) || !slices.Equal(s.X, xs) {
			t.Errorf("%s %s: plots (%v, %v), the library (%v, %v)", what, s.Name, s.X, s.Y, xs, w)
		}
	}
}

// byName re-keys a library map by the figure's series names.
func byName(m map[string][]float64, name func(string) string) map[string][]float64 {
	out := map[string][]float64{}
	for k, v := range m {
		out[name(k)] = v
	}
	return out
}

// SiPAC's figures plot exactly the reproduction library's numbers: Fig. 7's times per
// algorithm, Fig. 9's counts, Fig. 11's times and speed-ups (the rows' sipac/fig11-*), Fig. 13's times per case.
func TestSiPACFiguresAreTheLibrary(t *testing.T) {
	f7, err := repro.SiPACFig7()
	if err != nil {
		t.Fatal(err)
	}
	pns := panels(t, "sipac-fig7")
	var ps []float64
	for _, s := range repro.SiPACFig7Sizes {
		ps = append(ps, float64(s.P))
	}
	alg := func(a string) string { return sipacAlgName[a] }
	checkSeries(t, "fig7 by size", pns[0], ps, byName(f7.BySize, alg))
	checkSeries(t, "fig7 by message", pns[1], repro.SiPACFig7Messages, byName(f7.ByMessage, alg))

	f9, err := repro.SiPACFig9()
	if err != nil {
		t.Fatal(err)
	}
	pns = panels(t, "sipac-fig9")
	for i, get := range []func(repro.SiPACFig9Count) []float64{
		func(c repro.SiPACFig9Count) []float64 { return c.Links },
		func(c repro.SiPACFig9Count) []float64 { return c.Transceivers },
		func(c repro.SiPACFig9Count) []float64 { return c.Switches },
	} {
		// SiPAC and BCube at L = 2 and 3 and the three baselines; the torus has no switch to draw.
		want := len(f9)
		if i == 2 {
			want--
		}
		if len(pns[i].Series) != want || want != 4+len(repro.SiPACFig9Baselines)-i/2 {
			t.Fatalf("fig9 %s: %d series", pns[i].Title, len(pns[i].Series))
		}
		for _, s := range pns[i].Series {
			k := slices.IndexFunc(f9, func(c repro.SiPACFig9Count) bool { return Fig9Name(c) == s.Name })
			if k < 0 || !slices.Equal(s.X, f9[k].CUs) || !slices.Equal(s.Y, get(f9[k])) {
				t.Errorf("fig9 %s %s: (%v, %v) is no network's counts", pns[i].Title, s.Name, s.X, s.Y)
			}
		}
	}
	// SiPAC(r = 8, L = 3) by hand (§III-A, reference/sipac.md §1.2): 192 WSSs, 1,536 links and
	// transceivers; BCube a transceiver at both ends, 3,072.
	if c := f9[1]; c.CUs[1] != 512 || c.Switches[1] != 192 || c.Links[1] != 1536 || c.Transceivers[1] != 1536 || f9[3].Transceivers[1] != 3072 {
		t.Errorf("fig9 at 512 CUs: %+v, BCube %+v", c, f9[3])
	}

	f11, err := repro.SiPACFig11()
	if err != nil {
		t.Fatal(err)
	}
	pns = panels(t, "sipac-fig11")
	xs := []float64{0, 1, 2} // one-to-all, all-to-one, all-to-all
	checkSeries(t, "fig11 times", pns[0], xs, f11.Times)
	speed := map[string][]float64{}
	for _, net := range []string{"superpod", "torus", "bcube"} {
		speed[net] = f11.Speedups(net)
	}
	checkSeries(t, "fig11 speed-ups", pns[1], xs, speed)
	if !slices.Equal(pns[0].X.Categories, []string{"one-to-all", "all-to-one", "all-to-all"}) {
		t.Errorf("fig11 categories %v", pns[0].X.Categories)
	}

	f13, err := repro.SiPACFig13()
	if err != nil {
		t.Fatal(err)
	}
	pns = panels(t, "sipac-fig13")
	if len(pns) != 3 { // p = 64, and p = 512 by the caption and by the text
		t.Fatalf("fig13: %d panels, want 3", len(pns))
	}
	for i, c := range f13 {
		checkSeries(t, pns[i].Title, pns[i], []float64{128, 256, 512, 1024, 2048, 4096}, c.Times)
	}
}
