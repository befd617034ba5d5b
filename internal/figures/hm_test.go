package figures

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/ddlest/ddlest/internal/repro"
)

// HammingMesh's figures plot exactly the reproduction library's numbers: Table II's costs and
// shares, the §V-B overheads, Fig. 13's shares and Fig. 15's cells (ddlest's and the paper's
// data), point by point from the CSV.
func TestHammingMeshFiguresAreTheLibrary(t *testing.T) {
	dir := t.TempDir()
	read := func(name string) [][]string {
		f, _ := Lookup(name)
		if err := Write(f, dir); err != nil {
			t.Fatal(err)
		}
		return readCSV(t, filepath.Join(dir, name+".csv"))[1:]
	}
	num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	family := map[string]string{}
	for f, n := range repro.TopologyName {
		family[n] = f
	}

	rows, _ := repro.Table2()
	t2 := read("hammingmesh-table2")
	if len(t2) != 4*8 {
		t.Errorf("table2: %d points, want 32", len(t2))
	}
	for k, row := range t2 {
		cluster := []string{"small", "large"}[k/8%2]
		r, err := repro.Table2Row(rows, family[row[1]]+"-"+cluster)
		want := 100 * r.Ours.Shares.Global
		if k >= 16 {
			want = 100 * r.Ours.Shares.AllReduceAt
		}
		if err != nil || num(row[3]) != r.Ours.CostUSD/1e6 || num(row[5]) != want {
			t.Errorf("table2 %v: library cost %v, share %v (%v)", row, r.Ours.CostUSD/1e6, want, err)
		}
	}

	f15, _ := repro.HMFig15()
	pts := read("hammingmesh-fig15")
	if len(pts) != 4*30 {
		t.Errorf("fig15: %d points, want 120", len(pts))
	}
	for k, row := range pts {
		h, paper := []string{"hx2", "hx4"}[k/60], k/30%2 == 1
		o, w := family[row[1]], repro.HMWorkloads[k%5].Name
		i := (k % 30) / 5
		if repro.HMFig15Others[i] != o || repro.HMWorkloads[k%5].Title != row[3] {
			t.Fatalf("fig15 point %d %v: want %s over %s", k, row, w, repro.HMFig15Others[i])
		}
		want := f15.Saving[h][w][i]
		if paper {
			want = repro.HMFig15Paper[h][w][i]
		}
		if num(row[5]) != want {
			t.Errorf("fig15 %v: library %v", row, want)
		}
	}

	f13, _ := repro.HMFig13()
	pts = read("hammingmesh-fig13")
	n := len(f13.Sizes)
	if len(pts) != 2*5*n {
		t.Errorf("fig13: %d points, want %d", len(pts), 2*5*n)
	}
	for k, row := range pts {
		p := repro.HMFig13Presets[k/(5*n)]
		s := k / n % 5
		want := f13.Share["ft-large"]["ring"][k%n]
		if s > 0 {
			want = f13.Share[p][repro.HMFig13Algorithms[s-1]][k%n]
		}
		if num(row[3]) != f13.Sizes[k%n] || num(row[5]) != 100*want {
			t.Errorf("fig13 %v: library %v at %v", row, 100*want, f13.Sizes[k%n])
		}
	}

	pts = read("hammingmesh-runtimes")
	ours, torus := 0, 0
	for _, row := range pts {
		if row[0] != "ddlest: exposed communication over compute" {
			// The paper's GPT-3 on the torus, by hand: 72.2 ms over 31.83 ms of compute (§V-B5).
			if row[1] == "torus" && row[3] == "GPT-3" {
				run, compute := 72.2, 31.83 // float64 arithmetic, as the figure's
				if want := 100 * (run/compute - 1); num(row[5]) != want {
					t.Errorf("runtimes %v: want %v", row, want)
				}
				torus++
			}
			continue
		}
		for _, w := range repro.HMWorkloads {
			if w.Title != row[3] {
				continue
			}
			ov, _ := repro.Overhead(w.Name, family[row[1]]+"-"+w.Cluster)
			c, _ := repro.Runtime(w.Name, "ideal")
			if num(row[5]) != 100*ov/c {
				t.Errorf("runtimes %v: library %v", row, 100*ov/c)
			}
			ours++
		}
	}
	if ours != 5*8 || torus != 1 {
		t.Errorf("runtimes: %d of ddlest's points, want 40", ours)
	}
}
