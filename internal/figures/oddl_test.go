package figures

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/repro"
)

// ODDL's Figs. 10, 12 and 13 plot exactly the reproduction library's sweeps: per fusion
// threshold an epoch-time panel and a utilisation panel (in %), every network at every size.
func TestODDLFiguresAreTheLibrary(t *testing.T) {
	dir := t.TempDir()
	for _, fig := range []struct {
		name  string
		sweep func() (repro.ODDLScaling, error)
	}{{"oddl-fig10", repro.ODDLFig10}, {"oddl-fig12", repro.ODDLFig12}, {"oddl-fig13", repro.ODDLFig13}} {
		f, ok := Lookup(fig.name)
		if !ok {
			t.Fatalf("%s is not registered", fig.name)
		}
		if err := Write(f, dir); err != nil {
			t.Fatal(err)
		}
		r, err := fig.sweep()
		if err != nil {
			t.Fatal(err)
		}
		rows := readCSV(t, filepath.Join(dir, fig.name+".csv"))
		n := 0
		for _, row := range rows[1:] {
			fi := slices.IndexFunc([]string{"16 MiB", "32 MiB"}, func(s string) bool { return strings.Contains(row[0], s) })
			nodes, _ := strconv.Atoi(row[3])
			k := slices.Index(repro.ODDLNodes, nodes)
			y, _ := strconv.ParseFloat(row[5], 64)
			if fi < 0 || k < 0 {
				t.Fatalf("%s: row %v names no fusion threshold or size of the sweep", fig.name, row)
			}
			want := r.Epoch[fi][row[1]]
			if strings.HasSuffix(row[0], "bandwidth utilisation") {
				want = nil
				for _, u := range r.Util[fi][row[1]] {
					want = append(want, 100*u)
				}
			} else if !strings.HasSuffix(row[0], "epoch time") {
				t.Fatalf("%s: panel %q is neither epoch time nor utilisation", fig.name, row[0])
			}
			if len(want) != len(repro.ODDLNodes) || y != want[k] {
				t.Errorf("%s %s %s at %d nodes: CSV %v, library %v", fig.name, row[0], row[1], nodes, y, want)
			}
			n++
		}
		if want := len(repro.ODDLFusions) * 2 * len(repro.ODDLNets) * len(repro.ODDLNodes); n != want {
			t.Errorf("%s: %d points checked, want %d", fig.name, n, want)
		}
	}
}
