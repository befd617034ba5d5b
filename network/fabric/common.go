package fabric

import (
	"sync"

	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/network/collective"
)

// Common are the parameters every routed fabric shares: latencies of the packet-level simulation
// the HammingMesh paper runs (Table III), the per-message endpoint overhead, routing and the
// collective strategy. Network configs embed it.
type Common struct {
	LinkNs     float64 `json:"link_ns" help:"propagation of a cable (ns)" source:"[P] HammingMesh Table III: link latency 20 ns"`
	SwitchNs   float64 `json:"switch_ns" help:"forwarding latency of a switch or an accelerator's on-chip router (ns)" source:"[P] HammingMesh Table III: in/output buffer latency 40 ns"`
	OverheadNs float64 `json:"overhead_ns" help:"endpoint overhead per step, once per round on top of the slowest path (ns)" source:"[D] fitted once for every topology (DefaultOverheadNs): ResNet-152 on 1,024 A100s on the non-blocking fat tree takes 109.7 ms (HammingMesh §V-B2; reference/hammingmesh.md §6.1: α ≈ 0.73 µs per ring step in all)"`
	GapNs      float64 `json:"gap_ns" help:"gap between messages an endpoint posts at once through one port, e.g. a linear all-to-all's p−1 sends (ns)" source:"[D] fitted once for every topology (DefaultGapNs): DLRM on 128 A100s on the non-blocking fat tree exposes 59 µs (2.96 ms − 2,901 µs of compute, HammingMesh §V-B4) in its two 1 MiB linear all-to-alls"`
	Routing    string  `json:"routing" help:"split: traffic to a destination divides over the minimal next hops (adaptive routing, fluid); hash: one next hop per (destination, switch) by a seeded hash (forwarding tables, ECMP collisions)" source:"[P] HammingMesh §IV-C, §V: adaptive routing along all shortest paths (split); hash is the static-routing alternative"`
	Seed       int     `json:"hash_seed" help:"seed of the hash routing" source:"[X] any; results vary with it"`
	Strategy   string  `json:"strategy" help:"collective algorithm: best, one this network offers (ddlest nets), or op=name pairs, e.g. all-reduce=rings,all-to-all=linear" source:"[P] HammingMesh §V-A2: multi-algorithms per message size, 'similar to established practice in MPI'"`
}

// DefaultOverheadNs is fitted once (see the overhead_ns source): ResNet-152 with the published
// 108 ms of A100 compute on ft-small, the motif's ring all-reduce of ten 24.08 MB buckets
// (ddlest's plan; the SST motif's last bucket is 20.78 MB), the last one exposed after the
// backward pass: 109.7 ms gives α = 693 ns per ring step, of which the 2-level fat tree's path
// is 4 cables × 20 ns + 3 switches × 40 ns = 200 ns and the endpoint's overhead 493 ns
// (reference/hammingmesh.md §6.1 estimates α ≈ 0.73 µs from the SST bucket sizes).
const DefaultOverheadNs = 493

// DefaultGapNs is fitted once on DLRM (see the gap_ns source), after the overhead: its exposed
// communication on ft-small is the two linear all-to-alls of 1 MiB among 128 ranks, each
// α + 126 serialised gaps + 1 MiB·127/128 / 200 GB/s; 59 µs in all gives 187 ns (a message
// rate of 5.3 M/s per port).
const DefaultGapNs = 187

var routings = []string{"split", "hash"}

// DefaultCommon is Table III with the fitted overhead, split routing and the best algorithm.
func DefaultCommon() Common {
	return Common{LinkNs: 20, SwitchNs: 40, OverheadNs: DefaultOverheadNs, GapNs: DefaultGapNs, Routing: "split", Strategy: collective.Best}
}

// Check records the shared parameters' problems; offered are the algorithms the network runs.
func (c *Common) Check(p *params.Problems, offered []collective.Algorithm) {
	p.NonNegative("link_ns", c.LinkNs)
	p.NonNegative("switch_ns", c.SwitchNs)
	p.NonNegative("overhead_ns", c.OverheadNs)
	p.NonNegative("gap_ns", c.GapNs)
	p.OneOf("routing", c.Routing, routings)
	_, err := collective.ParseFor(c.Strategy, offered)
	p.Check(err)
}

// Options are the model options the shared parameters give (the caller adds placement, tiers and
// grid).
func (c *Common) Options(name string, offered []collective.Algorithm) Options {
	choice, _ := collective.ParseFor(c.Strategy, offered)
	o := Options{Name: name, Seed: uint64(c.Seed), Choice: choice,
		Offer: func(network.Op) []collective.Algorithm { return offered }}
	if c.Routing == "hash" {
		o.Routing = Hash
	}
	return o
}

// Cable and Forward are the shared latencies as durations.
func (c *Common) Cable() units.Seconds   { return units.Ns(c.LinkNs) }
func (c *Common) Forward() units.Seconds { return units.Ns(c.SwitchNs) }

// Endpoint is the shared endpoint costs.
func (c *Common) EndpointCosts() Endpoint {
	return Endpoint{Overhead: units.Ns(c.OverheadNs), Gap: units.Ns(c.GapNs)}
}

// graphs caches built fabrics: a fabric is immutable and shared by every model placed on it,
// and building a large one (a 16,384-accelerator HammingMesh) costs more than pricing on it.
var graphs struct {
	sync.Mutex
	keys []any
	vals []*Graph
}

const cachedGraphs = 8

// Cached returns the graph built for key (a network's configuration with the fields that do not
// shape the graph cleared), building it once; the last few are kept.
func Cached(key any, build func() (*Graph, error)) (*Graph, error) {
	graphs.Lock()
	for i, k := range graphs.keys {
		if k == key {
			g := graphs.vals[i]
			graphs.Unlock()
			return g, nil
		}
	}
	graphs.Unlock()
	g, err := build()
	if err != nil {
		return nil, err
	}
	graphs.Lock()
	defer graphs.Unlock()
	if len(graphs.keys) == cachedGraphs {
		graphs.keys, graphs.vals = graphs.keys[1:], graphs.vals[1:]
	}
	graphs.keys, graphs.vals = append(graphs.keys, key), append(graphs.vals, g)
	return g, nil
}

// GraphKey clears the shared parameters that do not shape a graph (routing, seed, strategy).
func (c Common) GraphKey() Common {
	c.Routing, c.Seed, c.Strategy = "", 0, ""
	return c
}
