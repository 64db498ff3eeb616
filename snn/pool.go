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
// A product is a job of column ranges that anyone may claim: the stepping
// goroutine publishes it, works on its own range, then claims what no
// worker has taken yet, and waits only for ranges a worker is running. So
// when the workers are busy (two replicas of a deployment stepping at once
// on two cores, say), the stepping goroutine does all of it without
// waiting for anyone.
//
// The hand-off polls rather than parks. A product at batch 1 takes a few
// microseconds, and waking a parked goroutine's thread takes as long, so
// a worker keeps polling for the next job for spinFor after its last one,
// and the stepping goroutine polls for the workers' ranges to finish; both
// yield the processor (runtime.Gosched) between polls, so a goroutine
// with real work is never kept waiting by a poller.
type pool struct {
	jobs chan *denseJob
	n    int // goroutines besides the stepping one
	once sync.Once
}

// spinFor is how long an idle worker polls before it parks.
const spinFor = 100 * time.Microsecond

// denseTask is one column range of a dense product over op.dense's slots
// or, with events, the event-driven products of op.evSlots[c0:c1]; or,
// with slots, the step of slots c0:c1 of node sn, as part part of the
// step, which adds what it cost to c.
type denseTask struct {
	op     *linearOp
	xs, ys []float32
	c0, c1 int
	events bool
	slots  slotStepper
	sim    *Simulator
	sn     *simNode
	part   int
	c      Counters
}

// slotStepper is an operator whose step can run a range of batch slots
// apart from the others: stepSlots steps slots lo:hi of sn and adds what
// they cost to c. Ranges run at once on the pool's goroutines, so it
// writes only those slots' state, and its scratch is the part's own
// (part 0 is the stepping goroutine's; there are Simulator.parts()).
type slotStepper interface {
	stepSlots(s *Simulator, sn *simNode, lo, hi, part int, c *Counters)
}

// denseJob is the column ranges of one product. Each linearOp reuses its
// own, so a worker may still hold a job from an earlier product. The
// ranges open to claim and the next one to claim share one word (state:
// count << 32 | next), so a claim is one compare-and-swap of it: a claim
// succeeds only against the job as it is now, open (count > 0) and with
// that range unclaimed.
type denseJob struct {
	tasks []denseTask
	state atomic.Uint64
	done  atomic.Int32 // ranges finished
}

// work claims and runs ranges until none is left.
func (j *denseJob) work() {
	for {
		st := j.state.Load()
		i, n := uint32(st), uint32(st>>32)
		if i >= n {
			return
		}
		if !j.state.CompareAndSwap(st, st+1) {
			continue
		}
		t := &j.tasks[i]
		if t.slots != nil {
			t.slots.stepSlots(t.sim, t.sn, t.c0, t.c1, t.part, &t.c)
		} else if t.events {
			t.op.eventRange(t.xs, t.ys, t.c0, t.c1)
		} else {
			t.op.denseRange(t.xs, t.ys, t.c0, t.c1)
		}
		j.done.Add(1)
	}
}

// reset closes j for refilling: no range of it can be claimed until run
// opens it again.
func (j *denseJob) reset() { j.state.Store(0) }

func newPool(workers int) *pool {
	p := &pool{jobs: make(chan *denseJob, workers), n: workers - 1}
	for range p.n {
		go func() {
			for {
				j, ok := p.next()
				if !ok {
					return
				}
				j.work()
			}
		}()
	}
	return p
}

// next returns the next job, polling for up to spinFor before it parks;
// false once the pool is closed.
func (p *pool) next() (*denseJob, bool) {
	start := time.Now()
	for i := 0; ; i++ {
		select {
		case j, ok := <-p.jobs:
			return j, ok
		default:
		}
		if i%64 == 63 && time.Since(start) > spinFor {
			j, ok := <-p.jobs
			return j, ok
		}
		runtime.Gosched()
	}
}

// run opens j (refilled since reset), publishes it, runs own, works on
// j's ranges with the workers, and returns once all are done.
func (p *pool) run(j *denseJob, own func()) {
	j.done.Store(0)
	j.state.Store(uint64(len(j.tasks)) << 32)
	for range min(p.n, len(j.tasks)) {
		select {
		case p.jobs <- j:
		default: // the workers have jobs to look at already
		}
	}
	own()
	j.work()
	for int(j.done.Load()) != len(j.tasks) {
		runtime.Gosched()
	}
}

// stepSlots runs st's step of sn's slots, shared in ranges of about
// as many active slots among the pool's goroutines when it has some and
// the step costs about work ≥ parallelMin multiply-adds. j is st's own
// job. Any event lists the step reads must be scanned before (eventList).
func (s *Simulator) stepSlots(st slotStepper, sn *simNode, j *denseJob, work int, c *Counters) {
	parts := 1
	if s.pool != nil && work >= parallelMin {
		parts = min(s.parts(), s.activeSlots())
	}
	if parts <= 1 {
		st.stepSlots(s, sn, 0, sn.batch, 0, c)
		return
	}
	j.reset()
	j.tasks = j.tasks[:0]
	own, lo, seen, part := 0, 0, 0, 1
	for slot := 0; slot < sn.batch; slot++ {
		if s.idle(slot) {
			continue
		}
		seen++
		if seen*parts < part*s.activeSlots() {
			continue
		}
		if part == 1 {
			own = slot + 1
		} else {
			j.tasks = append(j.tasks, denseTask{slots: st, sim: s, sn: sn, c0: lo, c1: slot + 1, part: part - 1})
		}
		lo, part = slot+1, part+1
	}
	s.pool.run(j, func() { st.stepSlots(s, sn, 0, own, 0, c) })
	for i := range j.tasks {
		*c = c.Add(j.tasks[i].c)
	}
}

// parts is the number of goroutines a step can share slots among.
func (s *Simulator) parts() int {
	if s.pool == nil {
		return 1
	}
	return s.pool.n + 1
}

func (p *pool) close() { p.once.Do(func() { close(p.jobs) }) }

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
