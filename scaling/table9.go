package scaling

import (
	"fmt"
	"math"
	"sync"
)

// Table9Row is one row of RAMP Table 9 used as a shape preset: the paper's embedding dimension,
// number of layers and local batch per data-parallel rank (global batch / DP level). Everything
// else in the row (heads, MP, DP, #GPUs, global batch, #Params, #Steps, message sizes) is derived
// by the scaling law and the Megatron partitioner and is checked against the paper in tests.
type Table9Row struct {
	Loss       float64 // CE loss column
	DModel     int     // "Embed. Dim."
	Layers     int     // "#Lrs"
	LocalBatch int     // "Global batch" / "DP level"
}

// Table9 is RAMP (Ottino et al.) Table 9, columns CE loss, Embed. Dim., #Lrs and
// Global batch / DP level. The shapes are not reproducible from Kaplan's laws alone
// (reference/ramp.md §5.4: aspect ratios 32 to 2913), hence presets.
var Table9 = []Table9Row{
	{2.5, 1152, 36, 2480 / 16},     // [P] Table 9 row CE 2.5
	{2.4, 1536, 40, 3424 / 32},     // [P] Table 9 row CE 2.4
	{2.2, 2304, 56, 4896 / 32},     // [P] Table 9 row CE 2.2
	{2.0, 4096, 50, 7168 / 64},     // [P] Table 9 row CE 2
	{1.8, 6144, 71, 10880 / 64},    // [P] Table 9 row CE 1.8
	{1.7, 8192, 128, 16896 / 256},  // [P] Table 9 row CE 1.7
	{1.5, 16384, 132, 14080 / 128}, // [P] Table 9 row CE 1.5
	{1.3, 32768, 160, 1024 / 32},   // [P] Table 9 row CE 1.3
	{1.2, 131072, 52, 64 / 8},      // [P] Table 9 row CE 1.2
	{1.0, 262144, 90, 4 / 1},       // [P] Table 9 row CE 1
}

// table9Sources names each row as a shape source, formatted once, when first used (auto mode
// resolves a target on the hot path of sweeps; a process that resolves none formats none).
var table9Sources = sync.OnceValue(func() []string {
	out := make([]string, len(Table9))
	for i, r := range Table9 {
		out[i] = fmt.Sprintf("RAMP Table 9 preset (CE %.3g)", r.Loss)
	}
	return out
})

func table9Index(loss float64) int {
	for i, r := range Table9 {
		if math.Abs(r.Loss-loss) < 1e-9 {
			return i
		}
	}
	return -1
}

// Table9Preset returns the Table 9 row for loss, if it is one of the ten.
func Table9Preset(loss float64) (Table9Row, bool) {
	if i := table9Index(loss); i >= 0 {
		return Table9[i], true
	}
	return Table9Row{}, false
}
