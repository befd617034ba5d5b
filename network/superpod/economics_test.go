package superpod

import (
	"math"
	"testing"
)

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// RAMP Table 3 (EPS, 65,536 GPUs): 332,800 transceivers and 8,320 QM8790 switches, $20.12/Gbit,
// transceiver:switch 25:75. Table 4 (SuperPod): 383 pJ/bit/path. (Its 334 MW at 12.8 Tb/s per
// node is a documented deviation of the reproduction table, internal/repro: ramp/table4-superpod-power.)
func TestTable3And4(t *testing.T) {
	e, err := DefaultConfig().Economics(12.8)
	if err != nil {
		t.Fatal(err)
	}
	if e.Items[0].Count != 332800 || e.Items[1].Count != 8320 {
		t.Errorf("counts %g transceivers, %g switches", e.Items[0].Count, e.Items[1].Count)
	}
	if !within(e.CostPerGbit[0], 20.12, 0.01) || math.Round(100*e.TransceiverShare[0]) != 25 {
		t.Errorf("cost %v $/Gbit share %v, Table 3: 20.12, 25:75", e.CostPerGbit, e.TransceiverShare)
	}
	if !within(e.EnergyPerBit, 383e-12, 0.005) {
		t.Errorf("energy %g J/bit, Table 4: 383 pJ", e.EnergyPerBit)
	}
}
