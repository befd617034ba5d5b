package ramp

import "github.com/ddlest/ddlest/network"

// Cost and power constants (RAMP §4.3, Tables 3–4).
const (
	// Transceivers for OCS cost 1.5–6× the EPS transceivers' $1/Gbit (Table 3, §4.3: "cost
	// inflation of 1.5-6× greater than that of EPS transceivers").
	trxCostLow, trxCostHigh = 1.5, 6.0
	// The passive coupler costs $0.12 per port per Gbit (Table 3, ref. [11]).
	couplerCostPerGbit = 0.12
	// Power (Table 4): transceiver 3.39 W (ref. [14]); SOA 0.88 W (ref. [27]), 2 per path.
	trxWatts, soaWatts, soasPerPath = 3.39, 0.88, 2
)

// Economics implements network.Costing (RAMP Tables 3 and 4).
//
// Cost: N·x·b transceivers at $1.5–6 per Gbit of their rate B, and b·x³ passive couplers at $0.12
// per port per Gbit — each Gbit of node capacity crosses one coupler port, so they add $0.12 per
// Gbit of node capacity [D]. At 65,536 nodes this is $1.62–6.12/Gbit with a transceiver share of
// 93–98% (Table 3).
//
// Power: a bit crosses one transceiver (3.39 W at B) and two SOAs, whose 0.88 W gate all x·b
// transceivers of a node's splitter ports in turn [D]: 3.39/400 Gb/s + 2·0.88/12.8 Tb/s =
// 8.61 pJ/bit (Table 4: 8.5; text: 7.7–9.5), and the total is that times N × node capacity
// (7.2 MW; Table 4: 7.1).
func (c *Config) Economics(capacityTbps float64) (network.Economics, error) {
	if err := c.Validate(); err != nil {
		return network.Economics{}, err
	}
	n := c.Nodes()
	bGbit := c.TrxRate().Gbit()
	nodeGbit := c.NodeCapacity().Gbit()
	e := network.Economics{Nodes: n, CapacityBps: nodeGbit * 1e9}
	if capacityTbps > 0 {
		e.CapacityBps = capacityTbps * 1e12
	}
	e.Items = []network.Item{
		{Name: "OCS transceiver", Count: float64(n * c.X * c.B), Gbps: bGbit, CostPerGbit: [2]float64{trxCostLow, trxCostHigh},
			Transceiver: true, Source: "[P] RAMP Table 3: 2,097,152 at $1.50–6.00/Gbit"},
		{Name: "star coupler (subnet)", Count: float64(c.B * c.X * c.X * c.X), Gbps: float64(n) * nodeGbit / float64(c.B*c.X*c.X*c.X),
			CostPerGbit: [2]float64{couplerCostPerGbit, couplerCostPerGbit}, Source: "[P] RAMP Table 3: 32,768 at $0.12 per port per Gbit"},
	}
	e.PathComponents = []network.PathComponent{
		{Name: "transceiver", Count: 1, JoulePerB: trxWatts / (bGbit * 1e9), Source: "[P] RAMP Table 4: 3.39 W (ref. [14])"},
		{Name: "SOA", Count: soasPerPath, JoulePerB: soaWatts / (nodeGbit * 1e9), Source: "[P] RAMP Table 4: 0.88 W, 2 per path (ref. [27])"},
	}
	e.Finish(nodeGbit)
	return e, nil
}
