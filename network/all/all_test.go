package all

import (
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Every registered network builds with its defaults, prices a collective, documents every
// parameter with a source, and is keyed by its own name.
func TestRegistry(t *testing.T) {
	r := Registry()
	if len(r.Names()) < 2 {
		t.Fatalf("names = %v", r.Names())
	}
	for _, name := range r.Names() {
		spec, _ := r.Lookup(name)
		if spec.Name != name || spec.Summary == "" || spec.Source == "" {
			t.Errorf("%s: incomplete spec %+v", name, spec)
		}
		cfg := spec.NewConfig()
		if err := cfg.Validate(); err != nil {
			t.Errorf("%s defaults: %v", name, err)
		}
		for _, p := range params.List(cfg) {
			if p.Source == "" || p.Help == "" {
				t.Errorf("%s parameter %s lacks help or source", name, p.Key)
			}
		}
		m, err := spec.New(cfg, network.Env{GPUs: 8})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.Name() != name {
			t.Errorf("model name %q, want %q", m.Name(), name)
		}
		if _, err := m.Price(network.Collective{Op: network.AllReduce, Bytes: 1e6, Group: network.Group{Size: 8, Stride: 1}}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The sixteen HammingMesh presets (Table II's small and large clusters) and WRHT's electrical
// fat tree (Table 2) load, each names its network, validates, and sources every parameter.
func TestPresets(t *testing.T) {
	r, err := Presets()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ft-small", "ft50-small", "ft75-small", "df-small", "hyperx-small", "hx2-small", "hx4-small", "torus-small",
		"ft-large", "ft50-large", "ft75-large", "df-large", "hyperx-large", "hx2-large", "hx4-large", "torus-large", "wrht-electrical", "oddl-10", "oddl-ft", "sip-ring", "oddl-testbed", "sipac-512", "sipac-64", "bcube-512", "bcube-64", "sipac-superpod", "sipac-torus-512", "sipac-torus-64", "sipac-testbed", "bcube-testbed", "sipac-testbed-leafspine"}
	if got := r.Names(); len(got) != len(want) {
		t.Fatalf("presets %v, want %v", got, want)
	}
	for i, name := range r.Names() {
		if name != want[i] {
			t.Errorf("preset %d is %s, want %s", i, name, want[i])
		}
	}
	if _, err := r.Lookup("hx8-small"); err == nil || !strings.Contains(err.Error(), "ft-small, ft50-small") {
		t.Errorf("unknown preset: %v", err)
	}
	// A preset with a key its network does not have, or without a source, is refused.
	bad := Preset{Name: "x", Network: "fattree", Params: []byte(`{"taper": 0.5, "radixx": 64}`), Sources: map[string]string{"taper": "s", "radixx": "s"}}
	if err := check(bad); err == nil || !strings.Contains(err.Error(), "radixx") {
		t.Errorf("unknown key: %v", err)
	}
	bad = Preset{Name: "x", Network: "fattree", Params: []byte(`{"taper": 0.5}`)}
	if err := check(bad); err == nil || !strings.Contains(err.Error(), "no source") {
		t.Errorf("missing source: %v", err)
	}
}

// Every algorithm has a summary and a name unique among what any one network offers (a network
// may give a generic name its own algorithm: wdmring's "tree" is the WRHT paper's unpipelined
// binary tree), --strategy lists each name once, and the names start with best.
func TestAlgorithms(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range Algorithms() {
		if a.Summary() == "" {
			t.Errorf("algorithm %q without summary", a.Name())
		}
		seen[a.Name()] = true
	}
	for _, s := range Specs() {
		cfg, ok := s.NewConfig().(interface{ Algorithms() []collective.Algorithm })
		if !ok {
			continue
		}
		offered := map[string]bool{}
		for _, a := range cfg.Algorithms() {
			if offered[a.Name()] {
				t.Errorf("network %s offers two algorithms named %q", s.Name, a.Name())
			}
			offered[a.Name()] = true
		}
	}
	if names := AlgorithmNames(); len(names) != len(seen)+1 {
		t.Errorf("names %v list %d algorithms, %d are registered", names, len(names)-1, len(seen))
	}
	for _, n := range []string{"ring", "rings", "torus", "linear", "ramp"} {
		if !seen[n] {
			t.Errorf("%s is not registered", n)
		}
	}
	if AlgorithmNames()[0] != "best" {
		t.Errorf("names %v", AlgorithmNames())
	}
}
