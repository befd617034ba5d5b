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
	sc := scratch.Get().(*levelScratch)
	defer scratch.Put(sc)
	sch, err := sc.schedule(a, op, s, lay)
	if err != nil {
		return network.Cost{}, err
	}
	return Price(sch, red, dt), nil
}

// Levels is the step schedule of a on a level layout (for inspection; OnLevels prices it).
func Levels(a Algorithm, op network.Op, s units.Bytes, lay Layout) (Schedule, error) {
	var sc levelScratch
	sch, err := sc.schedule(a, op, s, lay)
	sch.Steps = append([]Step(nil), sch.Steps...)
	return sch, err
}

var scratch = sync.Pool{New: func() any { return new(levelScratch) }}

type levelScratch struct {
	m     levelMembers
	flows Flows
	steps []Step
}

func (sc *levelScratch) schedule(a Algorithm, op network.Op, s units.Bytes, lay Layout) (Schedule, error) {
	if la, ok := a.(Leveled); ok {
		return la.Levels(op, s, lay), nil
	}
	fa, ok := a.(Flowing)
	if !ok {
		return Schedule{}, Decline("%s has neither rounds nor levels", a.Name())
	}
	sc.m.set(lay)
	sc.flows.Algorithm, sc.flows.Rounds = "", sc.flows.Rounds[:0]
	if err := fa.Rounds(op, s, &sc.m, &sc.flows); err != nil {
		return Schedule{}, err
	}
	sc.steps = sc.steps[:0]
	for _, r := range sc.flows.Rounds {
		l, load, w, err := sc.m.pattern(r.Pattern)
		if err != nil {
			return Schedule{}, err
		}
		st := Step{Link: l, Bytes: r.Bytes * units.Bytes(w), Load: load, FanIn: r.FanIn, ReduceBytes: r.ReduceBytes,
			Repeat: max(1, r.Repeat), Reconfig: r.Reconfig}
		// Consecutive rounds on the same level with the same bytes are one step repeated (the
		// pairwise exchange's partners inside one level).
		if n := len(sc.steps); n > 0 {
			if prev := &sc.steps[n-1]; sameStep(*prev, st) {
				prev.Repeat += st.Repeat
				continue
			}
		}
		sc.steps = append(sc.steps, st)
	}
	return Schedule{Algorithm: sc.flows.Algorithm, Steps: sc.steps}, nil
}

func sameStep(a, b Step) bool {
	a.Repeat, b.Repeat = 0, 0
	return a == b
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
	l, load, w, err := v.pattern(pt)
	l.Bandwidth = units.BytesPerSecond(float64(l.Bandwidth) / (load * w))
	return l, err
}

// pattern maps a round's pattern onto the levels: the link its flows run on, the load on it (the
// flows that share it per sender) and the weight of the bytes it carries per unit of Round.Bytes.
// Several parts share the link (their weights add up), except the two directions of a ring on
// duplex levels, which run side by side.
func (v *levelMembers) pattern(pt Pattern) (Link, float64, float64, error) {
	var l Link
	load, w := 1.0, 0.0
	for i := 0; i < pt.N; i++ {
		q := pt.Parts[i]
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

// part is the link and load of one part.
func (v *levelMembers) part(q Part) (Link, float64, error) {
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
		if q.Stride == 1 && q.Size >= v.P() {
			return v.crit, 1, nil
		}
		l, err := v.digit(q)
		return l.Link, 1, err
	case Shift, XOR:
		k := q.K
		if k < 0 {
			k += q.Size
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
	}
	return Link{}, 0, Decline("its traffic shares links that levels do not see; it needs a routed fabric")
}

// digit is the level (or the merge of consecutive levels) a digit of the member index runs along.
func (v *levelMembers) digit(q Part) (Level, error) {
	for i := range v.act {
		if v.cum[i] != q.Stride {
			continue
		}
		for j := i; j < len(v.act) && j < maxLevels; j++ {
			if v.cum[j+1]/v.cum[i] == q.Size {
				if i == j {
					return v.act[i], nil
				}
				return merge(v.act[i : j+1]), nil
			}
		}
	}
	return Level{}, Decline("a digit (stride %d, size %d) that matches no level", q.Stride, q.Size)
}

