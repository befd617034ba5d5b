package job

import "testing"

func TestCellString(t *testing.T) {
	for _, c := range []struct {
		cell Cell
		want string
	}{
		{Cell{Kind: Int, Num: 1536}, "1536"},
		{Cell{Kind: Float, Num: 25271582720}, "25271582720"}, // bytes: no exponent
		{Cell{Kind: Float, Num: 2.5e-3}, "0.0025"},
		{Cell{Kind: Float, Num: 2.5524561472929674e+06}, "2.5524561472929674e+06"},
		{Cell{Kind: Bool, Num: 1}, "true"},
		{Cell{Kind: Text, Text: "superpod"}, "superpod"},
	} {
		if got := c.cell.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.cell, got, c.want)
		}
	}
}

// TestColumnsUnique: a row's columns are keyed by name (CSV headers, sweep rows).
func TestColumnsUnique(t *testing.T) {
	for _, w := range Workloads().Names() {
		seen := map[string]bool{}
		for _, c := range Columns(w) {
			if seen[c.Name] {
				t.Errorf("%s: column %s twice", w, c.Name)
			}
			seen[c.Name] = true
		}
	}
}
