package job

import (
	"fmt"
	"slices"
	"strings"

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
	// kernel also times the wait).
	Fastest units.Seconds `json:"fastest_s"`
	// Wait and Transfer split the calls that other ranks of the trace also made (Matched of
	// them, Ranks at most in one call; traces.CollectiveStat): the mean time before the last
	// peer started, and after it. Absent when no call was matched: Reason says why.
	Wait     *units.Seconds `json:"wait_s,omitempty"`
	Transfer *units.Seconds `json:"transfer_s,omitempty"`
	Matched  int64          `json:"matched"`
	Ranks    int            `json:"ranks"`
	// Predicted is the model's completion time; Error is predicted/measured − 1, ErrorFastest
	// predicted/fastest − 1 and ErrorTransfer predicted/transfer − 1 (all absent when the row is
	// not priced: Reason says why).
	Predicted     *units.Seconds `json:"predicted_s,omitempty"`
	Error         *float64       `json:"error,omitempty"`
	ErrorFastest  *float64       `json:"error_fastest,omitempty"`
	ErrorTransfer *float64       `json:"error_transfer,omitempty"`
	Algorithm     string         `json:"algorithm,omitempty"`
	// Reason says why the row is not priced, or why its wait is not separated (or only in part).
	Reason string `json:"reason,omitempty"`
}

// CalibrateCollectives prices every measured collective on the chosen network, built for the
// largest group seen (a trace holds a few ranks of a larger job; the world size bounds the
// placement) or, when the network cannot hold that many, the largest group it can: the larger
// groups' rows then say so.
//
// With a cluster, its network prices and its GPU performs the reductions (fp32, as priced).
func CalibrateCollectives(ranks []traces.RankSummary, cluster *Cluster, n NetworkChoice) ([]CollectiveCalibration, string, error) {
	var groups []int
	for _, r := range ranks {
		for _, c := range r.Collectives {
			groups = append(groups, int(c.GroupSize))
		}
	}
	slices.Sort(groups)
	groups = slices.Compact(groups)
	env := network.Env{}
	if cluster != nil {
		gpu, err := roofline.LookupGPU(cluster.GPU)
		if err != nil {
			return nil, "", err
		}
		if env.Reducer, err = roofline.New(gpu, cluster.Efficiency, dtype.FP32); err != nil {
			return nil, "", err
		}
	}
	// The largest group that the network holds, from the largest down (at least 2 GPUs).
	var m network.Model
	var tooBig error
	for i := len(groups) - 1; i >= -1; i-- {
		env.GPUs = 2
		if i >= 0 {
			env.GPUs = max(2, groups[i])
		}
		var err error
		if m, _, err = buildNetwork(cluster, n, env); err == nil {
			break
		}
		if i < 0 || env.GPUs == 2 {
			return nil, "", err
		}
		tooBig = err
	}
	return calibrate(ranks, m, env.GPUs, tooBig)
}

// calibrate prices every measured collective on m, built for gpus; tooBig is why it could not
// hold more.
func calibrate(ranks []traces.RankSummary, m network.Model, gpus int, tooBig error) ([]CollectiveCalibration, string, error) {
	var rows []CollectiveCalibration
	for _, r := range ranks {
		for _, c := range r.Collectives {
			row := CollectiveCalibration{Rank: r.Rank, Collective: c.Collective, Bytes: units.Bytes(c.Bytes), Group: int(c.GroupSize),
				Count: c.Count, Measured: units.Ns(float64(c.TotalNs) / float64(c.Count)), Fastest: units.Ns(float64(c.MinNs)),
				Matched: c.Matched, Ranks: int(max(1, c.Ranks))}
			var reasons []string
			if c.Matched > 0 {
				w, t := units.Ns(float64(c.WaitNs)/float64(c.Matched)), units.Ns(float64(c.TransferNs)/float64(c.Matched))
				row.Wait, row.Transfer = &w, &t
			}
			coll, ok := fittable(c)
			op, known := TraceOp(c.Collective)
			switch {
			case !known:
				reasons = append(reasons, "collective not identified in the trace (\"other\"): no kind to price")
			case op == network.SendRecv:
				reasons = append(reasons, "send/recv: the trace names no peer, so the path is unknown")
			case op == network.Barrier:
				reasons = append(reasons, "barrier: moves no data, its time is synchronisation")
			case c.Bytes <= 0:
				reasons = append(reasons, "size not recorded in the trace")
			case !ok:
				reasons = append(reasons, "group size not recorded in the trace")
			case row.Group > gpus:
				reasons = append(reasons, fmt.Sprintf("group of %d is larger than the network (%v)", row.Group, tooBig))
			default:
				cost, err := m.Price(coll)
				if err != nil {
					reasons = append(reasons, fmt.Sprintf("network %s cannot run it: %v", m.Name(), err))
					break
				}
				row.Predicted, row.Algorithm = &cost.Total, cost.Algorithm
				rel := func(of units.Seconds) *float64 {
					if of <= 0 {
						return nil
					}
					e := float64(cost.Total/of) - 1
					return &e
				}
				row.Error, row.ErrorFastest = rel(row.Measured), rel(row.Fastest)
				if row.Transfer != nil {
					row.ErrorTransfer = rel(*row.Transfer)
				}
				if row.Error == nil {
					row.Predicted = nil
					reasons = append(reasons, "zero measured duration")
				}
			}
			switch {
			case c.Matched == 0:
				reasons = append(reasons, "one rank: wait not separable")
			case row.Ranks < row.Group:
				reasons = append(reasons, fmt.Sprintf("%d of %d ranks in the trace: the other %d peers' arrival is not seen, transfer is an upper bound", row.Ranks, row.Group, row.Group-row.Ranks))
			}
			if c.Matched > 0 && c.Matched < c.Count {
				reasons = append(reasons, fmt.Sprintf("wait and transfer of %d of %d calls (the others overlap no peer's)", c.Matched, c.Count))
			}
			row.Reason = strings.Join(reasons, "; ")
			rows = append(rows, row)
		}
	}
	return rows, m.Name(), nil
}
