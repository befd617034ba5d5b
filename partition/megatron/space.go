package megatron

import (
	"slices"
	"sort"

	"github.com/ddlest/ddlest/partition"
)

// Space is the set of parallel layouts a search enumerates for one model, one global batch and
// one GPU count (Calculon's execution space, restricted to what Megatron-LM runs): TP × PP × DP =
// GPUs, the micro-batch, interleaved model chunks, activation recomputation, sequence
// parallelism and, for MoE models, expert parallelism. A nil list means every valid value.
type Space struct {
	GPUs        int
	TP, PP      []int
	MicroBatch  []int
	Interleave  []int
	EP          []int
	Recompute   []Recompute
	SeqParallel []bool
	// ZeRO lists the ZeRO stages to try (nil: every stage the layout allows: 2 and 3 only with
	// PP 1, dense layers and reduce-scattered gradients; with the distributed optimizer on, 0 is
	// stage 1).
	ZeRO []int
	// FixedEnds keeps the first and the last stage at an even share of the layers (software
	// without Megatron-Core's per-stage layer counts). Otherwise a PP that does not divide the
	// layers is also tried with fewer layers on the end stages (shorterEnds).
	FixedEnds bool
	// CP lists the context-parallel degrees to try and Precision the training precisions (nil:
	// the base's, as given): choices a search makes only when asked, context parallelism trading
	// attention traffic for activation memory, FP8 numerics for speed. Combinations the model
	// does not run (Config.Validate: CP with a sequence it does not split, FP8 or CP with MoE or
	// latent attention) are skipped.
	CP        []int
	Precision []Precision
}

var (
	allRecompute = []Recompute{RecomputeNone, RecomputeSelective, RecomputeFull}
	allSP        = []bool{false, true}
	allZeRO      = []int{0, 1, 2, 3}
	noSP         = []bool{false}
	onlySP       = []bool{true}
)

// Layouts calls yield with every valid configuration of base (its model, global batch,
// precision, optimizer and overlap settings) in the space, in a fixed order: TP, PP, micro-batch,
// interleave, EP, recompute, sequence parallelism, each ascending. It stops when yield returns
// false. The configurations pass Config.Validate; memory is not checked (PeakMemory).
//
// Rules: TP divides the heads (MoE layers: with sequence parallelism); PP·interleave divides the
// layers; DP = GPUs/(TP·PP) divides the global batch and the micro-batch divides the local
// batch; interleaving needs PP > 1 and a number of micro-batches divisible by PP (Megatron-LM
// megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving:
// "number of microbatches … is not divisible by pipeline-model-parallel-size when using
// interleaved schedule"); sequence parallelism needs TP > 1, TP dividing the sequence and the
// Megatron tensor-parallel collectives; EP divides DP and the experts.
func Layouts(base Config, s Space, yield func(Config) bool) {
	cps, precs := s.CP, s.Precision
	if cps == nil {
		cps = []int{base.CP}
	}
	if precs == nil {
		precs = []Precision{base.Precision}
	}
	// The enumeration follows the layout rules above; the model's own (widths TP must divide,
	// what MoE layers, latent attention, context parallelism and FP8 support) have one home,
	// Config.Validate, which every layout passes before it is yielded.
	next := yield
	yield = func(c Config) bool { return c.Validate() != nil || next(c) }
	for _, cp := range cps {
		for _, pr := range precs {
			b := base
			b.CP, b.Precision = cp, pr
			if !layoutsOf(b, s, yield) {
				return
			}
		}
	}
}

// layoutsOf is Layouts at base's context parallelism and precision; false stops the enumeration.
func layoutsOf(base Config, s Space, yield func(Config) bool) bool {
	// The search lays out the GPUs of each context-parallel rank.
	n := s.GPUs / base.CPs()
	if n < 1 || s.GPUs%base.CPs() != 0 || base.Layers < 1 || base.Heads < 1 || base.GlobalBatch < 1 {
		return true
	}
	for tp := 1; tp <= n; tp++ {
		if n%tp != 0 || base.Heads%tp != 0 || (base.KVHeads > 0 && base.KVHeads%tp != 0) || !allowed(s.TP, tp) {
			continue
		}
		for pp := 1; pp <= n/tp; pp++ {
			if (n/tp)%pp != 0 || !allowed(s.PP, pp) {
				continue
			}
			dp := n / (tp * pp)
			if base.GlobalBatch%dp != 0 {
				continue
			}
			ends := [][2]int{{base.PPFirstLayers, base.PPLastLayers}}
			if !base.splits(pp, 1) {
				if ends = shorterEnds(base, s, pp); ends == nil {
					continue
				}
			}
			for _, e := range ends {
				base := base
				base.PPFirstLayers, base.PPLastLayers = e[0], e[1]
				local := base.GlobalBatch / dp
				for mb := 1; mb <= local; mb++ {
					if local%mb != 0 || !allowed(s.MicroBatch, mb) {
						continue
					}
					if !layoutsAt(base, s, tp, pp, dp, mb, yield) {
						return false
					}
				}
			}
		}
	}
	return true
}

// shorterEnds lists the first and last stage's layer counts that split c's layers over pp
// stages when pp does not divide them, if the space and c's partition allow it: the middle
// stages take m = ⌈L/pp⌉ each and the two ends the r = L − (pp − 2)·m left, each between 1 and
// m: Llama 3 405B's 7 + 8 × 14 + 7 on 16 stages (Dubey et al. 2024 §3.3.2), DeepSeek-V3's 61
// layers as 2 + 4 × 14 + 3 or 3 + 4 × 14 + 2 (Megatron-Core takes any end counts whose rest
// divides evenly). An odd r is tried both ways round.
func shorterEnds(c Config, s Space, pp int) [][2]int {
	if s.FixedEnds || pp < 3 || c.PPPartition != PPUniform || c.PPFirstLayers != 0 || c.PPLastLayers != 0 {
		return nil
	}
	m := (c.Layers + pp - 1) / pp
	r := c.Layers - (pp-2)*m
	f, l := r/2, r-r/2
	if f < 1 || l > m {
		return nil
	}
	if f == l {
		return [][2]int{{f, l}}
	}
	return [][2]int{{f, l}, {l, f}}
}

// layoutsAt enumerates interleave, EP, recomputation and sequence parallelism at one
// (TP, PP, DP, micro-batch); false stops the enumeration.
func layoutsAt(base Config, s Space, tp, pp, dp, mb int, yield func(Config) bool) bool {
	c := base
	c.TP, c.PP, c.DP, c.MicroBatch = tp, pp, dp, mb
	mbs := c.MicroBatches()
	eps := []int{c.MoE.EP}
	if c.MoE.Experts > 0 {
		eps = eps[:0]
		for ep := 1; ep <= dp; ep++ {
			if dp%ep == 0 && c.MoE.Experts%ep == 0 && allowed(s.EP, ep) {
				eps = append(eps, ep)
			}
		}
	}
	rcs := s.Recompute
	if rcs == nil {
		rcs = allRecompute
	}
	sps := s.SeqParallel
	if sps == nil {
		sps = allSP
	}
	if tp == 1 || (c.Seq/c.CPs())%tp != 0 || c.TPComm == TPCommRAMP {
		if tp > 1 && c.MoE.Experts > 0 {
			return true // MoE with TP needs sequence parallelism
		}
		sps = noSP
		if len(s.SeqParallel) == 1 && s.SeqParallel[0] {
			return true // only sequence-parallel layouts were asked for
		}
	} else if c.MoE.Experts > 0 { // MoE with TP runs sequence parallel (Config.Validate)
		if !allowed(s.SeqParallel, true) {
			return true
		}
		sps = onlySP
	}
	zs := s.ZeRO
	if zs == nil {
		zs = allZeRO
	}
	for v := 1; v <= c.Layers/pp; v++ {
		if !c.splits(pp, v) || !allowed(s.Interleave, v) || (v > 1 && (pp == 1 || mbs%pp != 0)) {
			continue
		}
		c.Interleave = v
		for _, ep := range eps {
			c.MoE.EP = ep
			for _, rc := range rcs {
				c.Recompute = rc
				for _, sp := range sps {
					c.SeqParallel = sp
					for _, z := range zs {
						// With the distributed optimizer on, 0 is stage 1; 2 and 3 need PP 1,
						// dense layers and reduce-scattered gradients.
						if (z == 0 && c.DistOptimizer) || (z >= 2 && (pp > 1 || c.MoE.Experts > 0 || c.GradAllReduce)) {
							continue
						}
						c.ZeRO = z
						if !yield(c) {
							return false
						}
					}
				}
			}
		}
	}
	return true
}

// allowed reports whether v is in list (nil: every value).
func allowed[T comparable](list []T, v T) bool { return list == nil || slices.Contains(list, v) }

// PeakMemory is the footprint of the configuration's fullest stage, from the closed-form
// accounting Build uses (no op graph): the first stage holds the most micro-batches in flight
// and the embedding, the last the LM head; the stages between hold no more than the first.
func PeakMemory(c Config) partition.Memory {
	g := geometry(c)
	g.moeAct = &moeActivations{}
	m := stageMemory(&g, &c, 0)
	peak := func(i int) {
		if s := stageMemory(&g, &c, i); s.Total > m.Total {
			m = s
		}
	}
	if c.PP > 1 {
		peak(c.PP - 1) // the LM head
	}
	if c.PP > 2 && (c.PPPartition == PPEmbeddingSlot || c.unevenEnds()) {
		// The second stage may hold more layers than the first (which gave its slot to the
		// embedding, or has its own count) and one micro-batch fewer in flight: either can be
		// the peak. Under the uniform partition the first always is (same layers, more in
		// flight, the embedding).
		peak(1)
	}
	if c.MoE.Experts > 0 && c.MoE.DenseLayers > 0 {
		// The dense first layers make the first stages differ from the rest: each up to the
		// first all-MoE middle stage may be the peak.
		for i := 1; i < c.PP-1; i++ {
			peak(i)
			if c.denseLayers(i) == 0 {
				break
			}
		}
	}
	return m
}

// CheckMemory is Plan.CheckMemory of the plan Build would make, from the closed-form footprints
// (no op graph): a search or sweep rejects what does not fit before building it. The stages
// between the first and the last share their weights and per-micro-batch activations and differ
// only in the micro-batches in flight.
func CheckMemory(c Config) error {
	g := geometry(c)
	return checkMemory(&g, &c, new(stageFeet))
}

// checkMemory is CheckMemory of c and its geometry g.
func checkMemory(g *geom, c *Config, feet *stageFeet) error {
	if c.MoE.Experts > 0 && g.moeAct == nil {
		g.moeAct = &moeActivations{} // every stage's MoE layers save the same: count them once
	}
	p := c.PP
	feet.first = stageFootprint(g, c, 0)
	first := feet.first.at(c, 0)
	bad, worst, wm := 0, -1, partition.Memory{}
	note := func(i int, m partition.Memory) {
		if m.Total > m.Capacity {
			bad++
			if worst < 0 || m.Total > wm.Total {
				worst, wm = i, m
			}
		}
	}
	note(0, first)
	if p > 2 && c.denseLayers(1) > 0 { // a MoE model's dense first layers reach past stage 0
		for i := 1; i < p-1; i++ {
			note(i, stageMemory(g, c, i))
		}
	} else if p > 2 {
		// The middle stages hold the same weights and fewer micro-batches in flight the later
		// they are: their footprints fall with the index, so stage 1 is their worst and those
		// that do not fit are the first k, found by bisection.
		mid := stageFootprint(g, c, 1)
		feet.mid, feet.hasMid = mid, true
		if m := mid.at(c, 1); m.Total > m.Capacity {
			k := 1 + sort.Search(p-2, func(j int) bool { m := mid.at(c, 1+j); return m.Total <= m.Capacity })
			note(1, m)
			bad += k - 2 // stages 2 … k−1 do not fit either, and none is worse than stage 1
		}
	}
	if p > 1 {
		feet.last = stageFootprint(g, c, p-1)
		note(p-1, feet.last.at(c, p-1))
	}
	feet.ok = true
	if bad == 0 {
		return nil
	}
	return partition.MemoryError(Workload, p, bad, worst, wm)
}
