package params

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/ddlest/ddlest/internal/errs"
)

// Param describes one field of a config.
type Param struct {
	Key    string
	Value  string // current value, formatted
	Help   string
	Source string
}

// List describes every parameter of cfg (a pointer to a tagged struct), in field order; the
// fields of embedded structs (parameters several networks share) count as the struct's own, as
// encoding/json sees them.
func List(cfg any) []Param {
	v, _ := structOf(cfg)
	var out []Param
	fields(v, func(f reflect.StructField, fv reflect.Value, key string) bool {
		out = append(out, Param{Key: key, Value: format(fv), Help: f.Tag.Get("help"), Source: f.Tag.Get("source")})
		return true
	})
	return out
}

// fields calls f for every tagged field of struct value v, embedded structs flattened, until f
// returns false.
func fields(v reflect.Value, f func(reflect.StructField, reflect.Value, string) bool) bool {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Tag.Get("json") == "" {
			if !fields(v.Field(i), f) {
				return false
			}
			continue
		}
		key := jsonKey(sf)
		if key == "" {
			continue
		}
		if !f(sf, v.Field(i), key) {
			return false
		}
	}
	return true
}

// Set assigns value to the parameter key of cfg. Errors are usage errors naming the key, the
// bad value and what would be valid.
func Set(cfg any, key, value string) error {
	v, _ := structOf(cfg)
	var keys []string
	var found *reflect.StructField
	var fv reflect.Value
	fields(v, func(sf reflect.StructField, x reflect.Value, k string) bool {
		keys = append(keys, k)
		if k == key {
			found, fv = &sf, x
			return false
		}
		return true
	})
	if found != nil {
		f := *found
		switch fv.Kind() {
		case reflect.Float64:
			x, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				return errs.Usage("parameter %s=%q: not a number", key, value)
			}
			fv.SetFloat(x)
		case reflect.Int:
			x, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil {
				return errs.Usage("parameter %s=%q: not an integer", key, value)
			}
			fv.SetInt(int64(x))
		case reflect.Bool:
			x, err := strconv.ParseBool(strings.TrimSpace(value))
			if err != nil {
				return errs.Usage("parameter %s=%q: not true or false", key, value)
			}
			fv.SetBool(x)
		case reflect.String:
			fv.SetString(value)
		default:
			return fmt.Errorf("params: field %s has unsupported type %s", f.Name, fv.Type())
		}
		return nil
	}
	return errs.Usage("unknown parameter %q; valid: %s", key, strings.Join(keys, ", "))
}

// SetPairs applies "key=value" strings in order.
func SetPairs(cfg any, pairs []string) error {
	for _, p := range pairs {
		k, val, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return errs.Usage("parameter %q is not key=value", p)
		}
		if err := Set(cfg, strings.TrimSpace(k), val); err != nil {
			return err
		}
	}
	return nil
}

// DecodeJSON fills cfg from a JSON object, rejecting unknown keys and trailing data. name is the
// source (a file name) used in error messages.
func DecodeJSON(cfg any, r io.Reader, name string) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return errs.Usage("%s: %v", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cfg); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return errs.Usage("%s: invalid JSON at byte %d: %v", name, se.Offset, se)
		case errors.As(err, &te):
			return errs.Usage("%s: field %q at byte %d: want %s, got %s", name, te.Field, te.Offset, te.Type, te.Value)
		case errors.Is(err, io.EOF):
			return errs.Usage("%s: empty file; want a JSON object", name)
		default:
			return errs.Usage("%s: %v", name, err)
		}
	}
	if dec.More() {
		return errs.Usage("%s: unexpected data after the JSON object at byte %d", name, dec.InputOffset())
	}
	return nil
}

// Problems collects validation failures so that Validate can report all of them at once, on one
// line. A problem is formatted when the error is read, not when it is found: a sweep meets
// thousands of invalid combinations and may print none of them.
type Problems []problem

type problem struct {
	format string
	args   []any // boxed when recorded: later changes to the variables do not reach the message
}

// Addf records a problem.
func (p *Problems) Addf(format string, a ...any) {
	if false {
		_ = fmt.Sprintf(format, a...) // go vet checks Addf's calls as Sprintf's
	}
	*p = append(*p, problem{format, a})
}

// Positive records a problem unless v is finite and > 0.
func (p *Problems) Positive(key string, v float64) {
	if !(v > 0) || math.IsInf(v, 0) {
		p.Addf("%s %g must be > 0", key, v)
	}
}

// NonNegative records a problem unless v is finite and ≥ 0.
func (p *Problems) NonNegative(key string, v float64) {
	if !(v >= 0) || math.IsInf(v, 0) {
		p.Addf("%s %g must be ≥ 0", key, v)
	}
}

// AtLeast records a problem unless v ≥ lo.
func (p *Problems) AtLeast(key string, v, lo int) {
	if v < lo {
		p.Addf("%s %d must be ≥ %d", key, v, lo)
	}
}

// OneOf records a problem unless v is one of valid.
func (p *Problems) OneOf(key, v string, valid []string) {
	for _, x := range valid {
		if v == x {
			return
		}
	}
	p.Addf("%s %q is not valid; valid: %s", key, v, strings.Join(valid, ", "))
}

// Check records err, if any.
func (p *Problems) Check(err error) {
	if err != nil {
		p.Addf("%v", err)
	}
}

// Err returns nil when there are no problems, else a usage error joining them with "; " after
// the prefix (one allocation; the text is made when read).
func (p Problems) Err(prefix string) error {
	if len(p) == 0 {
		return nil
	}
	e := &problemsError{list: problemList{prefix: prefix, p: p}}
	e.Err = &e.list
	return &e.UsageError
}

type problemsError struct {
	errs.UsageError
	list problemList
}

type problemList struct {
	prefix string
	p      Problems
}

func (l *problemList) Error() string {
	var b strings.Builder
	b.WriteString(l.prefix)
	for i, x := range l.p {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, x.format, x.args...)
	}
	return b.String()
}

func structOf(cfg any) (reflect.Value, reflect.Type) {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("params: want a pointer to a struct, got %T", cfg))
	}
	return v.Elem(), v.Elem().Type()
}

func jsonKey(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	k, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if k == "-" {
		return ""
	}
	return k
}

func format(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	default:
		return fmt.Sprint(v.Interface())
	}
}
