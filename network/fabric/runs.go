package fabric

// Runs. Within a period (periods.go) and after its last whole copy, consecutive groups often
// repeat for a while: GPT-3's rings of 4 at stride 96 start one board apart every four groups
// until a member crosses a board row (on the large torus, runs of 16, 8, 8 and 16 boards of
// rings one column apart: TestRuns). Where the flows of the q groups after a run's first q are theirs moved by one τ' ∈ Γ, and
// so on for n whole copies, the run routes its first q groups' flows and adds their loads moved
// by τ'^k, k < n (split routing is equivariant, as for periods). Groups outside runs are routed
// flow by flow; each run and each stretch between runs is summed on its own and the sums are
// added per link in their order (stash), so a link's load is the same shares grouped per run
// and copy: a price may differ from routing every flow in its last bits (TestSublatticeRouting,
// relative 1e-12), as periods' may; with periods off (WithoutPeriods) there are no runs either,
// and a round without a period routes every flow in flow order (its price equal bit for bit to
// routing them without the symmetry: TestSharedCaches). TestRuns counts the runs by hand.
//
// Where τ' moves one factor, copy k puts what the run's first groups load at position p of a
// τ'-cycle of links on position p + k of the same cycle: a run of at least minAlongCopies
// copies is summed on the few cycles' positions it loads (copiesAlong: a small array instead of
// link after link; each position's sum the window of the n positions at and behind it, folded
// in copy order), and the sums are put on the links in the order the copies first reach them:
// the same shares in the same order on every link (TestAlongSlots against replaying the copies;
// TestRunCyclesLoads against WithoutRunCycles, link by link and in order).
//
// Images. A run may be an earlier run of the same plan moved by one σ ∈ Γ: its first q groups'
// flows, flow by flow, the earlier run's moved by σ, with as many copies by the same τ'
// (GPT-3's rings on the large Hx4Mesh: block 3's run of 6 copies is block 0's two board rows
// down and 8 columns on, block 2's second run of 2 block 1's first; on the large torus the runs
// of 8 copies, TestRuns). Γ is abelian, so its copies are the earlier run's copies moved by
// σ (τ'^k·σ·F = σ·τ'^k·F), and with split routing equivariant each of its flows takes the
// earlier one's type, whose shares replay moved by σ: every link σ·l receives the shares l
// received, in the same order, and the copies reach the links in the same order moved. So the
// run's sums are the earlier run's, link for link moved by σ, in the order the earlier run
// loaded its links: the run is not routed, its sums are the kept ones moved (routePlan; every
// link the same sum, added to the stretches' sums in the same order: TestRunCyclesLoads against
// WithoutRunImages, link by link and in order). Its flows' types are the earlier run's, all
// recorded then, so the flows routed after it find the same types.
//
// A run is looked for at each group where none goes on, with q up to maxRunPeriod groups; where
// none starts, the search rests for twice as many groups as the last time (at most
// maxRunRest), so a round without runs costs a few probes per group.
//
// Plans per shape. Where every member of a group sends or receives in the round's pattern, the
// flows of group j + p are group j's moved by τ' exactly when its members are (each flow joins
// two members, the same ones in every group; and each member is in some flow), so runAt finds
// the same runs, copies and τ' on the members as on the flows: a mismatch of flows stops the
// search in the group where the members first mismatch, and the copies counted, whole groups
// of p, are the same. Likewise a run's first groups' flows are an earlier run's moved by σ
// exactly when their members are. The plans of a periodic round's first period and of the
// groups after its last whole period, and their images, are then read from the members once per
// group shape (Model.shapePlans) and serve every pattern over them (best's candidates): the
// same plans (TestShapePlans against planning each pattern's flows).

// maxRunPeriod bounds the groups a run repeats (a board's 16 ranks of a 4×4 HammingMesh board
// in rank order are 16 groups at a stride); maxRunRest the groups routed without looking for a
// run after a search that found none.
const maxRunPeriod, maxRunRest = 32, 64

// routeRuns routes the collected flows fl of groups groups (the same number of flows each, in
// group order) by runs, and reports false when some flow cannot reach its destination. Where
// it summed runs apart it leaves every sum stashed (acc, in the order unstash would put them on
// the links), else on the links: the caller takes them from where they are (sums: takeLoads,
// takeWindows) or puts them on the links (unstash), so no link's sum is moved twice.
// Tail says whether fl are the flows after a period's last whole one (else its first period's,
// or a round's own), for the plans given per shape.
func (r *router) routeRuns(fl []flowRec, groups int, tail bool) bool {
	if groups < 4 || len(fl)%groups != 0 || r.g.unperiodic {
		ok := true
		for _, f := range fl {
			ok = r.route(f) && ok
		}
		return ok
	}
	r.plan = r.planOf(fl, groups, tail, r.plan[:0])
	return r.routePlan(fl, groups, r.plan, 0, tail)
}

// shapePlans are the plans of a periodic round's first period and of the groups after its last
// whole period, and their runs' images, read from the groups' members (Plans per shape).
type shapePlans struct {
	first, tail   []run
	images, tails []runImage
}

// planOf appends to plan the stretches fl (groups groups, runsPlanned) is routed by: the plan
// given for the round's shape (r.given: the first period's, or the tail's), else planRuns'.
func (r *router) planOf(fl []flowRec, groups int, tail bool, plan []run) []run {
	switch {
	case r.given == nil:
		return r.planRuns(fl, groups, plan)
	case tail:
		return append(plan, r.given.tail...)
	}
	return append(plan, r.given.first...)
}

// runsPlanned reports whether routeRuns routes fl of groups groups by a plan (planRuns).
func (r *router) runsPlanned(fl []flowRec, groups int) bool {
	return groups >= 4 && len(fl)%groups == 0 && !r.g.unperiodic
}

// planRuns appends to plan the stretches routeRuns routes fl of groups groups by (c flows
// each), in group order: its runs (n ≥ 2 copies of q groups) and, between them, stretches of q
// groups routed flow by flow (n = 0).
func (r *router) planRuns(fl []flowRec, groups int, plan []run) []run {
	c := len(fl) / groups
	rest, wait := 0, 1
	for a := 0; a < groups; {
		q, n, tau := 0, 0, [maxFactors]uint16{}
		if rest == 0 {
			if q, n, tau = r.runAt(fl, c, a, groups); n < 2 {
				rest, wait = wait, min(2*wait, maxRunRest)
			} else {
				wait = 1
			}
		}
		if n < 2 {
			if k := len(plan) - 1; k >= 0 && plan[k].n == 0 {
				plan[k].q++
			} else {
				plan = append(plan, run{at: a, q: 1})
			}
			a++
			rest = max(rest-1, 0)
			continue
		}
		plan = append(plan, run{a, q, n, tau})
		a += n * q
	}
	return plan
}

// routePlan routes fl (groups groups) by plan (planRuns), as routeRuns says. With snap > 0, a
// stretch of the plan ending at group snap, it also notes the sums of the stretches up to there
// (pre: acc's first len(pre) links' sums then, which the flows of the same stretches moved by
// τ^K sum to; windows.go).
func (r *router) routePlan(fl []flowRec, groups int, plan []run, snap int, tail bool) bool {
	c, ok := len(fl)/groups, true
	r.lastRuns = r.lastRuns[:0]
	r.pre = r.pre[:0]
	switch {
	case r.given == nil:
		r.runImages(fl, c, plan)
	case tail:
		r.images = append(r.images[:0], r.given.tails...)
	default:
		r.images = append(r.images[:0], r.given.images...)
	}
	r.kept = r.kept[:0]
	for xi, x := range plan {
		end := x.at + max(x.n, 1)*x.q
		im := &r.images[xi]
		switch {
		case x.n == 0:
			for _, f := range fl[x.at*c : end*c] {
				ok = r.route(f) && ok
			}
			if r.cutsHere(tail, end, groups) {
				return ok
			}
		case im.src >= 0: // an earlier run moved by σ: its kept sums, moved (Images)
			r.lastRuns = append(r.lastRuns, x)
			if len(r.usedIdx) > 0 {
				r.stash()
			}
			src := &r.images[im.src]
			r.movedSums(r.kept[src.from:src.to], &im.sigma, end < groups)
		default:
			r.lastRuns = append(r.lastRuns, x)
			if len(r.usedIdx) > 0 {
				r.stash()
			}
			r.eager = true
			for _, f := range fl[x.at*c : (x.at+x.q)*c] {
				ok = r.route(f) && ok
			}
			r.eager = false
			// Stashed after the run where more groups follow: copiesAlong adds its sums to the
			// stash directly, as stash would (and keeps them where a later run is its image).
			im.from = int32(len(r.kept))
			if r.g.unalong || !r.copiesAlong(&x.tau, x.n, end < groups, im.keep) {
				r.copies(r.asType(), x.tau, x.n)
				if im.keep {
					for _, l := range r.usedIdx {
						r.kept = append(r.kept, linkLoad{l, r.load[l]})
					}
				}
			}
			im.to = int32(len(r.kept))
			if r.cutsHere(tail, end, groups) {
				return ok
			}
			if end < groups {
				r.stash()
			}
		}
		if end == snap {
			r.stash() // where the next stretch would (nothing is loaded in between)
			for _, l := range r.accIdx {
				r.pre = append(r.pre, r.acc[l])
			}
		}
	}
	r.kept = r.kept[:0]
	if len(r.accIdx) > 0 {
		r.stash()
	}
	return ok
}

// cutsHere reports whether routePlan stops after a stretch ending at group end of groups: the
// first period of a round read by windows cut short there (cutEarly; not after its last
// stretch, where takeWindows reads the same sums whole).
func (r *router) cutsHere(tail bool, end, groups int) bool {
	return r.cut != nil && !tail && r.win.on && end < groups && r.cutEarly()
}

// runImage is what routePlan knows of a run of its plan: src ≥ 0, the earlier run (its index in
// the plan) it is moved by sigma (Images); keep, that a later run is its image, whose sums are
// then kept[from:to].
type runImage struct {
	src      int
	sigma    [maxFactors]uint16
	keep     bool
	from, to int32
}

// runImages notes, for each run of plan over fl (c flows a group), the earlier run it is the
// image of, if any: the same groups, copies and τ', and its first groups' flows, flow by flow,
// the earlier run's moved by σ (σ read from the first flows' sources: Γ acts freely).
func (r *router) runImages(fl []flowRec, c int, plan []run) {
	im := r.images[:0]
	sym := r.g.sym
	for xi, x := range plan {
		e := runImage{src: -1}
		if x.n > 0 && !r.g.unimaged && c > 0 {
			b := fl[x.at*c : (x.at+x.q)*c]
			for yi, y := range plan[:xi] {
				if y.n != x.n || y.q != x.q || y.tau != x.tau || im[yi].src >= 0 {
					continue
				}
				a := fl[y.at*c : (y.at+y.q)*c]
				if sym.EndRep[a[0].s] != sym.EndRep[b[0].s] {
					continue
				}
				var sg [maxFactors]uint16
				for f := 0; f < sym.nf; f++ {
					sg[f] = uint16((int32(sym.endDig[b[0].s][f]) - int32(sym.endDig[a[0].s][f]) + sym.fm[f]) % sym.fm[f])
				}
				same := true
				for i := range a {
					if a[i].part != b[i].part || a[i].w != b[i].w || !sym.movesTo(a[i].s, b[i].s, &sg) || !sym.movesTo(a[i].t, b[i].t, &sg) {
						same = false
						break
					}
				}
				if same {
					e.src, e.sigma = yi, sg
					im[yi].keep = true
					break
				}
			}
		}
		im = append(im, e)
	}
	r.images = im
}

// movedSums loads the sums src (a run's kept sums, in the order it loaded its links) moved by
// the element with digits sigma, in that order: added to the stretches' sums where stash (as
// putting them on the links and stashing them would), else put on the links (none loaded).
func (r *router) movedSums(src []linkLoad, sigma *[maxFactors]uint16, stash bool) {
	sym := r.g.sym
	if stash && len(r.acc) < len(r.load) {
		r.acc, r.accUsed = make([]float64, len(r.load)), make([]bool, len(r.load))
	}
	for _, x := range src {
		y := sym.orbitIx[x.l] * int32(sym.Order)
		d := &sym.linkDig[x.l]
		for f := 0; f < sym.nf; f++ {
			y += sym.shift[f][d[f]+sigma[f]]
		}
		l := sym.linkAt[y]
		if stash {
			if !r.accUsed[l] {
				r.accUsed[l] = true
				r.accIdx = append(r.accIdx, l)
			}
			r.acc[l] += x.v
		} else {
			r.load[l], r.used[l] = x.v, true
			r.usedIdx = append(r.usedIdx, l)
		}
	}
}

// WithoutRunImages is g with every run routed and copied (no run's sums read from an earlier
// run's moved): the reference images are tested against.
func WithoutRunImages(g *Graph) *Graph { return switchedOff(g, func(h *Graph) { h.unimaged = true }) }

// sums are routeRuns' sums where they are (stashed, or on the links): the links in the order
// unstash would put them on the links, their loads and marks, to be read and cleared by the
// caller, who then calls dropSums.
func (r *router) sums() (idx []int32, v []float64, used []bool) {
	if len(r.accIdx) > 0 {
		return r.accIdx, r.acc, r.accUsed
	}
	return r.usedIdx, r.load, r.used
}

// dropSums empties the list sums returned.
func (r *router) dropSums() {
	if len(r.accIdx) > 0 {
		r.accIdx = r.accIdx[:0]
		return
	}
	r.usedIdx = r.usedIdx[:0]
}

// run is a run of groups: from group at, n copies of q groups, each the one before moved by τ
// (n = 0: a stretch of q groups routed flow by flow).
type run struct {
	at, q, n int
	tau      [maxFactors]uint16
}

// runAt is the run starting at group a of the groups of fl (c flows each): q groups whose flows
// moved by τ are the next q groups', n ≥ 2 whole copies in all, the one of most copies (the
// fewest groups routed per group covered), of those the one covering most groups (n < 2: none).
func (r *router) runAt(fl []flowRec, c, a, groups int) (q, n int, tau [maxFactors]uint16) {
	sym := r.g.sym
	for p := 1; p <= maxRunPeriod && a+2*p <= groups && (groups-a)/p >= n; p++ {
		s0, s1 := fl[a*c].s, fl[(a+p)*c].s
		if sym.EndRep[s0] != sym.EndRep[s1] {
			continue
		}
		var t [maxFactors]uint16
		for f := 0; f < sym.nf; f++ {
			t[f] = uint16((int32(sym.endDig[s1][f]) - int32(sym.endDig[s0][f]) + sym.fm[f]) % sym.fm[f])
		}
		j, d := a*c, p*c
		for end := groups * c; j+d < end; j++ {
			x, y := &fl[j], &fl[j+d]
			if x.part != y.part || x.w != y.w || sym.move(x.s, &t) != y.s || sym.move(x.t, &t) != y.t {
				break
			}
		}
		if k := 1 + (j-a*c)/d; k >= 2 && (k > n || (k == n && k*p > n*q)) {
			q, n, tau = p, k, t
		}
	}
	return q, n, tau
}

// asType takes the loads on the links as a type of their own (their latency the round's slowest
// so far) and clears them.
func (r *router) asType() int32 {
	ft, sym := &r.ft, r.g.sym
	if len(ft.start) == 0 {
		ft.start = append(ft.start, 0)
	}
	i := int32(len(ft.lat))
	for _, k := range r.usedIdx {
		ft.keep(sym, k, r.load[k])
		r.load[k], r.used[k] = 0, false
	}
	r.usedIdx = r.usedIdx[:0]
	ft.lat = append(ft.lat, r.maxLat)
	ft.start = append(ft.start, int32(len(ft.share)))
	return i
}

// copies adds type i (asType's, the last) moved by τ^k for k < n, and drops it.
func (r *router) copies(i int32, tau [maxFactors]uint16, n int) {
	ft, sym := &r.ft, r.g.sym
	var g [maxFactors]uint16
	for k := 0; k < n; k++ {
		r.replay(i, &g)
		for f := 0; f < sym.nf; f++ {
			g[f] = uint16((int32(g[f]) + int32(tau[f])) % sym.fm[f])
		}
	}
	mark := ft.start[i]
	ft.lat, ft.start = ft.lat[:i], ft.start[:i+1]
	ft.base, ft.dig, ft.share = ft.base[:mark], ft.dig[:mark], ft.share[:mark]
}

// runCycles holds a run's copies read along the cycles of its move (copiesAlong).
type runCycles struct {
	digit  []winDigit // per digit along the move's factor: its cycle and position (cycleDigits)
	off    []int32    // per position: its digit's offset from the cycle's first link's (times the factor's stride)
	cycles []int32    // the cycles the run's first groups load: their first links' numbers
	ents   []runEntry // those loads, in the order they loaded links
	ext    []float64  // per cycle, N + n − 1 positions: the loads, position i holding position i − (n − 1) (mod N)'s
	sum    []float64  // per slot of order: the copies' sum
	seen   []bool     // per cycle and position: an entry is there (cleared after use)
	reach  []int32    // per entry: the slots it reaches first (alongSlots)
	active []int32
	order  []int32 // the (cycle, position) slots in the order the copies first load them
}

// runEntry is a link a run's first groups load: its cycle's slots' start, its position, load.
type runEntry struct {
	at, pos int32
	v       float64
}

// maxRunSlots bounds the slots (cycles × their length) copiesAlong sums a run in;
// minAlongCopies is the fewest copies it takes (fewer are replayed: the cycles cost more to find
// than the copies to replay; measured on the large fabrics' runs of 2–16 copies).
const maxRunSlots, minAlongCopies = 1 << 18, 8

// copiesAlong adds the loads on the links (a run's first groups', none stashed) moved by τ^k for
// k < n, as copies(asType(), τ, n) does, where τ moves one factor (false: it did nothing). Copy
// k moves the load at position p of a τ-cycle of N links to position p + k (mod N), so a
// position's sum is a window of the n positions at and behind it on its cycle's few loaded
// positions (a small array) instead of copies added link by link: alongSlots lists the
// positions in the order the copies first reach them, alongSums folds each one's window in the
// order the copies add it, so each link receives the same shares in the same order, and the
// links are loaded in the order replaying the copies loads them (TestAlongSlots,
// TestRunCyclesLoads, TestRunCyclesExact); with stash, added to the stretches' sums in that
// order instead, as stash would add them.
func (r *router) copiesAlong(tau *[maxFactors]uint16, n int, stash, keep bool) bool {
	sym, c := r.g.sym, &r.runs
	f := sym.oneFactor(tau)
	if f < 0 || sym.linkIx == nil || n < minAlongCopies {
		return false
	}
	t, m := int32(tau[f]), sym.fm[f]
	var N int32
	c.digit, N = sym.cycleDigits(c.digit[:0], f, t)
	slot := r.cycleSlots() // windows' table, unused until takeWindows (its entries name this list's cycles meanwhile)
	cycles, ents := c.cycles[:0], c.ents[:0]
	for _, l := range r.usedIdx {
		d := c.digit[sym.linkDig[l][f]]
		base := sym.linkIx[l] + d.shift
		var ci int32
		ci, cycles = claim(slot, cycles, base)
		ents = append(ents, runEntry{at: ci * N, pos: d.pos, v: r.load[l]})
	}
	c.cycles, c.ents = cycles, ents
	slots := len(cycles) * int(N)
	if slots > maxRunSlots {
		return false
	}
	for _, l := range r.usedIdx {
		r.load[l], r.used[l] = 0, false
	}
	r.usedIdx = r.usedIdx[:0]
	order := c.alongSlots(N, n, slots)
	sum := c.alongSums(len(cycles), N, n, order)
	// Position a of a cycle is the digit c + a·t (mod m) along f, c the first link's digit.
	off := c.off[:0]
	for a, d := int32(0), int32(0); a < N; a++ {
		off = append(off, d*sym.fs[f])
		if d += t; d >= m {
			d -= m
		}
	}
	c.off = off
	if stash {
		if len(r.acc) < len(r.load) {
			r.acc, r.accUsed = make([]float64, len(r.load)), make([]bool, len(r.load))
		}
		for i, x := range order {
			ci, a := x/N, x%N
			l := sym.linkAt[cycles[ci]+off[a]]
			if !r.accUsed[l] {
				r.accUsed[l] = true
				r.accIdx = append(r.accIdx, l)
			}
			r.acc[l] += sum[i]
			if keep {
				r.kept = append(r.kept, linkLoad{l, sum[i]})
			}
		}
	} else {
		for i, x := range order {
			ci, a := x/N, x%N
			l := sym.linkAt[cycles[ci]+off[a]]
			r.load[l], r.used[l] = sum[i], true
			r.usedIdx = append(r.usedIdx, l)
			if keep {
				r.kept = append(r.kept, linkLoad{l, sum[i]})
			}
		}
	}
	c.order = order[:0]
	return true
}

// alongSlots lists the slots (cycle·N + position) that n copies of the entries c.ents reach, in
// the order the copies first reach them: copy k, then the entries' order. Copy k moves an
// entry at position p to p + k (mod N), so a slot is first reached by the nearest entry at or
// before it on its cycle, at copy k its distance from it, where k < n: an entry e reaches first
// the slots at e.pos + k for k < L_e = min(g_e, n), g_e the distance to the next entry on its
// cycle (N where it is alone), and no other slot is reached (its nearest entry at or before it
// is more than n − 1 positions back). So copy k lists, in the entries' order, the entries with
// k < L_e: the slots replaying the copies one by one first reaches, in that order, each once
// (TestAlongSlots against that replay). Slots is the cycles' positions (cycles × N).
func (c *runCycles) alongSlots(N int32, n, slots int) []int32 {
	if len(c.seen) < slots {
		c.seen = make([]bool, slots)
	}
	ents, seen := c.ents, c.seen
	for _, e := range ents {
		seen[e.at+e.pos] = true
	}
	reach, active := c.reach[:0], c.active[:0]
	for i, e := range ents {
		l, p := int32(1), e.pos+1
		for ; l < int32(n) && l < N; l++ {
			if p == N {
				p = 0
			}
			if seen[e.at+p] {
				break
			}
			p++
		}
		reach = append(reach, l)
		active = append(active, int32(i))
	}
	for _, e := range ents {
		seen[e.at+e.pos] = false
	}
	order := c.order[:0]
	for k := int32(0); len(active) > 0; k++ {
		j := 0
		for _, i := range active {
			e := &ents[i]
			p := e.pos + k
			if p >= N {
				p -= N
			}
			order = append(order, e.at+p)
			if reach[i] > k+1 {
				active[j] = i
				j++
			}
		}
		active = active[:j]
	}
	c.reach, c.active, c.order = reach, active, order
	return order
}

// alongSums is the copies' sum at each slot of order (alongSlots; cycles cycles of N positions,
// n copies): the slot at position P receives at copy k the load at P − k (mod N), k = 0 … n − 1,
// each entry's once where it has one. The loads are laid out per cycle over N + n − 1 positions
// (ext, position i holding the load at i − (n − 1) mod N, zero where none), so the slot's terms
// are ext[P + n − 1 − k], k increasing: a fold over n consecutive floats from 0, the zeros where
// no entry is left in (0 + x and x + 0 are x: loads are positive), so each sum is the same
// shares added in the same order as adding the copies one by one, bit for bit (TestAlongSums
// against that replay). Eight slots are folded at a time: independent sums, no stores between.
func (c *runCycles) alongSums(cycles int, N int32, n int, order []int32) []float64 {
	W := int(N) + n - 1
	if len(c.ext) < cycles*W {
		c.ext = make([]float64, cycles*W)
	}
	ext := c.ext[:cycles*W]
	clear(ext)
	for _, e := range c.ents {
		b := int(e.at/N) * W
		for i := int(e.pos+int32(n)-1) % int(N); i < W; i += int(N) {
			ext[b+i] = e.v
		}
	}
	sum := c.sum[:0]
	// The slot at position P of cycle ci folds ext[ci·W + P + n − 1] down to ext[ci·W + P].
	base := func(x int32) int { return int(x/N)*W + int(x%N) }
	i := 0
	for ; i+8 <= len(order); i += 8 {
		x := order[i : i+8]
		a0, a1, a2, a3 := ext[base(x[0]):][:n], ext[base(x[1]):][:n], ext[base(x[2]):][:n], ext[base(x[3]):][:n]
		a4, a5, a6, a7 := ext[base(x[4]):][:n], ext[base(x[5]):][:n], ext[base(x[6]):][:n], ext[base(x[7]):][:n]
		var s0, s1, s2, s3, s4, s5, s6, s7 float64
		for j := n - 1; j >= 0; j-- {
			s0 += a0[j]
			s1 += a1[j]
			s2 += a2[j]
			s3 += a3[j]
			s4 += a4[j]
			s5 += a5[j]
			s6 += a6[j]
			s7 += a7[j]
		}
		sum = append(sum, s0, s1, s2, s3, s4, s5, s6, s7)
	}
	for ; i < len(order); i++ {
		a := ext[base(order[i]):][:n]
		var s float64
		for j := n - 1; j >= 0; j-- {
			s += a[j]
		}
		sum = append(sum, s)
	}
	c.sum = sum
	return sum
}

// WithoutRunCycles is g with runs' copies replayed copy by copy (copies), not added along their
// cycles (copiesAlong): the reference copiesAlong is tested against.
func WithoutRunCycles(g *Graph) *Graph { return switchedOff(g, func(h *Graph) { h.unalong = true }) }

// stash adds the links' loads to the sums of the stretches before (acc) and clears them.
func (r *router) stash() {
	if len(r.usedIdx) == 0 {
		return
	}
	if len(r.acc) < len(r.load) {
		r.acc, r.accUsed = make([]float64, len(r.load)), make([]bool, len(r.load))
	}
	for _, k := range r.usedIdx {
		if !r.accUsed[k] {
			r.accUsed[k] = true
			r.accIdx = append(r.accIdx, k)
		}
		r.acc[k] += r.load[k]
		r.load[k], r.used[k] = 0, false
	}
	r.usedIdx = r.usedIdx[:0]
}

// unstash puts the sums back on the links (in the order the stretches first loaded them).
func (r *router) unstash() {
	r.stash()
	for _, k := range r.accIdx {
		r.load[k], r.used[k] = r.acc[k], true
		r.acc[k], r.accUsed[k] = 0, false
	}
	r.usedIdx = append(r.usedIdx, r.accIdx...)
	r.accIdx = r.accIdx[:0]
}
