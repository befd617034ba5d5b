// Package profile prices the compute of a partition.Plan: a Profile turns each op of a per-GPU
// graph into seconds. Implementations: roofline (a GPU table and the roofline model) and, later,
// measured traces. Profiles know nothing of networks; the estimator combines both.
package profile
