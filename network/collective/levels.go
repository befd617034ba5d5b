package collective

import (
	"sync"

	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// Leveled algorithms build their step schedule on a level layout themselves (a network's own
// algorithm whose steps a paper gives, as RAMP-x).
type Leveled interface {
	Algorithm
	Levels(op network.Op, s units.Bytes, lay Layout) Schedule
}

// OnLevels prices algorithm a for op on a level layout: the fast path of networks whose levels
// capture all the sharing (a non-blocking tree seen per tier, a flat fabric, a torus dimension
// with its hop counts). A flow algorithm's rounds are mapped onto the levels they span (Levels);
// a Leveled one supplies its schedule. A *Declined error: a can't run on levels (a linear
// all-to-all, whose sends share links no level sees).
func OnLevels(a Algorithm, op network.Op, s units.Bytes, lay Layout, red network.Reducer, dt dtype.DType) (network.Cost, error) {
	lp := NewLevelPricer(lay)
	defer lp.Release()
	return lp.Price(a, op, s, red, dt)
}

// LevelPricer prices algorithms on one layout (a network's best-of loop prepares the layout
// once for all its algorithms). Release returns its scratch.
type LevelPricer struct{ sc *levelScratch }

// NewLevelPricer prepares lay.
func NewLevelPricer(lay Layout) LevelPricer {
	sc := scratch.Get().(*levelScratch)
	sc.m.set(lay)
	return LevelPricer{sc}
}

// Price prices a for op.
func (lp LevelPricer) Price(a Algorithm, op network.Op, s units.Bytes, red network.Reducer, dt dtype.DType) (network.Cost, error) {
	sch, err := lp.sc.schedule(a, op, s)
	if err != nil {
		return network.Cost{}, err
	}
	return Price(sch, red, dt), nil
}

// Release returns the scratch to the pool.
func (lp LevelPricer) Release() { scratch.Put(lp.sc) }

// Levels is the step schedule of a on a level layout (for inspection; OnLevels prices it).
func Levels(a Algorithm, op network.Op, s units.Bytes, lay Layout) (Schedule, error) {
	var sc levelScratch
	sc.m.set(lay)
	sch, err := sc.schedule(a, op, s)
	sch.Steps = append([]Step(nil), sch.Steps...)
	return sch, err
}

var scratch = sync.Pool{New: func() any { return new(levelScratch) }}

type levelScratch struct {
	m     levelMembers
	flows Flows
	steps []Step
}

func (sc *levelScratch) schedule(a Algorithm, op network.Op, s units.Bytes) (Schedule, error) {
	if la, ok := a.(Leveled); ok {
		return la.Levels(op, s, sc.m.lay), nil
	}
	fa, ok := a.(Flowing)
	if !ok {
		return Schedule{}, Decline("%s has neither rounds nor levels", a.Name())
	}
	sc.flows.Algorithm, sc.flows.Rounds = "", sc.flows.Rounds[:0]
	if err := fa.Rounds(op, s, &sc.m, &sc.flows); err != nil {
		return Schedule{}, err
	}
	sc.steps = sc.steps[:0]
	for i := range sc.flows.Rounds {
		r := &sc.flows.Rounds[i]
		if r.Vary == 0 {
			if err := sc.add(r, &r.Pattern, max(1, r.Repeat)); err != nil {
				return Schedule{}, err
			}
			continue
		}
		// A family of partner distances: fold the ones that land on the same level and hop
		// count into one step.
		pt := r.Pattern
		q := &pt.Parts[0]
		for left := r.Repeat; left > 0; {
			n := min(left, sc.m.same(q, r.Vary))
			if err := sc.add(r, &pt, n); err != nil {
				return Schedule{}, err
			}
			q.K += int32(n * r.Vary)
			left -= n
		}
	}
	return Schedule{Algorithm: sc.flows.Algorithm, Steps: sc.steps}, nil
}

// add appends round r with pattern pt as a step repeated n times.
func (sc *levelScratch) add(r *Round, pt *Pattern, n int) error {
	l, load, w, err := sc.m.pattern(pt)
	if err != nil {
		return err
	}
	sc.steps = AppendStep(sc.steps, Step{Link: l, Bytes: r.Bytes * units.Bytes(w), Load: load, FanIn: r.FanIn,
		ReduceBytes: r.ReduceBytes, Repeat: n, Reconfig: r.Reconfig})
	return nil
}

// AppendStep appends st, or adds its repeats to the last step when they are alike in all else
// (consecutive rounds on the same level with the same bytes are one step repeated).
func AppendStep(steps []Step, st Step) []Step {
	if k := len(steps); k > 0 {
		prev := steps[k-1]
		prev.Repeat = st.Repeat
		if prev == st {
			steps[k-1].Repeat += st.Repeat
			return steps
		}
	}
	return append(steps, st)
}

// levelMembers is a group seen through its levels.
type levelMembers struct {
	lay  Layout
	act  []Level
	cum  [maxLevels + 1]int // cum[i] = p_0 ⋯ p_{i−1}
	crit Link
	dup  bool
	buf  []Level
}

func (v *levelMembers) set(lay Layout) {
	v.lay = lay
	v.act = v.buf[:0]
	for _, l := range lay.Levels {
		if l.Size > 1 {
			v.act = append(v.act, l)
		}
	}
	v.buf = v.act
	v.cum[0] = 1
	for i, l := range v.act {
		if i < maxLevels {
			v.cum[i+1] = v.cum[i] * l.Size
		}
	}
	v.crit = critical(v.act)
	v.dup = len(v.act) > 0
	for _, l := range v.act {
		v.dup = v.dup && l.Duplex
	}
}

func (v *levelMembers) P() int               { return v.lay.members() }
func (v *levelMembers) Layout() Layout       { return v.lay }
func (v *levelMembers) Grid() (*Grid, error) { return nil, Decline("levels have no grid") }
func (v *levelMembers) Link(pt Pattern) (Link, error) {
	l, load, w, err := v.pattern(&pt)
	l.Bandwidth = units.BytesPerSecond(float64(l.Bandwidth) / (load * w))
	return l, err
}

// pattern maps a round's pattern onto the levels: the link its flows run on, the load on it (the
// flows that share it per sender) and the weight of the bytes it carries per unit of Round.Bytes.
// Several parts share the link (their weights add up), except the two directions of a ring on
// duplex levels, which run side by side.
func (v *levelMembers) pattern(pt *Pattern) (Link, float64, float64, error) {
	var l Link
	load, w := 1.0, 0.0
	for i := 0; i < pt.N; i++ {
		q := &pt.Parts[i]
		pl, pload, err := v.part(q)
		if err != nil {
			return l, 0, 0, err
		}
		if i == 0 {
			l, load = pl, pload
		}
		if pt.N == 2 && v.dup && q.Kind == RingNext && pt.Parts[0].Kind == RingNext && pt.Parts[0].K == -q.K {
			w = max(w, q.W())
			continue
		}
		w += q.W()
	}
	return l, load, w, nil
}

// same is how many distances K, K+vary, … from part q's land on the level (and, on a physical
// ring, the hop count) of K: those repetitions are one step.
func (v *levelMembers) same(q *Part, vary int) int {
	if vary != 1 || q.Kind != Shift && q.Kind != XOR {
		return 1
	}
	k := int(q.K)
	if q.Stride != 1 {
		l, err := v.digit(q)
		if err != nil || l.Ring {
			return 1
		}
		return int(q.Size) // a switched level: every distance alike
	}
	inner := 1
	for i, l := range v.act {
		outer := inner * l.Size
		if k < outer || i == len(v.act)-1 {
			if !l.Ring {
				return max(1, outer-k) // the rest of this level's distances
			}
			return max(1, (k/inner+1)*inner-k) // the same offset along the ring
		}
		inner = outer
	}
	return 1
}

// part is the link and load of one part.
func (v *levelMembers) part(q *Part) (Link, float64, error) {
	switch q.Kind {
	case RingNext, FoldIn, FoldOut:
		return v.crit, 1, nil
	case TreeDown, TreeUp:
		return v.crit, 2, nil // a parent's port carries both children's chunks
	case TwoChains:
		if v.dup {
			return v.crit, 1, nil
		}
		return v.crit, 2, nil // the root drives both chains through one port
	case Chain:
		if q.Stride == 1 && int(q.Size) >= v.P() {
			return v.crit, 1, nil
		}
		l, err := v.digit(q)
		return l.Link, 1, err
	case Shift, XOR:
		k := int(q.K)
		if k < 0 {
			k += int(q.Size)
		}
		if q.Stride == 1 {
			// Members k apart in rank order: the level that distance spans.
			l, off := spans(v.act, k)
			link, load := shifted(l, off)
			return link, load, nil
		}
		l, err := v.digit(q)
		if err != nil {
			return Link{}, 0, err
		}
		link, load := shifted(l, k)
		return link, load, nil
	case Peers:
		l, err := v.digit(q)
		if err != nil {
			return Link{}, 0, err
		}
		if l.Ring {
			return Link{}, 0, Decline("a level's all-to-all on a physical ring shares links that levels do not see; it needs a routed fabric")
		}
		return l.Link, float64(q.Size - 1), nil // the sender's port carries one flow per peer
	}
	return Link{}, 0, Decline("its traffic shares links that levels do not see; it needs a routed fabric")
}

// digit is the level (or the merge of consecutive levels) a digit of the member index runs along.
func (v *levelMembers) digit(q *Part) (Level, error) {
	for i := range v.act {
		if v.cum[i] != int(q.Stride) {
			continue
		}
		for j := i; j < len(v.act) && j < maxLevels; j++ {
			if v.cum[j+1]/v.cum[i] == int(q.Size) {
				if i == j {
					return v.act[i], nil
				}
				return merge(v.act[i : j+1]), nil
			}
		}
	}
	return Level{}, Decline("a digit (stride %d, size %d) that matches no level", q.Stride, q.Size)
}
