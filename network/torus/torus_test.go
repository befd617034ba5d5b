package torus

import (
	"math"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/topology"
)

// RAMP Fig. 15: a 2D-torus reduce-scatter on X × Y nodes takes X + Y − 2 steps; the ring p − 1.
func TestSteps(t *testing.T) {
	cfg := DefaultConfig()
	lay := topology.Levels(cfg.Tiers(), network.Group{Size: 65536, Stride: 1})
	for _, c := range []struct {
		alg  collective.Flow
		want int
	}{{collective.Torus2D, 128 + 512 - 2}, {collective.Ring, 65535}} {
		if got := collective.Price(levels(t, c.alg, network.ReduceScatter, 1e9, lay), nil, dtype.FP16).Steps; got != c.want {
			t.Errorf("%s: %d steps, want %d", c.alg.Name(), got, c.want)
		}
	}
}

// Each of the 4 ports carries 2.4/4 = 600 Gb/s; a ring along x runs at that rate with 100 + 156 ns
// per step, and the bidirectional ring halves the bytes per step.
func TestRing(t *testing.T) {
	m, err := Spec().New(DefaultConfig(), network.Env{GPUs: 128})
	if err != nil {
		t.Fatal(err)
	}
	col := network.Collective{Op: network.AllGather, Bytes: 1.28e9, Group: network.Group{Size: 128, Stride: 1}}
	cfg := DefaultConfig()
	cfg.Strategy = "ring"
	ring, _ := Spec().New(cfg, network.Env{GPUs: 128})
	c, _ := ring.Price(col)
	want := 127 * (256e-9 + 1e7/75e9)
	if math.Abs(float64(c.Total)-want) > 1e-12 {
		t.Errorf("ring all-gather %v, want %g", c.Total, want)
	}
	best, _ := m.Price(col)
	if best.Algorithm != "bidirectional ring" || math.Abs(float64(best.H2T)-float64(c.H2T)/2) > 1e-12 {
		t.Errorf("best %+v", best)
	}
}

func levels(t *testing.T, a collective.Algorithm, op network.Op, s units.Bytes, lay collective.Layout) collective.Schedule {
	t.Helper()
	sch, err := collective.Levels(a, op, s, lay)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}
