package job

import (
	goflag "flag"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/configs"
	"github.com/ddlest/ddlest/internal/golit"
)

var update = goflag.Bool("update", false, "rewrite clusters_gen.go from configs/clusters.json")

// TestBuiltinClusters keeps clusters_gen.go, the cluster presets as Go values (a process
// compiles them in instead of indexing and decoding configs/clusters.json, ≈ 0.25 ms of a 5 ms
// `ddlest megatron --net ramp`), equal to their source: the file is what golit writes for the
// decoded, validated JSON (rewrite it with -update after editing the JSON), and the compiled
// values are the decoded ones, network parameters included.
func TestBuiltinClusters(t *testing.T) {
	list, err := decodeClusters(configs.Clusters, clustersFile)
	if err != nil {
		t.Fatal(err)
	}
	golit.Keep(t, *update, golit.Generated{
		File: "clusters_gen.go", Pkg: "job", PkgPath: "github.com/ddlest/ddlest/job",
		Source: clustersFile, Command: "go test ./job -run TestBuiltinClusters -update",
		Decls:    []golit.Decl{{Doc: "builtinClusters is configs/clusters.json, decoded.", Name: "builtinClusters", Value: list}},
		Compiled: []any{builtinClusters()},
	})
}

// TestDecodeClustersRefuses: the table's own checks, each on one line naming the preset.
func TestDecodeClustersRefuses(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"no name", `[{"description": "x", "cluster": {"gpu": "a100-80gb"}, "sources": {}}]`, "preset 0 has no name"},
		{"twice", `[{"name": "a", "cluster": {"gpu": "a100-80gb"}}, {"name": "a", "cluster": {"gpu": "a100-80gb"}}]`, "preset a named twice"},
		{"unknown key", `[{"name": "a", "cluster": {"gpus": "a100-80gb"}}]`, `unknown key "gpus"`},
		{"invalid cluster", `[{"name": "a", "cluster": {"gpu": "z80"}}]`, "z80"},
	} {
		_, err := decodeClusters([]byte(c.data), "t.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", c.name, err, c.want)
		}
	}
}
