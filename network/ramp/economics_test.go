package ramp

import (
	"math"
	"testing"
)

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// RAMP Table 3 (65,536 nodes): 2,097,152 OCS transceivers and 32,768 couplers; $1.62–6.12 per
// Gbit with transceiver:coupler cost ratios 93:7 and 98:2. Table 4: 8.5 pJ/bit/path and 7.1 MW
// at 12.8 Tb/s per node.
func TestTable3And4(t *testing.T) {
	e, err := DefaultConfig().Economics(0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Items[0].Count != 2097152 || e.Items[1].Count != 32768 {
		t.Errorf("counts %g transceivers, %g couplers", e.Items[0].Count, e.Items[1].Count)
	}
	if !within(e.CostPerGbit[0], 1.62, 0.01) || !within(e.CostPerGbit[1], 6.12, 0.01) {
		t.Errorf("cost %v $/Gbit, Table 3: 1.62–6.12", e.CostPerGbit)
	}
	if math.Round(100*e.TransceiverShare[0]) != 93 || math.Round(100*e.TransceiverShare[1]) != 98 {
		t.Errorf("transceiver share %v, Table 3: 93:7 and 98:2", e.TransceiverShare)
	}
	if !within(e.EnergyPerBit, 8.5e-12, 0.05) {
		t.Errorf("energy %g J/bit, Table 4: 8.5 pJ", e.EnergyPerBit)
	}
	if !within(e.PowerW, 7.1e6, 0.05) {
		t.Errorf("power %g W, Table 4: 7.1 MW", e.PowerW)
	}
}
