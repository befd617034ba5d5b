package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/ddlest/ddlest/internal/rows"
)

// runJSON runs a command with --format json and decodes its output.
func runJSON(t *testing.T, args ...string) any {
	t.Helper()
	out, errOut, code := execute(append(args, "--format", "json")...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// rerun writes a job document to a file and runs it with `ddlest run`.
func rerun(t *testing.T, doc any) any {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "run.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return runJSON(t, "run", path)
}

// TestRunRoundTrip: the JSON output of every job command runs again with `ddlest run` to the same
// JSON, the layout search included.
func TestRunRoundTrip(t *testing.T) {
	for _, args := range [][]string{
		explicitArgs,
		{"megatron", "--loss", "2.5"}, // layout search on dgx-a100
		{"megatron", "--loss", "2.5", "--net", "ramp"},
		{"gpt3"},
		{"moe", "--layout", "search", "--gpus", "1536"},
		{"dp", "--model", "vgg19", "--gpus", "256"},
		{"resnet", "--profile", "published"},
		{"cosmoflow", "--spatial", "8"},
		{"dlrm", "--model", "hammingmesh", "--gpus", "64"},
		{"dlrm", "--hidden", "512", "--bottom-layers", "2"},
	} {
		first := runJSON(t, args...)
		if again := rerun(t, first); !reflect.DeepEqual(first, again) {
			t.Errorf("%v: ddlest run of its JSON differs", args)
		}
	}
}

// TestSearchCLI: GPT-3 175B on 512 A100 of DGX A100 nodes, global batch 1,536 (the preset's,
// Brown et al. Table 2.1). The JSON is a list, best first, of the megatron command's documents,
// each runs again to itself, and tensor parallelism stays inside the 8-GPU NVLink node.
func TestSearchCLI(t *testing.T) {
	list, ok := runJSON(t, "search", "megatron", "--model", "gpt3-175b", "--gpus", "512", "--top", "3").([]any)
	if !ok || len(list) != 3 {
		t.Fatalf("search --format json: want a list of 3, got %T of %d", list, len(list))
	}
	prev := 0.0
	for i, d := range list {
		rep := d.(map[string]any)["report"].(map[string]any)
		par := rep["parallel"].(map[string]any)
		if tp := par["tp"].(float64); tp > 8 {
			t.Errorf("layout %d: TP %g beyond one node", i, tp)
		}
		if gb := rep["training"].(map[string]any)["global_batch"].(float64); gb != 1536 || par["gpus"].(float64) != 512 {
			t.Errorf("layout %d: global batch %g on %g GPUs, want 1536 on 512", i, gb, par["gpus"])
		}
		total := rep["iteration"].(map[string]any)["total_s"].(float64)
		if total < prev {
			t.Errorf("layout %d is faster than layout %d: not best first", i, i-1)
		}
		prev = total
		if again := rerun(t, d); !reflect.DeepEqual(d, again) {
			t.Errorf("layout %d: ddlest run of its document differs", i)
		}
	}
	out, errOut, code := execute("search", "megatron", "--model", "gpt3-175b", "--gpus", "512", "--top", "2", "--format", "csv")
	if code != 0 || strings.Count(out, "\n") != 3 || !strings.HasPrefix(out, "rank,workload,") {
		t.Errorf("search --format csv: exit %d, %q %s", code, out, errOut)
	}
	// Several sizes ranked by GPU-hours: the table names the measure, the sizes and the unfit one.
	out, errOut, code = execute("search", "megatron", "--model", "gpt3-13b", "--gpu-counts", "1,64,128", "--rank", "gpu-hours", "--top", "2")
	if code != 0 || !strings.Contains(out, "GPU-hours to train") || !strings.Contains(out, "on 1, 64, 128 GPUs; none fits on 1") {
		t.Errorf("search --gpu-counts --rank gpu-hours: exit %d, %q %s", code, out, errOut)
	}
	// Context parallelism and precision searched: the table gains the CP factor and a precision
	// column, and the best layout's document reruns to itself with what the search chose.
	h100 := []string{"search", "megatron", "--model", "llama3-8b", "--gpus", "16", "--global-batch", "32", "--seq", "4096",
		"--steps", "1", "--cluster", "dgx-h100", "--cps", "1,2", "--precisions", "bf16,fp8", "--top", "2"}
	out, errOut, code = execute(h100...)
	if code != 0 || !strings.Contains(out, "GPUs = DP × TP × CP × PP  precision") {
		t.Errorf("search --cps --precisions: exit %d, %q %s", code, out, errOut)
	}
	if list, ok := runJSON(t, h100...).([]any); !ok || len(list) != 2 {
		t.Errorf("search --cps --precisions --format json: %v", list)
	} else if again := rerun(t, list[0]); !reflect.DeepEqual(list[0], again) {
		t.Errorf("search --cps --precisions: ddlest run of the best's document differs")
	}
	for _, bad := range [][]string{{"--rank", "dollars"}, {"--gpu-counts", "64, 0"}, {"--gpu-counts", "64", "--gpus", "64"},
		{"--cps", "0"}, {"--precisions", "fp9"}, {"--precisions", "fp8"}} { // fp8 on the default A100 cluster
		_, errOut, code := execute(append([]string{"search", "megatron", "--model", "gpt3-13b"}, bad...)...)
		if code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, bad[1]) {
			t.Errorf("search %v: exit %d, %q; want one line naming %s, exit 2", bad, code, errOut, bad[1])
		}
	}
}

// TestCompareCLI: compare's numbers are the single commands' (each entry's document equals the
// workload command's JSON on the same cluster and network).
func TestCompareCLI(t *testing.T) {
	list := runJSON(t, "compare", "gpt3", "--cluster", "dgx-a100", "--nets", "superpod,torus", "--baseline", "torus").([]any)
	if len(list) != 2 {
		t.Fatalf("%d entries, want 2", len(list))
	}
	var totals [2]float64
	for i, net := range []string{"superpod", "torus"} {
		e := list[i].(map[string]any)
		single := runJSON(t, "gpt3", "--cluster", "dgx-a100", "--net", net)
		if !reflect.DeepEqual(e["run"], single) {
			t.Errorf("compare entry %s differs from `ddlest gpt3 --cluster dgx-a100 --net %s`", net, net)
		}
		totals[i] = e["run"].(map[string]any)["report"].(map[string]any)["iteration"].(map[string]any)["total_s"].(float64)
	}
	// speed-up = baseline iteration / iteration: torus is the baseline.
	if s := list[0].(map[string]any)["speedup"].(float64); s != totals[1]/totals[0] {
		t.Errorf("superpod speed-up %g, want torus/superpod = %g", s, totals[1]/totals[0])
	}
	if s := list[1].(map[string]any)["speedup"].(float64); s != 1 {
		t.Errorf("baseline speed-up %g, want 1", s)
	}
	png := filepath.Join(t.TempDir(), "compare.png")
	out, _, code := execute("compare", "megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "24", "--clusters", "dgx-a100,dgx-h100", "--plot", png)
	if code != 0 || !strings.Contains(out, "dgx-h100") {
		t.Errorf("compare --clusters: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(png); err != nil || len(b) < 8 || string(b[1:4]) != "PNG" {
		t.Errorf("compare --plot: no PNG written (%v)", err)
	}
}

// Compare entries may be network presets with their own parameters; --net-param applies to
// every entry. Each entry's document equals the single command's (ODDL's three baselines).
func TestCompareNetworkPresets(t *testing.T) {
	job := []string{"dp", "--model", "resnet50", "--gpus", "64", "--batch", "16", "--gpu", "rtx2080ti", "--net-param", "nic_gbps=200"}
	list := runJSON(t, append(append([]string{"compare"}, job...), "--nets", "oddl,sip-ring,oddl-ft:strategy=hd")...).([]any)
	singles := [][]string{
		{"--net", "oddl"},
		{"--net-preset", "sip-ring"},
		{"--net-preset", "oddl-ft", "--strategy", "hd"},
	}
	if len(list) != len(singles) {
		t.Fatalf("%d entries, want %d", len(list), len(singles))
	}
	for i, extra := range singles {
		single := runJSON(t, append(append([]string{}, job...), extra...)...)
		if e := list[i].(map[string]any); !reflect.DeepEqual(e["run"], single) {
			t.Errorf("compare entry %v differs from the single command with %v", e["entry"], extra)
		}
	}
}

// TestSweepCLI: a sweep file and the same grid as flags give the same rows; 1 and 2 workers give
// the same rows; --out leaves only the file.
func TestSweepCLI(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(file, []byte(`job: {workload: megatron, model: gpt3-175b, execution: {gpus: 64}}
grid:
  execution.tp: [2, 4, 8]
  execution.pp: [3, 8, 16]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, errOut, code := execute("sweep", file, "--workers", "1")
	if code != 0 {
		t.Fatalf("sweep FILE: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "9 points") {
		t.Errorf("sweep summary %q, want 9 points", errOut)
	}
	lines := strings.Split(strings.TrimSpace(fromFile), "\n")
	if len(lines) != 10 || !strings.HasPrefix(lines[0], "grid.execution.tp,grid.execution.pp,status,reason,") {
		t.Fatalf("sweep FILE: %d lines, header %q", len(lines), lines[0])
	}
	// PP 3 does not divide 64 GPUs: invalid, with the reason.
	if !strings.HasPrefix(lines[1], "2,3,invalid,") {
		t.Errorf("row 1 = %q, want TP 2 × PP 3 invalid", lines[1])
	}
	out := filepath.Join(dir, "rows.csv")
	_, errOut, code = execute("sweep", "megatron", "--model", "gpt3-175b", "--gpus", "64", "--grid", "execution.tp=2,4,8",
		"--grid", "execution.pp=3,8,16", "--workers", "2", "--out", out)
	if code != 0 {
		t.Fatalf("sweep megatron: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != fromFile {
		t.Errorf("sweep with flags and 2 workers differs from the file's with 1:\n%s\n---\n%s", b, fromFile)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("sweep left %d entries in its directory, want sweep.yaml and rows.csv", len(entries))
	}

	// The same rows as parquet: read back, every cell equals the CSV's (nulls where it is empty).
	pq := filepath.Join(dir, "rows.parquet")
	if _, errOut, code := execute("sweep", file, "--out", pq); code != 0 {
		t.Fatalf("sweep --out .parquet: exit %d: %s", code, errOut)
	}
	f, err := os.Open(pq)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := parquet.NewReader(f)
	recs, _ := csv.NewReader(strings.NewReader(fromFile)).ReadAll()
	if n := r.NumRows(); n != int64(len(recs)-1) {
		t.Fatalf("parquet has %d rows, CSV %d", n, len(recs)-1)
	}
	fields := r.Schema().Fields()
	for i := 1; i < len(recs); i++ {
		row := map[string]any{}
		if err := r.Read(&row); err != nil {
			t.Fatal(err)
		}
		for j, name := range recs[0] {
			got, ok := row[name]
			if !ok {
				t.Fatalf("parquet lacks column %s (has %d)", name, len(fields))
			}
			want := recs[i][j]
			if got == nil {
				if want != "" {
					t.Errorf("row %d %s: null, CSV %q", i, name, want)
				}
				continue
			}
			if s := cellText(got); s != want {
				t.Errorf("row %d %s: parquet %q, CSV %q", i, name, s, want)
			}
		}
	}
}

// cellText writes a parquet value as the CSV writes it (rows.Cell.String).
func cellText(v any) string {
	switch x := v.(type) {
	case float64:
		return rows.Cell{Kind: rows.Float, Num: x}.String()
	case int64:
		return rows.Cell{Kind: rows.Int, Num: float64(x)}.String()
	case bool:
		return rows.Cell{Kind: rows.Bool, Num: float64(map[bool]int{true: 1}[x])}.String()
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// TestExploreBadInput: one line, the right exit code.
func TestExploreBadInput(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	_ = os.WriteFile(bad, []byte("job: {workload: megatron}\ngrid:\n  execution.tq: [1]\n"), 0o644)
	badTP := filepath.Join(t.TempDir(), "tp.yaml")
	_ = os.WriteFile(badTP, []byte("workload: megatron\nmodel: gpt3-175b\nexecution: {tp: 5, gpus: 480}\n"), 0o644)
	unknown := filepath.Join(t.TempDir(), "unknown.yaml")
	_ = os.WriteFile(unknown, []byte("job: {workload: megatron}\ngirds: {}\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"search", "megatron", "--model", "gpt3-175b", "--gpus", "8"}, 3, []string{"none of the", "fits", "over"}},
		{[]string{"search", "megatron", "--model", "gpt3-175b", "--gpus", "512", "--top", "0"}, 2, []string{"--top 0"}},
		{[]string{"sweep", "megatron", "--grid", "execution.tq=1,2"}, 2, []string{"execution.tq"}},
		{[]string{"sweep", "megatron", "--grid", "dp_bucket_bytes=2us"}, 2, []string{"2us"}},
		{[]string{"sweep", "megatron", "--grid", "tp"}, 2, []string{`"tp"`, "key=v1,v2"}},
		{[]string{"sweep", "megatron"}, 2, []string{"--grid"}},
		{[]string{"sweep", bad}, 2, []string{"execution.tq"}},
		{[]string{"sweep", unknown}, 2, []string{"girds", "unknown.yaml:2"}},
		// A job file's errors name its keys, not flags.
		{[]string{"run", badTP}, 2, []string{"tp.yaml", "execution.tp 5 does not divide the 96 heads"}},
		{[]string{"sweep", "megatron", "--grid", "tp=1", "--out", "x.tsv"}, 2, []string{"x.tsv", ".csv or .parquet"}},
		{[]string{"compare", "gpt3"}, 2, []string{"--nets", "--clusters"}},
		{[]string{"search", "dp"}, 2, []string{`"dp"`, "megatron"}},
		{[]string{"compare"}, 2, []string{"needs a workload", "dlrm"}},
		{[]string{"compare", "gpt3", "--nets", "ideal,torus,ideal"}, 2, []string{"ideal is listed twice"}},
		{[]string{"trace", "inspect"}, 2, []string{`"inspect"`, "import, show"}},
		{[]string{"collective", "--cluster", "dgx-z"}, 2, []string{"dgx-z", "dgx-a100"}},
		{[]string{"compare", "gpt3", "--nets", "superpod,warp"}, 2, []string{"warp"}},
		// Software presets: an unknown one lists them; a setting it lacks is named by its flag.
		{[]string{"megatron", "--model", "gpt3-175b", "--software", "megatron-2025"}, 2, []string{"megatron-2025", "megatron-2021, megatron-2022, megatron-core, deepspeed"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "16", "--dp", "8", "--software", "megatron-2021", "--seq-parallel"}, 2, []string{"--seq-parallel true", "megatron-2021 does not support it"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "16", "--dp", "8", "--software", "megatron-core", "--pp-partition", "embedding-slot"}, 2, []string{"--pp-partition embedding-slot", "megatron-core does not support it"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "16", "--dp", "8", "--software", "deepspeed", "--pp-partition", "embedding-slot"}, 2, []string{"--pp 16 does not divide the 96 layers + embedding + head = 98 slots"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "16", "--dp", "8", "--pp-partition", "even"}, 2, []string{"even", "uniform, embedding-slot"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "4", "--grad-accum", "bogus"}, 2, []string{"bogus", "gemm, add, cast-add"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "4", "--tp-comm-overlap"}, 2, []string{"--tp-comm-overlap", "needs --seq-parallel"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "4", "--attention", "bogus"}, 2, []string{"bogus", "standard, flash"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "4", "--attention", "flash", "--gpu", "v100"}, 2, []string{"GPU v100 has no measured FlashAttention efficiency", "measured: a100-80gb"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "4", "--attention", "flash", "--precision", "tf32"}, 2, []string{"--attention flash runs in fp16 or bf16"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "4", "--software", "deepspeed", "--precision", "bf16", "--attention", "flash"}, 2, []string{"--attention flash: software deepspeed does not support it"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "4", "--software", "megatron-2022", "--seq-parallel", "--tp-comm-overlap"}, 2, []string{"--tp-comm-overlap true: software megatron-2022 does not support it"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "4", "--optimizer-step", "deepspeed"}, 2, []string{"--optimizer-step deepspeed", "--precision bf16 with --fp32-grad-reduce"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "4", "--software", "deepspeed", "--precision", "fp16"}, 2, []string{"--precision fp16: software deepspeed does not support it"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--dp", "4", "--software", "megatron-core", "--optimizer-step", "fused"}, 2, []string{"--optimizer-step fused: software megatron-core does not support it"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "16", "--dp", "8", "--software", "deepspeed", "--seq-parallel"}, 2, []string{"--seq-parallel true", "deepspeed does not support it", "Megatron-DeepSpeed"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--tp", "8", "--pp", "8", "--interleave", "2", "--dp", "8", "--software", "deepspeed"}, 2, []string{"--interleave 2", "deepspeed"}},
		{[]string{"megatron", "--model", "gpt3-175b", "--gemm", "shape", "--gpu", "v100"}, 2, []string{"--gemm shape", `"v100"`}},
		{[]string{"compare", "gpt3", "--clusters", "dgx-a100,dgx-z"}, 2, []string{"dgx-z", "dgx-h100"}},
		{[]string{"compare", "gpt3", "--nets", "superpod,torus", "--baseline", "ideal"}, 2, []string{"ideal", "superpod, torus"}},
	} {
		_, errOut, code := execute(c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", c.args, code, c.code, errOut)
			continue
		}
		if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: error is not one line: %q", c.args, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q does not name %q", c.args, errOut, w)
			}
		}
	}
}

// TestRAMPLayoutDefault: on the RAMP paper's system the target-loss jobs keep the paper's own
// layout rule (the cluster's auto_layout), reproducing RAMP Table 9's MP, DP, GPUs and global
// batch (rows CE 2.2, 1.8 and 1.5 as printed: 4 × 32 = 128 GPUs, batch 4,896; 32 × 64 = 2,048,
// 10,880; 512 × 128 = 65,536, 14,080); elsewhere the default is the layout search.
func TestRAMPLayoutDefault(t *testing.T) {
	for _, row := range []struct {
		loss             string
		mp, dp, gpus, gb float64
	}{{"2.2", 4, 32, 128, 4896}, {"1.8", 32, 64, 2048, 10880}, {"1.5", 512, 128, 65536, 14080}} {
		doc := runJSON(t, "megatron", "--loss", row.loss, "--net", "ramp").(map[string]any)
		if named := runJSON(t, "megatron", "--loss", row.loss, "--net", "ramp", "--layout", "ramp").(map[string]any); !reflect.DeepEqual(named["report"], doc["report"]) {
			t.Errorf("CE %s: --layout ramp differs from the RAMP cluster's default layout", row.loss)
		}
		rep := doc["report"].(map[string]any)
		par := rep["parallel"].(map[string]any)
		gb := rep["training"].(map[string]any)["global_batch"].(float64)
		if par["tp"] != row.mp || par["dp"] != row.dp || par["gpus"] != row.gpus || gb != row.gb {
			t.Errorf("CE %s on ramp: TP %v DP %v GPUs %v batch %v; RAMP Table 9: %g %g %g %g", row.loss,
				par["tp"], par["dp"], par["gpus"], gb, row.mp, row.dp, row.gpus, row.gb)
		}
		if _, searched := rep["search"]; searched {
			t.Errorf("CE %s on ramp: searched; the RAMP cluster's layout is the paper's rule", row.loss)
		}
		// The Table 9 row as a model preset: the same layout, without the embedding (§7.3).
		pre := runJSON(t, "megatron", "--model", "ramp-ce"+row.loss, "--net", "ramp").(map[string]any)["report"].(map[string]any)
		pp := pre["parallel"].(map[string]any)
		if pp["tp"] != row.mp || pp["dp"] != row.dp || pre["model"].(map[string]any)["vocab"].(float64) != 0 {
			t.Errorf("model preset ramp-ce%s: TP %v DP %v vocab %v; RAMP Table 9: %g %g, no embedding", row.loss, pp["tp"], pp["dp"],
				pre["model"].(map[string]any)["vocab"], row.mp, row.dp)
		}
	}
	rep := runJSON(t, "megatron", "--loss", "1.8").(map[string]any)["report"].(map[string]any)
	if _, searched := rep["search"]; !searched {
		t.Error("megatron --loss 1.8 on the default cluster did not search its layout")
	}
	if tp := rep["parallel"].(map[string]any)["tp"].(float64); tp > 8 {
		t.Errorf("megatron --loss 1.8 on DGX A100: TP %g spans nodes; the NVLink node has 8 GPUs", tp)
	}
}

// TestCollectiveOnCluster: collective --cluster prices on the cluster's network with its GPU
// reducing; inside one DGX node the all-reduce runs on NVLink, faster on the H100's NVLink4
// (900 GB/s per GPU, DGX H100 datasheet) than on the A100's NVLink3 (600 GB/s).
func TestCollectiveOnCluster(t *testing.T) {
	bus := func(cluster string) (float64, string) {
		rows := runJSON(t, "collective", "--op", "all-reduce", "--size", "1GB", "--gpus", "8", "--cluster", cluster).([]any)
		r := rows[0].(map[string]any)
		return r["busbw_bytes_per_s"].(float64), r["bottleneck"].(string)
	}
	a, where := bus("dgx-a100")
	h, _ := bus("dgx-h100")
	if where != "nvlink" || !(h > a) {
		t.Errorf("8-GPU all-reduce: A100 %g B/s (bottleneck %s), H100 %g B/s; want NVLink, H100 faster", a, where, h)
	}
}

// TestCostOnCluster prices a cluster preset's network: hx4-small's bill is HammingMesh App. A-C's
// per-plane 16 switches, 512 DAC and 512 AoC at $14,280 / $272 / $603 over 4 planes =
// $2,705,920 (reference hammingmesh.md §3.3); an unknown cluster is one line, exit 2.
func TestCostOnCluster(t *testing.T) {
	doc := runJSON(t, "cost", "--cluster", "hx4-small").(map[string]any)
	if got := doc["cost_usd"].(float64); got != 4*(16*14280+512*272+512*603) {
		t.Errorf("cost --cluster hx4-small: $%.0f, want $2,705,920", got)
	}
	if _, errOut, code := execute("cost", "--cluster", "nope"); code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "torus-large") {
		t.Errorf("unknown cluster: exit %d, %q; want one line listing the presets, exit 2", code, errOut)
	}
}

// TestREADMEExamples runs every `ddlest …` line of the README's shell blocks: the documented
// commands work (exit 0). Files they write go to a temporary folder; `> F` writes standard output
// there for the next lines that read F.
func TestREADMEExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every README example")
	}
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var lines []string
	inSh := false
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			inSh = true
		case strings.HasPrefix(l, "```"):
			inSh = false
		case inSh:
			if n := len(lines); n > 0 && strings.HasSuffix(lines[n-1], "\\") {
				lines[n-1] = strings.TrimSuffix(lines[n-1], "\\") + " " + strings.TrimSpace(l)
			} else {
				lines = append(lines, l)
			}
		}
	}
	ran := 0
	for _, l := range lines {
		if i := strings.Index(l, "#"); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(l)
		if len(f) == 0 || f[0] != "ddlest" {
			continue
		}
		var args []string
		stdout := ""
		for i := 1; i < len(f); i++ {
			switch {
			case f[i] == ">" && i+1 < len(f):
				stdout = filepath.Join(dir, f[i+1])
				i++
			case (f[i] == "--out" || f[i] == "--plot") && i+1 < len(f):
				args = append(args, f[i], filepath.Join(dir, f[i+1]))
				i++
			case strings.HasSuffix(f[i], ".json") && !strings.HasPrefix(f[i], "-"):
				args = append(args, filepath.Join(dir, f[i])) // a file an earlier line wrote
			default:
				args = append(args, f[i])
			}
		}
		out, errOut, code := execute(args...)
		if code != 0 {
			t.Errorf("README: %s: exit %d: %s", strings.TrimSpace(l), code, errOut)
			continue
		}
		if stdout != "" {
			if err := os.WriteFile(stdout, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ran++
	}
	if ran < 20 {
		t.Errorf("ran %d README examples; the README has more", ran)
	}
}

// TestREADMEAccuracy: README's accuracy tables are validate --format markdown (the papers) and
// validate --measured --format markdown.
func TestREADMEAccuracy(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, args := range [][]string{{"validate"}, {"validate", "--measured"}} {
		name := strings.Join(args, " ")
		start, end := "<!-- "+name+" -->\n", "<!-- end "+name+" -->"
		i, j := strings.Index(s, start), strings.Index(s, end)
		if i < 0 || j < i {
			t.Fatalf("README has no %s section", name)
		}
		out, errOut, code := execute(append(args, "--format", "markdown")...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		if got := s[i+len(start) : j]; got != out {
			t.Errorf("README's table differs from %s --format markdown; paste:\n%s", name, out)
		}
	}
}

// TestValidateSeeds: every format lists every row of the seeds asked for, with the known RAMP
// deviations and their reasons, never a non-finite number; the exit status is 0 while no row
// fails.
func TestValidateSeeds(t *testing.T) {
	for _, f := range []string{"table", "json", "csv", "markdown"} {
		out, errOut, code := execute("validate", "--seed", "ramp", "--format", f)
		if code != 0 || strings.Contains(out, "NaN") || strings.Contains(out, "Inf") || strings.Contains(out, "hammingmesh/") {
			t.Errorf("%s: exit %d %s\n%s", f, code, errOut, out)
		}
		for _, want := range []string{"fig16-max-speedup", "fig16-dp-speedup", "fig17-speedup-topoopt", "fig17-ft-overhead-256", "fig20-compute-share",
			"fig19-superpod-broadcast-growth", "fig19-alltoall-max", "fig21-hier-10gb", "table4-superpod-power", "compute-bound"} {
			if f != "markdown" && !strings.Contains(out, want) {
				t.Errorf("%s: no %s", f, want)
			}
		}
	}
	out, _, code := execute("validate", "--seed", "hammingmesh")
	if code != 0 || !strings.Contains(out, "hammingmesh/gpt3-torus-small") || !strings.Contains(out, "0 fail") {
		t.Errorf("hammingmesh: exit %d\n%s", code, out)
	}
}

// TestValidateMeasured: every format renders every row; bad usage exits 2 with one line.
func TestValidateMeasured(t *testing.T) {
	for _, f := range []string{"table", "json", "csv", "markdown"} {
		out, errOut, code := execute("validate", "--measured", "--format", f)
		if code != 0 || !strings.Contains(out, "nccl-tests#119") || strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
			t.Errorf("%s: exit %d %s\n%s", f, code, errOut, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "--seed", "nope"}, `--seed "nope" is not a seed paper; valid: ramp, hammingmesh, wrht, oddl, sipac`},
		{[]string{"validate", "--seed", "ramp", "--measured"}, "give --seed or --measured, not both"},
		{[]string{"validate", "--measured", "--format", "xml"}, `--format "xml" is not valid; valid: table, json, csv, markdown`},
		{[]string{"collective", "--cluster", "dgx-a100", "--net-param", "nccl=blackwell"}, `nccl "blackwell" is not valid; valid: off, volta, ampere, hopper`},
		{[]string{"collective", "--net-preset", "sipac-superpod", "--net-param", "nccl=ampere"}, "it needs routed=false"},
	} {
		_, errOut, code := execute(c.args...)
		want := 2
		if strings.Contains(c.want, "no row") {
			want = 3 // a valid seed whose rows are not in the table yet
		}
		if code != want || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want %d and %q on one line", c.args, code, errOut, want, c.want)
		}
	}
}
