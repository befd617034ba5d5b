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
// report's JSON is the job plus the report, a valid input again. Columns is the one column
// specification CSV output, sweep rows and comparisons read a report through.
//
// Software presets (software.go, configs/software.json) name the training software a
// transformer job models — Megatron-LM 2021 and 2022, Megatron-Core, DeepSpeed — as data: per
// execution key a default and the values the stack supports, each with its source. The preset
// sets its defaults where it is named (first among the execution's keys), later keys override
// them, and Run refuses any value the software lacks (exit 2, naming the key and the source); a
// search enumerates only the supported values of the keys it chooses.
//
// Search (search.go) enumerates a transformer's layouts on N GPUs (megatron.Layouts: TP | heads,
// PP·interleave | layers, DP = N/(TP·PP) | global batch, micro-batch | local batch, interleaving
// only with micro-batches % PP = 0 as Megatron-LM requires, EP | DP and experts, every
// recomputation policy, sequence parallelism where TP > 1), rejects those whose closed-form
// footprint (megatron.CheckMemory, the accounting Build uses) exceeds the GPU, prices the rest on
// one network placement and sorts them by iteration time (steps are fixed by the global batch,
// so time to accuracy sorts the same). A layout that lost is classified by the component of
// compute + bubble + exposed communication whose excess over the best is largest (LostTo).
//
// Sweep (sweep.go) runs the Cartesian product of a grid of keys over a job: each key resolves
// once to a leaf setter with its values parsed (params.Setter), every point is a copy of the job
// with one assignment per key, so the rows are the same for any number of workers. Workers take
// runs of points in grid order (shorter as the sweep ends) from a ring of sweepBatch points per
// worker; the caller's goroutine emits them in order as the runs before them finish, while the
// workers go on. A point runs in a worker's scratch (its job copy, report, plan and estimate
// slices, reused without allocating); one that ran keeps its scratch until it is emitted, and
// then goes back to the worker that ran it (a scratch stays in one core's cache). What workers
// share on a point's path is read-mostly: the process-wide placed networks and auto-mode
// resolutions are sync.Maps, whose hits write nothing shared.
// Infeasible points (exit-3 errors) and invalid combinations (usage errors) are rows with their
// reason, formatted only when read (by the workers, in parallel, when the caller asks with
// SweepOptions.Reason); any other error stops the sweep after the points before it.
package job
