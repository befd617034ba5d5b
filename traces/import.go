package traces

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/ddlest/ddlest/internal/atomicfile"
	"github.com/ddlest/ddlest/internal/errs"
)

// ImportOptions tunes an import. The zero value is the default.
type ImportOptions struct {
	// RunRows is how many events are sorted in memory at a time (default 1<<17); with more,
	// sorted runs spill to a temporary file and are merged.
	RunRows int
	// TempDir holds the spill file (default: the output's directory).
	TempDir string
	// Progress, when set, is called with the bytes read so far of each input.
	Progress func(file string, read, size int64)
}

// ImportSummary reports what an import wrote.
type ImportSummary struct {
	Rows       int64
	Ranks      []int32
	ByCategory map[string]int64
	Spilled    bool
}

// input is one parsed file: its rank and its sorted runs.
type input struct {
	path string
	info fileInfo
	rank int32
	runs []run
}

// run is a sorted batch of one file's events, in memory or as a row group of the spill file.
type run struct {
	rows     []Event
	rowGroup int // index in the spill file when rows is nil
}

// Import reads profiler traces (one rank per file; Kineto or legacy JSON, plain or gzip) and
// writes one ddlest trace file, atomically: on any error nothing is left at out. Memory does not
// grow with the traces: events are sorted in runs of RunRows, spilled to a temporary parquet
// file when there are several, and merged (see doc.go).
func Import(paths []string, out string, opt ImportOptions) (ImportSummary, error) {
	var sum ImportSummary
	if len(paths) == 0 {
		return sum, errs.Usage("trace import: no input files")
	}
	if opt.RunRows <= 0 {
		opt.RunRows = 1 << 17
	}
	if opt.TempDir == "" {
		opt.TempDir = filepath.Dir(out)
	}
	sp := &spill{dir: opt.TempDir}
	defer sp.close()

	inputs := make([]*input, len(paths))
	var buf []Event
	inMemory := 0
	flush := func(in *input) error {
		if len(buf) == 0 {
			return nil
		}
		sortRun(buf)
		if sp.active() || inMemory+len(buf) > opt.RunRows {
			// More than one run's worth: every run goes to the spill file.
			for _, other := range inputs {
				if other == nil {
					continue
				}
				for i := range other.runs {
					if err := sp.spillRun(&other.runs[i]); err != nil {
						return err
					}
				}
			}
			r := run{rows: buf}
			if err := sp.spillRun(&r); err != nil {
				return err
			}
			in.runs = append(in.runs, r)
			inMemory = 0
			buf = buf[:0]
			return nil
		}
		in.runs = append(in.runs, run{rows: slices.Clone(buf)})
		inMemory += len(buf)
		buf = buf[:0]
		return nil
	}
	for i, path := range paths {
		in := &input{path: path}
		inputs[i] = in
		f, size, err := openInput(path)
		if err != nil {
			return sum, err
		}
		var r io.Reader = f
		if opt.Progress != nil {
			r = &progressReader{r: f, size: size, file: path, report: opt.Progress}
		}
		in.info, err = parseTrace(path, r, func(e *rawEvent) error {
			e.Rank = int32(i) // provisional: the file's own rank is known at its end
			buf = append(buf, e.Event)
			if len(buf) >= opt.RunRows {
				return flush(in)
			}
			return nil
		})
		f.Close()
		if err != nil {
			return sum, err
		}
		if err := flush(in); err != nil {
			return sum, err
		}
	}
	if err := assignRanks(inputs); err != nil {
		return sum, err
	}
	sort.SliceStable(inputs, func(a, b int) bool { return inputs[a].rank < inputs[b].rank })
	sum.ByCategory = map[string]int64{}
	meta := importMetadata(inputs)
	err := atomicfile.Write(out, func(w io.Writer) error {
		pw := parquet.NewGenericWriter[Event](w, writerOptions(meta)...)
		batch := make([]Event, 0, 1024)
		for _, in := range inputs {
			sum.Ranks = append(sum.Ranks, in.rank)
			res := newResolver(in.info.worldSize)
			err := sp.merge(in.runs, func(e *rawEvent) error {
				e.Rank = in.rank
				res.resolve(e)
				if err := e.Event.Validate(); err != nil {
					return errs.Usage("%s: %v", in.path, err)
				}
				sum.Rows++
				sum.ByCategory[e.Category]++
				batch = append(batch, e.Event)
				if len(batch) == cap(batch) {
					if _, err := pw.Write(batch); err != nil {
						return err
					}
					batch = batch[:0]
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		if _, err := pw.Write(batch); err != nil {
			return err
		}
		return pw.Close()
	})
	sum.Spilled = sp.active()
	return sum, err
}

// openInput opens a trace file, rejecting directories with a clear message.
func openInput(path string) (*os.File, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, errs.Usage("%v", err)
	}
	if st.IsDir() {
		return nil, 0, errs.Usage("%s: is a directory; want a trace file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, errs.Usage("%v", err)
	}
	return f, st.Size(), nil
}

// assignRanks gives each file its distributedInfo rank, or its position when it has none;
// two files may not claim the same rank.
func assignRanks(inputs []*input) error {
	seen := map[int32]string{}
	for i, in := range inputs {
		in.rank = in.info.rank
		if in.rank < 0 {
			in.rank = int32(i)
		}
		if other, ok := seen[in.rank]; ok {
			return errs.Usage("%s and %s are both rank %d; give each rank's trace once", other, in.path, in.rank)
		}
		seen[in.rank] = in.path
	}
	return nil
}

func importMetadata(inputs []*input) Metadata {
	var formats, ranks, files []string
	m := Metadata{MetaImporterVersion: importerVer}
	for _, in := range inputs {
		if !slices.Contains(formats, in.info.format) {
			formats = append(formats, in.info.format)
		}
		ranks = append(ranks, strconv.Itoa(int(in.rank)))
		files = append(files, filepath.Base(in.path))
		if m[MetaDeviceName] == "" && in.info.deviceName != "" {
			m[MetaDeviceName], m[MetaDeviceProps] = in.info.deviceName, in.info.deviceJSON
		}
		if in.info.worldSize > 0 {
			m[MetaWorldSize] = strconv.Itoa(int(in.info.worldSize))
		}
	}
	if m[MetaWorldSize] == "" {
		m[MetaWorldSize] = strconv.Itoa(len(inputs))
	}
	m[MetaSourceFormat] = strings.Join(formats, ",")
	m[MetaRank] = strings.Join(ranks, ",")
	m[MetaOriginalFile] = strings.Join(files, ",")
	return m
}

// sortRun orders events by start time, longer first on ties (enclosing ranges before what they
// enclose).
func sortRun(ev []Event) {
	slices.SortStableFunc(ev, compareEvents)
}

// Further ties break on the other identifying columns, so that every merge gives one order.
func compareEvents(a, b Event) int {
	if c := cmp.Compare(a.Rank, b.Rank); c != 0 {
		return c
	}
	if c := cmp.Compare(a.StartNs, b.StartNs); c != 0 {
		return c
	}
	if c := cmp.Compare(b.DurNs, a.DurNs); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Device, b.Device); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Stream, b.Stream); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Correlation, b.Correlation); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Category, b.Category); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// progressReader reports how much of a file has been read.
type progressReader struct {
	r          io.Reader
	read, size int64
	file       string
	report     func(string, int64, int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.read += int64(n)
	p.report(p.file, p.read, p.size)
	return n, err
}

// spill is the temporary parquet file sorted runs go to when they do not fit in memory: one row
// group per run, uncompressed with small pages so that merging many runs reads little at a time.
type spill struct {
	dir    string
	f      *os.File
	w      *parquet.GenericWriter[Event]
	groups int
	file   *parquet.File
}

func (s *spill) active() bool { return s.f != nil }

func (s *spill) spillRun(r *run) error {
	if r.rows == nil {
		return nil // already spilled
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, ".ddlest-import-*.parquet")
		if err != nil {
			return errs.Usage("temporary file in %s: %v", s.dir, err)
		}
		s.f = f
		s.w = parquet.NewGenericWriter[Event](f, parquet.PageBufferSize(16<<10))
	}
	if _, err := s.w.Write(r.rows); err != nil {
		return err
	}
	if err := s.w.Flush(); err != nil {
		return err
	}
	r.rowGroup, r.rows = s.groups, nil
	s.groups++
	return nil
}

func (s *spill) open() error {
	if s.file != nil || s.f == nil {
		return nil
	}
	if err := s.w.Close(); err != nil {
		return err
	}
	st, err := s.f.Stat()
	if err != nil {
		return err
	}
	s.file, err = parquet.OpenFile(s.f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return err
	}
	if n := len(s.file.RowGroups()); n != s.groups {
		return fmt.Errorf("spill file has %d row groups, want %d", n, s.groups)
	}
	return nil
}

func (s *spill) close() {
	if s.f != nil {
		name := s.f.Name()
		s.f.Close()
		os.Remove(name)
	}
}

// cursor walks one sorted run.
type cursor struct {
	rows []Event // the current batch
	pos  int
	rd   *parquet.GenericReader[Event]
	buf  []Event
}

func (c *cursor) next() (*Event, error) {
	if c.pos < len(c.rows) {
		c.pos++
		return &c.rows[c.pos-1], nil
	}
	if c.rd == nil {
		return nil, io.EOF
	}
	n, err := c.rd.Read(c.buf)
	if n == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			c.rd.Close()
			c.rd = nil
			return nil, io.EOF
		}
		return nil, err
	}
	c.rows, c.pos = c.buf[:n], 1
	return &c.rows[0], nil
}

// mergeHeap orders the runs' current events.
type mergeHeap struct {
	cur  []*Event
	runs []*cursor
}

func (h mergeHeap) Len() int           { return len(h.cur) }
func (h mergeHeap) Less(i, j int) bool { return compareEvents(*h.cur[i], *h.cur[j]) < 0 }
func (h mergeHeap) Swap(i, j int) {
	h.cur[i], h.cur[j] = h.cur[j], h.cur[i]
	h.runs[i], h.runs[j] = h.runs[j], h.runs[i]
}
func (h *mergeHeap) Push(any) {}
func (h *mergeHeap) Pop() any {
	n := len(h.cur) - 1
	h.cur, h.runs = h.cur[:n], h.runs[:n]
	return nil
}

// merge streams the events of runs in sorted order.
func (s *spill) merge(runs []run, emit func(*rawEvent) error) error {
	if err := s.open(); err != nil {
		return err
	}
	h := &mergeHeap{}
	for _, r := range runs {
		c := &cursor{rows: r.rows}
		if r.rows == nil {
			c.rd = parquet.NewGenericRowGroupReader[Event](s.file.RowGroups()[r.rowGroup])
			c.buf = make([]Event, 256)
		}
		e, err := c.next()
		if errors.Is(err, io.EOF) {
			continue
		}
		if err != nil {
			return err
		}
		h.cur, h.runs = append(h.cur, e), append(h.runs, c)
	}
	heap.Init(h)
	var raw rawEvent
	for h.Len() > 0 {
		raw = rawEvent{Event: *h.cur[0]}
		if err := emit(&raw); err != nil {
			return err
		}
		e, err := h.runs[0].next()
		switch {
		case errors.Is(err, io.EOF):
			heap.Pop(h)
		case err != nil:
			return err
		default:
			h.cur[0] = e
			heap.Fix(h, 0)
		}
	}
	return nil
}
