package job

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/ddlest/ddlest/internal/errs"
)

// checkFinite is the output contract's one check: every number a report carries to the output
// (the table, JSON, CSV and parquet rows) is finite. Totals multiply the iteration by the
// training length, so a length too large for float64 (execution.steps 1e300) overflows them;
// the error names the number and the job's largest training-length key, exit 2.
func checkFinite(j *Job, rep *Report) error {
	r := &rep.Result
	vals := [...]struct {
		name string
		v    float64
	}{
		{"params", rep.Params}, {"steps", rep.Steps}, {"samples", rep.Samples}, {"epochs", rep.Epochs},
		{"iteration", float64(r.Iteration.Total)}, {"time to accuracy", float64(r.TimeToAccuracy)},
		{"samples per second", r.SamplesPerS}, {"tokens per second", r.TokensPerS},
		{"hardware FLOP/s per GPU", float64(r.HWFLOPPerGPU)}, {"model FLOP/s per GPU", float64(r.ModelFLOPPerGPU)},
		{"MFU", r.MFU}, {"memory", float64(r.Memory.Total)},
	}
	bad := func(name string, v float64) error {
		return errs.Usage("the estimate's %s is %g, beyond what a float64 counts: %s", name, v, largestLength(j))
	}
	for _, x := range vals {
		if math.IsNaN(x.v) || math.IsInf(x.v, 0) {
			return bad(x.name, x.v)
		}
	}
	if t := rep.Transformer; t != nil {
		for _, x := range [...]struct {
			name string
			v    float64
		}{{"tokens", t.Tokens}, {"training FLOP", t.TrainingFLOP}, {"compute at the minimum", t.ComputeMinFLOP},
			{"non-embedding params", t.NonEmbedding}, {"active params", t.ActiveParams}} {
			if math.IsNaN(x.v) || math.IsInf(x.v, 0) {
				return bad(x.name, x.v)
			}
		}
	}
	return nil
}

// largestLength names the job's largest training-length value (execution.steps, tokens, epochs
// or samples), the input that makes totals overflow.
func largestLength(j *Job) string {
	if j == nil || j.Execution == nil {
		return "a value given is too large"
	}
	v := reflect.Indirect(reflect.ValueOf(j.Execution))
	key, max := "", 0.0
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f, tf := v.Field(i), v.Type().Field(i)
			if tf.Anonymous && f.Kind() == reflect.Struct {
				walk(f)
				continue
			}
			name, _, _ := strings.Cut(tf.Tag.Get("json"), ",")
			switch name {
			case "steps", "tokens", "epochs", "samples":
				if x := math.Abs(f.Float()); x > max {
					key, max = name, x
				}
			}
		}
	}
	if v.Kind() == reflect.Struct {
		walk(v)
	}
	if key == "" {
		return "a value given is too large"
	}
	return fmt.Sprintf("execution.%s %g is too large", key, max)
}
