package workflow

import (
	"os"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/all"
)

// NetworkChoice names a network model and how to configure it: a JSON config file (strict, keys
// as in `ddlest nets`), then key=value overrides, applied in that order.
type NetworkChoice struct {
	Name       string
	ConfigFile string
	Params     []string
}

// Spec looks the network up in the registry.
func (n NetworkChoice) Spec() (network.Spec, error) { return all.Registry().Lookup(n.Name) }

// Config returns the network's validated configuration.
func (n NetworkChoice) Config() (network.Spec, network.Config, error) {
	spec, err := n.Spec()
	if err != nil {
		return spec, nil, err
	}
	cfg := spec.NewConfig()
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
