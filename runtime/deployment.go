package runtime

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/snn"
)

// Status of a deployment.
type Status string

const (
	StatusLoading Status = "loading"
	StatusReady   Status = "ready"
	StatusFailed  Status = "failed"
)

// Deployment is a model placed on a device: replicas of one loaded
// Instance, each stepping up to MaxBatch sequences together, fed from one
// bounded queue.
type Deployment struct {
	ID       string
	Model    *Model
	Device   hal.Capabilities
	MaxBatch int
	Replicas int
	Created  time.Time
	// Owner is the principal that created the deployment; empty for the
	// program's own (the built-in models').
	Owner string

	bytes int64 // the state its replicas hold (deploymentBytes)
	// serial tells deployments apart in the prefix cache, IDs being
	// reusable; snapshots says its instances save slots.
	serial    uint64
	snapshots bool
	rt        *Runtime
	spec      DeploymentSpec
	queue     chan *seq    // a language model's sequences
	runq      chan *sample // a network's samples
	submitMu  sync.Mutex
	done      chan struct{}
	loaded    chan struct{} // closed when loading ends, either way
	wg        sync.WaitGroup

	// What a network's run reads of its output layer.
	spikingOutput bool
	outputNeuron  string // the neuron node feeding the Output, if any
	membrane      bool   // its membrane can be recorded

	mu       sync.Mutex
	status   Status
	failure  error
	live     int // replicas still serving
	active   int // sequences or samples in slots
	draining bool
	stopOnce sync.Once
}

// MinRunQueue is the least a network deployment's default queue holds,
// whatever its batch: a run's samples are queued together, so a run of
// that many samples fits any deployment.
const MinRunQueue = 256

func newDeployment(r *Runtime, spec DeploymentSpec, m *Model, caps hal.Capabilities) *Deployment {
	depth := r.opts.QueueDepth
	if depth == 0 {
		depth = 4 * spec.MaxBatch * spec.Replicas
		if !m.IsLanguageModel() {
			depth = max(depth, MinRunQueue)
		}
	}
	d := &Deployment{
		ID: spec.ID, Model: m, Device: caps, MaxBatch: spec.MaxBatch, Replicas: spec.Replicas, Created: r.opts.Now(), Owner: spec.Owner,
		rt: r, spec: spec, done: make(chan struct{}), loaded: make(chan struct{}), status: StatusLoading, serial: r.serials.Add(1),
		bytes: deploymentBytes(m.Program, spec.MaxBatch, spec.Replicas),
	}
	if m.IsLanguageModel() {
		d.queue = make(chan *seq, depth)
	} else {
		d.runq = make(chan *sample, depth)
		g := m.Program.Graph
		if outs := g.NamesOfKind(snn.KindOutput); len(outs) == 1 {
			if src := g.Topology().In(outs[0]); len(src) == 1 {
				if n, ok := g.Nodes[src[0]]; ok {
					d.spikingOutput = snn.IsSpiking(n.Kind())
					if snn.IsNeuron(n.Kind()) {
						d.outputNeuron = src[0]
					}
				}
			}
		}
	}
	return d
}

// Wait blocks until the deployment has loaded or failed to, and returns
// the failure.
func (d *Deployment) Wait(ctx context.Context) error {
	select {
	case <-d.loaded:
		return d.Failure()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Status reports whether the deployment serves.
func (d *Deployment) Status() Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.status
}

// Failure is the error that failed the deployment, if it failed.
func (d *Deployment) Failure() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.failure
}

// Load reports the sequences (or samples) in slots and waiting in the
// queue.
func (d *Deployment) Load() (active, queued int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.active, len(d.queue) + len(d.runq)
}

// accepting reports why the deployment takes no new work, if it does not.
func (d *Deployment) accepting() error {
	d.mu.Lock()
	st, draining := d.status, d.draining
	d.mu.Unlock()
	switch {
	case draining:
		return fmt.Errorf("%w: %q", ErrDeploymentNotFound, d.ID)
	case st != StatusReady:
		return fmt.Errorf("%w: deployment %q is %s", ErrDeviceUnavailable, d.ID, st)
	}
	select {
	case <-d.done:
		return ErrClosed
	default:
	}
	return nil
}

// start loads the replicas onto dev. The deployment is already listed
// (status loading); start writes only what the mutex guards, and marks
// the deployment failed when a replica cannot load. The caller has
// counted start in d.wg, so that a stop during the load waits for it
// rather than racing the workers' Add.
func (d *Deployment) start(ctx context.Context, dev hal.Device) error {
	defer d.wg.Done()
	defer close(d.loaded)
	insts, err := d.load(ctx, dev)
	d.mu.Lock()
	if err != nil {
		d.status, d.failure = StatusFailed, err
	} else {
		d.status, d.live = StatusReady, len(insts)
	}
	d.mu.Unlock()
	for _, in := range insts {
		d.wg.Add(1)
		if d.queue != nil {
			go newWorker(d, in).run()
		} else {
			go newNetWorker(d, in).run()
		}
	}
	return err
}

func (d *Deployment) load(ctx context.Context, dev hal.Device) ([]hal.Instance, error) {
	insts := make([]hal.Instance, 0, d.Replicas)
	fail := func(err error) ([]hal.Instance, error) {
		for _, in := range insts {
			in.Close()
		}
		return nil, err
	}
	for i := 0; i < d.Replicas; i++ {
		in, err := dev.Load(ctx, d.Model.Program, d.MaxBatch)
		if err != nil {
			return fail(fmt.Errorf("runtime: deploying %q on %s: %w", d.Model.ID, d.Device.Name, err))
		}
		insts = append(insts, in)
		if len(in.Inputs()) != 1 || len(in.Outputs()) != 1 {
			return fail(fmt.Errorf("%w: deploying %q: the loaded program has %d inputs and %d outputs; a deployment serves networks with one of each",
				compile.ErrUnsupported, d.Model.ID, len(in.Inputs()), len(in.Outputs())))
		}
		_, d.snapshots = in.(hal.Snapshotter)
		if _, ok := in.(interface{ Simulator() *snn.Simulator }); ok && d.outputNeuron != "" {
			d.membrane = true
		}
	}
	return insts, nil
}

func (d *Deployment) stop() {
	d.stopOnce.Do(func() { close(d.done) })
	d.wg.Wait()
	if c := d.rt.cache; c != nil {
		c.drop(d.cachePrefix())
	}
	// Nothing serves any more: fail what is still queued.
	for {
		select {
		case s := <-d.queue:
			s.fail(ErrClosed)
		case s := <-d.runq:
			s.fail(ErrClosed)
		default:
			return
		}
	}
}

// drain stops the deployment once the work it has taken is done.
func (d *Deployment) drain() {
	for {
		if active, queued := d.Load(); active == 0 && queued == 0 {
			break
		}
		select {
		case <-d.done:
		case <-time.After(10 * time.Millisecond):
			continue
		}
		break
	}
	d.stop()
}

// enqueue puts all jobs of one request on q, or none: a request larger
// than the queue can ever hold is the caller's mistake (a ParamError
// naming param), one that does not fit now is ErrOverloaded.
func enqueue[J job](d *Deployment, q chan J, jobs []J, param, what string) error {
	d.submitMu.Lock()
	defer d.submitMu.Unlock()
	if err := d.accepting(); err != nil {
		return err
	}
	if len(jobs) > cap(q) {
		return &ParamError{param, fmt.Sprintf("%d %s are more than deployment %q can queue (%d); send fewer at once", len(jobs), what, d.ID, cap(q))}
	}
	if len(q)+len(jobs) > cap(q) {
		return fmt.Errorf("%w: deployment %q has %d %s waiting (limit %d)", ErrOverloaded, d.ID, len(q), what, cap(q))
	}
	for _, j := range jobs {
		q <- j
	}
	return nil
}

// worker steps one Instance: between tokens, finished or cancelled
// sequences leave their slots and queued ones join (continuous batching).
type worker struct {
	d      *Deployment
	inst   hal.Instance
	slots  []*seq
	hot    []int // the one-hot index set in each slot's input, or -1
	input  []float32
	inputs [][]float32 // {input}: a variadic call would allocate the slice each step
	vocab  int
	steps  int
	pulse  bool
	target compile.Target
	active int
	masker hal.SlotMasker // nil when the instance steps every slot
	on     []bool
	snap   hal.Snapshotter // nil when the instance cannot save slots
	// probe reads the spiking layers' outputs for sequences that asked
	// for their activity; nil when the device cannot.
	probe  hal.Prober
	layers []spikingLayer
}

// spikingLayer is a node whose neurons fire, as activity reports it.
type spikingLayer struct {
	name string
	n    int
}

// spikingLayers lists a program's spiking nodes in evaluation order.
func spikingLayers(p *compile.Program) []spikingLayer {
	shapes, err := p.Graph.Shapes()
	if err != nil {
		return nil
	}
	var out []spikingLayer
	for _, name := range p.Graph.Topology().Order {
		if snn.IsSpiking(p.Graph.Nodes[name].Kind()) {
			out = append(out, spikingLayer{name, snn.Size(shapes[name].Out)})
		}
	}
	return out
}

func newWorker(d *Deployment, in hal.Instance) *worker {
	v := in.Inputs()[0].Size
	w := &worker{
		d: d, inst: in, slots: make([]*seq, in.Batch()), hot: make([]int, in.Batch()),
		input: make([]float32, in.Batch()*v), vocab: v, steps: d.Model.Program.Timesteps,
		pulse: d.Model.Program.Input.Kind == compile.InputOneHotPulse, target: d.Device.Target,
	}
	if p, ok := in.(hal.Prober); ok {
		w.probe, w.layers = p, spikingLayers(d.Model.Program)
	}
	w.inputs = [][]float32{w.input}
	for i := range w.hot {
		w.hot[i] = -1
	}
	if m, ok := in.(hal.SlotMasker); ok {
		w.masker, w.on = m, make([]bool, in.Batch())
	}
	w.snap, _ = in.(hal.Snapshotter)
	return w
}

func (w *worker) run() {
	defer w.d.wg.Done()
	defer w.inst.Close()
	defer w.setActive(0)
	for {
		if !w.admit() {
			w.release(ErrClosed)
			return
		}
		if err := w.tick(); err != nil {
			err = fmt.Errorf("%w: %s: %w", ErrDeviceUnavailable, w.d.Device.Name, err)
			w.release(err)
			w.d.replicaFailed(err)
			return
		}
	}
}

// admit fills free slots from the queue, blocking while no sequence is
// active. It returns false when the deployment stops.
func (w *worker) admit() bool {
	_, ok := admit(w.d.queue, w.d.done, w.slots, w.enter, w.setActive)
	return ok
}

// job is what waits in a deployment's queue: a sequence of a generation
// or a sample of a run.
type job interface {
	comparable
	// expired fails the job if its caller has gone, and reports whether
	// it did.
	expired() bool
	fail(err error)
}

// admit fills the free slots (the zero J) from q, then publishes how
// many are active; while none is, it blocks for the next job. reset
// prepares a slot for its new job. It returns false when done closes.
func admit[J job](q <-chan J, done <-chan struct{}, slots []J, reset func(slot int), publish func(active int)) (int, bool) {
	var none J
	for {
		active, empty := 0, false
		for i := range slots {
			// Once the queue is found empty, the other free slots wait for
			// the next pass rather than each look again.
			if slots[i] == none && !empty {
				select {
				case j := <-q:
					if !j.expired() {
						slots[i] = j
						reset(i)
					}
				default:
					empty = true
				}
			}
			if slots[i] != none {
				active++
			}
		}
		publish(active)
		if active > 0 {
			select {
			case <-done:
				return active, false
			default:
				return active, true
			}
		}
		select {
		case j := <-q:
			if !j.expired() {
				slots[0] = j
				reset(0)
			}
		case <-done:
			return 0, false
		}
	}
}

// setActive publishes this worker's count of sequences in slots.
func (w *worker) setActive(n int) {
	w.d.mu.Lock()
	w.d.active += n - w.active
	w.d.mu.Unlock()
	w.active = n
}

// tick presents one token to every active slot for the program's
// timesteps, then hands each its logits.
func (w *worker) tick() error {
	active, paused := 0, 0
	limit := w.d.rt.opts.MaxPendingEvents
	for i, s := range w.slots {
		if w.on != nil {
			w.on[i] = false
		}
		if s == nil {
			continue
		}
		if s.ctx.Err() != nil {
			s.fail(s.ctx.Err())
			w.free(i)
			continue
		}
		if w.masker != nil && s.rs.streaming && s.rs.pending() >= limit {
			// Its caller is behind: hold the sequence, unstepped, until
			// it catches up.
			paused++
			continue
		}
		w.setHot(i, s.input())
		if w.on != nil {
			w.on[i] = true
		}
		active++
	}
	if active == 0 {
		if paused > 0 {
			time.Sleep(100 * time.Microsecond)
		}
		return nil
	}
	if w.masker != nil {
		if err := w.masker.SetActive(w.on); err != nil {
			return err
		}
	}
	before := w.inst.Counters()
	for step := 0; step < w.steps; step++ {
		if w.pulse && step == 1 {
			for i := range w.slots {
				w.setHot(i, -1)
			}
		}
		if err := w.inst.Step(context.Background(), w.inputs...); err != nil {
			return err
		}
		w.recordActivity()
	}
	st := stepStats(before, w.inst.Counters(), w.steps, active, w.target)
	out := w.inst.Output(0)
	for i, s := range w.slots {
		if s == nil || (w.on != nil && !w.on[i]) {
			continue
		}
		s.stats.add(st)
		s.fed++
		if s.closing != nil {
			s.activity = nil
			if s.fed == len(s.closing) {
				w.saveTurn(i, s)
				w.free(i)
			}
			continue
		}
		last := s.pos == len(s.prompt)-1 // this tick read the prompt's last token
		done := s.advance(out[i*w.vocab : (i+1)*w.vocab])
		if last && s.lead && (s.req.SaveState || w.caching(s)) {
			data := w.checkpoint(i, s, s.prompt)
			if s.req.SaveState {
				s.promptState = data
			}
		}
		if done {
			w.finished(i, s)
		}
	}
	return nil
}

// caching reports whether the sequence's states go to the prefix cache.
func (w *worker) caching(s *seq) bool {
	return w.snap != nil && w.d.rt.cache != nil && !s.req.NoCache
}

// recordActivity adds the neurons that fired in this step to the
// sequences that asked for their activity.
func (w *worker) recordActivity() {
	if w.probe == nil {
		return
	}
	for i, s := range w.slots {
		if s == nil || !s.req.Activity || (w.on != nil && !w.on[i]) {
			continue
		}
		if s.activity == nil {
			s.activity = make([]LayerActivity, len(w.layers))
			for k, l := range w.layers {
				s.activity[k] = LayerActivity{Layer: l.name, Neurons: l.n, Spikes: []int{}}
			}
		}
		for k, l := range w.layers {
			out := w.probe.NodeOutput(l.name)
			if len(out) < (i+1)*l.n {
				continue
			}
			a := &s.activity[k]
			for j, v := range out[i*l.n : (i+1)*l.n] {
				// With one step per token each neuron is listed once; with
				// more, a neuron that fires again is not listed again.
				if v != 0 && len(a.Spikes) < MaxActivitySpikes && (w.steps == 1 || !slices.Contains(a.Spikes, j)) {
					a.Spikes = append(a.Spikes, j)
				}
			}
		}
	}
}

func (w *worker) setHot(slot, id int) {
	base := slot * w.vocab
	if w.hot[slot] >= 0 {
		w.input[base+w.hot[slot]] = 0
	}
	w.hot[slot] = id
	if id >= 0 {
		w.input[base+id] = 1
	}
}

func (w *worker) free(slot int) {
	w.slots[slot] = nil
	w.setHot(slot, -1)
}

// release fails every sequence in a slot.
func (w *worker) release(err error) {
	for i, s := range w.slots {
		if s != nil {
			s.fail(err)
			w.free(i)
		}
	}
}

func (d *Deployment) replicaFailed(err error) {
	d.mu.Lock()
	d.live--
	last := d.live == 0
	if last {
		d.status, d.failure = StatusFailed, err
	}
	d.mu.Unlock()
	d.rt.log.Error("deployment replica failed", "deployment", d.ID, "error", err)
	if last {
		for {
			select {
			case s := <-d.queue:
				s.fail(err)
			case s := <-d.runq:
				s.fail(err)
			default:
				return
			}
		}
	}
}
