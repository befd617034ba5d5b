package units

import (
	"math"
	"testing"
)

func near(a, b, rel float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

func TestRateConstructors(t *testing.T) {
	// 400 Gb/s = 50 GB/s (8 bits per byte); 2.4 Tb/s = 300 GB/s (DGX-A100 NVLink, RAMP §7.5).
	cases := []struct {
		name string
		got  BytesPerSecond
		want float64
	}{
		{"400Gbps", Gbps(400), 50e9},
		{"2.4Tbps", Tbps(2.4), 300e9},
		{"25GBps", GBps(25), 25e9},
	}
	for _, c := range cases {
		if !near(float64(c.got), c.want, 1e-12) {
			t.Errorf("%s = %v, want %v", c.name, float64(c.got), c.want)
		}
	}
	if g := Gbps(200).Gbit(); !near(g, 200, 1e-12) {
		t.Errorf("Gbit round trip = %v", g)
	}
}

func TestOver(t *testing.T) {
	// 1 GB at 50 GB/s = 20 ms; 312 TFLOP at 312 TFLOP/s = 1 s.
	if s := GB.Over(GBps(50)); !near(float64(s), 0.02, 1e-12) {
		t.Errorf("1GB/50GB/s = %v", s)
	}
	if s := FLOP(312e12).Over(TFLOPS(312)); !near(float64(s), 1, 1e-12) {
		t.Errorf("FLOP.Over = %v", s)
	}
	if s := Bytes(0).Over(0); s != 0 {
		t.Errorf("0 bytes at rate 0 = %v, want 0", s)
	}
	if s := Bytes(1).Over(0); !math.IsInf(float64(s), 1) {
		t.Errorf("1 byte at rate 0 = %v, want +Inf", s)
	}
}

func TestParseBytes(t *testing.T) {
	cases := []struct {
		in   string
		want float64
	}{
		{"1GB", 1e9}, {"1GiB", 1 << 30}, {"10MB", 1e7}, {"1e9", 1e9}, {"1e9B", 1e9},
		{"1.5 GB", 1.5e9}, {"512KiB", 512 * 1024}, {"2k", 2000}, {"3TB", 3e12},
	}
	for _, c := range cases {
		got, err := ParseBytes(c.in)
		if err != nil || !near(float64(got), c.want, 1e-12) {
			t.Errorf("ParseBytes(%q) = %v, %v; want %v", c.in, float64(got), err, c.want)
		}
	}
	for _, bad := range []string{"0", "-1", "abc", "", "1XB", "NaN", "Inf", "1e"} {
		if _, err := ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
}

func TestParseBandwidth(t *testing.T) {
	cases := []struct {
		in   string
		want float64
	}{
		{"200Gbps", 25e9}, {"200Gb/s", 25e9}, {"2.4Tbps", 300e9}, {"25GB/s", 25e9}, {"1e9", 1e9},
	}
	for _, c := range cases {
		got, err := ParseBandwidth(c.in)
		if err != nil || !near(float64(got), c.want, 1e-12) {
			t.Errorf("ParseBandwidth(%q) = %v, %v; want %v", c.in, float64(got), err, c.want)
		}
	}
	for _, bad := range []string{"0Gbps", "-5GB/s", "fast", "10GHz"} {
		if _, err := ParseBandwidth(bad); err == nil {
			t.Errorf("ParseBandwidth(%q) accepted", bad)
		}
	}
}

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want float64
	}{
		{"100ns", 1e-7}, {"1.3us", 1.3e-6}, {"1.3µs", 1.3e-6}, {"2ms", 2e-3}, {"1e-6", 1e-6}, {"0", 0},
	}
	for _, c := range cases {
		got, err := ParseDuration(c.in)
		if err != nil || !near(float64(got), c.want, 1e-12) {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", c.in, float64(got), err, c.want)
		}
	}
	for _, bad := range []string{"-1ns", "soon", "5 parsecs"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) accepted", bad)
		}
	}
}

func TestStrings(t *testing.T) {
	cases := []struct{ got, want string }{
		{Bytes(1.14e9).String(), "1.14 GB"},
		{Bytes(150e6).String(), "150 MB"},
		{Bytes(12).String(), "12 B"},
		{GBps(25).String(), "25 GB/s"},
		{Gbps(400).Bits(), "400 Gb/s"},
		{Tbps(12.8).Bits(), "12.8 Tb/s"},
		{TFLOPS(312).String(), "312 TFLOP/s"},
		{FLOP(4.34e21).String(), "4.34 ZFLOP"},
		{FLOP(3.8e25).String(), "38 YFLOP"}, // Llama 3 405B's pre-training (Dubey et al. 2024 §1: 3.8 × 10²⁵ FLOPs)
		{Seconds(98.1e-3).String(), "98.1 ms"},
		{Seconds(1.3e-6).String(), "1.3 µs"},
		{Seconds(20e-9).String(), "20 ns"},
		{Seconds(3 * 86400).String(), "3 days"},
		{Seconds(5 * 365 * 86400).String(), "5 years"},
		{Count(32.2e9), "32.2B"},
		{Count(98100), "98.1K"},
		{Count(2048), "2048"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// Decibels by definition (10·log10 of a power ratio): a 1:32 split is 15.05 dB, −30 dBm is
// 1 µW (1e-3 mW), and the two are inverse.
func TestDecibels(t *testing.T) {
	if got := Decibels(32); math.Abs(got-15.0515) > 1e-4 {
		t.Errorf("Decibels(32) = %g, want 15.0515", got)
	}
	if got := FromDecibels(-30); math.Abs(got-1e-3) > 1e-15 {
		t.Errorf("FromDecibels(-30) = %g, want 1e-3", got)
	}
	if got := FromDecibels(Decibels(0.25)); math.Abs(got-0.25) > 1e-12 {
		t.Errorf("FromDecibels(Decibels(0.25)) = %g", got)
	}
}
