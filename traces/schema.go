package traces

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/ddlest/ddlest/internal/atomicfile"
	"github.com/ddlest/ddlest/internal/errs"
)

// Event is one row of a ddlest trace file: a kernel, CPU op, runtime call, memory copy/set,
// annotation or collective on one rank. Times are nanoseconds from the trace's own origin.
type Event struct {
	Rank        int32  `parquet:"rank"`
	Device      int32  `parquet:"device"` // GPU index, -1 for host events
	Stream      int64  `parquet:"stream"` // CUDA stream or host thread id
	Name        string `parquet:"name,dict"`
	Category    string `parquet:"category,dict"` // one of Categories
	StartNs     int64  `parquet:"start_ns"`
	DurNs       int64  `parquet:"dur_ns"`
	Phase       string `parquet:"phase,dict"` // one of Phases
	Layer       int32  `parquet:"layer"`      // -1 when unknown
	Correlation int64  `parquet:"correlation"`
	Shapes      string `parquet:"shapes"` // input shapes as the profiler printed them
	DType       string `parquet:"dtype,dict"`
	Collective  string `parquet:"collective,dict"` // one of Collectives, "" for other events
	Bytes       int64  `parquet:"bytes"`           // collective size S in bytes (nccl-tests: all-gather output, else input)
	GroupSize   int32  `parquet:"group_size"`      // ranks in the collective's group
}

// Values of the enumerated columns.
var (
	Categories  = []string{"kernel", "cpu_op", "runtime", "memcpy", "memset", "annotation", "collective", "sync"}
	Phases      = []string{"fwd", "bwd", "optimizer", "unknown"}
	Collectives = []string{"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send_recv",
		"reduce", "gather", "scatter", "barrier", "other"}
)

// Metadata keys stored in the parquet footer's key/value metadata.
const (
	MetaSchema          = "ddlest.schema" // SchemaVersion
	MetaSourceFormat    = "ddlest.source_format"
	MetaImporterVersion = "ddlest.importer_version"
	MetaDeviceName      = "ddlest.device_name"
	MetaDeviceProps     = "ddlest.device_properties" // JSON, as the profiler recorded it
	MetaWorldSize       = "ddlest.world_size"
	MetaRank            = "ddlest.rank"
	MetaOriginalFile    = "ddlest.original_file"
)

// SchemaVersion identifies this row layout.
const SchemaVersion = "ddlest-trace/1"

// Metadata is a trace file's key/value metadata.
type Metadata map[string]string

// Validate checks the enumerated columns of an event.
func (e Event) Validate() error {
	bad := func(col, v string, valid []string) error {
		return fmt.Errorf("event %q: %s %q is not one of %s", e.Name, col, v, strings.Join(valid, ", "))
	}
	if !contains(Categories, e.Category) {
		return bad("category", e.Category, Categories)
	}
	if !contains(Phases, e.Phase) {
		return bad("phase", e.Phase, Phases)
	}
	if e.Collective != "" && !contains(Collectives, e.Collective) {
		return bad("collective", e.Collective, Collectives)
	}
	if e.DurNs < 0 {
		return fmt.Errorf("event %q: negative duration %d ns", e.Name, e.DurNs)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Write encodes events as zstd-compressed parquet, rows sorted by rank then start time, with the
// metadata (plus the schema version) in the footer.
func Write(w io.Writer, meta Metadata, events []Event) error {
	for _, e := range events {
		if err := e.Validate(); err != nil {
			return err
		}
	}
	sorted := append([]Event(nil), events...)
	slices.SortStableFunc(sorted, compareEvents)
	opts := writerOptions(meta)
	pw := parquet.NewGenericWriter[Event](w, opts...)
	if _, err := pw.Write(sorted); err != nil {
		return err
	}
	return pw.Close()
}

// writerOptions: zstd, row groups of 1<<17 rows, the schema version and meta in the footer,
// sorted by rank, start (and longer first on ties).
func writerOptions(meta Metadata) []parquet.WriterOption {
	opts := []parquet.WriterOption{parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(1 << 17),
		parquet.KeyValueMetadata(MetaSchema, SchemaVersion),
		parquet.SortingWriterConfig(parquet.SortingColumns(parquet.Ascending("rank"), parquet.Ascending("start_ns"), parquet.Descending("dur_ns")))}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		if k != MetaSchema {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		opts = append(opts, parquet.KeyValueMetadata(k, meta[k]))
	}
	return opts
}

// WriteFile writes a trace file atomically: a failure never leaves a partial file behind.
func WriteFile(path string, meta Metadata, events []Event) error {
	return atomicfile.Write(path, func(w io.Writer) error { return Write(w, meta, events) })
}

// damaged turns a panic of the parquet library on damaged data into a usage error: parquet-go
// v0.32.0 indexes a dictionary with the page's stored indices unchecked (a damaged file panics
// with "index out of range" in byteArrayPage.index), and a damaged input is bad input, not a
// crash (found by FuzzParquet).
func damaged(name string, err *error) {
	if r := recover(); r != nil {
		*err = errs.Usage("%s: damaged parquet data (%v)", name, r)
	}
}

// Read decodes a trace file, rejecting parquet files of another schema.
func Read(r io.ReaderAt, size int64, name string) (meta Metadata, events []Event, err error) {
	defer damaged(name, &err)
	f, meta, err := openParquet(r, size, name)
	if err != nil {
		return nil, nil, err
	}
	// In batches: a damaged footer's row count must not size an allocation.
	pr := parquet.NewGenericReader[Event](f)
	defer pr.Close()
	buf := make([]Event, 4096)
	for {
		n, err := pr.Read(buf)
		events = append(events, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, errs.Usage("%s: damaged parquet data: %v", name, err)
		}
	}
	// What the rest relies on: valid rows in rank, then start order (Import writes them so).
	for i := range events {
		if err := events[i].Validate(); err != nil {
			return nil, nil, errs.Usage("%s: row %d: %v", name, i, err)
		}
		if i > 0 && compareEvents(events[i-1], events[i]) > 0 {
			return nil, nil, errs.Usage("%s: rows %d and %d are out of order; a ddlest trace is sorted by rank, then start", name, i-1, i)
		}
	}
	return meta, events, nil
}

// openParquet opens a parquet file and checks that it is a ddlest trace of this schema.
func openParquet(r io.ReaderAt, size int64, name string) (_ *parquet.File, _ Metadata, err error) {
	defer damaged(name, &err)
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, nil, errs.Usage("%s: not a parquet file: %v", name, err)
	}
	if v, _ := f.Lookup(MetaSchema); v != SchemaVersion {
		return nil, nil, errs.Usage("%s: not a ddlest trace (schema %q, want %q); import profiler output with `ddlest trace import`", name, v, SchemaVersion)
	}
	if err := checkColumns(f.Schema()); err != nil {
		return nil, nil, errs.Usage("%s: %v", name, err)
	}
	meta := Metadata{}
	for _, kv := range f.Metadata().KeyValueMetadata {
		meta[kv.Key] = kv.Value
	}
	return f, meta, nil
}

// ReadFile reads a trace file from disk.
func ReadFile(path string) (Metadata, []Event, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, errs.Usage("%v", err)
	}
	return Read(bytes.NewReader(data), int64(len(data)), path)
}

// checkColumns verifies that every column of Event is present with the same physical type.
func checkColumns(got *parquet.Schema) error {
	want := parquet.SchemaOf(Event{})
	for _, f := range want.Fields() {
		g, ok := lookupField(got, f.Name())
		if !ok {
			return fmt.Errorf("column %q is missing", f.Name())
		}
		if g.Type().Kind() != f.Type().Kind() {
			return fmt.Errorf("column %q has type %v, want %v", f.Name(), g.Type().Kind(), f.Type().Kind())
		}
	}
	return nil
}

func lookupField(s *parquet.Schema, name string) (parquet.Field, bool) {
	for _, f := range s.Fields() {
		if f.Name() == name {
			return f, true
		}
	}
	return nil, false
}
