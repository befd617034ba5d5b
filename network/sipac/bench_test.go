package sipac

import (
	"testing"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
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
