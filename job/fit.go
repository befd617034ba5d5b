package job

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/alphabeta"
	"github.com/ddlest/ddlest/network/superpod"
	"github.com/ddlest/ddlest/traces"
)

// CollectiveFit is a network model's parameters fitted, tier by tier, to a trace's measured
// collectives.
type CollectiveFit struct {
	Network string `json:"network"`
	Cluster string `json:"cluster,omitempty"`
	// Params are the fitted parameters as the network takes them (--net-param key=value): the
	// fit's fixed choices, then the latency and bandwidth keys of every constrained tier.
	Params []string                `json:"params"`
	Tiers  []TierFit               `json:"tiers"`
	Rows   []CollectiveCalibration `json:"collectives"` // priced with the fitted parameters
	// MAPE is the mean absolute relative error of the fitted model against the fastest calls of
	// the rows it could price (Used of them).
	MAPE float64 `json:"mape"`
	Used int     `json:"rows_fitted"`
}

// TierFit is one tier's fitted (or, when no call exercises it, preset) latency and bandwidth.
type TierFit struct {
	Name        string               `json:"tier"`
	Alpha       units.Seconds        `json:"alpha_s"` // the tier's per-step latency
	Bandwidth   units.BytesPerSecond `json:"bandwidth_bytes_per_s"`
	Constrained bool                 `json:"constrained"`
	Calls       int                  `json:"rows_used"` // collectives (rank, kind, size, group) fitted
	MAPE        float64              `json:"mape"`      // over those rows, with the fitted parameters
	Note        string               `json:"note,omitempty"`
}

// fitTier names one tier's parameter keys: its latency in ns and its bandwidth in Gb/s × Gbit.
type fitTier struct {
	name, latency, bandwidth string
	gbit                     float64 // Gb/s per unit of the bandwidth key
}

// fitModel is what CollectiveFits knows of a network: its tiers, innermost first, the
// parameters the fit fixes (so that a collective's time is affine in every tier's latency and
// inverse bandwidth), and each tier's α and bandwidth read back from a configuration.
type fitModel struct {
	tiers []fitTier
	fixed []string
	link  func(cfg network.Config, tier int) (units.Seconds, units.BytesPerSecond)
}

var fitModels = map[string]fitModel{
	alphabeta.Name: {
		tiers: []fitTier{{"network", "latency_ns", "bandwidth_gbit_per_s", 1}},
		link: func(cfg network.Config, _ int) (units.Seconds, units.BytesPerSecond) {
			c := cfg.(*alphabeta.Config)
			return units.Ns(c.LatencyNs), units.Gbps(c.BandwidthGbit)
		},
	},
	// The DGX clusters' network: NVLink inside a node (α = io + 2·prop_node + nvswitch), the
	// InfiniBand rails across nodes (α = io + 2·prop_leaf + ib_switch under one leaf; the spine
	// and core tiers add their fixed propagation and 2 or 4 more switch latencies). NCCL's cost
	// model (nccl=…) is not affine in α (a max and a protocol choice) and "best" switches
	// algorithm as the parameters move, so the fit prices the network's own hierarchical ring
	// (Ueno & Yokota 2019): each level's steps cost that tier's α and bandwidth.
	superpod.Name: {
		tiers: []fitTier{{"nvlink", "nvswitch_ns", "node_tbps", 1e3}, {"infiniband", "ib_switch_ns", "ib_gbps", 1}},
		fixed: []string{"nccl=off", "strategy=all-reduce=hierarchical,reduce-scatter=hierarchical,all-gather=hierarchical,all-to-all=ring"},
		link: func(cfg network.Config, tier int) (units.Seconds, units.BytesPerSecond) {
			t := cfg.(*superpod.Config).Tiers()[tier]
			return t.Link.Latency, t.Link.Bandwidth
		},
	},
}

// FitNetworks lists the networks CollectiveFits fits.
var FitNetworks = []string{alphabeta.Name, superpod.Name}

// CollectiveFits fits a network's per-tier latency α and per-GPU bandwidth B to the fastest
// call of every collective the trace sized (the call that waited least for its peers;
// CollectiveCalibration), starting from the cluster's network when one is given. A
// collective's time is affine in every tier's latency key and inverse bandwidth,
// t = t₀ + Σᵢ kᵢ·xᵢ + cᵢ/Bᵢ (its steps on the tier and the bytes each rank moves there): the
// model's own Price gives t₀, kᵢ and cᵢ, priced at probe values. Tiers are fitted innermost
// first: tier i takes the calls that exercise it and no outer tier, less the inner tiers'
// share at their fitted values, and its xᵢ ≥ 0 and 1/Bᵢ minimise the squared relative errors
// of the calls' times (weighted least squares). A tier no call constrains keeps its preset
// value. The rows are then priced with the fitted parameters.
func CollectiveFits(ranks []traces.RankSummary, cluster *Cluster, base NetworkChoice) (*CollectiveFit, error) {
	if cluster != nil {
		c, err := cluster.Network.Choice()
		if err != nil {
			return nil, err
		}
		base = c
	}
	spec, err := base.Spec()
	if err != nil {
		return nil, err
	}
	fit := &CollectiveFit{Network: spec.Name}
	if cluster != nil {
		fit.Cluster = cluster.name()
	}
	fm, ok := fitModels[fit.Network]
	if !ok {
		return nil, errs.Usage("--net %s: trace fit fits the networks whose tiers' α and bandwidth it knows; valid: --net %s, or --cluster dgx-a100|dgx-h100|dgx-h200|dgx-b200", fit.Network, strings.Join(FitNetworks, "|"))
	}
	gpus := 2
	for _, r := range ranks {
		for _, c := range r.Collectives {
			gpus = max(gpus, int(c.GroupSize))
		}
	}
	base.Params = append(append([]string(nil), base.Params...), fm.fixed...)
	build := func(set map[string]float64) (network.Model, network.Config, []string, error) {
		p := append([]string(nil), fm.fixed...)
		for _, t := range fm.tiers { // in tier order: the printed flags are stable
			for _, k := range []string{t.latency, t.bandwidth} {
				if v, ok := set[k]; ok {
					p = append(p, k+"="+strconv.FormatFloat(v, 'g', 6, 64))
				}
			}
		}
		n := base
		n.Params = append(append([]string(nil), base.Params...), p[len(fm.fixed):]...)
		m, cfg, err := n.Build(network.Env{GPUs: gpus})
		return m, cfg, p, err
	}
	// Probes, not parameters: every tier at 1 µs and 100 Gb/s, then one at a time doubled.
	const x0, g0 = 1000.0, 100.0
	probe := func(moved int, lat, bw float64) (network.Model, error) {
		set := map[string]float64{}
		for i, t := range fm.tiers {
			l, b := x0, g0
			if i == moved {
				l, b = lat, bw
			}
			set[t.latency], set[t.bandwidth] = l, b/t.gbit
		}
		m, _, _, err := build(set)
		return m, err
	}
	m0, err := probe(-1, 0, 0)
	if err != nil {
		return nil, err
	}
	_, preset, _, err := build(map[string]float64{})
	if err != nil {
		return nil, err
	}
	type probes struct{ lat, bw network.Model }
	ps := make([]probes, len(fm.tiers))
	for i := range fm.tiers {
		if ps[i].lat, err = probe(i, 2*x0, g0); err != nil {
			return nil, err
		}
		if ps[i].bw, err = probe(i, x0, 2*g0); err != nil {
			return nil, err
		}
	}
	// One sample per sized collective: its time's coefficients on every tier.
	type sample struct {
		t0, t float64 // fixed share, fastest call (s)
		k, c  []float64
		tier  int // the outermost tier it exercises
		bytes int64
	}
	var xs []sample
	tierOf := []int{} // per collective (calibrate's row order): the tier it fitted, or −1
	inv0 := 1 / float64(units.Gbps(g0))
	for _, r := range ranks {
		for _, c := range r.Collectives {
			tierOf = append(tierOf, -1)
			coll, ok := fittable(c)
			if !ok || c.MinNs <= 0 {
				continue
			}
			t0, err := m0.Price(coll)
			if err != nil {
				continue
			}
			s := sample{t: float64(units.Ns(float64(c.MinNs))), k: make([]float64, len(fm.tiers)), c: make([]float64, len(fm.tiers)), tier: -1, bytes: c.Bytes}
			s.t0 = float64(t0.Total)
			for i, p := range ps {
				tl, err1 := p.lat.Price(coll)
				tb, err2 := p.bw.Price(coll)
				if err1 != nil || err2 != nil {
					s.tier = -2
					break
				}
				s.k[i] = float64(tl.Total-t0.Total) / x0              // s per ns of the latency key
				s.c[i] = float64(t0.Total-tb.Total) / (inv0 - inv0/2) // bytes on the tier
				s.t0 -= s.k[i]*x0 + s.c[i]*inv0
				if math.Abs(s.k[i]) > 1e-15 || math.Abs(s.c[i]) > 1e-9 {
					s.tier = i
				}
			}
			if s.tier < 0 {
				continue
			}
			tierOf[len(tierOf)-1] = s.tier
			xs = append(xs, s)
		}
	}
	set := map[string]float64{}
	// x and 1/B of every tier as fitted so far (inner tiers) or preset.
	xv, iv := make([]float64, len(fm.tiers)), make([]float64, len(fm.tiers))
	for i, t := range fm.tiers {
		x, b := presetValue(preset, t.latency), presetValue(preset, t.bandwidth)*t.gbit
		xv[i] = x
		if b > 0 {
			iv[i] = 1 / float64(units.Gbps(b))
		}
	}
	for i, t := range fm.tiers {
		tf := TierFit{Name: t.name}
		var ys []affineSample
		sizes := map[int64]bool{}
		for _, s := range xs {
			if s.tier != i {
				continue
			}
			y := s.t - s.t0
			for j := 0; j < i; j++ {
				y -= s.k[j]*xv[j] + s.c[j]*iv[j]
			}
			ys = append(ys, affineSample{k: s.k[i], c: s.c[i], y: y, t: s.t})
			sizes[s.bytes] = true
		}
		switch {
		case len(ys) == 0:
			tf.Note = "not constrained by the trace: preset value kept"
		case len(sizes) < 2:
			tf.Note = fmt.Sprintf("%d collective(s) of one size cannot separate α from bandwidth: preset value kept", len(ys))
		default:
			x, inv, ok := fitAffine(ys)
			if !ok {
				return nil, errs.Usage("trace fit: tier %s: the collectives' times do not grow with their sizes; no bandwidth fits", t.name)
			}
			xv[i], iv[i] = x, inv
			set[t.latency], set[t.bandwidth] = x, units.BytesPerSecond(1/inv).Gbit()/t.gbit
			tf.Constrained, tf.Calls = true, len(ys)
		}
		fit.Tiers = append(fit.Tiers, tf)
	}
	if len(set) == 0 {
		return nil, errs.Usage("trace fit needs, on some tier, at least two priced collectives of different sizes; the trace has %d priced collective(s) (collectives need a known kind other than send/recv and barrier, a size and a group ≥ 2)", len(xs))
	}
	m, cfg, p, err := build(set)
	if err != nil {
		return nil, err
	}
	fit.Params = p
	for i := range fit.Tiers {
		fit.Tiers[i].Alpha, fit.Tiers[i].Bandwidth = fm.link(cfg, i)
	}
	if fit.Rows, _, err = calibrate(ranks, m, gpus, nil); err != nil {
		return nil, err
	}
	for i, r := range fit.Rows {
		if r.ErrorFastest == nil {
			continue
		}
		e := math.Abs(*r.ErrorFastest)
		fit.MAPE += e
		fit.Used++
		if t := tierOf[i]; t >= 0 && fit.Tiers[t].Constrained {
			fit.Tiers[t].MAPE += e / float64(fit.Tiers[t].Calls)
		}
	}
	if fit.Used > 0 {
		fit.MAPE /= float64(fit.Used)
	}
	return fit, nil
}

// presetValue is the numeric parameter key of cfg (0 when absent or not a number).
func presetValue(cfg network.Config, key string) float64 {
	for _, p := range params.List(cfg) {
		if p.Key == key {
			v, _ := strconv.ParseFloat(p.Value, 64)
			return v
		}
	}
	return 0
}

// affineSample is one call for a tier's fit: its time on the tier y = k·x + c·(1/B), and its
// whole time t (the weight: relative errors).
type affineSample struct{ k, c, y, t float64 }

// fitAffine minimises Σ ((k·x + c·v − y)/t)² over x ≥ 0 and v = 1/B > 0 (ok false when no
// positive v fits).
func fitAffine(xs []affineSample) (x, v float64, ok bool) {
	var skk, skc, scc, sky, scy float64
	for _, s := range xs {
		w := 1 / (s.t * s.t)
		skk += w * s.k * s.k
		skc += w * s.k * s.c
		scc += w * s.c * s.c
		sky += w * s.k * s.y
		scy += w * s.c * s.y
	}
	if det := skk*scc - skc*skc; det > 0 {
		x, v = (sky*scc-scy*skc)/det, (scy*skk-sky*skc)/det
	}
	switch {
	case x < 0 || v <= 0 && x <= 0:
		x, v = 0, scy/scc
	case v <= 0:
		v, x = 0, sky/skk
	}
	return x, v, v > 0 && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// fittable is the collective a trace row prices as, if the trace identified and sized it: not
// send/recv (the trace names no peer, so no path) nor barrier (no data).
func fittable(c traces.CollectiveStat) (network.Collective, bool) {
	op, ok := TraceOp(c.Collective)
	g := int(c.GroupSize)
	if !ok || op == network.SendRecv || op == network.Barrier || c.Bytes <= 0 || g < 2 {
		return network.Collective{}, false
	}
	return network.Collective{Op: op, Bytes: units.Bytes(c.Bytes), Group: network.Group{Size: g, Stride: 1}, DType: dtype.FP32}, true
}
