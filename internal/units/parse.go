package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseBytes reads a size such as "1GB", "1 GiB", "10MB", "512KiB", "1e9" or "1e9B".
// Decimal prefixes (k, M, G, T) are powers of 10, binary ones (Ki, Mi, Gi, Ti) powers of 2.
// The size must be finite and > 0.
func ParseBytes(s string) (Bytes, error) {
	v, err := parseWithUnit(s, byteUnits, "a size > 0 such as 1GB, 1GiB, 10MB or 1e9 (bytes)")
	return Bytes(v), err
}

// ParseBandwidth reads a rate such as "200Gbps", "200Gb/s", "2.4Tbps", "25GB/s" or "25e9"
// (bytes per second when unitless). Lower-case b is bits, upper-case B bytes.
func ParseBandwidth(s string) (BytesPerSecond, error) {
	v, err := parseWithUnit(s, rateUnits, "a rate > 0 such as 200Gbps, 2.4Tbps or 25GB/s")
	return BytesPerSecond(v), err
}

// ParseDuration reads a duration such as "100ns", "1.3us", "1.3µs", "2ms", "1s" or "1e-6"
// (seconds when unitless). Zero is allowed, negative values are not.
func ParseDuration(s string) (Seconds, error) {
	const valid = "a duration >= 0 such as 100ns, 1.3us, 2ms or 1e-6 (seconds)"
	t := strings.TrimSpace(s)
	num, unit := splitNumber(t)
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%q is not %s", s, valid)
	}
	mult, ok := durationUnits[unit]
	if !ok {
		return 0, fmt.Errorf("%q has unknown unit %q; want %s", s, unit, valid)
	}
	return Seconds(v * mult), nil
}

var byteUnits = map[string]float64{
	"": 1, "B": 1,
	"k": 1e3, "kB": 1e3, "K": 1e3, "KB": 1e3,
	"M": 1e6, "MB": 1e6,
	"G": 1e9, "GB": 1e9,
	"T": 1e12, "TB": 1e12,
	"P": 1e15, "PB": 1e15,
	"Ki": 1 << 10, "KiB": 1 << 10,
	"Mi": 1 << 20, "MiB": 1 << 20,
	"Gi": 1 << 30, "GiB": 1 << 30,
	"Ti": 1 << 40, "TiB": 1 << 40,
}

var rateUnits = map[string]float64{
	"":    1,
	"B/s": 1, "kB/s": 1e3, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
	"bps": 1.0 / bitsPerByte, "b/s": 1.0 / bitsPerByte,
	"kbps": 1e3 / bitsPerByte, "Kbps": 1e3 / bitsPerByte, "kb/s": 1e3 / bitsPerByte,
	"Mbps": 1e6 / bitsPerByte, "Mb/s": 1e6 / bitsPerByte,
	"Gbps": 1e9 / bitsPerByte, "Gb/s": 1e9 / bitsPerByte,
	"Tbps": 1e12 / bitsPerByte, "Tb/s": 1e12 / bitsPerByte,
}

var durationUnits = map[string]float64{
	"": 1, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "ps": 1e-12,
	"min": 60, "h": 3600,
}

func parseWithUnit(s string, table map[string]float64, valid string) (float64, error) {
	t := strings.TrimSpace(s)
	num, unit := splitNumber(t)
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not %s", s, valid)
	}
	mult, ok := table[unit]
	if !ok {
		return 0, fmt.Errorf("%q has unknown unit %q; want %s", s, unit, valid)
	}
	if v <= 0 {
		return 0, fmt.Errorf("%q is not %s", s, valid)
	}
	return v * mult, nil
}

// splitNumber splits "1.5e9GB" into "1.5e9" and "GB". An 'e' or 'E' belongs to the number only
// when a digit (optionally signed) follows it.
func splitNumber(s string) (string, string) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	for i < len(s) && (isDigit(s[i]) || s[i] == '.') {
		i++
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	return s[:i], strings.TrimSpace(s[i:])
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// MaxSweep is the most sizes a sweep may name.
const MaxSweep = 10000

// ParseBytesSweep reads an nccl-tests-style size sweep "MIN:MAX:xF" (MIN, MIN·F, MIN·F², … up to
// MAX, as nccl-tests -b MIN -e MAX -f F) or "MIN:MAX:+STEP" (MIN, MIN+STEP, … up to MAX, as -i
// STEP). MAX is included when the sweep lands on it (within 1e-9). nccl-tests' "8G" is 8 GiB:
// write 8GiB for its sizes.
func ParseBytesSweep(s string) ([]Bytes, error) {
	const valid = "MIN:MAX:xFACTOR or MIN:MAX:+STEP, e.g. 8B:8GiB:x2 or 1MB:10MB:+1MB"
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%q is not a sweep; want %s", s, valid)
	}
	lo, err := ParseBytes(parts[0])
	if err != nil {
		return nil, fmt.Errorf("sweep %q: %v", s, err)
	}
	hi, err := ParseBytes(parts[1])
	if err != nil {
		return nil, fmt.Errorf("sweep %q: %v", s, err)
	}
	if hi < lo {
		return nil, fmt.Errorf("sweep %q: MAX %v is below MIN %v; want %s", s, hi, lo, valid)
	}
	step := strings.TrimSpace(parts[2])
	var next func(Bytes) Bytes
	switch {
	case strings.HasPrefix(step, "x"):
		f, err := strconv.ParseFloat(step[1:], 64)
		if err != nil || !(f > 1) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("sweep %q: factor %q is not a number > 1; want %s", s, step, valid)
		}
		next = func(b Bytes) Bytes { return b * Bytes(f) }
	case strings.HasPrefix(step, "+"):
		d, err := ParseBytes(step[1:])
		if err != nil {
			return nil, fmt.Errorf("sweep %q: step: %v", s, err)
		}
		next = func(b Bytes) Bytes { return b + d }
	default:
		return nil, fmt.Errorf("sweep %q: step %q is neither xFACTOR nor +STEP; want %s", s, step, valid)
	}
	var out []Bytes
	for b := lo; b <= hi*(1+1e-9); b = next(b) {
		if len(out) == MaxSweep {
			return nil, fmt.Errorf("sweep %q names more than %d sizes; want a larger step", s, MaxSweep)
		}
		out = append(out, b)
	}
	return out, nil
}
