package snn

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// parallelMin is the number of multiply-adds of one dense synapse product
// from which Step shares it among its workers: below it the hand-off costs
// more than it saves.
const parallelMin = 1 << 16

// pool is the goroutines a Simulator with Options.Workers > 1 shares its
// large dense products with. The goroutines hold the pool, never the
// Simulator, so an unreachable Simulator is collected and its cleanup
// stops them; Close stops them at once.
//
// The hand-off spins rather than sleeps. A product at batch 1 takes a few
// microseconds, and waking a parked goroutine's thread takes as long, so
// a worker keeps polling for the next task for spinFor after its last one,
// and the stepping goroutine polls for the workers' completion; both yield
// the processor (runtime.Gosched) between polls, so that a goroutine with
// real work, another replica's say, is never kept waiting by a spinner.
type pool struct {
	tasks   chan denseTask
	pending atomic.Int32 // tasks handed out and not yet done
	n       int          // goroutines besides the stepping one
	once    sync.Once
}

// spinFor is how long an idle worker polls before it parks.
const spinFor = 100 * time.Microsecond

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
			for {
				t, ok := p.next()
				if !ok {
					return
				}
				t.op.denseRange(t.xs, t.ys, t.c0, t.c1)
				p.pending.Add(-1)
			}
		}()
	}
	return p
}

// next returns the next task, polling for up to spinFor before it parks;
// false once the pool is closed.
func (p *pool) next() (denseTask, bool) {
	start := time.Now()
	for i := 0; ; i++ {
		select {
		case t, ok := <-p.tasks:
			return t, ok
		default:
		}
		if i%64 == 63 && time.Since(start) > spinFor {
			t, ok := <-p.tasks
			return t, ok
		}
		runtime.Gosched()
	}
}

// run hands tasks to the workers, runs own itself, and returns once all
// are done.
func (p *pool) run(tasks []denseTask, own func()) {
	p.pending.Add(int32(len(tasks)))
	for _, t := range tasks {
		p.tasks <- t
	}
	own()
	for p.pending.Load() != 0 {
		runtime.Gosched()
	}
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
