// Package units defines the physical quantities ddlest computes with, as float64 types in SI base
// units: Bytes, Seconds, FLOP, FLOPPerSecond and BytesPerSecond.
//
// Conversions between bits and bytes happen only in the named constructors Gbps and Tbps (bit
// rates, 10^9 and 10^12 bit/s) and GBps (10^9 B/s); no other code divides by 8. Sizes follow the SI
// convention (GB = 10^9 B) unless a binary prefix is used (GiB = 2^30 B); the parsers accept both
// ("1GB", "1GiB", "10MB", "1e9"), and every preset says which one its source used.
//
// Time is a float64 of seconds rather than time.Duration: optical slots are sub-nanosecond and
// time-to-accuracy can exceed the 292 years a Duration holds.
package units
