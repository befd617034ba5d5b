package alphabeta

import (
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/fabric"
)

func TestRingAllReduce(t *testing.T) {
	spec := Spec()
	cfg := spec.NewConfig()
	if err := params.SetPairs(cfg, []string{"bandwidth_gbit_per_s=400", "latency_ns=1000"}); err != nil {
		t.Fatal(err)
	}
	m, err := spec.New(cfg, network.Env{GPUs: 64})
	if err != nil {
		t.Fatal(err)
	}
	c, err := m.Price(network.Collective{Op: network.AllReduce, Bytes: 1e9, Group: network.Group{Size: 64, Stride: 1}})
	if err != nil {
		t.Fatal(err)
	}
	// 400 Gb/s = 50 GB/s. 2·63 steps · 1 µs + 2·63/64 · 1e9/50e9 = 126 µs + 39.375 ms.
	want := 126e-6 + 2*63.0/64*1e9/50e9
	if math.Abs(float64(c.Total)-want) > 1e-12 {
		t.Errorf("total = %v, want %g s", c.Total, want)
	}
	if _, err := m.Price(network.Collective{Op: network.AllReduce, Bytes: 1, Group: network.Group{Size: 65, Stride: 1}}); errs.ExitCode(err) != errs.ExitUsage {
		t.Errorf("group beyond the job: %v", err)
	}
}

func TestValidate(t *testing.T) {
	cfg := &Config{BandwidthGbit: 0, LatencyNs: -1}
	err := cfg.Validate()
	if errs.ExitCode(err) != errs.ExitUsage {
		t.Fatalf("err = %v", err)
	}
	// Both problems at once.
	if s := err.Error(); !strings.Contains(s, "bandwidth_gbit_per_s 0") || !strings.Contains(s, "latency_ns -1") {
		t.Errorf("message %q", s)
	}
	if Spec().NewConfig().Validate() != nil {
		t.Error("defaults invalid")
	}
}

// TestCrossbarDistance: the closed-form distance equals the exact search from every node.
func TestCrossbarDistance(t *testing.T) {
	g, err := (&Config{BandwidthGbit: 100}).Fabric(5)
	if err != nil {
		t.Fatal(err)
	}
	if err := fabric.CheckDistances(g); err != nil {
		t.Error(err)
	}
}
