package job

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/ddlest/ddlest/configs"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/registry"
	"github.com/ddlest/ddlest/partition/megatron"
)

// Software is a training-software preset of configs/software.json: the transformer execution
// settings its stack defaults (what overlaps with compute, what crosses the network) and the
// values it supports at all, each with the code or paper that defines it.
//
// Semantics: naming the preset (execution.software, --software) sets each setting's default;
// keys given after it (later flags, a config file's other keys, --set) override it. When the job
// runs, every setting must hold a value the software supports, whatever set it: otherwise the
// job stops with exit 2 naming the key, the software and the source. A search only enumerates
// supported values of the keys it chooses (interleave, recompute, seq_parallel).
type Software struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Source      string            `json:"source"`
	Settings    []SoftwareSetting `json:"settings"`
}

// SoftwareSetting is one execution key of a software preset.
type SoftwareSetting struct {
	// Key is a key of the transformer execution (execution.<key>).
	Key string `json:"key"`
	// Default is the value the preset sets ("": it sets none).
	Default string `json:"default"`
	// Supported are the values the software has (empty: every value).
	Supported []string `json:"supported"`
	Source    string   `json:"source"`
	// def and ok are Default and Supported parsed with the key's type.
	def reflect.Value
	ok  []reflect.Value
}

var (
	softwareOnce sync.Once
	software     *registry.Registry[*Software]
	softwareErr  error
)

// Softwares returns the software presets, decoded strictly and checked: every key is a
// transformer execution key, every value parses as its type, every setting has a source and
// its default is one of its supported values.
func Softwares() (*registry.Registry[*Software], error) {
	softwareOnce.Do(func() { software, softwareErr = decodeSoftware(configs.Software, "configs/software.json") })
	return software, softwareErr
}

// decodeSoftware reads a software table.
func decodeSoftware(data []byte, name string) (*registry.Registry[*Software], error) {
	var list []*Software
	if err := params.Decode(data, name, &list); err != nil {
		return nil, err
	}
	r := registry.New[*Software]("software preset")
	exec := megatronWorkload{}.NewExecution()
	for _, s := range list {
		if s.Name == "" || s.Source == "" {
			return nil, errs.Usage("%s: software preset %q needs a name and a source", name, s.Name)
		}
		for i := range s.Settings {
			st := &s.Settings[i]
			where := fmt.Sprintf("%s: software %s, setting %q", name, s.Name, st.Key)
			if st.Key == "software" {
				return nil, errs.Usage("%s: a software preset cannot set the software", where)
			}
			field, ok := params.Field(exec, st.Key)
			if !ok {
				return nil, errs.Usage("%s: not an execution key; valid: %s", where, strings.Join(params.Keys(exec), ", "))
			}
			if strings.TrimSpace(st.Source) == "" {
				return nil, errs.Usage("%s: no source; every setting names the code or paper that defines it", where)
			}
			if st.Default == "" && len(st.Supported) == 0 {
				return nil, errs.Usage("%s: sets nothing (give a default, supported values or both)", where)
			}
			parse := func(text string) (reflect.Value, error) {
				v := reflect.New(field.Type()).Elem()
				if err := params.SetScalar(v, st.Key, text); err != nil {
					return v, errs.Usage("%s: %v", where, err)
				}
				return v, nil
			}
			for _, text := range st.Supported {
				v, err := parse(text)
				if err != nil {
					return nil, err
				}
				st.ok = append(st.ok, v)
			}
			if st.Default != "" {
				v, err := parse(st.Default)
				if err != nil {
					return nil, err
				}
				if !st.supports(v) {
					return nil, errs.Usage("%s: default %s is not among its supported values %s", where, st.Default, strings.Join(st.Supported, ", "))
				}
				st.def = v
			}
		}
		r.Add(s.Name, s)
	}
	return r, nil
}

// supports reports whether v is one of the setting's supported values (any, when none is listed).
func (st *SoftwareSetting) supports(v reflect.Value) bool {
	if len(st.ok) == 0 {
		return true
	}
	for _, x := range st.ok {
		if x.Equal(v) {
			return true
		}
	}
	return false
}

// LookupSoftware returns a software preset (a usage error lists the valid names).
func LookupSoftware(name string) (*Software, error) {
	r, err := Softwares()
	if err != nil {
		return nil, err
	}
	return r.Lookup(name)
}

// softwared is an execution that names its training software.
type softwared interface{ softwareName() *string }

func (e *TransformerExecution) softwareName() *string { return &e.Software }

// UseSoftware names the job's training software and sets the execution keys it defaults; ""
// names none (the keys keep their values).
func (j *Job) UseSoftware(name string) error {
	e, ok := j.Execution.(softwared)
	if !ok {
		return errs.Usage("execution.software: the %s workload has no software presets; they apply to megatron", j.Workload)
	}
	if name == "" {
		*e.softwareName() = ""
		return nil
	}
	s, err := LookupSoftware(name)
	if err != nil {
		return err
	}
	for _, st := range s.Settings {
		if st.def.IsValid() {
			field, _ := params.Field(j.Execution, st.Key)
			field.Set(st.def)
		}
	}
	*e.softwareName() = name
	return nil
}

// check returns a usage error for the first setting of exec the software does not support.
func (s *Software) check(exec any) error {
	for i := range s.Settings {
		st := &s.Settings[i]
		field, _ := params.Field(exec, st.Key)
		if !st.supports(field) {
			return errs.Usage("execution.%s %v: software %s does not support it (%s); valid with %s: %s",
				st.Key, field.Interface(), s.Name, st.Source, s.Name, strings.Join(st.Supported, ", "))
		}
	}
	return nil
}

// restrict narrows a layout search to the values the software supports of the keys it chooses
// (within what the search already allows).
func (s *Software) restrict(sp *megatron.Space) {
	for i := range s.Settings {
		st := &s.Settings[i]
		if len(st.ok) == 0 {
			continue
		}
		switch st.Key {
		case "interleave":
			sp.Interleave = narrow(sp.Interleave, st.ok, func(v reflect.Value) int { return int(v.Int()) })
		case "recompute":
			sp.Recompute = narrow(sp.Recompute, st.ok, func(v reflect.Value) megatron.Recompute { return v.Interface().(megatron.Recompute) })
		case "seq_parallel":
			sp.SeqParallel = narrow(sp.SeqParallel, st.ok, reflect.Value.Bool)
		case "pp_first_layers":
			sp.FixedEnds = len(st.ok) == 1 && st.ok[0].Int() == 0
		case "zero":
			sp.ZeRO = narrow(sp.ZeRO, st.ok, func(v reflect.Value) int { return int(v.Int()) })
		}
	}
}

// narrow keeps the values of have (nil: every value) that ok lists.
func narrow[T comparable](have []T, ok []reflect.Value, of func(reflect.Value) T) []T {
	out := []T{}
	for _, v := range ok {
		if x := of(v); have == nil || slices.Contains(have, x) {
			out = append(out, x)
		}
	}
	return out
}
