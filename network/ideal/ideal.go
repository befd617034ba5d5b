package ideal

import "github.com/ddlest/ddlest/network"

// Name is the registry key.
const Name = "ideal"

// Config has no parameters.
type Config struct{}

// Validate always succeeds.
func (*Config) Validate() error { return nil }

// Spec registers the model.
func Spec() network.Spec {
	return network.Spec{
		Name:      Name,
		Summary:   "zero-time network: communication costs nothing (a lower bound)",
		Source:    "[D] bound; no paper",
		NewConfig: func() network.Config { return &Config{} },
		New: func(_ network.Config, env network.Env) (network.Model, error) {
			return model{env: env}, nil
		},
	}
}

type model struct{ env network.Env }

func (model) Name() string { return Name }

// Shareable: the model holds only the job's environment (network.Shareable).
func (model) Shareable() {}

func (m model) Price(c network.Collective) (network.Cost, error) {
	if err := network.CheckGroup(c, m.env); err != nil {
		return network.Cost{}, err
	}
	return network.Cost{Algorithm: "ideal"}, nil
}
