package fabric

import "slices"

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
// copies instead of 16,320 flows. The first period's flows, and those after the last whole
// period (whose loads R are held apart: a link carries the copies' sum plus R), are themselves
// routed by runs (runs.go): 64 of the torus's 768 flows, and their copies. The sum per link is
// the same shares grouped per period, run and copy, so a price may differ from routing every
// flow in its last bits (TestSublatticeRouting, relative 1e-12); with periods off
// (WithoutPeriods) flow types alone are exact.
//
// The period is found once per group shape, on the groups' members (Model.groupPeriod): when
// the members of every group Q groups later are the earlier ones moved by τ, so are the flows
// of any pattern over them. Candidates Q are tried in order; a candidate is first checked at the
// members where earlier candidates failed (witnesses) and at a few spread over the job, and at
// most maxPeriodChecks candidates are checked over all members, so a job without a period costs
// a few passes over its ranks. Where the groups are ranks on endpoints in rank order and a
// candidate is whole blocks of groups, every member is the one Q groups before a fixed number of
// ranks on, and the check over all members reads how far the fabric's numbering repeats that
// translation by τ (Symmetry.shifted: once per graph, not per model).

// maxPeriodChecks bounds the candidates checked over every member of the groups, after
// periodSamples members spread over them.
const maxPeriodChecks, periodSamples = 4, 16

// flowRec is a flow of a round collected before it is routed.
type flowRec struct {
	s, t, part int32 // source, destination, the pattern's part it belongs to
	w          float64
}

// memberFlow is a flow between members of a group (their rank offsets from the group's base), of
// part part.
type memberFlow struct {
	s, t, part int32
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
// its representatives, else by the period of the groups (gp, in groups, when periodic) where
// they have one. It reports false when some flow cannot reach its destination.
func (r *router) routeCollected(h *lattice, gp period, periodic bool) bool {
	fl, ok := r.fl, true
	gap := r.gap // flows left out after the first period (collectPeriodic)
	defer func() { r.fl, r.starts, r.gap = fl[:0], r.starts[:0], 0 }()
	if h != nil {
		for _, f := range fl {
			if h.rep(f.t) {
				ok = r.route(f) && ok
			}
		}
		return ok
	}
	// Every group sends the same number of flows (one pattern over members in the same
	// order), so gp.q groups are q flows: the flows q later are the earlier ones moved by τ.
	q, tau := 0, gp.tau
	if periodic = periodic && (gp.q < len(r.starts) || gap > 0) && !r.g.unperiodic; periodic {
		q = len(fl) // the first period alone collected, nothing after the last
		if gp.q < len(r.starts) {
			q = int(r.starts[gp.q])
		}
		periodic = q > 0 && 2*q <= len(fl)+gap
	}
	r.lastQ, r.lastTau = q, tau
	if !periodic {
		for _, f := range fl {
			ok = r.route(f) && ok
		}
		return ok
	}
	// The flows after the last whole period first (by runs), their loads R held apart; then the
	// first period's. A link's load is the K copies' sum C plus R. Where windows read the round
	// and those flows are the first period's first stretches moved by τ^K (the same plan), R is
	// not routed: it is those stretches' sum moved, noted on the way (windows.go).
	k, c := (len(fl)+gap)/q, q/gp.q
	r.rem = r.rem[:0]
	win := r.lone && !r.g.unwindowed && r.windowsFor(&tau, k)
	first, tail := fl[:q], fl[k*q-gap:]
	snap := 0
	if len(tail) > 0 {
		tg := len(tail) / c
		if win && r.tailAsPrefix(first, gp.q, tail, tg, k) {
			snap = tg
		} else {
			ok = r.routeRuns(tail, tg, true)
			r.rem = r.takeLoads(r.rem)
		}
	}
	if snap > 0 {
		ok = r.routePlan(first, gp.q, r.plan, snap, false) && ok
	} else {
		ok = r.routeRuns(first, gp.q, false) && ok
	}
	// Read by windows where finish alone reads the loads (windows.go: C per τ-cycle, plus R on
	// R's links), else the first period's loads become a type of their own, replayed moved by
	// τ^k, and R is added.
	if win {
		if !r.win.cut { // (else cut short while routed: windows.go)
			r.takeWindows()
		}
		return ok
	}
	if len(r.accIdx) > 0 {
		r.unstash()
	}
	r.copies(r.asType(), tau, k)
	for _, x := range r.rem {
		r.add(x.l, x.v)
	}
	r.rem = r.rem[:0]
	return ok
}

// tailAsPrefix reports whether the flows after the last whole period (tail, tg groups) are
// routed by the same stretches as the first period's first tg groups (first, groups groups:
// the same runs, a stretch ending at tg), so that R, the tail's sums, are those stretches' sums
// moved by τ^K (every flow of the tail is the one K periods before moved by τ^K, and each
// stretch is summed alike), and K is below the τ-cycles' length (windows read R at distance K).
// It leaves the first period's plan in r.plan.
func (r *router) tailAsPrefix(first []flowRec, groups int, tail []flowRec, tg, k int) bool {
	if int32(k) >= r.win.n || !r.runsPlanned(first, groups) || !r.runsPlanned(tail, tg) {
		return false
	}
	r.plan = r.planOf(first, groups, false, r.plan[:0])
	r.tailPlan = r.planOf(tail, tg, true, r.tailPlan[:0])
	return len(r.tailPlan) <= len(r.plan) && slices.Equal(r.tailPlan, r.plan[:len(r.tailPlan)])
}

// linkLoad is a link's load held apart.
type linkLoad struct {
	l int32
	v float64
}

// takeLoads appends routeRuns' sums to held, in the order unstash would put them on the links,
// and clears them.
func (r *router) takeLoads(held []linkLoad) []linkLoad {
	idx, v, used := r.sums()
	for _, l := range idx {
		held = append(held, linkLoad{l, v[l]})
		v[l], used[l] = 0, false
	}
	r.dropSums()
	return held
}

// period is a repetition: each element q later is the earlier one moved by τ.
type period struct {
	q   int
	tau [maxFactors]uint16
}

// memberList is the members of groups in group order, by index: pts, or where pts is nil (stride
// > 0) those of every group of size unit at that stride with rank r on endpoint r
// (network.Group.Base: member k of group j is (j/stride)·unit·stride + j mod stride +
// k·stride), read from the formula; n members.
type memberList struct {
	pts             []int32
	n, unit, stride int
}

// at is member i.
func (l *memberList) at(i int) int32 {
	if l.pts != nil {
		return l.pts[i]
	}
	// (32-bit: a job's ranks fit, and a 32-bit division is a fraction of a 64-bit one's time)
	x, u, s := uint32(i), uint32(l.unit), uint32(l.stride)
	j, k := x/u, x%u
	return int32((j/s)*u*s + j%s + k*s)
}

// list appends the members to dst, a group at a time (each group's base once).
func (l *memberList) list(dst []int32) []int32 {
	for j := 0; j*l.unit < l.n; j++ {
		base := int32((j/l.stride)*l.unit*l.stride + j%l.stride)
		for k := 0; k < l.unit; k++ {
			dst = append(dst, base+int32(k*l.stride))
		}
	}
	return dst
}

// periodOf finds the shortest period of the members among the multiples of their groups' size
// that repeats at least twice (every member i + q is τ·member i); false: none. Members listed by
// the formula (rank r on endpoint r, stride > 0): where a candidate is a whole number Q·stride
// of groups, group j + Q's base is group j's plus (Q/stride)·unit·stride (its block, stride
// groups of unit·stride ranks, is Q/stride blocks on, at the same place in it), so every member
// i + q is member i plus Δ, Δ = member q − member 0; the bases rise with j, so the members
// checked (1 … n−q−1, those of the first n/unit − Q groups) are at most the last group's last,
// member n−q−1; and the check holds for all of them where the fabric's numbering moves every
// endpoint up to that one Δ on by τ (Symmetry.shifted, read once per graph): the same answer as
// moving each member (TestShiftedPeriod), else each is moved (the members then listed).
func (r *router) periodOf(ml memberList) (period, bool) {
	var p period
	sym, n, unit := r.g.sym, ml.n, ml.unit
	if unit < 1 || n == 0 {
		return p, false
	}
	wit := r.witness[:0]
	defer func() { r.witness = wit[:0] }()
	checks := 0
	for q := unit; 2*q <= n; q += unit {
		a, b := ml.at(0), ml.at(q)
		if sym.EndRep[a] != sym.EndRep[b] {
			continue
		}
		for f := 0; f < sym.nf; f++ {
			p.tau[f] = uint16((int32(sym.endDig[b][f]) - int32(sym.endDig[a][f]) + sym.fm[f]) % sym.fm[f])
		}
		ok := true
		for _, i := range wit {
			if i+q < n && sym.move(ml.at(i), &p.tau) != ml.at(i+q) {
				ok = false
				break
			}
		}
		for k := 1; k < periodSamples && ok; k++ { // a few members spread over the job
			i := k * (n - q) / periodSamples
			ok = sym.move(ml.at(i), &p.tau) == ml.at(i+q)
		}
		if !ok {
			continue
		}
		if checks == maxPeriodChecks {
			break
		}
		checks++
		bad := -1
		if ml.pts != nil || (q/unit)%ml.stride != 0 || r.g.unshifted || sym.shifted(b-a, &p.tau) <= ml.at(n-q-1) {
			if ml.pts == nil { // listed once, for every candidate after
				ml.pts = ml.list(r.pts[:0])
				r.pts = ml.pts
			}
			pts := ml.pts
			for i := 1; i+q < n; i++ {
				if sym.move(pts[i], &p.tau) != pts[i+q] {
					bad = i
					break
				}
			}
		}
		if bad < 0 {
			p.q = q
			return p, true
		}
		wit = append(wit, bad)
	}
	return p, false
}

// WithoutShifts is g with every member of a period's candidate moved (no numbering read,
// Symmetry.shifted): the reference periodOf's reading is tested against.
func WithoutShifts(g *Graph) *Graph { return switchedOff(g, func(h *Graph) { h.unshifted = true }) }
