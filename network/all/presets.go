package all

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/ddlest/ddlest/configs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/registry"
	"github.com/ddlest/ddlest/network"
)

// Preset is a named network configuration: the network it configures, the parameters it sets
// (keys as in `ddlest nets`) and the source of every one.
type Preset struct {
	Name        string            `json:"name"`
	Network     string            `json:"network"`
	Description string            `json:"description"`
	Params      json.RawMessage   `json:"params"`
	Sources     map[string]string `json:"sources"`
}

// Apply sets the preset's parameters on cfg (a config of the preset's network), strictly.
func (p Preset) Apply(cfg network.Config) error {
	return params.DecodeJSON(cfg, bytes.NewReader(p.Params), "network preset "+p.Name)
}

// Keys lists the parameters the preset sets, sorted.
func (p Preset) Keys() []string {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(p.Params, &m)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var (
	presetsOnce sync.Once
	presets     *registry.Registry[Preset]
	presetsErr  error
)

// Presets returns the network presets of configs/networks.json, checked once: each names a
// registered network, its parameters decode strictly into that network's config and validate,
// and every parameter has a source.
func Presets() (*registry.Registry[Preset], error) {
	presetsOnce.Do(func() {
		var list []Preset
		dec := json.NewDecoder(bytes.NewReader(configs.Networks))
		dec.DisallowUnknownFields()
		if presetsErr = dec.Decode(&list); presetsErr != nil {
			presetsErr = fmt.Errorf("configs/networks.json: %w", presetsErr)
			return
		}
		r := registry.New[Preset]("network preset")
		for _, p := range list {
			if err := check(p); err != nil {
				presetsErr = fmt.Errorf("configs/networks.json: preset %s: %w", p.Name, err)
				return
			}
			r.Add(p.Name, p)
		}
		presets = r
	})
	return presets, presetsErr
}

func check(p Preset) error {
	spec, err := Registry().Lookup(p.Network)
	if err != nil {
		return err
	}
	cfg := spec.NewConfig()
	if err := p.Apply(cfg); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	for _, k := range p.Keys() {
		if p.Sources[k] == "" {
			return fmt.Errorf("parameter %s has no source", k)
		}
	}
	if len(p.Sources) != len(p.Keys()) {
		return fmt.Errorf("%d sources for %d parameters", len(p.Sources), len(p.Keys()))
	}
	return nil
}
