package params

import (
	"reflect"
	"strings"
)

// Alternative keys. A field tagged `excludes:"other"` is one of two ways to give the same thing
// (execution.steps or execution.tokens: the training length). Configs are layered (a preset,
// then a job file, then flags), and a layer that gives one alternative replaces the other from
// the layers below: a non-zero value set by SetPath, a Setter or a decoded mapping zeroes the
// excluded sibling, unless the same mapping gives that sibling too (then both stay, and the
// config's validation names the conflict).

// excluded lists the keys the field excludes.
func excluded(sf reflect.StructField) []string {
	tag := sf.Tag.Get("excludes")
	if tag == "" {
		return nil
	}
	return strings.Split(tag, ",")
}

// clearExcluded zeroes the siblings (fields of struct v) that field sf excludes, when val is
// non-zero; keep reports the keys that stay (given in the same layer).
func clearExcluded(v reflect.Value, sf reflect.StructField, val reflect.Value, keep func(string) bool) {
	if val.IsZero() {
		return
	}
	for _, k := range excluded(sf) {
		if keep != nil && keep(k) {
			continue
		}
		if _, f, ok := fieldByKey(v, k); ok {
			f.SetZero()
		}
	}
}

// Excludes returns the full paths of the leaves that the leaf at path (a unique suffix, as
// SetPath) excludes.
func Excludes(cfg any, path string) ([]string, error) {
	full, err := resolve(cfg, path)
	if err != nil {
		return nil, err
	}
	parent := strings.TrimSuffix(full, lastKey(full))
	var out []string
	walkLeaves(cfg, func(p []byte, sf reflect.StructField, _ reflect.Value) bool {
		if string(p) != full {
			return true
		}
		for _, k := range excluded(sf) {
			out = append(out, parent+k)
		}
		return false
	})
	return out, nil
}
