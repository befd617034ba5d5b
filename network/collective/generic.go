package collective

import (
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Flow is an algorithm defined by its rounds of flows. A routed fabric routes them
// (network/fabric); a level network maps each round onto the level it spans (OnLevels, the exact
// fast path where the levels capture all sharing). The exported values are the generic
// algorithms every network may offer; network packages build their own with NewFlow.
type Flow struct {
	name, summary string
	ops           func(network.Op) bool
	rounds        func(op network.Op, s units.Bytes, g Members, out *Flows) error
	// bound, where set, is the algorithm's Bounder (its rounds ask for a routed link).
	bound func(op network.Op, s units.Bytes, g Members, link func(Pattern) Link) (units.Seconds, bool)
	// outline, where set, is the algorithm's Outliner (its rounds without their patterns).
	outline func(op network.Op, s units.Bytes, g Members, out *Flows) (float64, bool, error)
}

// NewFlow builds a flow algorithm.
func NewFlow(name, summary string, ops func(network.Op) bool, rounds func(op network.Op, s units.Bytes, g Members, out *Flows) error) Flow {
	return Flow{name: name, summary: summary, ops: ops, rounds: rounds}
}

func (a Flow) Name() string                  { return a.name }
func (a Flow) Summary() string               { return a.summary }
func (a Flow) Implements(op network.Op) bool { return a.ops(op) }

// Rounds emits the rounds of op over g's members.
func (a Flow) Rounds(op network.Op, s units.Bytes, g Members, out *Flows) error {
	return a.rounds(op, s, g, out)
}

// Bound is a lower bound on the price (Bounder), where the algorithm has one.
func (a Flow) Bound(op network.Op, s units.Bytes, g Members, link func(Pattern) Link) (units.Seconds, bool) {
	if a.bound == nil {
		return 0, false
	}
	return a.bound(op, s, g, link)
}

// Outline is the algorithm's rounds without their patterns (Outliner), where it has them.
func (a Flow) Outline(op network.Op, s units.Bytes, g Members, out *Flows) (float64, bool, error) {
	if a.outline == nil {
		return 0, false, nil
	}
	return a.outline(op, s, g, out)
}

func allOps(network.Op) bool { return true }

// Ops is an op predicate for a fixed list.
func Ops(ops ...network.Op) func(network.Op) bool {
	return func(op network.Op) bool {
		for _, o := range ops {
			if o == op {
				return true
			}
		}
		return false
	}
}

// Linear is the linear all-to-all of the HammingMesh SST motifs: every member posts its p−1 sends
// at once (S/p to each peer) and waits for all. One round whose traffic a fabric loads from the
// aggregated matrix; its time is the busiest link's bytes over its rate plus the slowest path.
// Levels cannot price it (the sends share links no level sees), so only routed fabrics offer it.
var Linear = Flow{name: "linear", summary: "linear all-to-all: every send posted at once (HammingMesh SST motifs)",
	ops: Ops(network.AllToAll), rounds: func(op network.Op, s units.Bytes, g Members, out *Flows) error {
		out.Algorithm = "linear"
		if p := g.P(); p > 1 {
			out.add(Round{Pattern: One(Part{Kind: Uniform}), Bytes: s / units.Bytes(p)})
		}
		return nil
	}}

// Algorithms lists the generic algorithms in registry order.
func Algorithms() []Algorithm {
	return []Algorithm{Ring, BiRing, Hierarchical, Torus2D, RHD, HD, RD, Tree, Linear, Rings, HMTorus, HMTorusSST}
}
