package units

import "testing"

// TestParseBytesSweep: nccl-tests' -b 8 -e 8G -f 2 is 8 B … 8 GiB by doubling, 31 sizes
// (2^3 … 2^33, counted by hand); -i gives arithmetic steps; bad sweeps name what is valid.
func TestParseBytesSweep(t *testing.T) {
	got, err := ParseBytesSweep("8B:8GiB:x2")
	if err != nil || len(got) != 31 || got[0] != 8 || got[30] != 8<<30 {
		t.Errorf("8B:8GiB:x2: %d sizes %v … (%v), want 31 from 8 B to 8 GiB", len(got), got[:min(2, len(got))], err)
	}
	got, err = ParseBytesSweep("1MB:10MB:+3MB")
	if err != nil || len(got) != 4 || got[3] != 10e6 {
		t.Errorf("1MB:10MB:+3MB: %v (%v), want 1, 4, 7, 10 MB", got, err)
	}
	if got, _ := ParseBytesSweep("1MB:1MB:x2"); len(got) != 1 {
		t.Errorf("1MB:1MB:x2: %v, want the one size", got)
	}
	for _, bad := range []string{"8B:8GiB", "8B:1B:x2", "8B:8GiB:x1", "8B:8GiB:xNaN", "8B:8GiB:2", "8B:8GiB:+0", "1B:1TB:+1B", "zero:8B:x2"} {
		if _, err := ParseBytesSweep(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
