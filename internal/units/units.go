package units

import (
	"fmt"
	"math"
	"strings"
)

// Bytes is an amount of data in bytes (SI base unit; 1 GB = 1e9 B, 1 GiB = 2^30 B).
type Bytes float64

// Seconds is a duration in seconds. time.Duration is too coarse for sub-nanosecond optics and
// too short for months of training, so model arithmetic uses this float type.
type Seconds float64

// FLOP is a count of floating-point operations (a multiply-add counts as 2).
type FLOP float64

// FLOPPerSecond is a compute rate.
type FLOPPerSecond float64

// BytesPerSecond is a data rate in bytes per second. Bit rates enter only through Gbps and Tbps.
type BytesPerSecond float64

// Decimal and binary multipliers.
const (
	KB  Bytes = 1e3
	MB  Bytes = 1e6
	GB  Bytes = 1e9
	TB  Bytes = 1e12
	KiB Bytes = 1 << 10
	MiB Bytes = 1 << 20
	GiB Bytes = 1 << 30
	TiB Bytes = 1 << 40

	Nanosecond  Seconds = 1e-9
	Microsecond Seconds = 1e-6
	Millisecond Seconds = 1e-3
	Minute      Seconds = 60
	Hour        Seconds = 3600
	Day         Seconds = 86400

	// TFLOPPerSecond is 10^12 FLOP/s.
	TFLOPPerSecond FLOPPerSecond = 1e12
)

// bitsPerByte is the only place where the bit/byte factor lives.
const bitsPerByte = 8

// Gbps converts a rate in gigabits per second (10^9 bit/s) to BytesPerSecond.
func Gbps(x float64) BytesPerSecond { return BytesPerSecond(x * 1e9 / bitsPerByte) }

// Tbps converts a rate in terabits per second (10^12 bit/s) to BytesPerSecond.
func Tbps(x float64) BytesPerSecond { return BytesPerSecond(x * 1e12 / bitsPerByte) }

// GBps converts a rate in gigabytes per second (10^9 B/s) to BytesPerSecond.
func GBps(x float64) BytesPerSecond { return BytesPerSecond(x * 1e9) }

// TFLOPS converts 10^12 FLOP/s to FLOPPerSecond.
func TFLOPS(x float64) FLOPPerSecond { return FLOPPerSecond(x * 1e12) }

// Ns converts nanoseconds to Seconds.
func Ns(x float64) Seconds { return Seconds(x * 1e-9) }

// Us converts microseconds to Seconds.
func Us(x float64) Seconds { return Seconds(x * 1e-6) }

// Gbit reports the rate in gigabits per second.
func (r BytesPerSecond) Gbit() float64 { return float64(r) * bitsPerByte / 1e9 }

// Over is the time to move b bytes at rate r. A zero or negative rate gives +Inf for a positive
// amount and 0 for none.
func (b Bytes) Over(r BytesPerSecond) Seconds {
	if b <= 0 {
		return 0
	}
	if r <= 0 {
		return Seconds(math.Inf(1))
	}
	return Seconds(float64(b) / float64(r))
}

// Over is the time to execute f at rate r (+Inf for a positive amount at a zero rate).
func (f FLOP) Over(r FLOPPerSecond) Seconds {
	if f <= 0 {
		return 0
	}
	if r <= 0 {
		return Seconds(math.Inf(1))
	}
	return Seconds(float64(f) / float64(r))
}

// Per is the rate at which f operations complete in s seconds.
func (f FLOP) Per(s Seconds) FLOPPerSecond {
	if s <= 0 {
		return 0
	}
	return FLOPPerSecond(float64(f) / float64(s))
}

// Max returns the larger of two durations.
func Max(a, b Seconds) Seconds {
	if a > b {
		return a
	}
	return b
}

// String renders b with an SI prefix, e.g. "1.14 GB".
func (b Bytes) String() string {
	return si(float64(b), "B", []prefix{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}})
}

// String renders r with an SI prefix in bytes per second, e.g. "25 GB/s".
func (r BytesPerSecond) String() string {
	return si(float64(r), "B/s", []prefix{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}})
}

// Bits renders r as a bit rate with an SI prefix, e.g. "400 Gb/s".
func (r BytesPerSecond) Bits() string {
	return si(float64(r)*bitsPerByte, "b/s", []prefix{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}})
}

// String renders r, e.g. "312 TFLOP/s".
func (r FLOPPerSecond) String() string {
	return si(float64(r), "FLOP/s", []prefix{{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}})
}

// String renders f, e.g. "1.2 PFLOP".
func (f FLOP) String() string {
	return si(float64(f), "FLOP", []prefix{{1e24, "Y"}, {1e21, "Z"}, {1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}})
}

// String renders s in the largest convenient unit, from nanoseconds to years.
func (s Seconds) String() string {
	v := float64(s)
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return fmt.Sprint(v)
	case v == 0:
		return "0 s"
	case v < 1e-6:
		return trim(v/1e-9) + " ns"
	case v < 1e-3:
		return trim(v/1e-6) + " µs"
	case v < 1:
		return trim(v/1e-3) + " ms"
	case v < 120:
		return trim(v) + " s"
	case v < 2*float64(Hour):
		return trim(v/float64(Minute)) + " min"
	case v < 2*float64(Day):
		return trim(v/float64(Hour)) + " h"
	case v < 730*float64(Day):
		return trim(v/float64(Day)) + " days"
	default:
		return trim(v/(365*float64(Day))) + " years"
	}
}

type prefix struct {
	scale float64
	name  string
}

func si(v float64, unit string, prefixes []prefix) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v) + " " + unit
	}
	a := math.Abs(v)
	for _, p := range prefixes {
		if a >= p.scale {
			return trim(v/p.scale) + " " + p.name + unit
		}
	}
	return trim(v) + " " + unit
}

// trim formats with three significant digits and no trailing zeros.
func trim(v float64) string {
	s := fmt.Sprintf("%.3g", v)
	if strings.ContainsAny(s, "e") {
		return fmt.Sprintf("%.0f", v)
	}
	return s
}

// Count renders a large dimensionless count with an SI suffix, e.g. 32.2e9 → "32.2B",
// 98100 → "98.1K". Below 10^4 it prints the integer.
func Count(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e12:
		return trim(v/1e12) + "T"
	case a >= 1e9:
		return trim(v/1e9) + "B"
	case a >= 1e6:
		return trim(v/1e6) + "M"
	case a >= 1e4:
		return trim(v/1e3) + "K"
	default:
		return fmt.Sprintf("%.0f", v)
	}
}

// Decibels is a power ratio in dB, 10·log10(ratio) (a 1:32 splitter loses 15.05 dB).
func Decibels(ratio float64) float64 { return 10 * math.Log10(ratio) }

// FromDecibels is the power ratio of db dB, 10^(db/10); of a level in dBm, its power in mW.
func FromDecibels(db float64) float64 { return math.Pow(10, db/10) }
