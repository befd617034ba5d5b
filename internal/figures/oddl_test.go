package figures

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ddlest/ddlest/internal/repro"
	"github.com/ddlest/ddlest/internal/units"
)

// ODDL's Figs. 10–13 plot exactly the reproduction library's sweeps: one figure per NIC rate
// (100, 200, 400 Gb/s, Table 2), in each per fusion threshold an epoch-time panel and a
// utilisation panel (in %), every network at every size.
func TestODDLFiguresAreTheLibrary(t *testing.T) {
	dir := t.TempDir()
	for _, fig := range []struct {
		name  string
		sweep func() (repro.ODDLScaling, error)
	}{{"oddl-fig10", repro.ODDLFig10}, {"oddl-fig11", repro.ODDLFig11}, {"oddl-fig12", repro.ODDLFig12}, {"oddl-fig13", repro.ODDLFig13}} {
		r, err := fig.sweep()
		if err != nil {
			t.Fatal(err)
		}
		for _, nic := range []int{100, 200, 400} {
			name := fig.name
			if nic != 100 {
				name += "-" + strconv.Itoa(nic) + "g"
			}
			f, ok := Lookup(name)
			if !ok {
				t.Fatalf("%s is not registered", name)
			}
			if err := Write(f, dir); err != nil {
				t.Fatal(err)
			}
			rows := readCSV(t, filepath.Join(dir, name+".csv"))
			n := 0
			for _, row := range rows[1:] {
				fi := slices.IndexFunc(repro.ODDLFusions, func(b units.Bytes) bool {
					return strings.Contains(row[0], fmt.Sprintf("%d MiB fusion, %d Gb/s", int(b/units.MiB), nic))
				})
				nodes, _ := strconv.Atoi(row[3])
				k := slices.Index(repro.ODDLNodes, nodes)
				y, _ := strconv.ParseFloat(row[5], 64)
				if fi < 0 || k < 0 {
					t.Fatalf("%s: row %v names no fusion threshold at %d Gb/s or size of the sweep", name, row, nic)
				}
				si := repro.ODDLSettingIndex(nic, repro.ODDLFusions[fi])
				want := r.Epoch[si][row[1]]
				if strings.HasSuffix(row[0], "bandwidth utilisation") {
					want = nil
					for _, u := range r.Util[si][row[1]] {
						want = append(want, 100*u)
					}
				} else if !strings.HasSuffix(row[0], "epoch time") {
					t.Fatalf("%s: panel %q is neither epoch time nor utilisation", name, row[0])
				}
				if len(want) != len(repro.ODDLNodes) || y != want[k] {
					t.Errorf("%s %s %s at %d nodes: CSV %v, library %v", name, row[0], row[1], nodes, y, want)
				}
				n++
			}
			if want := len(repro.ODDLFusions) * 2 * len(repro.ODDLNets) * len(repro.ODDLNodes); n != want {
				t.Errorf("%s: %d points checked, want %d", name, n, want)
			}
		}
	}
}
