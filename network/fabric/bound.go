package fabric

import (
	"errors"
	"sync"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Bounds. Best prices every algorithm a network offers and keeps the cheapest; most of that work
// is routing the rounds of candidates that lose. Before routing anything, each candidate gets a
// lower bound on its price (collective.ChooseBounded prices them in increasing order of their
// bounds and skips one whose bound exceeds the cheapest price found). The bound of one round of
// pattern pt is a Load no larger than the one routing it leaves:
//
//	PerByte: every unit of weight that endpoint e sends leaves through its out-links and every
//	unit it receives enters through its in-links, so for the busiest link
//
//	    max_l load(l)/rate(l) ≥ Σ_{l ∈ out(e)} load(l) / Σ_{l ∈ out(e)} rate(l) ≥ out(e)/R_out(e)
//
//	(likewise in(e)/R_in(e)), and with a NIC cap the NIC's share max(out(e), in(e))/NIC; any
//	endpoint gives a bound, so the members of one concurrent group suffice (the other groups
//	only add load). Flows to oneself and uniform parts are left out (a weaker bound). Where
//	every endpoint has the same rates (every fabric here), the busiest member's sends and
//	receives over the one rate are the same quotients, without a division per member; and where
//	every part of the round is a permutation of the members without fixed points (a shift, an
//	XOR, a Hamiltonian cycle's successor table: collective.Part.Permutes), every member sends
//	and receives the parts' weights summed, read without listing the flows. An algorithm that
//	outlines its rounds (collective.Outliner: the rings, before their successor tables are
//	built) says so of every round itself, with the weight w each member sends and receives;
//	its rounds are bounded from that (permutedLoad: the same Load, no table built, no pattern
//	looked up among the routed ones, so an outlined bound is never taken for a price).
//	Latency: the endpoint's overhead where the round has a flow (finish adds the slowest
//	path's latency and the serialised messages to it), else 0.
//
// The price (collective.Price) of steps whose links are no slower and no narrower is no larger:
// every term is a repeat count times a latency, reconfiguration, reduction or bytes over a
// bandwidth, all unchanged but the link's. So an algorithm's rounds priced on the bound loads
// bound its price, unless the rounds themselves depend on a routed link (a pipeline sized on
// Members.Link): those algorithms bound themselves (collective.Bounder, the tree), or have none.
// WithoutBounds turns the skipping off (the reference the tests compare picks and prices with).
// A round progress routes once best has a price may stop on a lower bound of its load that
// already prices the candidate above it (Cut short, windows.go), kept as the pattern's bound.

// endRates is each endpoint's total out- and in-link rate (bundles counted by width), built once
// per graph.
type endRates struct {
	once    sync.Once
	out, in []float64
	same    bool // every endpoint has the same out-rate, and the same in-rate
}

// endpointRates returns the endpoints' total out- and in-link rates.
func (g *Graph) endpointRates() *endRates {
	er := g.ends
	er.once.Do(func() {
		er.out, er.in = make([]float64, g.Endpoints), make([]float64, g.Endpoints)
		for i := range g.links {
			l := &g.links[i]
			r := float64(l.Width) * float64(l.Rate)
			if int(l.From) < g.Endpoints {
				er.out[l.From] += r
			}
			if int(l.To) < g.Endpoints {
				er.in[l.To] += r
			}
		}
		er.same = true
		for e := range er.out {
			er.same = er.same && er.out[e] == er.out[0] && er.in[e] == er.in[0]
		}
	})
	return er
}

// bound is a lower bound on algorithm a's price of c (false: none): its rounds priced on the
// bound loads (lowerLoad), or the algorithm's own bound where its rounds ask for a link.
func (m *Model) bound(a collective.Algorithm, c network.Collective) (units.Seconds, bool) {
	fa, ok := a.(collective.Flowing)
	if !ok {
		return 0, false
	}
	if m.lbLink == nil {
		m.lbLink = m.lowerLink // one method value per model
	}
	link := m.lbLink
	if b, ok := a.(collective.Bounder); ok {
		if t, ok := b.Bound(c.Op, c.Bytes, &m.view, link); ok {
			return t, true
		}
	}
	m.flows.Algorithm, m.flows.Rounds = "", m.flows.Rounds[:0]
	lv := &m.lbView
	lv.members, lv.asked = &m.view, false
	var w float64
	outlined := false
	var err error
	if o, ok := a.(collective.Outliner); ok && m.injective() {
		w, outlined, err = o.Outline(c.Op, c.Bytes, lv, &m.flows)
	}
	if !outlined && err == nil {
		m.flows.Algorithm, m.flows.Rounds = "", m.flows.Rounds[:0]
		err = fa.Rounds(c.Op, c.Bytes, lv, &m.flows)
	}
	if err == nil && !lv.asked {
		err = m.affordable(c.Group)
	}
	if err != nil || lv.asked {
		// Declined (kept for pricing, which would decline again with the same rounds), another
		// error (pricing meets it), or rounds sized on a routed link.
		var d *collective.Declined
		if !lv.asked && errors.As(err, &d) {
			m.known = append(m.known, outcome{name: a.Name(), err: err})
		}
		return 0, false
	}
	m.steps = m.steps[:0]
	exact := !outlined
	var perm Load
	if outlined {
		perm = m.permutedLoad(w, c.Group)
	}
	_ = m.eachRound(func(r *collective.Round, pt collective.Pattern, n int) error {
		lo := lowerLoadOf{ld: perm}
		if !outlined {
			lo = m.lowerOf(pt)
			exact = exact && lo.exact
		}
		m.steps = collective.AppendStep(m.steps, roundStep(r, m.link(lo.ld), n))
		return nil
	})
	cost := m.schedulePrice(c)
	if exact {
		// Every round routed before: these are priceWith's steps, and this is its price.
		m.known = append(m.known, outcome{name: a.Name(), cost: cost})
	}
	return cost.Total, true
}

// lowerLink is the bound link of one round of pt over the group being priced (lowerOf).
func (m *Model) lowerLink(pt collective.Pattern) collective.Link { return m.link(m.lowerOf(pt).ld) }

// lowerLoadOf is a round's bound load; exact: the routed load itself.
type lowerLoadOf struct {
	ld    Load
	exact bool
}

// lowerOf is the bound load of one round of pt over the group being priced (m.view.g): the
// routed load itself where the round has been routed before (the next model of a
// job: the bounds are then the prices), else lowerLoad (kept with the graph's routed rounds, and
// forgotten with them).
func (m *Model) lowerOf(pt collective.Pattern) lowerLoadOf {
	e, _, shared, ok := m.routed(canonical(pt), m.view.g)
	if !ok {
		e.ld = m.lowerLoad(pt, m.view.g)
		putBound(m.g.loads, shared, e.ld)
	}
	return lowerLoadOf{ld: e.ld, exact: ok && !e.bound}
}

// outcome is what best's bounds found of a candidate: a decline, or its price (every round
// routed before).
type outcome struct {
	name string
	cost network.Cost
	err  error
}

// priceChosen prices c with a for best (below limit: priceWith): what the bounds found of a is
// returned as it is.
func (m *Model) priceChosen(a collective.Algorithm, c network.Collective, limit units.Seconds) (network.Cost, error) {
	for _, k := range m.known {
		if k.name == a.Name() {
			return k.cost, k.err
		}
	}
	return m.priceWith(a, c, limit)
}

// maxProgressRounds bounds the rounds a price routes a pattern at a time (progress): each step
// prices them all again, so an algorithm of more rounds (a pairwise exchange's p − 1 partner
// distances) is routed in one go.
const maxProgressRounds = 64

// progRound is a round of the algorithm being priced (progress): its pattern and repeats, and
// the bytes times repeats of every round of the same pattern (on the first of them; 0 on the
// others).
type progRound struct {
	r      *collective.Round
	pt     collective.Pattern
	n      int
	weight float64
}

// progress routes the rounds of m.flows (over the concurrent groups of c.Group) a pattern at a
// time, the heaviest first (most bytes times repeats over the rounds that share it), until every
// round is routed (nil: priceWith reads the price off the routed rounds) or the rounds routed,
// each priced on its routed load, with the others on their bound loads (lowerOf), price above
// limit (*collective.Above with that price: a lower bound on the algorithm's, as best's bounds,
// bound.go, and the routed rounds stay cached for a later call). Before routing anything, the
// rounds some earlier candidate routed count at their price.
func (m *Model) progress(c network.Collective, limit units.Seconds) error {
	prog := m.prog[:0]
	_ = m.eachRound(func(r *collective.Round, pt collective.Pattern, n int) error {
		if len(prog) <= maxProgressRounds {
			prog = append(prog, progRound{r: r, pt: canonical(pt), n: n})
		}
		return nil
	})
	m.prog = prog // (read by cuts while a round is routed)
	if len(prog) > maxProgressRounds {
		return nil
	}
	for i := range prog {
		w := float64(prog[i].n) * float64(prog[i].r.Bytes)
		for j := range prog[:i] {
			if prog[j].weight > 0 && prog[j].pt == prog[i].pt {
				prog[j].weight += w
				w = 0
				break
			}
		}
		prog[i].weight = w
	}
	for {
		m.steps = m.steps[:0]
		heavy := -1
		for i := range prog {
			x := &prog[i]
			lo := m.lowerOf(x.pt)
			if !lo.exact && x.weight > 0 && (heavy < 0 || x.weight > prog[heavy].weight) {
				heavy = i
			}
			m.steps = collective.AppendStep(m.steps, roundStep(x.r, m.link(lo.ld), x.n))
		}
		if heavy < 0 {
			return nil
		}
		if p := m.schedulePrice(c).Total; p > limit {
			m.above.Bound = p // the model's: no allocation per stop
			return &m.above
		}
		// The round may be cut short where best has a price (Cut short).
		m.cutting, m.cutHeavy = m.hasBest, int32(heavy)
		_, err := m.route(prog[heavy].pt, c.Group)
		m.cutting = false
		if err != nil {
			return err
		}
	}
}

// cuts reports whether the algorithm progress is pricing (m.lbCol's; its rounds m.prog)
// prices above best's cheapest with the rounds of the pattern being routed on ld, a lower
// bound on the load its routing leaves (Cut short), and the others on their bounds: the steps
// progress prices next, once ld is that pattern's bound.
func (m *Model) cuts(ld Load) bool {
	m.steps = m.steps[:0]
	pt := m.prog[m.cutHeavy].pt
	for i := range m.prog {
		x := &m.prog[i]
		lo := ld
		if x.pt != pt {
			lo = m.lowerOf(x.pt).ld
		}
		m.steps = collective.AppendStep(m.steps, roundStep(x.r, m.link(lo), x.n))
	}
	return collective.AboveBest(m.schedulePrice(m.lbCol).Total, m.best)
}

// resetBounds forgets the outcomes of the previous collective.
func (m *Model) resetBounds() {
	m.known = m.known[:0]
}

// boundMembers is the group as the bound sees it: a round sized on a routed link is noted, not
// routed.
type boundMembers struct {
	*members
	asked bool
}

func (v *boundMembers) Link(collective.Pattern) (collective.Link, error) {
	v.asked = true
	return collective.Link{}, nil
}

// lowerLoad is a lower bound on the Load one round of pattern pt over every concurrent group of
// shape g leaves (route): the busiest endpoint of the first running group's members.
func (m *Model) lowerLoad(pt collective.Pattern, g network.Group) Load {
	base := m.firstBase(g)
	if base < 0 {
		return Load{}
	}
	p := g.Size
	if m.sameRates() {
		if w, ok := m.permuting(pt, p); ok {
			// Every member sends and receives w (each part's weight once, added in part order:
			// the sums the loop below leaves in every member's out and in).
			return m.busiest(w, w)
		}
		if pt.N == 1 && m.injective() {
			// A binary tree (the tree's bound, collective.Bounder): its busiest member's sends
			// and receives from the heap's shape (Part.Fan; the sums the loop below leaves).
			if hiOut, hiIn, ok := pt.Parts[0].Fan(p); ok {
				return m.busiest(hiOut, hiIn)
			}
		}
	}
	out, in := m.boundScratch(p)
	clear(out)
	clear(in)
	flows := false
	for i := 0; i < pt.N; i++ {
		pt.Parts[i].Each(p, func(s, d int, w float64) {
			if m.endpoint(base+s*g.Stride) != m.endpoint(base+d*g.Stride) {
				out[s] += w
				in[d] += w
				flows = true
			}
		})
	}
	if !flows {
		return Load{}
	}
	return m.busiestOf(out, in, g, base)
}

// permutedLoad is lowerLoad of a round in which every member of a group of shape g sends and
// receives w along permutations of the members without fixed points, the placement injective
// (an outlined round, collective.Outliner): the same Load lowerLoad reads of the round's pattern
// (Part.Permutes), without the pattern.
func (m *Model) permutedLoad(w float64, g network.Group) Load {
	base := m.firstBase(g)
	if base < 0 {
		return Load{}
	}
	if m.sameRates() {
		return m.busiest(w, w)
	}
	out, in := m.boundScratch(g.Size)
	for k := range out {
		out[k], in[k] = w, w
	}
	return m.busiestOf(out, in, g, base)
}

// firstBase is the base rank of the first running group of shape g (−1: none runs).
func (m *Model) firstBase(g network.Group) int {
	for gi, n := 0, g.Groups(m.env.GPUs); gi < n; gi++ {
		if g.Runs(gi) {
			return g.Base(gi)
		}
	}
	return -1
}

// sameRates reports whether the bound reads the busiest member's sends over the one rate every
// endpoint has (else member by member).
func (m *Model) sameRates() bool { return m.g.endpointRates().same && !m.g.memberwise }

// boundScratch is the bound's per-member sends and receives for a group of p (reused).
func (m *Model) boundScratch(p int) (out, in []float64) {
	if cap(m.lbOut) < p {
		m.lbOut, m.lbIn = make([]float64, p), make([]float64, p)
	}
	return m.lbOut[:p], m.lbIn[:p]
}

// busiestOf is the bound Load of the group at base whose member k sends out[k] and receives
// in[k]: over the one rate (sameRates) the busiest member's sends and receives, else member by
// member over each one's endpoint's rates.
func (m *Model) busiestOf(out, in []float64, g network.Group, base int) Load {
	if m.sameRates() {
		hiOut, hiIn := 0.0, 0.0
		for k := range out {
			hiOut, hiIn = max(hiOut, out[k]), max(hiIn, in[k])
		}
		return m.busiest(hiOut, hiIn)
	}
	rates := m.g.endpointRates()
	nic := float64(m.g.NIC)
	pb := 0.0
	for k := range out {
		e := m.endpoint(base + k*g.Stride)
		if out[k] > 0 {
			pb = max(pb, out[k]/rates.out[e])
		}
		if in[k] > 0 {
			pb = max(pb, in[k]/rates.in[e])
		}
		if nic > 0 {
			pb = max(pb, max(out[k], in[k])/nic)
		}
	}
	return Load{Latency: m.g.Overhead, PerByte: pb, Flows: true}
}

// busiest is the bound Load of a busiest member sending hiOut and receiving hiIn over the one
// rate every endpoint has (sameRates; x ↦ x/r is monotone, so the same quotient as the member by
// member maximum of busiestOf).
func (m *Model) busiest(hiOut, hiIn float64) Load {
	rates := m.g.endpointRates()
	nic := float64(m.g.NIC)
	pb := 0.0
	if hiOut > 0 {
		pb = hiOut / rates.out[0]
	}
	if hiIn > 0 {
		pb = max(pb, hiIn/rates.in[0])
	}
	if nic > 0 {
		pb = max(pb, max(hiOut, hiIn)/nic)
	}
	return Load{Latency: m.g.Overhead, PerByte: pb, Flows: true}
}

// WithoutBounds is g with best's bounds off: every offered algorithm priced (the reference the
// bounds are tested against).
func WithoutBounds(g *Graph) *Graph { return switchedOff(g, func(h *Graph) { h.unbounded = true }) }

// permuting is the weight every member of a group of p sends and receives in one round of pt
// when each part is a permutation of the members without fixed points (Part.Permutes) and the
// placement puts distinct ranks on distinct endpoints (so no flow is to oneself): then each
// member's sends and receives are the parts' weights summed in part order. False: list the flows.
func (m *Model) permuting(pt collective.Pattern, p int) (float64, bool) {
	w := 0.0
	for i := 0; i < pt.N; i++ {
		q := &pt.Parts[i]
		if !q.Permutes(p) {
			return 0, false
		}
		w += q.W()
	}
	return w, pt.N > 0 && m.injective()
}

// injective reports whether the placement puts every rank on its own endpoint (decided once per
// model; rank r on endpoint r is).
func (m *Model) injective() bool {
	if m.opt.Placement == nil {
		return true
	}
	m.injOnce.Do(func() {
		seen := make([]bool, m.g.Endpoints)
		for _, e := range m.opt.Placement {
			if e < 0 || int(e) >= len(seen) || seen[e] {
				return
			}
			seen[e] = true
		}
		m.inj = true
	})
	return m.inj
}
