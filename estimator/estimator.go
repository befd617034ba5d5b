package estimator

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/profile"
)

// Input is what an estimate combines.
type Input struct {
	Plan    *partition.Plan
	Profile profile.Profile
	Network network.Model
	// Steps is the number of iterations to train (0: report the iteration only).
	Steps float64
	// SampleTokens is the number of tokens per sample (the sequence length), for tokens/s.
	SampleTokens int
}

// CollectiveTime is one collective of the critical stage, per iteration.
type CollectiveTime struct {
	Name    string          `json:"name"`
	Kind    network.Op      `json:"kind"`
	Dim     partition.Dim   `json:"dim"`
	Phase   partition.Phase `json:"phase"`
	Bytes   units.Bytes     `json:"bytes"`
	Group   int             `json:"group"`
	Stride  int             `json:"stride"`
	Count   int             `json:"count"` // calls per iteration
	Cost    network.Cost    `json:"cost"`  // one call
	Time    units.Seconds   `json:"time_s"`
	Exposed units.Seconds   `json:"exposed_s"`
}

// Iteration is the time of one training iteration, split so that the parts add up to Total.
type Iteration struct {
	Compute     units.Seconds `json:"compute_s"`
	ExposedComm units.Seconds `json:"exposed_comm_s"`
	Bubble      units.Seconds `json:"bubble_s"`
	Total       units.Seconds `json:"total_s"`
	// CommFraction is ExposedComm / Total.
	CommFraction float64 `json:"comm_fraction"`
}

// Breakdown splits compute by phase and exposed communication by parallel dimension: TP the
// tensor- (and sequence-) parallel collectives, EP Mixture-of-Experts all-to-alls, MP the
// model-parallel embedding tables' all-to-alls (DLRM), SP spatial parallelism's halos and
// sharded layers, CP context parallelism's key/value ring, PP the pipeline's sends and its
// embedding all-reduce, DP the gradient reduction (and ZeRO-2/3's per-layer traffic).
type Breakdown struct {
	Forward, Recompute, Backward, Optimizer units.Seconds
	TP, EP, MP, SP, CP, PP, DP              units.Seconds
	// OffloadWait is the compute stream's waiting for activation copies to and from host memory
	// (partition.Stage.Offload; doc.go), part of the iteration's compute.
	OffloadWait units.Seconds
	// DPShared is the part of DP that links shared with the backward pass's traffic add
	// (contention, doc.go; 0 on level models).
	DPShared units.Seconds
	// CommKernels is the compute the critical stage loses to the SMs its overlapped
	// communication kernels hold (network.Cost.SMs, partition.Driver; doc.go), part of the
	// iteration's compute: 0 unless the profile knows its GPU's SMs (profile.SMCounter).
	CommKernels units.Seconds
}

// CommOrder is the order reports list the exposed communication in: the block collectives,
// then the pipeline, then the gradients.
var CommOrder = [partition.NumDims]partition.Dim{partition.DimTP, partition.DimEP, partition.DimMP,
	partition.DimSP, partition.DimCP, partition.DimPP, partition.DimDP}

// Comm is the exposed communication over dimension d.
func (b *Breakdown) Comm(d partition.Dim) *units.Seconds {
	switch d {
	case partition.DimDP:
		return &b.DP
	case partition.DimTP:
		return &b.TP
	case partition.DimPP:
		return &b.PP
	case partition.DimEP:
		return &b.EP
	case partition.DimMP:
		return &b.MP
	case partition.DimSP:
		return &b.SP
	}
	return &b.CP // partition.DimCP, the last
}

// ExposedComm is the exposed communication over every dimension, summed in CommOrder.
func (b *Breakdown) ExposedComm() units.Seconds {
	var t units.Seconds
	for _, d := range CommOrder {
		t += *b.Comm(d)
	}
	return t
}

// StageTime is one pipeline stage's work per micro-batch: compute by phase and the exposed
// block collectives of the forward and the backward pass.
type StageTime struct {
	Forward, Recompute, Backward units.Seconds
	CommForward, CommBackward    units.Seconds
}

// Result is an estimate.
type Result struct {
	// Stages are every stage's per-micro-batch times (the steady-state 1F1B step of a stage is
	// its forward or its backward part).
	Stages      []StageTime
	Iteration   Iteration
	Breakdown   Breakdown
	Stage       int // the pipeline stage that sets the pace
	Collectives []CollectiveTime
	// TimeToAccuracy is Steps × Iteration.Total plus the network's one-time Setup (0 when Steps
	// is 0).
	TimeToAccuracy units.Seconds
	// Setup is the network's set-up once per job (network.SetUp; ODDL's WSS configuration).
	Setup       units.Seconds
	SamplesPerS float64
	TokensPerS  float64
	// HWFLOPPerGPU counts every executed GEMM, recomputation included (Megatron-LM's
	// "hardware FLOPs"); ModelFLOPPerGPU counts the model's GEMMs once.
	HWFLOPPerGPU    units.FLOPPerSecond
	ModelFLOPPerGPU units.FLOPPerSecond
	// MFU is ModelFLOPPerGPU over the GPU's dense peak for the GEMMs' dtype: under FP8 training
	// the FP8 peak (torchtitan issue #560's first convention, "assume peak is all computations
	// are done in FP8"; the bf16 MFU is twice it on H100).
	MFU    float64
	Memory partition.Memory
}

// Estimate prices a plan. See doc.go for the model.
func Estimate(in Input) (Result, error) {
	var r Result
	if err := EstimateInto(&r, in); err != nil {
		return Result{}, err
	}
	return r, nil
}

// EstimateInto is Estimate into r, reusing the room of r's slices (Stages, Collectives): a
// caller that prices plan after plan (a sweep's point) allocates nothing once they are large
// enough. On error r is left partly written.
func EstimateInto(r *Result, in Input) error {
	p := in.Plan
	if p == nil || len(p.Stages) == 0 {
		return errors.New("estimator: empty plan")
	}
	if in.Profile == nil || in.Network == nil {
		return errors.New("estimator: missing profile or network")
	}
	e := estimatePool.Get().(*estimate)
	defer e.release()
	e.in = in
	e.prices, e.costs, e.repBwd, e.syncs = e.pricesArr[:0], e.costsArr[:0], e.repBwdArr[:0], e.syncsArr[:0]
	lay := p.Layout
	mbs := float64(lay.MicroBatches)
	pp := float64(len(p.Stages))

	stages := e.stages[:0]
	for range p.Stages {
		stages = append(stages, stageTimes{})
	}
	e.stages = stages
	distinct := 0 // stages priced: each collects its collectives in its own scratch buffer
	*r = Result{Stages: slices.Grow(r.Stages[:0], len(p.Stages))[:len(p.Stages)], Collectives: r.Collectives[:0]}
	crit := 0
	var heaviest units.Seconds // model chunk, over all stages
	for i := range p.Stages {
		var st stageTimes
		if i > 0 && sameWork(&p.Stages[i], &p.Stages[i-1]) {
			st = stages[i-1] // a deep pipeline repeats one stage's work: price it once
		} else {
			var err error
			if distinct == len(e.collBufs) {
				e.collBufs = append(e.collBufs, make([]CollectiveTime, 0, 16))
			}
			st, err = e.stage(&p.Stages[i], e.collBufs[distinct][:0])
			e.collBufs[distinct] = st.colls[:0]
			distinct++
			if err != nil {
				return err
			}
		}
		stages[i] = st
		r.Stages[i] = StageTime{Forward: st.fwd, Recompute: st.recompute, Backward: st.bwd, CommForward: st.commFwd, CommBackward: st.commBwd}
		if st.period() > stages[crit].period() {
			crit = i
		}
		heaviest = units.Max(heaviest, st.chunk(lay.Interleave))
	}
	c := stages[crit]
	// The critical stage's collectives leave the scratch for the result (room for the P2P and
	// its gather).
	c.colls = append(slices.Grow(r.Collectives, len(c.colls)+2), c.colls...)

	r.Stage = crit
	r.Breakdown.Forward = units.Seconds(mbs) * c.fwd
	r.Breakdown.Recompute = units.Seconds(mbs) * c.recompute
	r.Breakdown.Backward = units.Seconds(mbs) * c.bwd
	r.Breakdown.OffloadWait = units.Seconds(mbs) * c.offload
	for d, x := range c.commDim {
		if d != int(partition.DimDP) {
			*r.Breakdown.Comm(partition.Dim(d)) = units.Seconds(mbs) * x
		}
	}
	// The pipeline fills and drains one model chunk at a time: p − 1 steps of the heaviest chunk
	// ((p − 1)/v · T when every chunk weighs the same).
	bubble := units.Seconds(pp-1) * heaviest

	var hwFLOP float64
	var perIter units.Seconds
	for i, st := range stages {
		r.Breakdown.Optimizer = units.Max(r.Breakdown.Optimizer, st.optimizer)
		hwFLOP += st.hwFLOP
		// A later stage finishes its last backward pass about i backward steps before stage 0
		// does (1F1B cool-down), so its gradient tail can hide behind that much time.
		exposed := st.dpExposed - units.Seconds(i)*(st.bwd+st.recompute)
		if exposed > r.Breakdown.DP {
			r.Breakdown.DP = exposed
			r.Breakdown.DPShared = min(st.dpShared, exposed)
		}
		perIter = units.Max(perIter, st.perIterComm)
	}
	r.Breakdown.PP += perIter // the embedding-group all-reduce between the first and last stage
	if p.P2P != nil && p.P2P.Group.Size > 1 {
		// Blocking sends/receives: every transfer of the critical stage plus the 2(p−1) hops of
		// pipeline fill and drain; overlapped ones expose only the hops (doc.go). A scatter/gather
		// receive is followed by its all-gather over the tensor-parallel group.
		calls, exposed := float64(p.P2P.Count)+2*(pp-1), units.Seconds(1)
		if p.P2POverlap {
			exposed = units.Seconds(2 * (pp - 1) / calls)
		}
		for _, x := range [2]*partition.Collective{p.P2P, p.P2PGather} {
			if x == nil || x.Group.Size <= 1 {
				continue
			}
			cost, err := e.price(x.Collective)
			if err != nil {
				return err
			}
			d := units.Seconds(calls) * cost.Total
			r.Breakdown.PP += d * exposed
			c.colls = append(c.colls, CollectiveTime{Name: x.Name, Kind: x.Op, Dim: x.Dim, Phase: x.Phase,
				Bytes: x.Bytes, Group: x.Group.Size, Stride: x.Group.Stride, Count: int(calls), Cost: cost,
				Time: d, Exposed: d * exposed})
		}
	}
	r.Breakdown.CommKernels = commKernels(in.Profile, c.colls)
	it := &r.Iteration
	it.Compute = r.Breakdown.Forward + r.Breakdown.Recompute + r.Breakdown.Backward + r.Breakdown.Optimizer + r.Breakdown.OffloadWait + r.Breakdown.CommKernels
	// ZeRO-2/3's per-layer data-parallel traffic is data-parallel communication, exposed on the
	// critical stage every micro-batch.
	r.Breakdown.DP += units.Seconds(mbs) * c.commDim[partition.DimDP]
	it.ExposedComm = r.Breakdown.ExposedComm()
	it.Bubble = bubble
	it.Total = it.Compute + it.ExposedComm + it.Bubble
	if it.Total > 0 {
		it.CommFraction = float64(it.ExposedComm / it.Total)
	}
	r.Collectives = c.colls

	r.TimeToAccuracy = units.Seconds(in.Steps) * it.Total
	if su, ok := in.Network.(network.SetUp); ok && in.Steps > 0 {
		r.Setup = su.SetupTime()
		r.TimeToAccuracy += r.Setup
	}
	if it.Total > 0 {
		r.SamplesPerS = float64(lay.GlobalBatch) / float64(it.Total)
		r.TokensPerS = r.SamplesPerS * float64(in.SampleTokens)
		gpus := float64(lay.GPUs)
		r.HWFLOPPerGPU = units.FLOP(hwFLOP * mbs / pp).Per(it.Total)
		r.ModelFLOPPerGPU = units.FLOP(float64(p.ModelFLOP) / gpus).Per(it.Total)
		if peak := in.Profile.PeakFLOP(c.dtype); peak > 0 {
			r.MFU = float64(r.ModelFLOPPerGPU / peak)
		}
	}
	r.Memory = p.MaxMemory()
	return nil
}

// commKernels is the compute lost to communication kernels: each collective's hidden time (what
// of it overlaps compute) × the share of the GPU's SMs its kernels hold (doc.go). 0 when the
// profile does not know its GPU's SMs.
func commKernels(prof profile.Profile, colls []CollectiveTime) units.Seconds {
	sc, ok := prof.(profile.SMCounter)
	if !ok {
		return 0
	}
	n := sc.SMs()
	if n <= 0 {
		return 0
	}
	var lost units.Seconds
	for i := range colls {
		if k := int(colls[i].Cost.SMs); k > 0 {
			lost += (colls[i].Time - colls[i].Exposed) * units.Seconds(min(k, n)) / units.Seconds(n)
		}
	}
	return lost
}

// sameWork reports whether two stages share their blocks, per-iteration work and gradient
// reductions (the same slices, as a partitioner that reuses one layer block builds them), so
// that their times are equal.
func sameWork(a, b *partition.Stage) bool {
	if a.Offload != b.Offload {
		return false
	}
	if a.Params == b.Params && len(a.PerIterationCollectives) == 0 && len(b.PerIterationCollectives) == 0 &&
		shared(a.Blocks, b.Blocks) && shared(a.PerIteration, b.PerIteration) && shared(a.Grads, b.Grads) &&
		shared(a.ParamGathers, b.ParamGathers) {
		return true // copies of one stage (a deep pipeline's middle): nothing to compare
	}
	if len(a.Blocks) != len(b.Blocks) || len(a.PerIteration) != len(b.PerIteration) ||
		len(a.PerIterationCollectives) != 0 || len(b.PerIterationCollectives) != 0 || len(a.Grads) != len(b.Grads) ||
		len(a.ParamGathers) != len(b.ParamGathers) || a.Params != b.Params {
		return false
	}
	for i := range a.Blocks {
		x, y := &a.Blocks[i], &b.Blocks[i]
		if x.Repeat != y.Repeat || x.Params != y.Params || x.Sync != y.Sync || len(x.Ops) != len(y.Ops) ||
			len(x.Collectives) != len(y.Collectives) || (len(x.Ops) > 0 && &x.Ops[0] != &y.Ops[0]) ||
			(len(x.Collectives) > 0 && &x.Collectives[0] != &y.Collectives[0]) {
			return false
		}
	}
	for i := range a.PerIteration {
		x, y := &a.PerIteration[i], &b.PerIteration[i]
		if x.Kind != y.Kind || x.DType != y.DType || x.FLOP != y.FLOP || x.Read != y.Read || x.Written != y.Written {
			return false
		}
	}
	for i := range a.Grads {
		if a.Grads[i] != b.Grads[i] {
			return false
		}
	}
	for i := range a.ParamGathers {
		if a.ParamGathers[i] != b.ParamGathers[i] {
			return false
		}
	}
	return true
}

type estimate struct {
	in     Input
	prices []pricedCollective
	costs  []network.Cost  // scratch: one block's collective prices
	repBwd []units.Seconds // scratch: one stage's backward time per block repetition
	syncs  []gradientSync  // scratch: one stage's gradient reductions
	// Backing arrays of the scratch slices: a plan has a handful of each, so one estimate
	// allocates them once, with itself.
	pricesArr [16]pricedCollective
	costsArr  [16]network.Cost
	repBwdArr [8]units.Seconds
	repFwd    []units.Seconds // scratch: per block, one repetition's forward with its exposed collectives
	// scratch of offloadWait: per layer its forward and backward time, per offloaded layer its
	// copy's time and when the copy ends
	layerFwd, layerBwd, copyTime, copyDone []units.Seconds
	syncsArr                               [4]gradientSync
	queue                                  []queued             // scratch: tensors waiting under Horovod fusion
	window                                 []int                // scratch: per block, its repetitions in the gradients' window
	windowColl                             []network.Concurrent // scratch: the window's collectives (contention)
	stages                                 []stageTimes
	collBufs                               [][]CollectiveTime // per priced stage, its collectives
}

// estimatePool keeps the estimates' scratch between calls (sweeps and searches run millions).
var estimatePool = sync.Pool{New: func() any { return new(estimate) }}

// release returns the scratch to the pool, dropping the references to the caller's plan.
func (e *estimate) release() {
	e.in = Input{}
	clear(e.pricesArr[:])
	estimatePool.Put(e)
}

// gradientSync is one GradSync's state in the bucket simulation (estimate.gradients).
type gradientSync struct {
	g                  partition.GradSync
	full               int
	rest, bucket       units.Bytes
	fullCost, restCost network.Cost
	perParam, filled   float64
	next               int
	total              units.Seconds
	tensors            bool // Horovod fusion: whole tensors through the queue (estimate.fuse)
}

// queued is a tensor waiting for the communication stream under Horovod fusion.
type queued struct {
	sync  int
	bytes units.Bytes
	ready units.Seconds
}

type pricedCollective struct {
	c    network.Collective
	cost network.Cost
}

// price memoises the network model: a plan prices the same few collectives (a handful of
// distinct ones) many times, so a short list searched linearly beats a map.
func (e *estimate) price(c network.Collective) (network.Cost, error) {
	if c.Group.Size <= 1 {
		return network.Cost{Algorithm: "none"}, nil
	}
	for i := range e.prices {
		if e.prices[i].c == c {
			return e.prices[i].cost, nil
		}
	}
	cost, err := e.in.Network.Price(c)
	if err != nil {
		return network.Cost{}, fmt.Errorf("pricing %s of %v over %d GPUs on %s: %w", c.Op, c.Bytes, c.Group.Size, e.in.Network.Name(), err)
	}
	e.prices = append(e.prices, pricedCollective{c, cost})
	return cost, nil
}

// stageTimes is one stage's work: per micro-batch compute and critical communication, per
// iteration optimizer and gradient tail.
type stageTimes struct {
	fwd, recompute, bwd units.Seconds                    // compute per micro-batch
	comm                units.Seconds                    // exposed block communication per micro-batch
	commDim             [partition.NumDims]units.Seconds // comm by parallel dimension (DP: ZeRO-2/3's per-layer traffic)
	commFwd, commBwd    units.Seconds                    // its forward and backward (and recomputation) parts
	optimizer           units.Seconds
	offload             units.Seconds // waits for offloaded activations per micro-batch
	dpExposed           units.Seconds // gradient reduction not hidden by the last backward pass
	dpShared            units.Seconds // of which links shared with the backward pass add
	perIterComm         units.Seconds
	hwFLOP              float64     // GEMM FLOP per micro-batch, recomputation included
	dtype               dtype.DType // of the GEMMs, for MFU
	hasDType            bool
	colls               []CollectiveTime
	// whole is the part of the period in blocks that do not split over the interleaved model
	// chunks (embedding, LM head: their repetitions are not a multiple of the chunk count).
	whole units.Seconds
}

// shared: x and y are the same elements of one array (or both empty).
func shared[T any](x, y []T) bool {
	return len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
}

// opTime is the time of the op called name in block b (0 if absent).
func opTime(b *partition.Block, name string, prof profile.Profile) units.Seconds {
	for _, op := range b.Ops {
		if op.Name == name {
			return prof.OpTime(op)
		}
	}
	return 0
}

func (s stageTimes) period() units.Seconds {
	return s.fwd + s.recompute + s.bwd + s.comm + s.offload
}

// chunk is the stage's heaviest model chunk per micro-batch under v interleaved chunks: the
// chunked blocks' share plus the blocks that do not split (the whole period when v = 1).
func (s stageTimes) chunk(v int) units.Seconds {
	if v <= 1 {
		return s.period()
	}
	return (s.period()-s.whole)/units.Seconds(v) + s.whole
}

func (e *estimate) stage(st *partition.Stage, colls []CollectiveTime) (stageTimes, error) {
	t := stageTimes{colls: colls}
	prof := e.in.Profile
	mbs := e.in.Plan.Layout.MicroBatches
	// Backward time (with recomputation and critical collectives) of each block repetition, for
	// the gradient-bucket simulation.
	repBwd := e.repBwd[:0]
	for range st.Blocks {
		repBwd = append(repBwd, 0)
	}
	e.repBwd = repBwd
	e.repFwd = e.repFwd[:0]
	for bi := range st.Blocks {
		b := &st.Blocks[bi]
		rep := units.Seconds(b.Repeat)
		var fwd, rc, bwd units.Seconds
		for _, op := range b.Ops {
			d := prof.OpTime(op)
			switch op.Phase {
			case partition.Forward:
				fwd += d
			case partition.Recompute:
				rc += d
			case partition.Backward:
				bwd += d
			}
			if op.Kind.IsMatMul() {
				t.hwFLOP += float64(op.FLOP) * float64(b.Repeat)
				if !t.hasDType {
					t.dtype, t.hasDType = op.DType, true
				}
			}
		}
		var commFwd, commBwd units.Seconds
		var commDim [partition.NumDims]units.Seconds
		// Collectives hidden behind the same op share it: their summed time beyond the op's is
		// exposed, split in proportion to their times.
		costs := e.costs[:0]
		for _, c := range b.Collectives {
			cost, err := e.price(c.Collective)
			if err != nil {
				return t, err
			}
			if c.Driver.Set {
				cost.SMs = int32(c.Driver.SMs)
			}
			costs = append(costs, cost)
		}
		e.costs = costs
		// Collectives behind the same op of the same phase share it (a recomputed forward op
		// has its forward op's name and time, and its own collectives).
		behind := func(op string, ph partition.Phase) (sum units.Seconds) {
			for i, c := range b.Collectives {
				if c.Overlap == partition.BehindOp && c.HideBehind == op && c.Phase == ph {
					sum += units.Seconds(c.Count) * costs[i].Total
				}
			}
			return sum
		}
		for i, c := range b.Collectives {
			cost := costs[i]
			one := units.Seconds(c.Count) * cost.Total
			exposed := one
			if c.Overlap == partition.BehindOp && one > 0 {
				sum := behind(c.HideBehind, c.Phase)
				exposed = units.Max(0, sum-opTime(b, c.HideBehind, prof)) * one / sum
			}
			if c.Phase == partition.Forward {
				commFwd += exposed
			} else {
				commBwd += exposed
			}
			commDim[c.Dim] += exposed
			n := c.Count * b.Repeat * mbs
			t.colls = appendColl(t.colls, CollectiveTime{Name: c.Name, Kind: c.Op, Dim: c.Dim, Phase: c.Phase, Bytes: c.Bytes,
				Group: c.Group.Size, Stride: c.Group.Stride, Count: n, Cost: cost,
				Time: units.Seconds(n) * cost.Total, Exposed: exposed * rep * units.Seconds(mbs)})
		}
		t.fwd += rep * fwd
		t.recompute += rep * rc
		t.bwd += rep * bwd
		t.comm += rep * (commFwd + commBwd)
		for d, x := range commDim {
			t.commDim[d] += rep * x
		}
		t.commFwd += rep * commFwd
		t.commBwd += rep * commBwd
		repBwd[bi] = rc + bwd + commBwd
		if st.Offload > 0 {
			e.repFwd = append(e.repFwd, fwd+commFwd)
		}
		if v := e.in.Plan.Layout.Interleave; v > 1 && b.Repeat%v != 0 {
			t.whole += rep * (fwd + rc + bwd + commFwd + commBwd)
		}
	}
	if st.Offload > 0 {
		var err error
		if t.offload, err = e.offloadWait(st); err != nil {
			return t, err
		}
	}
	for _, op := range st.PerIteration {
		t.optimizer += prof.OpTime(op)
	}
	for _, c := range st.PerIterationCollectives {
		cost, err := e.price(c.Collective)
		if err != nil {
			return t, err
		}
		d := units.Seconds(c.Count) * cost.Total
		t.perIterComm += d
		t.colls = appendColl(t.colls, CollectiveTime{Name: c.Name, Kind: c.Op, Dim: c.Dim, Phase: c.Phase, Bytes: c.Bytes,
			Group: c.Group.Size, Stride: c.Group.Stride, Count: c.Count, Cost: cost, Time: d, Exposed: d})
	}
	dp, shared, colls, err := e.gradients(st, repBwd, t.colls)
	if err != nil {
		return t, err
	}
	t.dpExposed, t.dpShared = dp, shared
	t.colls = colls
	for _, g := range st.ParamGathers {
		d, err := e.paramGather(g, t.fwd, &t.colls)
		if err != nil {
			return t, err
		}
		t.dpExposed += d
	}
	return t, nil
}

// paramGather prices a distributed optimizer's all-gather of the updated parameters, bucket by
// bucket, after the optimizer step. Without overlap it is exposed whole; overlapped
// (Megatron-Core overlap_param_gather) each bucket is waited for before its layers' forward pass
// of the next iteration, so the first bucket and whatever outlasts one micro-batch's forward
// pass fwd are exposed. It returns the exposed time.
func (e *estimate) paramGather(g partition.GradSync, fwd units.Seconds, colls *[]CollectiveTime) (units.Seconds, error) {
	full, rest := g.Buckets() // full ≥ 1 whenever there are bytes
	if g.Group.Size <= 1 || full == 0 {
		return 0, nil
	}
	bucket := g.Bucket()
	fullCost, restCost, err := e.bucketCosts(g, bucket, rest)
	if err != nil {
		return 0, err
	}
	total := units.Seconds(full)*(fullCost.Total+g.FusionLatency) + restCost.Total + g.FusionLatency*units.Seconds(boolInt(rest > 0))
	exposed := total
	if g.Overlap {
		exposed = units.Max(fullCost.Total+g.FusionLatency, total-fwd) // the first bucket always waits
	}
	name := gradName(g)
	for _, x := range [2]struct {
		n    int
		size units.Bytes
		cost network.Cost
	}{{full, bucket, fullCost}, {boolInt(rest > 0), rest, restCost}} {
		if x.n == 0 {
			continue
		}
		d := units.Seconds(x.n) * (x.cost.Total + g.FusionLatency)
		*colls = append(*colls, CollectiveTime{Name: name, Kind: g.Op, Dim: g.Dim, Phase: partition.Update,
			Bytes: x.size, Group: g.Group.Size, Stride: g.Group.Stride, Count: x.n, Cost: x.cost,
			Time: d, Exposed: exposed * d / total})
	}
	return exposed, nil
}

// bucketCosts prices a gradient reduction's (or parameter gather's) full bucket and, when rest
// > 0, its remainder.
func (e *estimate) bucketCosts(g partition.GradSync, bucket, rest units.Bytes) (full, remainder network.Cost, err error) {
	if full, err = e.price(network.Collective{Op: g.Op, Bytes: bucket, Group: g.Group, DType: g.DType}); err != nil || rest <= 0 {
		return full, remainder, err
	}
	remainder, err = e.price(network.Collective{Op: g.Op, Bytes: rest, Group: g.Group, DType: g.DType})
	return full, remainder, err
}

// gradName is the name a gradient reduction's buckets are reported under.
func gradName(g partition.GradSync) string {
	if g.Name == "" {
		return "dp.grads"
	}
	return g.Name
}

// appendColl merges calls of the same collective (same name, phase, size and group) across blocks.
func appendColl(cs []CollectiveTime, c CollectiveTime) []CollectiveTime {
	for i := range cs {
		if cs[i].Name == c.Name && cs[i].Phase == c.Phase && cs[i].Bytes == c.Bytes && cs[i].Group == c.Group && cs[i].Stride == c.Stride {
			cs[i].Count += c.Count
			cs[i].Time += c.Time
			cs[i].Exposed += c.Exposed
			return cs
		}
	}
	return append(cs, c)
}

// gradients simulates the stage's gradient reductions during the last micro-batch's backward
// pass: block repetitions finish in reverse order, their gradients fill the buckets of the
// GradSync their block points at, and full buckets are reduced one after another on a single
// communication stream shared by all of the stage's GradSyncs. Remainders, and every bucket of a
// GradSync without overlap, go after the backward pass. What runs past its end is exposed.
func (e *estimate) gradients(st *partition.Stage, repBwd []units.Seconds, colls []CollectiveTime) (exposed, shared units.Seconds, _ []CollectiveTime, _ error) {
	type sync = gradientSync
	syncs := e.syncs[:0]
	for range st.Grads {
		syncs = append(syncs, sync{})
	}
	e.syncs = syncs
	var commTotal units.Seconds
	for i, g := range st.Grads {
		s := &syncs[i]
		s.g = g
		s.full, s.rest = g.Buckets()
		if g.Group.Size <= 1 || s.full+boolInt(s.rest > 0) == 0 {
			s.full, s.rest = 0, 0
			continue
		}
		s.bucket = g.Bucket()
		if g.Fusion == partition.FuseTensors {
			s.tensors = true
			s.full, s.rest = 0, 0
			for _, b := range st.Blocks {
				if b.Sync == i {
					s.perParam += b.Params * float64(b.Repeat)
				}
			}
			if s.perParam > 0 {
				s.perParam = float64(g.Bytes) / s.perParam
			}
			continue
		}
		var err error
		if s.fullCost, s.restCost, err = e.bucketCosts(g, s.bucket, s.rest); err != nil {
			return 0, 0, nil, err
		}
		s.total = units.Seconds(s.full)*s.fullCost.Total + s.restCost.Total
		commTotal += s.total
		if g.Overlap {
			var params float64
			for _, b := range st.Blocks {
				if b.Sync == i {
					params += b.Params * float64(b.Repeat)
				}
			}
			if params > 0 {
				s.perParam = float64(g.Bytes) / params // gradient bytes per parameter are uniform
			}
		}
	}
	var now, commEnd units.Seconds
	issue := func(s *sync, ready units.Seconds) {
		cost := s.fullCost.Total
		if s.next >= s.full {
			cost = s.restCost.Total
		}
		commEnd = units.Max(commEnd, ready) + cost + s.g.FusionLatency
		s.next++
	}
	// Horovod fusion: whenever the stream is free, the queued tensors go out in order, packed
	// into buffers of at most the bucket size (a larger tensor alone). fuse sends what is queued
	// while the stream is free before time t (at t too when at is set; everything when t < 0,
	// after the backward pass).
	colls0 := len(colls)
	var fuseErr error
	e.queue = e.queue[:0]
	head := 0 // the queue's first waiting tensor
	fuse := func(t units.Seconds, at bool) {
		for head < len(e.queue) && fuseErr == nil && (t < 0 || commEnd < t || (at && commEnd == t)) {
			q := e.queue[head]
			s := &syncs[q.sync]
			size, ready, k := q.bytes, q.ready, 1
			for ; head+k < len(e.queue) && e.queue[head+k].sync == q.sync && size+e.queue[head+k].bytes <= s.bucket; k++ {
				size, ready = size+e.queue[head+k].bytes, e.queue[head+k].ready
			}
			head += k
			g := s.g
			cost, err := e.price(network.Collective{Op: g.Op, Bytes: size, Group: g.Group, DType: g.DType})
			if err != nil {
				fuseErr = err
				return
			}
			start := units.Max(commEnd, ready)
			if !g.Overlap {
				start = units.Max(start, now)
			}
			d := cost.Total + g.FusionLatency
			commEnd = start + d
			s.total += d
			commTotal += d
			colls = appendColl(colls, CollectiveTime{Name: gradName(g), Kind: g.Op, Dim: g.Dim, Phase: partition.Backward,
				Bytes: size, Group: g.Group.Size, Stride: g.Group.Stride, Count: 1, Cost: cost, Time: d})
		}
	}
	// On a network whose collectives share links, the window in which buckets share them with
	// the backward pass: from the first bucket's issue (start ≥ 0) on, the block repetitions
	// still to run (window[bi] of block bi). Other networks count nothing.
	ov, overlapping := e.in.Network.(network.Overlapping)
	start := units.Seconds(-1)
	window := e.window[:0]
	if overlapping {
		for range st.Blocks {
			window = append(window, 0)
		}
	}
	e.window = window
	for bi := len(st.Blocks) - 1; bi >= 0; bi-- {
		b := &st.Blocks[bi]
		var s *sync
		if b.Sync >= 0 && b.Sync < len(syncs) && syncs[b.Sync].perParam > 0 {
			s = &syncs[b.Sync]
		}
		var tq *sync // the block's tensors go through the fusion queue
		if b.Sync >= 0 && b.Sync < len(syncs) && syncs[b.Sync].tensors && syncs[b.Sync].perParam > 0 && b.Params > 0 {
			tq = &syncs[b.Sync]
		}
		for r := 0; r < b.Repeat; r++ {
			if start >= 0 && overlapping {
				window[bi]++
			}
			now += repBwd[bi]
			if tq != nil {
				if tq.g.Overlap {
					fuse(now, false) // what the stream took before this tensor was ready
				}
				e.queue = append(e.queue, queued{sync: b.Sync, bytes: units.Bytes(b.Params * tq.perParam), ready: now})
				if tq.g.Overlap {
					fuse(now, true)
				}
				continue
			}
			if s == nil {
				continue
			}
			s.filled += b.Params * s.perParam
			for s.next < s.full && s.filled >= float64(s.next+1)*float64(s.bucket)*(1-1e-12) {
				if start < 0 {
					start = now
				}
				issue(s, now)
			}
		}
	}
	for i := range syncs { // remainders, rounding leftovers and non-overlapped reductions
		s := &syncs[i]
		for s.next < s.full+boolInt(s.rest > 0) {
			issue(s, now)
		}
	}
	fuse(-1, true)
	if fuseErr != nil {
		return 0, 0, nil, fuseErr
	}
	exposed = units.Max(0, commEnd-now)
	if overlapping && start >= 0 {
		end, total, err := e.contention(ov, st, syncs, start, commEnd)
		if err != nil {
			return 0, 0, nil, err
		}
		if end > commEnd {
			alone := exposed
			commEnd, commTotal = end, total
			exposed = units.Max(0, commEnd-now)
			shared = exposed - alone
		}
	}
	share := func(part units.Seconds) units.Seconds {
		if commTotal == 0 {
			return 0
		}
		return exposed * part / commTotal
	}
	for i := colls0; i < len(colls); i++ { // the fused buffers' share of the exposed time
		colls[i].Exposed = share(colls[i].Time)
	}
	for _, s := range syncs {
		g := s.g
		name := gradName(g)
		if s.full > 0 {
			d := units.Seconds(s.full) * s.fullCost.Total
			colls = append(colls, CollectiveTime{Name: name, Kind: g.Op, Dim: g.Dim, Phase: partition.Backward,
				Bytes: s.bucket, Group: g.Group.Size, Stride: g.Group.Stride, Count: s.full, Cost: s.fullCost,
				Time: d, Exposed: share(d)})
		}
		if s.rest > 0 {
			colls = append(colls, CollectiveTime{Name: name, Kind: g.Op, Dim: g.Dim, Phase: partition.Backward,
				Bytes: s.rest, Group: g.Group.Size, Stride: g.Group.Stride, Count: 1, Cost: s.restCost,
				Time: s.restCost.Total, Exposed: share(s.restCost.Total)})
		}
	}
	return exposed, shared, colls, nil
}

// contention prices the window of a stage's overlapped gradient reductions on a network whose
// collectives share links (network.Overlapping): from the first bucket's issue at start, every
// bucket, the backward and recomputation collectives of the block repetitions still to run
// (window) and the pipeline's backward sends (one per chunk) move their bytes over the same
// links. The buckets cannot end before their busiest shared link has drained the window's bytes:
//
//	end = start + max_i n_i·H2T_i' + Σ_i n_i·(Total_i − H2T_i)      (i: the buckets of each size)
//
// with n_i·H2T_i' from PriceConcurrent. Where that ends after the uncontended commEnd, the
// contended bucket costs replace the syncs' own (for the report); total is their summed time.
// The backward pass keeps its time: the delay is charged to the gradients, which end the window
// (on disjoint links end ≤ the uncontended end).
func (e *estimate) contention(ov network.Overlapping, st *partition.Stage, syncs []gradientSync, start, commEnd units.Seconds) (end, total units.Seconds, err error) {
	cs := e.windowColl[:0]
	for _, s := range syncs {
		if s.full > 0 {
			cs = append(cs, network.Concurrent{Collective: network.Collective{Op: s.g.Op, Bytes: s.bucket, Group: s.g.Group, DType: s.g.DType}, Calls: s.full})
		}
		if s.rest > 0 {
			cs = append(cs, network.Concurrent{Collective: network.Collective{Op: s.g.Op, Bytes: s.rest, Group: s.g.Group, DType: s.g.DType}, Calls: 1})
		}
	}
	buckets := len(cs)
	for bi := range st.Blocks {
		if e.window[bi] == 0 {
			continue
		}
		for _, c := range st.Blocks[bi].Collectives {
			if c.Phase != partition.Forward && c.Group.Size > 1 {
				cs = append(cs, network.Concurrent{Collective: c.Collective, Calls: c.Count * e.window[bi]})
			}
		}
	}
	if p := e.in.Plan.P2P; p != nil && p.Group.Size > 1 {
		cs = append(cs, network.Concurrent{Collective: p.Collective, Calls: max(1, e.in.Plan.Layout.Interleave)})
	}
	e.windowColl = cs
	if len(cs) == buckets {
		return 0, 0, nil // the buckets alone run one after another: nothing else shares their links
	}
	costs, err := ov.PriceConcurrent(cs)
	if err != nil {
		return 0, 0, fmt.Errorf("pricing the gradient reductions with the backward pass's traffic on %s: %w", e.in.Network.Name(), err)
	}
	var drain, rest units.Seconds
	for i, c := range cs[:buckets] {
		n := units.Seconds(c.Calls)
		drain = units.Max(drain, n*costs[i].H2T)
		rest += n * (costs[i].Total - costs[i].H2T)
		total += n * costs[i].Total
	}
	end = start + drain + rest
	if end > commEnd {
		k := 0
		for i := range syncs {
			s := &syncs[i]
			if s.full > 0 {
				s.fullCost, k = costs[k], k+1
			}
			if s.rest > 0 {
				s.restCost, k = costs[k], k+1
			}
		}
	}
	return end, total, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// offloadWait is how long one micro-batch's compute waits for the stage's offloaded activations
// (partition.Stage.Offload = k of its L layers), on Transformer Engine's schedule
// (transformer_engine/pytorch/cpu_offload.py @00382b96, OffloadSynchronizer with
// num_offloaded_layers): layers 0 … k−1 are offloaded; layer i's copy to the host is issued when
// its forward pass ends and must end before layer L−k+i's forward pass begins; its copy back is
// issued when layer L−1−k+i's backward pass begins and must end before layer i's. The copies
// run one after another on one stream, each at the profile's host-link rate (doc.go). The
// layers' times are e.repFwd and e.repBwd per block (forward, and recomputation + backward,
// each with its exposed collectives).
func (e *estimate) offloadWait(st *partition.Stage) (units.Seconds, error) {
	hc, ok := e.in.Profile.(profile.HostCopier)
	if !ok {
		return 0, fmt.Errorf("estimator: activation offloading needs a profile with the GPU's host link; %s has none", e.in.Profile.Name())
	}
	// The layers in execution order: l = 0 … L−1 over the Layer blocks' repetitions.
	k, L := st.Offload, 0
	fwd, bwd := e.layerFwd[:0], e.layerBwd[:0]
	cp := e.copyTime[:0] // of layers 0 … k−1
	for bi := range st.Blocks {
		b := &st.Blocks[bi]
		if !b.Layer() {
			continue
		}
		c, ok := hc.HostCopyTime(b.Saved())
		if !ok {
			return 0, errs.Usage("activation offloading: %s has no measured host link (configs/gpus.json host_link_bytes_per_s)", e.in.Profile.Name())
		}
		for range b.Repeat {
			fwd, bwd = append(fwd, e.repFwd[bi]), append(bwd, e.repBwd[bi])
			if L < k {
				cp = append(cp, c)
			}
			L++
		}
	}
	e.layerFwd, e.layerBwd, e.copyTime = fwd, bwd, cp
	if k >= L {
		return 0, fmt.Errorf("estimator: %d offloaded layers of a stage with %d", k, L)
	}
	done := e.copyDone[:0]
	for range k {
		done = append(done, 0)
	}
	e.copyDone = done
	var clock, stream, busy, wait units.Seconds
	for l := range L { // forward: copies out
		if i := l - (L - k); i >= 0 {
			clock = max(clock, done[i])
		}
		clock += fwd[l]
		busy += fwd[l]
		if l < k {
			stream = max(clock, stream) + cp[l]
			done[l] = stream
		}
	}
	wait, clock, stream, busy = clock-busy, 0, 0, 0
	for l := L - 1; l >= 0; l-- { // backward: copies back
		if i := l - (L - 1 - k); i >= 0 && i < k {
			stream = max(clock, stream) + cp[i]
			done[i] = stream
		}
		if l < k {
			clock = max(clock, done[l])
		}
		clock += bwd[l]
		busy += bwd[l]
	}
	return wait + clock - busy, nil
}
