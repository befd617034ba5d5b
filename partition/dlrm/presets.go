package dlrm

import (
	"strconv"

	"github.com/ddlest/ddlest/internal/registry"
	"github.com/ddlest/ddlest/partition"
)

// Preset is a named DLRM configuration with its source.
type Preset struct {
	Config
	Source string
}

// RAMP Table 10 (reference/ramp.md §6.2): 1e7 rows per table (#Rows is the total over all
// tables), 16 dense features, 1,024-wide MLPs with 4 bottom and 5 top layers, global batch
// 65,536, half precision and sparse SGD (§7.3). The bottom MLP ends at the embedding dimension so
// that its output joins the interaction; the top MLP ends in one logit. The table's #Params and
// #Part. Params are rows of the reproduction table (internal/repro: ramp/table10-*).
func rampRow(name string, gpus, tables, dim, part, batch int, note string) Preset {
	return Preset{
		Config: Config{Name: name, Tables: tables, RowsPerTable: 1e7, Dim: dim, DimPart: part, Pooling: 1, DenseFeatures: 16,
			Bottom: []int{1024, 1024, 1024, dim}, Top: []int{1024, 1024, 1024, 1024, 1}, GPUs: gpus, GlobalBatch: 65536,
			LocalBatch: batch, Precision: partition.MixedFP16},
		Source: "RAMP Table 10 (" + strconv.Itoa(gpus) + " GPUs)" + note,
	}
}

// Presets lists RAMP Table 10's five rows and the HammingMesh DLRM.
func Presets() *registry.Registry[Preset] {
	r := registry.New[Preset]("DLRM preset")
	for _, p := range []Preset{
		rampRow("ramp-256", 256, 8, 4096, 128, 8192, ""),
		rampRow("ramp-1024", 1024, 16, 8192, 128, 4096, ""),
		// [AMB] the table's batch per GPU is 3072 where its own rule (global / #tables) gives 2048.
		rampRow("ramp-4096", 4096, 32, 16384, 128, 3072, "; batch 3072 as printed (global/#tables gives 2048)"),
		rampRow("ramp-16384", 16384, 128, 16384, 128, 512, ""),
		// [AMB] #Part. Params 0.7B printed; 1e7 × 64 = 0.64B.
		rampRow("ramp-65536", 65536, 256, 16384, 64, 256, "; #Part. Params 0.7B printed, 1e7×64 = 0.64B"),
		{
			// HammingMesh §V-B4 and its SST motif (reference/hammingmesh.md §6.3): 1 MiB all-to-all per
			// rank (262,144 floats), all-reduces of 728,064 (top) and 49,536 (bottom) floats, FP32,
			// p = 128 [AMB: the paper says "up to 128"]. The paper gives no architecture; this one
			// [D] reproduces the sizes: 8 tables of 128 columns cut into 16 shards of 8 over 128 GPUs,
			// 32,768 samples → 32,768 × 8 × 4 B = 1 MiB per rank; bottom 128 → 128 → 128 → 128 on 128
			// dense features = 49,536 parameters exactly; top 164 → 1024 → 512 → 64 → 1 = 726,657
			// (−0.2%). Rows per table are not given; 1e7 as in RAMP. FP32 with TF32 GEMMs: the paper's
			// A100 GPT-3 times are the TF32 tensor-core rate (reference/hammingmesh.md §6.4).
			Config: Config{Name: "hammingmesh", Tables: 8, RowsPerTable: 1e7, Dim: 128, Pooling: 1, DenseFeatures: 128,
				Bottom: []int{128, 128, 128}, Top: []int{1024, 512, 64, 1}, GPUs: 128, GlobalBatch: 32768, LocalBatch: 256,
				Precision: partition.TF32},
			Source: "HammingMesh §V-B4 / SST motif emberdlrm (sizes); architecture [D]",
		},
	} {
		r.Add(p.Name, p)
	}
	return r
}
