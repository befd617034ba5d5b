package repro

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
)

// Bound is how a row's value is held against the paper's.
type Bound int

const (
	// Within: |ddlest − paper| ≤ Tol × |paper|.
	Within Bound = iota
	// AtMost: ddlest ≤ paper × (1 + Tol) (the paper gives an upper bound: "sub 1%").
	AtMost
	// AtLeast: ddlest ≥ paper × (1 − Tol) (the paper gives a lower bound: "above 16%").
	AtLeast
)

// Row is one published number ddlest reproduces: where the paper gives it, what it is, the
// paper's value in its own unit, how close ddlest must come — or, for a number that cannot be
// met, the documented reason and the range ddlest's value is documented to lie in (a change
// that moves it out fails, as one that brings it within Tol asks for the deviation to go).
type Row struct {
	ID    string // unique, "seed/what"
	Seed  string // ramp, hammingmesh, sipac, wrht, oddl
	Cite  string // table, figure or section
	What  string
	Paper float64
	Unit  string // the paper's: "×", "%", "ms", "MW", …
	Bound Bound
	Tol   float64 // relative (0 with Deviation)
	// Deviation, when set, is why the paper's number is not met; Known is ddlest's documented
	// range for it.
	Deviation string
	Known     [2]float64
	// Value computes ddlest's number, in Unit.
	Value func() (float64, error)
}

// Status is a checked row's outcome.
type Status int

const (
	Pass Status = iota
	Deviation
	Fail
)

func (s Status) String() string { return [...]string{"pass", "deviation", "fail"}[s] }

// MarshalText renders the status in JSON.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Result is a row with ddlest's value and the verdict.
type Result struct {
	Row
	Got    float64
	Error  float64 // (ddlest − paper) / paper
	Status Status
	Why    string // for a failure: what is wrong
	Err    error
}

// Seeds are the five papers, in the order of seeds/INDEX.md.
var Seeds = []string{"ramp", "hammingmesh", "wrht", "oddl", "sipac"}

// registry holds every seed's rows, in registration order.
var registry []func() []Row

// register adds a seed's rows (each seed's file calls it once, from init).
func register(rows func() []Row) { registry = append(registry, rows) }

// Rows is every row of the seeds asked for (all when none is), in the seeds' order.
func Rows(seeds ...string) ([]Row, error) {
	for _, s := range seeds {
		if !slices.Contains(Seeds, s) {
			return nil, fmt.Errorf("seed %q is not known; valid: %v", s, Seeds)
		}
	}
	var all []Row
	for _, f := range registry {
		all = append(all, f()...)
	}
	var out []Row
	for _, s := range Seeds {
		if len(seeds) > 0 && !slices.Contains(seeds, s) {
			continue
		}
		for _, r := range all {
			if r.Seed == s {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// Check computes every row (rows sharing a computation share it) and judges it.
func Check(rows []Row) []Result {
	out := make([]Result, len(rows))
	var wg sync.WaitGroup
	for i := range rows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = Judge(rows[i])
		}()
	}
	wg.Wait()
	return out
}

// Judge computes one row and says whether it passes, is its documented deviation, or fails.
func Judge(r Row) Result {
	res := Result{Row: r}
	res.Got, res.Err = r.Value()
	if res.Err != nil || math.IsNaN(res.Got) || math.IsInf(res.Got, 0) {
		res.Status, res.Why = Fail, fmt.Sprintf("no value: %v", res.Err)
		return res
	}
	if r.Paper != 0 {
		res.Error = (res.Got - r.Paper) / r.Paper
	}
	met := false
	switch r.Bound {
	case Within:
		met = math.Abs(res.Got-r.Paper) <= r.Tol*math.Abs(r.Paper)
	case AtMost:
		met = res.Got <= r.Paper*(1+r.Tol)
	case AtLeast:
		met = res.Got >= r.Paper*(1-r.Tol)
	}
	switch {
	case r.Deviation == "" && met:
		res.Status = Pass
	case r.Deviation == "":
		res.Status, res.Why = Fail, "outside the tolerance"
	case met:
		res.Status, res.Why = Fail, "the documented deviation is now met: drop it"
	case res.Got < r.Known[0] || res.Got > r.Known[1]:
		res.Status, res.Why = Fail, fmt.Sprintf("outside the documented range %g–%g", r.Known[0], r.Known[1])
	default:
		res.Status = Deviation
	}
	return res
}

// memo runs f once and shares its result (rows that read one computation); Forget makes the
// next call run f again.
func memo[T any](f func() (T, error)) func() (T, error) {
	var cur atomic.Pointer[func() (T, error)]
	reset := func() { g := sync.OnceValues(f); cur.Store(&g) }
	reset()
	memos.Lock()
	memos.resets = append(memos.resets, reset)
	memos.Unlock()
	return func() (T, error) { return (*cur.Load())() }
}

// memos are the resets of every memoized computation.
var memos struct {
	sync.Mutex
	resets []func()
}

// Forget drops every memoized result (the shared computations and the §V-B runs), so that the
// next call computes it again: for benchmarks, which must time the computations rather than
// the memo. It must not run while a computation does; a user's process never calls it.
func Forget() {
	memos.Lock()
	defer memos.Unlock()
	for _, r := range memos.resets {
		r()
	}
	runtimes.Clear()
}
