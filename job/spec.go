package job

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/ddlest/ddlest/configs"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/registry"
	"github.com/ddlest/ddlest/network"
)

// Job is one run as data, in Calculon's split: the workload, its model (architecture), its
// execution (parallel layout, batch, recomputation, precision, optimizer, overlap, training
// length, compute profile) and the cluster (GPU, nodes, network). Model and Execution are the
// workload's own typed structs. A job encodes to JSON with encoding/json and decodes strictly from
// YAML or JSON with params.Decode; a report's JSON is a job plus a "report" key, which decoding
// skips, so any JSON output runs again with `ddlest run`.
type Job struct {
	Workload  string  `json:"workload"`
	Model     any     `json:"model"`
	Execution any     `json:"execution"`
	Cluster   Cluster `json:"cluster"`
	// placements is a sweep worker's cache of placed networks (Sweep sets it; copies share it).
	placements *placements
	// scratch is where a sweep point's estimate writes (Sweep sets it; Clone drops it).
	scratch *runScratch
}

// Workload is a registered kind of training job.
type Workload interface {
	Name() string
	Summary() string
	// NewModel and NewExecution return pointers to the workload's configs with their defaults.
	NewModel() any
	NewExecution() any
	// Run estimates the job (validated by New/Decode).
	Run(j *Job) (*Report, error)
}

// Workloads lists every workload, keyed by name.
func Workloads() *registry.Registry[Workload] {
	workloadsOnce.Do(func() {
		workloads = registry.New[Workload]("workload")
		for _, w := range []Workload{megatronWorkload{}, dataParallelWorkload{}, cosmoFlowWorkload{}, dlrmWorkload{}} {
			workloads.Add(w.Name(), w)
		}
	})
	return workloads
}

var (
	workloadsOnce sync.Once
	workloads     *registry.Registry[Workload]
)

// New returns a job of the named workload with its defaults on the default cluster.
func New(workload string) (*Job, error) { return NewOn(workload, DefaultCluster) }

// NewOn returns a job of the named workload with its defaults on a cluster preset, or, for "",
// on a bare cluster (NewCluster: no preset decoded) that the caller replaces next; a command
// that always sets the cluster saves decoding the default's.
func NewOn(workload, cluster string) (*Job, error) {
	w, err := Workloads().Lookup(workload)
	if err != nil {
		return nil, err
	}
	c := NewCluster()
	if cluster != "" {
		if c, err = LookupCluster(cluster); err != nil {
			return nil, err
		}
	}
	return &Job{Workload: w.Name(), Model: w.NewModel(), Execution: w.NewExecution(), Cluster: c}, nil
}

// ModelPreset is embedded in every workload's model: the preset it started from.
type ModelPreset struct {
	Preset string `json:"preset,omitempty" flag:"model" help:"model preset (ddlest models); the other model keys override it"`
}

func (m *ModelPreset) presetName() *string { return &m.Preset }

type presetted interface{ presetName() *string }

// UseModel replaces the model with the named preset's, and the execution with the preset's
// when it has one (a preset of a published run); otherwise the execution stays.
func (j *Job) UseModel(name string) error {
	r, err := Models()
	if err != nil {
		return err
	}
	p, err := r.Lookup(name)
	if err != nil {
		return err
	}
	if p.Workload != j.Workload {
		return errs.Usage("model preset %s is a %s model, not %s; valid: %s", name, p.Workload, j.Workload, strings.Join(ModelNames(j.Workload), ", "))
	}
	m := copyConfig(p.model)
	*m.(presetted).presetName() = name
	j.Model = m
	if p.execution != nil {
		j.Execution = copyConfig(p.execution)
	}
	return nil
}

// copyConfig copies a config (a pointer to a struct of scalars and nested structs) so the copy
// can change.
func copyConfig(cfg any) any {
	v := reflect.ValueOf(cfg).Elem()
	c := reflect.New(v.Type())
	c.Elem().Set(v)
	return c.Interface()
}

// DecodeNode reads a job: the workload first (it types model and execution), then the cluster
// (a preset name or a mapping; default DefaultCluster), the model (a preset name or a mapping)
// and the execution. A "report" key (the output of a run) is skipped.
func (j *Job) DecodeNode(d *params.Decoder, n *yaml.Node, path string) error {
	m, keys, err := d.Mapping(n, path)
	if err != nil {
		return err
	}
	valid := []string{"workload", "model", "execution", "cluster", "report"}
	for _, k := range keys {
		if !slices.Contains(valid, k.Value) {
			return d.Errorf(k, "unknown key %q; valid: %s", k.Value, strings.Join(valid, ", "))
		}
	}
	wn, ok := m["workload"]
	if !ok {
		return d.Errorf(n, "no workload key; valid workloads: %s", strings.Join(Workloads().Names(), ", "))
	}
	nj, err := New(wn.Value)
	if err != nil {
		return d.Errorf(wn, "workload: %v", err)
	}
	*j = *nj
	if cn, ok := m["cluster"]; ok {
		if err := d.Decode(cn, &j.Cluster, "cluster"); err != nil {
			return err
		}
	}
	if mn, ok := m["model"]; ok {
		name := ""
		if mn.Kind == yaml.ScalarNode {
			name = mn.Value
		} else if mm, _, err := d.Mapping(mn, "model"); err != nil {
			return err
		} else if pn, ok := mm["preset"]; ok {
			name = pn.Value
		}
		if name != "" {
			if err := j.UseModel(name); err != nil {
				return d.Errorf(mn, "model: %v", err)
			}
		}
		if mn.Kind != yaml.ScalarNode {
			if err := d.Decode(mn, j.Model, "model"); err != nil {
				return err
			}
		}
	}
	if en, ok := m["execution"]; ok {
		// The software preset first: it sets defaults that the execution's other keys override.
		if em, _, err := d.Mapping(en, "execution"); err != nil {
			return err
		} else if sn, ok := em["software"]; ok {
			if err := j.UseSoftware(sn.Value); err != nil {
				return d.Errorf(sn, "execution.software: %v", err)
			}
		}
		if err := d.Decode(en, j.Execution, "execution"); err != nil {
			return err
		}
	}
	return nil
}

// Load reads a job file (YAML or JSON).
func Load(path string) (*Job, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errs.Usage("%v", err)
	}
	var j Job
	if err := params.Decode(data, path, &j); err != nil {
		return nil, err
	}
	return &j, nil
}

// Set assigns a value to a key of the job ("execution.tp", or any unique suffix: "tp"). The
// preset keys load their preset (cluster.preset, model.preset, cluster.network.preset) and
// cluster.network.model switches the network's parameters to the new model's.
func (j *Job) Set(key, value string) error {
	if err := j.Cluster.Network.resolve(); err != nil {
		return err
	}
	switch key {
	case "cluster", "cluster.preset":
		return j.Cluster.UsePreset(value)
	case "model", "model.preset":
		return j.UseModel(value)
	case "net", "cluster.network.model":
		j.Cluster.Network.SetModel(value)
		return j.Cluster.Network.resolve()
	case "net-preset", "cluster.network.preset":
		return j.Cluster.Network.SetPreset(value)
	case "software", "execution.software":
		return j.UseSoftware(value)
	}
	return params.SetPath(j, key, value)
}

// presetKeys are the keys Set treats specially: they replace more than one leaf.
var presetKeys = []string{"cluster", "cluster.preset", "model", "model.preset", "net", "cluster.network.model", "net-preset", "cluster.network.preset",
	"software", "execution.software"}

// Validate checks the cluster; the workload validates the rest when it runs.
func (j *Job) Validate() error { return j.Cluster.Validate() }

// Clone deep-copies the job: model and execution are flat structs of scalars, the network's
// parameters a pointer to one (a sweep clones its base job for every point).
func (j *Job) Clone() *Job {
	c := *j
	c.Model, c.Execution = copyConfig(j.Model), copyConfig(j.Execution)
	c.Cluster.Network = j.Cluster.Network.clone()
	c.scratch = nil
	return &c
}

// copyFrom makes j what base.Clone() would be, in j's own model, execution and network
// parameters where they are of base's types: a sweep's scratch resets its job for every point
// without allocating. j keeps its placements and scratch.
func (j *Job) copyFrom(base *Job) {
	m, e, p, pl, sc := j.Model, j.Execution, j.Cluster.Network.Params, j.placements, j.scratch
	*j = *base
	j.Model, j.Execution = copyInto(m, base.Model), copyInto(e, base.Execution)
	if base.Cluster.Network.Params != nil {
		j.Cluster.Network.Params = copyInto(p, base.Cluster.Network.Params).(network.Config)
	}
	j.placements, j.scratch = pl, sc
}

// copyInto copies the config src points to into dst when it is of the same type, else into a
// new one (copyConfig), and returns it.
func copyInto(dst, src any) any {
	if dst == nil || reflect.TypeOf(dst) != reflect.TypeOf(src) {
		return copyConfig(src)
	}
	reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(src).Elem())
	return dst
}

// Run validates and estimates the job.
func Run(j *Job) (*Report, error) {
	w, err := Workloads().Lookup(j.Workload)
	if err != nil {
		return nil, err
	}
	if j.scratch == nil || !j.scratch.clusterValid { // a sweep checked its cluster once
		if err := j.Validate(); err != nil {
			return nil, err
		}
	}
	rep, err := w.Run(j)
	if err != nil {
		return nil, err
	}
	if err := checkFinite(j, rep); err != nil {
		return nil, err
	}
	rep.Job = j
	return rep, nil
}

// ModelPresetEntry is an entry of configs/models.json: a workload's model and, where its source
// gives one, the execution it was trained or simulated with.
type ModelPresetEntry struct {
	Name        string    `json:"name"`
	Workload    string    `json:"workload"`
	Description string    `json:"description"`
	Source      string    `json:"source"`
	Model       yaml.Node `json:"model"`
	Execution   yaml.Node `json:"execution"`
	// model and execution are the decoded, typed configs (over the workload's defaults), decoded
	// once; UseModel copies them. execution is nil when the preset has none.
	model, execution any
}

var (
	modelsOnce sync.Once
	models     *registry.Registry[ModelPresetEntry]
	modelsErr  error
)

// Models returns the model presets of configs/models.json; each decodes strictly into its
// workload's model and execution.
func Models() (*registry.Registry[ModelPresetEntry], error) {
	modelsOnce.Do(func() {
		var list []ModelPresetEntry
		if modelsErr = params.Decode(configs.Models, "configs/models.json", &list); modelsErr != nil {
			return
		}
		d := &params.Decoder{Name: "configs/models.json"}
		models = registry.New[ModelPresetEntry]("model preset")
		for _, p := range list {
			w, err := Workloads().Lookup(p.Workload)
			if err != nil {
				modelsErr = d.Errorf(&p.Model, "%s: %v", p.Name, err)
				return
			}
			p.model = w.NewModel()
			if err := d.Decode(&p.Model, p.model, "model"); err != nil {
				modelsErr = err
				return
			}
			if p.Execution.Kind != 0 {
				p.execution = w.NewExecution()
				if err := d.Decode(&p.Execution, p.execution, "execution"); err != nil {
					modelsErr = err
					return
				}
			}
			models.Add(p.Name, p)
		}
		for _, p := range append(append(table9Presets(), zooPresets()...), dlrmPresets()...) {
			models.Add(p.Name, p)
		}
	})
	return models, modelsErr
}

// ModelNames lists the model presets of a workload.
func ModelNames(workload string) []string {
	modelIndexOnce.Do(func() {
		// Names and workloads only, in the registry's order (every command's --model help lists
		// them; decoding the presets waits for a command that uses one).
		var list []struct {
			Name     string `json:"name"`
			Workload string `json:"workload"`
		}
		_ = json.Unmarshal(configs.Models, &list) // Models() reports errors in the file
		for _, p := range list {
			modelIndex = append(modelIndex, [2]string{p.Name, p.Workload})
		}
		for _, p := range append(append(table9Presets(), zooPresets()...), dlrmPresets()...) {
			modelIndex = append(modelIndex, [2]string{p.Name, p.Workload})
		}
	})
	var out []string
	for _, p := range modelIndex {
		if p[1] == workload {
			out = append(out, p[0])
		}
	}
	return out
}

var (
	modelIndexOnce sync.Once
	modelIndex     [][2]string // name, workload
)
