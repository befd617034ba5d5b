package collective

import (
	"math"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Link is what one algorithmic step sees of the network on the tier it runs on.
type Link struct {
	// Name is the resource that limits the step (a tier, a link class): a static string.
	Name string
	// Latency is the step's head-to-head latency α: propagation, switch traversal, NIC in/out
	// and circuit reconfiguration on the critical path.
	Latency units.Seconds
	// Bandwidth is the rate at which one rank injects into this tier.
	Bandwidth units.BytesPerSecond
}

// Step is one algorithmic step of a schedule, repeated Repeat times.
type Step struct {
	Link Link
	// Bytes each rank sends during the step (over its Link).
	Bytes units.Bytes
	// Load is the number of concurrent senders that share the most loaded resource on the
	// step's path, relative to what Link.Bandwidth assumes (1 = no sharing; oversubscription
	// enters here). The effective bandwidth is Bandwidth / Load.
	Load float64
	// FanIn > 1 means the step ends with a local FanIn-to-1 reduction of ReduceBytes per input.
	FanIn       int
	ReduceBytes units.Bytes
	// Repeat is how many times the step occurs (0 counts as 1).
	Repeat int
	// Reconfig is circuit set-up time before each occurrence (wavelength or circuit switching
	// that the node's I/O does not hide).
	Reconfig units.Seconds
}

// Schedule is a collective algorithm as a list of steps.
type Schedule struct {
	Algorithm string
	Steps     []Step
}

// Price is THE cost function of every network model (RAMP §7.4.1 critical-path method): for each
// step, reconfiguration + head-to-head latency + head-to-tail transfer (bytes over the effective
// bandwidth) + local reduction compute, summed over the steps. Routed fabrics reduce each round
// of flows to a step (network/fabric) and come here too. The bottleneck is the link of the step
// with the most transfer time.
func Price(s Schedule, red network.Reducer, dt dtype.DType) network.Cost {
	c := network.Cost{Algorithm: s.Algorithm}
	var worst units.Seconds
	for _, st := range s.Steps {
		n := st.Repeat
		if n <= 0 {
			n = 1
		}
		load := st.Load
		if load < 1 {
			load = 1
		}
		h2h := st.Link.Latency
		h2t := st.Bytes.Over(units.BytesPerSecond(float64(st.Link.Bandwidth) / load))
		var comp units.Seconds
		if st.FanIn > 1 && red != nil {
			comp = red.ReduceTime(st.FanIn, st.ReduceBytes, dt)
		}
		c.Steps += int32(n)
		c.H2H += units.Seconds(n) * h2h
		c.H2T += units.Seconds(n) * h2t
		c.Compute += units.Seconds(n) * comp
		c.Reconfig += units.Seconds(n) * st.Reconfig
		if t := units.Seconds(n) * h2t; t > worst {
			worst, c.Bottleneck = t, st.Link.Name
		}
	}
	c.Total = c.Reconfig + c.H2H + c.H2T + c.Compute
	return c
}

// maxChunks bounds the pipeline depth; with zero latency the optimum is unbounded and the time
// tends to S/B, which k = 2^20 reaches within a relative 10^-6 per hop.
const maxChunks = 1 << 20

// PipelineChunks is the number of chunks k minimising the pipelined broadcast time over h hops,
// T(k) = (k + h − 1)(α + S·β/k), whose optimum is k* = sqrt((h − 1)·S·β/α). This is RAMP Eq. (1)
// with the tree diameter s = h + 1 and β inside the square root (reference/ramp.md §2.6: the
// printed form is dimensionally wrong). The integer neighbours of k* are compared directly.
func PipelineChunks(s units.Bytes, hops int, l Link) int {
	if hops <= 1 || s <= 0 {
		return 1
	}
	if l.Latency <= 0 {
		return maxChunks
	}
	beta := 1 / float64(l.Bandwidth)
	kstar := math.Sqrt(float64(hops-1) * float64(s) * beta / float64(l.Latency))
	best, bestT := 1, math.Inf(1)
	for _, k := range []int{int(math.Floor(kstar)), int(math.Ceil(kstar))} {
		k = min(max(k, 1), maxChunks)
		t := float64(k+hops-1) * (float64(l.Latency) + float64(s)*beta/float64(k))
		if t < bestT {
			best, bestT = k, t
		}
	}
	return best
}
