package topology

import (
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Model is a hierarchical network with a job placed on it: its tiers, the strategies it can run,
// and the strategy to use (collective.Best picks the cheapest per collective and size).
type Model struct {
	NetName    string
	Tiers      []Tier
	Strategies collective.Strategies
	Strategy   collective.Strategy
	Env        network.Env
}

// NewModel checks that the job fits the network (maxGPUs ranks) and that the strategy is one
// the network runs.
func NewModel(name string, tiers []Tier, ss collective.Strategies, st collective.Strategy, env network.Env, maxGPUs int) (*Model, error) {
	if env.GPUs > maxGPUs {
		return nil, errs.Usage("a job of %d GPUs does not fit network %s: its maximum is %d", env.GPUs, name, maxGPUs)
	}
	if st != collective.Best {
		ok := false
		for _, a := range ss.Allowed {
			ok = ok || a == st
		}
		if !ok {
			return nil, errs.Usage("network %s cannot run strategy %s; valid: best, %s", name, st, ss.Names())
		}
	}
	return &Model{NetName: name, Tiers: tiers, Strategies: ss, Strategy: st, Env: env}, nil
}

// Name is the network's registry name.
func (m *Model) Name() string { return m.NetName }

// Price places c's group on the tiers and prices it with the model's strategy.
func (m *Model) Price(c network.Collective) (network.Cost, error) {
	if err := network.CheckGroup(c, m.Env); err != nil {
		return network.Cost{}, err
	}
	if c.Group.Size <= 1 {
		return network.Cost{Algorithm: "none"}, nil
	}
	return m.Strategies.PriceStrategy(m.NetName, m.Strategy, c, Levels(m.Tiers, c.Group), m.Env.Reducer)
}
