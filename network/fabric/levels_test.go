package fabric_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/alphabeta"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/network/superpod"
	"github.com/ddlest/ddlest/network/topology"
)

// memBound prices an n-to-1 reduction as n+1 buffers through memory at 2 TB/s.
type memBound struct{}

func (memBound) ReduceTime(fanIn int, b units.Bytes, _ dtype.DType) units.Seconds {
	return units.Seconds(float64(fanIn+1) * float64(b) / 2e12)
}

var generic = []collective.Algorithm{collective.Ring, collective.Hierarchical, collective.RHD, collective.Tree}

func every(network.Op) []collective.Algorithm { return generic }

// exact says whether the level form of alg is exact for op on a layout of several levels: the
// shift-based steps of Bruck and the dissemination barrier send the last members' messages
// across the outermost level, which the level form prices on the level the distance spans.
func exact(alg string, op network.Op, levels int) bool {
	return !(alg == "rhd" && levels > 1 && (op == network.AllToAll || op == network.Barrier))
}

// The flow pricer equals the level pricer where the level model is exact: a non-blocking
// SuperPod-like fat tree (NVSwitch, leaf, spine, core; every GPU its own InfiniBand port) and the
// flat α–β network, for ring (pairwise exchange for all-to-all), hierarchical ring, recursive
// halving/doubling and the binary tree, on groups that span one tier or several, with every
// concurrent group of the job routed at once. Power-of-two groups: pairwise exchange and
// halving are XOR steps, which stay inside the level they span (relative 1e-9).
func TestFlowsEqualLevels(t *testing.T) {
	const gpus = 64
	sp := superpod.DefaultConfig()
	sp.GPUsPerNode, sp.NodesPerLeaf, sp.LeavesPerSpine, sp.MaxGPUs = 4, 2, 2, gpus // units of 4, 8, 16, 64 GPUs
	spGraph, err := sp.Fabric(gpus)
	if err != nil {
		t.Fatal(err)
	}
	ab := &alphabeta.Config{BandwidthGbit: 400, LatencyNs: 1370}
	abGraph, err := ab.Fabric(gpus)
	if err != nil {
		t.Fatal(err)
	}
	nets := []struct {
		name  string
		tiers []topology.Tier
		graph *fabric.Graph
	}{
		{"superpod", sp.Tiers(), spGraph},
		{"alphabeta", []topology.Tier{{Name: "link", Span: gpus, Link: collective.Link{Name: "link", Latency: units.Ns(1370), Bandwidth: units.Gbps(400)}}}, abGraph},
	}
	env := network.Env{GPUs: gpus, Reducer: memBound{}}
	groups := []network.Group{{Size: 64, Stride: 1}, {Size: 16, Stride: 1}, {Size: 16, Stride: 4}, {Size: 4, Stride: 16},
		{Size: 8, Stride: 2}, {Size: 2, Stride: 32}, {Size: 32, Stride: 2}}
	checked := 0
	for _, n := range nets {
		for _, alg := range generic {
			choice, _ := collective.ParseFor(alg.Name(), generic)
			lv, err := topology.NewModel(n.name, n.tiers, every, choice, env, gpus)
			if err != nil {
				t.Fatal(err)
			}
			fl, err := fabric.NewModel(n.graph, env, fabric.Options{Name: n.name, Offer: every, Choice: choice, Tiers: n.tiers})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range groups {
				levels := 0
				for _, l := range topology.Levels(n.tiers, g).Levels {
					if l.Size > 1 {
						levels++
					}
				}
				for _, op := range network.Ops() {
					if !alg.Implements(op) || !exact(alg.Name(), op, levels) || (op == network.SendRecv) != (g.Size == 2) {
						continue
					}
					for _, s := range []units.Bytes{1e3, 64e6} {
						c := network.Collective{Op: op, Bytes: s, Group: g, DType: dtype.FP16}
						want, err := lv.Price(c)
						if err != nil {
							t.Fatal(err)
						}
						got, err := fl.Price(c)
						if err != nil {
							t.Fatalf("%s %s %s %+v: %v", n.name, alg.Name(), op, g, err)
						}
						name := fmt.Sprintf("%s %s %s %v over %+v", n.name, alg.Name(), op, s, g)
						if got.Steps != want.Steps || got.Algorithm != want.Algorithm {
							t.Errorf("%s: flows %d steps (%s), levels %d (%s)", name, got.Steps, got.Algorithm, want.Steps, want.Algorithm)
						}
						for _, v := range [][2]units.Seconds{{got.Total, want.Total}, {got.H2H, want.H2H}, {got.H2T, want.H2T}, {got.Compute, want.Compute}} {
							if math.Abs(float64(v[0]-v[1])) > 1e-9*float64(v[1]) {
								t.Errorf("%s: flows %+v, levels %+v", name, got, want)
								break
							}
						}
						checked++
					}
				}
			}
		}
	}
	t.Logf("%d comparisons", checked)
	if checked < 300 {
		t.Errorf("only %d comparisons", checked)
	}
}
