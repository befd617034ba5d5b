package superpod

import "github.com/ddlest/ddlest/network"

// Cost and power constants (RAMP §4.3, Tables 3–4).
const (
	switchPorts        = 40   // QM8790: 40 × 200 Gb/s HDR ports ([X] NVIDIA QM8790 datasheet; RAMP ref. [55])
	switchCostPerGbit  = 2.96 // Table 3: "Switch for EPS [55]: 2.96 $/Gbit"
	trxCostPerGbit     = 1.00 // Table 3: EPS transceivers $1/Gbit (ref. [41])
	switchWatts        = 404  // Table 4: QM8790 404 W
	trxWatts           = 4.35 // Table 4: 4.35 W (ref. [50])
	switchesPerPath    = 5    // leaf, spine, core, spine, leaf
	transceiversPerHop = 6    // [D] Table 4's 11 components per path = 5 switches + 6 transceivers
	podSUs             = 16   // [D] see Economics
)

// Economics implements network.Costing (RAMP Tables 3 and 4) for the InfiniBand fabric.
//
// Counts: scalable units (SUs) of nodes_per_leaf DGX nodes, rounded up to whole pods of 16 SUs;
// per SU one leaf per rail (gpus_per_node), as many spines and half as many core switches — 20
// switches per SU with the defaults; every switch port holds a transceiver. For 65,536 GPUs this
// is 416 SUs, 8,320 switches and 332,800 transceivers, Table 3's counts [D: the pod rounding is
// the reading that reproduces them]. Cost per Gbit of InfiniBand node capacity: ($1·transceiver
// Gbit + $2.96·switch port Gbit)/(GPUs × 200 Gb/s) = $20.11 (Table 3: 20.12), switch-dominated
// 25:75.
//
// Power: 5 switch crossings at 404 W / (40 × 200 Gb/s) and 6 transceivers at 4.35 W / 200 Gb/s
// give 252.5 + 130.5 = 383 pJ/bit/path (Table 4: 383); the total at 65,536 nodes × 12.8 Tb/s is
// 321 MW (Table 4: 334 MW, whose W/Gbps row is 10× off and itself implies 398 pJ/bit).
func (c *Config) Economics(capacityTbps float64) (network.Economics, error) {
	if err := c.Validate(); err != nil {
		return network.Economics{}, err
	}
	port := c.NodeTbps * 1000 / c.Oversubscription // Gb/s per GPU on InfiniBand
	nodes := (c.MaxGPUs + c.GPUsPerNode - 1) / c.GPUsPerNode
	sus := (nodes + c.NodesPerLeaf - 1) / c.NodesPerLeaf
	sus = (sus + podSUs - 1) / podSUs * podSUs
	leaves := sus * c.GPUsPerNode
	switches := leaves + leaves + leaves/2
	e := network.Economics{Nodes: c.MaxGPUs, CapacityBps: port * 1e9}
	if capacityTbps > 0 {
		e.CapacityBps = capacityTbps * 1e12
	}
	e.Items = []network.Item{
		{Name: "EPS transceiver", Count: float64(switches * switchPorts), Gbps: port, CostPerGbit: [2]float64{trxCostPerGbit, trxCostPerGbit},
			Transceiver: true, Source: "[P] RAMP Table 3: 332,800 at $1/Gbit (ref. [41])"},
		{Name: "QM8790 switch", Count: float64(switches), Gbps: switchPorts * port, CostPerGbit: [2]float64{switchCostPerGbit, switchCostPerGbit},
			Source: "[P] RAMP Table 3: 8,320 at $2.96/Gbit (ref. [55])"},
	}
	e.PathComponents = []network.PathComponent{
		{Name: "QM8790 switch", Count: switchesPerPath, JoulePerB: switchWatts / (switchPorts * port * 1e9), Source: "[P] RAMP Table 4: 404 W (ref. [44])"},
		{Name: "transceiver", Count: transceiversPerHop, JoulePerB: trxWatts / (port * 1e9), Source: "[P] RAMP Table 4: 4.35 W (ref. [50])"},
	}
	e.Finish(port)
	return e, nil
}
