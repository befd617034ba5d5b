package main

import (
	"bytes"
	"encoding"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ddlest/ddlest/job"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func execute(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return o.String(), e.String(), code
}

// explicitArgs is a GPT-3 175B-like Megatron configuration (Narayanan et al. 2021 Table 1 shape:
// 96 layers, hidden 12288, 96 heads, TP 8, PP 8 with 2 interleaved chunks).
var explicitArgs = []string{"megatron", "--layers", "96", "--hidden", "12288", "--heads", "96", "--seq", "2048",
	"--global-batch", "1536", "--micro-batch", "1", "--tp", "8", "--pp", "8", "--dp", "24", "--interleave", "2",
	"--seq-parallel", "--recompute", "selective", "--precision", "bf16", "--tokens", "300e9", "--gpu", "a100-80gb",
	"--net", "alphabeta", "--net-bw", "200Gbps"}

func TestGolden(t *testing.T) {
	cases := []struct {
		name string
		args []string
	}{
		{"megatron_loss1.8_ideal.txt", []string{"megatron", "--loss", "1.8", "--cluster", "ramp-65536", "--net", "ideal"}},
		{"megatron_loss1.8_ideal.json", []string{"megatron", "--loss", "1.8", "--cluster", "ramp-65536", "--net", "ideal", "--format", "json"}},
		{"megatron_explicit.txt", explicitArgs},
		{"megatron_explicit.json", append(append([]string(nil), explicitArgs...), "--format", "json")},
		{"megatron_explicit.csv", append(append([]string(nil), explicitArgs...), "--format", "csv")},
		{"collective_ramp.txt", []string{"collective", "--op", "all", "--size", "1GB", "--gpus", "65536", "--net", "ramp"}},
		{"collective_sweep.json", []string{"collective", "--op", "all-reduce", "--sizes", "1MB,1GB", "--gpus", "16,4096", "--net", "superpod", "--format", "json"}},
		{"cost_ramp.txt", []string{"cost", "--net", "ramp"}},
		{"cost_superpod.json", []string{"cost", "--net", "superpod", "--format", "json"}},
		{"gpus.txt", []string{"gpus"}},
		{"nets.txt", []string{"nets"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkGolden(t, c.name, c.args) })
	}
}

// checkGolden runs the command and compares its stdout with testdata/name.golden (rewritten
// with -update).
func checkGolden(t *testing.T, name string, args []string) {
	t.Helper()
	out, errOut, code := execute(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/ddlest -update)", err)
	}
	if out != string(want) {
		t.Errorf("output differs from %s (go test ./cmd/ddlest -update rewrites it): %s", path, firstDiff(out, string(want)))
	}
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n got: %q\nwant: %q", i+1, a, b)
		}
	}
	return "same lines, different endings"
}

// A model preset's training length (gpt3-1.3b: 300B tokens, configs/models.json) is replaced by
// the steps or tokens a later layer gives: flags, --set, a job file, a sweep's grid.
func TestPresetTrainingLength(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "job.json")
	if err := os.WriteFile(file, []byte(`{"workload": "megatron", "model": "gpt3-1.3b", "execution": {"steps": 2}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// 1,048,576 tokens = one step of 512 sequences × 2,048 tokens (Brown et al. Table 2.1).
	for _, c := range []struct {
		args  []string
		steps float64
	}{
		{[]string{"megatron", "--model", "gpt3-1.3b", "--steps", "1"}, 1},
		{[]string{"megatron", "--model", "gpt3-1.3b", "--tokens", "1048576"}, 1},
		{[]string{"megatron", "--model", "gpt3-1.3b", "--set", "execution.steps=3"}, 3},
		{[]string{"megatron", "--model", "gpt3-1.3b", "--steps", "5", "--set", "tokens=2097152"}, 2},
		{[]string{"run", file}, 2},
	} {
		out, errOut, code := execute(append(c.args, "--format", "json")...)
		if code != 0 {
			t.Errorf("%v: exit %d: %s", c.args, code, errOut)
			continue
		}
		var doc struct {
			Report struct {
				Training struct {
					Steps float64 `json:"steps"`
				} `json:"training"`
			} `json:"report"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if doc.Report.Training.Steps != c.steps {
			t.Errorf("%v: %g steps, want %g", c.args, doc.Report.Training.Steps, c.steps)
		}
	}
	// The preset alone keeps its 300B tokens: ⌈300e9 / 1,048,576⌉ = 286,103 steps.
	out, _, _ := execute("megatron", "--model", "gpt3-1.3b", "--format", "json")
	if !strings.Contains(out, `"steps": 286103`) {
		t.Errorf("gpt3-1.3b without a length: want 286103 steps from its 300B tokens")
	}
}

// The JSON contract: the stable keys exist, and the CE 1.8 row reaches the CLI as RAMP Table 9
// has it (64 heads, MP 32, DP 64, 2048 GPUs, global batch 10880) with the closed-form parameters.
func TestMegatronJSONContract(t *testing.T) {
	out, errOut, code := execute("megatron", "--loss", "1.8", "--cluster", "ramp-65536", "--net", "ideal", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var top map[string]any
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"workload", "model", "execution", "cluster"} {
		if _, ok := top[k]; !ok {
			t.Errorf("job key %q missing", k)
		}
	}
	doc, _ := top["report"].(map[string]any)
	want := map[string][]string{
		"model":       {"params", "layers", "hidden", "heads", "seq", "vocab"},
		"training":    {"global_batch", "micro_batch", "steps", "tokens"},
		"parallel":    {"gpus", "dp", "tp", "pp", "interleave", "seq_parallel", "recompute"},
		"iteration":   {"compute_s", "exposed_comm_s", "bubble_s", "total_s", "comm_fraction"},
		"throughput":  {"tokens_per_s", "hw_tflops_per_gpu", "model_tflops_per_gpu", "mfu"},
		"memory":      {"weights_bytes", "grads_bytes", "optimizer_bytes", "activations_bytes", "total_bytes", "capacity_bytes"},
		"collectives": {"kind", "dim", "bytes", "group", "count", "time_s", "exposed_s"},
	}
	for sec, keys := range want {
		obj, ok := doc[sec].(map[string]any)
		if sec == "collectives" {
			list, _ := doc[sec].([]any)
			if len(list) == 0 {
				t.Fatalf("no collectives")
			}
			obj, ok = list[0].(map[string]any)
		}
		if !ok {
			t.Fatalf("missing section %q", sec)
		}
		for _, k := range keys {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s.%s missing", sec, k)
			}
		}
	}
	if _, ok := doc["time_to_accuracy_s"].(float64); !ok {
		t.Error("time_to_accuracy_s missing")
	}
	num := func(sec, key string) float64 { return doc[sec].(map[string]any)[key].(float64) }
	for _, c := range []struct {
		sec, key string
		want     float64
	}{
		{"model", "heads", 64}, {"model", "hidden", 6144}, {"model", "layers", 71},
		{"parallel", "tp", 32}, {"parallel", "dp", 64}, {"parallel", "gpus", 2048}, {"training", "global_batch", 10880},
	} {
		if got := num(c.sec, c.key); got != c.want {
			t.Errorf("%s.%s = %g, RAMP Table 9 says %g", c.sec, c.key, got, c.want)
		}
	}
	// n_layer·(12d² + 13d) (reference/ramp.md §5.3); Table 9's 32.2B is row
	// ramp/table9-loss-1.8-params of the reproduction table.
	if got, want := num("model", "non_embedding_params"), 71*(12*6144*6144+13*6144.0); got != want {
		t.Errorf("non-embedding params %g, want 71·(12·6144² + 13·6144) = %g", got, want)
	}
	// The ideal network costs nothing: all of the iteration is compute.
	if num("iteration", "exposed_comm_s") != 0 || num("iteration", "compute_s") != num("iteration", "total_s") {
		t.Errorf("ideal network: %v", doc["iteration"])
	}
}

func TestCSV(t *testing.T) {
	out, _, code := execute(append(append([]string(nil), explicitArgs...), "--format", "csv")...)
	if code != 0 {
		t.Fatal(code)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 2 || len(recs[0]) != len(recs[1]) {
		t.Fatalf("csv: %v %v", recs, err)
	}
	row := map[string]string{}
	for i, k := range recs[0] {
		row[k] = recs[1][i]
	}
	// 300e9 tokens / (1536 × 2048) = 95367.4 → 95368 steps; 8 × 8 × 24 = 1536 GPUs.
	if row["steps"] != "95368" || row["gpus"] != "1536" || row["mode"] != "explicit" {
		t.Errorf("csv row %v", row)
	}
}

// Bad input: a one-line error naming the bad value, exit code 2 (3 for an infeasible plan), no
// stack trace, nothing on stdout.
func TestBadInput(t *testing.T) {
	explicit := []string{"megatron", "--layers", "2", "--hidden", "4096", "--heads", "64", "--global-batch", "8", "--steps", "10"}
	cases := []struct {
		args []string
		code int
		want []string
	}{
		// Issue 15's reliability contract: wrong answers that used to exit 0, and errors that
		// named no flag or exited 1.
		{[]string{"moe", "--experts", "0"}, 2, []string{"--experts 0", "at least 1 expert"}},
		{[]string{"gpt3", "--steps", "1e300"}, 2, []string{"--steps 1e+300 is too large", "+Inf"}},
		{[]string{"gpt3", "--steps", "1e300", "--format", "json"}, 2, []string{"--steps 1e+300 is too large"}},
		{[]string{"collective", "--sizes", "1GB,,1MB", "--gpus", "8"}, 2, []string{`"1GB,,1MB"`, "item 2 is empty"}},
		{[]string{"collective", "--gpus", "8,", "--size", "1MB"}, 2, []string{"--gpus", "item 2 is empty"}},
		{[]string{"completion", "foo"}, 2, []string{`no shell "foo"`, "bash, fish, powershell, zsh"}},
		{[]string{"completion"}, 2, []string{"needs a shell"}},
		{[]string{"trace", "import"}, 2, []string{"trace import takes TRACE.json", "got 0"}},
		{[]string{"trace", "show", "a.parquet", "b.parquet"}, 2, []string{"trace show takes FILE.parquet", "got 2"}},
		{[]string{"run"}, 2, []string{"job file"}},
		{[]string{"megatron", "--loss", "0"}, 2, []string{"--loss", "> 0"}},
		{[]string{"megatron", "--loss", "-1"}, 2, []string{"--loss -1"}},
		{[]string{"megatron", "--loss", "abc"}, 2, []string{`"abc"`, "--loss", "is not a number"}},
		{[]string{"megatron", "--loss", "1.8", "--net", "ramp2"}, 2, []string{`"ramp2"`, "ideal, alphabeta, ramp, superpod, torus, topoopt"}},
		{[]string{"megatron", "--loss", "1.8", "--gpu", "b300"}, 2, []string{`"b300"`, "ramp-a100"}},
		{append(explicit, "--tp", "3"), 2, []string{"--tp 3", "64 heads", "valid: 1, 2, 4, 8, 16, 32, 64"}},
		{append(explicit, "--tp", "0"), 2, []string{"--tp 0"}},
		{[]string{"megatron", "--model", "llama3-8b", "--tp", "16", "--dp", "4"}, 2, []string{"--tp 16 does not divide the 8 kv heads", "valid: 1, 2, 4, 8"}},
		{[]string{"megatron", "--model", "llama3-8b", "--kv-heads", "5"}, 2, []string{"--kv-heads 5 does not divide the 32 heads"}},
		{[]string{"megatron", "--model", "llama3-405b", "--pp", "16", "--pp-first-layers", "7", "--software", "deepspeed"}, 2, []string{"--pp-first-layers 7", "software deepspeed does not support it"}},
		{[]string{"megatron", "--model", "llama3-405b", "--pp", "16", "--pp-first-layers", "7"}, 2, []string{"--pp-first-layers 7 and --pp-last-layers 0 leave 119 of the 126 layers to 15 stages"}},
		{[]string{"megatron", "--model", "llama3-8b", "--mlp", "geglu"}, 2, []string{`"geglu"`, "gelu, swiglu"}},
		{[]string{"megatron", "--model", "llama3-8b", "--gpus", "64", "--tp", "4", "--precision", "fp8", "--cluster", "dgx-a100"}, 2, []string{"--precision fp8", "a100-80gb has no fp8 tensor peak"}},
		{[]string{"dp", "--model", "resnet50", "--precision", "fp8"}, 2, []string{"--precision fp8", "modelled for transformers", "valid: fp16, bf16, fp32, tf32"}},
		{[]string{"moe", "--precision", "fp8"}, 2, []string{"--precision fp8", "a100-80gb has no fp8 tensor peak"}},
		{[]string{"megatron", "--model", "llama3-8b", "--gpus", "64", "--cp", "4", "--seq", "8196"}, 2, []string{"--cp 4 needs --seq 8196 to split into 2 × 4 = 8 equal chunks"}},
		{[]string{"megatron", "--model", "llama3-8b", "--gpus", "60", "--tp", "4", "--cp", "4"}, 2, []string{"--gpus 60 must be a multiple of --tp 4 × --cp 4 × --pp 1 = 16"}},
		{[]string{"moe", "--cp", "2"}, 2, []string{"--cp 2: context parallelism is modelled for dense layers"}},
		{[]string{"megatron", "--model", "llama3-8b", "--gpus", "64", "--pp", "2", "--zero", "2"}, 2, []string{"--zero 2", "it needs --pp 1", "incompatible with pipeline parallelism"}},
		{[]string{"megatron", "--model", "llama3-8b", "--gpus", "64", "--fsdp", "--zero", "2"}, 2, []string{"--fsdp is ZeRO stage 3; --zero 2 contradicts it"}},
		{[]string{"megatron", "--model", "llama3-8b", "--gpus", "64", "--zero", "3", "--software", "megatron-core"}, 2, []string{"--zero 3: software megatron-core does not support it", "valid with megatron-core: 0, 1"}},
		{[]string{"megatron", "--model", "llama3-8b", "--gpus", "64", "--zero", "5"}, 2, []string{"--zero 5 is not a ZeRO stage; valid: 0, 1, 2, 3"}},
		{[]string{"megatron", "--model", "llama3-8b", "--gpus", "64", "--recompute", "none", "--offload-layers", "32"}, 2, []string{"--offload-layers 32: offload 0 (none) to 31 layers"}},
		{[]string{"megatron", "--model", "llama3-8b", "--gpus", "64", "--offload-layers", "4"}, 2, []string{"--offload-layers 4 needs --recompute none"}},
		{[]string{"megatron", "--model", "llama3-8b", "--gpus", "64", "--pp", "2", "--recompute", "none", "--offload-layers", "4"}, 2, []string{"--offload-layers 4 needs --pp 1"}},
		{[]string{"megatron", "--model", "llama3-8b", "--gpus", "64", "--recompute", "none", "--offload-layers", "4", "--gpu", "v100", "--precision", "fp16"}, 2, []string{"--offload-layers 4: GPU v100 has no measured host-link rate", "measured: a100-40gb, a100-80gb, h100, h200"}},
		{[]string{"megatron", "--model", "llama3-8b", "--gpus", "64", "--recompute", "none", "--offload-layers", "4", "--software", "megatron-2022"}, 2, []string{"--offload-layers 4: software megatron-2022 does not support it"}},
		{[]string{"megatron", "--model", "llama3-8b", "--norm", "batchnorm"}, 2, []string{`"batchnorm"`, "layernorm, rmsnorm"}},
		{[]string{"megatron", "--loss", "1.8", "--tp", "4"}, 2, []string{"search layout chooses", "--tp", "layout explicit"}},
		{[]string{"megatron", "--loss", "1.8", "--net", "ramp", "--tp", "4"}, 2, []string{"ramp layout chooses", "--tp", "layout explicit"}},
		{[]string{"megatron", "--loss", "1.8", "--max-gpus", "0"}, 2, []string{"--max-gpus 0"}},
		{[]string{"megatron"}, 2, []string{"--loss"}},
		{[]string{"megatron", "--layers", "2"}, 2, []string{"--hidden", "--heads", "--global-batch"}},
		{explicit[:len(explicit)-2], 2, []string{"--steps", "--tokens"}},
		// the training length is steps or tokens: one per command line (a preset's is replaced)
		{[]string{"megatron", "--model", "gpt3-1.3b", "--steps", "1", "--tokens", "5e9"}, 2, []string{"--steps and --tokens exclude each other"}},
		{[]string{"sweep", "megatron", "--model", "gpt3-1.3b", "--grid", "steps=1,2", "--grid", "tokens=1e9"}, 2, []string{"--steps and --tokens are alternatives"}},
		{[]string{"sweep", "megatron", "--model", "gpt3-1.3b", "--grid", "tp=1", "--grid", "tp=2"}, 2, []string{"tp is swept twice"}},
		{[]string{"compare", "dp", "--nets", "oddl,nosuch"}, 2, []string{`"nosuch"`, "neither a network model", "oddl-ft", "hxmesh"}},
		{[]string{"compare", "dp", "--nets", "oddl,sip-ring", "--net", "ramp"}, 2, []string{"leave out --net and --net-preset"}},
		{[]string{"compare", "dp", "--nets", "oddl,oddl-ft:colour=red"}, 2, []string{"oddl-ft:colour=red", `"colour"`}},
		{[]string{"megatron", "--loss", "1.8", "--law", "gpt4"}, 2, []string{`"gpt4"`, "kaplan, chinchilla"}},
		{[]string{"megatron", "--loss", "1.6", "--law", "chinchilla"}, 2, []string{"1.69"}},
		{[]string{"megatron", "--loss", "1.8", "--recompute", "some"}, 2, []string{`"some"`, "none, selective, full"}},
		{[]string{"megatron", "--loss", "1.8", "--format", "xml"}, 2, []string{`"xml"`, "table, json, csv"}},
		{[]string{"megatron", "--loss", "1.8", "--net", "alphabeta", "--net-param", "bandwidth_gbit_per_s=fast"}, 2, []string{"fast"}},
		{[]string{"megatron", "--loss", "1.8", "--net", "alphabeta", "--net-param", "colour=red"}, 2, []string{`"colour"`, "latency_ns"}},
		{[]string{"megatron", "--loss", "1.8", "--net", "alphabeta", "--net-bw", "0Gbps"}, 2, []string{"--net-bw", `"0Gbps"`}},
		{[]string{"megatron", "--loss", "1.8", "--net-config", "/nonexistent.json"}, 2, []string{"/nonexistent.json"}},
		{[]string{"megatron", "--loss", "1.8", "--matmul-eff", "2"}, 2, []string{"--matmul-eff 2"}},
		{[]string{"megatron", "--loss", "1.8", "--gpu", "v100", "--precision", "bf16"}, 2, []string{"bf16", "fp16, fp32"}},
		{[]string{"megatron", "--loss", "1.8", "--dp-bucket", "-5MB"}, 2, []string{`"-5MB"`}},
		{[]string{"megatron", "--loss", "1.8", "extra"}, 2, []string{`"extra"`}},
		{[]string{"megatron", "--loss", "1.8", "--bogus"}, 2, []string{"--bogus"}},
		{[]string{"nosuchcommand"}, 2, []string{`"nosuchcommand"`}},
		{[]string{"collective", "--size", "0"}, 2, []string{"--size", `"0"`}},
		{[]string{"collective", "--size", "-1"}, 2, []string{`"-1"`}},
		{[]string{"collective", "--size", "abc"}, 2, []string{`"abc"`, "1GB, 1GiB"}},
		{[]string{"collective", "--gpus", "70000", "--net", "ramp"}, 2, []string{"70000", "65536"}},
		{[]string{"collective", "--gpus", "70000", "--net", "superpod"}, 2, []string{"70000", "65536"}},
		{[]string{"collective", "--gpus", "0"}, 2, []string{"--gpus"}},
		{[]string{"collective", "--op", "allreduce"}, 2, []string{`"allreduce"`, "all-reduce, reduce-scatter"}},
		{[]string{"collective", "--strategy", "fastest"}, 2, []string{`"fastest"`, "ring, biring, hierarchical"}},
		{[]string{"collective", "--strategy", "ramp", "--net", "topoopt", "--gpus", "64"}, 2, []string{"topoopt", "ramp", "valid: best, ring"}},
		{[]string{"collective", "--net", "alphabeta", "--node-tbps", "2.4"}, 2, []string{`"node_tbps"`, "bandwidth_gbit_per_s"}},
		{[]string{"collective", "--size", "8B:8GiB:x1"}, 2, []string{`"x1"`, "MIN:MAX:xFACTOR"}},
		{[]string{"collective", "--net", "sipac", "--gpus", "512", "--pattern", "one-to-many"}, 2, []string{`"one-to-many"`, "one-to-all", "all-to-one", "all-to-all"}},
		{[]string{"collective", "--net", "sipac", "--gpus", "512", "--pattern", "one-to-all", "--root", "512"}, 2, []string{"--root 512", "0–511"}},
		{[]string{"collective", "--net", "sipac", "--gpus", "1001"}, 2, []string{"1001", "1000 = 10^3", "1024 = 32^2"}},
		{[]string{"collective", "--net", "ramp", "--gpus", "512", "--pattern", "all-to-all"}, 2, []string{"ramp", "routed network"}},
		{[]string{"collective", "--net-param", "x=33", "--gpus", "16"}, 2, []string{"lambda 64 must be a multiple of x 33"}},
		{[]string{"collective", "--net-param", "lambda=128", "--gpus", "16"}, 3, []string{"optical power budget", "-21.2 dBm"}},
		// HammingMesh family (issue 8): presets, sizes, parameters, grids, groups.
		{[]string{"collective", "--net-preset", "hx5-small"}, 2, []string{`"hx5-small"`, "ft-small", "hx4-small", "torus-large"}},
		{[]string{"gpt3", "--net-preset", "nope"}, 2, []string{`"nope"`, "hx2-large"}},
		{[]string{"collective", "--net-preset", "hx4-small", "--net", "fattree"}, 2, []string{"hx4-small", "hxmesh", "fattree"}},
		// hx4-small: an 8×8 grid of 4×4 boards = 1024 accelerators (Table II).
		{[]string{"collective", "--net-preset", "hx4-small", "--gpus", "2048"}, 2, []string{"2048", "1024 accelerators"}},
		{[]string{"collective", "--net", "fattree", "--net-param", "taper=0", "--gpus", "64"}, 2, []string{"taper 0", "(0, 1]"}},
		{[]string{"collective", "--net", "fattree", "--net-param", "taper=1.5", "--gpus", "64"}, 2, []string{"taper 1.5", "(0, 1]"}},
		// a = 16, h = 8: a group has 128 global links, so at most 129 groups.
		{[]string{"collective", "--net", "dragonfly", "--net-param", "groups=200", "--gpus", "64"}, 2, []string{"200 groups", "128 global links", "at most 129"}},
		// 384 ranks on hx4-small fill 12×32 accelerators: 12 is not a multiple of 32 nor 32 of 12
		// with gcd(32, 11) = 1 (Bae et al.), so no pair of edge-disjoint Hamiltonian cycles exists.
		{[]string{"collective", "--gpus", "384", "--net-preset", "hx4-small", "--strategy", "rings"}, 2, []string{"rings", "12×32", "Hamiltonian"}},
		{[]string{"collective", "--gpus", "384", "--net-preset", "hx4-small", "--group", "4", "--stride", "128"}, 2, []string{"--group 4 --stride 128", "rank 384", "384 GPUs"}},
		{[]string{"collective", "--gpus", "384", "--group", "500"}, 2, []string{"--group 500", "384 GPUs"}},
		{[]string{"collective", "--stride", "-1"}, 2, []string{"--stride -1", "≥ 1"}},
		{[]string{"cost", "--table", "ramp"}, 2, []string{`"ramp"`, "hammingmesh"}},
		{[]string{"cost", "--net", "torus"}, 2, []string{"torus", "ramp, superpod"}},
		{[]string{"cost", "--capacity-tbps", "-1"}, 2, []string{"--capacity-tbps -1"}},
		// Valid but infeasible: GPT-3 175B on one V100 (exit 3, with the footprint).
		{[]string{"megatron", "--layers", "96", "--hidden", "12288", "--heads", "96", "--global-batch", "8", "--steps", "1", "--gpu", "v100"},
			3, []string{"does not fit", "weights", "capacity 34.4 GB"}},
		// Table 9's CE 1.0 model on 40 GB A100s without sequence parallelism.
		{[]string{"megatron", "--loss", "1.0", "--gpu", "a100-40gb"}, 3, []string{"does not fit"}},
	}
	for _, c := range cases {
		checkBadInput(t, c.args, c.code, c.want)
	}
}

// checkBadInput runs a command that must fail: exit code, a one-line "ddlest: " error that
// contains every wanted fragment, no stack trace, nothing on stdout.
func checkBadInput(t *testing.T, args []string, wantCode int, want []string) {
	t.Helper()
	out, errOut, code := execute(args...)
	name := strings.Join(args, " ")
	if code != wantCode {
		t.Errorf("%s: exit %d, want %d (stderr %q)", name, code, wantCode, errOut)
		return
	}
	if out != "" {
		t.Errorf("%s: wrote to stdout: %q", name, out)
	}
	if !strings.HasPrefix(errOut, "ddlest: ") || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "goroutine") {
		t.Errorf("%s: stderr is not one line: %q", name, errOut)
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			t.Errorf("%s: stderr %q lacks %q", name, errOut, w)
		}
	}
}

func TestNetworkConfigFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "net.json")
	os.WriteFile(good, []byte(`{"bandwidth_gbit_per_s": 400, "latency_ns": 1000}`), 0o644)
	out, errOut, code := execute("megatron", "--loss", "2.5", "--net", "alphabeta", "--net-config", good, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Report struct {
			Network struct{ Params map[string]any } `json:"network"`
		} `json:"report"`
	}
	json.Unmarshal([]byte(out), &doc)
	if p := doc.Report.Network.Params; p["bandwidth_gbit_per_s"] != 400.0 || p["latency_ns"] != 1000.0 {
		t.Errorf("params %v", p)
	}
	// --net-param overrides the file; --net-bw overrides both.
	out, _, _ = execute("megatron", "--loss", "2.5", "--net", "alphabeta", "--net-config", good, "--net-param", "latency_ns=5", "--net-bw", "800Gbps", "--format", "json")
	json.Unmarshal([]byte(out), &doc)
	if p := doc.Report.Network.Params; p["bandwidth_gbit_per_s"] != 800.0 || p["latency_ns"] != 5.0 {
		t.Errorf("overrides %v", p)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"bandwidth": 400}`), 0o644)
	_, errOut, code = execute("megatron", "--loss", "2.5", "--net", "alphabeta", "--net-config", bad)
	if code != 2 || !strings.Contains(errOut, `"bandwidth"`) {
		t.Errorf("unknown key in config: exit %d, %q", code, errOut)
	}
}

func TestCompletion(t *testing.T) {
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		out, errOut, code := execute("completion", sh)
		if code != 0 || !strings.Contains(out, "ddlest") {
			t.Errorf("completion %s: exit %d %q", sh, code, errOut)
		}
	}
	// Flag values complete from the registries.
	out, _, code := execute("__complete", "megatron", "--net", "")
	if code != 0 || !strings.Contains(out, "alphabeta") || !strings.Contains(out, "ideal") {
		t.Errorf("--net completion: %q", out)
	}
	out, _, _ = execute("__complete", "megatron", "--gpu", "")
	if !strings.Contains(out, "h100") {
		t.Errorf("--gpu completion: %q", out)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, _, code := execute(args...)
		if code != 0 || out != "ddlest version "+version+"\n" {
			t.Errorf("%v: %d %q", args, code, out)
		}
	}
}

// TestSubcommandTree: a command line that names a command builds it alone; help (`ddlest --help
// megatron` shows the root's help, which lists every command) and a line that names none (help,
// completion, a misspelt name) build every command; --version builds none. Each constructor is listed under
// its command's own name, so `named` finds it.
func TestSubcommandTree(t *testing.T) {
	for _, c := range subcommands {
		if got := c.build().Name(); got != c.name {
			t.Errorf("subcommands lists %s's constructor under %q", got, c.name)
		}
	}
	names := func(args ...string) (out []string) {
		for _, c := range newRootCommand(io.Discard, io.Discard, args).Commands() {
			out = append(out, c.Name())
		}
		return out
	}
	if got := names("megatron", "--loss", "1.8"); !slices.Equal(got, []string{"completion", "megatron"}) {
		t.Errorf("megatron --loss 1.8 builds %v, want megatron alone (and cobra's completion)", got)
	}
	if got := names("--version"); len(got) != 0 {
		t.Errorf("--version builds %v, want no command", got)
	}
	for _, args := range [][]string{nil, {"help"}, {"--help"}, {"-h"}, {"--help", "megatron"}, {"megatron", "-h"}, {"mgatron"}, {"completion", "bash"}, {"__complete", "megatron", ""}} {
		// 22 commands and cobra's completion (help is added when the tree executes).
		if got := names(args...); len(got) != len(subcommands)+1 {
			t.Errorf("%q builds %d commands %v, want all %d and completion", args, len(got), got, len(subcommands))
		}
	}
}

// TestNewcomerMessages: what a new user found (issue 9 item 7). An unknown command is one line
// with the suggestion and the valid commands; flag help names the value, not a command.
func TestNewcomerMessages(t *testing.T) {
	_, errOut, code := execute("mgatron")
	if code != 2 || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "; ;") ||
		!strings.Contains(errOut, "did you mean megatron?") || !strings.Contains(errOut, "valid: clusters") {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
	help, _, _ := execute("megatron", "--help")
	for _, want := range []string{"--cluster NAME", "--model NAME", "--net MODEL", "--net-param KEY=VALUE", "--gpus int"} {
		if !strings.Contains(help, want) {
			t.Errorf("megatron --help lacks %q", want)
		}
	}
	if strings.Contains(help, "--cluster ddlest") || strings.Contains(help, "--net ddlest") {
		t.Error("megatron --help shows a command as a flag's value name")
	}
}

// The built binary must start: an outdated go4.org/unsafe/assume-no-moving-gc (pulled in by
// gorgonia.org/tensor) panics at start-up on Go 1.26, which in-process tests would not see.
func TestBuiltBinaryStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildBinary(t, t.TempDir())
	out, err := exec.Command(bin, "megatron", "--loss", "1.8", "--format", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("binary failed: %v\n%s", err, out)
	}
	if !json.Valid(out) {
		t.Fatalf("binary printed invalid JSON:\n%s", out)
	}
	cmd := exec.Command(bin, "megatron", "--loss", "abc")
	out, _ = cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 2 || !strings.HasPrefix(string(out), "ddlest: ") {
		t.Errorf("bad input from the binary: exit %d, %q", cmd.ProcessState.ExitCode(), out)
	}
	newcomer(t, bin)
	interrupted(t, bin)
	interruptedImport(t, bin)
}

// interruptedImport: a trace import stopped by SIGINT while it spills sorted runs, or by SIGTERM
// while it writes the output, leaves nothing behind, neither in the output's directory nor in
// the temporary directory, and exits as a shell reports the signal (130, 143). The trace is synthetic: 600,000 kernel events,
// more than one sorted run (traces.ImportOptions.RunRows, 2^18), so the import spills.
func interruptedImport(t *testing.T, bin string) {
	t.Helper()
	dir := t.TempDir()
	trace := filepath.Join(dir, "in", "big.json")
	if err := os.MkdirAll(filepath.Dir(trace), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(`{"traceEvents": [`)
	for i := range 600_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"ph": "X", "cat": "kernel", "name": "k%d", "pid": 0, "tid": 7, "ts": %d, "dur": 1, "args": {"stream": 7, "device": 0}}`, i%97, 600_000-i)
	}
	b.WriteString("]}")
	if err := os.WriteFile(trace, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		out, tmp := filepath.Join(dir, "out"), filepath.Join(dir, "tmp")
		for _, d := range []string{out, tmp} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(bin, "trace", "import", trace, "-o", filepath.Join(out, "t.parquet"), "--quiet")
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// SIGINT once the spill file exists, SIGTERM once the output's temporary does.
		watch := map[os.Signal]string{os.Interrupt: tmp, syscall.SIGTERM: out}[sig]
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if entries, _ := os.ReadDir(watch); len(entries) > 0 {
				break
			}
		}
		_ = cmd.Process.Signal(sig)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Logf("%v: the import finished before the signal; nothing to check", sig)
			continue
		}
		if want := map[os.Signal]int{os.Interrupt: 130, syscall.SIGTERM: 143}[sig]; ee.ExitCode() != want {
			t.Errorf("%v: exit %d, want %d", sig, ee.ExitCode(), want)
		}
		for _, d := range []string{out, tmp} {
			if entries, _ := os.ReadDir(d); len(entries) != 0 {
				t.Errorf("%v: an interrupted import left %s in %s", sig, entries[0].Name(), d)
			}
		}
		os.RemoveAll(out)
		os.RemoveAll(tmp)
	}
}

// interrupted: a sweep stopped by SIGINT leaves nothing behind (no output file, no temp file).
func interrupted(t *testing.T, bin string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(bin, "sweep", "megatron", "--model", "gpt3-175b", "--out", filepath.Join(dir, "rows.parquet"),
		"--grid", "tp=1,2,4,8", "--grid", "pp=1,2,3,4,6,8,12,16,24,32,48,96", "--grid", "dp=1,2,4,8,16,32,64,128,256,512",
		"--grid", "micro_batch=1,2,4,8", "--grid", "recompute=none,selective,full", "--grid", "seq_parallel=false,true",
		"--grid", "global_batch=512,1024,1536,2048")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if err == nil {
		t.Log("the sweep finished before the interrupt; nothing to check")
		return
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("an interrupted sweep left %d files (%s)", len(entries), entries[0].Name())
	}
}

// readmeGPT3 is the README's explicit GPT-3 175B example (Narayanan et al. SC'21's layout:
// TP 8 × PP 8 × DP 24 on 1,536 GPUs, interleaved 1F1B, sequence parallelism).
var readmeGPT3 = []string{"megatron", "--layers", "96", "--hidden", "12288", "--heads", "96", "--seq", "2048", "--global-batch", "1536",
	"--tp", "8", "--pp", "8", "--dp", "24", "--interleave", "2", "--seq-parallel", "--tokens", "300e9"}

// newcomer runs what a new user runs first, with no network flags: the README's explicit GPT-3
// example on the default cluster must land in the MFU band of published Megatron-LM runs on A100
// clusters (issue 9: 35–55%; Narayanan et al. SC'21, arXiv:2104.04473, abstract: 502 PFLOP/s on
// 3,072 A100s for the 1T model, 163 TFLOP/s per GPU = 52% of the A100's 312), and --gpu h100 alone
// (its own DGX H100 cluster) must be faster.
func newcomer(t *testing.T, bin string) {
	t.Helper()
	run := func(extra ...string) (mfu, iter float64) {
		out, err := exec.Command(bin, append(append(append([]string(nil), readmeGPT3...), extra...), "--format", "json")...).Output()
		if err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		var doc struct {
			Report struct {
				Iteration struct {
					TotalS float64 `json:"total_s"`
				} `json:"iteration"`
				Throughput struct{ MFU float64 } `json:"throughput"`
			} `json:"report"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Report.Throughput.MFU, doc.Report.Iteration.TotalS
	}
	mfu, a100 := run()
	if mfu < 0.35 || mfu > 0.55 {
		t.Errorf("README GPT-3 example on the default cluster: MFU %.1f%%, want 35–55%%", 100*mfu)
	}
	if _, h100 := run("--gpu", "h100"); !(h100 < a100) {
		t.Errorf("--gpu h100: iteration %g s, not faster than the A100's %g s", h100, a100)
	}
}

// buildBinary builds ddlest into dir as the README and .ci/run build it (CGO_ENABLED=0: a static
// binary; ddlest resolves no host names, and ld.so and libc's start-up are ≈ 0.5 ms of a process),
// then copies it, so that processes run from the file as it reads back from disk: the Go linker
// writes its output through a memory mapping, which leaves the file in the page cache as 4 KiB
// pages, and the page faults of a process started from those cost ≈ 0.2–0.3 ms more (measured
// on Linux 6.x, interleaved, same bytes) until the kernel drops them.
func buildBinary(tb testing.TB, dir string) string {
	tb.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	linked := filepath.Join(dir, "ddlest.linked")
	cmd := exec.Command(goBin, "build", "-o", linked, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build: %v\n%s", err, out)
	}
	data, err := os.ReadFile(linked)
	if err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(dir, "ddlest")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.Remove(linked); err != nil {
		tb.Fatal(err)
	}
	return bin
}

// BenchmarkProcess times whole ddlest processes (start-up, work, rendering) of a built binary:
// `--version` (start-up alone), `megatron --loss 1.8 --net ramp` (issue 9 target: ≤ 5 ms wall),
// `validate` (every seed's reproductions from cold, issue 16: ≤ 10 s on 2 cores) and `figures`
// (every figure, PNG and CSV: ≤ 30 s). Besides the mean (ns/op) it reports the fastest and the
// median process (min-ms, p50-ms): on a shared machine the mean mostly measures the neighbours.
func BenchmarkProcess(b *testing.B) {
	dir := b.TempDir()
	bin := buildBinary(b, dir)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"version", []string{"--version"}},
		{"megatron", []string{"megatron", "--loss", "1.8", "--net", "ramp"}},
		{"validate", []string{"validate"}},
		{"figures", []string{"figures", "--out", filepath.Join(dir, "figs")}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var wall []time.Duration
			for b.Loop() {
				start := time.Now()
				if out, err := exec.Command(bin, c.args...).CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				wall = append(wall, time.Since(start))
			}
			slices.Sort(wall)
			b.ReportMetric(float64(wall[0])/1e6, "min-ms")
			b.ReportMetric(float64(wall[len(wall)/2])/1e6, "p50-ms")
		})
	}
}

func TestPlotFlag(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "breakdown.png")
	out, errOut, code := execute("megatron", "--loss", "2.5", "--plot", path)
	if code != 0 || !strings.Contains(out, "iteration") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG")) {
		t.Fatalf("no PNG written: %v", err)
	}
	// A bad image path fails before anything is printed and leaves no file.
	out, errOut, code = execute("megatron", "--loss", "2.5", "--plot", filepath.Join(dir, "b.bmp"))
	if code != 2 || out != "" || !strings.Contains(errOut, ".png, .svg, .pdf") {
		t.Errorf("bad extension: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the directory", len(entries))
	}
}

// BenchmarkStartup is what a process does in main before its command runs (issue 9 target: one
// `ddlest megatron` process ≤ 5 ms wall, start-up included): --version whole, and a workload
// command's tree and flags (the megatron command alone, with the generated flags its command
// line names: none here; every key still mapped to its flag's name).
func BenchmarkStartup(b *testing.B) {
	b.Run("version", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if code := run([]string{"--version"}, new(strings.Builder), new(strings.Builder)); code != 0 {
				b.Fatal(code)
			}
		}
	})
	b.Run("megatron", func(b *testing.B) {
		args := []string{"megatron", "--loss", "1.8", "--net", "ramp"}
		b.ReportAllocs()
		for b.Loop() {
			root := newRootCommand(io.Discard, io.Discard, args)
			setupFlags(root, args)
			forgetFlags(root)
		}
	})
}

// Every generated flag shows, as its default, a text the flag takes back (a list as
// 1024-1024-1024-4096, not Go's [1024 1024 1024 4096]), and a named choice is typed "string"
// in the help, never by its integer representation ("--precision int").
func TestGeneratedFlagDefaultsRoundTrip(t *testing.T) {
	for _, w := range []string{"megatron", "dp", "cosmoflow", "dlrm"} {
		tmpl, err := job.New(w)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range jobKeys(tmpl) {
			text := formatLeaf(k.leaf.Value)
			j, err := job.New(w)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Set(k.path, text); err != nil {
				t.Errorf("%s --%s %q (its shown default): %v", w, k.flag, text, err)
				continue
			}
			if again := formatLeaf(leafOf(t, j, k.path)); again != text {
				t.Errorf("%s --%s %q reads back as %q", w, k.flag, text, again)
			}
			if ty := typeName(k.leaf.Value); k.leaf.Value.Kind() == reflect.Int && ty == "int" &&
				reflect.PointerTo(k.leaf.Value.Type()).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
				t.Errorf("%s --%s: a named choice shown as %q", w, k.flag, ty)
			}
		}
	}
}

// leafOf is the value at a job key.
func leafOf(t *testing.T, j *job.Job, path string) reflect.Value {
	t.Helper()
	for _, k := range jobKeys(j) {
		if k.path == path {
			return k.leaf.Value
		}
	}
	t.Fatalf("no key %s", path)
	return reflect.Value{}
}

// The Llama 3 presets (Dubey et al. 2024 Table 3, configs/models.json) run from the CLI and report
// their architecture: 8 key/value heads, the FFN width of Table 3, SwiGLU, RMSNorm, RoPE, and a
// parameter count within 1% of the model card's size (8B, 70B; the vocabulary padded for TP 8
// adds 768 rows to each of the two untied embeddings).
func TestLlama3Presets(t *testing.T) {
	for _, c := range []struct {
		model   string
		args    []string
		ffn     int
		nominal float64
	}{
		{"llama3-8b", []string{"--gpus", "64", "--tp", "4"}, 14336, 8e9},
		{"llama3-70b", []string{"--gpus", "512", "--tp", "8", "--pp", "4"}, 28672, 70e9},
		// Issue 14's 405B run: 16,384 H100, TP 8, PP 16 with 7 + 8 × 14 + 7 layers (§3.3.2).
		{"llama3-405b", []string{"--gpus", "16384", "--tp", "8", "--pp", "16", "--pp-first-layers", "7", "--pp-last-layers", "7", "--seq-parallel"}, 53248, 405e9},
	} {
		args := append([]string{"megatron", "--model", c.model, "--cluster", "dgx-h100", "--software", "megatron-core", "--format", "json"}, c.args...)
		out, errOut, code := execute(args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.model, code, errOut)
		}
		var doc struct {
			Report struct {
				Model struct {
					Params        float64 `json:"params"`
					KVHeads       int     `json:"kv_heads"`
					FFNHidden     int     `json:"ffn_hidden"`
					MLPName       string  `json:"mlp"`
					NormName      string  `json:"norm"`
					PositionsName string  `json:"positions"`
				} `json:"model"`
			} `json:"report"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		m := doc.Report.Model
		if m.KVHeads != 8 || m.FFNHidden != c.ffn || m.MLPName != "swiglu" || m.NormName != "rmsnorm" || m.PositionsName != "rope" {
			t.Errorf("%s: model %+v", c.model, m)
		}
		if r := m.Params / c.nominal; r < 0.99 || r > 1.01 {
			t.Errorf("%s: %.4g parameters, more than 1%% from %g", c.model, m.Params, c.nominal)
		}
	}
}

// A Hugging Face config.json as the model: --hf-config on the megatron commands and
// `models import`, whose output is the model of a job file that runs. Meta's Llama 3.1 8B
// config (shape fields as published) gives the llama3-8b preset's 8.03B parameters.
func TestHFConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"architectures": ["LlamaForCausalLM"], "hidden_act": "silu", "hidden_size": 4096,
  "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "tie_word_embeddings": false, "vocab_size": 128256}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := []string{"--seq", "8192", "--gpus", "64", "--tp", "4", "--global-batch", "512", "--steps", "1", "--cluster", "dgx-h100"}
	out, errOut, code := execute(append([]string{"megatron", "--hf-config", cfg, "--format", "json"}, run...)...)
	if code != 0 {
		t.Fatalf("--hf-config: exit %d: %s", code, errOut)
	}
	var doc struct {
		Report struct {
			Model struct {
				Params float64 `json:"params"`
			} `json:"model"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	// 8,030,261,248 with the vocabulary padded to 128,512 for TP 4: 2 · 256 · 4,096 more.
	if want := 8_030_261_248.0 + 2*256*4096; doc.Report.Model.Params != want {
		t.Errorf("--hf-config: %.0f parameters, want %.0f", doc.Report.Model.Params, want)
	}

	model, errOut, code := execute("models", "import", cfg)
	if code != 0 {
		t.Fatalf("models import: exit %d: %s", code, errOut)
	}
	var snippet struct {
		Model map[string]any `json:"model"`
	}
	if err := json.Unmarshal([]byte(model), &snippet); err != nil || snippet.Model["kv_heads"] != 8.0 || snippet.Model["mlp"] != "swiglu" {
		t.Fatalf("models import: %v %v", err, snippet.Model)
	}
	m, _ := json.Marshal(snippet.Model)
	jobFile := filepath.Join(dir, "job.json")
	if err := os.WriteFile(jobFile, []byte(`{"workload": "megatron", "model": `+string(m)+`, "execution": {"tp": 4, "dp": 16,
  "global_batch": 512, "steps": 1}, "cluster": {"preset": "dgx-h100"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := execute("run", jobFile); code != 0 || !strings.Contains(out, "8.03B parameters") {
		t.Errorf("job file with the imported model: exit %d: %s%s", code, errOut, out)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"megatron", "--hf-config", filepath.Join(dir, "missing.json")}, 1, "missing.json"},
		{[]string{"megatron", "--hf-config", cfg, "--model", "llama3-8b"}, 2, "--hf-config and --model both name the model"},
		{[]string{"models", "import", jobFile}, 2, "architectures []"},
		{[]string{"dp", "--hf-config", cfg}, 2, "unknown flag: --hf-config"},
	} {
		_, errOut, code := execute(c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d %q, want exit %d and %q on one line", c.args, code, errOut, c.code, c.want)
		}
	}
}

// Issue 14's long-context run: Llama 3 405B at 128K tokens on 16,384 H100 with TP 8, CP 16 and
// PP 16 (7 + 8 × 14 + 7 layers) runs from the CLI and from a job file, and the search, keeping
// CP 16, finds layouts that fit (its best one runs again as a job file: `search --format json`).
func TestLongContext405B(t *testing.T) {
	layout := []string{"--model", "llama3-405b", "--gpus", "16384", "--cp", "16", "--seq", "131072", "--global-batch", "128",
		"--cluster", "dgx-h100", "--software", "megatron-core"}
	explicit := append([]string{"megatron", "--tp", "8", "--pp", "16", "--pp-first-layers", "7", "--pp-last-layers", "7", "--seq-parallel", "--format", "json"}, layout...)
	out, errOut, code := execute(explicit...)
	if code != 0 {
		t.Fatalf("CLI: exit %d: %s", code, errOut)
	}
	var doc struct {
		Report struct {
			Parallel struct {
				CP, DP, TP, PP int
			} `json:"parallel"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if p := doc.Report.Parallel; p.CP != 16 || p.DP != 8 || p.TP != 8 || p.PP != 16 {
		t.Errorf("CLI layout %+v, want DP 8 × TP 8 × CP 16 × PP 16", p)
	}
	dir := t.TempDir()
	jobFile := filepath.Join(dir, "job.json")
	if err := os.WriteFile(jobFile, []byte(`{"workload": "megatron", "model": {"preset": "llama3-405b", "seq": 131072},
  "execution": {"software": "megatron-core", "tp": 8, "cp": 16, "pp": 16, "pp_first_layers": 7, "pp_last_layers": 7,
  "gpus": 16384, "global_batch": 128, "seq_parallel": true}, "cluster": {"preset": "dgx-h100"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := execute("run", jobFile); code != 0 || !strings.Contains(out, "DP 8 × TP 8 × CP 16 × PP 16") {
		t.Errorf("job file: exit %d: %s%s", code, errOut, out)
	}
	found, errOut, code := execute(append([]string{"search", "megatron", "--top", "1", "--format", "json"}, layout...)...)
	if code != 0 {
		t.Fatalf("search: exit %d: %s", code, errOut)
	}
	var jobs []struct {
		Execution struct {
			CP int `json:"cp"`
		} `json:"execution"`
	}
	if err := json.Unmarshal([]byte(found), &jobs); err != nil || len(jobs) != 1 || jobs[0].Execution.CP != 16 {
		t.Fatalf("search: %v %+v", err, jobs)
	}
	best := filepath.Join(dir, "best.json")
	if err := os.WriteFile(best, []byte(strings.TrimSpace(found)[1:len(strings.TrimSpace(found))-1]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := execute("run", best); code != 0 {
		t.Errorf("the search's best layout as a job file: exit %d: %s", code, errOut)
	}
}

// --gpu b200 alone picks the B200's own cluster (DGX B200: NVLink5, one 400 Gb/s ConnectX-7 per
// GPU) and FP8 runs on it; FlashAttention has no measured B200 efficiency yet, which the
// megatron-core preset's flash attention reports as one line.
func TestB200(t *testing.T) {
	args := []string{"megatron", "--model", "llama3-8b", "--gpu", "b200", "--gpus", "64", "--tp", "4", "--precision", "fp8", "--software", "megatron-core"}
	out, errOut, code := execute(append(args, "--attention", "standard")...)
	if code != 0 || !strings.Contains(out, "cluster      dgx-b200") || !strings.Contains(out, "b200: NVIDIA B200") {
		t.Errorf("exit %d: %s%s", code, errOut, out)
	}
	if _, errOut, code := execute(args...); code != 2 || !strings.Contains(errOut, "GPU b200 has no measured FlashAttention efficiency") {
		t.Errorf("flash attention on b200: exit %d %q", code, errOut)
	}
}

// The Mixtral 8×7B preset reports its total and active parameters (46.7B and 12.9B, Jiang et al.
// 2024 §2.1 / the model card; hand counts in partition/megatron's TestMixtralParameters) and
// prices 6ND with the active ones: 6 · 12,617,777,152 non-embedding active parameters · 128 ·
// 32,768 tokens.
func TestMixtralPreset(t *testing.T) {
	out, errOut, code := execute("megatron", "--model", "mixtral-8x7b", "--gpus", "64", "--ep", "8", "--pp", "4", "--cluster", "dgx-h100",
		"--distributed-optimizer", "--attention", "flash", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Report struct {
			Model struct {
				Params       float64 `json:"params"`
				ActiveParams float64 `json:"active_params"`
			} `json:"model"`
			Training struct {
				ComputeFLOP float64 `json:"compute_flop"`
			} `json:"training"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Report.Model
	if m.Params != 46_702_792_704 || m.ActiveParams != 12_879_925_248 {
		t.Errorf("params %.0f, active %.0f", m.Params, m.ActiveParams)
	}
	if want := 6 * 12_617_777_152.0 * 128 * 32768; doc.Report.Training.ComputeFLOP != want {
		t.Errorf("6ND %g, want %g", doc.Report.Training.ComputeFLOP, want)
	}
}

// ZeRO from the CLI: each stage keeps less per GPU (ZeRO §5.2), and ZeRO-3's per-layer parameter
// all-gathers show as data-parallel communication; --fsdp is stage 3.
func TestZeROCLI(t *testing.T) {
	type doc struct {
		Report struct {
			Memory struct {
				Total float64 `json:"total_bytes"`
			} `json:"memory"`
			Collectives []struct {
				Name string `json:"name"`
			} `json:"collectives"`
		} `json:"report"`
	}
	run := func(extra ...string) doc {
		t.Helper()
		args := append([]string{"megatron", "--model", "llama3-8b", "--gpus", "64", "--cluster", "dgx-h100", "--global-batch", "512", "--steps", "1", "--format", "json"}, extra...)
		out, errOut, code := execute(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, errOut)
		}
		var d doc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	prev := run("--zero", "1").Report.Memory.Total
	for _, z := range []string{"2", "3"} {
		m := run("--zero", z).Report.Memory.Total
		if !(m < prev) {
			t.Errorf("ZeRO-%s: %g bytes, not below the previous stage's %g", z, m, prev)
		}
		prev = m
	}
	names := map[string]bool{}
	for _, c := range run("--fsdp").Report.Collectives {
		names[c.Name] = true
	}
	if !names["zero.params.fwd"] || !names["zero.grads"] {
		t.Errorf("--fsdp collectives %v, want ZeRO-3's", names)
	}
}

// DeepSeek-V3 end to end: the preset on its report's layout (§3.2: PP 16, EP 64 over 2,048
// GPUs, no TP; 61 layers as 3 + 14 × 4 + 2) has its hand-counted parameters
// (partition/megatron TestDeepSeekV3Parameters: 671,026,404,352, 37,552,282,624 active), its
// JSON reruns to the same bytes, and its Hugging Face config.json gives the same model.
func TestDeepSeekV3CLI(t *testing.T) {
	layout := []string{"--cluster", "dgx-h100", "--tp", "1", "--pp", "16", "--dp", "128", "--ep", "64",
		"--pp-first-layers", "3", "--pp-last-layers", "2", "--software", "megatron-core", "--recompute", "full", "--steps", "1", "--format", "json"}
	out, errOut, code := execute(append([]string{"megatron", "--model", "deepseek-v3"}, layout...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Report struct {
			Model struct {
				Params float64 `json:"params"`
				Active float64 `json:"active_params"`
			} `json:"model"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if m := doc.Report.Model; m.Params != 671_026_404_352 || m.Active != 37_552_282_624 {
		t.Errorf("deepseek-v3: %.0f parameters, %.0f active; want 671,026,404,352 and 37,552,282,624", m.Params, m.Active)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "run.json")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, errOut, code := execute("run", file, "--format", "json"); code != 0 || again != out {
		t.Errorf("run of the JSON: exit %d %s; identical %v", code, errOut, again == out)
	}
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{"architectures": ["DeepseekV3ForCausalLM"], "first_k_dense_replace": 3,
  "hidden_act": "silu", "hidden_size": 7168, "intermediate_size": 18432, "kv_lora_rank": 512, "moe_intermediate_size": 2048,
  "moe_layer_freq": 1, "n_routed_experts": 256, "n_shared_experts": 1, "num_attention_heads": 128, "num_experts_per_tok": 8,
  "num_hidden_layers": 61, "num_key_value_heads": 128, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
  "tie_word_embeddings": false, "v_head_dim": 128, "vocab_size": 129280}`), 0o644); err != nil {
		t.Fatal(err)
	}
	hf, errOut, code := execute(append([]string{"megatron", "--hf-config", cfg, "--seq", "4096", "--global-batch", "15360"}, layout...)...)
	if code != 0 {
		t.Fatalf("--hf-config: exit %d: %s", code, errOut)
	}
	if err := json.Unmarshal([]byte(hf), &doc); err != nil {
		t.Fatal(err)
	}
	if m := doc.Report.Model; m.Params != 671_026_404_352 || m.Active != 37_552_282_624 {
		t.Errorf("--hf-config DeepSeek-V3: %.0f parameters, %.0f active", m.Params, m.Active)
	}
}
