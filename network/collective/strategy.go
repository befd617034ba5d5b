package collective

import (
	"strings"

	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Strategy names a collective algorithm.
type Strategy int

const (
	Best         Strategy = iota // the cheapest strategy the network allows
	StrategyRing                 // single ring (pairwise exchange for all-to-all)
	StrategyBiRing
	StrategyHierarchical
	StrategyTorus2D
	StrategyRHD  // recursive halving/doubling (Bruck for all-to-all)
	StrategyTree // pipelined binary tree (broadcast, reduce, all-reduce)
	StrategyRAMP // RAMP-x, built by network/ramp
)

var strategyNames = []string{"best", "ring", "biring", "hierarchical", "torus2d", "rhd", "tree", "ramp"}

func (s Strategy) String() string { return strategyNames[s] }

// ParseStrategy reads a strategy name.
func ParseStrategy(s string) (Strategy, error) {
	return enum.Parse[Strategy]("--strategy", s, strategyNames)
}

// Build returns the schedule of one level-based strategy; false when the strategy does not
// implement op (or is not level-based, as RAMP-x).
func Build(st Strategy, op network.Op, s units.Bytes, lay Layout) (Schedule, bool) {
	switch st {
	case StrategyRing:
		return Ring(op, s, lay), true
	case StrategyBiRing:
		return BiRing(op, s, lay), true
	case StrategyHierarchical:
		return Hierarchical(op, s, lay), true
	case StrategyTorus2D:
		return Torus2D(op, s, lay), true
	case StrategyRHD:
		return RHD(op, s, lay), true
	case StrategyTree:
		return Tree(op, s, lay)
	}
	return Schedule{}, false
}

// Strategies is a network's strategy set: what "best" chooses from, and what may be asked for.
type Strategies struct {
	// Allowed are the strategies the network can run.
	Allowed []Strategy
	// Skip lists (strategy, op) pairs the network does not offer even though the strategy
	// implements the op.
	Skip func(Strategy, network.Op) bool
}

func (ss Strategies) allows(st Strategy, op network.Op) bool {
	for _, a := range ss.Allowed {
		if a == st {
			return ss.Skip == nil || !ss.Skip(st, op)
		}
	}
	return false
}

// Names lists the allowed strategies.
func (ss Strategies) Names() string {
	names := make([]string, len(ss.Allowed))
	for i, s := range ss.Allowed {
		names[i] = s.String()
	}
	return strings.Join(names, ", ")
}

// PriceStrategy prices c on levels with strategy st, or with the cheapest allowed strategy for
// Best. network names the network in errors.
func (ss Strategies) PriceStrategy(netName string, st Strategy, c network.Collective, lay Layout, red network.Reducer) (network.Cost, error) {
	if st != Best {
		if !ss.allows(st, c.Op) {
			return network.Cost{}, errs.Usage("strategy %s cannot run %s on network %s; valid: best, %s", st, c.Op, netName, ss.Names())
		}
		sch, ok := Build(st, c.Op, c.Bytes, lay)
		if !ok {
			return network.Cost{}, errs.Usage("strategy %s does not implement %s", st, c.Op)
		}
		return Price(sch, red, c.DType), nil
	}
	var best network.Cost
	found := false
	for _, a := range ss.Allowed {
		if !ss.allows(a, c.Op) {
			continue
		}
		sch, ok := Build(a, c.Op, c.Bytes, lay)
		if !ok {
			continue
		}
		cost := Price(sch, red, c.DType)
		if !found || cost.Total < best.Total {
			best, found = cost, true
		}
	}
	if !found {
		return network.Cost{}, errs.Usage("no strategy of network %s runs %s", netName, c.Op)
	}
	return best, nil
}
