package fabric

import (
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

var _ network.Overlapping = (*Model)(nil)

// PriceConcurrent prices collectives that run at the same time on the job (network.Overlapping).
// Each runs the algorithm it would pick alone; its rounds are routed and every link's bytes
// summed over the whole collective, V_i(l). Collective i cannot finish its transfers before the
// links it uses have drained what all of them send there:
//
//	H2T_i' = max(H2T_i, max_{l : V_i(l) > 0} Σ_j V_j(l) / rate(l))
//
// (fluid sharing: the collectives' transfers interleave perfectly on a shared link; latency,
// reduction and reconfiguration as alone; NIC caps are not shared). Collectives on disjoint
// links keep their costs; the bottleneck becomes the shared link where it binds.
func (m *Model) PriceConcurrent(cs []network.Collective) ([]network.Cost, error) {
	costs := make([]network.Cost, len(cs))
	algs := make([]collective.Algorithm, len(cs))
	for i, c := range cs {
		cost, a, err := m.chosen(c)
		if err != nil {
			return nil, err
		}
		costs[i], algs[i] = cost, a
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	vols := make([][]float64, len(cs))
	total := make([]float64, len(r.load))
	for i, c := range cs {
		if algs[i] == nil {
			continue
		}
		v := make([]float64, len(r.load))
		if err := m.volumes(r, algs[i], c, v); err != nil {
			return nil, err
		}
		for k, x := range v {
			total[k] += x
		}
		vols[i] = v
	}
	for i, v := range vols {
		drain, at := 0.0, -1
		for k, x := range v {
			if x > 0 {
				if rate, _ := r.slot(int32(k)); total[k]/rate > drain {
					drain, at = total[k]/rate, k
				}
			}
		}
		if c := &costs[i]; at >= 0 && drain > float64(c.H2T)*(1+1e-12) {
			c.Total += units.Seconds(drain) - c.H2T
			c.H2T = units.Seconds(drain)
			_, class := r.slot(int32(at))
			c.Bottleneck = m.g.classes[class]
		}
	}
	return costs, nil
}

// chosen prices c alone and returns the algorithm that won (nil for a group of one).
func (m *Model) chosen(c network.Collective) (network.Cost, collective.Algorithm, error) {
	if err := network.CheckGroup(c, m.env); err != nil {
		return network.Cost{}, nil, err
	}
	if c.Group.Size <= 1 {
		return network.Cost{Algorithm: "none"}, nil, nil
	}
	var a collective.Algorithm
	cost, err := m.choose(c, &a)
	return cost, a, err
}

// volumes routes algorithm a's rounds of c and adds every link slot's bytes to vol.
func (m *Model) volumes(r *router, a collective.Algorithm, c network.Collective, vol []float64) error {
	fa, ok := a.(collective.Flowing)
	if !ok {
		return collective.Decline("%s has no flow form", a.Name())
	}
	m.view.g = c.Group
	m.flows.Algorithm, m.flows.Rounds = "", m.flows.Rounds[:0]
	if err := fa.Rounds(c.Op, c.Bytes, &m.view, &m.flows); err != nil {
		return err
	}
	return m.eachRound(func(rd *collective.Round, pt collective.Pattern, n int) error {
		sym, err := m.load(r, pt, c.Group)
		r.spill(vol, sym, float64(rd.Bytes)*float64(n))
		r.finish(sym)
		return err
	})
}
