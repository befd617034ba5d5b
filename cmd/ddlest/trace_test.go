package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ddlest/ddlest/traces"
)

const fixture = "../../traces/testdata/transformer_cpu.json"

// importFixture imports the project's own legacy CPU trace.
func importFixture(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "fixture.parquet")
	stdout, errOut, code := execute("trace", "import", fixture, "-o", out)
	if code != 0 || !strings.Contains(stdout, "4188 events of 1 rank(s)") {
		t.Fatalf("import: exit %d, %q %q", code, stdout, errOut)
	}
	return out
}

// gpuTrace writes a small synthetic GPU trace (an A100, 2 steps of 3 ms forward, 5 ms backward,
// 1 ms optimizer kernels and a 1 MiB all-reduce over 2 ranks taking 100 µs).
func gpuTrace(t *testing.T) string { return gpuTraceOf(t, "k_", "NVIDIA A100-SXM4-80GB") }

// gpuTraceOf is gpuTrace with its kernels named prefix+phase, on the named device.
func gpuTraceOf(t *testing.T, prefix, device string) string {
	t.Helper()
	var ev []traces.Event
	var now int64
	for s := 0; s < 2; s++ {
		start := now
		for _, k := range []struct {
			phase string
			dur   int64
		}{{"fwd", 3e6}, {"bwd", 5e6}, {"optimizer", 1e6}} {
			ev = append(ev, traces.Event{Device: 0, Stream: 7, Name: prefix + k.phase, Category: "kernel", StartNs: now, DurNs: k.dur, Phase: k.phase, Layer: -1})
			now += k.dur
		}
		ev = append(ev, traces.Event{Device: 0, Stream: 9, Name: "ncclKernel_AllReduce", Category: "collective", StartNs: now, DurNs: 1e5,
			Phase: "bwd", Layer: -1, Collective: "all_reduce", Bytes: 1 << 20, GroupSize: 2})
		now += 1e5
		ev = append(ev, traces.Event{Device: -1, Stream: 1, Name: "ProfilerStep#" + string(rune('0'+s)), Category: "annotation",
			StartNs: start, DurNs: now - start, Phase: "unknown", Layer: -1})
	}
	path := filepath.Join(t.TempDir(), "gpu.parquet")
	if err := traces.WriteFile(path, traces.Metadata{traces.MetaDeviceName: device, traces.MetaSourceFormat: "kineto"}, ev); err != nil {
		t.Fatal(err)
	}
	return path
}

// The project's fixture: show (golden), export (CSV rows = imported rows), and the JSON summary
// places the phases its annotations mark.
func TestTraceShowAndExport(t *testing.T) {
	out := importFixture(t)
	stdout, errOut, code := execute("trace", "show", out, "--format", "json")
	if code != 0 {
		t.Fatalf("show: %d %s", code, errOut)
	}
	var doc traceShowDoc
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Ranks) != 1 || doc.Ranks[0].Events != 4188 || doc.Ranks[0].Steps != 2 || doc.Metadata[traces.MetaSourceFormat] != traces.FormatLegacy {
		t.Errorf("show %+v", doc)
	}
	stdout, _, code = execute("trace", "export", out)
	recs, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if code != 0 || err != nil || len(recs) != 4189 || recs[0][0] != "rank" {
		t.Fatalf("export: %d rows, %v", len(recs), err)
	}
	phases := map[string]int{}
	for _, r := range recs[1:] {
		phases[r[7]]++
	}
	if phases["fwd"] == 0 || phases["bwd"] == 0 || phases["optimizer"] == 0 {
		t.Errorf("phases %v", phases)
	}
	csvPath := filepath.Join(t.TempDir(), "rows.csv")
	if _, _, code := execute("trace", "export", out, "-o", csvPath); code != 0 {
		t.Fatal(code)
	}
	if data, _ := os.ReadFile(csvPath); string(data) != stdout {
		t.Error("export -o differs from stdout")
	}
	checkGolden(t, "trace_show_gpu.txt", []string{"trace", "show", gpuTrace(t)})
}

// --profile FILE.parquet on a Megatron and a DLRM estimate: compute becomes the measured one
// (scaled by the roofline ratio), and the report says so. The synthetic trace's 9 ms per
// iteration fit a small transformer (2 layers of hidden 512 with its LM head, 32.1M parameters,
// 1,024 tokens: about 6 · 32.1M · 1,024 = 2·10¹¹ FLOP, 0.6 ms at the A100's 312 TFLOP/s); a
// trace faster than the GPU's peak allows for the plan — the same 9 ms for a 13B model — is
// refused (issue 15).
func TestProfileFromTrace(t *testing.T) {
	tr := gpuTrace(t)
	small := []string{"megatron", "--layers", "2", "--hidden", "512", "--heads", "8", "--seq", "128", "--global-batch", "8",
		"--steps", "1", "--gpus", "1", "--gpu", "a100-80gb"}
	for _, args := range [][]string{small, {"dlrm", "--model", "hammingmesh"}} {
		roof, _, code := execute(append(args, "--format", "json")...)
		if code != 0 {
			t.Fatal(code)
		}
		meas, errOut, code := execute(append(args, "--profile", tr, "--format", "json")...)
		if code != 0 {
			t.Fatalf("%v: %s", args, errOut)
		}
		var a, b map[string]any
		json.Unmarshal([]byte(roof), &a)
		json.Unmarshal([]byte(meas), &b)
		if r, ok := a["report"].(map[string]any); ok { // a job's document: the report beside the job
			a, b = r, b["report"].(map[string]any)
		}
		prof := b["hardware"].(map[string]any)["profile"].(string)
		if !strings.Contains(prof, "compute measured: trace gpu.parquet") || !strings.Contains(prof, "communication modelled") {
			t.Errorf("%v: profile %q", args, prof)
		}
		ca, cb := a["iteration"].(map[string]any)["compute_s"], b["iteration"].(map[string]any)["compute_s"]
		if ca == cb {
			t.Errorf("%v: compute unchanged (%v)", args, ca)
		}
		table, _, _ := execute(append(args, "--profile", tr)...)
		if !strings.Contains(table, "profile ") || !strings.Contains(table, "compute measured") {
			t.Errorf("%v: the table does not say the compute is measured", args)
		}
	}
	_, errOut, code := execute("megatron", "--model", "gpt3-13b", "--gpus", "64", "--tp", "8", "--steps", "1", "--profile", tr)
	if code != 2 || !strings.Contains(errOut, "it is not a trace of this model") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("a 9 ms trace for GPT-3 13B: exit %d, %q", code, errOut)
	}
}

// --profile refuses a trace that does not match the plan (issue 15), one line, exit 2, nothing on
// stdout: the synthetic trace's kernels renamed as cuDNN's convolutions (all of its classified
// time convolution) for a transformer; the same trace with hipBLASLt's GEMMs on an unknown
// device (an MI300X) for DLRM. --force estimates anyway, the report's profile line (table and JSON) leading with the
// warning and the checks it overrode; it never overrides the peak bound (the 9 ms trace for
// GPT-3 13B).
func TestProfileChecks(t *testing.T) {
	small := []string{"megatron", "--layers", "2", "--hidden", "512", "--heads", "8", "--seq", "128", "--global-batch", "8",
		"--steps", "1", "--gpus", "1", "--gpu", "a100-80gb"}
	conv := gpuTraceOf(t, "cudnn_ampere_scudnn_128x64_relu_", "NVIDIA A100-SXM4-80GB")
	mi300 := gpuTraceOf(t, "Cijk_Alik_Bljk_BBS_BH_", "AMD Instinct MI300X") // hipBLASLt's GEMMs
	checkBadInput(t, append(small, "--profile", conv), 2, []string{"gpu.parquet does not match the plan", "kernel mix: convolution kernels take 100.0%", "--force"})
	checkBadInput(t, []string{"dlrm", "--model", "hammingmesh", "--profile", mi300}, 2, []string{`device: the trace's "AMD Instinct MI300X" is not in the GPU table`, "--force"})
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(small, "--profile", conv), "kernel mix"},
		{[]string{"dlrm", "--model", "hammingmesh", "--profile", mi300}, "device"},
	} {
		table, errOut, code := execute(append(c.args, "--force")...)
		if code != 0 || !strings.Contains(table, "WARNING: the trace failed 1 check(s), overridden by --force: "+c.want) {
			t.Errorf("%v --force: exit %d %s\n%s", c.args, code, errOut, table)
		}
		js, _, _ := execute(append(c.args, "--force", "--format", "json")...)
		if !strings.Contains(js, "overridden by --force: "+c.want) {
			t.Errorf("%v --force: the JSON report lacks the warning", c.args)
		}
	}
	checkBadInput(t, []string{"megatron", "--model", "gpt3-13b", "--gpus", "64", "--tp", "8", "--steps", "1", "--profile", gpuTrace(t), "--force"},
		2, []string{"it is not a trace of this model"})
}

func TestTraceCollectives(t *testing.T) {
	stdout, errOut, code := execute("trace", "collectives", gpuTrace(t), "--net", "alphabeta", "--net-bw", "20GB/s", "--net-latency", "0us", "--format", "csv")
	if code != 0 {
		t.Fatalf("%d %s", code, errOut)
	}
	recs, _ := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	// A 1 MiB ring all-reduce over 2 ranks at 20 GB/s: 2·(1/2)·1,048,576 B / 20e9 B/s = 52.4 µs
	// against the 100 µs measured: −47.6%. Both calls took 100 µs: the fastest is 100 µs. The
	// trace has one rank: its wait cannot be separated.
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	if r := recs[len(recs)-1]; len(recs) != 2 || r[col["collective"]] != "all_reduce" || r[col["measured_s"]] != "0.0001" ||
		r[col["fastest_s"]] != "0.0001" || r[col["wait_s"]] != "" || r[col["transfer_s"]] != "" || r[col["reason"]] != "one rank: wait not separable" || !strings.HasPrefix(r[col["predicted_s"]], "5.24288e-05") ||
		!strings.HasPrefix(r[col["error"]], "-0.4757") {
		t.Errorf("calibration %v", recs)
	}
	// A row that cannot be priced (no size) leaves predicted and error empty and says why.
	unsized := filepath.Join(t.TempDir(), "unsized.parquet")
	if err := traces.WriteFile(unsized, nil, []traces.Event{{Device: 0, Stream: 9, Name: "ncclKernel_AllReduce", Category: "collective",
		StartNs: 0, DurNs: 1000, Phase: "unknown", Layer: -1, Collective: "all_reduce", GroupSize: 2}}); err != nil {
		t.Fatal(err)
	}
	out, _, _ := execute("trace", "collectives", unsized, "--net", "alphabeta", "--format", "csv")
	if recs, _ := csv.NewReader(strings.NewReader(out)).ReadAll(); len(recs) != 2 || recs[1][col["predicted_s"]] != "" ||
		recs[1][col["error"]] != "" || recs[1][col["reason"]] != "size not recorded in the trace; one rank: wait not separable" {
		t.Errorf("unpriced row: %v", recs)
	}
	// On a cluster: its network prices (2 ranks of a DGX A100 node share NVLink, 300 GB/s each way,
	// so the 1 MiB all-reduce is priced far below the 20 GB/s link's 52 µs).
	stdout, errOut, code = execute("trace", "collectives", gpuTrace(t), "--cluster", "dgx-a100", "--format", "json")
	var doc struct {
		Network     string `json:"network"`
		Collectives []struct {
			Predicted float64 `json:"predicted_s"`
		} `json:"collectives"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil || doc.Network != "superpod" || len(doc.Collectives) != 1 ||
		!(doc.Collectives[0].Predicted > 0 && doc.Collectives[0].Predicted < 5.24288e-05) {
		t.Fatalf("trace collectives --cluster: exit %d %s\n%s", code, errOut, stdout)
	}
}

// collEvent is a collective kernel of a hand-written trace (device = rank, one stream).
func collEvent(rank int32, coll string, bytes int64, group int32, startUs, durUs int64) traces.Event {
	return traces.Event{Rank: rank, Device: rank, Stream: 7, Name: "ncclKernel_" + coll, Category: "collective", StartNs: startUs * 1000, DurNs: durUs * 1000,
		Phase: "unknown", Layer: -1, Collective: coll, Bytes: bytes, GroupSize: group}
}

// calibrationCSV runs trace collectives --format csv on events and returns its rows as maps of
// column → cell.
func calibrationCSV(t *testing.T, events []traces.Event, args ...string) []map[string]string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.parquet")
	if err := traces.WriteFile(path, nil, events); err != nil {
		t.Fatal(err)
	}
	return collectivesCSV(t, append([]string{path}, args...)...)
}

// collectivesCSV runs trace collectives ARGS --format csv and returns its rows as maps.
func collectivesCSV(t *testing.T, args ...string) []map[string]string {
	t.Helper()
	out, errOut, code := execute(append([]string{"trace", "collectives", "--format", "csv"}, args...)...)
	if code != 0 {
		t.Fatalf("trace collectives: exit %d %s", code, errOut)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		rows = append(rows, m)
	}
	return rows
}

// Every row that cannot be priced says why, with empty predicted and error cells (never 0).
// On oddl (no gather; at most 4,096 nodes, ODDL §4B) one rank's eight calls, one per row:
// seven are not priced, each for its own reason; the 1 MB all-reduce over 2 is.
func TestTraceCollectivesReasons(t *testing.T) {
	rows := calibrationCSV(t, []traces.Event{
		collEvent(0, "other", 1e6, 2, 0, 10),
		collEvent(0, "send_recv", 1e6, 2, 100, 10),
		collEvent(0, "barrier", 0, 2, 200, 10),
		collEvent(0, "all_reduce", 0, 2, 300, 10),
		collEvent(0, "all_reduce", 1e6, 0, 400, 10),
		collEvent(0, "gather", 1e6, 2, 500, 10),
		collEvent(0, "all_reduce", 1e6, 8192, 600, 10),
		collEvent(0, "all_reduce", 1e6, 2, 700, 10),
	}, "--net", "oddl")
	want := map[string]string{ // collective/bytes/group → reason
		"other/1000000/2":         "not identified",
		"send_recv/1000000/2":     "send/recv: the trace names no peer",
		"barrier/0/2":             "barrier: moves no data",
		"all_reduce/0/2":          "size not recorded",
		"all_reduce/1000000/0":    "group size not recorded",
		"gather/1000000/2":        "no algorithm of network oddl runs gather",
		"all_reduce/1000000/8192": "group of 8192 is larger than the network",
		"all_reduce/1000000/2":    "",
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %v", len(rows), len(want), rows)
	}
	for _, r := range rows {
		key := r["collective"] + "/" + r["bytes"] + "/" + r["group"]
		reason, ok := want[key]
		if !ok {
			t.Errorf("unexpected row %v", r)
			continue
		}
		if !strings.HasSuffix(r["reason"], "one rank: wait not separable") || r["wait_s"] != "" || r["transfer_s"] != "" {
			t.Errorf("%s: a one-rank trace separates no wait: %v", key, r)
		}
		priced := r["predicted_s"] != "" && r["error"] != ""
		if reason == "" {
			if !priced || r["reason"] != "one rank: wait not separable" {
				t.Errorf("%s: want priced, got %v", key, r)
			}
			continue
		}
		if r["predicted_s"] != "" || r["error"] != "" || r["error_fastest"] != "" || r["algorithm"] != "" || !strings.Contains(r["reason"], reason) {
			t.Errorf("%s: want not priced with reason %q, got %v", key, reason, r)
		}
	}
	// The table shows "—" in the predicted and error cells of such a row, never 0.
	path := filepath.Join(t.TempDir(), "one.parquet")
	if err := traces.WriteFile(path, nil, []traces.Event{collEvent(0, "barrier", 0, 2, 0, 10)}); err != nil {
		t.Fatal(err)
	}
	out, _, code := execute("trace", "collectives", path)
	if code != 0 || !regexp.MustCompile(`barrier +0 B +2 +1 +10 µs +— +— +— +— +—`).MatchString(out) {
		t.Errorf("table of an unpriced row:\n%s", out)
	}
}

// Wait and transfer of one call seen on two ranks, counted by hand: rank 0 starts at 0 and ends
// at 100 µs, rank 1 starts at 60 µs and ends at 105 µs. Every peer has arrived at 60 µs: rank 0
// waited 60 µs and transferred 40 µs, rank 1 waited 0 and transferred 45 µs. A 1 MiB ring
// all-reduce over 2 at 20 GB/s and no latency is 2·(1/2)·1,048,576 B / 20e9 B/s = 52.4288 µs:
// +31.07% against 40 µs, +16.51% against 45 µs. Rank 0's second call (at 1 ms) overlaps no
// call of rank 1: 1 of its 2 calls is separated.
func TestTraceCollectivesWaitTransfer(t *testing.T) {
	rows := calibrationCSV(t, []traces.Event{
		collEvent(0, "all_reduce", 1<<20, 2, 0, 100),
		collEvent(1, "all_reduce", 1<<20, 2, 60, 45),
		collEvent(0, "all_reduce", 1<<20, 2, 1000, 100),
	}, "--net", "alphabeta", "--net-bw", "20GB/s", "--net-latency", "0us")
	type want struct {
		wait, transfer, errTransfer float64
		matched, reason             string
	}
	wants := []want{{60e-6, 40e-6, 52.4288/40 - 1, "1", "wait and transfer of 1 of 2 calls"}, {0, 45e-6, 52.4288/45 - 1, "1", ""}}
	if len(rows) != 2 {
		t.Fatalf("rows %v", rows)
	}
	for i, w := range wants {
		r := rows[i]
		if !cellNear(r["wait_s"], w.wait) || !cellNear(r["transfer_s"], w.transfer) || !cellNear(r["error_transfer"], w.errTransfer) ||
			r["matched"] != w.matched || r["ranks"] != "2" || !strings.Contains(r["reason"], w.reason) || (w.reason == "" && r["reason"] != "") {
			t.Errorf("rank %d: want %+v, got %v", i, w, r)
		}
	}
}

// cellNear parses a CSV cell and compares it with want (1e-9 relative, or 1e-15 absolute for 0).
func cellNear(cell string, want float64) bool {
	v, err := strconv.ParseFloat(cell, 64)
	return err == nil && math.Abs(v-want) <= 1e-9*math.Abs(want)+1e-15
}

// dlrmTrace imports the shared DLRM-like traces (skipped when ../shared/traces is absent).
func dlrmTrace(t *testing.T) string {
	t.Helper()
	files, _ := filepath.Glob("../../../shared/traces/kineto/dlrm-like_rank-*.json.gz")
	if len(files) == 0 {
		t.Skip("shared DLRM-like traces absent")
	}
	pq := filepath.Join(t.TempDir(), "dlrm.parquet")
	if _, errOut, code := execute(append([]string{"trace", "import", "-q", "-o", pq}, files...)...); code != 0 {
		t.Fatalf("import: %s", errOut)
	}
	return pq
}

// The shared DLRM-like trace: 2 ranks of a 128-rank job. Both ranks ran the two 1 GiB
// all-gathers; their kernels in the JSON (ts, dur in µs): rank 0 1682725898585321 + 42496 and
// 1682725899185890 + 63644, rank 1 1682725898585405 + 42744 and 1682725899187182 + 62163.
// Rank 0 waited 84 and 1,292 µs (mean 688 µs) and transferred 42,412 and 62,352 µs (mean
// 52,382 µs); rank 1 started last both times: no wait, transfer its mean 52,453.5 µs. The other
// 126 peers are not in the trace: the reason says so.
func TestTraceCollectivesDLRM(t *testing.T) {
	pq := dlrmTrace(t)
	want := map[string][2]float64{"0": {688e-6, 52382e-6}, "1": {0, 52453.5e-6}}
	seen := 0
	for _, r := range collectivesCSV(t, pq) {
		w, ok := want[r["rank"]]
		if !ok || r["collective"] != "all_gather" {
			continue
		}
		seen++
		wait, _ := strconv.ParseFloat(r["wait_s"], 64)
		tr, _ := strconv.ParseFloat(r["transfer_s"], 64)
		// 1 µs of the JSON's rounding over ~50 ms
		if math.Abs(wait-w[0]) > 1e-6 || math.Abs(tr-w[1]) > 1e-6 || r["matched"] != "2" ||
			!strings.Contains(r["reason"], "2 of 128 ranks in the trace: the other 126 peers' arrival is not seen") {
			t.Errorf("rank %s all-gather: want wait %g transfer %g, got %v", r["rank"], w[0], w[1], r)
		}
	}
	if seen != 2 {
		t.Errorf("%d all-gather rows, want 2", seen)
	}
}

// Bad input to the trace commands: one line, exit 2, no output file.
func TestTraceBadInput(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.parquet")
	f, _ := os.Create(other)
	w := parquet.NewGenericWriter[struct {
		A int64 `parquet:"a"`
	}](f)
	w.Write([]struct {
		A int64 `parquet:"a"`
	}{{1}})
	w.Close()
	f.Close()
	trunc := filepath.Join(dir, "trunc.json")
	os.WriteFile(trunc, []byte(`[{"name":"a","ph":"X","ts":1,"dur":2},{"na`), 0o644)
	out := filepath.Join(dir, "out.parquet")
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"trace", "show", other}, []string{"other.parquet", "not a ddlest trace"}},
		{[]string{"trace", "show", fixture}, []string{"transformer_cpu.json", "not a parquet file"}},
		{[]string{"trace", "show", dir}, []string{"is a directory"}},
		{[]string{"trace", "import", trunc, "-o", out}, []string{"trunc.json", "truncated at byte", "event 1"}},
		{[]string{"trace", "import", fixture}, []string{"-o OUT.parquet"}},
		{[]string{"trace", "import", fixture, "-o", filepath.Join(dir, "out.csv")}, []string{"out.csv", ".parquet"}},
		{[]string{"trace", "export", other}, []string{"not a ddlest trace"}},
		{[]string{"trace", "show", other, "--top", "0"}, []string{"--top 0"}},
		{[]string{"dlrm", "--profile", other}, []string{"not a ddlest trace"}},
		{[]string{"dlrm", "--profile", "x.json"}, []string{`"x.json"`, ".parquet"}},
		{[]string{"dlrm", "--trace-batch", "8"}, []string{"--trace-batch", "--profile FILE.parquet"}},
		{[]string{"megatron", "--loss", "2.5", "--profile", "published"}, []string{"published", "megatron"}},
	}
	for _, c := range cases {
		checkBadInput(t, c.args, 2, c.want)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a failed import left its output behind")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files in the directory, want 2 (inputs only)", len(entries))
	}
}

// The output contract on trace files: a UTF-8 byte-order mark before the JSON is accepted (RFC
// 8259 §8.1: parsers may ignore it; the fixture's 4,188 events either way); an output that is an
// input, by any name, is refused before anything is written (the trace survives); an output that
// is a directory is refused naming it.
func TestTraceOutputContract(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	bom := filepath.Join(dir, "bom.json")
	if err := os.WriteFile(bom, append([]byte("\xef\xbb\xbf"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	pq := filepath.Join(dir, "bom.parquet")
	if out, errOut, code := execute("trace", "import", bom, "-o", pq); code != 0 || !strings.Contains(out, "4188 events") {
		t.Fatalf("import with a BOM: exit %d, %q %q", code, out, errOut)
	}
	for _, args := range [][]string{
		{"trace", "export", pq, "-o", pq},
		{"trace", "export", pq, "-o", filepath.Join(dir, ".", "bom.parquet")},
		{"trace", "import", pq, "-o", pq},
	} {
		_, errOut, code := execute(args...)
		if code != 2 || !strings.Contains(errOut, "the output is the input") {
			t.Errorf("%v: exit %d, %q; want exit 2, the output is the input", args[1:], code, errOut)
		}
	}
	if _, errOut, code := execute("trace", "show", pq); code != 0 {
		t.Errorf("the trace did not survive: %s", errOut)
	}
	sub := filepath.Join(dir, "sub.parquet")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := execute("trace", "import", fixture, "-o", sub); code != 2 || !strings.Contains(errOut, sub+" is a directory") {
		t.Errorf("import onto a directory: exit %d, %q", code, errOut)
	}
}

// trace fit from the CLI: all-reduces over 2 ranks of 1 MB in 90 µs and 100 MB in 8,010 µs
// are alphabeta at α = 5 µs and 100 Gb/s (job's TestCollectiveFits by hand); the table prints the
// flags that reproduce them. One size, or a network other than alphabeta, is bad input.
func TestTraceFit(t *testing.T) {
	coll := func(start, dur, bytes int64) traces.Event {
		return traces.Event{Device: 0, Stream: 9, Name: "ncclKernel_AllReduce", Category: "collective", StartNs: start, DurNs: dur,
			Phase: "unknown", Layer: -1, Collective: "all_reduce", Bytes: bytes, GroupSize: 2}
	}
	path := filepath.Join(t.TempDir(), "fit.parquet")
	if err := traces.WriteFile(path, nil, []traces.Event{coll(0, 90e3, 1e6), coll(1e6, 8010e3, 100e6)}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := execute("trace", "fit", path)
	if code != 0 || !strings.Contains(out, "--net alphabeta --net-param latency_ns=5000 --net-param bandwidth_gbit_per_s=100") {
		t.Errorf("trace fit: exit %d, %q %s", code, out, errOut)
	}
	for _, args := range [][]string{{"trace", "fit", gpuTrace(t)}, {"trace", "fit", path, "--net", "ramp"}, {"trace", "fit", path, "--cluster", "ft-small"}} {
		if _, errOut, code := execute(args...); code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}

// The shared DLRM-like trace (2 ranks of a 128-rank job: every sized collective spans nodes)
// fits on the DGX A100 network without error, constrains InfiniBand only and says so for NVLink.
func TestTraceFitDLRM(t *testing.T) {
	pq := dlrmTrace(t)
	out, errOut, code := execute("trace", "fit", pq, "--cluster", "dgx-a100", "--format", "csv")
	if code != 0 || !strings.Contains(out, "nvlink,false,") || !strings.Contains(out, "not constrained by the trace") || !strings.Contains(out, "infiniband,true,") {
		t.Errorf("trace fit DLRM: exit %d, %q %s", code, out, errOut)
	}
}
