package fabric

import (
	"encoding/binary"
	"math"

	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

var _ network.Overlapping = (*Model)(nil)

// PriceConcurrent prices collectives that run during one window of time on the job
// (network.Overlapping). Each runs the algorithm it would pick alone; its rounds are routed and
// every link's bytes summed over the whole collective, V_i(l), and over its n_i calls. Collective
// i cannot finish its calls' transfers before the links it uses have drained what all of them
// send there:
//
//	n_i·H2T_i' = max(n_i·H2T_i, max_{l : V_i(l) > 0} Σ_j n_j·V_j(l) / rate(l))
//
// (fluid sharing: the collectives' transfers interleave perfectly on a shared link; latency,
// reduction and reconfiguration as alone; NIC caps are not shared). The costs are per call.
// Collectives on disjoint links keep their costs; the bottleneck becomes the shared link where it
// binds.
func (m *Model) PriceConcurrent(cs []network.Concurrent) ([]network.Cost, error) {
	costs := make([]network.Cost, len(cs))
	for i, c := range cs {
		cost, err := m.Price(c.Collective)
		if err != nil {
			return nil, err
		}
		costs[i] = cost
	}
	m.mu.Lock()
	key := windowKey{window: m.windowKey(cs, costs), gpus: m.env.GPUs, routing: m.opt.Routing, seed: m.opt.Seed, place: m.place}
	m.mu.Unlock()
	drains, ok := m.g.windows.get(key)
	if !ok {
		algs := make([]collective.Algorithm, len(cs))
		for i, c := range cs {
			if c.Group.Size > 1 {
				if _, err := m.choose(c.Collective, &algs[i]); err != nil {
					return nil, err
				}
			}
		}
		m.mu.Lock()
		var err error
		drains, err = m.drains(cs, algs)
		m.mu.Unlock()
		if err != nil {
			return nil, err
		}
		m.g.windows.put(key, drains)
	}
	for i, d := range drains {
		if cost := &costs[i]; d.at && d.perCall > float64(cost.H2T)*(1+1e-12) {
			cost.Total += units.Seconds(d.perCall) - cost.H2T
			cost.H2T = units.Seconds(d.perCall)
			cost.Bottleneck = m.g.classes[d.class]
		}
	}
	return costs, nil
}

// windowKey encodes a window's collectives, calls and algorithms (the names their prices alone
// carry): what the routed part of its price depends on besides the job.
func (m *Model) windowKey(cs []network.Concurrent, alone []network.Cost) string {
	b := m.key[:0]
	for i, c := range cs {
		g := c.Group
		for _, x := range [...]int{int(c.Op), int(c.DType), max(1, c.Calls), g.Size, g.Stride, g.Concurrent, g.Every, g.Block} {
			b = binary.AppendUvarint(b, uint64(x))
		}
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(c.Bytes)))
		b = append(b, alone[i].Algorithm...)
		b = append(b, 0)
	}
	m.key = b
	return string(b)
}

// drains routes a window's collectives (their chosen algorithms algs; nil for a group of one)
// and returns each one's drain time per call.
func (m *Model) drains(cs []network.Concurrent, algs []collective.Algorithm) ([]drain, error) {
	r := m.g.router(m.opt.Routing, m.opt.Seed)
	defer m.g.release(r)
	if len(m.total) != len(r.load) {
		m.total = make([]float64, len(r.load))
	}
	total := m.total
	// Each collective's loaded slots, one after another in vols (from[i] … from[i+1]).
	vols, from := m.vols[:0], make([]int, len(cs)+1)
	for i, c := range cs {
		from[i] = len(vols)
		if algs[i] == nil {
			continue
		}
		var err error
		if vols, err = m.volumes(r, algs[i], c.Collective, float64(max(1, c.Calls)), vols); err != nil {
			clear(total)
			return nil, err
		}
		for _, v := range vols[from[i]:] {
			total[v.slot] += v.bytes
		}
	}
	from[len(cs)] = len(vols)
	out := make([]drain, len(cs))
	for i, c := range cs {
		d := &out[i]
		for _, v := range vols[from[i]:from[i+1]] {
			if rate, class := r.slot(v.slot); total[v.slot]/rate > d.perCall {
				d.perCall, d.class, d.at = total[v.slot]/rate, class, true
			}
		}
		d.perCall /= float64(max(1, c.Calls))
	}
	for _, v := range vols {
		total[v.slot] = 0
	}
	m.vols = vols[:0]
	return out, nil
}

// slotVolume is the bytes a window's collective puts on one link slot.
type slotVolume struct {
	slot  int32
	bytes float64
}

// volumes routes algorithm a's rounds of c and appends every loaded link slot's bytes, times
// calls, to vols (a slot loaded by several rounds appears once per round).
func (m *Model) volumes(r *router, a collective.Algorithm, c network.Collective, calls float64, vols []slotVolume) ([]slotVolume, error) {
	fa, ok := a.(collective.Flowing)
	if !ok {
		return vols, collective.Decline("%s has no flow form", a.Name())
	}
	m.view.g = c.Group
	m.flows.Algorithm, m.flows.Rounds = "", m.flows.Rounds[:0]
	if err := fa.Rounds(c.Op, c.Bytes, &m.view, &m.flows); err != nil {
		return vols, err
	}
	err := m.eachRound(func(rd *collective.Round, pt collective.Pattern, n int) error {
		sym, err := m.load(r, pt, c.Group)
		vols = r.spill(vols, sym, float64(rd.Bytes)*float64(n)*calls)
		r.finish(sym)
		return err
	})
	return vols, err
}
