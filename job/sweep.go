package job

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/partition/megatron"
)

// Axis is one swept key and its values, in order.
type Axis struct {
	Key    string
	Values []string
}

// Grid is the Cartesian product of its axes; the first axis varies slowest.
type Grid []Axis

// ParseAxis reads "key=v1,v2,…".
func ParseAxis(s string) (Axis, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" || strings.TrimSpace(v) == "" {
		return Axis{}, errs.Usage("--grid %q is not key=v1,v2,… (e.g. execution.tp=1,2,4,8)", s)
	}
	var vals []string
	for _, x := range strings.Split(v, ",") {
		vals = append(vals, strings.TrimSpace(x))
	}
	return Axis{Key: k, Values: vals}, nil
}

// Points is the number of points of the grid.
func (g Grid) Points() int {
	n := 1
	for _, a := range g {
		n *= len(a.Values)
	}
	return n
}

// digits writes the index of point i's value on every axis into d (row-major: the first axis
// varies slowest).
func (g Grid) digits(i int, d []int) {
	for k := len(g) - 1; k >= 0; k-- {
		n := len(g[k].Values)
		d[k] = i % n
		i /= n
	}
}

// compiledGrid holds each axis's leaf setter and parsed values, so that a point costs a copy of
// the job and one assignment per axis. A grid over a preset key (cluster, model, network) sets
// its points with Job.Set instead: a preset replaces many leaves.
type compiledGrid struct {
	setters []*params.Setter
	values  [][]reflect.Value
}

// Check reports what is wrong with the grid over base (a key swept twice, alternatives swept
// together, a value that does not parse) without running a point: a sweep checks its grid
// before it writes anything.
func (g Grid) Check(base *Job) error {
	_, err := g.compile(base)
	return err
}

func (g Grid) compile(base *Job) (*compiledGrid, error) {
	seen := map[string]bool{}
	viaSet := false
	for _, a := range g {
		if seen[a.Key] {
			return nil, errs.Usage("sweep: key %s is swept twice; give its values once (key=v1,v2,…)", a.Key)
		}
		seen[a.Key] = true
		if len(a.Values) == 0 {
			return nil, errs.Usage("sweep: key %s has no values", a.Key)
		}
		viaSet = viaSet || slices.Contains(presetKeys, a.Key)
	}
	b := base.Clone()
	if err := b.Cluster.Network.resolve(); err != nil {
		return nil, errs.Usage("sweep: %s=%s: %v", g[0].Key, g[0].Values[0], err) // as Set says it
	}
	// Each value is checked as Job.Set would set it on the base: a preset key by setting it, a
	// leaf by its setter, resolved once, parsing it.
	c := &compiledGrid{}
	for _, a := range g {
		if slices.Contains(presetKeys, a.Key) {
			for _, v := range a.Values {
				if err := base.Clone().Set(a.Key, v); err != nil {
					return nil, errs.Usage("sweep: %s=%s: %v", a.Key, v, err)
				}
			}
			continue
		}
		s, err := params.NewSetter(b, a.Key)
		if err != nil {
			return nil, errs.Usage("sweep: %s=%s: %v", a.Key, a.Values[0], err)
		}
		vals := make([]reflect.Value, len(a.Values))
		for i, v := range a.Values {
			if vals[i], err = s.Parse(v); err != nil {
				return nil, errs.Usage("sweep: %s=%s: %v", a.Key, v, err)
			}
		}
		c.setters = append(c.setters, s)
		c.values = append(c.values, vals)
	}
	if viaSet {
		return &compiledGrid{}, nil
	}
	for i, s := range c.setters {
		ex, err := params.Excludes(b, s.Path)
		if err != nil {
			return nil, err
		}
		for _, o := range c.setters[:i] {
			if slices.Contains(ex, o.Path) {
				return nil, errs.Usage("sweep: %s and %s are alternatives (a value of one replaces the other); sweep one of them", o.Path, s.Path)
			}
		}
	}
	return c, nil
}

// SweepFile is a sweep as data: a job (or a job file's path) and the grid over its keys, in order.
//
//	job: {workload: megatron, model: gpt3-175b, execution: {gpus: 512}}
//	grid:
//	  execution.tp: [1, 2, 4, 8]
//	  execution.pp: [1, 2, 4, 8, 16]
type SweepFile struct {
	Job  Job
	Grid Grid
}

// DecodeNode reads job and grid strictly.
func (s *SweepFile) DecodeNode(d *params.Decoder, n *yaml.Node, path string) error {
	m, keys, err := d.Mapping(n, path)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.Value != "job" && k.Value != "grid" {
			return d.Errorf(k, "unknown key %q; valid: job, grid", k.Value)
		}
	}
	jn, ok := m["job"]
	if !ok {
		return d.Errorf(n, "no job key: give the job to sweep (a mapping as `ddlest run` reads)")
	}
	if err := d.Decode(jn, &s.Job, "job"); err != nil {
		return err
	}
	gn, ok := m["grid"]
	if !ok {
		return d.Errorf(n, "no grid key: give the keys to sweep and their values, e.g. execution.tp: [1, 2, 4]")
	}
	gm, gkeys, err := d.Mapping(gn, "grid")
	if err != nil {
		return err
	}
	for _, k := range gkeys {
		v := gm[k.Value]
		a := Axis{Key: k.Value}
		switch v.Kind {
		case yaml.ScalarNode:
			a.Values = []string{v.Value}
		case yaml.SequenceNode:
			for _, x := range v.Content {
				if x.Kind != yaml.ScalarNode {
					return d.Errorf(x, "grid.%s: values must be scalars", k.Value)
				}
				a.Values = append(a.Values, x.Value)
			}
		default:
			return d.Errorf(v, "grid.%s: give a list of values", k.Value)
		}
		if len(a.Values) == 0 {
			return d.Errorf(v, "grid.%s has no values", k.Value)
		}
		s.Grid = append(s.Grid, a)
	}
	return nil
}

// Status is a sweep point's outcome.
type Status int

const (
	// OK: the point was estimated.
	OK Status = iota
	// Infeasible: the point is valid but cannot run (memory, cluster size).
	Infeasible
	// Invalid: the point's combination of values is not a valid job (e.g. TP not dividing the
	// heads).
	Invalid
)

func (s Status) String() string { return [...]string{"ok", "infeasible", "invalid"}[s] }

// Point is one point of a sweep. A point and what it points to (Values, Report, Err) are
// valid during the emit call that receives it: the sweep reuses their storage for a later point.
// Copy what you keep.
type Point struct {
	Index  int
	Values []string // the grid's values, one per axis
	Status Status
	Report *Report // OK only
	Err    error   // Infeasible and Invalid: why
	// Reason is SweepOptions.Reason(Err), when set.
	Reason string
}

// SweepSummary counts the points by status.
type SweepSummary struct {
	Points, OK, Infeasible, Invalid int
}

// SweepOptions tune a sweep.
type SweepOptions struct {
	// Workers run points at once (0: every core). Rows are the same for any number.
	Workers int
	// Progress, when set, is called after each batch with the points done.
	Progress func(done, total int)
	// Reason, when set, renders the error of a point that did not run as the caller writes it,
	// into Point.Reason, on the worker that ran the point: a caller that writes every reason
	// formats them in parallel, not one by one as it emits. It must be safe for concurrent use.
	Reason func(error) string
}

// sweepBatch is how many points per worker may be run and not yet emitted: enough to keep the
// workers busy while the caller writes rows (at least emitRun), few enough to bound the
// scratches that points which ran hold until they are emitted.
const sweepBatch = 64

// emitRun is how many points the caller waits for before it emits: it wakes once per run, not
// once per point.
const emitRun = 64

// runScratch is where a sweep point runs: its job (a copy of the base with the point's values
// set) and where its estimate writes (the report and what it points to, the transformer
// environment, the plan: megatron.Scratch). netParams is the cluster's network parameters boxed
// once for the placement key when the grid leaves them alone (nil: box them per point).
//
// A worker runs its points in one scratch while they do not run (most points of a layout sweep
// do not fit, their errors hold no reference into it); a point that runs keeps the scratch its
// report points into until it is emitted, and the worker takes another. Emitted points give
// theirs back: a sweep allocates nothing per point once it has as many scratches as points run
// and wait to be emitted.
type runScratch struct {
	job       Job
	report    transformerReport
	env       transformerEnv
	plan      megatron.Scratch
	netParams any
	// worker is the worker that runs its points: emitted points give the scratch back to it, so
	// that a scratch stays in one core's cache (a scratch another core last wrote is fetched
	// line by line from that core).
	worker int
	// clusterValid: the grid leaves the cluster alone and the base's is valid, so Run need not
	// check it again at every point.
	clusterValid bool
	// bound are the grid's setters bound to job's leaves, while job's configs are boundTo.
	bound   []params.Bound
	boundTo [3]any
}

// bind binds the grid's setters to the scratch's job, unless they are already.
func (sc *runScratch) bind(cg *compiledGrid) {
	j := &sc.job
	to := [3]any{j.Model, j.Execution, j.Cluster.Network.Params}
	if sc.bound != nil && to == sc.boundTo {
		return
	}
	sc.bound, sc.boundTo = sc.bound[:0], to
	for _, s := range cg.setters {
		sc.bound = append(sc.bound, s.Bind(j))
	}
}

// sweep is a running sweep's shared state. Points live in a ring of len(points) slots: point i in
// slot i % len(points), taken by a worker only once point i − len(points) has been emitted.
// Workers take runs of points in grid order and finish the runs they take; the caller's goroutine
// emits the points in order as the runs before them finish.
type sweep struct {
	g            Grid
	cg           *compiledGrid
	base         *Job
	run          pointRunner
	reason       func(error) string
	netParams    any
	clusterValid bool
	n            int // points
	points       []Point
	held         []*runScratch // the scratch each point that ran holds until it is emitted
	values       []string      // the ring's values and value indices, len(g) per point
	digits       []int

	mu       sync.Mutex
	progress sync.Cond // workers: a point was emitted; caller: a run finished
	next     int       // the next point to give a worker
	finished int       // the points before it have all run
	emitted  int       // the points before it have been emitted
	stop     bool      // a point failed, the caller's emit failed, or ctx was cancelled
	working  int       // workers still running
	waiting  int       // the points the caller waits to have run, 0 when it does not wait
	runs     [][2]int  // finished runs past finished, to join it in order
	// free holds, per worker, the scratches no point holds.
	free [][]*runScratch
}

// Sweep runs every point of the grid over base, in parallel, and calls emit with the points in
// grid order. A point that is infeasible or invalid is reported, not fatal; any other error
// (a trace file that cannot be read) stops the sweep after the points before it were emitted.
// ctx cancels it between points.
func Sweep(ctx context.Context, base *Job, g Grid, o SweepOptions, emit func(*Point) error) (SweepSummary, error) {
	return runSweep(ctx, base, g, o, emit, runPoint)
}

// pointRunner runs one point (runPoint; tests give others).
type pointRunner func(base *Job, g Grid, cg *compiledGrid, p *Point, digits []int, sc *runScratch, cache *placements) error

func runSweep(ctx context.Context, base *Job, g Grid, o SweepOptions, emit func(*Point) error, run pointRunner) (SweepSummary, error) {
	sum := SweepSummary{Points: g.Points()}
	cg, err := g.compile(base)
	if err != nil {
		return sum, err
	}
	base = base.Clone()
	if err := base.Cluster.Network.resolve(); err != nil {
		return sum, err
	}
	nw := o.Workers
	if nw <= 0 {
		nw = runtime.GOMAXPROCS(0)
	}
	ring := min(sum.Points, sweepBatch*nw)
	sw := &sweep{g: g, cg: cg, base: base, run: run, reason: o.Reason, n: sum.Points, points: make([]Point, ring), held: make([]*runScratch, ring),
		values: make([]string, ring*len(g)), digits: make([]int, ring*len(g)), free: make([][]*runScratch, nw)}
	sw.progress.L = &sw.mu
	// The cluster is the base's at every point unless an axis sets one of its keys (or a
	// preset): it is checked once and its network's placement key boxed once.
	if cg.setters != nil && !slices.ContainsFunc(cg.setters, func(s *params.Setter) bool { return strings.HasPrefix(s.Path, "cluster.") }) {
		sw.netParams, _ = paramsKey(&base.Cluster)
		sw.clusterValid = base.Validate() == nil
	}
	nw = min(nw, sum.Points)
	sw.working = nw
	var wg sync.WaitGroup
	for w := range nw {
		wg.Go(func() { sw.work(ctx, nw, w) })
	}
	err = sw.emitAll(ctx, &sum, o, emit)
	sw.mu.Lock()
	sw.stop = true // the workers stop after their runs (nothing to do when all went well)
	sw.progress.Broadcast()
	sw.mu.Unlock()
	wg.Wait()
	return sum, err
}

// work runs runs of points until there are none left or the sweep stops (worker w of nw).
func (sw *sweep) work(ctx context.Context, nw, w int) {
	var cache placements // the worker's placed networks
	var cur *runScratch  // the scratch its next point runs in
	ring := len(sw.points)
	sw.mu.Lock()
	defer func() {
		sw.working--
		sw.progress.Broadcast()
		sw.mu.Unlock()
	}()
	for {
		for !sw.stop && sw.next < sw.n && sw.next >= sw.emitted+ring {
			sw.progress.Wait() // the ring is full: wait for the caller to emit
		}
		if sw.stop || sw.next >= sw.n || ctx.Err() != nil {
			return
		}
		// A run: an eighth of the worker's share of what is left, 1 to 16 points, in the ring.
		from := sw.next
		to := min(from+min(16, max(1, (sw.n-from)/(8*nw))), sw.emitted+ring, sw.n)
		sw.next = to
		sw.mu.Unlock()

		failed := false
		for i := from; i < to; i++ { // a run is finished even when another worker fails
			at := i % ring
			p := &sw.points[at]
			d := sw.digits[at*len(sw.g) : (at+1)*len(sw.g)]
			*p = Point{Index: i, Values: sw.values[at*len(sw.g) : (at+1)*len(sw.g) : (at+1)*len(sw.g)]}
			sw.g.digits(i, d)
			for k, v := range d {
				p.Values[k] = sw.g[k].Values[v]
			}
			if cur == nil {
				cur = sw.scratch(w)
			}
			if err := sw.run(sw.base, sw.g, sw.cg, p, d, cur, &cache); err != nil {
				failed = true
			} else if p.Err != nil && sw.reason != nil {
				p.Reason = sw.reason(p.Err)
			}
			if p.Report != nil { // it points into the scratch
				sw.held[at], cur = cur, nil
			}
		}

		sw.mu.Lock()
		sw.stop = sw.stop || failed
		sw.runs = append(sw.runs, [2]int{from, to})
		for joined := true; joined; {
			joined = false
			for k, r := range sw.runs {
				if r[0] == sw.finished {
					sw.finished, joined = r[1], true
					sw.runs = slices.Delete(sw.runs, k, k+1)
					break
				}
			}
		}
		if sw.waiting > 0 && sw.finished >= sw.waiting {
			// Wake the caller and let it run now: it emits the points (giving back their
			// scratches) instead of waiting for a processor while the ring fills.
			sw.progress.Broadcast()
			sw.mu.Unlock()
			runtime.Gosched()
			sw.mu.Lock()
		}
	}
}

// scratch is a scratch no point holds for worker w: the last one given back to it (the warmest in
// its cache), else another worker's, else a new one (so a sweep holds no more scratches than
// points in its ring, and one per worker).
func (sw *sweep) scratch(w int) *runScratch {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	from := w
	for v := 0; len(sw.free[from]) == 0 && v < len(sw.free); v++ {
		from = v
	}
	if n := len(sw.free[from]); n > 0 {
		sc := sw.free[from][n-1]
		sw.free[from] = sw.free[from][:n-1]
		sc.worker = w
		return sc
	}
	sc := &runScratch{netParams: sw.netParams, clusterValid: sw.clusterValid, worker: w}
	sc.job.scratch = sc
	return sc
}

// emitAll emits the points in order as their runs finish, on the caller's goroutine. After a
// point fails the workers finish the runs they took, so the points before it are emitted and
// then its error returned.
func (sw *sweep) emitAll(ctx context.Context, sum *SweepSummary, o SweepOptions, emit func(*Point) error) error {
	ring := len(sw.points)
	var back []*runScratch
	for e := 0; e < sw.n; {
		sw.mu.Lock()
		for _, sc := range back {
			sw.free[sc.worker] = append(sw.free[sc.worker], sc)
		}
		back = back[:0]
		sw.emitted = e
		sw.progress.Broadcast() // room in the ring
		want := min(e+emitRun, sw.n)
		for sw.finished < want && sw.working > 0 {
			sw.waiting = want
			sw.progress.Wait()
		}
		sw.waiting = 0
		to := sw.finished
		sw.mu.Unlock()
		if to <= e { // the workers stopped before point e ran
			if err := ctx.Err(); err != nil {
				return err
			}
			return fmt.Errorf("sweep: point %d of %d did not run", e, sw.n)
		}
		for ; e < to; e++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			p := &sw.points[e%ring]
			switch p.Status {
			case OK:
				sum.OK++
			case Infeasible:
				sum.Infeasible++
			case Invalid:
				sum.Invalid++
			case failedPoint:
				return p.Err
			}
			if err := emit(p); err != nil {
				return err
			}
			*p = Point{}
			if sc := sw.held[e%ring]; sc != nil {
				back, sw.held[e%ring] = append(back, sc), nil
			}
			if o.Progress != nil && ((e+1)%ring == 0 || e+1 == sw.n) {
				o.Progress(e+1, sw.n)
			}
		}
	}
	return nil
}

// failedPoint marks a point whose error stops the sweep (Err holds it).
const failedPoint Status = -1

// runPoint estimates one point in the scratch sc, its job reset to base; only errors that are
// neither infeasibility nor bad input stop the sweep.
func runPoint(base *Job, g Grid, cg *compiledGrid, p *Point, digits []int, sc *runScratch, cache *placements) error {
	j := &sc.job
	j.copyFrom(base)
	j.placements = cache
	if cg.setters == nil {
		for k, a := range g {
			if err := j.Set(a.Key, p.Values[k]); err != nil {
				return classify(p, err)
			}
		}
	} else {
		sc.bind(cg)
		for k, v := range digits {
			sc.bound[k].Set(cg.values[k][v])
		}
	}
	rep, err := Run(j)
	if err != nil {
		return classify(p, err)
	}
	p.Status, p.Report = OK, rep
	return nil
}

func classify(p *Point, err error) error {
	switch {
	case isInfeasible(err):
		p.Status, p.Err = Infeasible, err
	case errs.ExitCode(err) == errs.ExitUsage:
		p.Status, p.Err = Invalid, err
	default:
		err = fmt.Errorf("sweep point %v: %w", p.Values, err)
		p.Status, p.Err = failedPoint, err
		return err
	}
	return nil
}

// isInfeasible: err is (or wraps) an infeasibility, exit 3.
func isInfeasible(err error) bool {
	_, ok := errors.AsType[*errs.InfeasibleError](err)
	return ok
}

// Keys lists the grid's keys.
func (g Grid) Keys() []string {
	out := make([]string, len(g))
	for i, a := range g {
		out[i] = a.Key
	}
	return out
}
