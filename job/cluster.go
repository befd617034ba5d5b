package job

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/ddlest/ddlest/configs"
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

// The cluster presets are indexed once by name (their syntax checked, nothing built), each is
// parsed into its nodes when first read and decoded, strictly, and validated when first used: a
// command uses one or two of them.
var clusterIdx struct {
	once    sync.Once
	entries *registry.Registry[*clusterEntry] // preset name → its entry
	err     error

	mu      sync.Mutex
	decoded map[string]*ClusterPreset
}

// clusterEntry is a preset's text in configs/clusters.json and its nodes, parsed once.
type clusterEntry struct {
	el   params.Element
	once sync.Once
	node *yaml.Node
	err  error
}

func (e *clusterEntry) parse() (*yaml.Node, error) {
	e.once.Do(func() {
		if e.node, e.err = params.ParseElement(e.el); e.err != nil {
			e.err = errs.Usage("%s: %v", clustersFile, e.err)
		}
	})
	return e.node, e.err
}

const clustersFile = "configs/clusters.json"

func clusterEntries() (*registry.Registry[*clusterEntry], error) {
	c := &clusterIdx
	c.once.Do(func() {
		els, err := params.IndexArray(configs.Clusters, "name")
		if err != nil {
			c.err = errs.Usage("%s: %v", clustersFile, err)
			return
		}
		c.entries = registry.New[*clusterEntry]("cluster preset")
		for _, el := range els {
			if el.Key == "" {
				c.err = errs.Usage("%s:%d: a cluster preset without a name", clustersFile, el.Line)
				return
			}
			c.entries.Add(el.Key, &clusterEntry{el: el})
		}
		c.decoded = map[string]*ClusterPreset{}
	})
	return c.entries, c.err
}

// scalarAt reads the scalar at a path of mapping keys (false when absent).
func scalarAt(n *yaml.Node, keys ...string) (string, bool) {
	for _, k := range keys {
		if n.Kind != yaml.MappingNode {
			return "", false
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return "", false
		}
		n = next
	}
	return n.Value, n.Kind == yaml.ScalarNode
}

// clusterPreset decodes and validates one preset (once).
func clusterPreset(name string) (*ClusterPreset, error) {
	entries, err := clusterEntries()
	if err != nil {
		return nil, err
	}
	e, err := entries.Lookup(name)
	if err != nil {
		return nil, err
	}
	c := &clusterIdx
	c.mu.Lock()
	p, ok := c.decoded[name]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	n, err := e.parse()
	if err != nil {
		return nil, err
	}
	p = &ClusterPreset{}
	d := &params.Decoder{Name: clustersFile}
	if err := d.Decode(n, p, ""); err != nil {
		return nil, err
	}
	p.Cluster.Preset = p.Name
	if err := p.Cluster.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", clustersFile, name, err)
	}
	c.mu.Lock()
	c.decoded[name] = p
	c.mu.Unlock()
	return p, nil
}

// Clusters returns every cluster preset, decoded strictly and validated.
func Clusters() (*registry.Registry[ClusterPreset], error) {
	entries, err := clusterEntries()
	if err != nil {
		return nil, err
	}
	r := registry.New[ClusterPreset]("cluster preset")
	for _, name := range entries.Names() {
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
	return firstCluster(func(n *yaml.Node) bool {
		g, _ := scalarAt(n, "cluster", "gpu")
		return g == gpu
	})
}

// ClusterForNetwork returns the first cluster preset built on a network model with its own
// defaults (no network preset): the seed paper's system of that network (ramp → ramp-65536).
func ClusterForNetwork(model string) (string, bool) {
	return firstCluster(func(n *yaml.Node) bool {
		m, _ := scalarAt(n, "cluster", "network", "model")
		_, preset := scalarAt(n, "cluster", "network", "preset")
		return m == model && !preset
	})
}

// firstCluster is the first preset whose entry matches, read from its nodes without decoding.
func firstCluster(match func(*yaml.Node) bool) (string, bool) {
	entries, err := clusterEntries()
	if err != nil {
		return "", false
	}
	for _, name := range entries.Names() {
		e, _ := entries.Lookup(name)
		if n, err := e.parse(); err == nil && match(n) {
			return name, true
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
