package traces

import (
	"bufio"
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
	// RunRows is how many events are sorted in memory at a time (default 1<<18); with more,
	// sorted runs spill to a temporary file and are merged.
	RunRows int
	// TempDir holds the spill file (default: the system temporary directory, $TMPDIR).
	TempDir string
	// Progress, when set, is called with the bytes read so far of each input.
	Progress func(file string, read, size int64)
}

// ImportSummary reports what an import wrote.
type ImportSummary struct {
	Rows       int64
	Ranks      []int32
	ByCategory map[string]int64
	// Skipped counts the complete events of source categories ddlest does not model (e.g.
	// cuda_profiler_range, overhead, mtia_ccp_events), by category, over all files.
	Skipped map[string]int64
	Spilled bool
}

// input is one parsed file: its rank and its sorted runs.
type input struct {
	path string
	info fileInfo
	rank int32
	runs []run
}

// run is a sorted batch of one file's events: in memory, or spilled at [off, off+n·rowSize) of
// the spill file.
type run struct {
	rows []crow
	off  int64
	n    int
}

// Import reads profiler traces (one rank per file; Kineto or legacy JSON, plain or gzip) and
// writes one ddlest trace file, atomically: on any error nothing is left at out. Memory does not
// grow with the traces: events are held as compact rows (strings interned once), sorted in runs
// of RunRows, spilled to a temporary file of fixed-size records when there are several, and
// merged (see doc.go).
func Import(paths []string, out string, opt ImportOptions) (ImportSummary, error) {
	var sum ImportSummary
	if len(paths) == 0 {
		return sum, errs.Usage("trace import: no input files")
	}
	if opt.RunRows <= 0 {
		opt.RunRows = 1 << 18
	}
	tab := newStrtab()
	sp := &spill{dir: opt.TempDir}
	defer sp.close()

	inputs := make([]*input, len(paths))
	// buf collects a run. It grows by doubling up to RunRows (a small trace costs little) and is
	// reused for every run that spills; a run kept in memory keeps it.
	var buf []crow
	inMemory := 0
	flush := func(in *input, full bool) error {
		if len(buf) == 0 {
			return nil
		}
		tab.sort(buf)
		if !full && !sp.active() && inMemory+len(buf) <= opt.RunRows {
			// Everything so far fits in one run: no spill file.
			in.runs = append(in.runs, run{rows: buf})
			inMemory += len(buf)
			buf = nil
			return nil
		}
		// More than one run's worth: every run goes to the spill file, and the largest buffer
		// that frees is the next run's.
		spare := buf
		for _, other := range inputs {
			if other == nil {
				continue
			}
			for i := range other.runs {
				rows := other.runs[i].rows
				if err := sp.spillRun(&other.runs[i]); err != nil {
					return err
				}
				if cap(rows) > cap(spare) {
					spare = rows
				}
			}
		}
		r := run{rows: buf}
		if err := sp.spillRun(&r); err != nil {
			return err
		}
		in.runs = append(in.runs, r)
		inMemory = 0
		buf = spare[:0]
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
		in.info, err = parseTrace(path, r, tab, func(e *rawEvent) error {
			e.Rank = int32(i) // provisional: the file's own rank is known at its end
			if len(buf) == cap(buf) {
				buf = slices.Grow(buf, min(max(len(buf), 1<<12), opt.RunRows-len(buf)))
			}
			buf = append(buf, tab.compact(e))
			if len(buf) >= opt.RunRows {
				return flush(in, true) // a full run: more are likely to follow
			}
			return nil
		})
		f.Close()
		if err != nil {
			return sum, err
		}
		for c, n := range in.info.skipped {
			if sum.Skipped == nil {
				sum.Skipped = map[string]int64{}
			}
			sum.Skipped[c] += n
		}
		if err := flush(in, false); err != nil {
			return sum, err
		}
	}
	buf, tab.keys = nil, nil // the merge needs them no more
	if err := assignRanks(inputs); err != nil {
		return sum, err
	}
	sort.SliceStable(inputs, func(a, b int) bool { return inputs[a].rank < inputs[b].rank })
	meta := importMetadata(inputs)
	var byCategory [256]int64 // by crow.category
	err := atomicfile.Write(out, func(w io.Writer) error {
		pw := parquet.NewGenericWriter[Event](w, writerOptions(meta)...)
		batch := make([]Event, 0, 1024)
		var raw rawEvent
		for _, in := range inputs {
			sum.Ranks = append(sum.Ranks, in.rank)
			res := newResolver(in.info.worldSize)
			err := sp.merge(tab, in.runs, func(c *crow) error {
				raw = tab.expand(c)
				raw.Rank = in.rank
				res.resolve(&raw)
				if err := raw.Event.Validate(); err != nil {
					return errs.Usage("%s: %v", in.path, err)
				}
				sum.Rows++
				byCategory[c.category]++
				batch = append(batch, raw.Event)
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
	sum.ByCategory = map[string]int64{}
	for i, n := range byCategory {
		if n > 0 {
			sum.ByCategory[Categories[i]] = n
		}
	}
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

func compareEvents(a, b Event) int { return keyOf(&a).compare(keyOf(&b)) }

// sortKey is what orders rows: rank, start, longer first on ties (enclosing ranges before what
// they enclose); further ties break on the other identifying columns, so that every sort and
// merge gives one order.
type sortKey struct {
	rank, device             int32
	start, dur, stream, corr int64
	category, name           string
}

func keyOf(e *Event) sortKey {
	return sortKey{rank: e.Rank, device: e.Device, start: e.StartNs, dur: e.DurNs, stream: e.Stream, corr: e.Correlation,
		category: e.Category, name: e.Name}
}

func (a sortKey) compare(b sortKey) int {
	if c := cmp.Compare(a.rank, b.rank); c != 0 {
		return c
	}
	if c := cmp.Compare(a.start, b.start); c != 0 {
		return c
	}
	if c := cmp.Compare(b.dur, a.dur); c != 0 {
		return c
	}
	if c := cmp.Compare(a.device, b.device); c != 0 {
		return c
	}
	if c := cmp.Compare(a.stream, b.stream); c != 0 {
		return c
	}
	if c := cmp.Compare(a.corr, b.corr); c != 0 {
		return c
	}
	if c := cmp.Compare(a.category, b.category); c != 0 {
		return c
	}
	return cmp.Compare(a.name, b.name)
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

// spill is the temporary file sorted runs go to when they do not fit in memory: fixed-size
// little-endian records (crow), read back through a small buffer per run while merging.
type spill struct {
	dir string
	f   *os.File
	w   *bufio.Writer
	off int64
}

func (s *spill) active() bool { return s.f != nil }

func (s *spill) spillRun(r *run) error {
	if r.rows == nil {
		return nil // already spilled
	}
	if s.f == nil {
		f, err := atomicfile.Temp(s.dir, "ddlest-import")
		if err != nil {
			return err
		}
		s.f, s.w = f, bufio.NewWriterSize(f, 1<<20)
	}
	var rec [rowSize]byte
	for i := range r.rows {
		r.rows[i].encode(rec[:])
		if _, err := s.w.Write(rec[:]); err != nil {
			return err
		}
	}
	r.off, r.n, r.rows = s.off, len(r.rows), nil
	s.off += int64(r.n) * rowSize
	return nil
}

func (s *spill) close() { atomicfile.Release(s.f) }

// cursor walks one sorted run.
type cursor struct {
	rows []crow // in memory
	pos  int
	rd   *bufio.Reader // spilled
	left int
	cur  crow
	rec  [rowSize]byte // the record being decoded (a field: a local would escape to the heap)
}

func (c *cursor) next() (*crow, error) {
	if c.rd == nil {
		if c.pos == len(c.rows) {
			return nil, io.EOF
		}
		c.pos++
		return &c.rows[c.pos-1], nil
	}
	if c.left == 0 {
		return nil, io.EOF
	}
	if _, err := io.ReadFull(c.rd, c.rec[:]); err != nil {
		return nil, fmt.Errorf("reading the import's spill file: %w", err)
	}
	c.left--
	c.cur.decode(c.rec[:])
	return &c.cur, nil
}

// mergeHeap orders the runs' current rows.
type mergeHeap struct {
	tab  *strtab
	cur  []*crow
	runs []*cursor
}

func (h mergeHeap) Len() int           { return len(h.cur) }
func (h mergeHeap) Less(i, j int) bool { return h.tab.compare(h.cur[i], h.cur[j]) < 0 }
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

// merge streams the rows of runs in sorted order.
func (s *spill) merge(tab *strtab, runs []run, emit func(*crow) error) error {
	if s.w != nil {
		if err := s.w.Flush(); err != nil {
			return err
		}
	}
	h := &mergeHeap{tab: tab}
	for _, r := range runs {
		c := &cursor{rows: r.rows}
		if r.rows == nil {
			c.rd = bufio.NewReaderSize(io.NewSectionReader(s.f, r.off, int64(r.n)*rowSize), 64<<10)
			c.left = r.n
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
	for h.Len() > 0 {
		if err := emit(h.cur[0]); err != nil {
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
