package params

import (
	"encoding/json"
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

// TestJSONSyntaxError: a broken JSON file is one error with the file and the line.
func TestJSONSyntaxError(t *testing.T) {
	var v struct {
		A any `json:"a"`
	}
	for _, c := range []struct {
		doc, want string
	}{
		{"{\n  \"a\": 1,\n  \"b\" 2\n}", "x.json: line 3"},
		{"{\n  \"a\": tru\n}", "x.json: line 2"},
		{"{\n  \"a\": \"open\n}", "x.json: line 2"},
		{"{\"a\": 1}\n{", "x.json: line 2: more than one JSON value"},
		{"{\"a\": [1, 2\n", "x.json: line 2: unexpected end"},
		{"{\"a\": 1.2.3}", "x.json: line 1: invalid number"},
	} {
		err := Decode([]byte(c.doc), "x.json", &v)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.doc, err, c.want)
		}
	}
}

// FuzzJSONNode: on valid JSON the scanner builds yaml.v3's tree.
func FuzzJSONNode(f *testing.F) {
	f.Add([]byte(`{"a": [1, -2.5e3, true, null], "b": {"c": "x\u00e9\n"}}`))
	f.Add([]byte("[\n {\"k\": 1},\n {}\n]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		// YAML folds its own line breaks (U+0085, U+2028, U+2029) inside quoted strings; JSON
		// keeps them. The configs have none; such inputs are not compared.
		low := strings.ToLower(string(data))
		for _, lb := range []string{"\\u0085", "\\u2028", "\\u2029", "\u0085", "\u2028", "\u2029"} {
			if strings.Contains(low, lb) {
				return
			}
		}
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
			return // JSON that yaml.v3 rejects (e.g. tabs before a key) is not compared
		}
		got, err := jsonNode(data)
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		compareNodes(t, "", got, doc.Content[0])
	})
}

// BenchmarkJSONNode: an embedded config parsed into nodes (the cluster presets' file, the
// largest a test decodes).
func BenchmarkJSONNode(b *testing.B) {
	b.SetBytes(int64(len(configs.Clusters)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonNode(configs.Clusters); err != nil {
			b.Fatal(err)
		}
	}
}
