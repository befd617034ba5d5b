package superpod

import (
	"math"
	"testing"
)

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// The cost and power model counted by hand for 1,024 GPUs: 128 DGX nodes, ⌈128/20⌉ = 7 scalable
// units rounded up to one pod of 16, so 16 × 8 = 128 leaves, as many spines and 64 core switches
// (320 QM8790s) with a transceiver in each of their 40 ports (12,800); InfiniBand at 2.4 Tb/s /
// 12 = 200 Gb/s per GPU. Cost per Gbit: (12,800 · 200 · $1 + 320 · 40 · 200 · $2.96) / (1,024 ·
// 200) = $49.50, transceivers 2.56/10.1376 of it. A bit crosses 5 switches (404 W / 8 Tb/s) and
// 6 transceivers (4.35 W / 200 Gb/s). RAMP Tables 3–4's numbers at 65,536 GPUs are rows of the
// reproduction table (internal/repro, ramp/table3-eps-*, ramp/table4-superpod-*).
func TestEconomicsByHand(t *testing.T) {
	c := DefaultConfig()
	c.MaxGPUs = 1024
	e, err := c.Economics(12.8)
	if err != nil {
		t.Fatal(err)
	}
	if e.Items[0].Count != 12800 || e.Items[1].Count != 320 {
		t.Errorf("counts %g transceivers, %g switches", e.Items[0].Count, e.Items[1].Count)
	}
	if !within(e.CostPerGbit[0], 49.5, 1e-12) || !within(e.TransceiverShare[0], 2.56/10.1376, 1e-12) {
		t.Errorf("cost %v $/Gbit, share %v", e.CostPerGbit, e.TransceiverShare)
	}
	perBit := 5*404/8e12 + 6*4.35/200e9
	if !within(e.EnergyPerBit, perBit, 1e-12) || !within(e.PowerW, perBit*1024*12.8e12, 1e-12) {
		t.Errorf("energy %g J/bit, power %g W; want %g, %g", e.EnergyPerBit, e.PowerW, perBit, perBit*1024*12.8e12)
	}
}
