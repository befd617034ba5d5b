package job

import (
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/profile/roofline"
	"github.com/ddlest/ddlest/traces"
)

// traceOps maps the trace schema's collective names to network operations.
var traceOps = map[string]network.Op{
	"all_reduce": network.AllReduce, "all_gather": network.AllGather, "reduce_scatter": network.ReduceScatter,
	"all_to_all": network.AllToAll, "broadcast": network.Broadcast, "send_recv": network.SendRecv,
	"reduce": network.Reduce, "gather": network.Gather, "scatter": network.Scatter, "barrier": network.Barrier,
}

// TraceOp is the network operation of a trace collective ("other" has none).
func TraceOp(name string) (network.Op, bool) {
	op, ok := traceOps[name]
	return op, ok
}

// TraceBusFactor is the nccl-tests bus-bandwidth factor of a trace collective (0 when unknown).
func TraceBusFactor(name string, group int) float64 {
	op, ok := TraceOp(name)
	if !ok {
		return 0
	}
	return op.BusFactor(group)
}

// CollectiveCalibration compares one measured collective (a rank's calls of one kind, size and
// group) with a network model's price for the same collective.
type CollectiveCalibration struct {
	Rank       int32         `json:"rank"`
	Collective string        `json:"collective"`
	Bytes      units.Bytes   `json:"bytes"`
	Group      int           `json:"group"`
	Count      int64         `json:"count"`
	Measured   units.Seconds `json:"measured_s"` // mean duration of the calls
	// Fastest is the quickest call, the one that waited least for its peers (one rank's
	// kernel also times the wait); Waiting, the mean less it, is time at least spent waiting.
	Fastest units.Seconds `json:"fastest_s"`
	Waiting units.Seconds `json:"waiting_s"`
	// Predicted is the model's completion time; Error is predicted/measured − 1 and
	// ErrorFastest predicted/fastest − 1 (all absent when the row is not priced: Note says why).
	Predicted    units.Seconds `json:"predicted_s,omitempty"`
	Error        *float64      `json:"error,omitempty"`
	ErrorFastest *float64      `json:"error_fastest,omitempty"`
	Algorithm    string        `json:"algorithm,omitempty"`
	Note         string        `json:"note,omitempty"`
}

// CalibrateCollectives prices every measured collective on the chosen network, built for the
// largest group seen (a trace holds a few ranks of a larger job; the world size bounds the
// placement). Send/recv over a group of g ranks is priced as one message between two of them.
//
// With a cluster, its network prices and its GPU performs the reductions (fp32, as priced).
func CalibrateCollectives(ranks []traces.RankSummary, cluster *Cluster, n NetworkChoice) ([]CollectiveCalibration, string, error) {
	gpus := 2
	for _, r := range ranks {
		for _, c := range r.Collectives {
			gpus = max(gpus, int(c.GroupSize))
		}
	}
	env := network.Env{GPUs: gpus}
	if cluster != nil {
		gpu, err := roofline.LookupGPU(cluster.GPU)
		if err != nil {
			return nil, "", err
		}
		if env.Reducer, err = roofline.New(gpu, cluster.Efficiency, dtype.FP32); err != nil {
			return nil, "", err
		}
	}
	m, _, err := buildNetwork(cluster, n, env)
	if err != nil {
		return nil, "", err
	}
	return calibrate(ranks, m)
}

// calibrate prices every measured collective on m.
func calibrate(ranks []traces.RankSummary, m network.Model) ([]CollectiveCalibration, string, error) {
	var rows []CollectiveCalibration
	for _, r := range ranks {
		for _, c := range r.Collectives {
			row := CollectiveCalibration{Rank: r.Rank, Collective: c.Collective, Bytes: units.Bytes(c.Bytes), Group: int(c.GroupSize),
				Count: c.Count, Measured: units.Ns(float64(c.TotalNs) / float64(c.Count)), Fastest: units.Ns(float64(c.MinNs))}
			row.Waiting = row.Measured - row.Fastest
			coll, ok := fittable(c)
			_, known := TraceOp(c.Collective)
			switch {
			case !known:
				row.Note = "collective not identified in the trace"
			case c.Bytes <= 0:
				row.Note = "size not recorded in the trace"
			case !ok:
				row.Note = "group size not recorded in the trace"
			default:
				cost, err := m.Price(coll)
				if err != nil {
					return nil, "", err
				}
				row.Predicted, row.Algorithm = cost.Total, cost.Algorithm
				rel := func(of units.Seconds) *float64 {
					if of <= 0 {
						return nil
					}
					e := float64(row.Predicted/of) - 1
					return &e
				}
				row.Error, row.ErrorFastest = rel(row.Measured), rel(row.Fastest)
				if row.Error == nil {
					row.Note = "zero measured duration"
				}
			}
			rows = append(rows, row)
		}
	}
	return rows, m.Name(), nil
}
