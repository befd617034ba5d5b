package topology

import (
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/nccl"
)

// Model is a hierarchical network with a job placed on it: its tiers, the level algorithms it
// offers per op, and the strategy (collective.Best picks the cheapest per collective and size).
type Model struct {
	NetName string
	Tiers   []Tier
	Offer   func(network.Op) []collective.Algorithm
	Choice  collective.Choice
	Env     network.Env
	// Library prices the collectives NCCL's model covers in its place (off by default).
	Library Library
	memo    network.Memo
}

// Library is the collective library a tiered network's collectives run through: NCCL's cost
// model (network/nccl) when NCCL is on, with the first NodeTiers tiers inside one node.
type Library struct {
	NCCL      nccl.Config
	NodeTiers int
}

// Shareable marks the model as immutable after construction (Price only reads it; its memo is
// synchronised): network.Shareable.
func (*Model) Shareable() {}

// NewModel checks that the job fits the network (maxGPUs ranks).
func NewModel(name string, tiers []Tier, offer func(network.Op) []collective.Algorithm, choice collective.Choice, env network.Env, maxGPUs int) (*Model, error) {
	return NewLibraryModel(name, tiers, offer, choice, env, maxGPUs, Library{})
}

// NewLibraryModel is NewModel with the collectives run through a library (NCCL).
func NewLibraryModel(name string, tiers []Tier, offer func(network.Op) []collective.Algorithm, choice collective.Choice, env network.Env, maxGPUs int, lib Library) (*Model, error) {
	if err := Fits(name, env.GPUs, maxGPUs); err != nil {
		return nil, err
	}
	m := &Model{NetName: name, Tiers: tiers, Offer: offer, Choice: choice, Env: env, Library: lib}
	if len(tiers) <= maxSharedTiers {
		k := shareKey{name: name, n: len(tiers), choice: choice, gpus: env.GPUs, lib: lib}
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
	lib    Library
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
	if m.Library.NCCL.On() {
		if cost, ok := m.Library.NCCL.Price(c.Op, c.Bytes, Comm(m.Tiers, m.Library.NodeTiers, c.Group)); ok {
			m.memo.Put(c, cost)
			return cost, nil
		}
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

// Comm is what NCCL sees of group g on tiers whose first nodeTiers lie inside one node: its ranks
// per node (members within the innermost node tier's span), its nodes, the NVLink rate of that
// tier, and one rank's network rate, the slowest outer tier the group reaches. With no node
// tiers every rank is a node of its own.
func Comm(tiers []Tier, nodeTiers int, g network.Group) nccl.Comm {
	n, s := max(1, g.Size), max(1, g.Stride)
	c := nccl.Comm{Ranks: n, Nodes: n}
	span := 1
	if nodeTiers > 0 {
		inner := tiers[nodeTiers-1]
		span = inner.Span
		ppn := min(n, max(1, ceilDiv(span, s)))
		c.Nodes = ceilDiv(n, ppn)
		c.NVLink = inner.Link.Bandwidth
	}
	for _, t := range tiers[nodeTiers:] {
		if c.NIC == 0 || t.Link.Bandwidth < c.NIC {
			c.NIC = t.Link.Bandwidth
		}
		if (n-1)*s < t.Span { // the group lies within one unit of this tier
			break
		}
	}
	return c
}
