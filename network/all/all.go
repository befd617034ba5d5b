// Package all lists every network model in one function: the explicit registry (no init side
// effects). Adding a network is one more line here.
package all

import (
	"github.com/ddlest/ddlest/internal/registry"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/alphabeta"
	"github.com/ddlest/ddlest/network/ideal"
)

// Registry returns the network registry, keyed by each package's Name constant.
func Registry() *registry.Registry[network.Spec] {
	r := registry.New[network.Spec]("network")
	for _, s := range []network.Spec{
		ideal.Spec(),
		alphabeta.Spec(),
	} {
		r.Add(s.Name, s)
	}
	return r
}
