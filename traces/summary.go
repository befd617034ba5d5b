package traces

import (
	"errors"
	"io"
	"os"
	"sort"

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
	for {
		n, err := r.Read(buf)
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

// RankSummary is what `ddlest trace show` reports for one rank.
type RankSummary struct {
	Rank   int32
	Events int64
	// Steps are the ProfilerStep#N ranges (CPU side); StepNs their mean duration.
	Steps  int
	StepNs int64
	// GPU time over the window from the first to the last GPU event: busy is the union of all
	// GPU events, compute of kernels, copies and sets, communication of collectives; overlap is
	// compute ∩ communication and idle the window minus busy.
	WindowNs, BusyNs, ComputeNs, CommNs, OverlapNs, IdleNs int64
	// ByPhase is the summed duration of compute kernels per phase, ByLayer per annotated layer,
	// LayerByPhase per phase of the layer-annotated ones.
	ByPhase      map[string]int64
	ByLayer      map[int32]int64
	LayerByPhase map[string]int64
	Kernels      []KernelStat // by total time, longest first
	Collectives  []CollectiveStat
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
}

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

// Summarize computes every rank's summary in one pass over the file, in memory proportional to
// the number of distinct kernel names and collective sizes.
func (f *File) Summarize() ([]RankSummary, error) {
	var out []RankSummary
	var cur *RankSummary
	var busy, compute, comm union
	var first, last int64
	var stepTotal int64
	kernels := map[string]*KernelStat{}
	colls := map[CollectiveStat]*CollectiveStat{}
	finish := func() {
		if cur == nil {
			return
		}
		if first <= last {
			cur.WindowNs = last - first
		}
		cur.BusyNs, cur.ComputeNs, cur.CommNs = busy.measure(), compute.measure(), comm.measure()
		cur.OverlapNs = cur.ComputeNs + cur.CommNs - cur.BusyNs
		cur.IdleNs = cur.WindowNs - cur.BusyNs
		if cur.Steps > 0 {
			cur.StepNs = stepTotal / int64(cur.Steps)
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
	err := f.Scan(func(batch []Event) error {
		for i := range batch {
			e := &batch[i]
			if cur == nil || e.Rank != cur.Rank {
				finish()
				cur = &RankSummary{Rank: e.Rank, ByPhase: map[string]int64{}, ByLayer: map[int32]int64{}, LayerByPhase: map[string]int64{}}
				busy, compute, comm = union{}, union{}, union{}
				first, last, stepTotal = 1<<62, -1<<62, 0
				kernels = map[string]*KernelStat{}
				colls = map[CollectiveStat]*CollectiveStat{}
			}
			cur.Events++
			end := e.StartNs + e.DurNs
			if e.Category == "annotation" && e.Device < 0 && IsStep(e.Name) {
				cur.Steps++
				stepTotal += e.DurNs
			}
			if !isDeviceCategory(e.Category) {
				continue
			}
			first, last = min(first, e.StartNs), max(last, end)
			busy.add(e.StartNs, end)
			if e.Category == "collective" {
				comm.add(e.StartNs, end)
				key := CollectiveStat{Collective: e.Collective, Bytes: e.Bytes, GroupSize: e.GroupSize}
				c := colls[key]
				if c == nil {
					c = &CollectiveStat{Collective: e.Collective, Bytes: e.Bytes, GroupSize: e.GroupSize}
					colls[key] = c
				}
				c.Count++
				c.TotalNs += e.DurNs
			} else {
				compute.add(e.StartNs, end)
				cur.ByPhase[e.Phase] += e.DurNs
				if e.Layer >= 0 {
					cur.ByLayer[e.Layer] += e.DurNs
					cur.LayerByPhase[e.Phase] += e.DurNs
				}
			}
			if e.Category == "kernel" || e.Category == "collective" {
				k := kernels[e.Name]
				if k == nil {
					k = &KernelStat{Name: e.Name}
					kernels[e.Name] = k
				}
				k.Count++
				k.TotalNs += e.DurNs
			}
		}
		return nil
	})
	finish()
	return out, err
}
