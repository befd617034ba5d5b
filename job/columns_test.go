package job

import "testing"

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
