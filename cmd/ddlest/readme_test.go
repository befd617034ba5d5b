package main

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/network/all"
	"github.com/ddlest/ddlest/traces"
)

// readme is README.md's text.
func readme(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// section is README's text from the heading to the next "## ".
func section(t *testing.T, s, heading string) string {
	t.Helper()
	i := strings.Index(s, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q section", heading)
	}
	s = s[i+len(heading)+2:]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	return s
}

// Every console block of the tour is the command's real output: "$ ddlest ARGS", then stdout.
func TestREADMETour(t *testing.T) {
	s := section(t, readme(t), "## A tour")
	blocks := strings.Split(s, "<!-- tour -->\n```console\n")[1:]
	if len(blocks) < 3 {
		t.Fatalf("the tour has %d blocks, want at least 3", len(blocks))
	}
	for _, b := range blocks {
		j := strings.Index(b, "```\n<!-- end tour -->")
		if j < 0 {
			t.Fatalf("unterminated tour block: %.60q", b)
		}
		cmdLine, want, _ := strings.Cut(b[:j], "\n")
		args := strings.Fields(strings.TrimPrefix(cmdLine, "$ ddlest "))
		out, errOut, code := execute(args...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", cmdLine, code, errOut)
			continue
		}
		if out != want {
			t.Errorf("README's output of %q differs from the command's; paste:\n%s", cmdLine, out)
		}
	}
}

// The networks table lists every registered network model (and nothing that is not one).
func TestREADMENetworks(t *testing.T) {
	s := section(t, readme(t), "## Networks")
	listed := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			name, _, _ = strings.Cut(name, "`")
			listed[name] = true
		}
	}
	for _, spec := range all.Specs() {
		if !listed[spec.Name] {
			t.Errorf("network %q is registered but not in README's networks table", spec.Name)
		}
		delete(listed, spec.Name)
	}
	for name := range listed {
		t.Errorf("README's networks table lists %q, which is not a registered network", name)
	}
}

// The parquet schema table has every column of traces.Event, in order, with its type, and every
// value of the enumerated columns.
func TestREADMEParquetSchema(t *testing.T) {
	s := section(t, readme(t), "## Trace files (parquet schema)")
	var rows []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, line)
		}
	}
	ty := reflect.TypeFor[traces.Event]()
	if len(rows) != ty.NumField() {
		t.Fatalf("README's schema has %d columns, traces.Event %d", len(rows), ty.NumField())
	}
	goType := map[reflect.Kind]string{reflect.Int32: "int32", reflect.Int64: "int64", reflect.String: "string"}
	for i := range ty.NumField() {
		f := ty.Field(i)
		col, _, _ := strings.Cut(f.Tag.Get("parquet"), ",")
		if want := "| `" + col + "` | " + goType[f.Type.Kind()] + " |"; !strings.HasPrefix(rows[i], want) {
			t.Errorf("schema row %d: %q, want it to start %q", i, rows[i], want)
		}
	}
	for _, v := range [][]string{traces.Categories, traces.Phases, traces.Collectives} {
		for _, name := range v {
			if !strings.Contains(s, "`"+name+"`") {
				t.Errorf("README's schema does not list the value %q", name)
			}
		}
	}
	if !strings.Contains(s, "`"+traces.SchemaVersion+"`") {
		t.Errorf("README's schema does not name the version %s", traces.SchemaVersion)
	}
}
