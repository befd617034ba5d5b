package megatron

import (
	"reflect"
	"testing"
)

// TestBlockKeyCoversGeometry changes every field of a geometry, one at a time, and checks that
// the block cache's key changes with it, except for the fields that cannot change the blocks on
// their own: the graph and the MoE scratch (not inputs) and the parameter counts (derived from
// the widths and TP, which are in the key). A field added to geom and left out of key fails here.
func TestBlockKeyCoversGeometry(t *testing.T) {
	skip := map[string]bool{"gr": true, "moeAct": true, "layerP": true, "attnP": true, "linearW": true}
	base := geometry(baseConfig())
	k0 := base.key(false)
	if base.key(true) == k0 {
		t.Errorf("ownHead is not in the key")
	}
	var walk func(path string, v reflect.Value)
	n := 0
	walk = func(path string, v reflect.Value) {
		for i := 0; i < v.NumField(); i++ {
			f, name := v.Field(i), v.Type().Field(i).Name
			if skip[name] {
				continue
			}
			p := path + name
			f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem() // unexported fields
			old := reflect.New(f.Type()).Elem()
			old.Set(f)
			switch f.Kind() {
			case reflect.Struct:
				walk(p+".", f)
				continue
			case reflect.Bool:
				f.SetBool(!f.Bool())
			case reflect.Int:
				f.SetInt(f.Int() + 7)
			case reflect.Float64:
				f.SetFloat(f.Float() + 0.5)
			default:
				t.Fatalf("geom.%s: kind %s not handled by this test", p, f.Kind())
			}
			n++
			if base.key(false) == k0 {
				t.Errorf("geom.%s changed but the block key did not", p)
			}
			f.Set(old)
		}
	}
	walk("", reflect.ValueOf(&base).Elem())
	if n < 30 {
		t.Errorf("walked %d fields; the geometry has more", n)
	}
}
