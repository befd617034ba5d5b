// Package traces holds ddlest's trace file format: profiled events as parquet rows (Event), one
// row per kernel, CPU op, runtime call, memory copy/set, annotation or collective, with the rank,
// device, stream, name, category, start and duration in nanoseconds, training phase, layer,
// CPU↔kernel correlation id, shapes, dtype and, for collectives, the operation, message bytes and
// group size. File-level key/value metadata records the source format, importer version, device,
// world size, rank and original file name. Rows are sorted by rank then start time and compressed
// with zstd; files are written atomically (temporary file + rename).
//
// Importers from profiler output (PyTorch profiler / Kineto Chrome-trace JSON) build on this
// schema; they estimate nothing.
package traces
