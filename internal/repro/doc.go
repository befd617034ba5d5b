// Package repro holds no code: its tests reproduce the RAMP paper's system-level results with the
// whole pipeline (networks, collectives, roofline, Megatron partitioner, estimator), each citing
// the section or figure, the paper's number, the tolerance and — where a number cannot be
// reproduced — why.
package repro
