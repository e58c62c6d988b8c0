package tuner

import "sync"

// Gate bounds how many goroutines of a pool work at once; the tuner
// changes the bound while they run. A pool starts as many goroutines as
// the bound may ever reach and each holds the gate while it works, so
// lowering the bound parks goroutines between items, never mid-item.
type Gate struct {
	mu     sync.Mutex
	cond   sync.Cond
	limit  int
	active int
}

// NewGate returns a gate admitting n goroutines at once (at least one).
func NewGate(n int) *Gate {
	g := &Gate{limit: max(n, 1)}
	g.cond.L = &g.mu
	return g
}

// Enter waits until fewer than the limit are inside.
func (g *Gate) Enter() {
	g.mu.Lock()
	for g.active >= g.limit {
		g.cond.Wait()
	}
	g.active++
	g.mu.Unlock()
}

// Leave lets the next waiting goroutine in.
func (g *Gate) Leave() {
	g.mu.Lock()
	g.active--
	g.mu.Unlock()
	g.cond.Signal()
}

// Set changes the limit (at least one).
func (g *Gate) Set(n int) {
	g.mu.Lock()
	g.limit = max(n, 1)
	g.mu.Unlock()
	g.cond.Broadcast()
}

// Limit is the current limit.
func (g *Gate) Limit() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit
}
