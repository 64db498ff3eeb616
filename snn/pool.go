package snn

import (
	"runtime"
	"sync"
)

// parallelMin is the number of multiply-adds of one dense synapse product
// from which Step shares it among its workers: below it the hand-off costs
// more than it saves.
const parallelMin = 1 << 16

// pool is the goroutines a Simulator with Options.Workers > 1 shares its
// large dense products with. The goroutines hold the pool, never the
// Simulator, so an unreachable Simulator is collected and its cleanup
// stops them; Close stops them at once.
type pool struct {
	tasks chan denseTask
	wg    sync.WaitGroup
	n     int // goroutines besides the stepping one
	once  sync.Once
}

// denseTask is one column range of a dense product over op.dense's slots.
type denseTask struct {
	op     *linearOp
	xs, ys []float32
	c0, c1 int
}

func newPool(workers int) *pool {
	p := &pool{tasks: make(chan denseTask, workers), n: workers - 1}
	for range p.n {
		go func() {
			for t := range p.tasks {
				t.op.denseRange(t.xs, t.ys, t.c0, t.c1)
				p.wg.Done()
			}
		}()
	}
	return p
}

func (p *pool) close() { p.once.Do(func() { close(p.tasks) }) }

// startPool gives s its workers and arranges for them to stop with s.
func (s *Simulator) startPool() {
	if s.opts.Workers <= 1 {
		return
	}
	s.pool = newPool(s.opts.Workers)
	runtime.AddCleanup(s, func(p *pool) { p.close() }, s.pool)
}

// Close stops the Simulator's worker goroutines (Options.Workers). A
// Simulator that is not closed stops them when it is garbage collected.
// Step must not be called after Close.
func (s *Simulator) Close() {
	if s.pool != nil {
		s.pool.close()
	}
}
