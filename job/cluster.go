package job

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/registry"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/all"
	"github.com/ddlest/ddlest/profile/roofline"
)

// DefaultCluster is the cluster every workload runs on unless told otherwise: DGX A100 nodes
// on a leaf/spine InfiniBand fat tree (configs/clusters.json).
const DefaultCluster = "dgx-a100"

// Cluster is the hardware a job runs on: the GPU, the nodes, and the network between them. In a
// job file it is a preset name ("dgx-a100") or a mapping whose optional preset key is applied
// first and whose other keys override it.
type Cluster struct {
	Preset      string `json:"preset,omitempty" flag:"cluster" help:"cluster preset (ddlest clusters); the other cluster keys override it"`
	GPU         string `json:"gpu" help:"GPU (ddlest gpus)"`
	GPUsPerNode int    `json:"gpus_per_node" help:"GPUs per node, sharing its fast (NVLink) domain"`
	Nodes       int    `json:"nodes" help:"nodes in the cluster (0: as many as the job needs)"`
	// AutoLayout is the layout a target-loss job uses on this cluster when it names none: ramp on
	// the RAMP paper's systems (its own rule, RAMP §7.2.1), search elsewhere.
	AutoLayout Layout              `json:"auto_layout,omitempty" help:"layout of target-loss jobs that name none: ramp or search (default)"`
	Efficiency roofline.Efficiency `json:"efficiency"`
	// NoReduceCompute prices collectives without the local reductions at their receivers (WRHT's
	// Eq. 6 and its simulations price none).
	NoReduceCompute bool    `json:"no_reduce_compute,omitempty" help:"price collectives without their local reductions (the WRHT paper prices none)"`
	Network         Network `json:"network"`
}

// NewCluster is a cluster with no preset: the default roofline efficiencies and the ideal
// network; Preset or a job file fills in the rest.
func NewCluster() Cluster {
	return Cluster{GPUsPerNode: 1, Efficiency: roofline.DefaultEfficiency, Network: Network{}}
}

// ClusterPreset is an entry of configs/clusters.json.
type ClusterPreset struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Cluster     Cluster           `json:"cluster"`
	Sources     map[string]string `json:"sources"`
}

// The cluster presets are configs/clusters.json, compiled in as Go values (clusters_gen.go,
// kept equal to the JSON by TestBuiltinClusters): a command that reads one or two of them decodes
// nothing. Each is validated when first used.
var clusterTable = sync.OnceValue(func() *registry.Registry[*builtinCluster] {
	r := registry.New[*builtinCluster]("cluster preset")
	for _, p := range builtinClusters() {
		r.Add(p.Name, &builtinCluster{p: p})
	}
	return r
})

// builtinCluster is a compiled-in preset and its validation, run once.
type builtinCluster struct {
	p    ClusterPreset
	once sync.Once
	err  error
}

const clustersFile = "configs/clusters.json"

// decodeClusters reads a cluster preset table (configs/clusters.json's form) strictly: every
// preset named once, its cluster valid.
func decodeClusters(data []byte, name string) ([]ClusterPreset, error) {
	var list []ClusterPreset
	if err := params.Decode(data, name, &list); err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(list))
	for i := range list {
		p := &list[i]
		switch {
		case p.Name == "":
			return nil, errs.Usage("%s: cluster preset %d has no name", name, i)
		case seen[p.Name]:
			return nil, errs.Usage("%s: cluster preset %s named twice", name, p.Name)
		}
		seen[p.Name] = true
		p.Cluster.Preset = p.Name
		if err := p.validate(name); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// validate checks a preset's cluster; errors name the file and the preset.
func (p *ClusterPreset) validate(file string) error {
	if err := p.Cluster.Validate(); err != nil {
		return fmt.Errorf("%s: %s: %w", file, p.Name, err)
	}
	return nil
}

// clusterPreset is one preset, validated (once).
func clusterPreset(name string) (*ClusterPreset, error) {
	e, err := clusterTable().Lookup(name)
	if err != nil {
		return nil, err
	}
	e.once.Do(func() { e.err = e.p.validate(clustersFile) })
	return &e.p, e.err
}

// Clusters returns every cluster preset, validated.
func Clusters() (*registry.Registry[ClusterPreset], error) {
	r := registry.New[ClusterPreset]("cluster preset")
	for _, name := range clusterTable().Names() {
		p, err := clusterPreset(name)
		if err != nil {
			return nil, err
		}
		r.Add(name, *p)
	}
	return r, nil
}

// LookupCluster returns a preset's cluster.
func LookupCluster(name string) (Cluster, error) {
	p, err := clusterPreset(name)
	if err != nil {
		return Cluster{}, err
	}
	return p.Cluster.clone(), nil
}

// ClusterForGPU returns the first cluster preset built of gpu, or false.
func ClusterForGPU(gpu string) (string, bool) {
	return firstCluster(func(c *Cluster) bool { return c.GPU == gpu })
}

// ClusterForNetwork returns the first cluster preset built on a network model with its own
// defaults (no network preset): the seed paper's system of that network (ramp → ramp-65536).
func ClusterForNetwork(model string) (string, bool) {
	return firstCluster(func(c *Cluster) bool { return c.Network.Model == model && c.Network.Preset == "" })
}

// firstCluster is the first preset, in the file's order, whose cluster matches.
func firstCluster(match func(*Cluster) bool) (string, bool) {
	for _, e := range clusterTable().All() {
		if match(&e.p.Cluster) {
			return e.p.Name, true
		}
	}
	return "", false
}

// clone copies c, its network parameters included.
func (c Cluster) clone() Cluster {
	c.Network = c.Network.clone()
	return c
}

type plainCluster Cluster

// DecodeNode reads a preset name or a mapping (its preset first, then the other keys).
func (c *Cluster) DecodeNode(d *params.Decoder, n *yaml.Node, path string) error {
	if n.Kind == yaml.ScalarNode {
		p, err := LookupCluster(n.Value)
		if err != nil {
			return d.Errorf(n, "%s: %v", path, err)
		}
		*c = p
		return nil
	}
	m, _, err := d.Mapping(n, path)
	if err != nil {
		return err
	}
	if c.Efficiency == (roofline.Efficiency{}) {
		*c = NewCluster() // a fresh cluster: the defaults, then the keys given
	}
	if pn, ok := m["preset"]; ok {
		p, err := LookupCluster(pn.Value)
		if err != nil {
			return d.Errorf(pn, "%s.preset: %v", path, err)
		}
		*c = p
	}
	return d.Decode(n, (*plainCluster)(c), path)
}

// UsePreset replaces c with the named preset.
func (c *Cluster) UsePreset(name string) error {
	p, err := LookupCluster(name)
	if err != nil {
		return err
	}
	*c = p
	return nil
}

// GPUs is the cluster's size, 0 when it is sized to the job.
func (c Cluster) GPUs() int { return c.Nodes * c.GPUsPerNode }

// Validate reports every problem at once, naming the keys.
func (c *Cluster) Validate() error {
	var p params.Problems
	if _, err := roofline.LookupGPU(c.GPU); err != nil {
		p.Addf("gpu: %v", err)
	}
	p.AtLeast("gpus_per_node", c.GPUsPerNode, 1)
	p.AtLeast("nodes", c.Nodes, 0)
	p.Check(c.Efficiency.Validate())
	if err := c.Network.resolve(); err != nil {
		p.Addf("network: %v", err)
	} else {
		p.Check(c.Network.Params.Validate())
		if n, ok := c.Network.paramInt("gpus_per_node"); ok && n != c.GPUsPerNode {
			p.Addf("gpus_per_node %d differs from network.params.gpus_per_node %d; set both", c.GPUsPerNode, n)
		}
	}
	return p.Err("cluster")
}

// CheckJob says whether a job of gpus fits the cluster (an infeasibility, exit 3).
func (c Cluster) CheckJob(gpus int) error {
	if c.Nodes > 0 && gpus > c.GPUs() {
		return errs.Infeasible("", "the job needs %d GPUs; cluster %s has %d (%d nodes × %d)", gpus, c.name(), c.GPUs(), c.Nodes, c.GPUsPerNode)
	}
	return nil
}

func (c Cluster) name() string {
	if c.Preset != "" {
		return c.Preset
	}
	return "(custom)"
}

// Network is a cluster's network: a registered model (ddlest nets), optionally started from a
// network preset, and its typed parameters. In a file, params holds that model's keys only.
type Network struct {
	Model  string         `json:"model" flag:"net" help:"network model (ddlest nets)"`
	Preset string         `json:"preset,omitempty" flag:"net-preset" help:"network preset (ddlest nets); it names its model"`
	Params network.Config `json:"params"`
	// built is the model Params was made for.
	built string
}

// MarshalJSON writes model, preset and the parameters as numbers.
func (n Network) MarshalJSON() ([]byte, error) {
	if err := n.resolve(); err != nil {
		return nil, err
	}
	type doc struct {
		Model  string         `json:"model"`
		Preset string         `json:"preset,omitempty"`
		Params network.Config `json:"params"`
	}
	return json.Marshal(doc{n.Model, n.Preset, n.Params})
}

// clone copies the parameters (a pointer to a flat struct of scalars) so the copy can change.
func (n Network) clone() Network {
	if n.Params == nil {
		return n
	}
	v := reflect.ValueOf(n.Params).Elem()
	c := reflect.New(v.Type())
	c.Elem().Set(v)
	n.Params = c.Interface().(network.Config)
	return n
}

// resolve makes Params the configuration of Model (from its preset when one is named), keeping
// the parameters already set when the model is unchanged.
func (n *Network) resolve() error {
	if n.Preset != "" {
		r, err := all.Presets()
		if err != nil {
			return err
		}
		p, err := r.Lookup(n.Preset)
		if err != nil {
			return err
		}
		if n.Model == "" {
			n.Model = p.Network
		}
		if n.Model != p.Network {
			return errs.Usage("preset %s configures network %s, not model %s; give one of them, or matching ones", p.Name, p.Network, n.Model)
		}
	}
	if n.Model == "" {
		n.Model = "ideal"
	}
	if n.Params != nil && n.built == n.Model {
		return nil
	}
	spec, err := all.Registry().Lookup(n.Model)
	if err != nil {
		return err
	}
	cfg := spec.NewConfig()
	if n.Preset != "" {
		r, _ := all.Presets()
		p, _ := r.Lookup(n.Preset)
		if err := p.Apply(cfg); err != nil {
			return err
		}
	}
	n.Params, n.built = cfg, n.Model
	return nil
}

// Choice is the network as a choice of model and key=value parameters (every one of Params,
// which the parameters' formatting reads back exactly): what the network commands price.
func (n Network) Choice() (NetworkChoice, error) {
	if err := n.resolve(); err != nil {
		return NetworkChoice{}, err
	}
	c := NetworkChoice{Name: n.Model}
	for _, p := range params.List(n.Params) {
		c.Params = append(c.Params, p.Key+"="+p.Value)
	}
	return c, nil
}

// Resolve makes Params the configuration of Model (see resolve).
func (n *Network) Resolve() error { return n.resolve() }

// SetModel switches the network model (its parameters start from the model's defaults); an
// empty name keeps the model.
func (n *Network) SetModel(model string) {
	if model != "" && model != n.Model {
		n.Model, n.Preset, n.Params, n.built = model, "", nil, ""
	}
}

// SetPreset starts the network from a preset (its model, its parameters).
func (n *Network) SetPreset(preset string) error {
	n.Model, n.Preset, n.Params, n.built = "", preset, nil, ""
	return n.resolve()
}

// DecodeNode reads model and preset, builds the configuration, then decodes params into it
// strictly (the model's keys only).
func (n *Network) DecodeNode(d *params.Decoder, node *yaml.Node, path string) error {
	m, keys, err := d.Mapping(node, path)
	if err != nil {
		return err
	}
	valid := []string{"model", "preset", "params"}
	for _, k := range keys {
		if !slices.Contains(valid, k.Value) {
			return d.Errorf(k, "unknown key %q in %s; valid: model, preset, params", k.Value, path)
		}
	}
	model, preset := "", ""
	if v, ok := m["model"]; ok {
		model = v.Value
	}
	if v, ok := m["preset"]; ok {
		preset = v.Value
	}
	switch {
	case preset != "" && preset != n.Preset:
		n.Model, n.Preset, n.Params, n.built = model, preset, nil, ""
	case model != "" && model != n.Model:
		n.SetModel(model)
	}
	if err := n.resolve(); err != nil {
		at := node
		if v, ok := m["model"]; ok {
			at = v
		} else if v, ok := m["preset"]; ok {
			at = v
		}
		return d.Errorf(at, "%s: %v", path, err)
	}
	if pn, ok := m["params"]; ok {
		return d.Decode(pn, n.Params, path+".params")
	}
	return nil
}

// paramInt reads an integer parameter the model may have.
func (n Network) paramInt(key string) (int, bool) {
	if v, ok := params.Field(n.Params, key); ok && v.Kind() == reflect.Int {
		return int(v.Int()), true
	}
	return 0, false
}

// Build configures the network for a job of env.GPUs ranks.
func (n *Network) Build(env network.Env) (network.Model, error) {
	if err := n.resolve(); err != nil {
		return nil, err
	}
	spec, err := all.Registry().Lookup(n.Model)
	if err != nil {
		return nil, err
	}
	return spec.New(n.Params, env)
}
