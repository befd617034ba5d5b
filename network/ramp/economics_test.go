package ramp

import (
	"math"
	"testing"
)

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// The cost and power model counted by hand on a small RAMP (x = J = 8, Λ = 16, b = 1: 1,024 nodes
// at 8 × 400 Gb/s = 3.2 Tb/s): N·x = 8,192 transceivers and x³ = 512 couplers; per Gbit of node
// capacity the transceivers cost their own $1.5–6 (x of them at B carry x·B) and the couplers
// $0.12; a bit crosses one transceiver (3.39 W / 400 Gb/s) and two SOAs (0.88 W / 3.2 Tb/s). RAMP
// Tables 3–4's numbers at 65,536 nodes are rows of the reproduction table (internal/repro,
// ramp/table3-*, ramp/table4-*).
func TestEconomicsByHand(t *testing.T) {
	c := DefaultConfig()
	c.X, c.J, c.Lambda = 8, 8, 16
	e, err := c.Economics(0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Items[0].Count != 8192 || e.Items[1].Count != 512 {
		t.Errorf("counts %g transceivers, %g couplers", e.Items[0].Count, e.Items[1].Count)
	}
	for k, trx := range []float64{1.5, 6} {
		if !within(e.CostPerGbit[k], trx+0.12, 1e-12) || !within(e.TransceiverShare[k], trx/(trx+0.12), 1e-12) {
			t.Errorf("cost %v $/Gbit, share %v; want %g, %g", e.CostPerGbit, e.TransceiverShare, trx+0.12, trx/(trx+0.12))
		}
	}
	perBit := 3.39/400e9 + 2*0.88/3.2e12
	if !within(e.EnergyPerBit, perBit, 1e-12) || !within(e.PowerW, perBit*1024*3.2e12, 1e-12) {
		t.Errorf("energy %g J/bit, power %g W; want %g, %g", e.EnergyPerBit, e.PowerW, perBit, perBit*1024*3.2e12)
	}
}
