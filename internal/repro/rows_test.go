package repro

import (
	"math"
	"strings"
	"testing"
)

// Every published number of the table is reproduced within its tolerance, or is its documented
// deviation with ddlest's value in the documented range.
func TestRows(t *testing.T) {
	rows, err := Rows()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Check(rows) {
		if r.Status == Fail {
			t.Errorf("%s (%s, %s): ddlest %.4g %s, paper %.4g: %s", r.ID, r.Cite, r.What, r.Got, r.Unit, r.Paper, r.Why)
		}
		if testing.Verbose() {
			t.Logf("%-45s %-10s paper %-8.4g ddlest %-8.4g %s", r.ID, r.Status, r.Paper, r.Got, r.Unit)
		}
	}
}

// Rows are well formed: unique IDs under their seed, a citation, a unit, a tolerance (none only
// for an integer held exactly) or a deviation with its reason and range.
func TestRowsWellFormed(t *testing.T) {
	rows, _ := Rows()
	seen, bySeed := map[string]bool{}, map[string]int{}
	for _, r := range rows {
		bySeed[r.Seed]++
		if seen[r.ID] || !strings.HasPrefix(r.ID, r.Seed+"/") || r.Cite == "" || r.Unit == "" || r.What == "" || r.Value == nil {
			t.Errorf("row %+v is malformed or repeated", r)
		}
		seen[r.ID] = true
		if r.Deviation != "" && !(r.Known[0] < r.Known[1]) {
			t.Errorf("%s: a deviation needs its documented range", r.ID)
		}
		// Tol 0 within is exact: only for integers the paper prints (counts, levels, sizes).
		if r.Tol < 0 || r.Deviation == "" && r.Tol == 0 && r.Bound == Within && r.Paper != math.Trunc(r.Paper) {
			t.Errorf("%s: no tolerance", r.ID)
		}
	}
	if _, err := Rows("nope"); err == nil {
		t.Error("unknown seed accepted")
	}
	for _, seed := range Seeds { // every seed paper's reproductions are rows of the table
		if bySeed[seed] == 0 {
			t.Errorf("seed %s has no row", seed)
		}
	}
}

// Judge's verdicts, by hand.
func TestJudge(t *testing.T) {
	val := func(v float64) func() (float64, error) { return func() (float64, error) { return v, nil } }
	for _, c := range []struct {
		r    Row
		want Status
	}{
		{Row{Paper: 10, Tol: 0.1, Value: val(10.9)}, Pass},
		{Row{Paper: 10, Tol: 0.1, Value: val(11.1)}, Fail},
		{Row{Paper: 8320, Value: val(8320)}, Pass}, // Tol 0: exact
		{Row{Paper: 8320, Value: val(8321)}, Fail},
		{Row{Paper: 1, Bound: AtMost, Tol: 0.3, Value: val(1.25)}, Pass},
		{Row{Paper: 1, Bound: AtMost, Tol: 0.3, Value: val(1.35)}, Fail},
		{Row{Paper: 1.16, Bound: AtLeast, Value: val(1.2)}, Pass},
		{Row{Paper: 16.7, Tol: 0.25, Deviation: "why", Known: [2]float64{6.5, 7.5}, Value: val(7)}, Deviation},
		{Row{Paper: 16.7, Tol: 0.25, Deviation: "why", Known: [2]float64{6.5, 7.5}, Value: val(8)}, Fail},
		{Row{Paper: 16.7, Tol: 0.25, Deviation: "why", Known: [2]float64{6.5, 20}, Value: val(16)}, Fail}, // met: drop it
	} {
		if got := Judge(c.r); got.Status != c.want {
			t.Errorf("%+v: %v (%s), want %v", c.r, got.Status, got.Why, c.want)
		}
	}
}
