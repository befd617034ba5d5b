// Package params reads typed, strict parameter sets ("configs") from key=value pairs and JSON.
//
// A config is a struct whose exported fields carry a `json:"key"` tag (the key, with its unit in
// the name: latency_ns, bandwidth_gbit_per_s), a `help:"..."` tag and a `source:"..."` tag that
// cites where the default comes from ([P] paper table/equation, [D] derived, [X] assumption).
// Supported field types: float64, int, bool and string. Unknown keys are errors that list the
// valid ones; JSON decoding rejects unknown fields.
//
// Two fields that give the same quantity two ways (a run's steps or tokens) carry
// `excludes:"other"`. Configs are layered (a preset, a job file, flags, --set, a sweep's grid),
// and a non-zero value of one, given by a higher layer, zeroes the other: a preset's 300B tokens
// give way to --steps 1. Within one layer both stay and validation names the conflict.
//
// JSON (every embedded config, every report) is read by a scanner that builds yaml.v3's node tree
// with its lines (the Decoder reads YAML and JSON alike), its nodes cut from slabs.
package params
