package sipac

import (
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/alphabeta"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
)

// Logical is Table II's logical topology for the Ring, Mesh and H-Ring rows (§V: "logical
// topologies with uniform link latency and bandwidth"): p CUs each on one port of a non-blocking
// crossbar at gbit Gb/s, alphaUs µs per step, running ring, mesh or hring (Table II's, groups of
// k) as strategy. SiPCO's row runs on SiPAC itself, B = 1/β per link (reference/sipac.md §2.5(1)).
func Logical(p, k int, gbit, alphaUs float64, strategy string) (network.Model, error) {
	ab := alphabeta.Config{BandwidthGbit: gbit, LatencyNs: 1000 * alphaUs}
	g, err := ab.Fabric(p)
	if err != nil {
		return nil, err
	}
	algs := []collective.Algorithm{collective.Ring, collective.Mesh, collective.HRingTableII(k)}
	choice, err := collective.ParseFor(strategy, algs)
	if err != nil {
		return nil, err
	}
	return fabric.NewModel(g, network.Env{GPUs: p}, fabric.Options{Name: "logical", Choice: choice,
		Offer: func(network.Op) []collective.Algorithm { return algs }})
}
