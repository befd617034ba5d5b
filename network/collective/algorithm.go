package collective

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Algorithm is a collective algorithm: a registered value that networks offer. It says which ops
// it implements and emits traffic:
//
//   - Flowing (every generic algorithm): rounds of member-to-member flows, for every concurrent
//     group. A routed fabric routes them (network/fabric); a level network maps each round onto
//     the level it spans (OnLevels), the exact fast path where levels capture all sharing.
//   - Leveled: a step schedule a network builds itself on its levels (RAMP-x).
//
// Both end in Price, the one cost function.
type Algorithm interface {
	// Name is the registry key (what --strategy takes).
	Name() string
	// Summary is one line for help and `ddlest nets`.
	Summary() string
	// Implements reports whether the algorithm has a schedule for op.
	Implements(op network.Op) bool
}

// Flowing algorithms emit rounds of flows over a group's members into out (whose Rounds the
// caller has emptied; it is reused scratch). An algorithm that cannot run on this group returns a
// *Declined error saying why.
type Flowing interface {
	Algorithm
	Rounds(op network.Op, s units.Bytes, g Members, out *Flows) error
}

// Bounder is implemented by flow algorithms whose rounds depend on a routed link (a pipeline's
// chunk count, sized on the link Members.Link returns), so that their rounds cannot be priced on
// bounds of the links: a lower bound on the price of op over g's members when each round of
// pattern pt has at least link(pt)'s latency and at most its bandwidth (false: none). A fabric's
// best-of loop skips an algorithm whose bound exceeds a price already found (ChooseBounded).
type Bounder interface {
	Bound(op network.Op, s units.Bytes, g Members, link func(Pattern) Link) (units.Seconds, bool)
}

// Outliner is implemented by flow algorithms that can say what their rounds are before building
// the successor tables their patterns name (the rings' Hamiltonian cycles over every member), so
// that a fabric's best-of loop bounds them, and skips them, without building the tables.
// Outline emits into out the rounds Rounds would emit over g's members (the same name, bytes,
// repeats, variation, fan-in, reductions and set-up) with every Pattern left empty (N = 0), and
// returns w: in every round, each part Rounds would emit is a permutation of the members without
// fixed points (Part.Permutes) and the parts' weights (Part.W), added in part order, sum to w.
// False (and no error): no outline; run Rounds (the tables are built already, so Rounds costs no
// more, and its patterns name rounds a fabric may have routed). An error is the one Rounds would
// return.
type Outliner interface {
	Outline(op network.Op, s units.Bytes, g Members, out *Flows) (w float64, ok bool, err error)
}

// Flows is a flow algorithm's output: the name to report and the rounds.
type Flows struct {
	Algorithm string
	Rounds    []Round
}

// add appends a round.
func (f *Flows) add(r Round) { f.Rounds = append(f.Rounds, r) }

// Declined says why an algorithm cannot run a collective on a group (a rings schedule needs a
// grid that has two edge-disjoint Hamiltonian cycles, pairwise exchange refuses p² flows, …).
// "best" skips declined algorithms; asking for one by name is a usage error carrying the reason.
type Declined struct{ Reason string }

func (d *Declined) Error() string { return d.Reason }

// Decline returns a *Declined error.
func Decline(format string, a ...any) error { return &Declined{Reason: fmt.Sprintf(format, a...)} }

// Best is the strategy name that picks the cheapest offered algorithm per collective.
const Best = "best"

// Choice is a network's strategy: one algorithm name (or Best) for every op, optionally another
// per op, written "ring", "best" or "all-reduce=rings,all-to-all=linear[,best]" (the bare name
// is the default for the ops not named).
type Choice struct {
	Default string
	ByOp    [network.NumOps]string
}

// For is the name chosen for op.
func (c Choice) For(op network.Op) string {
	if n := c.ByOp[op]; n != "" {
		return n
	}
	if c.Default == "" {
		return Best
	}
	return c.Default
}

// ParseFor reads a strategy among algs (ParseChoice); the default strategy, best, costs nothing
// (networks parse their strategy every time a job is placed on them).
func ParseFor(s string, algs []Algorithm) (Choice, error) {
	if s == Best {
		return Choice{Default: Best}, nil
	}
	return ParseChoice(s, Names(algs))
}

// Routable is what a network runs on its levels and, flow by flow, on its routed graph (a
// superset: the algorithms whose traffic shares links levels do not see).
type Routable struct{ Levels, Graph []Algorithm }

// List is the algorithms offered, routed or on levels.
func (o Routable) List(routed bool) []Algorithm {
	if routed {
		return o.Graph
	}
	return o.Levels
}

// Parse reads a strategy (ParseFor); one that only the graph runs asks for routed=true.
func (o Routable) Parse(s string, routed bool) (Choice, error) {
	c, err := ParseFor(s, o.List(routed))
	if err != nil && !routed {
		if _, e := ParseFor(s, o.Graph); e == nil {
			return c, errs.Usage("strategy %q runs on the routed graph only: add routed=true (on levels: %s, %s)", s, Best, strings.Join(Names(o.Levels), ", "))
		}
	}
	return c, err
}

// ParseChoice reads a strategy. valid lists the algorithm names allowed (the network's offer, or
// every registered algorithm); the error names the bad value and the valid ones.
func ParseChoice(s string, valid []string) (Choice, error) {
	var c Choice
	ok := func(name string) error {
		if name == Best {
			return nil
		}
		for _, v := range valid {
			if v == name {
				return nil
			}
		}
		return errs.Usage("strategy %q is not valid; valid: %s, %s", name, Best, strings.Join(valid, ", "))
	}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		opName, name, perOp := strings.Cut(part, "=")
		if !perOp {
			if c.Default != "" {
				return c, errs.Usage("strategy %q names two defaults (%s, %s); give one name, or op=name pairs", s, c.Default, part)
			}
			if err := ok(part); err != nil {
				return c, err
			}
			c.Default = part
			continue
		}
		op, err := network.ParseOp(strings.TrimSpace(opName))
		if err != nil {
			return c, errs.Usage("strategy %q: %v", s, err)
		}
		name = strings.TrimSpace(name)
		if err := ok(name); err != nil {
			return c, err
		}
		c.ByOp[op] = name
	}
	return c, nil
}

// Names lists the algorithms' names.
func Names(algs []Algorithm) []string {
	out := make([]string, len(algs))
	for i, a := range algs {
		out[i] = a.Name()
	}
	return out
}

// Choose is the one best-of loop of every network. want is the algorithm asked for (Best for the
// cheapest); offered are the algorithms the network runs for this op; price prices one of them
// (a *Declined error: it cannot run this group; an infeasible one, errs.Infeasible: this
// configuration forbids it). Best skips both; asked by name, an infeasible algorithm is the
// error. netName names the network in errors.
func Choose(netName, want string, offered []Algorithm, op network.Op, price func(Algorithm) (network.Cost, error)) (network.Cost, error) {
	if want != Best && want != "" {
		for _, a := range offered {
			if a.Name() != want {
				continue
			}
			if !a.Implements(op) {
				break
			}
			c, err := price(a)
			var d *Declined
			if errors.As(err, &d) {
				return c, errs.Usage("strategy %s cannot run %s on network %s: %s", want, op, netName, d.Reason)
			}
			return c, err
		}
		var can []string
		for _, a := range offered {
			if a.Implements(op) {
				can = append(can, a.Name())
			}
		}
		return network.Cost{}, errs.Usage("strategy %s cannot run %s on network %s; valid: %s, %s", want, op, netName, Best, strings.Join(can, ", "))
	}
	best, _, err := chooseBest(netName, offered, op, nil, func(a Algorithm, _ units.Seconds) (network.Cost, error) { return price(a) })
	return best, err
}

// next is the candidate to price next: the first unsettled one without a bound, else the first
// of least bound (in the loop's order); −1: none.
func next(cands []candidate) int {
	j := -1
	for k := range cands {
		c := &cands[k]
		if c.done {
			continue
		}
		if !c.has {
			return k
		}
		if j < 0 || c.bound < cands[j].bound {
			j = k
		}
	}
	return j
}

// ChooseBounded is Choose with a lower bound on each candidate's price (bound: false where it
// has none) and the algorithm chosen. Best prices the candidates in increasing order of their
// bounds (those without one first, in offered order) and skips a candidate whose bound exceeds
// the cheapest price found so far by more than boundSlack: its price is at least its bound, so
// it cannot be the cheapest, and the pick (the first cheapest in offered order) and its cost are
// those of Choose. Declines and infeasible candidates are reported in offered order as Choose
// does. What the skipped candidates are spared is their pricing (on a routed fabric, their
// rounds' routing); a skipped candidate whose pricing would have failed otherwise than by a
// decline (a fabric whose members cannot reach each other, which fails every candidate alike)
// is not seen.
//
// Price is given a limit: the cheapest price found (times 1 + boundSlack; +Inf before any), or
// the next candidate's bound where that is less. A price is a sum of per-round terms, so part
// way through a candidate (some rounds routed, the others on their bounds) its bound may rise;
// where it passes the limit, price may stop and return an *Above with the bound. The candidate
// is then priced again when its bound is the least left (its routed rounds kept by the caller),
// or skipped once it exceeds the cheapest price: the loop always goes on with the candidate of
// least bound, so the same pick at the same cost with less routed.
func ChooseBounded(netName, want string, offered []Algorithm, op network.Op, bound func(Algorithm) (units.Seconds, bool),
	price func(a Algorithm, limit units.Seconds) (network.Cost, error)) (network.Cost, Algorithm, error) {
	if want != Best && want != "" {
		var won Algorithm
		c, err := Choose(netName, want, offered, op, func(a Algorithm) (network.Cost, error) {
			won = a
			return price(a, units.Seconds(math.Inf(1)))
		})
		return c, won, err
	}
	return chooseBest(netName, offered, op, bound, price)
}

// Above is what a price given a limit returns when, part way, a lower bound on the candidate's
// price exceeds the limit (ChooseBounded): the bound.
type Above struct{ Bound units.Seconds }

func (a *Above) Error() string { return fmt.Sprintf("price above %g s", float64(a.Bound)) }

// boundSlack is the relative margin by which a bound must exceed the best price to skip a
// candidate: a bound is computed in another order than the price (a sum of other floats), so
// rounding may put an exact bound a few ulps above a price it equals; 1e-9 is far above any
// such rounding and far below any difference a pick depends on.
const boundSlack = 1e-9

// AboveBest reports whether a candidate's bound exceeds the cheapest price found by more than
// boundSlack: the best-of loop never prices such a candidate again (the cheapest price only
// falls), so a price that finds its bound above the best may stop there.
func AboveBest(bound, best units.Seconds) bool {
	return float64(bound) > float64(best)*(1+boundSlack)
}

// candidate is one offered algorithm in the best-of loop: its offered position and bound, and
// whether it is settled (priced, declined or failed).
type candidate struct {
	i     int
	bound units.Seconds
	has   bool
	done  bool
}

// chooseBest is the best-of loop (Choose, ChooseBounded; bound nil: none, every candidate
// priced in offered order).
func chooseBest(netName string, offered []Algorithm, op network.Op, bound func(Algorithm) (units.Seconds, bool),
	price func(Algorithm, units.Seconds) (network.Cost, error)) (network.Cost, Algorithm, error) {
	var candBuf [16]candidate
	cands := candBuf[:0]
	for i, a := range offered {
		if !a.Implements(op) {
			continue
		}
		c := candidate{i: i}
		if bound != nil {
			c.bound, c.has = bound(a)
		}
		cands = append(cands, c)
	}
	if bound != nil {
		// Unbounded first, then by bound; ties in offered order.
		slices.SortStableFunc(cands, func(x, y candidate) int {
			if x.has != y.has {
				if !x.has {
					return -1
				}
				return 1
			}
			return cmp.Compare(x.bound, y.bound)
		})
	}
	var best network.Cost
	won, at := Algorithm(nil), -1
	var reasonBuf [16]string
	reasons := reasonBuf[:0]
	if len(offered) > len(reasonBuf) {
		reasons = make([]string, 0, len(offered))
	}
	reasons = reasons[:len(offered)]
	infeasible, infAt := error(nil), -1
	for {
		j := next(cands)
		if j < 0 {
			break
		}
		c := &cands[j]
		a := offered[c.i]
		if c.has && at >= 0 && AboveBest(c.bound, best.Total) {
			break // the least bound left: every candidate left is dearer than best
		}
		limit := math.Inf(1)
		if at >= 0 {
			limit = float64(best.Total) * (1 + boundSlack)
		}
		for k := range cands {
			if k != j && !cands[k].done && cands[k].has {
				limit = min(limit, float64(cands[k].bound))
			}
		}
		cost, err := price(a, units.Seconds(limit))
		var above *Above
		if errors.As(err, &above) {
			c.bound, c.has = max(c.bound, above.Bound), true
			continue
		}
		c.done = true
		var d *Declined
		if errors.As(err, &d) {
			reasons[c.i] = a.Name() + ": " + d.Reason
			continue
		}
		if errs.ExitCode(err) == errs.ExitInfeasible {
			if infAt < 0 || c.i < infAt {
				infeasible, infAt = err, c.i
			}
			reasons[c.i] = a.Name() + ": " + err.Error()
			continue
		}
		if err != nil {
			return network.Cost{}, nil, err
		}
		if at < 0 || cost.Total < best.Total || (cost.Total == best.Total && c.i < at) {
			best, won, at = cost, a, c.i
		}
	}
	if at < 0 {
		if infeasible != nil {
			return network.Cost{}, nil, infeasible
		}
		var said []string
		for _, r := range reasons {
			if r != "" {
				said = append(said, r)
			}
		}
		if len(said) > 0 {
			return network.Cost{}, nil, errs.Usage("no algorithm of network %s runs %s here (%s)", netName, op, strings.Join(said, "; "))
		}
		return network.Cost{}, nil, errs.Usage("no algorithm of network %s runs %s", netName, op)
	}
	return best, won, nil
}
