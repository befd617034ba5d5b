package hxmesh

import (
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/network"
)

// Collectives with contention on the paper's large clusters (16,384 accelerators, Table II):
// GPT-3's tensor-parallel all-reduce (4 ranks at stride 96, pp-first order) of its 384-rank job
// (96 concurrent rings) and of a job filling the machine (4,080 rings whose paths cross boards
// and share links), a data-parallel ring over every accelerator, and a uniform all-to-all over
// 1,024 ranks (16 concurrent groups, each from its aggregated traffic matrix).
var benchCases = []struct {
	name string
	cfg  func() *Config
	col  network.Collective
	gpus int
}{
	// The §V-B GPT-3 job (384 ranks) placed on the large cluster: 96 concurrent rings.
	{"hx4-large/job384/tp4@96", func() *Config { return mesh(4, 32, "trees") },
		network.Collective{Op: network.AllReduce, Bytes: 100e6, Group: network.Group{Size: 4, Stride: 96}, DType: dtype.FP16}, 384},
	{"torus-large/job384/tp4@96", func() *Config { return mesh(2, 64, "torus") },
		network.Collective{Op: network.AllReduce, Bytes: 100e6, Group: network.Group{Size: 4, Stride: 96}, DType: dtype.FP16}, 384},
	{"hx4-large/tp4@96", func() *Config { return mesh(4, 32, "trees") },
		network.Collective{Op: network.AllReduce, Bytes: 100e6, Group: network.Group{Size: 4, Stride: 96}, DType: dtype.FP16}, 16320},
	{"torus-large/tp4@96", func() *Config { return mesh(2, 64, "torus") },
		network.Collective{Op: network.AllReduce, Bytes: 100e6, Group: network.Group{Size: 4, Stride: 96}, DType: dtype.FP16}, 16320},
	{"hx4-large/dp16384", func() *Config { return mesh(4, 32, "trees") },
		network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 16384, Stride: 1}, DType: dtype.FP16}, 16384},
	// The same all-reduce where the rows and columns are fat trees of several leaves (the large
	// Hx2Mesh and HyperX: moves of boards within a leaf's block fix its uplinks).
	{"hx2-large/dp16384", func() *Config { return mesh(2, 64, "trees") },
		network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 16384, Stride: 1}, DType: dtype.FP16}, 16384},
	{"hyperx-large/dp16384", func() *Config { return mesh(1, 128, "trees") },
		network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 16384, Stride: 1}, DType: dtype.FP16}, 16384},
	{"torus-large/a2a1024", func() *Config { return mesh(2, 64, "torus") },
		network.Collective{Op: network.AllToAll, Bytes: 1e9, Group: network.Group{Size: 1024, Stride: 1}, DType: dtype.FP16}, 16384},
}

// BenchmarkContention16384Cold prices from scratch: a new model each time, the graph's routed
// rounds forgotten (the graph itself is built once per configuration and cached, as every run
// of one process shares it), with every algorithm the network offers (best) and with the
// motifs' single ring.
func BenchmarkContention16384Cold(b *testing.B) {
	for _, bc := range benchCases {
		for _, strategy := range []string{"best", "ring"} {
			if strategy == "ring" && bc.col.Op == network.AllToAll {
				continue
			}
			b.Run(bc.name+"/"+strategy, func(b *testing.B) {
				cfg := bc.cfg()
				cfg.Strategy = strategy
				g, err := cfg.Fabric()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					g.Forget()
					m, err := Spec().New(cfg, network.Env{GPUs: bc.gpus})
					if err != nil {
						b.Fatal(err)
					}
					if _, err := m.Price(bc.col); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkContention16384NewModel is the next estimate of a sweep: a new model of the same
// job, whose rounds the graph has routed before.
func BenchmarkContention16384NewModel(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			cfg := bc.cfg()
			warm, err := Spec().New(cfg, network.Env{GPUs: bc.gpus})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := warm.Price(bc.col); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				m, err := Spec().New(cfg, network.Env{GPUs: bc.gpus})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := m.Price(bc.col); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkContention16384Cached prices the same collective again on one model (the memo hit
// every estimate of a sweep sees for a repeated layer).
func BenchmarkContention16384Cached(b *testing.B) {
	for _, bc := range benchCases {
		b.Run(bc.name, func(b *testing.B) {
			m, err := Spec().New(bc.cfg(), network.Env{GPUs: bc.gpus})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.Price(bc.col); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Price(bc.col); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
