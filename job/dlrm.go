package job

import (
	"fmt"
	"reflect"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/dlrm"
	"github.com/ddlest/ddlest/profile"
)

// DLRMOptions is a DLRM job: a preset's configuration with the user's changes applied.
type DLRMOptions struct {
	Preset string
	Config dlrm.Config
	RunOptions
}

// DLRM time-to-accuracy defaults [X]: MLPerf Training's DLRM trains one epoch of Criteo 1TB
// click logs, days 0–22: 4,195,197,692 samples.
const (
	criteoSamples = 4195197692
	dlrmEpochs    = 1
)

// publishedDLRM is HammingMesh §V-B4: "On A100, DLRM computes around 95 us, 209 us, and 796 us
// for the embedding, feature interaction, and MLP layers"; the SST motif splits the MLPs into
// 341 µs bottom and 455 µs top forward, backward twice the MLPs' and once the interaction's, no
// embedding backward compute: forward 1,100 µs, backward 1,801 µs, 2,901 µs in all.
var publishedDLRM = Published{Measured: profile.Measured{Forward: 1100e-6, Backward: 1801e-6},
	Source: "HammingMesh §V-B4, A100"}

// DLRM estimates a DLRM job.
func DLRM(o DLRMOptions) (*Report, error) {
	c := o.Config
	capacity, err := lookupCapacity(o.GPU)
	if err != nil {
		return nil, err
	}
	c.Capacity = capacity
	plan, err := dlrm.Plan(c)
	if err != nil {
		return nil, err
	}
	lay, _ := c.Shard()
	bottom, top, err := c.MLPParams()
	if err != nil {
		return nil, err
	}
	rep := &Report{Workload: "dlrm", Model: o.Preset, Params: plan.Params, Dataset: "Criteo 1TB click logs"}
	if err := o.steps(rep, dlrmEpochs, criteoSamples, plan.Layout.GlobalBatch); err != nil {
		return nil, err
	}
	b := plan.Layout.MicroBatch
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("%d tables × %s rows × %d dims = %s embedding parameters; MLPs %s bottom + %s top",
			c.Tables, units.Count(c.RowsPerTable), c.Dim, units.Count(c.EmbeddingParams()), units.Count(bottom), units.Count(top)),
		fmt.Sprintf("each GPU: %d table shard(s) of %d columns (%s parameters); MLP batch %d; all-to-all %v per GPU (%s sizing)",
			lay.TablesPerGPU, lay.DimPart, units.Count(c.RowsPerTable*float64(lay.TablesPerGPU*lay.DimPart)), b,
			c.A2ABytes(lay, b), c.A2A))
	var pub *Published
	if measured(o.Preset, c) {
		pub = &publishedDLRM
	} else if o.Profile == "published" {
		return nil, errs.Usage("--profile published: DLRM was measured for --preset hammingmesh with its defaults only")
	}
	rebuild := func(b, tp int) (*partition.Plan, error) {
		if tp != 0 {
			return nil, errs.Usage("--trace-tp %d: DLRM has no tensor parallelism (embedding shards follow the GPUs)", tp)
		}
		t := c
		t.LocalBatch = b
		return dlrm.Plan(t)
	}
	return rep, o.estimate(rep, plan, pub, rebuild)
}

// measured reports whether c is the HammingMesh preset unchanged.
func measured(preset string, c dlrm.Config) bool {
	p, err := dlrm.Presets().Lookup(preset)
	if preset != "hammingmesh" || err != nil {
		return false
	}
	c.Capacity = 0
	return reflect.DeepEqual(c, p.Config)
}
