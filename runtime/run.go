package runtime

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	goruntime "runtime"
	"slices"
	"sync"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/snn"
)

// ErrNotNetwork is returned when a run is asked of a language model's
// deployment: those serve generation.
var ErrNotNetwork = errors.New("runtime: deployment serves a language model, not a network")

// RunRequest asks a deployment of a network (not a language model) to
// run samples.
type RunRequest struct {
	Deployment string
	// Model, when set, must be the deployment's model.
	Model   string
	Samples []Sample
	// Timesteps is how long each sample runs. Default: a matrix's rows,
	// an event sample's Timesteps, or else the program's timesteps per
	// sample. A sample that says otherwise is refused.
	Timesteps int
	// Spikes and Membrane ask for the output layer's spikes ([t, i]
	// pairs) and its membrane at every step.
	Spikes, Membrane bool
	// Seed makes rate-encoded inputs reproducible: sample k draws from
	// seed+k, so a sample gives the same result alone or in a batch.
	// Default 0.
	Seed int64
	// Principal and Endpoint are for telemetry.
	Principal, Endpoint string
}

// Sample is one input of a run: exactly one of Vector, Matrix, Events
// and Raster.
type Sample struct {
	// Vector is presented at every step through the network's input
	// encoding (as a current, spikes, or a spike probability).
	Vector []float32
	// Matrix holds one row of input per step.
	Matrix [][]float32
	// Events are input spikes: neuron Events[k].I fires at step
	// Events[k].T. Timesteps says how long the sample runs.
	Events []SpikeEvent
	// Raster holds the same spikes as bits, a row of the network's n
	// inputs per step: input i fires at step t where bit t·n+i is set,
	// bit k being bit k%8 of byte k/8 (least significant first, as
	// numpy.packbits writes with bitorder="little"). It is exactly
	// ⌈Timesteps·n/8⌉ bytes, its bits past the last step zero. For
	// dense spike trains (rate-coded images, say) it is far smaller than
	// the events.
	Raster    []byte
	Timesteps int
}

// SpikeEvent is one spike: neuron I at step T.
type SpikeEvent struct{ T, I int }

// RunResult is what a run produced, one Output per sample in order.
type RunResult struct {
	Model, Deployment string
	Outputs           []RunOutput
	Usage             RunUsage
	// Warnings say what the device changed, such as its quantisation.
	Warnings []string
}

// RunOutput is one sample's result.
type RunOutput struct {
	// SpikeCounts are the output layer's spikes summed over the run or,
	// for an output without spikes (a leaky integrator readout), its
	// final values.
	SpikeCounts []float32
	// Prediction is the index of the largest count, the lowest on ties.
	Prediction int
	// FinalState is the output layer's membrane after the last step
	// where the device exposes it, else its final output values.
	FinalState []float32
	// Spikes and Membrane are the recordings asked for.
	Spikes   []SpikeEvent
	Membrane [][]float32
}

// RunUsage is what a run cost. Spikes, synaptic operations and energy
// are the device's counters of each step, shared equally among the
// samples stepped in it.
type RunUsage struct {
	Samples          int
	Timesteps        int64
	Spikes           float64
	SynapticOps      float64
	NeuronUpdates    float64
	SpikingUpdates   float64
	EnergyMicrojoule float64
	// DeviceTime is the device's own time for the steps: the latency
	// model of a chip, or the time the CPU simulator took.
	DeviceTime time.Duration
}

// Run runs samples on a network deployment. Samples share the
// deployment's batch slots with other requests' and each gives the same
// outputs alone or in a batch. Bad samples are refused before anything
// runs, with a ParamError whose Param names the sample ("inputs[3]").
func (r *Runtime) Run(ctx context.Context, req *RunRequest) (*RunResult, error) {
	start := r.opts.Now()
	res, err := r.run(ctx, req)
	r.telemetry.recordRun(req, res, err, start, r.opts.Now())
	return res, err
}

func (r *Runtime) run(ctx context.Context, req *RunRequest) (*RunResult, error) {
	d, err := r.deploymentOf(req.Deployment, req.Principal, req.Model)
	if err != nil {
		return nil, err
	}
	if d.Model.IsLanguageModel() {
		return nil, fmt.Errorf("%w: %q serves %s", ErrNotNetwork, d.ID, d.Model.ID)
	}
	if st := d.Status(); st != StatusReady {
		return nil, fmt.Errorf("%w: deployment %q is %s", ErrDeviceUnavailable, d.ID, st)
	}
	if len(req.Samples) == 0 {
		return nil, &ParamError{"inputs", "at least one sample is required"}
	}
	n, m := d.ports()
	samples := make([]*sample, len(req.Samples))
	res := &RunResult{Model: d.Model.ID, Deployment: d.ID, Outputs: make([]RunOutput, len(req.Samples)), Warnings: d.warnings()}
	if req.Membrane && !d.membrane {
		res.Warnings = append(res.Warnings, fmt.Sprintf("no membrane was recorded: %s does not report the output layer's membrane (the cpu simulator does)", d.Device.Name))
	}
	var wg sync.WaitGroup
	prepare := func(lo, hi int) error {
		for k := lo; k < hi; k++ {
			// A caller that has gone stops the preparation too, not only
			// the steps: a run's inputs may be large.
			if err := ctx.Err(); err != nil {
				return err
			}
			s, err := d.newSample(ctx, req, k, n, m, &res.Outputs[k], &wg)
			if err != nil {
				return err
			}
			samples[k] = s
		}
		return nil
	}
	// A large run's samples are prepared in parts on as many goroutines
	// as there are processors. The error is the first in sample order,
	// as preparing them in order finds it.
	parts := 1
	if len(req.Samples) > 1 && inputValues(req.Samples) >= parallelPrepare {
		parts = min(goruntime.GOMAXPROCS(0), len(req.Samples), 8)
	}
	if parts == 1 {
		if err := prepare(0, len(req.Samples)); err != nil {
			return nil, err
		}
	} else {
		errs := make([]error, parts)
		var prep sync.WaitGroup
		for p := range parts {
			lo, hi := p*len(req.Samples)/parts, (p+1)*len(req.Samples)/parts
			prep.Go(func() { errs[p] = prepare(lo, hi) })
		}
		prep.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
	}
	wg.Add(len(samples))
	if err := enqueue(d, d.runq, samples, "inputs", "samples"); err != nil {
		return nil, err
	}
	wg.Wait()
	for _, s := range samples {
		if s.err != nil {
			return nil, s.err
		}
		u := &res.Usage
		u.Samples++
		u.Timesteps += int64(s.steps)
		u.Spikes += s.stats.Spikes
		u.SynapticOps += s.stats.SynapticOps
		u.NeuronUpdates += s.stats.NeuronUpdates
		u.SpikingUpdates += s.stats.SpikingUpdates
		u.EnergyMicrojoule += s.stats.EnergyMicrojoule
		u.DeviceTime += s.deviceTime
	}
	return res, nil
}

// parallelPrepare is the number of input values (events, or a matrix's
// or vector's numbers) from which a run prepares its samples on several
// goroutines.
const parallelPrepare = 1 << 16

// inputValues counts the values of samples' inputs.
func inputValues(samples []Sample) int {
	n := 0
	for _, x := range samples {
		n += len(x.Events) + len(x.Vector) + 8*len(x.Raster)
		for _, row := range x.Matrix {
			n += len(row)
		}
	}
	return n
}

// ports returns the sizes of the deployment's input and output.
func (d *Deployment) ports() (in, out int) { return d.Model.Ports() }

// Ports returns the sizes of a network's Input and Output: the values
// each step of a sample takes, and those each gives (its spike_counts
// and final_state). Zero for a model without them.
func (m *Model) Ports() (in, out int) {
	if m.ports != nil {
		return m.ports[0], m.ports[1]
	}
	if m.Program == nil || m.Program.Graph == nil {
		return 0, 0
	}
	g := m.Program.Graph
	shapes, err := g.Shapes() // validated when the model was registered
	ins, outs := g.NamesOfKind(snn.KindInput), g.NamesOfKind(snn.KindOutput)
	if err != nil || len(ins) == 0 || len(outs) == 0 {
		return 0, 0
	}
	return snn.Size(shapes[ins[0]].Out), snn.Size(shapes[outs[0]].Out)
}

// warnings say what the device does to the network.
func (d *Deployment) warnings() []string {
	t := d.Device.Target
	if d.Device.Kind == hal.KindCPU || t.WeightBits == 0 {
		return []string{}
	}
	return []string{fmt.Sprintf("%s runs the network bit-accurately in fixed point: weights quantised to %d bits, state to %d bits; outputs differ from the float simulator's by that rounding",
		d.Device.Name, t.WeightBits, t.StateBits)}
}

// sample is one sample of a run, owned by a network worker once
// admitted.
type sample struct {
	ctx    context.Context
	output *RunOutput
	wg     *sync.WaitGroup
	steps  int
	t      int
	vector []float32
	matrix [][]float32
	// An event sample's spikes, sorted by step and then input, each once:
	// the inputs is, and for each step that has spikes, in order, the step
	// and where its inputs end in is.
	is       []int32
	runs     []stepRun
	next     int // the next step's run
	rate     bool
	rng      *rand.Rand
	spiking  bool
	spikes   bool
	membrane bool

	stats      Stats
	deviceTime time.Duration
	err        error
	done       bool
}

func (d *Deployment) newSample(ctx context.Context, req *RunRequest, k, n, m int, out *RunOutput, wg *sync.WaitGroup) (*sample, error) {
	x := req.Samples[k]
	param := fmt.Sprintf("inputs[%d]", k)
	bad := func(format string, a ...any) error { return &ParamError{param, fmt.Sprintf(format, a...)} }
	p := d.Model.Program
	s := &sample{ctx: ctx, output: out, wg: wg, spikes: req.Spikes, membrane: req.Membrane,
		spiking: d.spikingOutput, steps: req.Timesteps}
	forms := 0
	for _, given := range []bool{x.Vector != nil, x.Matrix != nil, x.Events != nil || x.Raster != nil || x.Timesteps != 0} {
		if given {
			forms++
		}
	}
	if forms != 1 {
		return nil, bad("a sample is one of a vector of %d values, a matrix of rows of %d values, {events, timesteps} or {raster, timesteps}", n, n)
	}
	finite := func(v []float32) bool {
		for _, f := range v {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return false
			}
		}
		return true
	}
	switch {
	case x.Vector != nil:
		if len(x.Vector) != n {
			return nil, bad("has %d values, the network takes %d", len(x.Vector), n)
		}
		if !finite(x.Vector) {
			return nil, bad("holds NaN or an infinity")
		}
		if p.Input.Kind == compile.InputRate {
			for i, v := range x.Vector {
				if v < 0 || v > 1 {
					return nil, bad("value %d is %v; the network's rate encoding takes probabilities in [0, 1]", i, v)
				}
			}
			s.rate = true
			s.rng = rand.New(rand.NewPCG(uint64(req.Seed)+uint64(k), 0x6e6575726f))
		}
		s.vector = x.Vector
		if s.steps == 0 {
			s.steps = p.Timesteps
		}
	case x.Matrix != nil:
		if len(x.Matrix) == 0 {
			return nil, bad("the matrix has no rows")
		}
		for t, row := range x.Matrix {
			if len(row) != n {
				return nil, bad("row %d has %d values, the network takes %d", t, len(row), n)
			}
			if !finite(row) {
				return nil, bad("row %d holds NaN or an infinity", t)
			}
		}
		if s.steps != 0 && s.steps != len(x.Matrix) {
			return nil, bad("the matrix has %d rows, timesteps is %d", len(x.Matrix), s.steps)
		}
		s.matrix, s.steps = x.Matrix, len(x.Matrix)
	default:
		if x.Timesteps < 1 {
			return nil, bad("an event sample needs timesteps of at least 1")
		}
		if s.steps != 0 && s.steps != x.Timesteps {
			return nil, bad("the sample says %d timesteps, the request %d", x.Timesteps, s.steps)
		}
		s.steps = x.Timesteps
		if x.Raster != nil {
			if x.Events != nil {
				return nil, bad("give events or a raster, not both")
			}
			var err string
			if s.runs, s.is, err = unraster(x.Raster, s.steps, n); err != "" {
				return nil, bad("%s", err)
			}
			break
		}
		sorted, last := true, SpikeEvent{-1, -1}
		for j, e := range x.Events {
			if uint(e.T) >= uint(s.steps) {
				return nil, bad("event %d is at step %d, outside [0, %d)", j, e.T, s.steps)
			}
			if uint(e.I) >= uint(n) {
				return nil, bad("event %d is on input %d, outside [0, %d)", j, e.I, n)
			}
			if e.T < last.T || e.T == last.T && e.I < last.I {
				sorted = false
			}
			last = e
		}
		ev := x.Events
		if !sorted {
			ev = slices.Clone(ev)
			sortEvents(ev)
		}
		is := make([]int32, len(ev))
		k := 0
		for j, e := range ev {
			if j > 0 && e == ev[j-1] {
				continue // the same spike twice
			}
			if j == 0 || e.T != ev[j-1].T {
				s.runs = append(s.runs, stepRun{e.T, k})
			}
			is[k] = int32(e.I)
			k++
			s.runs[len(s.runs)-1].end = k
		}
		s.is = is[:k]
	}
	if s.steps < 1 {
		return nil, bad("the network has no timesteps per sample; give timesteps")
	}
	out.SpikeCounts = make([]float32, m)
	return s, nil
}

// unraster reads a Sample's Raster of steps rows of n inputs into its
// spikes, in order: their inputs, and the steps that have spikes with
// where each one's end in is. A bad raster is named in the text returned.
func unraster(r []byte, steps, n int) (runs []stepRun, is []int32, bad string) {
	if n > 0 && steps > math.MaxInt/8/n {
		return nil, nil, fmt.Sprintf("%d timesteps of %d inputs are too many for a raster", steps, n)
	}
	cells := steps * n
	if want := (cells + 7) / 8; len(r) != want {
		return nil, nil, fmt.Sprintf("the raster holds %d bytes; %d timesteps of %d inputs take %d", len(r), steps, n, want)
	}
	if cells%8 != 0 && r[len(r)-1]>>(cells%8) != 0 {
		return nil, nil, fmt.Sprintf("the raster sets bits past its %d timesteps of %d inputs", steps, n)
	}
	spikes := 0
	for _, b := range r {
		spikes += bits.OnesCount8(b)
	}
	is = make([]int32, 0, spikes)
	for j, b := range r {
		for ; b != 0; b &= b - 1 {
			k := 8*j + bits.TrailingZeros8(b)
			if t := k / n; len(runs) == 0 || runs[len(runs)-1].t != t {
				runs = append(runs, stepRun{t, len(is)})
			}
			is = append(is, int32(k%n))
			runs[len(runs)-1].end = len(is)
		}
	}
	return runs, is, ""
}

// stepRun is a step that has spikes, and where they end in the
// sample's inputs.
type stepRun struct{ t, end int }

// sortEvents orders events by step and, within a step, by input, in
// O(n log n); events usually come sorted, and are then left alone.
func sortEvents(ev []SpikeEvent) {
	if !slices.IsSortedFunc(ev, byStep) {
		slices.SortFunc(ev, byStep)
	}
}

// byStep orders events by step, then by input. A variable, so that a
// test can count the comparisons a sort makes.
var byStep = func(a, b SpikeEvent) int {
	if c := cmp.Compare(a.T, b.T); c != 0 {
		return c
	}
	return cmp.Compare(a.I, b.I)
}

// input writes the sample's input for its current step into x.
func (s *sample) input(x []float32) {
	switch {
	case s.vector != nil && s.rate:
		for i, p := range s.vector {
			x[i] = 0
			if s.rng.Float32() < p {
				x[i] = 1
			}
		}
	case s.vector != nil:
		copy(x, s.vector)
	case s.matrix != nil:
		copy(x, s.matrix[s.t])
	default:
		clear(x)
		for _, i := range s.firing() {
			x[i] = 1
		}
	}
}

// firing returns the inputs that spike at an event sample's current
// step, in increasing order and each once, and moves past them.
func (s *sample) firing() []int32 {
	lo := 0
	if s.next > 0 {
		lo = s.runs[s.next-1].end
	}
	if s.next == len(s.runs) || s.runs[s.next].t != s.t {
		return s.is[lo:lo]
	}
	s.next++
	return s.is[lo:s.runs[s.next-1].end]
}

// isEvents reports whether the sample is given as events.
func (s *sample) isEvents() bool { return s.vector == nil && s.matrix == nil }

// observe takes the output after the sample's step.
func (s *sample) observe(y []float32) {
	out := s.output
	if s.spiking {
		for i, v := range y {
			if v != 0 {
				out.SpikeCounts[i] += v
				if s.spikes {
					out.Spikes = append(out.Spikes, SpikeEvent{s.t, i})
				}
			}
		}
	}
	s.t++
	if s.t == s.steps && !s.spiking {
		copy(out.SpikeCounts, y)
	}
}

func (s *sample) finish(final []float32) {
	out := s.output
	out.FinalState = final
	best := 0
	for i, v := range out.SpikeCounts {
		if v > out.SpikeCounts[best] {
			best = i
		}
	}
	out.Prediction = best
	s.done = true
	s.wg.Done()
}

func (s *sample) expired() bool {
	if err := s.ctx.Err(); err != nil {
		s.fail(err)
		return true
	}
	return false
}

func (s *sample) fail(err error) {
	if s.done {
		return
	}
	s.err, s.done = err, true
	s.wg.Done()
}

// netWorker steps one Instance of a network: each slot runs one sample
// for its timesteps, and a slot that finishes takes the next sample
// between steps.
type netWorker struct {
	d      *Deployment
	inst   hal.Instance
	slots  []*sample
	x      []float32
	xs     [][]float32 // {x}, so that Step's variadic call allocates nothing
	n, m   int
	masker hal.SlotMasker
	on     []bool
	active int
	// stepper, when the instance has it, takes the input as spikes
	// whenever every stepped sample is an event sample, each slot's in
	// lists (slices of the samples' own).
	stepper  hal.EventStepper
	lists    [][]int32
	probe    string // the output layer's neuron node, for membranes
	sim      *snn.Simulator
	stateBuf []float32
}

func newNetWorker(d *Deployment, in hal.Instance) *netWorker {
	n, m := in.Inputs()[0].Size, in.Outputs()[0].Size
	w := &netWorker{d: d, inst: in, slots: make([]*sample, in.Batch()), x: make([]float32, in.Batch()*n), n: n, m: m, probe: d.outputNeuron}
	w.xs = [][]float32{w.x}
	if ms, ok := in.(hal.SlotMasker); ok {
		w.masker, w.on = ms, make([]bool, in.Batch())
	}
	if es, ok := in.(hal.EventStepper); ok && len(in.Inputs()) == 1 {
		w.stepper, w.lists = es, make([][]int32, in.Batch())
	}
	if sr, ok := in.(interface{ Simulator() *snn.Simulator }); ok {
		w.sim = sr.Simulator()
	}
	return w
}

func (w *netWorker) setActive(n int) {
	if n == w.active {
		return
	}
	w.d.mu.Lock()
	w.d.active += n - w.active
	w.d.mu.Unlock()
	w.active = n
}

func (w *netWorker) run() {
	defer w.d.wg.Done()
	defer w.inst.Close()
	defer w.setActive(0)
	for {
		if _, ok := admit(w.d.runq, w.d.done, w.slots, func(i int) { w.inst.Reset(i) }, w.setActive); !ok {
			w.release(ErrClosed)
			return
		}
		if err := w.step(); err != nil {
			err = fmt.Errorf("%w: %s: %w", ErrDeviceUnavailable, w.d.Device.Name, err)
			w.release(err)
			w.d.replicaFailed(err)
			return
		}
	}
}

// needState reports whether a sample stepped now records its membrane or
// ends (its final state).
func (w *netWorker) needState() bool {
	for i, s := range w.slots {
		if s != nil && (w.on == nil || w.on[i]) && (s.membrane || s.t+1 == s.steps) {
			return true
		}
	}
	return false
}

func (w *netWorker) release(err error) {
	for i, s := range w.slots {
		if s != nil {
			s.fail(err)
			w.slots[i] = nil
		}
	}
}

// step advances every active sample by one timestep.
func (w *netWorker) step() error {
	events := w.stepper != nil
	for _, s := range w.slots {
		if s != nil && !s.isEvents() {
			events = false
			break
		}
	}
	active := 0
	for i, s := range w.slots {
		if w.on != nil {
			w.on[i] = false
		}
		if events {
			w.lists[i] = nil
		}
		if s == nil {
			continue
		}
		if s.expired() {
			w.slots[i] = nil
			continue
		}
		if events {
			w.lists[i] = s.firing()
		} else {
			s.input(w.x[i*w.n : (i+1)*w.n])
		}
		if w.on != nil {
			w.on[i] = true
		}
		active++
	}
	if active == 0 {
		return nil
	}
	if w.masker != nil {
		if err := w.masker.SetActive(w.on); err != nil {
			return err
		}
	}
	before := w.inst.Counters()
	t0 := time.Now()
	var err error
	if events {
		err = w.stepper.StepEvents(context.Background(), w.lists)
	} else {
		err = w.inst.Step(context.Background(), w.xs...)
	}
	if err != nil {
		return err
	}
	took := time.Since(t0)
	target := w.d.Device.Target
	st := stepStats(before, w.inst.Counters(), 1, active, target)
	devTime := took / time.Duration(active)
	if w.d.Device.Kind != hal.KindCPU && target.Latency.PerStepNS > 0 {
		devTime = time.Duration(target.Latency.PerStepNS)
	}
	y := w.inst.Output(0)
	var state []float32
	if w.sim != nil && w.probe != "" && w.needState() {
		state, _ = w.sim.State(w.stateBuf, w.probe, snn.VarV)
		w.stateBuf = state
	}
	for i, s := range w.slots {
		if s == nil || (w.on != nil && !w.on[i]) {
			continue
		}
		s.stats.add(st)
		s.deviceTime += devTime
		s.observe(y[i*w.m : (i+1)*w.m])
		var v []float32
		if state != nil {
			v = state[i*w.m : (i+1)*w.m]
			if s.membrane {
				s.output.Membrane = append(s.output.Membrane, append([]float32(nil), v...))
			}
		}
		if s.t == s.steps {
			final := append([]float32(nil), y[i*w.m:(i+1)*w.m]...)
			if v != nil {
				final = append([]float32(nil), v...)
			}
			s.finish(final)
			w.slots[i] = nil
		}
	}
	return nil
}
