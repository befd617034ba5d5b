package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/configs"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/network/superpod"
)

// Bad job files: one usage error naming the file, the line, the bad key or value and what would
// be valid.
func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"unknown key", "workload: megatron\nexecution:\n  tp: 2\n  tpp: 3\n", []string{"bad.yaml:4", `"tpp"`, "valid: software, layout, gpus", "trace_tp"}},
		{"unknown top key", "workload: megatron\nmodle: gpt3\n", []string{"bad.yaml:2", `"modle"`, "workload, model, execution, cluster"}},
		{"wrong unit", "workload: megatron\nexecution:\n  dp_bucket_bytes: 2us\n", []string{"bad.yaml:3", "execution.dp_bucket_bytes", `"2us"`, "wrong unit", "25MB"}},
		{"wrong unit, network", "workload: megatron\ncluster:\n  network:\n    model: superpod\n    params:\n      node_tbps: 1GB\n", []string{"bad.yaml:6", "cluster.network.params.node_tbps", "wrong unit"}},
		{"unknown network key", "workload: megatron\ncluster:\n  network:\n    model: superpod\n    params:\n      bandwidth_gbit_per_s: 1\n", []string{"bad.yaml:6", `"bandwidth_gbit_per_s"`, "node_tbps"}},
		{"not a number", "workload: megatron\nexecution:\n  tp: eight\n", []string{"bad.yaml:3", "execution.tp", `"eight"`, "not an integer"}},
		{"unknown cluster", "workload: megatron\ncluster: dgx-z\n", []string{"bad.yaml:2", `"dgx-z"`, "dgx-a100, dgx-h100"}},
		{"unknown model", "workload: megatron\nmodel: gpt5\n", []string{"bad.yaml:2", `"gpt5"`, "gpt3-175b"}},
		{"unknown workload", "workload: bert\n", []string{"bad.yaml:1", `"bert"`, "megatron"}},
		{"no workload", "model: gpt3\n", []string{"no workload key", "megatron"}},
		{"bad enum", "workload: megatron\nexecution:\n  recompute: some\n", []string{"bad.yaml:3", `"some"`, "none, selective, full"}},
		{"duplicate key", "workload: megatron\nexecution:\n  tp: 2\n  tp: 4\n", []string{"bad.yaml:4", `"tp" given twice`}},
		{"not YAML", "workload: [megatron\n", []string{"bad.yaml"}},
	}
	for _, c := range cases {
		var j Job
		err := params.Decode([]byte(c.doc), "bad.yaml", &j)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		var u *errs.UsageError
		if !errors.As(err, &u) {
			t.Errorf("%s: %v is not a usage error", c.name, err)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: message spans lines: %q", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
	}
}

// A job's JSON decodes to the same job: for every model preset on every cluster preset kind,
// encoding, decoding and encoding again gives the same bytes, with the report key skipped.
func TestRoundTrip(t *testing.T) {
	r, err := Models()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.All() {
		for _, cluster := range []string{"dgx-h100", "hx4-small", "ramp-65536"} {
			j, err := New(p.Workload)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.UseModel(p.Name); err != nil {
				t.Fatal(err)
			}
			if err := j.Set("cluster", cluster); err != nil {
				t.Fatal(err)
			}
			if err := j.Set("cluster.network.params.strategy", "best"); err != nil {
				t.Fatal(err)
			}
			a, err := json.Marshal(j)
			if err != nil {
				t.Fatal(err)
			}
			withReport := append(bytes.Clone(bytes.TrimSuffix(a, []byte("}"))), []byte(`,"report":{"iteration":{"total_s":1}}}`)...)
			var k Job
			if err := params.Decode(withReport, "run.json", &k); err != nil {
				t.Fatalf("%s on %s: %v", p.Name, cluster, err)
			}
			b, _ := json.Marshal(&k)
			if !bytes.Equal(a, b) {
				t.Errorf("%s on %s: round trip differs:\n%s\n%s", p.Name, cluster, a, b)
			}
		}
	}
}

// Every model preset runs on the default cluster: its estimate succeeds or is infeasible (a
// model too large for the default layout's memory), never refused as invalid input.
func TestEveryModelPresetRuns(t *testing.T) {
	r, err := Models()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.All() {
		j, err := New(p.Workload)
		if err != nil {
			t.Fatal(err)
		}
		if err := j.UseModel(p.Name); err != nil {
			t.Fatal(err)
		}
		if _, err := Run(j); err != nil && errs.ExitCode(err) != errs.ExitInfeasible {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
}

// Flags, --set and files set the same fields: a preset file and the equivalent settings give the
// same estimate.
func TestFileEqualsSettings(t *testing.T) {
	doc := `workload: megatron
model: {preset: gpt3-175b}
execution: {tp: 8, pp: 8, dp: 24, interleave: 2, seq_parallel: true, dp_bucket_bytes: 25MB}
cluster: {preset: dgx-h100, network: {params: {oversubscription: 4.5}}}
`
	var a Job
	if err := params.Decode([]byte(doc), "gpt3.yaml", &a); err != nil {
		t.Fatal(err)
	}
	b, _ := New("megatron")
	for _, kv := range [][2]string{{"model", "gpt3-175b"}, {"cluster", "dgx-h100"}, {"tp", "8"}, {"pp", "8"}, {"execution.dp", "24"},
		{"interleave", "2"}, {"seq_parallel", "true"}, {"dp_bucket_bytes", "25e6"}, {"oversubscription", "4.5"}} {
		if err := b.Set(kv[0], kv[1]); err != nil {
			t.Fatalf("%v: %v", kv, err)
		}
	}
	ra, err := Run(&a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := Run(b)
	if err != nil {
		t.Fatal(err)
	}
	if ra.Result.Iteration.Total != rb.Result.Iteration.Total || ra.Result.Iteration.Total <= 0 {
		t.Errorf("file %v, settings %v", ra.Result.Iteration.Total, rb.Result.Iteration.Total)
	}
	// The ambiguous and the unknown are refused with the valid keys.
	if err := b.Set("params", "1"); err == nil || !strings.Contains(err.Error(), "ambiguous") && !strings.Contains(err.Error(), "unknown") {
		t.Errorf("Set(params): %v", err)
	}
	if err := b.Set("colour", "red"); err == nil || !strings.Contains(err.Error(), "execution.tp") {
		t.Errorf("Set(colour): %v", err)
	}
}

// Every cluster preset validates, every key it sets has a source, and the DGX networks follow
// from the datasheets cited: per-GPU NVLink bandwidth one way = the datasheet's bidirectional
// figure / 2, over-subscription = NVLink one way / the per-GPU InfiniBand NIC.
func TestClusterPresets(t *testing.T) {
	r, err := Clusters()
	if err != nil {
		t.Fatal(err)
	}
	var raw []struct {
		Name    string         `json:"name"`
		Cluster map[string]any `json:"cluster"`
	}
	if err := json.Unmarshal(configs.Clusters, &raw); err != nil {
		t.Fatal(err)
	}
	for _, e := range raw {
		p, _ := r.Lookup(e.Name)
		for _, key := range setKeys(e.Cluster, "") {
			if p.Sources[key] == "" {
				t.Errorf("%s: %s has no source", e.Name, key)
			}
		}
	}
	// [X] NVIDIA datasheets: A100 NVLink 600 GB/s and 200 Gb/s HDR per GPU; H100 NVLink 900 GB/s
	// and 400 Gb/s NDR per GPU.
	for _, c := range []struct {
		name           string
		nvlinkGBs, nic float64
	}{{"dgx-a100", 600, 200}, {"dgx-h100", 900, 400}, {"dgx-h200", 900, 400}} {
		cl, err := LookupCluster(c.name)
		if err != nil {
			t.Fatal(err)
		}
		sp := cl.Network.Params.(*superpod.Config)
		oneWayTbps := c.nvlinkGBs / 2 * 8 / 1000
		if math.Abs(sp.NodeTbps-oneWayTbps) > 1e-12 || math.Abs(sp.Oversubscription-oneWayTbps*1000/c.nic) > 1e-12 {
			t.Errorf("%s: node %g Tb/s (want %g), oversubscription %g (want %g)", c.name, sp.NodeTbps, oneWayTbps, sp.Oversubscription, oneWayTbps*1000/c.nic)
		}
		if cl.GPUsPerNode != sp.GPUsPerNode || cl.GPUsPerNode != 8 {
			t.Errorf("%s: %d GPUs per node, network %d; a DGX has 8", c.name, cl.GPUsPerNode, sp.GPUsPerNode)
		}
	}
}

// setKeys lists the dotted keys a preset's cluster sets (leaves only).
func setKeys(m map[string]any, prefix string) []string {
	var out []string
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			out = append(out, setKeys(sub, prefix+k+".")...)
			continue
		}
		out = append(out, prefix+k)
	}
	return out
}

// A job larger than its cluster is infeasible (exit 3); the message names both sizes.
func TestClusterTooSmall(t *testing.T) {
	j, _ := New("megatron")
	for _, kv := range [][2]string{{"model", "gpt3"}, {"cluster", "hx4-small"}, {"gpus", "3072"}} {
		if err := j.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Run(j)
	if errs.ExitCode(err) != errs.ExitInfeasible || !strings.Contains(fmt.Sprint(err), "3072") || !strings.Contains(fmt.Sprint(err), "1024") {
		t.Errorf("3,072 GPUs on the 1,024 of hx4-small: %v (exit %d)", err, errs.ExitCode(err))
	}
}

// TestModelNamesIndex: the light index the flags' help reads lists what the decoded presets hold,
// in order.
func TestModelNamesIndex(t *testing.T) {
	r, err := Models()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range Workloads().Names() {
		var want []string
		for _, p := range r.All() {
			if p.Workload == w {
				want = append(want, p.Name)
			}
		}
		if got := ModelNames(w); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: index %v, presets %v", w, got, want)
		}
	}
}
