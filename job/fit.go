package job

import (
	"fmt"
	"math"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/alphabeta"
	"github.com/ddlest/ddlest/traces"
)

// CollectiveFit is a network model's parameters fitted to a trace's measured collectives.
type CollectiveFit struct {
	Network string `json:"network"`
	// Params are the fitted parameters as the network takes them (--net-param key=value).
	Params    []string                `json:"params"`
	Alpha     units.Seconds           `json:"alpha_s"`
	Bandwidth units.BytesPerSecond    `json:"bandwidth_bytes_per_s"`
	Rows      []CollectiveCalibration `json:"collectives"` // priced with the fitted parameters
	// MAPE is the mean absolute relative error of the fitted model against the fastest calls of
	// the rows it could price (Used of them).
	MAPE float64 `json:"mape"`
	Used int     `json:"rows_fitted"`
}

// FitNetworks lists the networks CollectiveFits fits.
var FitNetworks = []string{alphabeta.Name}

// CollectiveFits fits the alphabeta network's per-step latency α and per-GPU bandwidth B to the
// fastest call of every collective the trace sized (the call that waited least for its peers;
// CollectiveCalibration). A collective's time on alphabeta is affine in α and 1/B, t = k·α +
// c/B (its ring steps and the bytes each rank moves): the model's own Price gives k and c,
// priced at two latencies, and α and 1/B minimise the squared relative errors (weighted least
// squares, both ≥ 0). The rows are then priced with the fitted parameters.
func CollectiveFits(ranks []traces.RankSummary, net string) (*CollectiveFit, error) {
	if net != alphabeta.Name {
		return nil, errs.Usage("--net %s: trace fit fits alphabeta (α and one bandwidth: a single-rank trace cannot tell a cluster's tiers apart); valid: %s", net, alphabeta.Name)
	}
	gpus := 2
	for _, r := range ranks {
		for _, c := range r.Collectives {
			gpus = max(gpus, int(c.GroupSize))
		}
	}
	build := func(latency units.Seconds, gbit float64) (network.Model, []string, error) {
		p := []string{fmt.Sprintf("latency_ns=%.6g", float64(latency/units.Ns(1))), fmt.Sprintf("bandwidth_gbit_per_s=%.6g", gbit)}
		m, _, err := buildNetwork(nil, NetworkChoice{Name: alphabeta.Name, Params: p}, network.Env{GPUs: gpus})
		return m, p, err
	}
	// Probes, not parameters: two latencies at one bandwidth.
	a1, a2, b1 := units.Us(1), units.Us(2), 100.0
	m1, _, err := build(a1, b1)
	if err != nil {
		return nil, err
	}
	m2, _, err := build(a2, b1)
	if err != nil {
		return nil, err
	}
	type sample struct{ k, c, t float64 }
	var xs []sample
	sizes := map[int64]bool{}
	for _, r := range ranks {
		for _, c := range r.Collectives {
			coll, ok := fittable(c)
			if !ok || c.MinNs <= 0 {
				continue
			}
			t1, err1 := m1.Price(coll)
			t2, err2 := m2.Price(coll)
			if err1 != nil || err2 != nil {
				continue
			}
			k := float64((t2.Total - t1.Total) / (a2 - a1))                     // steps
			cb := (float64(t1.Total) - k*float64(a1)) * float64(units.Gbps(b1)) // bytes per rank
			xs = append(xs, sample{k, cb, float64(units.Ns(float64(c.MinNs)))})
			sizes[c.Bytes] = true
		}
	}
	if len(xs) < 2 || len(sizes) < 2 {
		return nil, errs.Usage("trace fit needs at least two priced collectives of different sizes; the trace has %d (of %d sizes)", len(xs), len(sizes))
	}
	var skk, skc, scc, skt, sct float64
	for _, x := range xs {
		w := 1 / (x.t * x.t)
		skk += w * x.k * x.k
		skc += w * x.k * x.c
		scc += w * x.c * x.c
		skt += w * x.k * x.t
		sct += w * x.c * x.t
	}
	alpha, inv := 0.0, 0.0
	if det := skk*scc - skc*skc; det > 0 {
		alpha, inv = (skt*scc-sct*skc)/det, (sct*skk-skt*skc)/det
	}
	switch {
	case alpha < 0 || inv <= 0 && alpha <= 0:
		alpha, inv = 0, sct/scc
	case inv <= 0:
		inv, alpha = 0, skt/skk
	}
	if inv <= 0 || math.IsNaN(inv) {
		return nil, errs.Usage("trace fit: the collectives' times do not grow with their sizes; no bandwidth fits")
	}
	fit := &CollectiveFit{Network: alphabeta.Name, Alpha: units.Seconds(alpha), Bandwidth: units.BytesPerSecond(1 / inv)}
	gbit := fit.Bandwidth.Gbit()
	m, p, err := build(units.Seconds(alpha), gbit)
	if err != nil {
		return nil, err
	}
	fit.Params = p
	if fit.Rows, _, err = calibrate(ranks, m); err != nil {
		return nil, err
	}
	for _, r := range fit.Rows {
		if r.ErrorFastest != nil {
			fit.MAPE += math.Abs(*r.ErrorFastest)
			fit.Used++
		}
	}
	if fit.Used > 0 {
		fit.MAPE /= float64(fit.Used)
	}
	return fit, nil
}

// fittable is the collective a trace row prices as (send/recv between two ranks), if the
// trace sized it.
func fittable(c traces.CollectiveStat) (network.Collective, bool) {
	op, ok := TraceOp(c.Collective)
	g := int(c.GroupSize)
	if op == network.SendRecv {
		g = 2
	}
	if !ok || c.Bytes <= 0 || g < 2 {
		return network.Collective{}, false
	}
	return network.Collective{Op: op, Bytes: units.Bytes(c.Bytes), Group: network.Group{Size: g, Stride: 1}, DType: dtype.FP32}, true
}
