package job

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/internal/enum"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/megatron"
	"github.com/ddlest/ddlest/profile/roofline"
)

// SearchOptions asks for the best parallel layouts of a job's model on a number of GPUs.
type SearchOptions struct {
	// GPUs is the job size (0: the job's — TP·PP·DP or execution.gpus, or in auto mode the GPUs
	// RAMP's rule sizes for the target).
	GPUs int
	// Sizes, when set, searches each of these job sizes instead of GPUs and ranks their layouts
	// together.
	Sizes []int
	// Rank orders the layouts (default: iteration time).
	Rank Rank
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

// Rank is what a search orders layouts by: per iteration (the global batch), its time, the
// GPU time it occupies, or the energy its GPUs draw at their maximum power.
type Rank int

const (
	// RankTime: the iteration's time.
	RankTime Rank = iota
	// RankGPUHours: GPUs × iteration time, what a cluster bill is proportional to.
	RankGPUHours
	// RankEnergy: GPUs × maximum power (TDP, configs/gpus.json) × iteration time: an upper bound
	// of the GPUs' energy (the network's is not counted).
	RankEnergy
)

var rankNames = []string{"time", "gpu-hours", "energy"}

func (r Rank) String() string { return rankNames[r] }

// Ranks lists the rank names.
func Ranks() []string { return rankNames }

// ParseRank reads a rank name.
func ParseRank(s string) (Rank, error) { return enum.Parse[Rank]("rank", s, rankNames) }

// Scale is what turns an iteration's seconds into the rank's measure on gpus GPUs of this kind:
// 1 (s), gpus/3600 (GPU-hours) or gpus × TDP (J).
func (r Rank) Scale(gpus int, gpu roofline.GPU) float64 {
	switch r {
	case RankGPUHours:
		return float64(gpus) / 3600
	case RankEnergy:
		return float64(gpus) * gpu.TDPW
	}
	return 1
}

// Measure is the rank's measure of a report's iteration (s, GPU-hours or J).
func (r Rank) Measure(rep *Report) float64 {
	return r.scale(rep) * float64(rep.Result.Iteration.Total)
}

// LostOn is why rep ranks after best: LostTo on their iterations in the rank's measure.
func (r Rank) LostOn(rep, best *Report) Reason {
	return LostTo(scaled(rep.Result.Iteration, r.scale(rep)), scaled(best.Result.Iteration, r.scale(best)))
}

func (r Rank) scale(rep *Report) float64 { return r.Scale(rep.Plan.Layout.GPUs, rep.GPU) }

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
	GPUs int `json:"gpus"`
	// Sizes are the job sizes searched together (SearchOptions.Sizes; GPUs is the first), and
	// Infeasible those of them with no layout that fits.
	Sizes      []int `json:"gpu_counts,omitempty"`
	Infeasible []int `json:"infeasible_gpu_counts,omitempty"`
	Rank       Rank  `json:"-"`
	Enumerated int   `json:"enumerated"`
	Feasible   int   `json:"feasible"`
	Lost       Lost  `json:"lost"`
	// Shortfall is the smallest memory overshoot of a layout that did not fit (0: all fit).
	Shortfall units.Bytes `json:"min_shortfall_bytes"`
	// CPs and Precisions are the context-parallel degrees and precisions searched (empty: the
	// job's, as given).
	CPs        []int                `json:"cps,omitempty"`
	Precisions []megatron.Precision `json:"precisions,omitempty"`
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

// search runs the search on a copy of the job with the search layout, for each job size, ranks
// the layouts of all sizes together, then runs the best layouts' explicit jobs.
func (w megatronWorkload) search(j *Job, so SearchOptions) (*SearchResult, error) {
	sizes := so.Sizes
	if len(sizes) == 0 {
		sizes = []int{so.GPUs}
	}
	type ranked struct {
		c            *Candidate
		score, scale float64 // the rank's measure, and per second of iteration
		rep          *Report
		job          *Job
	}
	var all []ranked
	sum := SearchSummary{CPs: so.Space.CP, Precisions: so.Space.Precision}
	var infeasible error
	for _, n := range sizes {
		sj := *j
		e := *j.Execution.(*TransformerExecution)
		e.Layout, sj.Execution = LayoutSearch, &e
		if n > 0 {
			e.GPUs = n
		}
		o, err := w.options(&sj)
		if err != nil {
			return nil, err
		}
		one := so
		one.GPUs, one.Sizes = o.Search.GPUs, nil
		o.Search = &one
		rep, cfg, err := resolveMegatron(o)
		if err != nil {
			return nil, err
		}
		cands, s, _, err := searchLayouts(o, rep, cfg)
		sum.Enumerated += s.Enumerated
		sum.Feasible += s.Feasible
		sum.Lost.Memory += s.Lost.Memory
		if s.Shortfall > 0 && (sum.Shortfall == 0 || s.Shortfall < sum.Shortfall) {
			sum.Shortfall = s.Shortfall
		}
		if len(so.Sizes) > 0 {
			sum.Sizes = append(sum.Sizes, s.GPUs)
		}
		if err != nil {
			if len(sizes) == 1 || errs.ExitCode(err) != errs.ExitInfeasible {
				return nil, err
			}
			sum.Infeasible = append(sum.Infeasible, s.GPUs)
			if infeasible == nil {
				infeasible = err
			}
			continue
		}
		if sum.GPUs == 0 {
			sum.GPUs = s.GPUs
		}
		k := so.Rank.Scale(s.GPUs, rep.GPU)
		for i := range cands {
			all = append(all, ranked{&cands[i], k * float64(cands[i].Iteration.Total), k, rep, &sj})
		}
	}
	if len(all) == 0 {
		return nil, infeasible
	}
	slices.SortStableFunc(all, func(a, b ranked) int { return cmp.Compare(a.score, b.score) })
	sum.Rank = so.Rank
	best := scaled(all[0].c.Iteration, all[0].scale)
	for _, r := range all[1:] {
		sum.Lost.add(LostTo(scaled(r.c.Iteration, r.scale), best))
	}
	res := &SearchResult{Summary: sum}
	for _, r := range all[:min(max(1, so.Top), len(all))] {
		rep, err := Run(explicitJob(r.job, r.rep, r.c.Config))
		if err != nil {
			return nil, err
		}
		res.Reports = append(res.Reports, rep)
	}
	return res, nil
}

// scaled is an iteration's parts in a rank's measure (k per second).
func scaled(it estimator.Iteration, k float64) estimator.Iteration {
	f := units.Seconds(k)
	return estimator.Iteration{Compute: f * it.Compute, ExposedComm: f * it.ExposedComm, Bubble: f * it.Bubble, Total: f * it.Total}
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
	e.CP, e.PPFirstLayers, e.PPLastLayers, e.ZeRO, e.FSDP = c.CP, c.PPFirstLayers, c.PPLastLayers, c.ZeRO, false
	e.Precision = c.Precision
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
// placement per precision and returns them sorted by iteration time, with the best one's
// environment.
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
	// A searched precision prices on its own roofline and network placement.
	envs := map[megatron.Precision]*transformerEnv{cfg.Precision: env}
	for _, p := range so.Space.Precision {
		if envs[p] == nil {
			if envs[p], err = newTransformerEnv(o, base.GPU, p, gpus); err != nil {
				return nil, sum, nil, err
			}
		}
	}
	space := so.Space
	space.GPUs = gpus
	if o.software != nil {
		o.software.restrict(&space)
	}
	// Every layout is built into one plan's storage and estimated into one report: only its
	// iteration is kept. The best is estimated again into the caller's report.
	var plans megatron.Scratch
	for _, e := range envs {
		e.plan = &plans
	}
	var r Report
	var t Transformer
	var res estimator.Result
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
			r, t = *base, *base.Transformer
			r.Transformer = &t
			r.Result = estimator.Result{Stages: res.Stages[:0], Collectives: res.Collectives[:0]}
			stop = envs[c.Precision].estimate(&r, c)
			res = r.Result
			if stop != nil {
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
	return cands, sum, envs[cands[0].Config.Precision], nil
}
