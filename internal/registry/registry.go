package registry

import (
	"fmt"
	"strings"

	"github.com/ddlest/ddlest/internal/errs"
)

// Registry maps names to values of T in registration order.
type Registry[T any] struct {
	kind  string
	names []string
	items map[string]T
}

// New returns an empty registry; kind names what it holds in error messages ("network", "GPU").
func New[T any](kind string) *Registry[T] {
	return &Registry[T]{kind: kind, items: map[string]T{}}
}

// Add registers v under name. Registering a name twice is a programming error and panics; the
// registries are built from constant tables that their tests construct.
func (r *Registry[T]) Add(name string, v T) *Registry[T] {
	if _, dup := r.items[name]; dup {
		panic(fmt.Sprintf("registry: %s %q registered twice", r.kind, name))
	}
	r.names = append(r.names, name)
	r.items[name] = v
	return r
}

// Lookup returns the entry for name, or a usage error naming the valid entries.
func (r *Registry[T]) Lookup(name string) (T, error) {
	if v, ok := r.items[name]; ok {
		return v, nil
	}
	var zero T
	return zero, errs.Usage("unknown %s %q; valid: %s", r.kind, name, strings.Join(r.names, ", "))
}

// Get returns the entry for name and whether there is one (no error to format: for hot paths
// that only ask).
func (r *Registry[T]) Get(name string) (T, bool) {
	v, ok := r.items[name]
	return v, ok
}

// Names lists the registered names in registration order.
func (r *Registry[T]) Names() []string { return append([]string(nil), r.names...) }

// All returns the entries in registration order.
func (r *Registry[T]) All() []T {
	out := make([]T, 0, len(r.names))
	for _, n := range r.names {
		out = append(out, r.items[n])
	}
	return out
}
