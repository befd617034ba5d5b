package network

import (
	"sync"

	"github.com/ddlest/ddlest/internal/dtype"
)

// Memo caches a model's priced collectives: an estimate, a sweep or a search prices the same few
// collectives many times. Safe for concurrent use; it forgets everything past maxMemo entries.
// A shared memo (Share) keeps them instead in a process-wide memo shared by every model of the
// same configuration: the estimates of a sweep, a search or a benchmark each build their own
// model and price the same collectives again.
type Memo struct {
	mu sync.Mutex
	m  map[Collective]Cost

	model *sharedModel // nil: not shared
	red   ReducerKey
	keys  [8]redKey // the reducer's key per data type, filled on first use
}

type redKey struct {
	ok bool
	k  [2]float64
}

const maxMemo = 1 << 10

// A ReducerKey is a Reducer that names the numbers its ReduceTime depends on for one data type
// (equal keys, equal reduction times), so that models of different estimates may share priced
// collectives. A job whose reducer is not one keeps its own memo only.
type ReducerKey interface {
	Reducer
	ReduceKey(dt dtype.DType) [2]float64
}

// Share joins the process-wide memo of configuration key k (a comparable value that determines
// every price the model gives: its configuration, the job's size, whatever the family's model
// reads) for the job env, when its reducer is nil or a ReducerKey.
func Share[K comparable](m *Memo, k K, env Env) {
	switch r := env.Reducer.(type) {
	case nil:
	case ReducerKey:
		m.red = r
	default:
		return
	}
	models.Lock()
	defer models.Unlock()
	if models.m == nil || len(models.m) >= maxShared {
		models.m = map[any]*sharedModel{}
	}
	sm := models.m[k]
	if sm == nil {
		sm = &sharedModel{key: k}
		models.m[k] = sm
	}
	m.model = sm
}

// sharedModel is one configuration's entry, interned so the shared key hashes a pointer (not
// of size zero: Go may give all zero-size allocations one address).
type sharedModel struct{ key any }

var models struct {
	sync.Mutex
	m map[any]*sharedModel
}

// sharedKey is a priced collective of one model configuration with one reduction speed.
type sharedKey struct {
	model *sharedModel
	red   redKey
	c     Collective
}

var shared struct {
	sync.RWMutex
	m map[sharedKey]Cost
}

const maxShared = 1 << 14

func (m *Memo) sharedKey(c Collective) sharedKey {
	k := sharedKey{model: m.model, c: c}
	if m.red == nil {
		return k
	}
	if d := int(c.DType); d >= 0 && d < len(m.keys) {
		if !m.keys[d].ok {
			m.keys[d] = redKey{true, m.red.ReduceKey(c.DType)}
		}
		k.red = m.keys[d]
	} else {
		k.red = redKey{true, m.red.ReduceKey(c.DType)}
	}
	return k
}

// Price is the front every memoised model's Price shares: c's group checked against the job, a
// group of one member free, the memo asked first and filled from compute after.
func (m *Memo) Price(c Collective, env Env, compute func() (Cost, error)) (Cost, error) {
	if err := CheckGroup(c, env); err != nil {
		return Cost{}, err
	}
	if c.Group.Size <= 1 {
		return Cost{Algorithm: "none"}, nil
	}
	if cost, ok := m.Get(c); ok {
		return cost, nil
	}
	cost, err := compute()
	if err == nil {
		m.Put(c, cost)
	}
	return cost, err
}

// Get returns the cost stored for c.
func (m *Memo) Get(c Collective) (Cost, bool) {
	m.mu.Lock()
	if m.model == nil {
		cost, ok := m.m[c]
		m.mu.Unlock()
		return cost, ok
	}
	k := m.sharedKey(c)
	m.mu.Unlock()
	shared.RLock()
	cost, ok := shared.m[k]
	shared.RUnlock()
	return cost, ok
}

// Put stores the cost of c (in the shared memo only, for a shared one).
func (m *Memo) Put(c Collective, cost Cost) {
	m.mu.Lock()
	if m.model == nil {
		if m.m == nil || len(m.m) >= maxMemo {
			m.m = make(map[Collective]Cost)
		}
		m.m[c] = cost
		m.mu.Unlock()
		return
	}
	k := m.sharedKey(c)
	m.mu.Unlock()
	shared.Lock()
	if shared.m == nil || len(shared.m) >= maxShared {
		shared.m = make(map[sharedKey]Cost)
	}
	shared.m[k] = cost
	shared.Unlock()
}
