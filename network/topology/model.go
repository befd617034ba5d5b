package topology

import (
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Model is a hierarchical network with a job placed on it: its tiers, the level algorithms it
// offers per op, and the strategy (collective.Best picks the cheapest per collective and size).
type Model struct {
	NetName string
	Tiers   []Tier
	Offer   func(network.Op) []collective.Algorithm
	Choice  collective.Choice
	Env     network.Env
	memo    network.Memo
}

// Shareable marks the model as immutable after construction (Price only reads it; its memo is
// synchronised): network.Shareable.
func (*Model) Shareable() {}

// NewModel checks that the job fits the network (maxGPUs ranks).
func NewModel(name string, tiers []Tier, offer func(network.Op) []collective.Algorithm, choice collective.Choice, env network.Env, maxGPUs int) (*Model, error) {
	if err := Fits(name, env.GPUs, maxGPUs); err != nil {
		return nil, err
	}
	m := &Model{NetName: name, Tiers: tiers, Offer: offer, Choice: choice, Env: env}
	if len(tiers) <= maxSharedTiers {
		k := shareKey{name: name, n: len(tiers), choice: choice, gpus: env.GPUs}
		copy(k.tiers[:], tiers)
		for op := range network.NumOps {
			if a := offer(network.Op(op)); len(a) > 0 {
				k.offer[op] = offered{&a[0], len(a)}
			}
		}
		network.Share(&m.memo, k, env)
	}
	return m, nil
}

// Fits checks that a job of gpus ranks fits network name, built for at most maxGPUs.
func Fits(name string, gpus, maxGPUs int) error {
	if gpus > maxGPUs {
		return errs.Usage("a job of %d GPUs does not fit network %s: its maximum is %d", gpus, name, maxGPUs)
	}
	return nil
}

// shareKey is what a model's prices depend on, for the process-wide memo: the tiers, the
// choice, the job's size and the algorithms offered per op (by identity: the lists a network
// returns; a list built anew per call never matches, so it is never wrongly shared).
type shareKey struct {
	name   string
	tiers  [maxSharedTiers]Tier
	n      int
	choice collective.Choice
	gpus   int
	offer  [network.NumOps]offered
}

type offered struct {
	first *collective.Algorithm
	n     int
}

const maxSharedTiers = 8

// Name is the network's registry name.
func (m *Model) Name() string { return m.NetName }

// Price places c's group on the tiers and prices it with the chosen algorithm.
func (m *Model) Price(c network.Collective) (network.Cost, error) {
	if err := network.CheckGroup(c, m.Env); err != nil {
		return network.Cost{}, err
	}
	if c.Group.Size <= 1 {
		return network.Cost{Algorithm: "none"}, nil
	}
	if cost, ok := m.memo.Get(c); ok {
		return cost, nil
	}
	lp := collective.NewLevelPricer(Levels(m.Tiers, c.Group))
	defer lp.Release()
	cost, err := collective.Choose(m.NetName, m.Choice.For(c.Op), m.Offer(c.Op), c.Op, func(a collective.Algorithm) (network.Cost, error) {
		return lp.Price(a, c.Op, c.Bytes, m.Env.Reducer, c.DType)
	})
	if err == nil {
		m.memo.Put(c, cost)
	}
	return cost, err
}
