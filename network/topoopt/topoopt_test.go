package topoopt

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/network"
)

// RAMP §7.5–7.6: 1.6 Tb/s per node, 260 ns between circuit neighbours (+100 ns in-out), single
// ring: an all-reduce on p nodes takes 2(p−1)·(360 ns + S/(p·200 GB/s)).
func TestRingOnly(t *testing.T) {
	m, err := Spec().New(DefaultConfig(), network.Env{GPUs: 1024})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := m.Price(network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 1024, Stride: 1}, DType: dtype.FP16})
	want := 2 * 1023 * (360e-9 + 1e9/1024/200e9)
	if math.Abs(float64(c.Total)-want) > 1e-12 || c.Algorithm != "ring" {
		t.Errorf("all-reduce %v (%s), want %g", c.Total, c.Algorithm, want)
	}
	cfg := DefaultConfig()
	cfg.Strategy = "hierarchical"
	_, err = Spec().New(cfg, network.Env{GPUs: 8})
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "valid: best, ring") {
		t.Errorf("hierarchical on TopoOpt: %v", err)
	}
}

// alltoall=relay (the default): non-neighbour blocks are relayed around the circuit ring: an
// all-to-all on 8 nodes moves Σ min(j, 8−j) = 16 block-hops per member. alltoall=direct (RAMP
// §7.5's reconfiguration-free circuits): 7 steps of one 1 MB block each, 7 · (360 ns + 1 MB /
// 200 GB/s).
func TestAllToAll(t *testing.T) {
	cfg := DefaultConfig()
	m, _ := Spec().New(cfg, network.Env{GPUs: 8})
	c, _ := m.Price(network.Collective{Op: network.AllToAll, Bytes: 8e6, Group: network.Group{Size: 8, Stride: 1}})
	if want := 16 * 1e6 / 200e9; math.Abs(float64(c.H2T)-want) > 1e-15 {
		t.Errorf("relay H2T %v, want %g", c.H2T, want)
	}
	cfg.AllToAll = "direct"
	m, _ = Spec().New(cfg, network.Env{GPUs: 8})
	c, _ = m.Price(network.Collective{Op: network.AllToAll, Bytes: 8e6, Group: network.Group{Size: 8, Stride: 1}})
	if want := 7 * (360e-9 + 1e6/200e9); math.Abs(float64(c.Total)-want) > 1e-15 {
		t.Errorf("direct %v, want %g", c.Total, want)
	}
	cfg.AllToAll = "hop"
	if _, err := Spec().New(cfg, network.Env{GPUs: 8}); err == nil || !strings.Contains(err.Error(), "direct, relay") {
		t.Errorf("bad alltoall: %v", err)
	}
}
