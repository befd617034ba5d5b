package alphabeta

import (
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
	"github.com/ddlest/ddlest/network/fabric"
	"github.com/ddlest/ddlest/network/nccl"
)

// Name is the registry key.
const Name = "alphabeta"

// Config is the flat network's parameters.
type Config struct {
	BandwidthGbit float64 `json:"bandwidth_gbit_per_s" help:"per-GPU injection bandwidth, each direction (Gb/s)" source:"[P] RAMP §7.5: 200 Gb/s InfiniBand per GPU in the DGX-A100 SuperPod"`
	LatencyNs     float64 `json:"latency_ns" help:"per-step latency α (ns)" source:"[D] RAMP §7.5 leaf-spine-leaf path: 2×100 ns node in-out + 3×350 ns QM8790 + 2×10 + 2×50 ns propagation = 1370 ns"`
	// NCCL prices the collectives as NCCL would with every GPU a node of its own (its NIC at
	// bandwidth_gbit_per_s); latency_ns is then NCCL's.
	nccl.Params
}

// Default values (see the tags for sources).
const (
	DefaultBandwidthGbit = 200
	DefaultLatencyNs     = 2*100 + 3*350 + 2*10 + 2*50
)

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p params.Problems
	p.Positive("bandwidth_gbit_per_s", c.BandwidthGbit)
	p.NonNegative("latency_ns", c.LatencyNs)
	c.Params.Check(&p)
	return p.Err("network alphabeta")
}

// Spec registers the model.
func Spec() network.Spec {
	return network.Spec{
		Name:    Name,
		Summary: "flat α–β network: every GPU has one link of the given bandwidth and latency; ring algorithms",
		Source:  "[X] Hockney α–β model with ring collectives (Patarasuk & Yuan 2009; Thakur et al. 2005)",
		NewConfig: func() network.Config {
			return &Config{BandwidthGbit: DefaultBandwidthGbit, LatencyNs: DefaultLatencyNs, Params: nccl.DefaultParams()}
		},
		New: func(cfg network.Config, env network.Env) (network.Model, error) {
			c := cfg.(*Config)
			if err := c.Validate(); err != nil {
				return nil, err
			}
			m := &model{env: env, link: collective.Link{Name: "link", Latency: units.Ns(c.LatencyNs), Bandwidth: units.Gbps(c.BandwidthGbit)}, nccl: c.Params.Config()}
			network.Share(&m.memo, struct {
				link collective.Link
				gpus int
				nccl nccl.Config
			}{m.link, env.GPUs, m.nccl}, env) // the link, the job's size and the library set every price
			return m, nil
		},
	}
}

type model struct {
	env  network.Env
	link collective.Link
	nccl nccl.Config
	memo network.Memo
}

func (*model) Name() string { return Name }

// Shareable: immutable after construction, synchronised memo (network.Shareable).
func (*model) Shareable() {}

func (m *model) Price(c network.Collective) (network.Cost, error) {
	if err := network.CheckGroup(c, m.env); err != nil {
		return network.Cost{}, err
	}
	if cost, ok := m.memo.Get(c); ok {
		return cost, nil
	}
	if m.nccl.On() {
		n := c.Group.Size
		if cost, ok := m.nccl.Price(c.Op, c.Bytes, nccl.Comm{Ranks: n, Nodes: n, NIC: m.link.Bandwidth}); ok {
			m.memo.Put(c, cost)
			return cost, nil
		}
	}
	cost, err := collective.OnLevels(collective.Ring, c.Op, c.Bytes, collective.Flat(c.Group.Size, m.link), m.env.Reducer, c.DType)
	if err == nil {
		m.memo.Put(c, cost)
	}
	return cost, err
}

// Fabric is the flat network as a routed graph for a job of gpus ranks: every GPU on one
// non-blocking crossbar by a link of the configured bandwidth, the whole per-step latency charged
// as the endpoint overhead. The level model is exact on it (the flow pricer's test).
func (c *Config) Fabric(gpus int) (*fabric.Graph, error) {
	key := struct { // what shapes the graph
		gpus    int
		bw, lat float64
	}{gpus, c.BandwidthGbit, c.LatencyNs}
	return fabric.Cached(key, func() (*fabric.Graph, error) { return c.fabric(gpus) })
}

func (c *Config) fabric(gpus int) (*fabric.Graph, error) {
	b := fabric.NewBuilder(gpus, 0)
	x := b.Switch(0)
	for g := 0; g < gpus; g++ {
		b.Duplex(int32(g), x, fabric.Spec{Class: "link", Rate: units.Gbps(c.BandwidthGbit)})
	}
	return b.Build(fabric.Endpoint{Overhead: units.Ns(c.LatencyNs)}, func(*fabric.Graph) (fabric.Distancer, error) {
		return crossbar(gpus), nil
	})
}

// crossbar is the distance on one switch (node n) joining endpoints 0 … n−1: two links between
// endpoints, one from the switch.
type crossbar int32

func (n crossbar) Dist(u, t int32) int32 {
	switch {
	case u == t:
		return 0
	case u == int32(n):
		return 1
	}
	return 2
}
