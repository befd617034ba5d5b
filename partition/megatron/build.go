package megatron

import (
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
	"github.com/ddlest/ddlest/partition"
	"github.com/ddlest/ddlest/partition/moe"
)

// Workload is the plan's workload name.
const Workload = "megatron"

// vocabMultiple: Megatron-LM pads the vocabulary to a multiple of 128·TP
// (--make-vocab-size-divisible-by 128, megatron/training/tokenizer _vocab_size_with_padding).
const vocabMultiple = 128

// PaddedVocab is the vocabulary Megatron-LM actually builds for TP degree t.
func PaddedVocab(vocab, t int) int {
	if vocab == 0 {
		return 0
	}
	return roundUp(vocab, vocabMultiple*t)
}

// bucketParams is Megatron-Core's default gradient bucket, max(4e7, 1e6·DP) parameters
// (megatron/core/distributed/distributed_data_parallel_config.py, bucket_size).
func bucketParams(dp int) float64 { return max(4e7, 1e6*float64(dp)) }

// Params returns the model's total and non-embedding parameter counts (with the padded
// vocabulary). Non-embedding parameters are what Kaplan's N counts.
func Params(c Config) (total, nonEmbedding float64) {
	sh := c.Arch.resolve(c.Hidden, c.Heads)
	layer, attn, _ := sh.counts(1)
	nonEmbedding = float64(c.Layers) * layer
	if m := c.moeSpec(); m.Experts > 0 {
		moeLayer := attn + m.RouterParams(c.Hidden) + m.SharedParams(c.Hidden) + float64(m.Experts)*m.ExpertParams(c.Hidden)
		nonEmbedding = float64(m.DenseLayers)*layer + float64(c.Layers-m.DenseLayers)*moeLayer
	}
	total = nonEmbedding
	if v := PaddedVocab(c.Vocab, c.TP); v > 0 {
		g := geom{h: c.Hidden, s: c.Seq, cp: 1, t: 1, vocab: v, sh: sh}
		total += embeddingParams(g) + headParams(g, c.UntiedEmbeddings)
	}
	return total, nonEmbedding
}

// ActiveParams is the parameters one token passes through, of a model of total parameters
// (Params): all of them for a dense model; with MoE layers, the top-k experts of each instead of
// all E (Mixtral of Experts, Jiang et al. 2024 §2.1: "active parameters").
func ActiveParams(c Config, total float64) float64 {
	if m := c.moeSpec(); m.Experts > 0 {
		total -= float64(c.Layers-m.DenseLayers) * float64(m.Experts-m.TopK) * m.ExpertParams(c.Hidden)
	}
	return total
}

// moeSpec is c.MoE with its experts shaped as the layer's MLP (SwiGLU, biases).
func (c Config) moeSpec() moe.Spec {
	m := c.MoE
	m.Gated, m.NoBias = c.MLP == MLPSwiGLU, c.NoBias
	return m
}

// embeddingParams: the GPU's vocabulary shard plus the replicated position table (learned
// positions only).
func embeddingParams(g geom) float64 {
	p := float64(g.vocab/g.t) * float64(g.h)
	if !g.sh.rope {
		p += float64(g.s*g.cp) * float64(g.h) // the whole sequence's table, on every rank
	}
	return p
}

// headParams: the final normalisation plus, when the GPU holds its own copy, the output weights.
func headParams(g geom, ownWeights bool) float64 {
	p := g.sh.normParams()
	if ownWeights {
		p += float64(g.h) * float64(g.vocab/g.t)
	}
	return p
}

// geometry is the per-GPU geometry of a configuration (without a graph to build ops into).
func geometry(c Config) geom {
	tp, dp, _ := c.Strides()
	g := geom{m: c.MicroBatch, s: c.Seq / c.CPs(), cp: c.CPs(), cpStride: c.CPStride(), h: c.Hidden, a: c.Heads, t: c.TP, tpStride: tp, dpStride: dp, vocab: PaddedVocab(c.Vocab, c.TP),
		sp: c.SeqParallel, asyncTP: c.AsyncTP, tpOverlap: c.TPCommOverlap && c.SeqParallel, tpc: c.TPComm, rc: c.Recompute, dt: c.Precision.DType(), gemmDT: c.Precision.GEMMDType(), moe: c.moeSpec(),
		flash: c.Attention == AttnFlash, sh: c.Arch.resolve(c.Hidden, c.Heads)}
	g.layerP, g.attnP, g.linearW = g.sh.counts(g.t)
	if c.ZeRO >= 2 {
		g.zero, g.gradDT, g.dpGroup = c.ZeRO, c.GradDType(), c.weightGroup()
	}
	if c.PP > 1 {
		// Under 1F1B the stages alternate forward and backward: one phase's groups are every
		// other stage's. Groups are numbered in rank order of their first member; per stage
		// there are DP tensor-parallel groups (tp-first) or one group every PP (pp-first), and
		// TP·DP/EP expert-parallel groups (tp-first) or again one every PP.
		g.phases, g.tpBlock, g.epBlock = 2, 1, 1
		if c.RankOrder == TPFirst {
			g.tpBlock = c.DP * c.CPs()
			if c.MoE.EP > 0 {
				g.epBlock = c.TP * c.DP / c.MoE.EP
			}
		}
	}
	return g
}

// Build partitions an explicit configuration into a per-GPU plan. It does not check memory;
// call Plan.CheckMemory for that, or use BuildChecked.
func Build(c Config) (*partition.Plan, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	g := geometry(c)
	return buildPlan(&c, &g, new(Scratch), nil), nil
}

// BuildChecked validates c, checks its closed-form footprint (CheckMemory's verdict, memErr) and
// builds its plan, from one geometry. A layout that does not fit is built only when force is
// set (an estimate that ignores memory): a sweep's infeasible points cost no build.
func BuildChecked(c Config, force bool) (plan *partition.Plan, memErr, err error) {
	return BuildCheckedInto(nil, c, force)
}

// Scratch is the storage of a plan built again and again (a sweep's point): a plan built into
// a Scratch reuses its slices, so a build allocates nothing once they are large enough, and
// stays valid until the next build into the same Scratch. The zero value is ready to use.
type Scratch struct {
	plan   partition.Plan
	stages []partition.Stage
	blocks []partition.Block
	ops    []partition.Op
	syncs  []partition.GradSync
	colls  []partition.Collective
	p2p    *[2]partition.Collective // the P2P and its gather, once a plan has pipeline stages
}

// BuildCheckedInto is BuildChecked building into s (nil: new storage).
func BuildCheckedInto(s *Scratch, c Config, force bool) (plan *partition.Plan, memErr, err error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	g := geometry(c)
	var feet stageFeet
	if memErr = checkMemory(&g, &c, &feet); memErr != nil && !force {
		return nil, memErr, nil
	}
	if s == nil {
		s = new(Scratch)
	}
	return buildPlan(&c, &g, s, &feet), memErr, nil
}

// slab is s emptied with room for n elements: appending up to n never moves it, so the
// sub-slices taken from it stay put.
func slab[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}

// stageFeet are the footprints checkMemory computed (ok), which the build of the same
// configuration reuses: the first and last stage's and, when hasMid, stage 1's (the middle
// stages' when no MoE dense layer reaches past stage 0).
type stageFeet struct {
	first, mid, last footprint
	hasMid, ok       bool
}

// footprint is stage i's footprint, from feet when checkMemory computed it.
func (feet *stageFeet) footprint(g *geom, c *Config, i int) footprint {
	switch {
	case feet == nil || !feet.ok:
	case i == 0:
		return feet.first
	case i == c.PP-1:
		return feet.last
	case i == 1 && feet.hasMid:
		return feet.mid
	}
	return stageFootprint(g, c, i)
}

// buildPlan is Build of a valid configuration c and its geometry g, into s; feet, when not
// nil, holds the footprints checkMemory computed for c.
func buildPlan(c *Config, g *geom, s *Scratch, feet *stageFeet) *partition.Plan {
	p, t := c.PP, c.TP
	_, _, ppStride := c.Strides()
	mbs := c.MicroBatches()
	if c.MoE.Experts > 0 && g.moeAct == nil {
		g.moeAct = &moeActivations{} // every stage's layers are the same: count their activations once
	}
	tied := !c.UntiedEmbeddings
	cached := blocks(*g, !tied || p > 1)
	embed, head := cached.embed, cached.head
	var dense []partition.Block // a MoE model's dense first layers
	if c.MoE.Experts > 0 && c.MoE.DenseLayers > 0 {
		dense = blocks(denseGeom(g), !tied || p > 1).layers
	}

	s.stages = slab(s.stages, p)[:p]
	plan := &s.plan
	*plan = partition.Plan{
		Workload: Workload,
		Layout: partition.Layout{GPUs: c.GPUs(), DP: c.DP, TP: t, CP: c.CPs(), PP: p, Interleave: c.Interleave,
			SeqParallel: c.SeqParallel, GlobalBatch: c.GlobalBatch, MicroBatch: c.MicroBatch, MicroBatches: mbs},
		Stages: s.stages,
	}
	plan.Params, _ = Params(*c)
	// The stages between the first and the last hold the same blocks: build their work once and
	// give each its own index and memory (activations in flight differ by stage).
	var mid *partition.Stage
	var midFLOP units.FLOP
	var midFoot footprint
	// At most three stages differ (first, middle, last): their blocks, optimizer ops and
	// gradient reductions come from three slabs, one allocation each.
	distinct := min(p, 3)
	// Per stage: the optimizer's ops (one fused, or two) and the gradient accumulation pass, in
	// a block of its own; sized to what the settings build (plans are built on hot paths).
	perStageBlocks, perStageOps := len(cached.layers)+len(dense)+2, 1
	if c.GradAccum != partition.AccumGEMM {
		perStageBlocks, perStageOps = perStageBlocks+1, perStageOps+1
	}
	if c.OptimizerStep != partition.StepFused {
		perStageOps++
	}
	blockSlab := slab(s.blocks, distinct*perStageBlocks)
	optSlab := slab(s.ops, distinct*perStageOps)
	syncs := 2 // per stage: the data-parallel and the expert gradients
	if c.sharded() {
		syncs = 4 // and their parameter all-gathers
	}
	syncSlab := slab(s.syncs, syncs*distinct)
	colls := 0
	if g.vocab > 0 && tied && p > 1 {
		colls = 2 // the tied embedding's all-reduce, on the first and last stage
	}
	collSlab := slab(s.colls, colls)
	for i := range plan.Stages {
		d := c.denseLayers(i)
		if mid != nil && i < p-1 && d == 0 {
			// Same weights and per-micro-batch activations as stage 1; fewer in flight
			// (stageMemory's arithmetic without recounting them).
			st := *mid
			st.Index = i
			st.Memory = midFoot.at(c, i)
			plan.ModelFLOP += midFLOP
			plan.Stages[i] = st
			continue
		}
		start := len(blockSlab)
		if c.GradAccum != partition.AccumGEMM {
			// The accumulation pass runs after the micro-batch's backward pass: the block comes
			// first, as the backward walks the blocks from the last (its ops are set below, once
			// the stage's parameters are known). Interleaved, each model chunk accumulates its
			// own parameters: one repetition per chunk.
			blockSlab = append(blockSlab, partition.Block{Name: partition.GradAccumName, Repeat: c.Interleave, Sync: partition.NoSync})
		}
		if g.vocab > 0 && i == 0 {
			blockSlab = append(blockSlab, embed)
		}
		layers := func(bs []partition.Block, repeat int) {
			if repeat > 0 {
				n := len(blockSlab)
				blockSlab = append(blockSlab, bs...)
				for j := n; j < len(blockSlab); j++ {
					blockSlab[j].Repeat = repeat
				}
			}
		}
		layers(dense, d)
		layers(cached.layers, c.StageLayers(i)-d)
		if g.vocab > 0 && i == p-1 {
			blockSlab = append(blockSlab, head)
		}
		blocks := blockSlab[start:len(blockSlab):len(blockSlab)]
		st := partition.Stage{Index: i, Blocks: blocks, Offload: c.offloaded(i)}
		var flop units.FLOP
		cpdp := mbs * t * c.CPs() * c.DP
		for _, b := range blocks {
			st.Params += b.Params * float64(b.Repeat)
			k := units.FLOP(b.Repeat * cpdp)
			for _, op := range b.Ops {
				if op.Kind.IsMatMul() && (op.Phase == partition.Forward || op.Phase == partition.Backward) {
					flop += op.FLOP * k
				}
			}
		}
		plan.ModelFLOP += flop
		synced := syncedParams(st)
		gathered := synced // parameters the optimizer step's all-gather returns (sharded optimizer)
		if c.ZeRO >= 2 {
			// From ZeRO-2 the layers' gradients are reduce-scattered by each micro-batch's
			// backward pass (the layer's own collectives); from ZeRO-3 their parameters are
			// gathered before every use, not after the step.
			layers := 0.0
			for _, b := range blocks {
				if b.Name == "layer" {
					layers += b.Params * float64(b.Repeat)
				}
			}
			synced[0] -= layers
			if c.ZeRO == 3 {
				gathered[0] -= layers
			}
		}
		if op, ok := partition.GradAccumOp(st.Params/float64(c.Interleave), c.GradAccum, g.dt, c.GradDType()); ok {
			optSlab = append(optSlab, op)
			blocks[0].Ops = optSlab[len(optSlab)-1 : len(optSlab) : len(optSlab)]
		}
		firstOpt := len(optSlab)
		optSlab = partition.OptimizerOps(optSlab, c.OptimizerStep, c.Optimizer, c.Precision, c.GradDType(), st.Params, optimizerParams(synced, c))
		st.PerIteration = optSlab[firstOpt:len(optSlab):len(optSlab)]
		start = len(syncSlab)
		syncSlab = gradSyncs(syncSlab, synced, c)
		st.Grads = syncSlab[start:len(syncSlab):len(syncSlab)]
		if c.sharded() {
			start = len(syncSlab)
			gathers := st.Grads
			if gathered != synced {
				syncSlab = gradSyncs(syncSlab, gathered, c)
				gathers = syncSlab[start:len(syncSlab):len(syncSlab)]
				start = len(syncSlab)
			}
			syncSlab = paramGathers(syncSlab, gathers, c.Precision.DType())
			st.ParamGathers = syncSlab[start:len(syncSlab):len(syncSlab)]
		}
		if g.vocab > 0 && tied && p > 1 && (i == 0 || i == p-1) {
			// The tied input/output embedding lives on the first and last stage; their gradients
			// are summed over the embedding group before the optimizer (Megatron-LM
			// _allreduce_word_embedding_grads).
			collSlab = append(collSlab, partition.Collective{
				Name: "pp.embedding_grads",
				Collective: network.Collective{Op: network.AllReduce,
					Bytes: units.Bytes(float64(g.vocab/t) * float64(g.h) * g.sz()),
					Group: network.Group{Size: 2, Stride: ppStride * (p - 1)}, DType: g.dt},
				Dim: partition.DimPP, Phase: partition.Backward, Count: 1,
			})
			st.PerIterationCollectives = collSlab[len(collSlab)-1 : len(collSlab) : len(collSlab)]
		}
		foot := feet.footprint(g, c, i)
		st.Memory = foot.at(c, i)
		plan.Stages[i] = st
		if i > 0 && i < p-1 && d == 0 {
			mid, midFLOP, midFoot = &plan.Stages[i], flop, foot
		}
	}
	if p > 1 {
		// Activations forward and gradients backward cross each stage boundary once per
		// micro-batch and model chunk (Narayanan et al. 2021 §2.2); with sequence parallelism each
		// TP rank sends its sequence shard. Scatter/gather (SC'21 §4.1) sends 1/TP of the whole
		// activation per rank and all-gathers it over the tensor-parallel group on arrival.
		whole := units.Bytes(float64(g.m*g.sl()) * float64(g.h) * g.sz())
		b := whole
		n := 2 * c.Interleave * mbs
		if s.p2p == nil {
			s.p2p = new([2]partition.Collective)
		}
		if c.PPScatterGather && t > 1 && !c.SeqParallel {
			b = whole / units.Bytes(t)
			s.p2p[1] = partition.Collective{
				Name:       "pp.gather",
				Collective: network.Collective{Op: network.AllGather, Bytes: whole, Group: network.Group{Size: t, Stride: g.tpStride}, DType: g.dt},
				Dim:        partition.DimPP, Phase: partition.Forward, Count: n,
			}
			plan.P2PGather = &s.p2p[1]
		}
		s.p2p[0] = partition.Collective{
			Name:       "pp.p2p",
			Collective: network.Collective{Op: network.SendRecv, Bytes: b, Group: network.Group{Size: 2, Stride: ppStride}, DType: g.dt},
			Dim:        partition.DimPP, Phase: partition.Forward, Count: n,
		}
		plan.P2P = &s.p2p[0]
		plan.P2POverlap = c.P2POverlap && c.Interleave > 1
	}
	s.blocks, s.ops, s.syncs, s.colls = blockSlab, optSlab, syncSlab, collSlab // their room, for the next build
	return plan
}

// syncedParams splits a stage's parameters by the gradient reduction that syncs them: the
// data-parallel group (0) and, for MoE experts, the expert-data-parallel group (1).
func syncedParams(st partition.Stage) (params [2]float64) {
	for _, b := range st.Blocks {
		if b.Sync >= 0 {
			params[b.Sync] += b.Params * float64(b.Repeat)
		}
	}
	return params
}

// optimizerParams is how many parameters one GPU keeps optimizer state for and updates: all of
// its own, or with the distributed optimizer its 1/DP shard of the data-parallel ones and its
// 1/(DP/EP) shard of the experts (Megatron-LM dist_optimizer.md: "distribute all optimizer
// state" over the data-parallel ranks).
func optimizerParams(params [2]float64, c *Config) float64 {
	if !c.sharded() {
		return params[0] + params[1]
	}
	p := params[0] / float64(c.weightGroup().Size) // Megatron-Core shards over the data × context group
	if params[1] > 0 {
		p += params[1] / float64(c.DP/c.MoE.EP)
	}
	return p
}

// paramGathers appends, for each gradient reduce-scatter of the distributed optimizer, the
// all-gather of the updated parameters over the same group and in the same buckets of
// parameters (dist_optimizer.md "Key steps": reduce-scatter, step, all-gather of the fp16/bf16
// params), in the parameters' dtype pt (the gradients may be fp32: Stack.FP32GradReduce).
func paramGathers(dst []partition.GradSync, grads []partition.GradSync, pt dtype.DType) []partition.GradSync {
	for _, g := range grads {
		g.Name = gatherNames[g.Name]
		g.Op = network.AllGather
		if g.DType != pt {
			g.Bytes = g.Bytes / g.DType.Size() * pt.Size()
			g.BucketBytes = g.BucketBytes / g.DType.Size() * pt.Size()
			g.DType = pt
		}
		dst = append(dst, g)
	}
	return dst
}

// gatherNames names each gradient reduction's parameter all-gather.
var gatherNames = map[string]string{"dp.grads": "dp.params", "ep.expert_grads": "ep.expert_params"}

// gradSyncs appends a stage's gradient reductions to dst (all-reduces, or reduce-scatters with the
// distributed optimizer) of its synced parameters (syncedParams): everything over the
// data-parallel group, except MoE experts (Sync 1), which only the DP/EP expert-data-parallel
// ranks at stride TP·EP share.
func gradSyncs(dst []partition.GradSync, params [2]float64, c *Config) []partition.GradSync {
	dt := c.GradDType()
	bucket := c.DPBucketBytes
	if bucket == 0 {
		bucket = units.Bytes(bucketParams(c.weightGroup().Size)) * dt.Size()
	}
	// The distributed optimizer reduce-scatters the gradients (each rank keeps its shard).
	op := network.AllReduce
	if c.sharded() && !c.GradAllReduce {
		op = network.ReduceScatter
	}
	sync := func(name string, dim partition.Dim, p float64, g network.Group) partition.GradSync {
		return partition.GradSync{Name: name, Dim: dim,
			Collective:  network.Collective{Op: op, Bytes: units.Bytes(p) * dt.Size(), Group: g, DType: dt},
			BucketBytes: bucket, Overlap: !c.NoDPOverlap}
	}
	_, dpStride, _ := c.Strides()
	gs := append(dst, sync("dp.grads", partition.DimDP, params[0], c.weightGroup()))
	if c.MoE.Experts > 0 {
		gs = append(gs, sync("ep.expert_grads", partition.DimEP, params[1], network.Group{Size: c.DP / c.MoE.EP, Stride: dpStride * c.MoE.EP}))
	}
	return gs
}

// inFlight is how many micro-batches' activations stage i holds at its peak under 1F1B: p − i
// (capped by the number of micro-batches), times 1 + (p−1)/(p·v) with v interleaved chunks
// (Korthikanti et al. 2022 §4.2.3; Narayanan et al. 2021 §2.2).
func inFlight(p, v, i, mbs int) float64 {
	if p == 1 {
		return 1
	}
	n := float64(min(p-i, mbs))
	if v > 1 {
		n *= 1 + float64(p-1)/float64(p*v)
	}
	return n
}

// denseLayers is how many of stage i's layers keep the dense MLP in a MoE model with dense first
// layers (moe.Spec.DenseLayers): the stages hold the stack in order, or, interleaved, chunk k of
// stage i holds the k·PP + i-th run of StageLayers(i)/v layers (Narayanan et al. 2021 §2.2).
func (c *Config) denseLayers(i int) int {
	k := c.MoE.DenseLayers
	if c.MoE.Experts == 0 || k == 0 {
		return 0
	}
	if c.Interleave <= 1 {
		first := 0
		for j := range i {
			first += c.StageLayers(j)
		}
		return min(max(k-first, 0), c.StageLayers(i))
	}
	lc, n := c.StageLayers(i)/c.Interleave, 0
	for ch := range c.Interleave {
		n += min(max(k-(ch*c.PP+i)*lc, 0), lc)
	}
	return n
}

// denseGeom is a MoE geometry's dense layer (its MLP instead of the experts).
func denseGeom(g *geom) geom {
	d := *g
	d.moe, d.moeAct = moe.Spec{}, nil
	return d
}

// stageParams is the parameter count of one GPU of stage i: those synced over the
// data-parallel group and the MoE experts (synced over the expert-data-parallel group).
func stageParams(g *geom, c *Config, i int) (params [2]float64) {
	layer, experts := g.layerP, 0.0
	n, dense := float64(c.StageLayers(i)), 0.0
	if g.moe.Experts > 0 {
		layer, experts = moeParamsPerGPU(*g)
		dense = float64(c.denseLayers(i))
		n -= dense
	}
	params[0], params[1] = layer*n+g.layerP*dense, experts*n
	if g.vocab > 0 && i == 0 {
		params[0] += embeddingParams(*g)
	}
	if g.vocab > 0 && i == c.PP-1 {
		params[0] += headParams(*g, c.UntiedEmbeddings || c.PP > 1)
	}
	return params
}

// stageActivations is what one micro-batch keeps on stage i, and the largest recomputation
// workspace. Dense layers use the closed form (layerActivations, without building ops: auto mode
// calls this for every candidate); MoE layers sum what their ops record.
func stageActivations(g *geom, c *Config, i int) (perMB, workspace units.Bytes) {
	if g.moe.Experts > 0 {
		if g.moeAct == nil || !g.moeAct.ok {
			lg := *g // a graph of its own, which does not outlive the count (nor escape)
			lg.gr = partition.NewGraph(192, 80)
			var a moeActivations
			for _, b := range layerBlocks(lg, 1) {
				a.perMB += b.Saved()
				a.workspace = max(a.workspace, b.Workspace)
			}
			a.ok = true
			if g.moeAct != nil {
				*g.moeAct = a
			}
			perMB, workspace = a.perMB, a.workspace
		} else {
			perMB, workspace = g.moeAct.perMB, g.moeAct.workspace
		}
	} else {
		perMB, workspace = denseActivations(g)
	}
	// Offloaded layers are the stage's first (dense first layers, then MoE layers); Transformer
	// Engine's schedule keeps the activations of the other n − k alive at most
	// (cpu_offload.py @00382b96 _default_offload_sync_init: "peak memory usage of saving
	// activations is (num_layers - num_offloaded_layers) * T").
	n, k := c.StageLayers(i), c.offloaded(i)
	if d := c.denseLayers(i); d > 0 { // dense first layers of a MoE model
		dg := denseGeom(g)
		dense, ws := denseActivations(&dg)
		if d == n { // no MoE layer on this stage
			workspace = 0
		}
		perMB = perMB*units.Bytes(n-max(d, k)) + dense*units.Bytes(d-min(d, k))
		workspace = max(workspace, ws)
	} else {
		perMB *= units.Bytes(n - k)
	}
	if g.vocab > 0 && i == 0 {
		perMB += embeddingActivations(*g)
	}
	if g.vocab > 0 && i == c.PP-1 {
		ln, logits, loss := headActivations(*g)
		perMB += ln + logits + loss
	}
	return perMB, workspace
}

// denseActivations is what a dense layer keeps per micro-batch (the closed form,
// layerActivations) and its recomputation workspace.
func denseActivations(g *geom) (perMB, workspace units.Bytes) {
	saved, workspace := layerActivations(*g)
	for _, x := range saved {
		perMB += x
	}
	return perMB, workspace
}

// stageMemory is a GPU's footprint: weights and gradients in the training dtype, optimizer state
// (ZeRO §3.1 accounting), the activations kept for each micro-batch in flight, and the
// recomputation workspace.
func stageMemory(g *geom, c *Config, i int) partition.Memory {
	return stageFootprint(g, c, i).at(c, i)
}

// footprint is a stage's memory before activations and what its activations are made of. The
// stages between the first and the last share it; they differ only in micro-batches in flight.
type footprint struct {
	static           partition.Memory
	perMB, workspace units.Bytes
}

func stageFootprint(g *geom, c *Config, i int) footprint {
	params := stageParams(g, c, i)
	f := footprint{static: partition.StaticMemory(params[0]+params[1], c.Optimizer, c.Precision, c.Capacity)}
	if gt := c.GradDType(); gt != c.Precision.DType() {
		f.static = f.static.WithGrads(units.Bytes(params[0]+params[1]) * gt.Size())
	}
	if c.sharded() {
		f.static = f.static.WithOptimizerShard(optimizerParams(params, c), c.Optimizer, c.Precision)
	}
	if c.ZeRO >= 2 { // each rank keeps its gradient shard (ZeRO §5.2, P_os+g)
		f.static = f.static.WithGrads(units.Bytes((params[0]+params[1])/float64(c.weightGroup().Size)) * c.GradDType().Size())
	}
	if c.ZeRO == 3 { // and its parameter shard, plus two layers gathered (P_os+g+p)
		w := units.Bytes(((params[0]+params[1])/float64(c.weightGroup().Size) + 2*g.layerP) * g.sz())
		f.static.Total += w - f.static.Weights
		f.static.Weights = w
	}
	if c.Precision == partition.MixedFP8 {
		// Transformer Engine keeps each linear layer's FP8 weight and its transpose for the
		// iteration's micro-batches (is_first_microbatch; module/base.py _fp8_workspaces) [X]:
		// 2 bytes per weight-matrix parameter beside the bf16 weights.
		// A MoE layer's matrices are its attention's and its GPU's experts' (moe.LinearPerGPU).
		linear := float64(c.StageLayers(i)) * g.linearW
		if g.moe.Experts > 0 {
			moeLinear := g.linearW - g.sh.mlpLinear(g.t) + g.moe.LinearPerGPU(g.h, g.t)
			d := float64(c.denseLayers(i))
			linear = d*g.linearW + (float64(c.StageLayers(i))-d)*moeLinear
		}
		cache := units.Bytes(linear) * 2 * dtype.FP8.Size()
		f.static.Weights += cache
		f.static.Total += cache
	}
	f.perMB, f.workspace = stageActivations(g, c, i)
	return f
}

// at is the footprint of stage i: the activations of each micro-batch it holds in flight, and
// the recomputation workspace.
func (f footprint) at(c *Config, i int) partition.Memory {
	return f.static.WithActivations(f.perMB*units.Bytes(inFlight(c.PP, c.Interleave, i, c.MicroBatches())) + f.workspace)
}
