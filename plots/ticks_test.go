package plots

import "testing"

// Ticks on a time axis are given in seconds and sit, labelled, at the axis's unit: 2 ms on a
// millisecond axis is the tick 2, "2" (not 2.0000000000000004); on an unscaled axis exact.
func TestConstantTicks(t *testing.T) {
	ts := constantTicks([]float64{2e-3, 50e-3}, 1e-3)
	if ts[0].Label != "2" || ts[1].Label != "50" || ts[1].Value < 49.999 || ts[1].Value > 50.001 {
		t.Errorf("ms ticks %+v, want 2 and 50", ts)
	}
	if ts := constantTicks([]float64{1048576}, 1); ts[0].Label != "1.048576e+06" || ts[0].Value != 1048576 {
		t.Errorf("unscaled tick %+v", ts[0])
	}
}
