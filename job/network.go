package job

import (
	"os"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/all"
)

// NetworkChoice names a network model and how to configure it: a preset (configs/networks.json),
// a JSON config file (strict, keys as in `ddlest nets`), then key=value overrides, applied in
// that order. With a preset the name may be empty (the preset names its network).
type NetworkChoice struct {
	Name       string
	Preset     string
	ConfigFile string
	Params     []string
}

// Spec looks the network up in the registry (the preset's network when no name is given).
func (n NetworkChoice) Spec() (network.Spec, error) {
	_, name, err := n.preset()
	if err != nil {
		return network.Spec{}, err
	}
	return all.Registry().Lookup(name)
}

// preset resolves the preset, if any, and the network name.
func (n NetworkChoice) preset() (*all.Preset, string, error) {
	if n.Preset == "" {
		return nil, n.Name, nil
	}
	r, err := all.Presets()
	if err != nil {
		return nil, "", err
	}
	p, err := r.Lookup(n.Preset)
	if err != nil {
		return nil, "", errs.Usage("--net-preset: %v", err)
	}
	if n.Name != "" && n.Name != p.Network {
		return nil, "", errs.Usage("--net-preset %s configures network %s, not --net %s; give one of them, or matching ones", p.Name, p.Network, n.Name)
	}
	return &p, p.Network, nil
}

// Config returns the network's validated configuration.
func (n NetworkChoice) Config() (network.Spec, network.Config, error) {
	pre, name, err := n.preset()
	if err != nil {
		return network.Spec{}, nil, err
	}
	spec, err := all.Registry().Lookup(name)
	if err != nil {
		return spec, nil, err
	}
	cfg := spec.NewConfig()
	if pre != nil {
		if err := pre.Apply(cfg); err != nil {
			return spec, nil, err
		}
	}
	if n.ConfigFile != "" {
		f, err := os.Open(n.ConfigFile)
		if err != nil {
			return spec, nil, errs.Usage("--net-config: %v", err)
		}
		defer f.Close()
		if err := params.DecodeJSON(cfg, f, n.ConfigFile); err != nil {
			return spec, nil, err
		}
	}
	if err := params.SetPairs(cfg, n.Params); err != nil {
		return spec, nil, errs.Usage("--net-param for network %s: %v", spec.Name, err)
	}
	if err := cfg.Validate(); err != nil {
		return spec, nil, err
	}
	return spec, cfg, nil
}

// Build configures the network and places the job on it; it returns the configuration used.
func (n NetworkChoice) Build(env network.Env) (network.Model, network.Config, error) {
	spec, cfg, err := n.Config()
	if err != nil {
		return nil, nil, err
	}
	m, err := spec.New(cfg, env)
	if err != nil {
		return nil, nil, err
	}
	return m, cfg, nil
}

// buildNetwork places the job on the cluster's network (when a cluster is given, after checking
// the job fits it) or on the network choice.
func buildNetwork(c *Cluster, n NetworkChoice, env network.Env) (network.Model, network.Config, error) {
	if c == nil {
		return n.Build(env)
	}
	if err := c.CheckJob(env.GPUs); err != nil {
		return nil, nil, err
	}
	if c.NoReduceCompute {
		env.Reducer = nil
	}
	m, err := c.Network.Build(env)
	if err != nil {
		return nil, nil, err
	}
	return m, c.Network.Params, nil
}
