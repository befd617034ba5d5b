package traces

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// synthesize streams to a file of dir a Kineto trace of at least size bytes: the shared CNN
// trace's events (2 × A100, cuDNN and NCCL kernels, CPU ops, runtime calls, copies: a real mix)
// repeated, each copy's timestamps shifted by the trace's span. Every copy is read afresh from
// the gzip file and written event by event, so that the generator holds one event in memory,
// not the trace: the peak memory the import benchmarks report is the importer's.
func synthesize(b *testing.B, dir string, size int64) string {
	b.Helper()
	src := sharedTrace(b, "cnn_nccl.json.gz")
	var lo, hi float64 = 1e300, -1e300
	eachEvent(b, src, func(d *jsontext.Decoder) {
		ev, err := d.ReadValue()
		if err != nil {
			b.Fatal(err)
		}
		if t, ok := eventTS(ev); ok {
			lo, hi = min(lo, t), max(hi, t)
		}
	})
	span := hi - lo + 1
	path := filepath.Join(dir, fmt.Sprintf("synthetic-%dMB.json", size>>20))
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	cw := &countingWriter{w: bufio.NewWriterSize(out, 1<<20)}
	enc := jsontext.NewEncoder(cw, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, t := range []jsontext.Token{jsontext.BeginObject, jsontext.String("schemaVersion"), jsontext.Int(1),
		jsontext.String("distributedInfo"), jsontext.BeginObject, jsontext.String("rank"), jsontext.Int(0),
		jsontext.String("world_size"), jsontext.Int(2), jsontext.EndObject, jsontext.String("traceEvents"), jsontext.BeginArray} {
		must(enc.WriteToken(t))
	}
	for copyN := 0; cw.n < size; copyN++ {
		shift := float64(copyN) * span
		eachEvent(b, src, func(d *jsontext.Decoder) {
			if d.PeekKind() != '{' {
				v, err := d.ReadValue()
				must(err)
				must(enc.WriteValue(v))
				return
			}
			_, err := d.ReadToken()
			must(err)
			must(enc.WriteToken(jsontext.BeginObject))
			for d.PeekKind() != '}' {
				k, err := d.ReadToken()
				must(err)
				must(enc.WriteToken(k))
				if k.String() == "ts" && d.PeekKind() == '0' {
					t, err := d.ReadToken()
					must(err)
					ts, err := t.Float()
					must(err)
					must(enc.WriteToken(jsontext.Float(ts + shift)))
					continue
				}
				v, err := d.ReadValue()
				must(err)
				must(enc.WriteValue(v))
			}
			_, err = d.ReadToken()
			must(err)
			must(enc.WriteToken(jsontext.EndObject))
		})
	}
	must(enc.WriteToken(jsontext.EndArray))
	must(enc.WriteToken(jsontext.EndObject))
	must(cw.w.Flush())
	must(out.Close())
	return path
}

// eachEvent calls fn with the decoder positioned at each element of the gzip trace's
// traceEvents.
func eachEvent(b *testing.B, path string, fn func(*jsontext.Decoder)) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	d := jsontext.NewDecoder(bufio.NewReaderSize(zr, 1<<16), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	if _, err := d.ReadToken(); err != nil {
		b.Fatal(err)
	}
	for d.PeekKind() != '}' {
		k, err := d.ReadToken()
		if err != nil {
			b.Fatal(err)
		}
		if k.String() != "traceEvents" {
			if err := d.SkipValue(); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if _, err := d.ReadToken(); err != nil {
			b.Fatal(err)
		}
		for d.PeekKind() != ']' {
			fn(d)
		}
		if _, err := d.ReadToken(); err != nil {
			b.Fatal(err)
		}
	}
}

// eventTS is an event's ts, when it has a numeric one.
func eventTS(ev jsontext.Value) (float64, bool) {
	d := jsontext.NewDecoder(strings.NewReader(string(ev)))
	if t, err := d.ReadToken(); err != nil || t.Kind() != '{' {
		return 0, false
	}
	for d.PeekKind() != '}' {
		k, err := d.ReadToken()
		if err != nil {
			return 0, false
		}
		if k.String() == "ts" && d.PeekKind() == '0' {
			t, err := d.ReadToken()
			if err != nil {
				return 0, false
			}
			ts, err := t.Float()
			return ts, err == nil
		}
		if d.SkipValue() != nil {
			return 0, false
		}
	}
	return 0, false
}

type countingWriter struct {
	w *bufio.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// sampleMemory runs fn while sampling the heap in use (runtime/metrics: heap objects plus the
// unused part of in-use spans, what MemStats calls HeapInuse) every millisecond, and returns
// its largest value.
func sampleMemory(fn func()) (peakHeap uint64) {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	read := func() uint64 {
		metrics.Read(samples)
		return samples[0].Value.Uint64() + samples[1].Value.Uint64()
	}
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			peak.Store(max(peak.Load(), read()))
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(done)
	<-stopped
	return max(peak.Load(), read())
}

// rusage is the process's CPU time (user, system) and its largest resident set so far.
func rusage(b *testing.B) (user, sys time.Duration, maxRSS int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), ru.Maxrss << 10 // Linux: KiB
}

// benchmarkImport imports a synthetic trace of size bytes b.N times and reports, besides MB/s
// of JSON (b.SetBytes; MB = 10⁶ B as the testing package counts), the CPU time per MB (user and
// system, from getrusage: robust on a loaded machine, where wall-clock MB/s is not; 100 MB/s
// on one core is 10 ms/MB), the peak heap in use (peak-heap-MB, MiB) and the process's largest
// resident set (maxRSS-MB, MiB, getrusage's ru_maxrss: a high-water mark since the process
// began, so run one size per process when it matters).
func benchmarkImport(b *testing.B, size int64) {
	dir := b.TempDir()
	in := synthesize(b, dir, size)
	st, err := os.Stat(in)
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "out.parquet")
	b.SetBytes(st.Size())
	b.ResetTimer()
	var peak uint64
	var user, sys time.Duration
	for i := 0; i < b.N; i++ {
		// Each import starts from a collected heap: the peak is one import's, not the garbage
		// of the one before.
		b.StopTimer()
		runtime.GC()
		user0, sys0, _ := rusage(b)
		b.StartTimer()
		peak = max(peak, sampleMemory(func() {
			if _, err := Import([]string{in}, out, ImportOptions{}); err != nil {
				b.Fatal(err)
			}
		}))
		user1, sys1, _ := rusage(b)
		user, sys = user+user1-user0, sys+sys1-sys0
	}
	b.StopTimer()
	_, _, maxRSS := rusage(b)
	mb := float64(b.N) * float64(st.Size()) / 1e6
	b.ReportMetric(float64(user.Milliseconds())/mb, "user-ms/MB")
	b.ReportMetric(float64(sys.Milliseconds())/mb, "sys-ms/MB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(maxRSS)/(1<<20), "maxRSS-MB")
}

// BenchmarkImport: throughput of a 64 MB synthetic Kineto trace (target ≥ 100 MB/s of JSON on
// one core, i.e. ≤ 10 user-ms/MB), with its allocations and peak memory:
//
//	go test -run '^$' -bench 'Import$' -cpu 1 -count 6 -benchmem ./traces
func BenchmarkImport(b *testing.B) { benchmarkImport(b, 64<<20) }

// BenchmarkImportLarge imports a 1.5 GB trace, generated on the fly into a temporary folder
// (streamed: the generator holds one event), and reports the peak heap and resident set (target
// ≤ 150 MB whatever the trace's size: runs of 1<<18 events spill and merge, parquet row groups
// are bounded). It writes 1.5 GB, so it runs only when -bench names it, never under -bench . or
// go test ./...:
//
//	go test -run '^$' -bench ImportLarge -benchtime 1x -cpu 1 ./traces
func BenchmarkImportLarge(b *testing.B) {
	if !strings.Contains(flag.Lookup("test.bench").Value.String(), "Large") {
		b.Skip("writes a 1.5 GB trace: run with -bench ImportLarge")
	}
	benchmarkImport(b, 1_500_000_000)
}

// BenchmarkShow1M summarises a 1M-row trace (target ≤ 1 s).
func BenchmarkShow1M(b *testing.B) {
	ev := make([]Event, 1_000_000)
	for i := range ev {
		cat, name := "kernel", "gemm_"+strconv.Itoa(i%50)
		if i%10 == 0 {
			cat, name = "cpu_op", "aten::mm"
		}
		ev[i] = Event{Rank: int32(i / 500_000), Device: 0, Stream: int64(7 + i%2), Name: name, Category: cat,
			StartNs: int64(i) * 1000, DurNs: 800, Phase: Phases[i%3], Layer: -1}
		if cat == "cpu_op" {
			ev[i].Device = -1
		}
	}
	path := filepath.Join(b.TempDir(), "1m.parquet")
	if err := WriteFile(path, nil, ev); err != nil {
		b.Fatal(err)
	}
	ev = nil
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Summarize(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
