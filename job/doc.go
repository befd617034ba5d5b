// Package job runs ddlest's pipeline end to end — scaling law → partition → compute profile →
// network → estimator — from one job as data, so that commands stay thin and benchmarks,
// sweeps and searches measure the path users run.
//
// A Job is Calculon's three configs in Go: the workload's model (architecture) and execution
// (parallel layout, batch, recomputation, precision, optimizer, overlap, training length, compute
// profile), and a Cluster (GPU, GPUs per node, nodes, Network = a registered network model with
// its typed parameters). Each is a tagged struct: encoding/json writes it (keys carry units),
// internal/params.Decode reads it strictly from YAML or JSON (unknown keys with their line and the
// valid keys, values in the key's unit), params.SetPath sets one key (--set, generated flags).
// Workloads are an explicit registry (Workloads); presets are data (configs/clusters.json,
// configs/models.json). Run(job) returns the one Report record every output renders from; a
// report's JSON is the job plus the report, a valid input again.
package job
