package fabric

import (
	"testing"

	"github.com/ddlest/ddlest/internal/units"
)

// A lone flow under Hash routing takes one path; router.path walks it directly. It must leave
// exactly what the general propagation (source + toward, which also serves aggregated traffic)
// leaves: the same physical links loaded with the same weight, and the same latency. The fabric
// is a two-level folded Clos of 8 endpoints on 4 leaves with two spines, each leaf–spine pair
// joined by a bundle of 3 links, so a flow between leaves chooses among 6 physical up-links at
// its leaf and the spine's down bundle of 3: every flow of the 8 × 7 checked takes a hashed
// choice or none (same leaf), over graphs with the exact distance oracle (no Stepper).
func TestHashedPathEqualsPropagation(t *testing.T) {
	const ends, leaves, spines = 8, 4, 2
	b := NewBuilder(ends, 0)
	leaf := b.Switches(leaves, units.Seconds(100e-9))
	spine := b.Switches(spines, units.Seconds(300e-9))
	for e := int32(0); e < ends; e++ {
		b.Duplex(e, leaf+e/2, Spec{Class: "host", Rate: 25e9, Latency: 10e-9})
	}
	for l := int32(0); l < leaves; l++ {
		for s := int32(0); s < spines; s++ {
			b.Duplex(leaf+l, spine+s, Spec{Class: "trunk", Width: 3, Rate: 50e9, Latency: 20e-9})
		}
	}
	g, err := b.Build(Endpoint{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 3; seed++ {
		direct, general := newRouter(g), newRouter(g)
		direct.routing, general.routing = Hash, Hash
		direct.seed, general.seed = seed, seed
		for s := int32(0); s < ends; s++ {
			for d := int32(0); d < ends; d++ {
				if s == d {
					continue
				}
				w := float64(1 + s + 3*d)
				lat := direct.path(s, d, w)
				general.source(s, g.dist.Dist(s, d), w, 0)
				want := general.toward(d, -1)
				if lat != want {
					t.Errorf("seed %d, %d → %d: path latency %g s, propagation %g s", seed, s, d, lat, want)
				}
				for k := range direct.load {
					if direct.load[k] != general.load[k] {
						t.Errorf("seed %d, %d → %d: physical link %d carries %g by path, %g by propagation", seed, s, d, k, direct.load[k], general.load[k])
					}
				}
				if hops := len(direct.usedIdx); hops != int(g.dist.Dist(s, d)) {
					t.Errorf("seed %d, %d → %d: %d links loaded, the distance is %d", seed, s, d, hops, g.dist.Dist(s, d))
				}
				direct.finish(nil)
				general.finish(nil)
			}
		}
	}
}
