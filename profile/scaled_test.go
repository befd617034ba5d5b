package profile

import (
	"math"
	"testing"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
)

// unit prices an op at its FLOP count in seconds.
type unit struct{}

func (unit) Name() string                             { return "unit" }
func (unit) OpTime(op partition.Op) units.Seconds     { return units.Seconds(op.FLOP) }
func (unit) PeakFLOP(dtype.DType) units.FLOPPerSecond { return 1 }

// Base times per micro-batch: forward 2 + 1 (×2 repeats) = 6 s, backward 4 × 2 = 8 s, the
// recomputed op 1 s × 2, the update 0.5 s. Measured forward 3 s, backward 2 s, update 1 s give the
// factors 0.5, 0.25 and 2; the recomputed op takes the forward factor (1 s → 0.5 s).
func TestScaled(t *testing.T) {
	op := func(ph partition.Phase, s float64) partition.Op { return partition.Op{Phase: ph, FLOP: units.FLOP(s)} }
	plan := &partition.Plan{Stages: []partition.Stage{{
		Blocks: []partition.Block{{Repeat: 2, Ops: []partition.Op{op(partition.Forward, 2), op(partition.Forward, 1),
			op(partition.Recompute, 1), op(partition.Backward, 4)}}},
		PerIteration: []partition.Op{op(partition.Update, 0.5)},
	}}}
	p := Scaled(unit{}, plan, Measured{Forward: 3, Backward: 2, Update: 1})
	for _, c := range []struct {
		op   partition.Op
		want float64
	}{{op(partition.Forward, 2), 1}, {op(partition.Recompute, 1), 0.5}, {op(partition.Backward, 4), 1}, {op(partition.Update, 0.5), 1}} {
		if got := float64(p.OpTime(c.op)); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%v op of %v s: %v s, want %v", c.op.Phase, c.op.FLOP, got, c.want)
		}
	}
}
