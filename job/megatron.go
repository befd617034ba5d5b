package job

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/ddlest/ddlest/estimator"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/megatron"
	"github.com/ddlest/ddlest/profile/roofline"
	proftrace "github.com/ddlest/ddlest/profile/trace"
	"github.com/ddlest/ddlest/scaling"
)

// Mode says how a Megatron job is specified.
type Mode int

const (
	// ModeAuto derives the model and its partitioning from a target loss (RAMP §7.2.1).
	ModeAuto Mode = iota
	// ModeExplicit takes the whole configuration from the user.
	ModeExplicit
)

func (m Mode) String() string { return [...]string{"auto", "explicit"}[m] }

// MegatronOptions is a fully parsed request.
type MegatronOptions struct {
	Mode Mode

	// Auto mode.
	Scaling      scaling.Request
	MaxGPUs      int
	ParamsPerGPU float64 // 0: the GPU table's limit

	// Explicit mode: the configuration (Capacity is filled from the GPU) and the training length.
	Config megatron.Config
	Steps  float64 // one of Steps and Tokens is > 0
	Tokens float64

	// Both modes. In auto mode these fields of Config are used as the execution settings:
	// Vocab, SeqParallel, Recompute, Precision, Optimizer, MicroBatch (0: auto),
	// UntiedEmbeddings, DPBucketBytes, Stack.
	GPU        string
	Efficiency roofline.Efficiency
	Network    NetworkChoice
	// Cluster, when set, supplies the network instead of Network and bounds the job's size.
	Cluster *Cluster
	// Published, when set, calibrates the roofline to measured compute (profile.Scaled).
	Published *Published
	// Profile is "" or "roofline", or a trace file (.parquet) with the traced configuration's
	// micro-batch and TP degree in TraceBatch and TraceTP (0: the plan's).
	Profile             string
	TraceBatch, TraceTP int
	// ForceProfile: see RunOptions.
	ForceProfile bool
	// IgnoreMemory estimates a plan that does not fit in GPU memory (the HammingMesh SST motifs
	// simulate one pipeline step without recomputation and ignore memory); the report says so.
	IgnoreMemory bool
	// placements, when set, reuses networks placed for earlier jobs of a sweep worker.
	placements *placements
	// scratch, when set, is where the estimate writes (a sweep's point): the report, the plan
	// and the estimate's slices are its, valid until the next estimate into it.
	scratch *runScratch
	// software, when set, is the job's training software: a search enumerates only what it
	// supports.
	software *Software
	// Search, when set, replaces the layout (TP, PP, DP, micro-batch, interleave, EP,
	// recomputation, sequence parallelism) with the fastest that fits (search.go).
	Search *SearchOptions
}

// Transformer holds what a transformer report adds to the common record.
type Transformer struct {
	Mode   Mode
	Target *scaling.Target      // auto mode
	Auto   *megatron.AutoResult // auto mode
	Config megatron.Config
	Tokens float64
	// NonEmbedding excludes the embedding and LM head (Kaplan's N).
	NonEmbedding float64
	// ActiveParams is what one token passes through (the top-k experts of MoE layers, not all).
	ActiveParams float64
	// TrainingFLOP is Kaplan's C = 6·N·D for the run; ComputeMinFLOP (auto mode) the compute the
	// same loss needs at a batch far below critical, C/(1 + B/B_crit).
	TrainingFLOP, ComputeMinFLOP float64
	// Preset and PresetSource name a transformer preset (gpt3, gpt3-moe), if any.
	Preset, PresetSource string
	// Step is the steady-state 1F1B step (pipelined runs only).
	Step *PipelineStep
	// MemoryWarning is set when the plan does not fit but was estimated anyway (IgnoreMemory).
	MemoryWarning string
	// Search summarises the layout search that chose Config (execution.layout search).
	Search *SearchSummary
	// step is where Step points.
	step PipelineStep
}

// PipelineStep is one steady-state 1F1B step, the "iteration" the HammingMesh paper simulates for
// its pipelined transformers (§V-B5, reference/hammingmesh.md §6.4): every stage runs either a
// forward or a backward pass of one micro-batch with its blocking tensor-, expert- or
// model-parallel collectives, then sends its activation or gradient to the next stage. The
// slowest such half-step sets the pace.
type PipelineStep struct {
	Stage             int
	Forward, Backward units.Seconds // compute + exposed collectives of that half
	P2P               units.Seconds // one send/receive (and its all-gather under scatter/gather)
	Total             units.Seconds // max(Forward, Backward) + P2P
}

// pipelineStep derives the step from an estimate, into best.
func pipelineStep(r *estimator.Result, best *PipelineStep) *PipelineStep {
	if len(r.Stages) < 2 {
		return nil
	}
	*best = PipelineStep{}
	for i, st := range r.Stages {
		f, b := st.Forward+st.CommForward, st.Recompute+st.Backward+st.CommBackward
		if max(f, b) > max(best.Forward, best.Backward) {
			*best = PipelineStep{Stage: i, Forward: f, Backward: b}
		}
	}
	for _, c := range r.Collectives {
		// One send/receive, and the all-gather that follows it under scatter/gather.
		if c.Dim == partition.DimPP && (c.Kind == network.SendRecv || c.Kind == network.AllGather) {
			best.P2P += c.Cost.Total
		}
	}
	best.Total = max(best.Forward, best.Backward) + best.P2P
	return best
}

// Megatron runs the pipeline.
func Megatron(o MegatronOptions) (*Report, error) {
	rep, cfg, err := resolveMegatron(o)
	if err != nil {
		return nil, err
	}
	if o.Search != nil {
		return searchBest(o, rep, cfg)
	}
	var local transformerEnv
	env := &local
	if o.scratch != nil {
		env = &o.scratch.env
	}
	if err := env.init(o, rep.GPU, cfg.Precision, cfg.GPUs()); err != nil {
		return nil, err
	}
	return rep, env.estimate(rep, cfg)
}

// resolveMegatron settles the model and the training length: from the scaling law and RAMP's
// layout rule (auto mode) or as given (explicit mode). The report holds the GPU and the mode's
// facts; the configuration's Capacity is the GPU's memory.
func resolveMegatron(o MegatronOptions) (*Report, megatron.Config, error) {
	cfg := o.Config
	gpu, err := roofline.LookupGPU(o.GPU)
	if err != nil {
		return nil, cfg, err
	}
	// The report and what it points to are allocated at once (an estimate is on the hot path of
	// sweeps and searches), or are a sweep point's scratch, whose estimate slices keep their room.
	var all *transformerReport
	if o.scratch != nil {
		all = &o.scratch.report
		res := &all.rep.Result
		*all = transformerReport{rep: Report{Result: estimator.Result{Stages: res.Stages[:0], Collectives: res.Collectives[:0]}}}
	} else {
		all = new(transformerReport)
	}
	rep := &all.rep
	// Both branches left the report zero but for its Result's slices: set its fields (a
	// composite literal would zero the large record a second time).
	rep.Workload, rep.GPU, rep.Efficiency, rep.Transformer = "megatron", gpu, o.Efficiency.On(gpu), &all.tf
	all.tf.Mode = o.Mode
	cfg.Capacity = gpu.Memory()

	switch o.Mode {
	case ModeAuto:
		limit := o.ParamsPerGPU
		if limit == 0 {
			limit = gpu.MPParamsPerGPU
		}
		tg, auto, err := resolveAuto(o.Scaling, megatron.AutoConfig{
			MaxGPUs: o.MaxGPUs, ParamsPerGPU: limit, Capacity: cfg.Capacity,
			Vocab: cfg.Vocab, SeqParallel: cfg.SeqParallel, TPComm: cfg.TPComm, Recompute: cfg.Recompute, Precision: cfg.Precision, RankOrder: cfg.RankOrder,
			Optimizer: cfg.Optimizer, MicroBatch: cfg.MicroBatch, UntiedEmbeddings: cfg.UntiedEmbeddings,
			DPBucketBytes: cfg.DPBucketBytes, Stack: cfg.Stack,
		})
		if err != nil {
			return nil, cfg, err
		}
		all.tg, all.auto = tg, auto
		rep.Target, rep.Auto = &all.tg, &all.auto
		cfg = auto.Config
		rep.Steps = auto.Steps
	case ModeExplicit:
		if err := cfg.Validate(); err != nil {
			return nil, cfg, err
		}
		switch {
		case o.Steps > 0 && o.Tokens > 0:
			return nil, cfg, errs.Usage("give execution.steps or execution.tokens, not both (given %g and %g)", o.Steps, o.Tokens)
		case o.Steps > 0:
			rep.Steps = o.Steps
		case o.Tokens > 0:
			rep.Steps = math.Ceil(o.Tokens / float64(cfg.GlobalBatch*cfg.Seq))
		default:
			return nil, cfg, errs.Usage("explicit mode needs the training length: execution.steps N or execution.tokens N")
		}
	}
	return rep, cfg, nil
}

// autoKey is what auto mode's resolution depends on: the scaling-law request and the cluster
// limits and execution settings (a megatron.AutoConfig without its Target, which the request
// determines).
type autoKey struct {
	req scaling.Request
	ac  megatron.AutoConfig
}

type autoResolved struct {
	tg   scaling.Target
	auto megatron.AutoResult
}

// autoCache keeps the auto-mode resolutions of recent requests: the scaling law and RAMP's
// layout rule (with its memory-bound micro-batch) are pure functions of autoKey, and every
// estimate of a sweep or a search over networks, clusters or profiles asks for the same one
// again. Failures are not kept (their errors are computed again). Bounded (cleared when full)
// and safe for concurrent estimates; a hit writes nothing shared (sync.Map: the workers of a
// sweep read it at every point, and a lock's counter would bounce between their cores).
var autoCache boundedCache[autoKey, autoResolved]

const autoCacheSize = 1024

// boundedCache is a read-mostly map for concurrent use, cleared when it reaches its size: a hit
// is a lock-free read (sync.Map), a miss stores once.
type boundedCache[K comparable, V any] struct {
	m sync.Map
	n atomic.Int64 // entries stored since the last clear
}

func (c *boundedCache[K, V]) get(k K) (V, bool) {
	v, ok := c.m.Load(k)
	if !ok {
		var zero V
		return zero, false
	}
	return v.(V), true
}

// put stores v, clearing the cache first when it holds size entries (a racing put may leave
// it a few over until the next clear).
func (c *boundedCache[K, V]) put(k K, v V, size int64) {
	if c.n.Add(1) > size {
		c.m.Clear()
		c.n.Store(1)
	}
	c.m.Store(k, v)
}

func (c *boundedCache[K, V]) clear() {
	c.m.Clear()
	c.n.Store(0)
}

// resolveAuto is scaling.Resolve(req) then megatron.Auto(ac with that target), from autoCache
// when these inputs were resolved before.
func resolveAuto(req scaling.Request, ac megatron.AutoConfig) (scaling.Target, megatron.AutoResult, error) {
	k := autoKey{req, ac}
	if r, ok := autoCache.get(k); ok {
		return r.tg, r.auto, nil
	}
	tg, err := scaling.Resolve(req)
	if err != nil {
		return tg, megatron.AutoResult{}, err
	}
	ac.Target = tg
	auto, err := megatron.Auto(ac)
	if err != nil {
		return tg, auto, err
	}
	autoCache.put(k, autoResolved{tg, auto}, autoCacheSize)
	return tg, auto, nil
}

// transformerReport is a transformer report and what it points to, in one piece.
type transformerReport struct {
	rep  Report
	tf   Transformer
	tg   scaling.Target
	auto megatron.AutoResult
}

// transformerEnv is what every layout of one model on one cluster shares: the GPU's roofline,
// the network placed for the job's GPU count and the compute profile's source. A search builds
// it once and prices every layout with it.
type transformerEnv struct {
	o      MegatronOptions
	roof   *roofline.Roofline
	net    network.Model
	netCfg network.Config
	run    RunOptions
	gpus   int
	// plan, when set, is where plans are built (a sweep point's or a search's scratch): each
	// build reuses it, so a plan lives until the next.
	plan *megatron.Scratch
}

func newTransformerEnv(o MegatronOptions, gpu roofline.GPU, prec partition.Precision, gpus int) (*transformerEnv, error) {
	env := new(transformerEnv)
	if err := env.init(o, gpu, prec, gpus); err != nil {
		return nil, err
	}
	return env, nil
}

// init makes env the environment of o's job on gpus GPUs (Megatron's lives on its stack or in
// the sweep point's scratch).
func (env *transformerEnv) init(o MegatronOptions, gpu roofline.GPU, prec partition.Precision, gpus int) error {
	*env = transformerEnv{o: o, gpus: gpus, run: RunOptions{Profile: o.Profile, TraceBatch: o.TraceBatch, TraceTP: o.TraceTP, ForceProfile: o.ForceProfile}}
	if o.scratch != nil {
		env.plan = &o.scratch.plan
	}
	if o.Published != nil {
		env.run.Profile = "published"
	}
	if strings.HasSuffix(o.Profile, ".parquet") {
		var err error
		if env.run.trace, err = proftrace.Load(o.Profile); err != nil {
			return err
		}
	}
	var key placementKey
	keyed := false
	if o.Cluster != nil {
		if err := o.Cluster.CheckJob(gpus); err != nil {
			return err
		}
		var params any
		if o.scratch != nil {
			params = o.scratch.netParams
		}
		key, keyed = newPlacementKey(o.Cluster, params, o.Efficiency, prec, gpus)
	} else {
		key, keyed = choiceKey(o.Network, gpu.Name, o.Efficiency, prec, gpus)
	}
	if keyed {
		if p := placed(o.placements, key); p != nil {
			env.roof, env.net, env.netCfg = p.roof, p.net, p.netCfg
			return nil
		}
	}
	if gd := prec.GEMMDType(); gd != prec.DType() { // FP8 GEMMs need FP8 tensor cores
		if _, err := gpu.TensorPeak(gd); err != nil {
			return errs.Usage("--precision %s: %v", prec, err)
		}
	}
	var err error
	if env.roof, err = roofline.New(gpu, o.Efficiency, prec.DType()); err != nil {
		return err
	}
	if env.net, env.netCfg, err = buildNetwork(o.Cluster, o.Network, network.Env{GPUs: env.gpus, Reducer: env.roof}); err != nil {
		return err
	}
	if keyed {
		place(o.placements, placement{key: key, roof: env.roof, net: env.net, netCfg: env.netCfg})
	}
	return nil
}

// Placed networks: the jobs of a sweep, a search or a repeated estimate that leave the cluster
// alone price on the same network and roofline. A network.Shareable model is kept process-wide
// (bounded, safe for concurrent use, a hit writes nothing shared); another only in the sweep
// worker's own placements, where one goroutine uses it at a time.
var shared boundedCache[placementKey, *placement]

const sharedPlacements = 256

// ForgetPlacements drops the process-wide placed networks (benchmarks that price from new
// models each time).
func ForgetPlacements() { shared.clear() }

// placed returns a placement of k: the process-wide one, else the worker's (own may be nil).
// A worker remembers the last one it was given: consecutive points of a sweep mostly share
// their placement, and then do not hash the key.
func placed(own *placements, k placementKey) *placement {
	if own != nil && own.last != nil && own.last.key == k {
		return own.last
	}
	p, _ := shared.get(k)
	if own != nil {
		if p == nil {
			p = own.get(k)
		}
		if p != nil {
			own.last = p
		}
	}
	return p
}

// place keeps a new placement: process-wide when its model is shareable, else in own.
func place(own *placements, p placement) {
	if _, ok := p.net.(network.Shareable); ok {
		shared.put(p.key, &p, sharedPlacements)
		return
	}
	if own != nil {
		own.put(p)
	}
}

// placements is one sweep worker's networks that are not shareable, and the last placement it
// was given (its own or a process-wide one).
type placements struct {
	entries [8]placement
	n, next int
	last    *placement
}

type placement struct {
	key    placementKey
	roof   *roofline.Roofline
	net    network.Model
	netCfg network.Config
}

// placementKey is what a placed network and its roofline depend on.
type placementKey struct {
	model, gpu  string
	params      any    // the network parameters' struct value (a cluster's network)
	choice      string // a bare network choice: model, preset and key=value parameters
	eff         roofline.Efficiency
	prec        partition.Precision
	gpus, nodes int
	noReduce    bool
}

// choiceKey is the key of a bare network choice (no cluster), unless it reads a file (whose
// content may change between jobs).
func choiceKey(n NetworkChoice, gpu string, eff roofline.Efficiency, prec partition.Precision, gpus int) (placementKey, bool) {
	if n.ConfigFile != "" {
		return placementKey{}, false
	}
	return placementKey{model: n.Name, gpu: gpu, choice: n.Preset + "\x00" + strings.Join(n.Params, "\x00"), eff: eff, prec: prec, gpus: gpus}, true
}

// newPlacementKey is the key of a cluster's network for a job, when its parameters can be
// compared (a flat struct of scalars). params, when not nil, is paramsKey(c) already boxed (a
// sweep whose grid leaves the network's parameters alone boxes them once).
func newPlacementKey(c *Cluster, params any, eff roofline.Efficiency, prec partition.Precision, gpus int) (placementKey, bool) {
	if params == nil {
		var ok bool
		if params, ok = paramsKey(c); !ok {
			return placementKey{}, false
		}
	}
	return placementKey{model: c.Network.Model, gpu: c.GPU, params: params, eff: eff, prec: prec, gpus: gpus,
		nodes: c.Nodes, noReduce: c.NoReduceCompute}, true
}

// paramsKey is the cluster's network parameters as a comparable value (a copy of their struct),
// unless they cannot be compared.
func paramsKey(c *Cluster) (any, bool) {
	if c.Network.Params == nil {
		return nil, false
	}
	v := reflect.ValueOf(c.Network.Params).Elem()
	if !v.Type().Comparable() {
		return nil, false
	}
	return v.Interface(), true
}

func (p *placements) get(k placementKey) *placement {
	for i := range p.n {
		if p.entries[i].key == k {
			return &p.entries[i]
		}
	}
	return nil
}

func (p *placements) put(e placement) {
	p.entries[p.next] = e
	p.next = (p.next + 1) % len(p.entries)
	p.n = min(p.n+1, len(p.entries))
}

// estimate builds and prices one configuration (of the environment's GPU count) into the report.
func (env *transformerEnv) estimate(rep *Report, cfg megatron.Config) error {
	if cfg.GPUs() != env.gpus {
		return fmt.Errorf("job: layout of %d GPUs priced on a network placed for %d", cfg.GPUs(), env.gpus)
	}
	rep.Config = cfg
	rep.Tokens = rep.Steps * float64(cfg.GlobalBatch*cfg.Seq)
	rep.Params, rep.NonEmbedding = megatron.Params(cfg)
	rep.ActiveParams = megatron.ActiveParams(cfg, rep.Params)
	// C = 6·N·D with N the non-embedding parameters a token passes through (MoE: the active ones).
	rep.TrainingFLOP = scaling.TrainingCompute(rep.NonEmbedding-(rep.Params-rep.ActiveParams), rep.Tokens)
	if rep.Target != nil {
		rep.ComputeMinFLOP = scaling.ComputeMin(rep.TrainingFLOP, rep.Target.CriticalBatch, float64(cfg.GlobalBatch))
	}

	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Attention == megatron.AttnFlash {
		if err := env.roof.FlashAttention(); err != nil {
			return err
		}
	}
	if cfg.OffloadLayers > 0 {
		if err := env.roof.HostLinkMeasured(); err != nil {
			return errs.Usage("execution.offload_layers %d: %v", cfg.OffloadLayers, err)
		}
	}
	// Memory is checked before building: most layouts of a sweep do not fit.
	plan, memErr, err := megatron.BuildCheckedInto(env.plan, cfg, env.o.IgnoreMemory)
	if err != nil {
		return err
	}
	if plan == nil {
		return memErr
	}
	if memErr != nil {
		rep.MemoryWarning = memErr.Error()
	}
	rep.Plan = plan

	rebuild := func(b, tp int) (*partition.Plan, error) {
		t := cfg
		if b > 0 {
			t.GlobalBatch = t.GlobalBatch / t.MicroBatch * b
			t.MicroBatch = b
		}
		if tp > 0 {
			t.TP = tp
		}
		return megatron.Build(t)
	}
	prof, desc, err := env.run.computeProfile(env.roof, plan, env.o.Published, "megatron", rebuild)
	if err != nil {
		return err
	}
	rep.Profile = desc
	rep.Network, rep.NetConfig, rep.Cluster = env.net.Name(), env.netCfg, env.o.Cluster
	if err := estimator.EstimateInto(&rep.Result, estimator.Input{Plan: plan, Profile: prof, Network: env.net, Steps: rep.Steps, SampleTokens: cfg.Seq}); err != nil {
		return err
	}
	rep.Step = pipelineStep(&rep.Result, &rep.Transformer.step)
	return nil
}
