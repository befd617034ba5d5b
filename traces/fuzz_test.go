package traces

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
)

// fuzzParse runs the streaming parser and the resolver on arbitrary bytes: no panic, any
// failure a one-line usage error (exit 2) naming the input, and every event it emits keeps the
// invariants the rest relies on: a valid row, a duration ≥ 0 and an end that does not wrap.
func fuzzParse(t *testing.T, data []byte) {
	res := newResolver(2)
	_, err := parseTrace("fuzz.json", bytes.NewReader(data), nil, func(e *rawEvent) error {
		res.resolve(e)
		if err := e.Event.Validate(); err != nil {
			return errs.Usage("%v", err)
		}
		if e.DurNs < 0 || e.StartNs+e.DurNs < e.StartNs {
			t.Fatalf("event %q: start %d, duration %d", e.Name, e.StartNs, e.DurNs)
		}
		return nil
	})
	if err == nil {
		return
	}
	if errs.ExitCode(err) != errs.ExitUsage {
		t.Fatalf("not a usage error: %v", err)
	}
	if bytes.ContainsRune([]byte(err.Error()), '\n') {
		t.Fatalf("multi-line error: %q", err)
	}
}

// FuzzKineto: Kineto Chrome traces (a JSON object with traceEvents). The seeds run in CI.
func FuzzKineto(f *testing.F) {
	for _, s := range []string{
		`{"traceEvents":[]}`,
		`{"schemaVersion":1,"distributedInfo":{"rank":1,"world_size":4},"deviceProperties":[{"id":0,"name":"NVIDIA A100"}],"traceEvents":[` +
			`{"ph":"X","cat":"user_annotation","name":"## forward ##","pid":9,"tid":9,"ts":0,"dur":100},` +
			`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":9,"tid":9,"ts":10,"dur":2,"args":{"correlation":7}},` +
			`{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":20,"dur":30.5,"args":{"correlation":7,"device":0,"stream":7}},` +
			`{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float","pid":0,"tid":40,"ts":60,"dur":5,"args":{"Collective name":"allreduce","In msg nelems":1024,"Group size":4,"dtype":"Float"}},` +
			`{"ph":"s","cat":"ac2g","id":7,"ts":10},{"name":"process_name","ph":"M","pid":0,"args":{"name":"GPU 0"}}]}`,
		`{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"c10d::alltoall_base_","pid":1,"tid":1,"ts":"5","dur":"6","args":{"Input Dims":[[8],[8]],"Input type":["float","float"]}}]}`,
		`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1}]}`,
		`{"traceEvents":[`,
		`{"traceEvents":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(fuzzParse)
}

// FuzzLegacy: the autograd profiler's bare JSON array. The seeds run in CI.
func FuzzLegacy(f *testing.F) {
	for _, s := range []string{
		`[]`,
		`[{"name":"ProfilerStep#0","ph":"X","ts":0,"dur":50,"tid":1,"pid":"CPU functions","args":{}},` +
			`{"name":"forward","ph":"X","ts":1,"dur":20,"tid":1,"pid":"CPU functions","args":{}},` +
			`{"name":"aten::mm","ph":"X","ts":2,"dur":5,"tid":1,"pid":"CPU functions","args":{}}]`,
		`[{"name":"a","ph":"X","ts":1,"dur":-1}]`,
		`[{"name":"a","ph":"X","ts":1e400,"dur":1}]`,
		`[1, 2]`,
		`[{"name":"a\u0000b","ph":"X","ts":1,"dur":1}] trailing`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(fuzzParse)
}

// FuzzGzip: the same traces gzip-compressed (the format is detected by its magic number), and
// the compressed bytes then damaged at one position: the same contract.
func FuzzGzip(f *testing.F) {
	for _, s := range []string{`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"device":0,"stream":7}}]}`, `[]`} {
		f.Add([]byte(s), uint16(0), byte(0))
		f.Add([]byte(s), uint16(12), byte(0x5a))
	}
	f.Fuzz(func(t *testing.T, data []byte, at uint16, flip byte) {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		z := b.Bytes()
		z[int(at)%len(z)] ^= flip
		fuzzParse(t, z)
	})
}

// FuzzParquet: the parquet reader on arbitrary bytes (seeded with a real trace file and damaged
// copies): no panic, a one-line usage error on what is not a ddlest trace, and on what reads,
// rows that validate, in rank then start order.
func FuzzParquet(f *testing.F) {
	var good bytes.Buffer
	ev := []Event{
		{Rank: 0, Device: 0, Stream: 7, Name: "k", Category: "kernel", StartNs: 5, DurNs: 3, Phase: "fwd", Layer: -1},
		{Rank: 0, Device: -1, Stream: 1, Name: "aten::mm", Category: "cpu_op", StartNs: 1, DurNs: 9, Phase: "fwd", Layer: -1},
		{Rank: 1, Device: 0, Stream: 9, Name: "ncclKernel_AllReduce", Category: "collective", StartNs: 2, DurNs: 4, Phase: "bwd", Layer: -1,
			Collective: "all_reduce", Bytes: 64, GroupSize: 2},
	}
	if err := Write(&good, nil, ev); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	for _, at := range []int{0, 8, good.Len() / 2, good.Len() - 6} {
		bad := bytes.Clone(good.Bytes())
		bad[at] ^= 0xff
		f.Add(bad)
	}
	f.Add([]byte("PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, rows, err := Read(bytes.NewReader(data), int64(len(data)), "fuzz.parquet")
		if err != nil {
			if errs.ExitCode(err) != errs.ExitUsage || bytes.ContainsRune([]byte(err.Error()), '\n') {
				t.Fatalf("not a one-line usage error: %v", err)
			}
			return
		}
		for i := range rows {
			if err := rows[i].Validate(); err != nil {
				t.Fatalf("row %d read but invalid: %v", i, err)
			}
			if i > 0 && compareEvents(rows[i-1], rows[i]) > 0 {
				t.Fatalf("rows %d and %d out of order", i-1, i)
			}
		}
	})
}
