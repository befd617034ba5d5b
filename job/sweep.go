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
	"sync/atomic"

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

// digits calls f with the index of point i's value on every axis (row-major: the first axis
// varies slowest).
func (g Grid) digits(i int, f func(axis, value int)) {
	for k := len(g) - 1; k >= 0; k-- {
		n := len(g[k].Values)
		f(k, i%n)
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
	c := &compiledGrid{}
	viaSet := false
	for _, a := range g {
		if seen[a.Key] {
			return nil, errs.Usage("sweep: key %s is swept twice; give its values once (key=v1,v2,…)", a.Key)
		}
		seen[a.Key] = true
		if len(a.Values) == 0 {
			return nil, errs.Usage("sweep: key %s has no values", a.Key)
		}
		for _, v := range a.Values {
			if err := base.Clone().Set(a.Key, v); err != nil {
				return nil, errs.Usage("sweep: %s=%s: %v", a.Key, v, err)
			}
		}
		viaSet = viaSet || slices.Contains(presetKeys, a.Key)
	}
	if viaSet {
		return c, nil
	}
	b := base.Clone()
	if err := b.Cluster.Network.resolve(); err != nil {
		return nil, err
	}
	for _, a := range g {
		s, err := params.NewSetter(b, a.Key)
		if err != nil {
			return nil, err
		}
		ex, err := params.Excludes(b, a.Key)
		if err != nil {
			return nil, err
		}
		for _, o := range c.setters {
			if slices.Contains(ex, o.Path) {
				return nil, errs.Usage("sweep: %s and %s are alternatives (a value of one replaces the other); sweep one of them", o.Path, s.Path)
			}
		}
		vals := make([]reflect.Value, len(a.Values))
		for i, v := range a.Values {
			if vals[i], err = s.Parse(v); err != nil {
				return nil, err
			}
		}
		c.setters = append(c.setters, s)
		c.values = append(c.values, vals)
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
}

// sweepBatch is how many points run between two in-order emits per worker: large enough to keep
// workers busy, small enough to bound memory.
const sweepBatch = 256

// runScratch is where a sweep point's estimate writes: the report and what it points to, the
// transformer environment and the plan (megatron.Scratch), reused by the point in the same
// place of the next batch once this one is emitted. netParams is the cluster's network
// parameters boxed once for the placement key when the grid leaves them alone (nil: box them
// per point).
type runScratch struct {
	report    transformerReport
	env       transformerEnv
	plan      megatron.Scratch
	netParams any
}

// slot is one place of a batch: a point's values, its job (a copy of the base with the point's
// values set) and its scratch. A sweep allocates nothing per point once its slots are warm.
type slot struct {
	job     Job
	scratch runScratch
	ready   bool
}

// Sweep runs every point of the grid over base, in parallel, and calls emit with the points in
// grid order. A point that is infeasible or invalid is reported, not fatal; any other error
// (a trace file that cannot be read) stops the sweep. ctx cancels it between points.
func Sweep(ctx context.Context, base *Job, g Grid, o SweepOptions, emit func(*Point) error) (SweepSummary, error) {
	sum := SweepSummary{Points: g.Points()}
	cg, err := g.compile(base)
	if err != nil {
		return sum, err
	}
	base = base.Clone()
	if err := base.Cluster.Network.resolve(); err != nil {
		return sum, err
	}
	workers := o.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// The network's parameters are the base's at every point unless an axis sets one of them
	// (or a preset): their placement key is boxed once.
	var netParams any
	if cg.setters != nil && !slices.ContainsFunc(cg.setters, func(s *params.Setter) bool { return strings.HasPrefix(s.Path, "cluster.") }) {
		netParams, _ = paramsKey(&base.Cluster)
	}
	batch := make([]Point, min(sum.Points, sweepBatch*workers))
	slots := make([]slot, len(batch))
	values := make([]string, len(batch)*len(g))
	caches := make([]*placements, workers) // each worker's placed networks, kept across batches
	for i := range caches {
		caches[i] = &placements{}
	}
	for start := 0; start < sum.Points; start += len(batch) {
		n := min(len(batch), sum.Points-start)
		var next atomic.Int64
		var failed atomic.Bool
		var wg sync.WaitGroup
		for w := range min(workers, n) {
			wg.Go(func() {
				for !failed.Load() && ctx.Err() == nil {
					i := int(next.Add(1) - 1)
					if i >= n {
						return
					}
					p, sl := &batch[i], &slots[i]
					*p = Point{Index: start + i, Values: values[i*len(g) : (i+1)*len(g) : (i+1)*len(g)]}
					g.digits(start+i, func(k, v int) { p.Values[k] = g[k].Values[v] })
					if !sl.ready {
						sl.job.scratch, sl.ready = &sl.scratch, true
						sl.scratch.netParams = netParams
					}
					if err := runPoint(base, g, cg, p, &sl.job, caches[w]); err != nil {
						failed.Store(true)
					}
				}
			})
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		if failed.Load() {
			// The first failed point in grid order: workers take points in order and finish
			// those they took, so every point before it ran.
			for i := range n {
				if p := &batch[i]; p.Status == failedPoint {
					return sum, p.Err
				}
			}
		}
		for i := range n {
			p := &batch[i]
			switch p.Status {
			case OK:
				sum.OK++
			case Infeasible:
				sum.Infeasible++
			case Invalid:
				sum.Invalid++
			}
			if err := emit(p); err != nil {
				return sum, err
			}
			*p = Point{}
		}
		if o.Progress != nil {
			o.Progress(start+n, sum.Points)
		}
	}
	return sum, nil
}

// failedPoint marks a point whose error stops the sweep (Err holds it).
const failedPoint Status = -1

// runPoint estimates one point into the job j (a slot's, reset to base); only errors that are
// neither infeasibility nor bad input stop the sweep.
func runPoint(base *Job, g Grid, cg *compiledGrid, p *Point, j *Job, cache *placements) error {
	j.copyFrom(base)
	j.placements = cache
	if cg.setters == nil {
		for k, a := range g {
			if err := j.Set(a.Key, p.Values[k]); err != nil {
				return classify(p, err)
			}
		}
	} else {
		g.digits(p.Index, func(k, v int) { cg.setters[k].Apply(j, cg.values[k][v]) })
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
