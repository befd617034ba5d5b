package traces

import (
	"bytes"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
)

// fuzzParse runs the streaming parser and the resolver on arbitrary bytes: no panic, and any
// failure is a one-line usage error (exit 2) naming the input.
func fuzzParse(t *testing.T, data []byte) {
	res := newResolver(2)
	_, err := parseTrace("fuzz.json", bytes.NewReader(data), func(e *rawEvent) error {
		res.resolve(e)
		if err := e.Event.Validate(); err != nil {
			return errs.Usage("%v", err)
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
