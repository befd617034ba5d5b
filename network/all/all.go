package all

import (
	"slices"
	"sync"

	"github.com/ddlest/ddlest/internal/registry"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/alphabeta"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/dragonfly"
	"github.com/ddlest/ddlest/network/fattree"
	"github.com/ddlest/ddlest/network/hxmesh"
	"github.com/ddlest/ddlest/network/ideal"
	"github.com/ddlest/ddlest/network/oddl"
	"github.com/ddlest/ddlest/network/ramp"
	"github.com/ddlest/ddlest/network/sipac"
	"github.com/ddlest/ddlest/network/superpod"
	"github.com/ddlest/ddlest/network/topoopt"
	"github.com/ddlest/ddlest/network/torus"
	"github.com/ddlest/ddlest/network/wdmring"
)

// Specs lists every network model, in the order `ddlest nets` shows them.
func Specs() []network.Spec {
	return []network.Spec{
		ideal.Spec(),
		alphabeta.Spec(),
		ramp.Spec(),
		superpod.Spec(),
		torus.Spec(),
		topoopt.Spec(),
		fattree.Spec(),
		dragonfly.Spec(),
		hxmesh.Spec(),
		wdmring.Spec(),
		oddl.Spec(),
		sipac.Spec(),
		sipac.BCubeSpec(),
	}
}

var (
	once sync.Once
	reg  *registry.Registry[network.Spec]
)

// Registry returns the network registry, keyed by each package's Name constant. It is built once;
// entries are immutable.
func Registry() *registry.Registry[network.Spec] {
	once.Do(func() {
		reg = registry.New[network.Spec]("network")
		for _, s := range Specs() {
			reg.Add(s.Name, s)
		}
	})
	return reg
}

// Algorithms lists every collective algorithm, generic ones first, then those a network brings:
// the names --strategy accepts, shell completion offers and `ddlest nets` explains.
func Algorithms() []collective.Algorithm {
	return append(collective.Algorithms(), ramp.Algorithm{}, wdmring.WRHT{}, wdmring.BT{}, wdmring.HRing{},
		oddl.HD{}, oddl.Ring{}, oddl.A2A{}, oddl.P2P{}, sipac.SiPCO(0), sipac.RSAG(0), collective.Mesh, collective.HRingTableII(0))
}

// AlgorithmNames lists the algorithms' names, with "best" first, each once (a network may give a
// name its own algorithm: wdmring's "tree" is the paper's unpipelined binary tree).
func AlgorithmNames() []string {
	names := []string{collective.Best}
	for _, n := range collective.Names(Algorithms()) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}
