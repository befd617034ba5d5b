package traces

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ddlest/ddlest/internal/errs"
)

// shared is the folder of real profiler traces (../shared/traces, see its README).
const shared = "../../shared/traces/kineto"

func sharedTrace(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(shared, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("shared traces absent: %v", err)
	}
	return p
}

// jsonEvents decodes a trace with encoding/json, independently of the importer.
func jsonEvents(t *testing.T, path string) (events []map[string]any, world float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	var doc any
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var list []any
	switch d := doc.(type) {
	case []any:
		list = d
	case map[string]any:
		list = d["traceEvents"].([]any)
		if di, ok := d["distributedInfo"].(map[string]any); ok {
			world, _ = di["world_size"].(float64)
		}
	}
	for _, e := range list {
		events = append(events, e.(map[string]any))
	}
	return events, world
}

// expectedCategory is doc.go's mapping table, written out again here so that the test does not
// use the importer's code: complete ("X") events only; NCCL kernels are collectives.
func expectedCategory(e map[string]any, legacy bool) string {
	if e["ph"] != "X" {
		return ""
	}
	cat, _ := e["cat"].(string)
	name, _ := e["name"].(string)
	if legacy && cat == "" {
		if strings.Contains(name, "::") {
			return "cpu_op"
		}
		return "annotation"
	}
	switch cat {
	case "kernel":
		if strings.HasPrefix(name, "nccl") {
			return "collective"
		}
		return "kernel"
	case "cpu_op", "python_function":
		return "cpu_op"
	case "cuda_runtime", "cuda_driver":
		switch strings.TrimSuffix(name, "_spt") {
		case "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cuCtxSynchronize",
			"cuStreamSynchronize", "cuEventSynchronize", "hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize":
			return "sync"
		}
		return "runtime"
	case "cuda_sync":
		return "sync"
	case "gpu_memcpy":
		return "memcpy"
	case "gpu_memset":
		return "memset"
	case "user_annotation", "gpu_user_annotation":
		return "annotation"
	}
	return ""
}

func importOne(t *testing.T, opt ImportOptions, paths ...string) (ImportSummary, Metadata, []Event) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "trace.parquet")
	sum, err := Import(paths, out, opt)
	if err != nil {
		t.Fatal(err)
	}
	meta, ev, err := ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return sum, meta, ev
}

// Importing each shared trace (and the project's own legacy fixture): per-category counts equal
// an independent encoding/json count; every NCCL kernel with NCCL's args becomes a collective
// row of In msg nelems × dtype size bytes; phases are found where the trace annotates them.
func TestImportSharedTraces(t *testing.T) {
	cases := []struct {
		file       string
		legacy     bool
		phases     []string // phases that must appear on compute rows
		ncclWithSz int      // NCCL kernels carrying "In msg nelems"
	}{
		{sharedTrace(t, "alexnet_1gpu.json.gz"), false, []string{"fwd"}, 0},
		{sharedTrace(t, "cnn_nccl.json.gz"), false, []string{"fwd", "bwd", "optimizer"}, 21},
		{sharedTrace(t, "dlrm-like_rank-0.json.gz"), false, []string{"fwd", "bwd", "optimizer"}, 0},
		{"testdata/transformer_cpu.json", true, []string{"fwd", "bwd", "optimizer"}, 0},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			raw, _ := jsonEvents(t, c.file)
			want := map[string]int64{}
			type key struct {
				start, dur int64
				name       string
			}
			nccl := map[key]int64{} // expected bytes per NCCL kernel
			for _, e := range raw {
				cat := expectedCategory(e, c.legacy)
				if cat == "" {
					continue
				}
				want[cat]++
				args, _ := e["args"].(map[string]any)
				if n, ok := args["In msg nelems"].(float64); ok && cat == "collective" {
					size := map[string]int64{"Float": 4, "Long": 8, "Half": 2, "BFloat16": 2, "Int": 4}[args["dtype"].(string)]
					if size == 0 {
						t.Fatalf("test table lacks dtype %v", args["dtype"])
					}
					ts, dur := e["ts"].(float64), e["dur"].(float64)
					nccl[key{int64(ts*1000 + 0.5), int64(dur*1000 + 0.5), e["name"].(string)}] = int64(n) * size
				}
			}
			sum, meta, ev := importOne(t, ImportOptions{}, c.file)
			if !reflect.DeepEqual(sum.ByCategory, want) {
				t.Errorf("categories %v, encoding/json counts %v", sum.ByCategory, want)
			}
			got := map[string]int64{}
			phases := map[string]bool{}
			for _, e := range ev {
				got[e.Category]++
				if e.Category == "kernel" || (c.legacy && e.Category == "cpu_op") {
					phases[e.Phase] = true
				}
				if e.Category == "collective" {
					if b, ok := nccl[key{e.StartNs, e.DurNs, e.Name}]; ok {
						if e.Bytes != b || e.GroupSize != 2 {
							t.Errorf("%s at %d: %d B in a group of %d, want %d B", e.Name, e.StartNs, e.Bytes, e.GroupSize, b)
						}
						delete(nccl, key{e.StartNs, e.DurNs, e.Name})
					}
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("file rows %v, want %v", got, want)
			}
			if c.ncclWithSz > 0 && len(nccl) != 0 {
				t.Errorf("%d NCCL kernels without their collective row: %v", len(nccl), nccl)
			}
			for _, p := range c.phases {
				if !phases[p] {
					t.Errorf("no %s rows (phases seen %v)", p, phases)
				}
			}
			if meta[MetaSourceFormat] == "" || meta[MetaOriginalFile] != filepath.Base(c.file) || meta[MetaImporterVersion] == "" {
				t.Errorf("metadata %v", meta)
			}
			for i := 1; i < len(ev); i++ {
				if compareEvents(ev[i-1], ev[i]) > 0 {
					t.Fatalf("rows %d and %d out of order", i-1, i)
				}
			}
		})
	}
}

// The DLRM-like ranks: 128-rank world (distributedInfo), NCCL SendRecv kernels without args take
// their collective and size from the launching c10d op: alltoall_base_ of 419,430,400 unsigned
// chars (its record_param_comms input) and _allgather_base_ with a 1,073,741,824-element output.
// Two files, spilled in runs of 1,000 rows and merged, give the same rows as in memory.
func TestImportTwoRanksSpilled(t *testing.T) {
	r0, r1 := sharedTrace(t, "dlrm-like_rank-0.json.gz"), sharedTrace(t, "dlrm-like_rank-1.json.gz")
	sum, meta, ev := importOne(t, ImportOptions{RunRows: 1000}, r1, r0) // out of rank order on purpose
	if !sum.Spilled || !reflect.DeepEqual(sum.Ranks, []int32{0, 1}) || meta[MetaWorldSize] != "128" || meta[MetaRank] != "0,1" {
		t.Fatalf("summary %+v, metadata %v", sum, meta)
	}
	_, _, mem := importOne(t, ImportOptions{}, r0, r1)
	if !reflect.DeepEqual(ev, mem) {
		t.Error("spilled and in-memory imports differ")
	}
	seen := map[string]bool{}
	for _, e := range ev {
		if e.Category != "collective" {
			continue
		}
		if e.GroupSize != 128 {
			t.Errorf("group %d, want the world size 128", e.GroupSize)
		}
		switch {
		case e.Collective == "all_to_all" && e.Bytes == 419430400:
			seen["a2a"] = true
		case e.Collective == "all_gather" && e.Bytes == 1073741824:
			seen["ag"] = true
		}
	}
	if !seen["a2a"] || !seen["ag"] {
		t.Errorf("collectives linked to their c10d ops: %v", seen)
	}
}

// Round trip: import → parquet → read → write → read gives identical rows and metadata, and the
// file is standard parquet: parquet-go's untyped reader sees the schema's columns.
func TestImportRoundTrip(t *testing.T) {
	_, meta, ev := importOne(t, ImportOptions{}, sharedTrace(t, "cnn_nccl.json.gz"))
	path := filepath.Join(t.TempDir(), "again.parquet")
	if err := WriteFile(path, meta, ev); err != nil {
		t.Fatal(err)
	}
	meta2, ev2, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ev, ev2) || !reflect.DeepEqual(meta, meta2) {
		t.Error("round trip changed the rows or the metadata")
	}
	data, _ := os.ReadFile(path)
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != int64(len(ev)) {
		t.Errorf("%d rows, want %d", f.NumRows(), len(ev))
	}
	r := parquet.NewReader(f)
	row := make([]parquet.Row, 1)
	if n, err := r.ReadRows(row); n != 1 || (err != nil && err != io.EOF) {
		t.Fatalf("read row: %d %v", n, err)
	}
	names := map[string]bool{}
	for _, c := range f.Schema().Columns() {
		names[c[0]] = true
	}
	for _, want := range []string{"rank", "device", "stream", "name", "category", "start_ns", "dur_ns", "phase", "layer",
		"correlation", "shapes", "dtype", "collective", "bytes", "group_size"} {
		if !names[want] {
			t.Errorf("column %q missing from %v", want, names)
		}
	}
}

// Bad input: one line naming the file and the position, exit 2, and no output file left behind.
func TestImportBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2}]}`))
	zw.Close()
	corrupt := append([]byte(nil), gz.Bytes()...)
	for i := 12; i < len(corrupt)-8; i++ {
		corrupt[i] ^= 0x5a
	}
	ok := `{"ph":"X","cat":"cpu_op","name":"a","ts":1,"dur":2,"pid":1,"tid":1}`
	cases := []struct {
		name string
		path string
		want []string
	}{
		{"truncated", write("trunc.json", []byte(`{"traceEvents":[`+ok+`,{"ph":"X","na`)), []string{"trunc.json", "truncated at byte", "event 1"}},
		{"not json", write("notes.txt", []byte("hello, world")), []string{"notes.txt", "byte 0"}},
		{"corrupt gzip", write("bad.json.gz", corrupt), []string{"bad.json.gz", "gzip"}},
		{"negative dur", write("neg.json", []byte(`[`+ok+`,{"ph":"X","name":"b","ts":5,"dur":-3}]`)), []string{"neg.json", "event 1", "dur -3", "negative"}},
		// 2⁶³ ns is 9.22e15 µs: a later start wrapped to −2⁶³ and a 146-year window (issue 15).
		{"ts beyond int64 ns", write("far.json", []byte(`[`+ok+`,{"ph":"X","name":"b","ts":9.3e15,"dur":1}]`)), []string{"far.json", "event 1", "ts 9.3e+15", "int64"}},
		{"text dur", write("txt.json", []byte(`[{"ph":"X","name":"b","ts":5,"dur":"long"}]`)), []string{"txt.json", "event 0", `dur "long"`, "not a number"}},
		{"empty", write("empty.json", nil), []string{"empty.json", "empty file"}},
		{"directory", dir, []string{dir, "is a directory"}},
		{"no events", write("obj.json", []byte(`{"a":1}`)), []string{"obj.json", "without traceEvents"}},
		{"unknown dtype", write("dt.json", []byte(`{"traceEvents":[{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce","ts":1,"dur":1,"args":{"In msg nelems":4,"dtype":"Quux"}}]}`)),
			[]string{"dt.json", "event 0", `dtype "Quux"`, "valid:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, "out", c.name+".parquet")
			os.MkdirAll(filepath.Dir(out), 0o755)
			_, err := Import([]string{c.path}, out, ImportOptions{})
			if errs.ExitCode(err) != errs.ExitUsage {
				t.Fatalf("exit %d: %v", errs.ExitCode(err), err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("not one line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			if entries, _ := os.ReadDir(filepath.Dir(out)); len(entries) != 0 {
				t.Errorf("left %d files behind", len(entries))
			}
		})
	}
}

// Two files of the same rank are refused.
func TestImportDuplicateRank(t *testing.T) {
	p := sharedTrace(t, "dlrm-like_rank-0.json.gz")
	_, err := Import([]string{p, p}, filepath.Join(t.TempDir(), "o.parquet"), ImportOptions{})
	if errs.ExitCode(err) != errs.ExitUsage || !strings.Contains(err.Error(), "both rank 0") {
		t.Errorf("%v", err)
	}
}

func TestPhaseAndLayerNames(t *testing.T) {
	for name, want := range map[string]string{
		"## forward ##": "fwd", "DistributedDataParallel.forward": "fwd", "## backward ##": "bwd",
		"autograd::engine::evaluate_function: AddmmBackward0": "bwd", "Optimizer.step#SGD.step": "optimizer",
		"forward-backward": "", "backward-compute": "bwd", "forward-compute": "fwd", "optimizer": "optimizer",
		"[LightningModule]Model.training_step": "fwd", "ProfilerStep#3": "", "aten::mm": "",
	} {
		if got := PhaseOf(name); got != want {
			t.Errorf("PhaseOf(%q) = %q, want %q", name, got, want)
		}
	}
	for name, want := range map[string]int32{"layer_3": 3, "decoder.layers.11": 11, "Block 2": 2, "playerone": -1, "aten::mm": -1} {
		if got := LayerOf(name); got != want {
			t.Errorf("LayerOf(%q) = %d, want %d", name, got, want)
		}
	}
}

// The DLRM-like ranks' all-reduces run over a TensorList (c10d::allreduce_'s Input Dims are
// empty): their sizes come from the nccl:all_reduce annotations PyTorch records inside the op,
// read here with encoding/json (Input Dims × the dtype's size: rank 0 has 19,618,307,
// 26,955,536, 26,258,430 and 5,716,654 floats; rank 1 19,618,307 twice, 26,258,430 and
// 5,716,654). Every all-reduce kernel's bytes is one of its rank's annotations, none is 0, and
// the all-gather keeps its c10d op's whole output (1,073,741,824 B, the nccl-tests size),
// not the annotation's per-rank input.
func TestImportAllReduceSizesFromAnnotations(t *testing.T) {
	for _, name := range []string{"dlrm-like_rank-0.json.gz", "dlrm-like_rank-1.json.gz"} {
		path := sharedTrace(t, name)
		raw, _ := jsonEvents(t, path)
		want := map[int64]int{}
		for _, e := range raw {
			if e["name"] != "nccl:all_reduce" {
				continue
			}
			args := e["args"].(map[string]any)
			dims := args["Input Dims"].([]any)[0].([]any)
			n := int64(1)
			for _, d := range dims {
				n *= int64(d.(float64))
			}
			size := map[string]int64{"float": 4, "c10::Half": 2, "c10::BFloat16": 2, "long": 8, "int": 4}[args["Input type"].([]any)[0].(string)]
			want[n*size]++
		}
		_, _, ev := importOne(t, ImportOptions{}, path)
		got, gathers := map[int64]int{}, 0
		for _, e := range ev {
			switch {
			case e.Category == "collective" && e.Collective == "all_reduce":
				got[e.Bytes]++
			case e.Category == "collective" && e.Collective == "all_gather":
				gathers++
				if e.Bytes != 1<<30 {
					t.Errorf("%s: all-gather of %d B, want the output's 1,073,741,824", name, e.Bytes)
				}
			}
		}
		if len(want) == 0 || !reflect.DeepEqual(got, want) || gathers == 0 {
			t.Errorf("%s: all-reduce sizes %v, the nccl:all_reduce annotations say %v (%d all-gathers)", name, got, want, gathers)
		}
	}
}

// ROCm writes stream ids as hexadecimal strings ("0x0", HTA maps them): accepted; MTIA's
// on-device CCP events are its kernels (Kineto's ActivityType.h); complete events of categories
// ddlest does not model are counted by category in the summary, not dropped without a word; the
// session's own span ("Trace") is not an event. A DualPipe chunk range "mlp(W)" marks backward.
func TestImportHexStreamsAndSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rocm.json")
	if err := os.WriteFile(path, []byte(`{"traceEvents":[
  {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":"0x1a","ts":1,"dur":1,"args":{"device":0,"stream":"0x1a"}},
  {"ph":"X","cat":"mtia_ccp_events","name":"m","pid":0,"tid":7,"ts":2,"dur":1},
  {"ph":"X","cat":"overhead","name":"o","pid":0,"tid":7,"ts":2,"dur":1},
  {"ph":"X","cat":"overhead","name":"o","pid":0,"tid":7,"ts":3,"dur":1},
  {"ph":"X","cat":"Trace","name":"PyTorch Profiler (0)","pid":"Spans","tid":"PyTorch Profiler","ts":0,"dur":9}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, _, ev := importOne(t, ImportOptions{}, path)
	if len(ev) != 2 || ev[0].Stream != 0x1a || ev[1].Name != "m" || ev[1].Category != "kernel" ||
		!reflect.DeepEqual(sum.Skipped, map[string]int64{"overhead": 2}) {
		t.Errorf("rows %+v, skipped %v", ev, sum.Skipped)
	}
	for name, want := range map[string]string{"attn(F)": "fwd", "mlp(B)": "bwd", "mlp(W)": "bwd", "layer(Final)": ""} {
		if got := PhaseOf(name); got != want {
			t.Errorf("PhaseOf(%q) = %q, want %q", name, got, want)
		}
	}
}

// The 2021 Kineto format (pytorch/kineto tb_plugin sample, ResNet-50): ProfilerStep#N are
// "Operator" events and the backward pass is autograd's own node names (CudnnConvolutionBackward,
// AddmmBackward) on the autograd thread. Its steps are found (as many as encoding/json counts
// ProfilerStep# events), and less than a quarter of the kernel time stays in the unknown phase
// (issue 15; the step's thread before its first backward node is its forward pass).
func TestImport2021Format(t *testing.T) {
	path := filepath.Join("../../shared/traces/kineto2021", "resnet50_workers4.json.gz")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared traces absent: %v", err)
	}
	raw, _ := jsonEvents(t, path)
	steps := 0
	for _, e := range raw {
		if name, _ := e["name"].(string); e["ph"] == "X" && strings.HasPrefix(name, "ProfilerStep#") {
			steps++
		}
	}
	rs := importSummaries(t, path)
	var total int64
	for _, ns := range rs[0].ByPhase {
		total += ns
	}
	if steps == 0 || rs[0].Steps != steps || float64(rs[0].ByPhase["unknown"]) >= 0.25*float64(total) || rs[0].ByPhase["fwd"] == 0 || rs[0].ByPhase["bwd"] == 0 {
		t.Errorf("%d steps (encoding/json: %d); compute by phase %v", rs[0].Steps, steps, rs[0].ByPhase)
	}
}

// importSummaries imports one trace file and summarises the whole trace (--steps all).
func importSummaries(t *testing.T, path string) []RankSummary {
	t.Helper()
	out := filepath.Join(t.TempDir(), "t.parquet")
	if _, err := Import([]string{path}, out, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs, err := f.Summarize()
	if err != nil {
		t.Fatal(err)
	}
	return rs
}
