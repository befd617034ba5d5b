// Package golit writes Go values as Go source: composite literals a package compiles instead of
// decoding its built-in tables at run time.
//
// A ddlest process reads a few of its built-in JSON tables (configs/) on every run. Decoding them
// with encoding/json costs ≈ 0.2 ms each from cold (reflection and a byte-at-a-time scanner), a
// tenth of a whole `ddlest megatron` process (issue 9: ≤ 5 ms). A package whose table sits on that
// path keeps the JSON as its source of truth, decodes and validates it in a test, and compares the
// Go source this package writes for the decoded value with a committed generated file (rewritten
// with -update); the same test checks that the compiled literal equals the decoded value
// (reflect.DeepEqual), so the literal can neither drift from the JSON nor differ from it.
//
// Supported: bool, integers, floats (finite; shortest round-trip form), strings, slices, maps
// (keys sorted; string, integer or float keys), structs and other named types (fields by name,
// zero fields left out), pointers to structs, and interfaces (the value they hold, with its
// type). A type of another package is qualified by its package's name, which File imports (two
// packages of one name are refused); a struct's unexported fields are written only when the
// target package declares it (no other package may set them). An empty non-nil slice or map is
// written as T{} (decoding keeps it distinct from nil).
package golit

import (
	"fmt"
	"go/format"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Decl is one generated function: func Name() Type { return <literal of Value> }.
type Decl struct {
	// Doc is the function's comment (without //), one or more lines.
	Doc   string
	Name  string
	Value any
}

// File writes a gofmt-formatted Go file of package pkg (import path pkgPath) that declares one
// function per Decl returning its value. header is the file's leading comment lines (without
// //); the first is the generated-code marker.
func File(pkg, pkgPath string, header []string, decls []Decl) ([]byte, error) {
	var body strings.Builder
	w := writer{pkgPath: pkgPath, b: &body, imports: map[string]string{}}
	for _, d := range decls {
		v := reflect.ValueOf(d.Value)
		typ, err := w.typeExpr(v.Type())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		body.WriteString("\n")
		for _, l := range strings.Split(d.Doc, "\n") {
			body.WriteString("// " + l + "\n")
		}
		fmt.Fprintf(&body, "func %s() %s {\n\treturn ", d.Name, typ)
		if err := w.value(v, false); err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		body.WriteString("\n}\n")
	}
	var b strings.Builder
	for _, h := range header {
		b.WriteString("// " + h + "\n")
	}
	b.WriteString("\npackage " + pkg + "\n")
	if len(w.imports) > 0 {
		paths := make([]string, 0, len(w.imports))
		for p := range w.imports {
			paths = append(paths, p)
		}
		slices.Sort(paths)
		b.WriteString("\nimport (\n")
		for _, p := range paths {
			b.WriteString(strconv.Quote(p) + "\n")
		}
		b.WriteString(")\n")
	}
	b.WriteString(body.String())
	return format.Source([]byte(b.String()))
}

// Literal is one value's Go expression (types of pkgPath unqualified, other packages' types
// qualified by their names), as gofmt lays it out.
func Literal(v any, pkgPath string) (string, error) {
	var b strings.Builder
	w := writer{pkgPath: pkgPath, b: &b, imports: map[string]string{}}
	if err := w.value(reflect.ValueOf(v), false); err != nil {
		return "", err
	}
	out, err := format.Source([]byte(b.String()))
	return string(out), err
}

type writer struct {
	pkgPath string
	b       *strings.Builder
	imports map[string]string // import path → package name, of the types written
}

// typeExpr is t as the target package spells it; a type of another package is qualified by its
// package's name and imported.
func (w writer) typeExpr(t reflect.Type) (string, error) {
	if t.Name() != "" {
		switch {
		case t.PkgPath() == w.pkgPath:
			return t.Name(), nil
		case t.PkgPath() == "":
			return t.Name(), nil // predeclared: int, float64, string, bool
		}
		pkg, name, ok := strings.Cut(t.String(), ".") // reflect spells a named type pkgname.Name
		if !ok || strings.ContainsAny(name, "[.") {
			return "", fmt.Errorf("unsupported type %s", t)
		}
		for p, n := range w.imports {
			if n == pkg && p != t.PkgPath() {
				return "", fmt.Errorf("type %s: packages %s and %s are both named %s", t, p, t.PkgPath(), pkg)
			}
		}
		w.imports[t.PkgPath()] = pkg
		return pkg + "." + name, nil
	}
	switch t.Kind() {
	case reflect.Slice:
		e, err := w.typeExpr(t.Elem())
		return "[]" + e, err
	case reflect.Map:
		k, err := w.typeExpr(t.Key())
		if err != nil {
			return "", err
		}
		e, err := w.typeExpr(t.Elem())
		return "map[" + k + "]" + e, err
	case reflect.Pointer:
		e, err := w.typeExpr(t.Elem())
		return "*" + e, err
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return "any", nil
		}
	}
	return "", fmt.Errorf("unsupported type %s", t)
}

// value writes v; elided: v is an element of a slice or map literal, whose type (and the & of a
// pointer to a struct) Go lets the literal leave out.
func (w writer) value(v reflect.Value, elided bool) error {
	t := v.Type()
	named := t.Name() != "" && t.PkgPath() != ""
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.String:
		s, err := basic(v)
		if err != nil {
			return err
		}
		if named {
			name, err := w.typeExpr(t)
			if err != nil {
				return err
			}
			s = name + "(" + s + ")"
		}
		w.b.WriteString(s)
		return nil
	case reflect.Interface:
		if v.IsNil() {
			w.b.WriteString("nil")
			return nil
		}
		return w.value(v.Elem(), false) // the value's own type: the interface's does not say it
	case reflect.Pointer:
		if v.IsNil() {
			w.b.WriteString("nil")
			return nil
		}
		if t.Elem().Kind() != reflect.Struct {
			return fmt.Errorf("unsupported pointer type %s (pointers to structs only)", t)
		}
		if !elided {
			w.b.WriteString("&")
		}
		return w.value(v.Elem(), elided)
	case reflect.Struct:
		if !elided {
			name, err := w.typeExpr(t)
			if err != nil {
				return err
			}
			w.b.WriteString(name)
		}
		w.b.WriteString("{")
		n := 0
		for i := range t.NumField() {
			f := t.Field(i)
			fv := v.Field(i)
			if fv.IsZero() {
				continue
			}
			if !f.IsExported() && t.PkgPath() != w.pkgPath {
				return fmt.Errorf("%s.%s: unexported field of another package", t, f.Name)
			}
			n++
			w.b.WriteString("\n" + f.Name + ": ")
			if err := w.value(fv, false); err != nil {
				return fmt.Errorf("%s.%s: %w", t, f.Name, err)
			}
			w.b.WriteString(",")
		}
		if n > 0 {
			w.b.WriteString("\n")
		}
		w.b.WriteString("}")
		return nil
	case reflect.Slice:
		if v.IsNil() {
			w.b.WriteString("nil")
			return nil
		}
		if err := w.open(t, elided); err != nil {
			return err
		}
		lines := composite(t.Elem())
		for i := range v.Len() {
			w.sep(i, lines)
			if err := w.value(v.Index(i), true); err != nil {
				return err
			}
		}
		w.end(v.Len(), lines)
		return nil
	case reflect.Map:
		if v.IsNil() {
			w.b.WriteString("nil")
			return nil
		}
		if err := w.open(t, elided); err != nil {
			return err
		}
		keys := v.MapKeys()
		var err error
		slices.SortFunc(keys, func(a, b reflect.Value) int {
			c, e := compareKeys(a, b)
			if e != nil {
				err = e
			}
			return c
		})
		if err != nil {
			return err
		}
		lines := composite(t.Elem()) || len(keys) > 4
		for i, k := range keys {
			w.sep(i, lines)
			if err := w.value(k, true); err != nil {
				return err
			}
			w.b.WriteString(": ")
			if err := w.value(v.MapIndex(k), true); err != nil {
				return err
			}
		}
		w.end(len(keys), lines)
		return nil
	}
	return fmt.Errorf("unsupported type %s", t)
}

// composite: values of t are written on lines of their own in a slice or map (one element per
// line, as gofmt lays out a table), numbers and strings inline.
func composite(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		return true
	}
	return false
}

// sep starts element i of a slice or map literal.
func (w writer) sep(i int, lines bool) {
	switch {
	case lines && i > 0:
		w.b.WriteString(",\n")
	case lines:
		w.b.WriteString("\n")
	case i > 0:
		w.b.WriteString(", ")
	}
}

// end closes a slice or map literal of n elements.
func (w writer) end(n int, lines bool) {
	if lines && n > 0 {
		w.b.WriteString(",\n")
	}
	w.b.WriteString("}")
}

// open writes a slice or map literal's type (unless elided) and its brace.
func (w writer) open(t reflect.Type, elided bool) error {
	if !elided || t.Name() != "" {
		name, err := w.typeExpr(t)
		if err != nil {
			return err
		}
		w.b.WriteString(name)
	}
	w.b.WriteString("{")
	return nil
}

// basic is a bool, number or string as a Go literal: integers in decimal, floats in the shortest
// form that reads back to the same float64 (strconv 'g', -1), strings quoted.
func basic(v reflect.Value) (string, error) {
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", fmt.Errorf("float %v has no Go literal", f)
		}
		bits := 64
		if v.Kind() == reflect.Float32 {
			bits = 32
		}
		s := strconv.FormatFloat(f, 'g', -1, bits)
		if f == 0 && math.Signbit(f) {
			return "", fmt.Errorf("float -0 has no Go literal")
		}
		return s, nil
	case reflect.String:
		return strconv.Quote(v.String()), nil
	}
	return "", fmt.Errorf("unsupported kind %s", v.Kind())
}

func compareKeys(a, b reflect.Value) (int, error) {
	switch a.Kind() {
	case reflect.String:
		return strings.Compare(a.String(), b.String()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cmpOrdered(a.Int(), b.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return cmpOrdered(a.Uint(), b.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return cmpOrdered(a.Float(), b.Float()), nil
	}
	return 0, fmt.Errorf("unsupported map key kind %s", a.Kind())
}

func cmpOrdered[T int64 | uint64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
