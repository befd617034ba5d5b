package fabric

// Windows. A periodic round (periods.go) loads each link l with K copies of the first period's
// loads L_P moved by τ^k, k < K, added in increasing k:
//
//	load(l) = Σ_{k<K} L_P(τ^{−k}·l)
//
// When τ moves one factor f of Γ (by t, of modulus m), τ's cycles on the links have
// N = m/gcd(t, m) links each; number the links of a cycle by their position a (τ^a moves the
// cycle's first link to it). Then load(a) = Σ_{k<K} L_P(a − k mod N): a sliding window of K
// positions over the few positions of the cycle that L_P loads. The busiest link (and its class)
// is all a round's price needs of the loads, so finishWindows reads it per cycle without adding
// the K copies link by link. With L_P's positions p_1 < … < p_s on a cycle, the window's content
// changes only where a position enters (a = p_i) or leaves (a = p_i + K); where one leaves and
// none enters, the window holds the one before's terms less its last, in the same order, so with
// positive terms its float sum is no larger and its link is loaded later: the s windows ending at
// the p_i hold the busiest link. Each window's sum adds the same shares in the same order (k
// increasing, the zeros of the positions L_P leaves empty left out) as the K copies added link by
// link, so a price is equal bit for bit to the copies' (TestWindowsExact against WithoutWindows),
// and of equally busy links the one the copies load first gives the class (the lowest k, then the
// first period's order). The work per round falls from K·|L_P| loads and a pass over them to
// Σ s² over L_P's links: GPT-3's stride-96 rings on the large torus (K = 21 copies of 768 flows'
// loads) read L_P's loaded links once.
//
// A remainder of flows after the last whole period, a τ along several factors, K > N (copies
// overlapping themselves), or loads another reader needs link by link (PriceConcurrent's spill)
// keep the copies (periods.go).

// winEntry is a loaded link of the first period on its τ-cycle: its position, its rank among the
// first period's loaded links (in the order they were first loaded), its load.
type winEntry struct {
	pos, rank int32
	v         float64
}

// winPick is a cycle's busiest window: its load and when the copies would first load its
// link (copy k, the first period's rank).
type winPick struct {
	v       float64
	k, rank int32
}

// before reports whether a is loaded first.
func (a winPick) before(b winPick) bool { return a.k < b.k || (a.k == b.k && a.rank < b.rank) }

// windowMax is the busiest link of one τ-cycle of n links, the first period's loads at the
// entries e (sorted by position, distinct, in [0, n)), k ≤ n copies: the largest window sum, of
// equal ones the first loaded; false when e is empty.
func windowMax(e []winEntry, n, k int32) (winPick, bool) {
	var best winPick
	found := false
	s := len(e)
	eval := func(y int32) {
		// The entries in the window ending at y, in increasing distance d = y − p (mod n):
		// from the last position at or before y, backwards around the cycle.
		j := s - 1
		for j > 0 && e[j].pos > y {
			j--
		}
		if e[j].pos > y { // none at or before y: the last one, around the cycle
			j = s - 1
		}
		sum := 0.0
		var first winPick
		for c := 0; c < s; c++ {
			d := (y - e[j].pos + n) % n
			if d >= k {
				break
			}
			if c == 0 {
				first.k, first.rank = d, e[j].rank
			}
			sum += e[j].v
			if j--; j < 0 {
				j = s - 1
			}
		}
		if sum == 0 {
			return
		}
		first.v = sum
		if !found || sum > best.v || (sum == best.v && first.before(best)) {
			best, found = first, true
		}
	}
	for _, x := range e {
		eval(x.pos)
	}
	return best, found
}

// periodWindows is a periodic round read by windows: τ moves factor f by t; its cycles have n
// links; inv is (t/g)⁻¹ mod n (g = gcd(t, m)); k copies.
type periodWindows struct {
	on         bool
	f          int
	g, n, inv  int32
	k          int32
	cycles     []winCycle
	ents, sort []winEntry
	at         []int32 // per entry: its cycle
	slot       []int32 // per link: the cycle it is the first link of (−1: none)
}

// winCycle is a τ-cycle holding loads of the first period: its first link and its entries.
type winCycle struct {
	base, n, off int32
}

// windows prepares a periodic round of k copies moved by τ to be read by windows (true), its
// first period's loads left on the links; false: τ moves several factors, or k exceeds its
// cycles.
func (r *router) windows(tau *[maxFactors]uint16, k int) bool {
	sym, w := r.g.sym, &r.win
	f := -1
	for i := 0; i < sym.nf; i++ {
		if tau[i] != 0 {
			if f >= 0 {
				return false
			}
			f = i
		}
	}
	if f < 0 {
		return false
	}
	m, t := sym.fm[f], int32(tau[f])
	g := gcd32(t, m)
	n := m / g
	if int32(k) > n {
		return false
	}
	inv := int32(0)
	for a := int32(1); a < n; a++ {
		if a*(t/g)%n == 1 {
			inv = a
			break
		}
	}
	w.on, w.f, w.g, w.n, w.inv, w.k = true, f, g, n, inv, int32(k)
	return true
}

func gcd32(a, b int32) int32 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// finishWindows is finish's busiest link of a round read by windows (out: the NIC's share
// already in), and clears the loads.
func (r *router) finishWindows(out Load) Load {
	w, sym := &r.win, r.g.sym
	if len(w.slot) < len(r.g.links) {
		w.slot = make([]int32, len(r.g.links))
		for i := range w.slot {
			w.slot[i] = -1
		}
	}
	// Each loaded link's cycle (its first link: the digit along f brought below g) and position.
	cycles, ents, at := w.cycles[:0], w.ents[:0], w.at[:0]
	fs := sym.fs[w.f]
	for i, l := range r.usedIdx {
		x := int32(sym.linkDig[l][w.f])
		c := x % w.g
		pos := int32(int64((x-c)/w.g) * int64(w.inv) % int64(w.n))
		base := sym.linkAt[sym.orbitIx[l]*int32(sym.Order)+sym.LinkElem[l]+(c-x)*fs]
		ci := w.slot[base]
		if ci < 0 {
			ci = int32(len(cycles))
			w.slot[base] = ci
			cycles = append(cycles, winCycle{base: base})
		}
		cycles[ci].n++
		ents = append(ents, winEntry{pos: pos, rank: int32(i), v: r.load[l]})
		at = append(at, ci)
	}
	// The entries grouped by cycle (in rank order), each cycle's sorted by position.
	off := int32(0)
	for i := range cycles {
		cycles[i].off, off = off, off+cycles[i].n
		cycles[i].n = 0
	}
	srt := w.sort[:0]
	srt = append(srt, ents...)
	for i, e := range ents {
		c := &cycles[at[i]]
		srt[c.off+c.n] = e
		c.n++
	}
	hi, class := out.PerByte, uint16(0)
	var top winPick
	won := false
	for _, c := range cycles {
		e := srt[c.off : c.off+c.n]
		for i := 1; i < len(e); i++ { // a few entries: insertion sort
			for j := i; j > 0 && e[j].pos < e[j-1].pos; j-- {
				e[j], e[j-1] = e[j-1], e[j]
			}
		}
		p, ok := windowMax(e, w.n, w.k)
		if !ok {
			continue
		}
		pb := p.v / r.g.rate[c.base]
		if pb > hi || (won && pb == hi && p.before(top)) {
			hi, top, won, class = pb, p, true, r.g.links[c.base].Class
		}
	}
	for _, c := range cycles {
		w.slot[c.base] = -1
	}
	if won {
		out.PerByte, out.Class = hi, class
	}
	for _, k := range r.usedIdx {
		r.load[k], r.used[k] = 0, false
	}
	r.usedIdx = r.usedIdx[:0]
	w.cycles, w.ents, w.at, w.sort = cycles[:0], ents[:0], at[:0], srt[:0]
	w.on = false
	r.maxLat, r.flows = 0, false
	return out
}

// WithoutWindows is g with windows off (periodic rounds add their copies link by link): the
// reference windows are tested against.
func WithoutWindows(g *Graph) *Graph {
	h := WithoutSymmetry(g)
	h.sym = g.sym
	h.unwindowed = true
	return h
}
