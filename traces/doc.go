// Package traces holds ddlest's trace file format and its importers.
//
// # Schema (ddlest-trace/1)
//
// One parquet row per event (Event): rank, device (GPU index, −1 on the host), stream (CUDA
// stream, or the host thread), name, category, start_ns, dur_ns, phase (fwd, bwd, optimizer,
// unknown), layer (−1 when unknown), correlation (links a runtime launch to its kernel), shapes
// (the profiler's "Input Dims"), dtype, and for collectives collective, bytes (the nccl-tests size
// S: all-gather's output, every other collective's input) and group_size. The footer's key/value
// metadata holds the schema version, source format, importer version, device name and
// properties (JSON), world size, ranks and original file names. Rows are sorted by rank, start,
// and longer first on ties; zstd-compressed row groups of 131,072 rows. Files are written
// atomically (temporary file + rename).
//
// # Import
//
// PyTorch profiler Chrome traces, plain or gzip (detected by magic number), one file per rank:
// Kineto's JSON object (traceEvents, deviceProperties, distributedInfo) and the legacy autograd
// profiler's bare JSON array. The JSON is read as a stream by a validating byte scanner
// (scan.go) that hands out values as slices of its one buffer, so that parsing allocates nothing
// per event; numbers take Clinger's exact fast path (a mantissa below 2⁵³ and a power of ten up
// to 10²², one correctly rounded division: the float strconv.ParseFloat gives, which is the
// fallback); only complete ("X") events become rows:
//
//	kineto cat                                 category
//	kernel, mtia_ccp_events (MTIA's kernels)   kernel, or collective for communication kernels:
//	                                           NCCL/RCCL (and RCCL's MSCCL), DeepEP, NVSHMEM,
//	                                           SymmetricMemory (recognize.go)
//	cpu_op, python_function                    cpu_op
//	cuda_runtime (CUDA's and HIP's calls),     runtime, or sync for the calls that block the host
//	cuda_driver, mtia_runtime, xpu_runtime,    until the device is done: cuda/hip Device-,
//	glow_runtime                               Stream-, EventSynchronize, cuCtx/cuStream/
//	                                           cuEventSynchronize (recognize.go)
//	cuda_sync (CUPTI's Stream/Event/Context    sync, on the device's track: waiting, counted
//	Sync records)                              as neither compute nor busy time (as in HTA)
//	gpu_memcpy / gpu_memset (ROCm's copies     memcpy / memset
//	and fills too)
//	user_annotation, gpu_user_annotation       annotation
//	Trace (the session's span)                 ignored
//	anything else (cuda_profiler_range,        not modelled: counted by category and reported
//	overhead, …)                               by the import (ImportSummary.Skipped)
//
// Flows (ac2g), instants, counters and metadata are not complete events. Stream and thread
// ids may be numbers, decimal strings or ROCm's hexadecimal strings ("0x0").
//
//	legacy (no cat)                            cpu_op when the name has "::" (aten::mm), else
//	                                           annotation (record_function ranges)
//
// ts and dur are microseconds (fractional in newer traces), rounded to nanoseconds. NCCL kernels'
// args (Collective name, In/Out msg nelems, Group size, dtype) give the collective and its size;
// kernels without them take both from the c10d op that launched them (c10d::allreduce_,
// alltoall_base_, _allgather_base_ … and record_param_comms inside, via the launch's correlation
// id), and the group from distributedInfo.world_size. A c10d op over a TensorList
// (c10d::allreduce_) has empty Input Dims: the nccl:* annotation PyTorch records inside it gives
// the buffer's shape and dtype, used only when no enclosing c10d op has a size (for all-gather
// the annotation is one rank's input, the c10d op's first input the whole output, nccl-tests'
// size).
//
// Phases: a range named with "backward" is bwd (## backward ##, autograd's evaluate_function:
// XBackward0, backward-compute; not forward-backward), with "optimizer" optimizer
// (Optimizer.step#SGD.step, ## optimizer ##), with "forward" or "training_step" fwd, and
// DualPipe-style chunk ranges by their suffix: attn(F) fwd, mlp(B) and mlp(W) bwd; annotations
// and those autograd/optimizer CPU ops open such ranges (as do the 2021 format's autograd node
// names, CudnnConvolutionBackward, AddmmBackward0), and ProfilerStep#N marks steps (an
// annotation, or an "Operator" in the 2021 format). An event takes its innermost enclosing
// range's phase on its thread; unmarked work on a step's thread before the step's first
// backward range is its forward pass. A kernel takes its launch's phase (runtime call, same
// correlation id), else the GPU-side annotation around it on its stream. A number after
// layer/layers/block in a range name is the layer.
//
// Memory is independent of the trace size: parsed events are held as 80-byte compact rows whose
// strings are ids in one table for the whole import (the parser interns each string once, by
// its bytes), sorted in runs of 262,144 (a run's buffer grows by doubling and is reused by the
// next; sorting moves 24-byte entries — rank, start, duration, index — and then each row once),
// and when there is more than one run they go to a temporary file of fixed-size records in the
// system temporary directory and are merged (one small buffer per run) while phases are
// resolved — which needs the rank's events in time order: the per-thread range stacks and
// pending launches it keeps are bounded by nesting depth and launch-queue length; what a name
// says (phase, layer, step, collective) is worked out once per name. The parquet writer holds
// one row group (131,072 rows) at a time. BenchmarkImport and BenchmarkImportLarge (a 1.5 GB
// trace) measure throughput, CPU time per MB, peak heap and resident set.
//
// Waiting vs transfer (SummarizeSteps, matchCalls): a rank's collective kernel runs from its
// launch until every peer has joined and the data has moved, so the ranks' kernels of one call
// overlap. Calls are matched across the trace's ranks by collective, group size and overlap in
// time (the trace keeps no NCCL sequence number); with s_last the latest start among a call's
// matched kernels, a rank's wait is s_last − s and its transfer e − s_last (e its end). Only the
// ranks in the trace are seen: with fewer than the group, the transfer is an upper bound.
//
// Errors name the file and the position (byte offset, event index): truncated or invalid JSON,
// corrupt gzip (told apart from bad JSON inside a good stream by draining it), negative or
// non-numeric durations, empty files, directories, unknown collective dtypes.
package traces
