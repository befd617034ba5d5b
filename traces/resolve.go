package traces

import "strings"

// resolver assigns phases, layers and collective sizes to one rank's events, which arrive sorted
// by start time (longer first on ties, so that an enclosing range comes before what it encloses).
// It keeps, per CPU thread and per GPU stream, the stack of open ranges that carry information,
// and, per correlation id, what a launch's CPU context said until its kernel arrives — both
// bounded by nesting depth and by the GPU's launch queue, not by the trace's length.
type resolver struct {
	worldSize int32
	// bwdSeen: the current profiler step has begun its backward pass (a range marked bwd
	// started since the step did). Until then, the step's thread's unmarked work is its
	// forward pass.
	bwdSeen  bool
	cpu      map[int64][]frame // by thread id
	gpu      map[[2]int64][]frame
	launches map[int64]launch // by correlation id
	seen     int
	// What event names say (nameFacts), worked out once per name: by name id, an index into
	// facts.
	factIndex map[uint32]int32
	facts     []nameFacts
}

// nameFacts is what a name says, whatever the event: the phase and layer it marks when it
// opens a range, whether it is a profiler step, an autograd or optimizer CPU op that opens one,
// an nccl:* annotation, and the collective it launches.
type nameFacts struct {
	phase                         string
	layer                         int32
	step, cpuMarks, nccl, recordP bool
	coll                          string
}

func factsOf(name string) nameFacts {
	return nameFacts{phase: PhaseOf(name), layer: LayerOf(name), step: IsStep(name),
		cpuMarks: marksPhase(&Event{Category: "cpu_op", Name: name}), nccl: strings.HasPrefix(name, "nccl:"),
		recordP: name == "record_param_comms", coll: commOf(&Event{Name: name})}
}

// factsFor is the facts of e's name.
func (r *resolver) factsFor(e *rawEvent) *nameFacts {
	i, ok := r.factIndex[e.nameID]
	if !ok {
		i = int32(len(r.facts))
		r.factIndex[e.nameID] = i
		r.facts = append(r.facts, factsOf(e.Name))
	}
	return &r.facts[i]
}

type frame struct {
	end    int64
	step   bool   // a ProfilerStep#N range
	phase  string // "" when the range marks none
	layer  int32  // -1 when none
	coll   string // collective of a c10d op ("" otherwise)
	nelems int64  // its first input's elements, for the size
	itype  string
	// weak: the size comes from an nccl:* annotation, used only when no enclosing c10d op has
	// one (the annotation gives the buffer one rank sends, where a c10d op's first input is
	// the all-gather's whole output, the nccl-tests size).
	weak bool
}

type launch struct {
	start  int64
	phase  string
	layer  int32
	coll   string
	nelems int64
	itype  string
}

func newResolver(worldSize int32) *resolver {
	return &resolver{worldSize: worldSize, cpu: map[int64][]frame{}, gpu: map[[2]int64][]frame{}, launches: map[int64]launch{},
		factIndex: map[uint32]int32{}}
}

// context is what the open ranges of a stack say: the innermost phase, layer and collective.
func context(st []frame) (phase string, layer int32, f frame) {
	layer = -1
	for i := len(st) - 1; i >= 0; i-- {
		if phase == "" && st[i].phase != "" {
			phase = st[i].phase
		}
		if layer < 0 && st[i].layer >= 0 {
			layer = st[i].layer
		}
		if f.coll == "" && st[i].coll != "" {
			f.coll = st[i].coll
		}
		if st[i].nelems > 0 && (f.nelems == 0 || (f.weak && !st[i].weak)) {
			f.nelems, f.itype, f.weak = st[i].nelems, st[i].itype, st[i].weak
		}
	}
	return phase, layer, f
}

func pop(st []frame, t int64) []frame {
	for len(st) > 0 && st[len(st)-1].end <= t {
		st = st[:len(st)-1]
	}
	// Ranges end in nesting order, except for sloppy traces; drop any that ended below the top.
	k := 0
	for _, f := range st {
		if f.end > t {
			st[k] = f
			k++
		}
	}
	return st[:k]
}

// own is what an event itself says (its name's facts n): the phase it marks, its layer, its
// collective.
func own(e *rawEvent, n *nameFacts) frame {
	f := frame{end: e.StartNs + e.DurNs, layer: -1}
	// marksPhase: annotations, and CPU ops that are autograd nodes or optimizer steps.
	if (e.Category == "annotation" || e.Category == "cpu_op" && n.cpuMarks) && !n.step {
		f.phase = n.phase
		f.layer = n.layer
	}
	// c10d ops, and the nccl:* annotations PyTorch's ProcessGroupNCCL records inside them with
	// the buffer's own shape and dtype (record_param_comms; a c10d op over a TensorList has
	// empty dims): the innermost that carries a size wins (context).
	if e.Category == "cpu_op" || (e.Category == "annotation" && n.nccl) {
		f.coll = n.coll
		if f.coll != "" || n.recordP {
			// The op's first input is the buffer: Shapes keeps "Input Dims", DType the first
			// "Input type".
			f.nelems, f.itype, f.weak = firstDimsProduct(e.Shapes), e.DType, e.Category == "annotation"
		}
	}
	return f
}

func (f frame) informative() bool {
	return f.phase != "" || f.layer >= 0 || f.coll != "" || f.nelems > 0 || f.step
}

// inStep reports whether a profiler step's range is open on the stack.
func inStep(st []frame) bool {
	for _, f := range st {
		if f.step {
			return true
		}
	}
	return false
}

// resolve fills e's Phase, Layer and, for collectives, Bytes, Collective and GroupSize.
func (r *resolver) resolve(e *rawEvent) {
	r.seen++
	if r.seen%65536 == 0 {
		r.prune(e.StartNs)
	}
	n := r.factsFor(e)
	o := own(e, n)
	if e.Device < 0 && n.step {
		o.step, r.bwdSeen = true, false
	}
	if o.phase == "bwd" {
		r.bwdSeen = true
	}
	var phase string
	var layer int32
	var ctx frame
	if e.Device < 0 { // host side: CPU ops, runtime calls, CPU annotations
		st := pop(r.cpu[e.Stream], e.StartNs)
		phase, layer, ctx = context(st)
		if phase == "" && !r.bwdSeen && inStep(st) {
			phase = "fwd" // the step's thread before its backward pass
		}
		if o.informative() && e.DurNs > 0 {
			st = append(st, o)
		}
		r.cpu[e.Stream] = st
		if e.Category == "runtime" && e.Correlation != 0 {
			p, l := phase, layer
			r.launches[e.Correlation] = launch{start: e.StartNs, phase: p, layer: l, coll: ctx.coll, nelems: ctx.nelems, itype: ctx.itype}
		}
	} else { // device side: kernels, copies, GPU annotations
		key := [2]int64{int64(e.Device), e.Stream}
		st := pop(r.gpu[key], e.StartNs)
		phase, layer, _ = context(st)
		if e.Category == "annotation" && o.informative() && e.DurNs > 0 {
			st = append(st, o)
		}
		r.gpu[key] = st
		if l, ok := r.launches[e.Correlation]; ok && e.Correlation != 0 {
			delete(r.launches, e.Correlation)
			if l.phase != "" {
				phase = l.phase
			}
			if l.layer >= 0 {
				layer = l.layer
			}
			ctx = frame{coll: l.coll, nelems: l.nelems, itype: l.itype}
		}
	}
	if o.phase != "" {
		phase = o.phase
	}
	if o.layer >= 0 {
		layer = o.layer
	}
	if phase == "" {
		phase = "unknown"
	}
	e.Phase, e.Layer = phase, layer
	if e.Category == "collective" {
		// Without NCCL's own args (older traces) the launching c10d op names the collective:
		// NCCL runs all-to-all as SendRecv kernels.
		if fromArgs := e.Bytes != 0 || e.GroupSize != 0; !fromArgs && ctx.coll != "" {
			e.Collective = ctx.coll
		}
		if e.Bytes == 0 && ctx.nelems > 0 {
			if size, ok := DTypeSize(ctx.itype); ok {
				e.Bytes = ctx.nelems * size
			}
		}
		if e.GroupSize == 0 {
			e.GroupSize = r.worldSize
		}
	}
}

// prune forgets launches whose kernel never came (a minute of trace time is far longer than any
// launch queue).
func (r *resolver) prune(now int64) {
	const horizon = 60e9
	for k, l := range r.launches {
		if l.start < now-horizon {
			delete(r.launches, k)
		}
	}
}
