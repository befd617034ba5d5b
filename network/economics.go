package network

// Economics is a network's cost (RAMP Table 3) and power (RAMP Table 4) at one scale.
type Economics struct {
	Nodes int
	// Items are the counted components with their cost per Gbit of their own rate, as a
	// [low, high] range.
	Items []Item
	// CostPerGbit is the network cost per Gbit/s of node capacity, [low, high].
	CostPerGbit [2]float64
	// TransceiverShare is the transceivers' share of that cost, [low, high].
	TransceiverShare [2]float64
	// PathComponents are the components a bit crosses on the longest path, with their energy.
	PathComponents []PathComponent
	// EnergyPerBit is the energy per bit along one path (J/bit).
	EnergyPerBit float64
	// CapacityBps is the node capacity the total power is quoted at (bit/s) and PowerW the total
	// power of Nodes nodes at that capacity: EnergyPerBit × Nodes × CapacityBps.
	CapacityBps float64
	PowerW      float64
}

// Item is one kind of component in the cost model.
type Item struct {
	Name        string     `json:"name"`
	Count       float64    `json:"count"`
	Gbps        float64    `json:"rate_gbit_per_s"`   // rate of one item (for the cost per Gbit)
	CostPerGbit [2]float64 `json:"cost_per_gbit_usd"` // $/Gbit, [low, high]
	Transceiver bool       `json:"transceiver"`
	Source      string     `json:"source"`
}

// PathComponent is one component on a bit's path and its energy per bit.
type PathComponent struct {
	Name      string  `json:"name"`
	Count     int     `json:"count"`
	JoulePerB float64 `json:"energy_per_bit_j"` // energy per bit of one crossing
	Source    string  `json:"source"`
}

// Costing is implemented by network configs that have a cost and power model. capacityTbps is the
// node capacity to quote the total power at (0: the network's own).
type Costing interface {
	Economics(capacityTbps float64) (Economics, error)
}

// Finish computes the totals of an Economics from its items and path components.
func (e *Economics) Finish(nodeGbps float64) {
	var total, trx [2]float64
	for _, it := range e.Items {
		for k := 0; k < 2; k++ {
			c := it.Count * it.Gbps * it.CostPerGbit[k]
			total[k] += c
			if it.Transceiver {
				trx[k] += c
			}
		}
	}
	capGbit := float64(e.Nodes) * nodeGbps
	for k := 0; k < 2; k++ {
		e.CostPerGbit[k] = total[k] / capGbit
		if total[k] > 0 {
			e.TransceiverShare[k] = trx[k] / total[k]
		}
	}
	e.EnergyPerBit = 0
	for _, p := range e.PathComponents {
		e.EnergyPerBit += float64(p.Count) * p.JoulePerB
	}
	e.PowerW = e.EnergyPerBit * float64(e.Nodes) * e.CapacityBps
}
