package fabric

import (
	"math"
	"math/bits"
	"slices"
)

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
// The flows after the last whole period are routed apart (periods.go), their loads R held: a
// link's load is C + R, C the copies' sum, and finish reads C + R on R's links with the windows
// (the copies add R to C alike). Those flows are the first period's first ones moved by τ^K;
// where runs.go routes them by the same stretches as it routes the first period's first groups
// (the same runs, one ending where they end: GPT-3's 192 groups after the large Hx4Mesh's 10
// periods are its first three runs), R(l) is those stretches' sum S at τ^{−K}·l, the same floats
// in the same order, so R is not routed: routePlan notes S on the way (pre), and the window
// ending at a holds the copies' terms at distances 0 … K−1 and S at distance K (K < N), added
// last. Between the positions where a term enters (p_i, and p_i + K where an S enters) a window
// holds the one before's terms less its last ones, so those positions still hold the busiest
// link; a link only S loads is loaded after every copy, in the first period's order (as the
// routed R's own order ranks it). TestWindowsRemainder checks those links bit for bit against
// the copies and R added link by link, TestWindowMax hand-counted windows with S. A τ along
// several factors, K > N (copies overlapping themselves), or loads another reader needs link by
// link (PriceConcurrent's spill) keep the copies.
//
// A cycle passed over. A window ending at a holds, of each entry at distance d = a − p (mod N),
// its load where d < K, its S where d = K, nothing beyond: at most max(L, S) of each, and
// nothing of an entry more than K positions back. Where a cycle's entries do not all lie within
// K + 1 consecutive positions (cyclically), every window leaves one out, so none holds more than
// M − m, M the sum over its entries of max(L, S) and m their least: a bound tighter than the
// total where K is short of the cycle (GPT-3's rings on the large Hx4Mesh: K = 10 of N = 32,
// two or three entries a cycle), and finishWindows passes over a cycle whose bound, as its
// total, falls short of the busiest window found by more than rounding (M and a window's sum
// are sums of s positive floats, each within s ulps of its exact value; M − m ≥ M/2 where
// s ≥ 2: all far below 1e-9): such a cycle's windows are not read, and the busiest link and its
// class are those reading them gives (TestWindowsExact, TestWindowsRemainder). Whether the
// entries lie within K + 1 positions is read from the positions they occupy (a bit each where
// N ≤ 64, cycleMost): rotated to start at one of them, they lie below bit K + 1.
//
// Where no two entries lie less than K positions apart (GPT-3's rings on the large Hx4Mesh:
// positions 0, 11 and 22 of 32), a window holds at most one load (two entries less than K back
// would lie less than K apart) and one S (of the entry exactly K back), both only where that
// entry lies exactly K before the window's end: the busiest window's load is the largest load
// or S, or an entry's load plus the S of the entry K before it, read exactly (the same one or
// two floats windowFrom adds; cycleApart). A cycle whose busiest window falls short of the
// busiest found, or equals it while no window of the cycle is loaded before it (the found one
// loaded by copy 0, the cycle's first entry ranked after it), is passed over: its windows
// would not change the pick (TestWindowsApart against windowMax; TestWindowsExact).

// Cut short. Where best already has a price and progress routes a pattern of a candidate
// (bound.go; the router's cut set), takeWindows, as it takes the first period's loads L_P off
// the links, reads the busiest of them per byte: the window ending at a link l holds L_P(l) as
// copy 0's term and positive terms besides (a float sum of positive terms is no less than any
// of them, in any order), and the flows after the last whole period only add to a link, so no
// link of the round carries less than L_P(l), and the round's Load is no less than one with
// that busiest L_P and the round's latency. Where the candidate's rounds priced with it pass the
// cheapest price found by more than the chooser's slack (collective.AboveBest), the candidate is
// never priced again: the cycles are not made nor read, and the Load is kept as the pattern's
// bound, not as its routed load (Model.cuts, routeNew). The same holds earlier, while the first
// period is routed: a link's sum after some of its stretches is a prefix of L_P(l)'s terms, and
// the latency of the flows routed so far no more than the round's, so after a stretch whose sums
// are on the links routePlan asks again where their busiest rose (cutEarly), and a round cut
// there routes none of its other stretches (GPT-3's rings on the large Hx4Mesh: the halving and
// doubling's second pattern reaches its busiest link after two of its six stretches).
// TestWindowsCut: every bound asked about no larger than the round routed in full, the whole
// first period's equal to it on GPT-3's rings of the large fabrics, and the same round routed in
// full after a cut loads as the copies do.

// winEntry is a loaded link of the first period on its τ-cycle: its position, its rank among the
// first period's loaded links (in the order they were first loaded), its load, and pre: where
// the flows after the last whole period are the first stretches moved by τ^K (tailAsPrefix),
// those stretches' sum on it (0: none), which the link K positions on receives after the copies.
type winEntry struct {
	pos, rank int32
	v, pre    float64
}

// winPick is a cycle's busiest window: its load and when the copies would first load its
// link (copy k, the first period's rank).
type winPick struct {
	v       float64
	k, rank int32
}

// before reports whether a is loaded first.
func (a winPick) before(b winPick) bool { return a.k < b.k || (a.k == b.k && a.rank < b.rank) }

// windowAt is the load of the link at position y of a τ-cycle of n links, the first period's
// loads at the entries e (sorted by position, distinct, in [0, n), not empty), k ≤ n copies, and
// when the copies first load it (copy k, the first period's rank); false: none loads it.
func windowAt(e []winEntry, n, k, y int32) (winPick, bool) {
	// The entries in the window ending at y, in increasing distance d = y − p (mod n): from the
	// last position at or before y, backwards around the cycle.
	s := len(e)
	j := s - 1
	if lo := 0; s > 8 { // the last position at or before y, by bisection
		for lo < j {
			if mid := (lo + j + 1) / 2; e[mid].pos <= y {
				lo = mid
			} else {
				j = mid - 1
			}
		}
	}
	for j > 0 && e[j].pos > y {
		j--
	}
	if e[j].pos > y { // none at or before y: the last one, around the cycle
		j = s - 1
	}
	return windowFrom(e, n, k, y, j)
}

// windowFrom is windowAt(e, n, k, y) where e[j] is the last entry at or before y (around the
// cycle).
func windowFrom(e []winEntry, n, k, y int32, j int) (winPick, bool) {
	s := len(e)
	var p winPick
	for c := 0; c < s; c++ {
		d := y - e[j].pos // y − p mod n, both in [0, n): no division
		if d < 0 {
			d += n
		}
		if d >= k {
			// The flows after the last whole period, read from the first stretches (k < n):
			// added after every copy, and loading the link first where no copy does.
			if d == k && e[j].pre > 0 {
				if c == 0 {
					p.k, p.rank = d, e[j].rank
				}
				p.v += e[j].pre
			}
			break
		}
		if c == 0 {
			p.k, p.rank = d, e[j].rank
		}
		p.v += e[j].v
		if j--; j < 0 {
			j = s - 1
		}
	}
	return p, p.v > 0
}

// cycleMost is what no window of cycle ci holds more of where its entries do not lie within
// K + 1 positions (N ≤ 64): the sum over its entries of max(load, pre) less the least of those,
// and the positions they occupy, a bit each.
func (r *router) cycleMost(ci int32) (float64, uint64) {
	w := &r.win
	most, least, mask := 0.0, math.Inf(1), uint64(0)
	for i := w.cycles[ci].head; i >= 0; i = w.next[i] {
		x := &w.ents[i]
		m := max(x.v, x.pre)
		most += m
		least = min(least, m)
		mask |= 1 << uint32(x.pos)
	}
	return most - least, mask
}

// cycleApart is the busiest window's load of cycle ci, where no two of its entries lie less
// than K positions apart (N ≤ 64, mask its positions, a bit each; false where some do), equal
// bit for bit to windowMax's: a window holds the load of each entry less than K back, one at
// most (two such would lie less than K apart), and the pre of the entry exactly K back, if
// any; both only where that entry lies exactly K before the one at the window's end (the
// other at distance 0: the two lie at least K apart), summed as windowFrom sums them (0 + load
// + pre). Every load and pre is some window's (the window ending at its entry, K positions on),
// alone or with a term more, all positive: the busiest holds the largest load or pre, or an
// entry's load and the pre of the entry K before it (TestWindowsApart against windowMax on
// small cycles).
func (r *router) cycleApart(ci int32, mask uint64) (float64, bool) {
	w := &r.win
	if w.k >= w.n || !w.apart(mask) { // (K = N: no window holds a pre)
		return 0, false
	}
	most := 0.0
	head := w.cycles[ci].head
	for i := head; i >= 0; i = w.next[i] {
		x := &w.ents[i]
		most = max(most, x.v, x.pre)
		if y := (x.pos + w.k) % w.n; x.pre > 0 && mask>>uint32(y)&1 != 0 {
			for j := head; j >= 0; j = w.next[j] {
				if e := &w.ents[j]; e.pos == y {
					most = max(most, e.v+x.pre)
				}
			}
		}
	}
	return most, true
}

// apart reports whether no two positions with a bit in mask (a cycle's entries, N ≤ 64) lie
// less than K positions apart (cyclically): rotated to start at one of them, bits 1 … K − 1
// are clear.
func (w *periodWindows) apart(mask uint64) bool {
	n, k := uint(w.n), uint(w.k)
	if k >= n {
		return bits.OnesCount64(mask) <= 1
	}
	full, near := uint64(1)<<n-1, uint64(1)<<k-2 // bits 1 … K − 1 (none where K = 1)
	for m := mask; m != 0; m &= m - 1 {
		j := uint(bits.TrailingZeros64(m))
		if rot := (mask>>j | mask<<(n-j)) & full; rot&near != 0 {
			return false
		}
	}
	return true
}

// within reports whether the positions with a bit in mask (a cycle's entries, N ≤ 64) lie
// within K + 1 consecutive positions of the cycle (cyclically): rotated to start at one of them,
// every bit is below bit K + 1.
func (w *periodWindows) within(mask uint64) bool {
	n, k := uint(w.n), uint(w.k)
	if k+1 >= n {
		return true
	}
	full := uint64(1)<<n - 1 // n ≤ 64: 1<<64 is 0 in Go, and 0 − 1 is every bit
	for m := mask; m != 0; m &= m - 1 {
		j := uint(bits.TrailingZeros64(m))
		if rot := (mask>>j | mask<<(n-j)) & full; rot < 1<<(k+1) {
			return true
		}
	}
	return false
}

// windowMax is the busiest link of one τ-cycle of n links, the first period's loads at the
// entries e (sorted by position, distinct, in [0, n)), k ≤ n copies: the largest window sum, of
// equal ones the first loaded; false when e is empty.
func windowMax(e []winEntry, n, k int32) (winPick, bool) {
	var best winPick
	found := false
	s := len(e)
	for u, x := range e {
		// The window ending at an entry: that entry is the last at or before it.
		if p, ok := windowFrom(e, n, k, x.pos, u); ok && (!found || p.v > best.v || (p.v == best.v && p.before(best))) {
			best, found = p, true
		}
		// Where a pre enters (k positions on), the window holds other terms than the one
		// before's: a window that may be the busiest too (k < n there). The last entry at or
		// before it: the last of those after x within k.
		if x.pre > 0 {
			y := x.pos + k
			if y >= n {
				y -= n
			}
			j := u
			for c := 1; c < s; c++ {
				next := j + 1
				if next == s {
					next = 0
				}
				d := e[next].pos - x.pos
				if d < 0 {
					d += n
				}
				if d > k {
					break
				}
				j = next
			}
			if p, ok := windowFrom(e, n, k, y, j); ok && (!found || p.v > best.v || (p.v == best.v && p.before(best))) {
				best, found = p, true
			}
		}
	}
	return best, found
}

// periodWindows is a periodic round read by windows: τ moves factor f; its cycles have n links;
// k copies.
type periodWindows struct {
	on         bool
	f          int
	n, k       int32
	digit      []winDigit // per digit along f: its cycle's first link's and its position
	cycles     []winCycle
	ents, sort []winEntry // the entries in rank order; a cycle's sorted (cycleEntries)
	next       []int32    // per entry: the next of its cycle in rank order (−1: none)
	at         []int32    // per entry: its cycle's table entry, read before the cycles are made (takeWindows)
	slot       []int32    // per link number (Symmetry.linkIx): the cycle it is the first link of, where bases says so (slotOf)
	bases      []int32    // per cycle: its first link's number
	cut        bool       // the round was cut short (r.cut): finish reads cutLoad
	cutLoad    Load
	lb         float64 // the busiest per byte of the first period's partial sums so far (cutEarly)
}

// winDigit is what a link's digit x along τ's factor says of its cycle: the first link's number
// is the link's plus shift (the digit brought down to x mod g), and the link is at pos.
type winDigit struct{ shift, pos int32 }

// winCycle is a τ-cycle holding loads of the first period: its first link's number
// (Symmetry.linkIx), that link, and its entries (a chain from head to tail, in rank order).
type winCycle struct {
	base, n, head, tail, link int32
	total                     float64 // its entries' loads summed: no window of the cycle holds more
	perByte                   float64 // total over the first link's rate
}

// windowsFor prepares a periodic round of k copies moved by τ to be read by windows (true; its
// first period's loads are then taken off the links by takeWindows); false: τ moves several
// factors, or k exceeds its cycles.
func (r *router) windowsFor(tau *[maxFactors]uint16, k int) bool {
	sym, w := r.g.sym, &r.win
	f := sym.oneFactor(tau)
	if f < 0 {
		return false
	}
	if n := sym.fm[f] / gcd32(int32(tau[f]), sym.fm[f]); int32(k) > n {
		return false
	}
	var n int32
	w.digit, n = sym.cycleDigits(w.digit[:0], f, int32(tau[f]))
	w.on, w.f, w.n, w.k, w.lb = true, f, n, int32(k), 0
	return true
}

// oneFactor is the factor that the element with digits tau moves (−1: none, or several).
func (s *Symmetry) oneFactor(tau *[maxFactors]uint16) int {
	f := -1
	for i := 0; i < s.nf; i++ {
		if tau[i] != 0 {
			if f >= 0 {
				return -1
			}
			f = i
		}
	}
	return f
}

// cycleDigits appends to dst what each digit x along factor f says of the cycles of the move by
// t along f (cycles of n = m/g links, g = gcd(t, m)), and returns n: x = c + a·t (mod m) with
// c = x mod g, the cycle's first link has digit c (its number is the link's plus shift) and the
// link is at position a = ((x − c)/g)·inv (mod n), inv the inverse of t/g mod n.
func (s *Symmetry) cycleDigits(dst []winDigit, f int, t int32) ([]winDigit, int32) {
	m := s.fm[f]
	g := gcd32(t, m)
	n := m / g
	inv := int32(0)
	for a := int32(1); a < n; a++ {
		if a*(t/g)%n == 1 {
			inv = a
			break
		}
	}
	for x := int32(0); x < m; x++ {
		c := x % g
		dst = append(dst, winDigit{shift: (c - x) * s.fs[f], pos: int32(int64((x-c)/g) * int64(inv) % int64(n))})
	}
	return dst, n
}

func gcd32(a, b int32) int32 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// takeWindows moves the first period's loads (routeRuns' sums) into their τ-cycles'
// entries, ranked in the order unstash would put them on the links, and sums each cycle's.
// A cycle's entries are chained in rank order and sorted by position only where they are read
// (cycleEntries): finishWindows passes over most cycles on their totals alone.
//
// In two passes: the first reads each link's cycle, position, load and table entry, with no
// branch on what it reads, so the reads of many links (scattered over the graph's tables)
// overlap; the second chains the entries into their cycles from what the first read (a table
// entry read stale there, where this pass made the cycle, is read again: slotOf).
func (r *router) takeWindows() {
	w := &r.win
	r.cycleSlots()
	idx, v, used := r.sums()
	pre := r.pre
	n := len(idx)
	ents, next, at := slices.Grow(w.ents[:0], n)[:n], slices.Grow(w.next[:0], n)[:n], slices.Grow(w.at[:0], n)[:n]
	cut, lb, top := r.cut != nil, 0.0, int32(-1)
	for i, l := range idx {
		base, pos := r.cycleOf(l)
		ents[i] = winEntry{pos: pos, rank: int32(i), v: v[l]}
		at[i], next[i] = w.slot[base], base
		if cut {
			if pb := v[l] / r.g.rate[l]; pb > lb {
				lb, top = pb, l
			}
		}
		v[l], used[l] = 0, false
	}
	r.dropSums()
	if cut && top >= 0 {
		// Cut short: copy 0 puts the first period's load on each of its links, and every other
		// term a link receives is positive, so no link of the round carries less (a float sum of
		// positive terms is no less than any of them).
		ld := r.headLoad()
		ld.PerByte, ld.Class = lb, r.g.links[top].Class
		if r.cut.cuts(ld) {
			w.cut, w.cutLoad = true, ld
			w.ents, w.next, w.at = ents[:0], next[:0], at[:0]
			r.pre = r.pre[:0]
			return
		}
	}
	for i, x := range pre[:min(len(pre), n)] {
		ents[i].pre = x
	}
	cycles, bases := w.cycles[:0], w.bases[:0]
	for i := range ents {
		base, ci := next[i], at[i]
		if ci < 0 || ci >= int32(len(bases)) || bases[ci] != base {
			ci, bases = claim(w.slot, bases, base)
		}
		if ci == int32(len(cycles)) {
			// Appended empty and set in place: a literal is built on the stack and copied in 16
			// bytes at a time, whose loads wait on the literal's narrower stores (a fifth of this
			// loop on the large Hx4Mesh's rounds).
			cycles = append(cycles, winCycle{})
			cycles[ci].base, cycles[ci].head = base, int32(i)
		} else {
			next[cycles[ci].tail] = int32(i)
		}
		next[i] = -1
		c := &cycles[ci]
		c.tail = int32(i)
		c.n++
		c.total += ents[i].v + ents[i].pre // in rank order: a bound on the windows, read with a margin
	}
	sym, rate := r.g.sym, r.g.rate
	for i := range cycles {
		c := &cycles[i]
		c.link = sym.linkAt[c.base]
		c.perByte = c.total / rate[c.link]
	}
	w.cycles, w.ents, w.next, w.at, w.bases = cycles, ents, next, at, bases
	r.pre = r.pre[:0]
}

// cutEarly cuts a round read by windows short while routePlan routes its first period (Cut
// short), after a stretch: a link's sum so far (its stashed stretches' plus the stretch on the
// links, acc + load, as stash adds them) is a prefix of its first-period load L_P(l)'s positive
// terms, so no more than L_P(l) (nor than the round's load there); and the flows routed so far
// are some of the round's, so their latency no more than its. Where the busiest such sum per
// byte (kept from stretch to stretch: the links a stretch loads, w.lb) rises and the round's
// Load with it already prices the candidate above best's cheapest, the round stops there: the
// sums are cleared, and takeWindows is not called (true). Sums added to the stash directly (an
// image's, copiesAlong's) are not read here: a bound no higher than it could be.
func (r *router) cutEarly() bool {
	w := &r.win
	lb, top := w.lb, int32(-1)
	acc := r.acc[:min(len(r.acc), len(r.load))]
	for _, l := range r.usedIdx {
		v := r.load[l]
		if int(l) < len(acc) {
			v = acc[l] + v
		}
		if pb := v / r.g.rate[l]; pb > lb {
			lb, top = pb, l
		}
	}
	if top < 0 {
		return false
	}
	w.lb = lb
	ld := r.headLoad()
	ld.PerByte, ld.Class = lb, r.g.links[top].Class
	if !r.cut.cuts(ld) {
		return false
	}
	for _, l := range r.usedIdx {
		r.load[l], r.used[l] = 0, false
	}
	for _, l := range r.accIdx {
		r.acc[l], r.accUsed[l] = 0, false
	}
	r.usedIdx, r.accIdx, r.kept, r.pre = r.usedIdx[:0], r.accIdx[:0], r.kept[:0], r.pre[:0]
	w.cut, w.cutLoad = true, ld
	return true
}

// cycleEntries is cycle ci's entries sorted by position (in the windows' scratch, valid until
// the next call): gathered from their chain and sorted by insertion, s entries in no more steps
// than the s² windowMax reads of them.
func (r *router) cycleEntries(ci int32) []winEntry {
	w := &r.win
	e := w.sort[:0]
	for i := w.cycles[ci].head; i >= 0; i = w.next[i] {
		x := w.ents[i]
		b := len(e)
		e = append(e, x)
		for ; b > 0 && e[b-1].pos > x.pos; b-- { // positions are distinct on a cycle
			e[b] = e[b-1]
		}
		e[b] = x
	}
	w.sort = e
	return e
}

// cycleSlots is the windows' table from link numbers to cycles, allocated on first use: an
// entry names a cycle of the list its user keeps (the windows' cycles, copiesAlong's) only
// where that cycle's first link is the number's (slotOf), so an entry is never cleared: a stale
// one names a cycle past the list's end or one of another first link (the first links in a
// list are distinct), and the table is shared without passing over it (TestCycleSlots).
func (r *router) cycleSlots() []int32 {
	w := &r.win
	if len(w.slot) < len(r.g.sym.linkAt) {
		w.slot = make([]int32, len(r.g.sym.linkAt))
	}
	return w.slot
}

// slotOf is the cycle of first link b in the list whose cycles' first links are bases, read
// from the table slot (cycleSlots): −1 where the entry is stale.
func slotOf(slot, bases []int32, b int32) int32 {
	if x := slot[b]; x >= 0 && x < int32(len(bases)) && bases[x] == b {
		return x
	}
	return -1
}

// claim is slotOf(slot, bases, b), where none appending b to bases and naming it in slot.
func claim(slot, bases []int32, b int32) (int32, []int32) {
	if x := slotOf(slot, bases, b); x >= 0 {
		return x, bases
	}
	x := int32(len(bases))
	slot[b] = x
	return x, append(bases, b)
}

// cycleAt is the windows' cycle whose first link's number is base (−1: none).
func (w *periodWindows) cycleAt(base int32) int32 {
	return slotOf(w.slot, w.bases, base)
}

// cycleOf is link l's τ-cycle (its first link's number: l's digit along f brought below g) and
// its position on it.
func (r *router) cycleOf(l int32) (base, pos int32) {
	sym := r.g.sym
	d := r.win.digit[sym.linkDig[l][r.win.f]]
	return sym.linkIx[l] + d.shift, d.pos
}

// windowOf is the copies' load of link l (windowAt; false: none loads it).
func (r *router) windowOf(l int32) (winPick, bool) {
	w := &r.win
	base, pos := r.cycleOf(l)
	ci := w.cycleAt(base)
	if ci < 0 {
		return winPick{}, false
	}
	return windowAt(r.cycleEntries(ci), w.n, w.k, pos)
}

// finishWindows is finish's busiest link of a round read by windows (out: the NIC's share
// already in), and clears the loads: the busiest window of each cycle, and the links the flows
// after the last whole period load (their windows and shares already summed on them). A window
// whose link those flows also load holds less than the link, which is read with them.
func (r *router) finishWindows(out Load) Load {
	w := &r.win
	if w.cut { // (Cut short) the NIC's share in, where more
		if w.cutLoad.PerByte > out.PerByte {
			out.PerByte, out.Class = w.cutLoad.PerByte, w.cutLoad.Class
		}
		w.cut = false
		clear(w.cycles)
		return r.windowsDone(out)
	}
	hi, class := out.PerByte, uint16(0)
	var top winPick
	won := false
	pick := func(p winPick, l int32) {
		if pb := p.v / r.g.rate[l]; pb > hi || (won && pb == hi && p.before(top)) {
			hi, top, won, class = pb, p, true, r.g.links[l].Class
		}
	}
	// The cycle of the most load per rate first; then a cycle whose total cannot reach the
	// busiest window found is passed over (a window sums some of the total's positive terms:
	// no more than the total, up to rounding far below 1e-9).
	most, mostPB := -1, 0.0
	for i := range w.cycles {
		if pb := w.cycles[i].perByte; pb > mostPB {
			most, mostPB = i, pb
		}
	}
	for n := range w.cycles {
		i := n
		switch {
		case n == 0 && most >= 0:
			i = most
		case n == most:
			i = 0
		}
		c := &w.cycles[i]
		if c.perByte*(1+1e-9) < hi {
			continue
		}
		// A cycle whose entries no window holds all of: no window holds more than their sum less
		// the least (of max(load, pre) each).
		if w.n <= 64 {
			most, mask := r.cycleMost(int32(i))
			if most/r.g.rate[c.link]*(1+1e-9) < hi && !w.within(mask) {
				continue
			}
			// Entries K or more apart: the busiest window's load read exactly (cycleApart), passed
			// over where short of the busiest found, or equal to it where no window of the cycle
			// is loaded before it: of a window's (k, rank), k ≥ 0 and, where k = 0, the rank is
			// an entry's, no less than the head's (the least: ranks follow the entries' order).
			if most, ok := r.cycleApart(int32(i), mask); ok {
				if pb := most / r.g.rate[c.link]; pb < hi || (pb == hi && (!won || (top.k == 0 && c.head > top.rank))) {
					continue
				}
			}
		}
		if p, ok := windowMax(r.cycleEntries(int32(i)), w.n, w.k); ok {
			pick(p, c.link)
		}
	}
	// The links the flows after the last whole period load: C + R, where that may be the busiest
	// (C no more than its cycle's total).
	for i, x := range r.rem {
		base, pos := r.cycleOf(x.l)
		p, ok := winPick{}, false
		if ci := w.cycleAt(base); ci >= 0 {
			c := &w.cycles[ci]
			if (c.total+x.v)/r.g.rate[x.l]*(1+1e-9) < hi {
				continue
			}
			p, ok = windowAt(r.cycleEntries(ci), w.n, w.k, pos)
		}
		if !ok { // loaded first after every copy, in the order of the remainder
			p.k, p.rank = w.k, int32(i)
		}
		p.v += x.v
		pick(p, x.l)
	}
	clear(w.cycles)
	if won {
		out.PerByte, out.Class = hi, class
	}
	return r.windowsDone(out)
}

// windowsDone empties the windows (their cycles already cleared) and ends the round.
func (r *router) windowsDone(out Load) Load {
	w := &r.win
	r.rem = r.rem[:0]
	w.cycles, w.sort, w.ents, w.next, w.at, w.bases = w.cycles[:0], w.sort[:0], w.ents[:0], w.next[:0], w.at[:0], w.bases[:0]
	w.on = false
	r.maxLat, r.flows = 0, false
	return out
}

// WithoutWindows is g with windows off (periodic rounds add their copies link by link): the
// reference windows are tested against.
func WithoutWindows(g *Graph) *Graph { return switchedOff(g, func(h *Graph) { h.unwindowed = true }) }
