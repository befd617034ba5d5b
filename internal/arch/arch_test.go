package arch

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/ddlest/ddlest/"

// forbidden maps a package tree to the trees it must not import.
var forbidden = map[string][]string{
	"scaling":   {"network", "partition", "profile", "estimator", "plots", "traces", "cmd", "job"},
	"network":   {"scaling", "partition", "profile", "estimator", "plots", "traces", "cmd", "job"},
	"partition": {"profile", "estimator", "plots", "traces", "cmd", "job"},
	"profile":   {"estimator", "plots", "cmd", "job", "network"},
	"traces":    {"estimator", "plots", "cmd", "job", "network", "partition"},
	// The estimator schedules; it must not reach into a particular workload or network model.
	"estimator":         {"plots", "cmd", "job", "partition/megatron", "network/alphabeta", "network/ideal", "network/all", "profile/roofline", "scaling"},
	"plots":             {"cmd", "job"},
	"configs":           {"scaling", "network", "partition", "profile", "estimator", "plots", "traces", "cmd", "internal"},
	"internal/units":    {"scaling", "network", "partition", "profile", "estimator", "plots", "traces", "cmd"},
	"internal/registry": {"scaling", "network", "partition", "profile", "estimator", "plots", "traces", "cmd"},
	"internal/params":   {"scaling", "network", "partition", "profile", "estimator", "plots", "traces", "cmd"},
	"internal/rows":     {"scaling", "network", "partition", "profile", "estimator", "plots", "traces", "cmd", "job", "configs"},
	// job is the top floor below the commands: it orchestrates everything but renders nothing.
	"job": {"cmd", "plots"},
}

// TestEveryPackageHasRules: a new top-level package gets its import rules here (cmd, the top,
// may import anything; internal holds leaves listed one by one).
func TestEveryPackageHasRules(t *testing.T) {
	entries, err := os.ReadDir("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || name == "cmd" || name == "internal" {
			continue
		}
		if _, ok := forbidden[name]; !ok {
			t.Errorf("top-level package %s has no import rules in forbidden", name)
		}
	}
}

func TestImportDirection(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for tree, banned := range forbidden {
		err := filepath.WalkDir(filepath.Join(root, tree), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			checked++
			rel, _ := filepath.Rel(root, path)
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if !strings.HasPrefix(p, module) {
					continue
				}
				target := strings.TrimPrefix(p, module)
				for _, b := range banned {
					if target == b || strings.HasPrefix(target, b+"/") {
						t.Errorf("%s imports %s: %s must not depend on %s", rel, p, tree, b)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 20 {
		t.Errorf("only %d files checked; is the walk rooted right?", checked)
	}
}
