package network

import "sync"

// Memo caches a model's priced collectives: an estimate, a sweep or a search prices the same few
// collectives many times. Safe for concurrent use; it forgets everything past maxMemo entries.
type Memo struct {
	mu sync.Mutex
	m  map[Collective]Cost
}

const maxMemo = 1 << 10

// Get returns the cost stored for c.
func (m *Memo) Get(c Collective) (Cost, bool) {
	m.mu.Lock()
	cost, ok := m.m[c]
	m.mu.Unlock()
	return cost, ok
}

// Put stores the cost of c.
func (m *Memo) Put(c Collective, cost Cost) {
	m.mu.Lock()
	if m.m == nil || len(m.m) >= maxMemo {
		m.m = make(map[Collective]Cost)
	}
	m.m[c] = cost
	m.mu.Unlock()
}
