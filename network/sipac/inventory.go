package sipac

import (
	"fmt"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/network"
)

// Inventory lists the equipment of a network of n CUs (0: r^levels, else 512) for `ddlest cost` (SiPAC
// Fig. 9 compares counts, no prices): L·r^(L−1) switches of r ports, L·p links, L·p
// transceivers on the CUs (the WSSs are transparent); the electronic BCube also needs one at
// every switch port, 2L·p (reference/sipac.md §1.2).
func (c *Config) Inventory(n int) (network.Inventory, error) {
	if err := c.Validate(); err != nil {
		return network.Inventory{}, err
	}
	if n == 0 {
		n = 512 // [P] SiPAC §VI-A-2: the simulated p = 512
		if c.Radix != 0 && c.Levels != 0 {
			n = pow(c.Radix, c.Levels)
		}
	}
	if n < 2 {
		return network.Inventory{}, errs.Usage("network sipac: cost needs at least 2 CUs, got %d", n)
	}
	r, l, err := c.Size(n)
	if err != nil {
		return network.Inventory{}, err
	}
	p := pow(r, l)
	sw, trx := "microring WSS", "optical transceiver"
	swSrc := "[P] SiPAC §III-A: level l has r^(L−1) r-port WSSs; [D] L·r^(L−1) in all (512 CUs, r = 8: 192)"
	trxN, trxSrc := l*p, "[P] SiPAC §III: L embedded transceivers per CU; WSSs are transparent"
	if c.Fabric == FabricBCube {
		sw = "packet switch"
		swSrc = "[P] BCube (Guo et al. 2009): level l has r^(L−1) r-port switches"
		trxN, trxSrc = 2*l*p, "[D] reference/sipac.md §1.2: a transceiver at both ends of every link, 2L·p"
	}
	inv := network.Inventory{Network: c.Fabric, Nodes: p}
	inv.Items = []network.InventoryItem{
		{Name: sw, Count: l * pow(r, l-1), Detail: fmt.Sprintf("%d ports", r), Source: swSrc},
		{Name: "link", Count: l * p, Detail: "CU–switch fibre", Source: "[P] SiPAC §VI-C: SiPAC(L = n) has as many links as BCube(L = n) and an nD torus, n·p"},
		{Name: trx, Count: trxN, Source: trxSrc},
	}
	inv.Facts = []network.Fact{
		{Name: "radix r", Value: float64(r), Source: "[P] SiPAC Table I"},
		{Name: "levels L", Value: float64(l), Source: "[P] SiPAC Table I: p = r^L"},
		{Name: "one-hop neighbours", Value: float64(l * (r - 1)), Source: "[P] SiPAC §III-A: (l+1)(r−1)"},
		{Name: "diameter", Value: float64(l), Unit: "hops", Source: "[P] SiPAC §III-A: the diameter is L"},
		{Name: "link bandwidth B", Value: c.LinkRate(l).Gbit(), Unit: "Gb/s", Source: "[P] SiPAC §III-B: B = w·u; §VI-A-1: per-CU / L"},
		{Name: "per-pair bandwidth b", Value: c.LinkRate(l).Gbit() / float64(r), Unit: "Gb/s", Source: "[P] SiPAC §III-B: b = B/r"},
	}
	if p != n {
		inv.Facts = append(inv.Facts, network.Fact{Name: "CUs of the job", Value: float64(n), Source: "--gpus"})
	}
	return inv, nil
}
