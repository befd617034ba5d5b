package traces

import (
	"errors"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/ddlest/ddlest/internal/errs"
)

// Open opens a ddlest trace file for streaming, checking its schema.
func Open(path string) (*File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, errs.Usage("%v", err)
	}
	if st.IsDir() {
		return nil, errs.Usage("%s: is a directory; want a ddlest trace (.parquet)", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, errs.Usage("%v", err)
	}
	pf, meta, err := openParquet(f, st.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{Path: path, Meta: meta, Rows: pf.NumRows(), f: f, pf: pf}, nil
}

// File is an open ddlest trace.
type File struct {
	Path string
	Meta Metadata
	Rows int64
	f    *os.File
	pf   *parquet.File
}

// Close releases the file.
func (f *File) Close() error { return f.f.Close() }

// Scan calls fn for every row in file order (rank, then start), in batches.
func (f *File) Scan(fn func([]Event) error) error {
	r := parquet.NewGenericReader[Event](f.pf)
	defer r.Close()
	buf := make([]Event, 4096)
	read := func() (n int, err error) { // the library's panics on damaged data only, not fn's
		defer damaged(f.Path, &err)
		return r.Read(buf)
	}
	for {
		n, err := read()
		if n > 0 {
			if ferr := fn(buf[:n]); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return errs.Usage("%s: %v", f.Path, err)
		}
	}
}

// RankSummary is what `ddlest trace show` reports for one rank, over the selected steps
// (Steps): Holistic Trace Analysis's temporal breakdown (facebookresearch/HolisticTraceAnalysis,
// hta/analyzers/breakdown_analysis.py: get_temporal_breakdown, get_gpu_kernel_breakdown) —
// computation, communication (NCCL kernels) and memory (memcpy, memset) GPU time, their overlap,
// and idle time over each step's GPU window, summed over the steps.
type RankSummary struct {
	Rank   int32
	Events int64
	// Steps are the ProfilerStep#N ranges (CPU side) of the rank; Selected those summarised
	// (0: the whole trace, for one without steps or with StepsAll); StepNs the mean duration of
	// the selected ones (of all when none is).
	Steps, Selected int
	StepNs          int64
	// GPU time, summed over the windows of the selected steps (a step's window runs from its
	// first to its last GPU event; a GPU event belongs to the step its launch ran in) or the
	// whole trace's: busy is the union of all GPU events, compute of kernels, communication of
	// collectives, memory of copies and sets; overlap is compute ∩ communication, idle the
	// window minus busy.
	WindowNs, BusyNs, ComputeNs, CommNs, MemoryNs, OverlapNs, IdleNs int64
	// PerStep is each selected step's breakdown (nil for the whole trace).
	PerStep []StepSummary
	// ByPhase is the summed duration of compute kernels per phase, ByLayer per annotated layer,
	// LayerByPhase per phase of the layer-annotated ones.
	ByPhase      map[string]int64
	ByLayer      map[int32]int64
	LayerByPhase map[string]int64
	Kernels      []KernelStat // by total time, longest first
	Collectives  []CollectiveStat
}

// StepSummary is one profiler step's GPU breakdown (RankSummary's fields for that step).
type StepSummary struct {
	Step                                                             int // N of ProfilerStep#N
	WindowNs, BusyNs, ComputeNs, CommNs, MemoryNs, OverlapNs, IdleNs int64
}

// Steps selects the profiler steps a summary covers. The zero value is HTA's default: every
// complete step, that is all but the last, which the profiler may have cut short
// (include_last_profiler_step=False); with one step, that one.
type Steps struct {
	All    bool // the whole trace, steps or not
	Lo, Hi int  // Range: ProfilerStep#Lo to #Hi, both included
	Range  bool
}

// StepsAll is the whole trace.
var StepsAll = Steps{All: true}

// ParseSteps reads all, complete, N or N:M.
func ParseSteps(s string) (Steps, error) {
	switch s {
	case "all":
		return StepsAll, nil
	case "complete", "":
		return Steps{}, nil
	}
	lo, hi, ok := strings.Cut(s, ":")
	if !ok {
		hi = lo
	}
	a, err1 := strconv.Atoi(lo)
	b, err2 := strconv.Atoi(hi)
	if err1 != nil || err2 != nil || a < 0 || b < a {
		return Steps{}, errs.Usage("--steps %q: want all, complete, N or N:M with 0 ≤ N ≤ M (ProfilerStep#N numbers)", s)
	}
	return Steps{Range: true, Lo: a, Hi: b}, nil
}

// KernelStat is the time of one kernel name on one rank.
type KernelStat struct {
	Name    string
	Count   int64
	TotalNs int64
}

// CollectiveStat groups a rank's collectives of one kind, size and group.
type CollectiveStat struct {
	Collective string
	Bytes      int64 // nccl-tests size S
	GroupSize  int32
	Count      int64
	TotalNs    int64
	// MinNs is the fastest call: a collective's kernel on one rank lasts from its launch until
	// every peer has joined and the data has moved, so the fastest call waited least.
	MinNs int64
	// Matched calls overlap a call of the same collective and group size on at least one other
	// rank of the trace (matchCalls): for each, the wait is its last peer's start less its own
	// start and the transfer its end less that last start; WaitNs and TransferNs are their sums.
	// Ranks is the most ranks (this one included) seen in one matched call.
	Matched, WaitNs, TransferNs int64
	Ranks                       int32
}

// call is one collective kernel, kept to match the ranks' calls once every rank is read.
type call struct {
	rank       int // index of the rank in the summaries
	key        CollectiveStat
	start, end int64
}

// matchCalls separates waiting from transfer. A rank's collective kernel runs from its own
// launch until every peer has joined and the data has moved, so the calls of one collective on
// the ranks of its group overlap in time, and after the last of them starts every peer has
// arrived: a call's transfer is its end less the last peer's start, its wait the rest. The
// calls of one collective are matched across ranks by collective and group size (not size: an
// all-to-all-v moves a different size on each rank) and by overlapping in time, on each other
// rank the call that overlaps it most. A call no other rank's call overlaps is left unmatched
// (one rank in the trace, or a sampled trace that kept another call there). Only the ranks in
// the trace are seen: with fewer than the group, a later peer's arrival is missed and the
// transfer is an upper bound.
func matchCalls(out []RankSummary, calls []call) {
	type bucket struct {
		coll  string
		group int32
	}
	buckets := map[bucket][]int{}
	for i, c := range calls {
		k := bucket{c.key.Collective, c.key.GroupSize}
		buckets[k] = append(buckets[k], i)
	}
	index := make([]map[CollectiveStat]int, len(out)) // a rank's rows by key
	best := map[int]int{}                             // rank → the peer call overlapping most
	for _, b := range buckets {
		sort.Slice(b, func(i, j int) bool { return calls[b[i]].start < calls[b[j]].start })
		var longest int64
		for _, i := range b {
			longest = max(longest, calls[i].end-calls[i].start)
		}
		for _, i := range b {
			c := calls[i]
			clear(best)
			// Calls that overlap c start in (c.start − longest, c.end).
			lo := sort.Search(len(b), func(j int) bool { return calls[b[j]].start > c.start-longest })
			for _, j := range b[lo:] {
				p := calls[j]
				if p.start >= c.end {
					break
				}
				if p.rank == c.rank || p.end <= c.start {
					continue
				}
				if k, ok := best[p.rank]; !ok || overlap(p, c) > overlap(calls[k], c) {
					best[p.rank] = j
				}
			}
			if len(best) == 0 {
				continue
			}
			last := c.start
			for _, j := range best {
				last = max(last, calls[j].start)
			}
			if index[c.rank] == nil {
				index[c.rank] = make(map[CollectiveStat]int, len(out[c.rank].Collectives))
				for k, s := range out[c.rank].Collectives {
					index[c.rank][CollectiveStat{Collective: s.Collective, Bytes: s.Bytes, GroupSize: s.GroupSize}] = k
				}
			}
			s := &out[c.rank].Collectives[index[c.rank][c.key]]
			s.Matched++
			s.WaitNs += last - c.start
			s.TransferNs += c.end - last
			s.Ranks = max(s.Ranks, int32(1+len(best)))
		}
	}
}

// overlap is the time two calls share.
func overlap(a, b call) int64 { return min(a.end, b.end) - max(a.start, b.start) }

// union tracks the measure of a union of intervals that arrive sorted by start.
type union struct {
	start, end int64
	total      int64
	open       bool
}

func (u *union) add(s, e int64) {
	switch {
	case !u.open:
		u.start, u.end, u.open = s, e, true
	case s > u.end:
		u.total += u.end - u.start
		u.start, u.end = s, e
	case e > u.end:
		u.end = e
	}
}

func (u *union) measure() int64 {
	if !u.open {
		return u.total
	}
	return u.total + u.end - u.start
}

// window accumulates one step's (or the whole trace's) GPU events, which arrive sorted by start.
type window struct {
	busy, compute, comm, memory, cc union // cc: compute ∪ communication, for their overlap
	first, last                     int64
}

func newWindow() window { return window{first: 1 << 62, last: -1 << 62} }

func (w *window) add(e *Event) {
	end := e.StartNs + e.DurNs
	w.first, w.last = min(w.first, e.StartNs), max(w.last, end)
	w.busy.add(e.StartNs, end)
	switch e.Category {
	case "collective":
		w.comm.add(e.StartNs, end)
		w.cc.add(e.StartNs, end)
	case "memcpy", "memset":
		w.memory.add(e.StartNs, end)
	default:
		w.compute.add(e.StartNs, end)
		w.cc.add(e.StartNs, end)
	}
}

func (w *window) summary(step int) StepSummary {
	s := StepSummary{Step: step, BusyNs: w.busy.measure(), ComputeNs: w.compute.measure(), CommNs: w.comm.measure(), MemoryNs: w.memory.measure()}
	if w.first <= w.last {
		s.WindowNs = w.last - w.first
	}
	s.OverlapNs = s.ComputeNs + s.CommNs - w.cc.measure()
	s.IdleNs = s.WindowNs - s.BusyNs
	return s
}

// stepRange is a profiler step on the host.
type stepRange struct {
	n          int
	start, end int64
}

// StepNumber is N of ProfilerStep#N (-1 when the name has none).
func StepNumber(name string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "ProfilerStep#"))
	if err != nil || !IsStep(name) {
		return -1
	}
	return n
}

// Summarize is SummarizeSteps over the whole trace.
func (f *File) Summarize() ([]RankSummary, error) { return f.SummarizeSteps(StepsAll) }

// SummarizeSteps computes every rank's summary over the selected steps in two passes over the
// file (the ranks' steps, then their events), in memory proportional to the steps, the launches
// in flight, and the distinct kernel names and collective sizes.
func (f *File) SummarizeSteps(sel Steps) ([]RankSummary, error) {
	steps := map[int32][]stepRange{}
	isStep := func(e *Event) bool {
		// ProfilerStep#N: an annotation, or a cpu_op ("Operator") in the 2021 format.
		return (e.Category == "annotation" || e.Category == "cpu_op") && e.Device < 0 && IsStep(e.Name)
	}
	var err error
	if !sel.All { // the whole trace needs no steps to place events: one pass
		err = f.Scan(func(batch []Event) error {
			for i := range batch {
				if e := &batch[i]; isStep(e) {
					steps[e.Rank] = append(steps[e.Rank], stepRange{StepNumber(e.Name), e.StartNs, e.StartNs + e.DurNs})
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var stepCount int
	var stepTotal int64 // the whole trace's steps, counted in the one pass
	var out []RankSummary
	var cur *RankSummary
	var chosen []stepRange // the rank's selected steps, in start order (nil: the whole trace)
	var wins []window
	var launchStep map[int64]int // correlation → index in chosen
	var all []stepRange          // the rank's steps
	var pos []int                // index in chosen of each of all (-1: not selected)
	launches := false
	kernels := map[string]*KernelStat{}
	colls := map[CollectiveStat]*CollectiveStat{}
	var calls []call
	finish := func() {
		if cur == nil {
			return
		}
		if sel.All {
			cur.Steps = stepCount
			if stepCount > 0 {
				cur.StepNs = stepTotal / int64(stepCount)
			}
		}
		for i := range wins {
			n := -1
			if chosen != nil {
				n = chosen[i].n
			}
			st := wins[i].summary(n)
			if chosen != nil {
				cur.PerStep = append(cur.PerStep, st)
			}
			cur.WindowNs += st.WindowNs
			cur.BusyNs += st.BusyNs
			cur.ComputeNs += st.ComputeNs
			cur.CommNs += st.CommNs
			cur.MemoryNs += st.MemoryNs
			cur.OverlapNs += st.OverlapNs
			cur.IdleNs += st.IdleNs
		}
		for _, k := range kernels {
			cur.Kernels = append(cur.Kernels, *k)
		}
		sort.Slice(cur.Kernels, func(i, j int) bool {
			a, b := cur.Kernels[i], cur.Kernels[j]
			if a.TotalNs != b.TotalNs {
				return a.TotalNs > b.TotalNs
			}
			return a.Name < b.Name
		})
		for _, c := range colls {
			cur.Collectives = append(cur.Collectives, *c)
		}
		sort.Slice(cur.Collectives, func(i, j int) bool {
			a, b := cur.Collectives[i], cur.Collectives[j]
			if a.Collective != b.Collective {
				return a.Collective < b.Collective
			}
			if a.Bytes != b.Bytes {
				return a.Bytes < b.Bytes
			}
			return a.GroupSize < b.GroupSize
		})
		out = append(out, *cur)
	}
	err = f.Scan(func(batch []Event) error {
		for i := range batch {
			e := &batch[i]
			if cur == nil || e.Rank != cur.Rank {
				finish()
				cur = &RankSummary{Rank: e.Rank, ByPhase: map[string]int64{}, ByLayer: map[int32]int64{}, LayerByPhase: map[string]int64{}}
				all = steps[e.Rank]
				chosen = sel.choose(all)
				pos = pos[:0]
				for _, st := range all {
					pos = append(pos, slices.IndexFunc(chosen, func(c stepRange) bool { return c == st }))
				}
				cur.Steps, cur.Selected = len(all), len(chosen)
				of := chosen
				if of == nil {
					of = all
				}
				var total int64
				for _, st := range of {
					total += st.end - st.start
				}
				if len(of) > 0 {
					cur.StepNs = total / int64(len(of))
				}
				wins = make([]window, max(1, len(chosen)))
				for k := range wins {
					wins[k] = newWindow()
				}
				launchStep, launches = map[int64]int{}, false
				stepCount, stepTotal = 0, 0
				kernels = map[string]*KernelStat{}
				colls = map[CollectiveStat]*CollectiveStat{}
			}
			cur.Events++
			if sel.All && isStep(e) {
				stepCount++
				stepTotal += e.DurNs
			}
			k := 0 // the window this event counts in
			if chosen != nil {
				switch {
				case e.Device < 0:
					// A launch takes the step its runtime call starts in.
					if e.Category == "runtime" && e.Correlation != 0 {
						launches = true
						if s := stepOf(chosen, e.StartNs); s >= 0 {
							launchStep[e.Correlation] = s
						}
					}
					continue
				case e.Correlation != 0 && launches:
					s, ok := launchStep[e.Correlation]
					delete(launchStep, e.Correlation)
					if !ok {
						continue // launched outside the selected steps
					}
					k = s
				default:
					// No launch to follow (a GPU annotation, a trace without runtime events): the
					// last step to begin on the host before it (the GPU runs behind the host).
					s := sinceStep(all, pos, e.StartNs)
					if s < 0 {
						continue
					}
					k = s
				}
			}
			if !isDeviceCategory(e.Category) {
				continue
			}
			wins[k].add(e)
			switch e.Category {
			case "collective":
				key := CollectiveStat{Collective: e.Collective, Bytes: e.Bytes, GroupSize: e.GroupSize}
				c := colls[key]
				if c == nil {
					c = &CollectiveStat{Collective: e.Collective, Bytes: e.Bytes, GroupSize: e.GroupSize}
					colls[key] = c
				}
				if c.Count == 0 || e.DurNs < c.MinNs {
					c.MinNs = e.DurNs
				}
				c.Count++
				c.TotalNs += e.DurNs
				calls = append(calls, call{rank: len(out), key: key, start: e.StartNs, end: e.StartNs + e.DurNs})
			case "kernel":
				cur.ByPhase[e.Phase] += e.DurNs
				if e.Layer >= 0 {
					cur.ByLayer[e.Layer] += e.DurNs
					cur.LayerByPhase[e.Phase] += e.DurNs
				}
			}
			if e.Category == "kernel" || e.Category == "collective" {
				ks := kernels[e.Name]
				if ks == nil {
					ks = &KernelStat{Name: e.Name}
					kernels[e.Name] = ks
				}
				ks.Count++
				ks.TotalNs += e.DurNs
			}
		}
		return nil
	})
	finish()
	if err != nil {
		return nil, err
	}
	matchCalls(out, calls)
	return out, nil
}

// choose is the selected steps of a rank's (nil: the whole trace).
func (sel Steps) choose(all []stepRange) []stepRange {
	switch {
	case sel.All || len(all) == 0:
		return nil
	case sel.Range:
		var out []stepRange
		for _, s := range all {
			if s.n >= sel.Lo && s.n <= sel.Hi {
				out = append(out, s)
			}
		}
		return out
	case len(all) == 1:
		return all
	}
	return all[:len(all)-1]
}

// sinceStep is the position in the selection (pos) of the last of the steps to start at or
// before t, or -1 (before the first, or not selected).
func sinceStep(all []stepRange, pos []int, t int64) int {
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].start <= t {
			return pos[i]
		}
	}
	return -1
}

// stepOf is the index of the step whose host range holds t, or -1.
func stepOf(steps []stepRange, t int64) int {
	for i := len(steps) - 1; i >= 0; i-- {
		if t >= steps[i].start && t < steps[i].end {
			return i
		}
	}
	return -1
}
