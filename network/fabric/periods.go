package fabric

// Periods. A round that no subgroup of Γ maps onto itself may still repeat: GPT-3's rings of 4
// at stride 96 on the large torus fill blocks of 96 boards (1.5 board rows), and every second
// block is the one two blocks before moved by τ = three board rows down — but 64 rows are not a
// multiple of 3, and the job stops at 16,320 ranks, so τ generates all of Z_64 and maps the last
// blocks onto nothing. In the flows F_0, F_1, … of the round in group order, a period is q > 0
// and τ ∈ Γ with
//
//	F_{i+q} = τ·F_i   for every i with i + q < n,
//
// so the first q flows load L_P, the next q the same loads moved by τ, and
//
//	load(l) = Σ_{k<K} L_P(τ^{−k}·l) + Σ_{i ≥ Kq} c_{F_i}(l),   K = ⌊n/q⌋
//
// (split routing is equivariant; each flow still takes its type's shares). The work falls from
// n flows' shares to q flows' and K copies of L_P's links: for the torus rings, 768 flows and 21
// copies instead of 16,320 flows. The sum per link is the same shares grouped per period, so a
// price may differ from routing every flow in its last bits (TestSublatticeRouting, relative
// 1e-12); with periods off (WithoutPeriods) flow types alone are exact.
//
// Candidates q are the starts of groups, tried in order; a candidate is first checked at the
// flows where earlier candidates failed (witnesses), and at most maxPeriodChecks candidates are
// checked over all flows, so a round without a period costs a few passes over its flows.

// maxPeriodChecks bounds the candidates checked over every flow of a round.
const maxPeriodChecks = 4

// flowRec is a flow of a round collected before it is routed.
type flowRec struct {
	s, t, part int32 // source, destination, the pattern's part it belongs to
	w          float64
}

// collect notes flow s → t of weight w of part i (its NIC share counted now).
func (r *router) collect(s, t int32, i int, w float64) {
	r.nic(s, t, w)
	r.fl = append(r.fl, flowRec{s, t, int32(i), w})
}

// route routes a collected flow; false when its destination is unreachable. The flows a
// sub-lattice or a period adds as moved copies of routed ones are reachable when those are
// (the moves are automorphisms).
func (r *router) route(f flowRec) bool {
	d := r.g.dist.Dist(f.s, f.t)
	if d >= Unreachable {
		return false
	}
	r.split(f.s, f.t, d, f.w)
	return true
}

// group marks the start of a group's flows among the collected ones.
func (r *router) group() { r.starts = append(r.starts, int32(len(r.fl))) }

// routeCollected routes the collected flows and forgets them: with a sub-lattice h those into
// its representatives, else by period where they have one. It reports false when some flow
// cannot reach its destination.
func (r *router) routeCollected(h *lattice) bool {
	fl, ok := r.fl, true
	defer func() { r.fl, r.starts = fl[:0], r.starts[:0] }()
	if h != nil {
		for _, f := range fl {
			if h.rep(f.t) {
				ok = r.route(f) && ok
			}
		}
		return ok
	}
	q, tau, periodic := r.period()
	r.lastQ, r.lastTau = q, tau
	if !periodic {
		for _, f := range fl {
			ok = r.route(f) && ok
		}
		return ok
	}
	for _, f := range fl[:q] {
		ok = r.route(f) && ok
	}
	// The first period's loads become a type of their own, replayed moved by τ^k.
	ft, sym := &r.ft, r.g.sym
	if len(ft.start) == 0 {
		ft.start = append(ft.start, 0)
	}
	i, mark := int32(len(ft.lat)), len(ft.share)
	for _, k := range r.usedIdx {
		ft.keep(sym, k, r.load[k])
		r.load[k], r.used[k] = 0, false
	}
	r.usedIdx = r.usedIdx[:0]
	ft.lat = append(ft.lat, r.maxLat)
	ft.start = append(ft.start, int32(len(ft.share)))
	var g [maxFactors]uint16
	for k := 0; k < len(fl)/q; k++ {
		r.replay(i, &g)
		for f := 0; f < sym.nf; f++ {
			g[f] = uint16((int32(g[f]) + int32(tau[f])) % sym.fm[f])
		}
	}
	ft.lat, ft.start = ft.lat[:i], ft.start[:i+1]
	ft.base, ft.dig, ft.share = ft.base[:mark], ft.dig[:mark], ft.share[:mark]
	for _, f := range fl[len(fl)/q*q:] {
		ok = r.route(f) && ok
	}
	return ok
}

// period finds the collected flows' shortest period among the group starts that repeats at
// least twice, and its element τ.
func (r *router) period() (int, [maxFactors]uint16, bool) {
	var tau [maxFactors]uint16
	if r.g.untyped || r.g.unperiodic || len(r.starts) < 2 {
		return 0, tau, false
	}
	sym, fl := r.g.sym, r.fl
	n := len(fl)
	wit := r.witness[:0]
	image := func(a, b flowRec) bool {
		return a.w == b.w && sym.move(a.s, &tau) == b.s && sym.move(a.t, &tau) == b.t
	}
	checks := 0
	for _, start := range r.starts[1:] {
		q := int(start)
		if 2*q > n {
			break
		}
		if q == 0 || sym.EndRep[fl[0].s] != sym.EndRep[fl[q].s] {
			continue
		}
		for f := 0; f < sym.nf; f++ {
			tau[f] = uint16((int32(sym.endDig[fl[q].s][f]) - int32(sym.endDig[fl[0].s][f]) + sym.fm[f]) % sym.fm[f])
		}
		ok := image(fl[0], fl[q])
		for _, i := range wit {
			if !ok {
				break
			}
			ok = i+q >= n || image(fl[i], fl[i+q])
		}
		if !ok {
			continue
		}
		if checks == maxPeriodChecks {
			break
		}
		checks++
		bad := -1
		for i := 1; i+q < n; i++ {
			if !image(fl[i], fl[i+q]) {
				bad = i
				break
			}
		}
		if bad < 0 {
			r.witness = wit
			return q, tau, true
		}
		wit = append(wit, bad)
	}
	r.witness = wit
	return 0, tau, false
}
