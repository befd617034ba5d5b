// Package params reads typed, strict parameter sets ("configs") from key=value pairs and JSON.
//
// A config is a struct whose exported fields carry a `json:"key"` tag (the key, with its unit in
// the name: latency_ns, bandwidth_gbit_per_s), a `help:"..."` tag and a `source:"..."` tag that
// cites where the default comes from ([P] paper table/equation, [D] derived, [X] assumption).
// Supported field types: float64, int, bool and string. Unknown keys are errors that list the
// valid ones; JSON decoding rejects unknown fields.
package params
