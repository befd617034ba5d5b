package params

import (
	"bytes"
	"encoding"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
)

// NodeDecoder is implemented by configs whose field types depend on other keys (a run picks
// its model and execution types by its workload, a network its parameters by its model): they
// decode their own mapping node, calling back into the Decoder for the typed parts.
type NodeDecoder interface {
	DecodeNode(d *Decoder, n *yaml.Node, path string) error
}

// Decoder decodes YAML (and so JSON, a subset of YAML) strictly into tagged structs: an unknown
// key is an error naming the file, its line, the key's path and the valid keys; a value of the
// wrong kind or unit names the key and what it wants. Keys are the fields' json tags, so the same
// struct encodes with encoding/json and decodes here.
type Decoder struct {
	// Name is the source (a file name) used in messages.
	Name string
}

// Decode parses data and decodes its single document into v (a pointer).
func Decode(data []byte, name string, v any) error {
	d := &Decoder{Name: name}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
		// JSON (every embedded config, every report): the faster parser, same nodes.
		n, err := jsonNode(data)
		if err != nil {
			return errs.Usage("%s: %v", name, err)
		}
		return d.Decode(n, v, "")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return errs.Usage("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return errs.Usage("%s: empty file; want a mapping of keys (YAML or JSON)", name)
	}
	return d.Decode(doc.Content[0], v, "")
}

// Errorf is a usage error located at node n of the decoder's file.
func (d *Decoder) Errorf(n *yaml.Node, format string, a ...any) error {
	return errs.Usage("%s:%d: %s", d.Name, n.Line, fmt.Sprintf(format, a...))
}

// Decode fills v (a pointer) from node n; path names n in messages ("" for the root).
func (d *Decoder) Decode(n *yaml.Node, v any, path string) error {
	return d.value(n, reflect.ValueOf(v).Elem(), path)
}

// Mapping returns the key → value nodes of mapping node n (an error if n is not a mapping or
// repeats a key), and the keys in file order.
func (d *Decoder) Mapping(n *yaml.Node, path string) (map[string]*yaml.Node, []*yaml.Node, error) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil, d.Errorf(n, "%s: want a mapping of keys, got %s", orRoot(path), describe(n))
	}
	m := make(map[string]*yaml.Node, len(n.Content)/2)
	var keys []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if _, dup := m[k.Value]; dup {
			return nil, nil, d.Errorf(k, "%s: key %q given twice", orRoot(path), k.Value)
		}
		m[k.Value] = n.Content[i+1]
		keys = append(keys, k)
	}
	return m, keys, nil
}

func orRoot(path string) string {
	if path == "" {
		return "document"
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

var (
	nodeDecoderType     = reflect.TypeFor[NodeDecoder]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	nodeType            = reflect.TypeFor[yaml.Node]()
)

func (d *Decoder) value(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if v.Type() == nodeType { // kept as written, for a second, typed pass
		v.Set(reflect.ValueOf(*n))
		return nil
	}
	if v.Kind() != reflect.Pointer && v.Kind() != reflect.Interface && v.CanAddr() && v.Addr().Type().Implements(nodeDecoderType) {
		return v.Addr().Interface().(NodeDecoder).DecodeNode(d, n, path)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if n.Tag == "!!null" {
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.value(n, v.Elem(), path)
	case reflect.Interface:
		if v.IsNil() || v.Elem().Kind() != reflect.Pointer {
			return fmt.Errorf("params: %s has no type to decode into", path)
		}
		return d.value(n, v.Elem().Elem(), path)
	case reflect.Struct:
		if v.Addr().Type().Implements(textUnmarshalerType) {
			break
		}
		return d.structValue(n, v, path)
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			break
		}
		m, keys, err := d.Mapping(n, path)
		if err != nil {
			return err
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		for _, k := range keys {
			e := reflect.New(v.Type().Elem()).Elem()
			if err := d.value(m[k.Value], e, join(path, k.Value)); err != nil {
				return err
			}
			v.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), e)
		}
		return nil
	case reflect.Slice:
		if n.Kind == yaml.ScalarNode && v.CanAddr() && v.Addr().Type().Implements(textUnmarshalerType) {
			break // a list written as text ("1024-512-1")
		}
		if n.Kind != yaml.SequenceNode {
			return d.Errorf(n, "%s: want a list, got %s", orRoot(path), describe(n))
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			if err := d.value(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return d.Errorf(n, "%s: want a single value, got %s", orRoot(path), describe(n))
	}
	if n.Tag == "!!null" {
		v.SetZero()
		return nil
	}
	if err := SetScalar(v, lastKey(path), n.Value); err != nil {
		return d.Errorf(n, "%s: %v", path, err)
	}
	return nil
}

func lastKey(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

func (d *Decoder) structValue(n *yaml.Node, v reflect.Value, path string) error {
	m, keys, err := d.Mapping(n, path)
	if err != nil {
		return err
	}
	for _, k := range keys {
		sf, f, ok := fieldByKey(v, k.Value)
		if !ok {
			return d.Errorf(k, "unknown key %q in %s; valid: %s", k.Value, orRoot(path), strings.Join(Keys(v.Addr().Interface()), ", "))
		}
		if err := d.value(m[k.Value], f, join(path, k.Value)); err != nil {
			return err
		}
		if sf.Tag.Get("excludes") != "" { // it replaces its alternative from a lower layer, unless given here too
			clearExcluded(v, sf, f, func(e string) bool { _, given := m[e]; return given })
		}
	}
	return nil
}

// Field returns the field of the struct cfg points to whose key is key. Index paths are kept
// per (type, key): validation reads fields on the estimate's path.
func Field(cfg any, key string) (reflect.Value, bool) {
	v, t := structOf(cfg)
	k := fieldKey{t, key}
	if idx, ok := fieldIndexes.Load(k); ok {
		if idx == nil {
			return reflect.Value{}, false
		}
		return v.FieldByIndex(idx.([]int)), true
	}
	idx, ok := fieldIndex(t, key, nil)
	if !ok {
		fieldIndexes.Store(k, nil)
		return reflect.Value{}, false
	}
	fieldIndexes.Store(k, idx)
	return v.FieldByIndex(idx), true
}

type fieldKey struct {
	t   reflect.Type
	key string
}

var fieldIndexes sync.Map // fieldKey → []int (nil: no such key)

// fieldByKey finds the field of struct v whose key is key (embedded structs flattened).
func fieldByKey(v reflect.Value, key string) (reflect.StructField, reflect.Value, bool) {
	var sf reflect.StructField
	var out reflect.Value
	found := false
	fields(v, func(f reflect.StructField, fv reflect.Value, k string) bool {
		if k == key {
			sf, out, found = f, fv, true
			return false
		}
		return true
	})
	return sf, out, found
}

// Keys lists the keys of the struct cfg points to, in field order.
func Keys(cfg any) []string {
	v, _ := structOf(cfg)
	var out []string
	fields(v, func(_ reflect.StructField, _ reflect.Value, k string) bool {
		out = append(out, k)
		return true
	})
	return out
}

// SetScalar assigns text s to v, by v's type: numbers (a string with a unit is accepted where
// the key names the unit: dp_bucket_bytes: 25MB, latency_ns: 2us, bandwidth_gbit_per_s: 50GB/s),
// integers (1e6 is accepted when integral), booleans, strings and encoding.TextUnmarshaler
// values.
func SetScalar(v reflect.Value, key, s string) error {
	if v.CanAddr() && v.Addr().Type().Implements(textUnmarshalerType) {
		return v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
	}
	switch v.Kind() {
	case reflect.Float64, reflect.Float32:
		x, err := parseNumber(key, s)
		if err != nil {
			return err
		}
		v.SetFloat(x)
	case reflect.Int, reflect.Int64, reflect.Int32:
		x, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return fmt.Errorf("%q is not an integer", s)
		}
		v.SetInt(int64(x))
	case reflect.Bool:
		x, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		v.SetBool(x)
	case reflect.String:
		v.SetString(s)
	default:
		return fmt.Errorf("unsupported type %s", v.Type())
	}
	return nil
}

// unitKeys maps a key's unit suffix to the parser of values written with a unit and the factor
// from the parser's SI base unit to the key's unit.
var unitKeys = []struct {
	suffix, what string
	parse        func(string) (float64, error)
	scale        float64
}{
	{"_bytes", "a size such as 25MB or 2e7", func(s string) (float64, error) { b, err := units.ParseBytes(s); return float64(b), err }, 1},
	{"_gbit_per_s", "a rate such as 400Gbps or 50GB/s", func(s string) (float64, error) { r, err := units.ParseBandwidth(s); return r.Gbit(), err }, 1},
	{"_tbps", "a rate such as 2.4Tbps or 300GB/s", func(s string) (float64, error) { r, err := units.ParseBandwidth(s); return r.Gbit(), err }, 1e-3},
	{"_ns", "a duration such as 500ns or 2us", func(s string) (float64, error) { t, err := units.ParseDuration(s); return float64(t), err }, 1e9},
	{"_us", "a duration such as 2us or 500ns", func(s string) (float64, error) { t, err := units.ParseDuration(s); return float64(t), err }, 1e6},
	{"_s", "a duration such as 1.5s or 20ms", func(s string) (float64, error) { t, err := units.ParseDuration(s); return float64(t), err }, 1},
}

// parseNumber reads a finite number, or a value with a unit where the key carries one.
func parseNumber(key, s string) (float64, error) {
	t := strings.TrimSpace(s)
	if x, err := strconv.ParseFloat(t, 64); err == nil {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("%q is not a finite number", s)
		}
		return x, nil
	}
	for _, u := range unitKeys {
		if strings.HasSuffix(key, u.suffix) {
			x, err := u.parse(t)
			if err != nil {
				return 0, fmt.Errorf("%q has the wrong unit: want %s", s, u.what)
			}
			return x * u.scale, nil
		}
	}
	return 0, fmt.Errorf("%q is not a number", s)
}

// Leaf is one settable value of a config tree: its dotted path and field.
type Leaf struct {
	Path  string
	Field reflect.StructField
	Value reflect.Value
}

// Leaves lists the scalar fields of the struct cfg points to, depth first, with dotted paths;
// nested structs (and non-nil pointers to them) are descended, maps and slices skipped.
func Leaves(cfg any) []Leaf {
	out := make([]Leaf, 0, 48) // a section of a job has 30–45 (Leaf is large: no regrowing)
	walkLeaves(cfg, func(path []byte, sf reflect.StructField, fv reflect.Value) bool {
		out = append(out, Leaf{Path: string(path), Field: sf, Value: fv})
		return true
	})
	return out
}

// walkLeaves calls f with every leaf of cfg, as Leaves lists them, until f returns false. The
// path is built in one buffer, valid during the call: looking a key up (resolve) makes no
// string and no Leaf per leaf.
func walkLeaves(cfg any, f func(path []byte, sf reflect.StructField, fv reflect.Value) bool) {
	v, _ := structOf(cfg)
	buf := make([]byte, 0, 64)
	var walk func(v reflect.Value) bool
	walk = func(v reflect.Value) bool {
		return fields(v, func(sf reflect.StructField, fv reflect.Value, k string) bool {
			n := len(buf)
			if n > 0 {
				buf = append(buf, '.')
			}
			buf = append(buf, k...)
			defer func() { buf = buf[:n] }()
			for fv.Kind() == reflect.Interface || fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					return true
				}
				fv = fv.Elem()
			}
			switch {
			case fv.CanAddr() && fv.Addr().Type().Implements(textUnmarshalerType):
			case fv.Kind() == reflect.Struct:
				return walk(fv)
			case fv.Kind() == reflect.Map || fv.Kind() == reflect.Slice:
				return true
			}
			return f(buf, sf, fv)
		})
	}
	walk(v)
}

// SetPath assigns value to the leaf of cfg at path. A path may be shortened to any unique
// suffix of whole keys ("tp" for "execution.tp"). Errors name the path and the valid ones.
func SetPath(cfg any, path, value string) error {
	s, err := NewSetter(cfg, path)
	if err != nil {
		return err
	}
	v, err := s.Parse(value)
	if err != nil {
		return err
	}
	s.Apply(cfg, v) // a value given replaces its alternative
	return nil
}

// resolve finds the full path of a leaf from a unique suffix of whole keys.
func resolve(cfg any, path string) (string, error) {
	var hits []string
	exact := false
	walkLeaves(cfg, func(p []byte, _ reflect.StructField, _ reflect.Value) bool {
		if string(p) == path {
			exact = true
			return false
		}
		if len(p) > len(path) && p[len(p)-len(path)-1] == '.' && string(p[len(p)-len(path):]) == path {
			hits = append(hits, string(p))
		}
		return true
	})
	if exact {
		return path, nil
	}
	switch len(hits) {
	case 0:
		var ps []string
		for _, l := range Leaves(cfg) {
			ps = append(ps, l.Path)
		}
		return "", errs.Usage("unknown key %q; valid: %s", path, strings.Join(ps, ", "))
	case 1:
		return hits[0], nil
	}
	return "", errs.Usage("key %q is ambiguous; give one of %s", path, strings.Join(hits, ", "))
}

// Setter assigns parsed values to one leaf of configs that share a shape, without walking the
// config for every assignment (a sweep sets the same keys at every point).
type Setter struct {
	// Path is the leaf's full path.
	Path  string
	steps [][]int // per key, the field index path in its (dereferenced) struct
	typ   reflect.Type
	clear [][]int // the excluded siblings' index paths in the leaf's struct
}

// NewSetter resolves path (a unique suffix of whole keys, as SetPath) on cfg.
func NewSetter(cfg any, path string) (*Setter, error) {
	full, err := resolve(cfg, path)
	if err != nil {
		return nil, err
	}
	s := &Setter{Path: full}
	v, _ := structOf(cfg)
	keys := strings.Split(full, ".")
	for i, key := range keys {
		v = deref(v)
		idx, ok := fieldIndex(v.Type(), key, nil)
		if !ok {
			return nil, errs.Usage("unknown key %q", full)
		}
		s.steps = append(s.steps, idx)
		parent := v
		v = v.FieldByIndex(idx)
		if i < len(keys)-1 {
			continue
		}
		for _, k := range excluded(parent.Type().FieldByIndex(idx)) {
			if ci, ok := fieldIndex(parent.Type(), k, nil); ok {
				s.clear = append(s.clear, ci)
			}
		}
	}
	s.typ = v.Type()
	return s, nil
}

// Parse reads text as the leaf's value, as SetPath would.
func (s *Setter) Parse(text string) (reflect.Value, error) {
	v := reflect.New(s.typ).Elem()
	if err := SetScalar(v, lastKey(s.Path), text); err != nil {
		return v, errs.Usage("%s: %v", s.Path, err)
	}
	return v, nil
}

// Apply assigns a value from Parse to the leaf of cfg (of the shape NewSetter saw).
func (s *Setter) Apply(cfg any, val reflect.Value) { s.Bind(cfg).Set(val) }

// Bind finds the leaf in cfg once, for setting it again and again (a sweep's points). The
// binding holds while cfg's pointers along the path stay the same.
func (s *Setter) Bind(cfg any) Bound {
	v, _ := structOf(cfg)
	var parent reflect.Value
	for _, idx := range s.steps {
		parent = deref(v)
		v = parent.FieldByIndex(idx)
	}
	b := Bound{leaf: v}
	for _, ci := range s.clear {
		b.clear = append(b.clear, parent.FieldByIndex(ci))
	}
	return b
}

// Bound is a Setter's leaf in one config (Setter.Bind).
type Bound struct {
	leaf  reflect.Value
	clear []reflect.Value // the excluded siblings
}

// Set assigns a value from Parse, as Apply.
func (b Bound) Set(val reflect.Value) {
	b.leaf.Set(val)
	if len(b.clear) > 0 && !val.IsZero() { // a value given replaces its alternative
		for _, c := range b.clear {
			c.SetZero()
		}
	}
}

func deref(v reflect.Value) reflect.Value {
	for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	return v
}

// fieldIndex is the index path of the field of struct type t whose key is key (embedded structs
// flattened, as fields).
func fieldIndex(t reflect.Type, key string, prefix []int) ([]int, bool) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		idx := append(prefix[:len(prefix):len(prefix)], i)
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Tag.Get("json") == "" {
			if out, ok := fieldIndex(sf.Type, key, idx); ok {
				return out, true
			}
			continue
		}
		if jsonKey(sf) == key {
			return idx, true
		}
	}
	return nil, false
}
