package sipac

import (
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// benchPrice prices one all-reduce at p = 4,096 (r = 16, L = 3) on a new model per iteration:
// the graph and its routed rounds are cached per shape, so this is what a sweep's next estimate
// pays (target ≤ 5 µs, issue 12).
func benchPrice(b *testing.B, strategy string, op network.Op) {
	c := DefaultConfig()
	c.Strategy = strategy
	col := network.Collective{Op: op, Bytes: units.Bytes(1e8), Group: network.Group{Size: 4096, Stride: 1}}
	warm, err := Spec().New(c, network.Env{GPUs: 4096})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := warm.Price(col); err != nil { // route once: the graph keeps the loads
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m, err := Spec().New(c, network.Env{GPUs: 4096})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Price(col); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSiPCO4096(b *testing.B) { benchPrice(b, "sipco", network.AllReduce) }
func BenchmarkMesh4096(b *testing.B)  { benchPrice(b, "mesh", network.AllReduce) }

// BenchmarkSiPCO4096Cold routes SiPCO's rounds from scratch (a fresh graph each time).
func BenchmarkSiPCO4096Cold(b *testing.B) {
	col := network.Collective{Op: network.AllReduce, Bytes: units.Bytes(1e8), Group: network.Group{Size: 4096, Stride: 1}}
	i := 0
	for b.Loop() {
		c := DefaultConfig()
		c.Strategy = "sipco"
		c.HopUs = 1 + float64(i)*1e-9 // a new graph key
		i++
		m, err := Spec().New(c, network.Env{GPUs: 4096})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Price(col); err != nil {
			b.Fatal(err)
		}
	}
}

// pricer is a model that routes raw traffic (fabric.Model).
type pricer interface {
	PricePattern(name string, pt collective.Pattern, bytes units.Bytes, g network.Group) (network.Cost, error)
}

// a2a512 prices the raw all-to-all of Fig. 11 (p = 512, r = 8, L = 3, 1 MB per flow) on a new
// model; hop changes the graph key (a fresh graph: routed from scratch) when cold.
func a2a512(b *testing.B, hop float64) {
	c := DefaultConfig()
	c.HopUs = hop
	m, err := Spec().New(c, network.Env{GPUs: 512})
	if err != nil {
		b.Fatal(err)
	}
	pt := collective.One(collective.Part{Kind: collective.Uniform, Stride: 1, Size: 512})
	if _, err := m.(pricer).PricePattern("all-to-all", pt, units.MB, network.Group{Size: 512, Stride: 1}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkAllToAll512 is the raw all-to-all once routed (target ≤ 20 µs, issue 12).
func BenchmarkAllToAll512(b *testing.B) {
	a2a512(b, 1)
	b.ReportAllocs()
	for b.Loop() {
		a2a512(b, 1)
	}
}

// BenchmarkAllToAll512Cold routes it on a fresh graph each time (target ≤ 50 ms).
func BenchmarkAllToAll512Cold(b *testing.B) {
	i := 0
	for b.Loop() {
		i++
		a2a512(b, 1+float64(i)*1e-9)
	}
}

// BenchmarkInventory4096 lists Fig. 9's counts at p = 4,096 (target ≤ 1 ms at any size).
func BenchmarkInventory4096(b *testing.B) {
	c := DefaultConfig()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Inventory(4096); err != nil {
			b.Fatal(err)
		}
	}
}
