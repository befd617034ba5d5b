package params

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ddlest/ddlest/configs"
)

// TestJSONNodeEqualsYAML: the JSON fast path builds the tree yaml.v3 builds (kinds, tags, values,
// lines: error messages name lines), for every embedded config and hand-written corner cases.
func TestJSONNodeEqualsYAML(t *testing.T) {
	docs := map[string][]byte{
		"gpus": configs.GPUs, "networks": configs.Networks, "table2": configs.HammingMeshTable2,
		"clusters": configs.Clusters, "models": configs.Models,
		"corners":  []byte("{\n  \"a\": [1, -2.5e3, 1E6, true, false, null],\n  \"b\": {\"c\": \"x y\", \"d\": {}},\n\n  \"e\": [],\n  \"f\": \"\\u00e9\"\n}\n"),
		"one line": []byte(`{"workload":"megatron","execution":{"tp":8,"dp_bucket_bytes":"25MB"}}`),
		"list":     []byte("[\n {\"k\": 1},\n {\"k\": 2}\n]"),
	}
	for name, data := range docs {
		got, err := jsonNode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: yaml: %v", name, err)
		}
		compareNodes(t, name, got, doc.Content[0])
	}
}

func compareNodes(t *testing.T, path string, got, want *yaml.Node) {
	t.Helper()
	if got.Kind != want.Kind || got.Tag != want.Tag || got.Value != want.Value || got.Line != want.Line || len(got.Content) != len(want.Content) {
		t.Fatalf("%s: got kind %v tag %s value %q line %d (%d children), yaml.v3 kind %v tag %s value %q line %d (%d)", path,
			got.Kind, got.Tag, got.Value, got.Line, len(got.Content), want.Kind, want.Tag, want.Value, want.Line, len(want.Content))
	}
	for i := range got.Content {
		compareNodes(t, path+"/"+want.Content[i].Value, got.Content[i], want.Content[i])
	}
}

// TestJSONSyntaxError: a broken JSON file is one line with the file and line.
func TestJSONSyntaxError(t *testing.T) {
	var v struct {
		A int `json:"a"`
	}
	err := Decode([]byte("{\n  \"a\": 1,\n  \"b\" 2\n}"), "x.json", &v)
	if err == nil || !strings.Contains(err.Error(), "x.json: line 3") {
		t.Errorf("err = %v, want x.json: line 3", err)
	}
}
