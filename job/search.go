package job

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/megatron"
)

// SearchOptions asks for the fastest parallel layouts of a job's model on a number of GPUs.
type SearchOptions struct {
	// GPUs is the job size (0: the job's — TP·PP·DP or execution.gpus, or in auto mode the GPUs
	// RAMP's rule sizes for the target).
	GPUs int
	// Top is how many layouts to return, best first (0: 1).
	Top int
	// Space restricts the layouts (nil lists: every valid value); its GPUs is set from GPUs.
	Space megatron.Space
	// Visit, when set, sees every enumerated layout with its outcome (tests, progress).
	Visit func(Candidate)
}

// Candidate is one enumerated layout: its iteration when it fits, else its memory footprint.
type Candidate struct {
	Config    megatron.Config
	Fits      bool
	Memory    partition.Memory // the fullest stage's
	Iteration estimator.Iteration
}

// Lost says why the layouts that were not the best lost: they did not fit in memory, or their
// iteration was longer mostly in compute (recomputation, smaller GEMMs), pipeline bubble or
// exposed communication than the best's.
type Lost struct {
	Memory        int `json:"memory"`
	Compute       int `json:"compute"`
	Bubble        int `json:"bubble"`
	Communication int `json:"communication"`
}

// SearchSummary is what a search saw.
type SearchSummary struct {
	GPUs       int  `json:"gpus"`
	Enumerated int  `json:"enumerated"`
	Feasible   int  `json:"feasible"`
	Lost       Lost `json:"lost"`
	// Shortfall is the smallest memory overshoot of a layout that did not fit (0: all fit).
	Shortfall units.Bytes `json:"min_shortfall_bytes"`
}

// SearchResult is a search's best layouts, each the report of an explicit job (Report.Job) that
// `ddlest run` reproduces, and the summary.
type SearchResult struct {
	Reports []*Report
	Summary SearchSummary
}

// Reason is why a layout that fits lost to the best: the component of its iteration whose excess
// over the best's is largest.
type Reason int

const (
	// LostCompute: recomputation, smaller GEMMs.
	LostCompute Reason = iota
	// LostBubble: the pipeline's fill and drain.
	LostBubble
	// LostCommunication: exposed collectives.
	LostCommunication
)

var reasonNames = [...]string{"compute", "bubble", "communication"}

func (r Reason) String() string { return reasonNames[r] }

// LostTo classifies why a layout's iteration is longer than the best's.
func LostTo(it, best estimator.Iteration) Reason {
	d := [...]units.Seconds{LostCompute: it.Compute - best.Compute, LostBubble: it.Bubble - best.Bubble,
		LostCommunication: it.ExposedComm - best.ExposedComm}
	k := LostCompute
	for r := range d {
		if d[r] > d[k] {
			k = Reason(r)
		}
	}
	return k
}

func (l *Lost) add(r Reason) {
	switch r {
	case LostCompute:
		l.Compute++
	case LostBubble:
		l.Bubble++
	case LostCommunication:
		l.Communication++
	}
}

// searcher is a workload whose layouts can be searched.
type searcher interface {
	search(j *Job, o SearchOptions) (*SearchResult, error)
}

// Search enumerates the job's parallel layouts on o.GPUs GPUs of its cluster, prices every one
// that fits in memory and returns the fastest, best first (ties keep enumeration order).
func Search(j *Job, o SearchOptions) (*SearchResult, error) {
	w, err := Workloads().Lookup(j.Workload)
	if err != nil {
		return nil, err
	}
	s, ok := w.(searcher)
	if !ok {
		var names []string
		for _, x := range Workloads().All() {
			if _, ok := x.(searcher); ok {
				names = append(names, x.Name())
			}
		}
		return nil, errs.Usage("workload %s has no layout search; searchable: %s", j.Workload, strings.Join(names, ", "))
	}
	if err := j.Validate(); err != nil {
		return nil, err
	}
	return s.search(j, o)
}

// search runs the search on a copy of the job with the search layout, then runs the best
// layouts' explicit jobs.
func (w megatronWorkload) search(j *Job, so SearchOptions) (*SearchResult, error) {
	sj := *j
	e := *j.Execution.(*TransformerExecution)
	e.Layout, sj.Execution = LayoutSearch, &e
	if so.GPUs > 0 {
		e.GPUs = so.GPUs
	}
	o, err := w.options(&sj)
	if err != nil {
		return nil, err
	}
	so.GPUs = o.Search.GPUs
	o.Search = &so
	rep, cfg, err := resolveMegatron(o)
	if err != nil {
		return nil, err
	}
	cands, sum, _, err := searchLayouts(o, rep, cfg)
	if err != nil {
		return nil, err
	}
	res := &SearchResult{Summary: sum}
	for _, c := range cands[:min(max(1, so.Top), len(cands))] {
		r, err := Run(explicitJob(&sj, rep, c.Config))
		if err != nil {
			return nil, err
		}
		res.Reports = append(res.Reports, r)
	}
	return res, nil
}

// explicitJob is the job that runs one layout found for j: the explicit layout, and in auto mode
// the architecture and steps the scaling law gave.
func explicitJob(j *Job, rep *Report, c megatron.Config) *Job {
	m := *j.Model.(*TransformerModel)
	e := *j.Execution.(*TransformerExecution)
	if m.TargetLoss > 0 {
		m.TargetLoss, m.Layers, m.Hidden, m.Heads = 0, c.Layers, c.Hidden, c.Heads
		e.Steps, e.Tokens = rep.Steps, 0
	}
	e.Layout, e.GPUs = LayoutExplicit, 0
	e.TP, e.PP, e.DP, e.EP, e.Interleave = c.TP, c.PP, c.DP, c.MoE.EP, c.Interleave
	e.GlobalBatch, e.MicroBatch, e.Recompute, e.SeqParallel = c.GlobalBatch, c.MicroBatch, c.Recompute, c.SeqParallel
	return &Job{Workload: j.Workload, Model: &m, Execution: &e, Cluster: j.Cluster.clone()}
}

// searchBest estimates the fastest layout into the report (execution.layout search).
func searchBest(o MegatronOptions, rep *Report, cfg megatron.Config) (*Report, error) {
	cands, sum, env, err := searchLayouts(o, rep, cfg)
	if err != nil {
		return nil, err
	}
	rep.Search = &sum
	return rep, env.estimate(rep, cands[0].Config)
}

// searchLayouts enumerates the layouts of cfg's model on the search's GPU count, prunes those
// that do not fit (closed-form memory, megatron.PeakMemory), prices the others on one network
// placement and returns them sorted by iteration time.
func searchLayouts(o MegatronOptions, base *Report, cfg megatron.Config) ([]Candidate, SearchSummary, *transformerEnv, error) {
	so := o.Search
	gpus := so.GPUs
	if gpus == 0 {
		gpus = cfg.GPUs()
	}
	sum := SearchSummary{GPUs: gpus}
	env, err := newTransformerEnv(o, base.GPU, cfg.Precision, gpus) // checks the job fits the cluster
	if err != nil {
		return nil, sum, nil, err
	}
	space := so.Space
	space.GPUs = gpus
	var cands []Candidate
	var shortfall *partition.Memory
	var stop error
	megatron.Layouts(cfg, space, func(c megatron.Config) bool {
		sum.Enumerated++
		cand := Candidate{Config: c, Memory: megatron.PeakMemory(c)}
		if cand.Memory.Total > cand.Memory.Capacity && !o.IgnoreMemory {
			sum.Lost.Memory++
			if shortfall == nil || cand.Memory.Total-cand.Memory.Capacity < shortfall.Total-shortfall.Capacity {
				m := cand.Memory
				shortfall = &m
			}
		} else {
			r := *base
			t := *base.Transformer
			r.Transformer = &t
			if stop = env.estimate(&r, c); stop != nil {
				return false
			}
			cand.Fits, cand.Iteration = true, r.Result.Iteration
			cands = append(cands, cand)
		}
		if so.Visit != nil {
			so.Visit(cand)
		}
		return true
	})
	if stop != nil {
		return nil, sum, nil, stop
	}
	if shortfall != nil {
		sum.Shortfall = shortfall.Total - shortfall.Capacity
	}
	sum.Feasible = len(cands)
	if sum.Enumerated == 0 {
		what := fmt.Sprintf("%d layers, hidden %d, %d heads, global batch %d", cfg.Layers, cfg.Hidden, cfg.Heads, cfg.GlobalBatch)
		return nil, sum, nil, errs.Infeasible(what, "no parallel layout of %d GPUs: TP must divide the heads, PP the layers and DP = GPUs/(TP·PP) the global batch", gpus)
	}
	if len(cands) == 0 {
		return nil, sum, nil, errs.Infeasible(shortfall.String(),
			"none of the %d layouts on %d GPUs fits in GPU memory; the closest is %v over", sum.Enumerated, gpus, sum.Shortfall)
	}
	slices.SortStableFunc(cands, func(a, b Candidate) int {
		switch {
		case a.Iteration.Total < b.Iteration.Total:
			return -1
		case a.Iteration.Total > b.Iteration.Total:
			return 1
		}
		return 0
	})
	for _, c := range cands[1:] {
		sum.Lost.add(LostTo(c.Iteration, cands[0].Iteration))
	}
	return cands, sum, env, nil
}
