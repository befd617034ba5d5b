package network

// Prices are list prices of network equipment (HammingMesh §III-C, App. A-E: Colfaxdirect,
// 3/25/22, 100 Gb/s parts, "relative prices are representative for future 400 Gb/s").
type Prices struct {
	SwitchUSD float64 `json:"switch_usd" help:"one 64-port switch (USD)" source:"[P] HammingMesh §III-C: Edgecore AS7816-64x, $14,280"`
	DACUSD    float64 `json:"dac_usd" help:"one copper cable, 5 m DAC (USD)" source:"[P] HammingMesh §III-C: Mellanox passive copper, $272"`
	AoCUSD    float64 `json:"aoc_usd" help:"one optical cable, 20 m AoC (USD)" source:"[P] HammingMesh §III-C: Mellanox VCSEL active fiber, $603"`
}

// DefaultPrices are the paper's.
func DefaultPrices() Prices { return Prices{SwitchUSD: 14280, DACUSD: 272, AoCUSD: 603} }

// Bill is a network's equipment per plane and its capital cost over all planes (HammingMesh
// §III-C: "network equipment only: switches, cables and optical transceivers"; endpoints, NICs
// and boards are the accelerators').
type Bill struct {
	Planes   int `json:"planes"`
	Switches int `json:"switches_per_plane"`
	DAC      int `json:"dac_per_plane"`
	AoC      int `json:"aoc_per_plane"`
	Prices
}

// CostUSD is planes × (switches·$switch + DAC·$DAC + AoC·$AoC).
func (b Bill) CostUSD() float64 {
	return float64(b.Planes) * (float64(b.Switches)*b.SwitchUSD + float64(b.DAC)*b.DACUSD + float64(b.AoC)*b.AoCUSD)
}

// Structure is what HammingMesh Table II compares besides bandwidth: the bill, the diameter
// (cables on the longest shortest path, endpoint cables included, §III-B) and the injection rate
// per accelerator that bandwidth shares refer to.
type Structure struct {
	Endpoints int  `json:"endpoints"`
	Bill      Bill `json:"bill"`
	Diameter  int  `json:"diameter_cables"`
	// Bisection is the relative bisection bandwidth (cut over injection of a half) where the
	// family has a closed form (HammingMesh §III-A: 1/(2a) for an HxaMesh), else 0.
	Bisection float64 `json:"bisection_share,omitempty"`
	// InjectionBps is one accelerator's injection bandwidth in the routed model (B/s).
	InjectionBps float64 `json:"injection_bytes_per_s"`
}

// Structured is implemented by network configs with a bill of materials and a structure.
type Structured interface {
	Structure() (Structure, error)
}

// Inventory is a network's equipment as counts and the facts a designer checks (wavelengths,
// link budget), for networks no paper prices (ODDL gives no prices): what `ddlest cost` lists.
type Inventory struct {
	Network string          `json:"network"`
	Nodes   int             `json:"nodes"`
	Items   []InventoryItem `json:"items"`
	Facts   []Fact          `json:"facts"`
}

// InventoryItem is Count pieces of one kind of equipment.
type InventoryItem struct {
	Name   string `json:"name"`
	Count  int    `json:"count"`
	Detail string `json:"detail,omitempty"`
	Source string `json:"source"`
}

// Fact is one derived property with its unit and source; Flag marks one that needs attention
// (an amplifier the link budget calls for).
type Fact struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Unit   string  `json:"unit,omitempty"`
	Flag   bool    `json:"flag,omitempty"`
	Source string  `json:"source"`
}

// Inventoried is implemented by network configs that list their equipment for a system of the
// given nodes (0: the configuration's own size).
type Inventoried interface {
	Inventory(nodes int) (Inventory, error)
}
