package traces

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// synthesize writes a Kineto trace of about size bytes by repeating the shared CNN trace's events
// with their timestamps shifted by one trace span per copy.
func synthesize(b *testing.B, size int64) string {
	b.Helper()
	src := sharedTrace(b, "cnn_nccl.json.gz")
	f, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		b.Fatal(err)
	}
	f.Close()
	var lo, hi float64 = 1e300, -1e300
	type enc struct {
		pre, post []byte
		ts        float64
	}
	var evs []enc
	for _, e := range doc.TraceEvents {
		ts, ok := e["ts"].(float64)
		if !ok {
			continue
		}
		lo, hi = min(lo, ts), max(hi, ts)
		delete(e, "ts")
		body, _ := json.Marshal(e)
		evs = append(evs, enc{pre: []byte(`{"ts":`), post: append([]byte(","), body[1:]...), ts: ts})
	}
	span := hi - lo + 1
	path := filepath.Join(b.TempDir(), fmt.Sprintf("synthetic-%d.json", size))
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(out, 1<<20)
	w.WriteString(`{"schemaVersion":1,"distributedInfo":{"rank":0,"world_size":2},"traceEvents":[`)
	var written int64
	first := true
	for copyN := 0; written < size; copyN++ {
		for _, e := range evs {
			if !first {
				w.WriteByte(',')
			}
			first = false
			w.Write(e.pre)
			w.WriteString(strconv.FormatFloat(e.ts+float64(copyN)*span, 'f', 3, 64))
			n, _ := w.Write(e.post)
			written += int64(n + 16)
		}
	}
	w.WriteString("]}")
	w.Flush()
	out.Close()
	return path
}

// peakHeap samples the heap while fn runs and returns the largest value seen.
func peakHeap(fn func()) uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	}()
	fn()
	close(done)
	return peak.Load()
}

// BenchmarkImport: throughput in MB/s of uncompressed JSON (target ≥ 100 MB/s on one core) and
// the peak heap (target ≤ 100 MB whatever the size: runs of 1<<18 events spill and merge).
// Run with -cpu 1; the 1 GB case takes a while: go test -bench 'Import/1GB' -run '^$' -cpu 1 ./traces
func BenchmarkImport(b *testing.B) {
	for _, size := range []int64{64 << 20, 1 << 30} {
		b.Run(fmt.Sprintf("%dMB", size>>20), func(b *testing.B) {
			in := synthesize(b, size)
			st, _ := os.Stat(in)
			out := filepath.Join(b.TempDir(), "out.parquet")
			b.SetBytes(st.Size())
			b.ResetTimer()
			var peak uint64
			for i := 0; i < b.N; i++ {
				runtime.GC()
				peak = max(peak, peakHeap(func() {
					if _, err := Import([]string{in}, out, ImportOptions{}); err != nil {
						b.Fatal(err)
					}
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
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
