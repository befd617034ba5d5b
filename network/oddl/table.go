package oddl

import (
	"fmt"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// WavelengthTable is the per-job routing table of ODDL §3A (Table 1) for n nodes laid out as
// dims: entry [tx][rx] is the wavelength index (0 = λ1) tx tunes to reach rx, −1 where the pair
// is no HD partner. Partners differ in one bit of the node id, so they share every coordinate
// but one and one dimension's WSS joins them; the pair whose ids differ in the k-th bit of that
// dimension's coordinate gets λ_(k+1): each node sends, and receives, on log2(G) distinct
// wavelengths per dimension of G nodes — a proper edge colouring of the hypercube (§3C:
// w ≥ log2 max(n, m)).
func WavelengthTable(n int, dims []int) ([][]int8, error) {
	prod := 1
	for _, d := range dims {
		prod *= d
	}
	if prod != n || !pow2(n) {
		return nil, errs.Usage("oddl: a table of %d nodes on a %s layout", n, shapeString(dims))
	}
	m := &model{dims: dims}
	m.setDims()
	first := make([]int, len(dims)) // the lowest node-id bit of each dimension
	for b := log2(n) - 1; b >= 0; b-- {
		first[m.dimOfBit[b]] = b
	}
	t := make([][]int8, n)
	for i := range t {
		t[i] = make([]int8, n)
		for j := range t[i] {
			t[i][j] = -1
		}
		for b := 0; b < log2(n); b++ {
			t[i][i^(1<<b)] = int8(b - first[m.dimOfBit[b]])
		}
	}
	return t, nil
}

// CheckTable verifies a routing table as ODDL needs it: symmetric, and a proper colouring per
// WSS — no node sends two partners the same wavelength through one dimension, none receives the
// same wavelength from two senders through one — with every pair in one dimension (one hop).
// dims nil: the whole system is one WSS (the 1D case).
func CheckTable(t [][]int8, dims []int) error {
	n := len(t)
	if dims == nil {
		dims = []int{n}
	}
	m := &model{dims: dims}
	m.setDims()
	dimOf := func(i, j int) (int, error) {
		x := i ^ j
		if x&(x-1) != 0 && len(dims) > 1 {
			return 0, fmt.Errorf("nodes %d and %d differ in more than one coordinate: no one-hop path", i+1, j+1)
		}
		if len(dims) == 1 {
			return 0, nil
		}
		return int(m.dimOfBit[log2(x+1)-1]), nil
	}
	for i := 0; i < n; i++ {
		if len(t[i]) != n {
			return fmt.Errorf("row %d has %d entries, want %d", i+1, len(t[i]), n)
		}
		sent := map[[2]int]int{}
		got := map[[2]int]int{}
		for j := 0; j < n; j++ {
			if l := t[i][j]; l >= 0 {
				if t[j][i] != l {
					return fmt.Errorf("node %d reaches %d on λ%d but %d reaches %d on λ%d", i+1, j+1, l+1, j+1, i+1, t[j][i]+1)
				}
				d, err := dimOf(i, j)
				if err != nil {
					return err
				}
				if k, dup := sent[[2]int{d, int(l)}]; dup {
					return fmt.Errorf("node %d sends λ%d to both %d and %d", i+1, l+1, k+1, j+1)
				}
				sent[[2]int{d, int(l)}] = j
			}
			if l := t[j][i]; l >= 0 {
				d, err := dimOf(i, j)
				if err != nil {
					return err
				}
				if k, dup := got[[2]int{d, int(l)}]; dup {
					return fmt.Errorf("node %d receives λ%d from both %d and %d", i+1, l+1, k+1, j+1)
				}
				got[[2]int{d, int(l)}] = j
			}
		}
	}
	return nil
}

// Budget is a circuit's link budget (ODDL §3C): the loss of one WSS pass and the fibre against
// the laser's power over the receiver's sensitivity; an EDFA is needed when the loss exceeds it.
type Budget struct {
	WSSPorts int
	LossDB   float64
	BudgetDB float64
	EDFA     bool
}

// LinkBudget is the worst circuit's budget on the layout: the largest dimension's WSS.
func (c *Config) LinkBudget(dims []int) Budget {
	ports := 0
	for _, d := range dims {
		ports = max(ports, d)
	}
	loss := c.WSSLoss
	if loss == 0 {
		loss = 6.8 // [P] ODDL §3C: 8-port WSS under 6.8 dB [39]
		if ports > 8 {
			loss = 17 // [P] ODDL §3C: 32-port WSS 17–25 dB [40]; the low end
		}
	}
	loss += c.FibreM / 1000 * c.FibreDb
	b := Budget{WSSPorts: ports, LossDB: loss, BudgetDB: c.LaserDbm - c.RxDbm}
	b.EDFA = b.LossDB > b.BudgetDB
	return b
}

// Inventory lists the equipment of the configured fabric for n nodes (0: the configured nodes,
// else 1,024). ODDL: the WSSs of every dimension (n/G of G ports each: §3C's 64 32-port WSSs for
// 32×32), a tunable transceiver per node and dimension, the wavelengths and the link budget. The
// baselines: the fat tree's switches and links, SiP-Ring's ring, the testbed's one switch.
func (c *Config) Inventory(n int) (network.Inventory, error) {
	if err := c.Validate(); err != nil {
		return network.Inventory{}, err
	}
	if n == 0 {
		n = c.Nodes
	}
	if n == 0 && c.Shape != "" && c.Fabric == FabricODDL {
		dims, _ := ParseShape(c.Shape)
		n = 1
		for _, d := range dims {
			n *= d
		}
	}
	switch {
	case n == 0 && c.Fabric == FabricSwitch:
		n = 4 // [P] ODDL §5B: the testbed's 4 servers
	case n == 0:
		n = 1024 // [P] ODDL §5A: the 1,024-node system of the evaluation
	}
	if n < 2 || n > MaxNodes {
		return network.Inventory{}, errs.Usage("network oddl: cost needs 2 to %d nodes (--gpus or nodes=), got %d", MaxNodes, n)
	}
	switch c.Fabric {
	case FabricFatTree:
		return c.fatTreeInventory(n)
	case FabricSiPRing:
		return c.sipRingInventory(n), nil
	case FabricSwitch:
		return c.switchInventory(n), nil
	}
	return c.oddlInventory(n)
}

// oddlInventory is ODDL's optics for n nodes.
func (c *Config) oddlInventory(n int) (network.Inventory, error) {
	dims, err := c.Layout(n)
	if err != nil {
		return network.Inventory{}, err
	}
	inv := network.Inventory{Network: Name, Nodes: n}
	wss := map[int]int{}
	need := 0
	for _, d := range dims {
		wss[d] += n / d
		need = max(need, log2(d))
	}
	for _, d := range dims {
		if k, ok := wss[d]; ok {
			inv.Items = append(inv.Items, network.InventoryItem{Name: "LCoS WSS", Count: k, Detail: fmt.Sprintf("%d ports", d),
				Source: "[P] ODDL §3C: a WSS per row and per column of a dimension (1,024 nodes: 64 32-port WSSs)"})
			delete(wss, d)
		}
	}
	inv.Items = append(inv.Items, network.InventoryItem{Name: "tunable transceiver", Count: n * len(dims), Detail: units.Gbps(c.NICGbit).Bits() + ", one per node and dimension",
		Source: "[P] ODDL §3C: each node individually connected to each dimension's switch; [D] a port per dimension"})
	w := c.Lambdas
	if w == 0 {
		w = need
	}
	b := c.LinkBudget(dims)
	inv.Facts = []network.Fact{
		{Name: "layout", Value: float64(len(dims)), Unit: "dimensions " + shapeString(dims), Source: "[P] ODDL §3C, §5A"},
		{Name: "wavelengths needed by HD", Value: float64(need), Source: "[P] ODDL §3C: w ≥ log2(max(n, m))"},
		{Name: "wavelengths per laser", Value: float64(w), Source: "wavelengths (0: the need)"},
		{Name: "wavelengths per destination", Value: float64(c.PerDestination(n)), Source: "[P] ODDL §3A: ⌊W / log2 N⌋"},
		{Name: "circuit loss", Value: b.LossDB, Unit: "dB", Source: "[P] ODDL §3C: WSS insertion loss + 0.5 dB/km fibre"},
		{Name: "link budget", Value: b.BudgetDB, Unit: "dB", Source: "[P] ODDL §3C: laser 4.5 dBm, receiver −10.5 dBm"},
		{Name: "EDFA needed", Value: boolFloat(b.EDFA), Flag: b.EDFA, Source: "[P] ODDL §3C: 8-port WSS ≈ 7 dB, no EDFA; 32-port 17–25 dB, an EDFA is necessary"},
	}
	return inv, nil
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
