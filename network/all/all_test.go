package all

import (
	"testing"

	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/network"
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
