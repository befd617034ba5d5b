package ramp

import (
	"math"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Steps is the number of RAMP-x algorithmic steps for reduce-scatter, all-gather, all-to-all,
// scatter and gather (RAMP §5: "3–4 sequential algorithmic steps"; 8 for reduce and all-reduce).
const Steps = 4

// Subgroups factors a group of p nodes into the subgroup sizes of the four steps, n_1 ≤ x,
// n_2 ≤ x, n_3 ≤ J, n_4 ≤ Λ/x (RAMP Table 5), filling the earlier steps first so that as few
// steps as possible are active ("nodes have been selected such that the minimum number of
// algorithmic steps are minimised", §7.4). When p does not factor exactly, the last active step
// takes ⌈·⌉ members and the product exceeds p.
func (c *Config) Subgroups(p int) ([Steps]int, error) {
	limits := [Steps]int{c.X, c.X, c.J, c.Lambda / c.X}
	var n [Steps]int
	rest := max(1, p)
	for i, lim := range limits {
		n[i] = min(rest, max(1, lim))
		rest = (rest + n[i] - 1) / n[i]
	}
	if rest > 1 {
		return n, errs.Usage("a group of %d nodes exceeds ramp's %d nodes", p, c.Nodes())
	}
	return n, nil
}

// groupsPerPeer is how many transceiver groups a node uses towards each of the d−1 other members
// of a step's subgroup. Steps 1–3 follow Eqs. 3–4: by default the corrected reading
// t(d) = max(1, ⌊x/(d−1)⌋) (reference/ramp.md §2.7), or with trx_rule=paper 1 + Eq. 3 as printed.
// Step 4 uses subgroup formula 1, whose communications get all x groups (§6.2.2).
func (c *Config) groupsPerPeer(step, d int) int {
	if d <= 1 {
		return c.X
	}
	if step == Steps-1 || c.TrxRule != "paper" {
		return max(1, c.X/(d-1))
	}
	add := (c.X - (c.X/d)*(d-1)) / (d - 1) // Eq. (3) as printed
	return 1 + max(0, add)
}

// link is what one peer-to-peer transfer of a step sees: propagation plus the in-out latency, which
// hides the circuit reconfiguration unless that takes longer (RAMP: "When the circuit
// reconfiguration time is smaller than the node I/O time … it will not create any overhead"), and
// the line rate of the transceiver groups serving that peer. Circuits change between steps only,
// so the slots of one transfer carry payload back to back.
func (c *Config) link(groups int) collective.Link {
	return collective.Link{
		Name:      "transceiver groups",
		Latency:   units.Ns(c.PropNs + max(c.IONs, c.ReconfNs)),
		Bandwidth: c.TrxRate() * units.BytesPerSecond(groups*c.B),
	}
}

// slotted rounds a per-peer message up to whole time slots on its transceivers (RAMP §6.2.3: the
// time-slot map gives deterministic latency): each of the groups·b transceivers carries
// ⌈bytes/(groups·b·B·slot)⌉ slots (1000 B per 20 ns slot at 400 Gb/s).
func (c *Config) slotted(b units.Bytes, groups int) units.Bytes {
	if b <= 0 {
		return 0
	}
	payload := float64(c.TrxRate()) * c.SlotNs * 1e-9
	trx := float64(groups * c.B)
	slots := math.Ceil(float64(b) / trx / payload)
	return units.Bytes(slots * payload * trx)
}

// RAMPx builds the RAMP-x schedule of op for p nodes (RAMP §5–6, Table 8, with the corrections of
// reference/ramp.md §2.5):
//
//	reduce-scatter  steps 1→4: each node sends S/(n_1⋯n_i) to each of its n_i − 1 subgroup
//	                peers at once and reduces n_i-to-1
//	all-gather      steps 4→1 with the same per-peer sizes, no reduction
//	all-reduce      reduce-scatter + all-gather (Rabenseifner-style, ≤ 8 steps); reduce likewise
//	                with a gather
//	scatter/gather  the reduce-scatter/all-gather pattern without reductions
//	all-to-all      steps 1→4: S/n_i to each of the n_i − 1 peers
//	broadcast       the pipelined multicast tree of Eq. (1): diameter s = 2 when the root's x²
//	                multicast reaches everyone, else 3; k + s − 2 steps of S/k at node capacity
//	barrier         one latency per active step
func (c *Config) RAMPx(op network.Op, s units.Bytes, p int) (collective.Schedule, error) {
	sch := collective.Schedule{Algorithm: "RAMP-x"}
	if p <= 1 {
		return sch, nil
	}
	n, err := c.Subgroups(p)
	if err != nil {
		return sch, err
	}
	var chunk [Steps]units.Bytes
	c0 := s
	for i := range n {
		c0 /= units.Bytes(n[i])
		chunk[i] = c0
	}
	rounds := 1
	if c.Contention == "exact" {
		rounds = c.Step3Reuse(n[2])
	}
	step := func(i int, b units.Bytes, reduce bool) collective.Step {
		g := c.groupsPerPeer(i, n[i])
		st := collective.Step{Link: c.link(g), Bytes: c.slotted(b, g)}
		if i == 2 {
			st.Load = float64(rounds) // shared subnets serialise into rounds
		}
		if reduce {
			st.FanIn, st.ReduceBytes = n[i], b
		}
		return st
	}
	forward := func(reduce bool, size func(i int) units.Bytes) {
		for i := 0; i < Steps; i++ {
			if n[i] > 1 {
				sch.Steps = append(sch.Steps, step(i, size(i), reduce))
			}
		}
	}
	backward := func() {
		for i := Steps - 1; i >= 0; i-- {
			if n[i] > 1 {
				sch.Steps = append(sch.Steps, step(i, chunk[i], false))
			}
		}
	}
	perChunk := func(i int) units.Bytes { return chunk[i] }
	switch op {
	case network.ReduceScatter:
		forward(true, perChunk)
	case network.Scatter:
		forward(false, perChunk)
	case network.AllGather, network.Gather:
		backward()
	case network.AllReduce, network.Reduce:
		forward(true, perChunk)
		backward()
	case network.AllToAll:
		forward(false, func(i int) units.Bytes { return s / units.Bytes(n[i]) })
	case network.Barrier:
		forward(false, func(int) units.Bytes { return 0 })
	case network.Broadcast:
		hops := 1
		if p-1 > c.X*c.X {
			hops = 2
		}
		full := c.link(c.X)
		k := collective.PipelineChunks(s, hops, full)
		sch.Steps = []collective.Step{{Link: full, Bytes: c.slotted(s/units.Bytes(k), c.X), Repeat: k + hops - 1}}
	case network.SendRecv:
		sch.Algorithm = "direct"
		sch.Steps = []collective.Step{{Link: c.link(c.X), Bytes: c.slotted(s, c.X)}}
	}
	return sch, nil
}

// Algorithm is RAMP-x as a registered collective algorithm (RAMP §5–6, Table 8): a level
// algorithm on the flat one-hop fabric whose schedule comes from the network's configuration.
// The zero value names it in the registry; the model binds it to its configuration.
type Algorithm struct{ cfg *Config }

func (Algorithm) Name() string { return "ramp" }
func (Algorithm) Summary() string {
	return "RAMP-x: ≤4 subgroup steps (≤8 for reduce, all-reduce) over RAMP's transceiver groups (RAMP §5–6)"
}
func (Algorithm) Implements(network.Op) bool { return true }

// Levels is the RAMP-x schedule for the layout's members (the layout is the flat fabric).
func (a Algorithm) Levels(op network.Op, s units.Bytes, lay collective.Layout) collective.Schedule {
	if a.cfg == nil {
		return collective.Schedule{Algorithm: "RAMP-x"}
	}
	sch, _ := a.cfg.RAMPx(op, s, lay.P) // the model checked the group against the network's nodes
	return sch
}

type model struct {
	cfg        Config
	env        network.Env
	algorithms []collective.Algorithm
	choice     collective.Choice
	memo       network.Memo
}

func (*model) Name() string { return Name }

// Shareable: the model does not change after construction (its memo is synchronised, RAMP-x's
// schedules are computed from the configuration): network.Shareable.
func (*model) Shareable() {}

// Price runs RAMP-x, or a full-capacity ring / recursive halving-doubling over the all-to-all
// fabric (§6.3.1), or the cheapest of the three for Best.
func (m *model) Price(col network.Collective) (network.Cost, error) {
	if err := network.CheckGroup(col, m.env); err != nil {
		return network.Cost{}, err
	}
	p := col.Group.Size
	if p <= 1 {
		return network.Cost{Algorithm: "none"}, nil
	}
	if p > m.cfg.Nodes() {
		return network.Cost{}, errs.Usage("a group of %d nodes exceeds ramp's %d nodes", p, m.cfg.Nodes())
	}
	// Any node reaches any other in one hop at full node capacity.
	if cost, ok := m.memo.Get(col); ok {
		return cost, nil
	}
	lp := collective.NewLevelPricer(collective.Flat(p, m.cfg.link(m.cfg.X)))
	defer lp.Release()
	cost, err := collective.Choose(Name, m.choice.For(col.Op), m.algorithms, col.Op, func(a collective.Algorithm) (network.Cost, error) {
		return lp.Price(a, col.Op, col.Bytes, m.env.Reducer, col.DType)
	})
	if err == nil {
		m.memo.Put(col, cost)
	}
	return cost, err
}
