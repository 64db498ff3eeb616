package snn

import (
	"fmt"
	"slices"
)

// VarOut names a node's output in a Probe: the values the node sends on
// its edges (spikes, currents, or the membrane of a non-spiking neuron).
// Every node has it; VarV and VarI exist only on neuron nodes.
const VarOut = "out"

// SpikeEvent is one spike: neuron Index of batch slot Slot fired in the
// step after which the simulator's Time was Step. Its time is Step × dt
// seconds, the end of that step, when the threshold is tested.
type SpikeEvent struct {
	Step  int64
	Slot  int32
	Index int32
}

// Probe chooses values to sample at every recorded step: a variable of
// some neurons of one node.
type Probe struct {
	Node string
	// Var is VarV (the default when empty), VarI or VarOut.
	Var string
	// Neurons are the indices sampled within a slot. Nil means all.
	Neurons []int
}

// RecorderOptions choose what a Recorder keeps. The zero value records
// the spikes of every spiking node (IF, LIF, CubaLIF, Threshold) in every
// batch slot.
type RecorderOptions struct {
	// Spikes names the nodes whose spikes are recorded as events. A spike
	// is any non-zero output, so a node with graded outputs (an Input fed
	// currents, say) records every non-zero value as an event; probe it
	// with VarOut to keep the values. If Spikes and Probes are both empty,
	// every spiking node is recorded.
	Spikes []string
	// Probes are the traces sampled at every recorded step.
	Probes []Probe
	// Slots are the batch slots recorded. Nil means all.
	Slots []int
	// Steps is the number of steps expected to be recorded: memory for
	// the traces is reserved up front so that recording them never grows
	// a buffer. Optional: without it buffers grow as needed.
	Steps int
}

// Recorder keeps what happens in a Simulator: spike events of chosen nodes
// and traces of chosen state variables, for chosen batch slots. Call
// Record after each Simulator.Step, or Step instead of both. Recording
// allocates nothing beyond the amortised growth of the recording itself.
// A Recorder is not safe for concurrent use, nor for use concurrent with
// its simulator's Step.
type Recorder struct {
	sim     *Simulator
	slots   []int
	spikes  []spikeRec
	byNode  map[string]int // index into spikes
	probes  []probeRec
	steps   []int64
	scratch []float32
}

type spikeRec struct {
	node   string
	size   int
	events []SpikeEvent
}

type probeRec struct {
	Probe       // resolved: Var set, Neurons explicit
	size  int   // neurons per slot
	col   []int // neuron index -> column in a sample, -1 when not probed
	whole bool  // read with State (all slots at once) rather than StateAt
	// data holds one sample per recorded step: len(slots) × len(Neurons)
	// values, slot-major.
	data []float32
}

// NewRecorder returns a Recorder of sim. Unknown nodes and variables
// return an error wrapping ErrNoState; bad slots or neuron indices, and
// anything listed twice, are errors too.
func NewRecorder(sim *Simulator, opts *RecorderOptions) (*Recorder, error) {
	if sim == nil {
		return nil, fmt.Errorf("snn: NewRecorder: nil simulator")
	}
	var o RecorderOptions
	if opts != nil {
		o = *opts
	}
	if o.Steps < 0 {
		return nil, fmt.Errorf("snn: NewRecorder: Steps is %d, must be >= 0", o.Steps)
	}
	r := &Recorder{sim: sim, byNode: map[string]int{}}
	batch := sim.Batch()

	if o.Slots == nil {
		for k := 0; k < batch; k++ {
			r.slots = append(r.slots, k)
		}
	} else {
		seen := map[int]bool{}
		for _, k := range o.Slots {
			if k < 0 || k >= batch {
				return nil, fmt.Errorf("snn: NewRecorder: slot %d out of range [0, %d)", k, batch)
			}
			if seen[k] {
				return nil, fmt.Errorf("snn: NewRecorder: slot %d listed twice", k)
			}
			seen[k] = true
		}
		r.slots = slices.Clone(o.Slots)
	}

	spikeNodes := o.Spikes
	if len(o.Spikes) == 0 && len(o.Probes) == 0 {
		for _, name := range sim.Graph().Names() {
			if IsSpiking(sim.Graph().Nodes[name].Kind()) {
				spikeNodes = append(spikeNodes, name)
			}
		}
	}
	for _, name := range spikeNodes {
		out := sim.NodeOutput(name)
		if out == nil {
			return nil, fmt.Errorf("snn: NewRecorder: spikes: %w: no node %q", ErrNoState, name)
		}
		if _, dup := r.byNode[name]; dup {
			return nil, fmt.Errorf("snn: NewRecorder: spikes: node %q listed twice", name)
		}
		r.byNode[name] = len(r.spikes)
		r.spikes = append(r.spikes, spikeRec{node: name, size: len(out) / batch})
	}

	for i, p := range o.Probes {
		pr, err := r.newProbe(p)
		if err != nil {
			return nil, fmt.Errorf("snn: NewRecorder: Probes[%d]: %w", i, err)
		}
		for _, q := range r.probes {
			if q.Node == pr.Node && q.Var == pr.Var {
				return nil, fmt.Errorf("snn: NewRecorder: Probes[%d]: node %q variable %q probed twice", i, p.Node, pr.Var)
			}
		}
		pr.data = make([]float32, 0, o.Steps*len(r.slots)*len(pr.Neurons))
		r.probes = append(r.probes, pr)
	}
	r.steps = make([]int64, 0, o.Steps)
	return r, nil
}

func (r *Recorder) newProbe(p Probe) (probeRec, error) {
	if p.Var == "" {
		p.Var = VarV
	}
	out := r.sim.NodeOutput(p.Node)
	if out == nil {
		return probeRec{}, fmt.Errorf("%w: no node %q", ErrNoState, p.Node)
	}
	batch := r.sim.Batch()
	size := len(out) / batch
	if p.Var != VarOut {
		// StateAt checks the node kind and the variable; a neuron node has
		// one state value per output.
		if _, err := r.sim.StateAt(p.Node, p.Var, 0, 0); err != nil {
			return probeRec{}, err
		}
	}
	pr := probeRec{size: size, col: make([]int, size)}
	for j := range pr.col {
		pr.col[j] = -1
	}
	if p.Neurons == nil {
		p.Neurons = make([]int, size)
		for j := range p.Neurons {
			p.Neurons[j] = j
		}
	} else {
		p.Neurons = slices.Clone(p.Neurons)
	}
	for c, j := range p.Neurons {
		if j < 0 || j >= size {
			return probeRec{}, fmt.Errorf("neuron %d out of range [0, %d) of node %q", j, size, p.Node)
		}
		if pr.col[j] >= 0 {
			return probeRec{}, fmt.Errorf("neuron %d of node %q listed twice", j, p.Node)
		}
		pr.col[j] = c
	}
	pr.Probe = p
	// Copying the whole variable costs batch × size; looking values up one
	// by one costs a map look-up each. Copy when most of it is wanted.
	pr.whole = p.Var != VarOut && 4*len(p.Neurons)*len(r.slots) >= batch*size
	return pr, nil
}

// Record samples the simulator as it is now: the spikes of the last step
// and the current value of every probe. Call it once after each Step (or
// once before the first, to sample the initial state). Recording the same
// step twice is an error.
func (r *Recorder) Record() error {
	t := r.sim.Time()
	if n := len(r.steps); n > 0 && r.steps[n-1] == t {
		return fmt.Errorf("snn: Recorder.Record: step %d already recorded", t)
	}
	for i := range r.spikes {
		sr := &r.spikes[i]
		out := r.sim.NodeOutput(sr.node)
		for _, k := range r.slots {
			for j, v := range out[k*sr.size : (k+1)*sr.size] {
				if v != 0 {
					sr.events = append(sr.events, SpikeEvent{Step: t, Slot: int32(k), Index: int32(j)})
				}
			}
		}
	}
	for i := range r.probes {
		if err := r.sample(&r.probes[i]); err != nil {
			return err
		}
	}
	r.steps = append(r.steps, t)
	return nil
}

func (r *Recorder) sample(p *probeRec) error {
	var src []float32
	switch {
	case p.Var == VarOut:
		src = r.sim.NodeOutput(p.Node)
	case p.whole:
		var err error
		r.scratch, err = r.sim.State(r.scratch, p.Node, p.Var)
		if err != nil {
			return err
		}
		src = r.scratch
	}
	for _, k := range r.slots {
		if src != nil {
			row := src[k*p.size : (k+1)*p.size]
			for _, j := range p.Neurons {
				p.data = append(p.data, row[j])
			}
			continue
		}
		for _, j := range p.Neurons {
			v, err := r.sim.StateAt(p.Node, p.Var, k, j)
			if err != nil {
				return err
			}
			p.data = append(p.data, v)
		}
	}
	return nil
}

// Step steps the simulator with the given inputs (as Simulator.Step) and
// records the result.
func (r *Recorder) Step(inputs ...[]float32) error {
	if err := r.sim.Step(inputs...); err != nil {
		return err
	}
	return r.Record()
}

// Simulator returns the simulator recorded.
func (r *Recorder) Simulator() *Simulator { return r.sim }

// Dt is the simulator's time step in seconds.
func (r *Recorder) Dt() float64 { return r.sim.Dt() }

// Slots returns the batch slots recorded.
func (r *Recorder) Slots() []int { return slices.Clone(r.slots) }

// Len is the number of recorded steps.
func (r *Recorder) Len() int { return len(r.steps) }

// Steps returns the simulator's Time at each recorded step: the k-th value
// of every trace was sampled at step Steps()[k]. The slice is the
// recorder's own; do not modify it.
func (r *Recorder) Steps() []int64 { return r.steps[:len(r.steps):len(r.steps)] }

// Times returns the time in seconds of each recorded step (Steps × dt).
func (r *Recorder) Times() []float64 {
	dt := r.sim.Dt()
	ts := make([]float64, len(r.steps))
	for i, s := range r.steps {
		ts[i] = float64(s) * dt
	}
	return ts
}

// SpikeNodes returns the nodes whose spikes are recorded, in order.
func (r *Recorder) SpikeNodes() []string {
	names := make([]string, len(r.spikes))
	for i, s := range r.spikes {
		names[i] = s.node
	}
	return names
}

// Spikes returns the spike events of a node, in order of step, slot and
// index, or nil if the node's spikes are not recorded. The slice is the
// recorder's own; do not modify it. Later recording appends to the
// recorder's copy without changing the events already returned.
func (r *Recorder) Spikes(node string) []SpikeEvent {
	i, ok := r.byNode[node]
	if !ok {
		return nil
	}
	ev := r.spikes[i].events
	return ev[:len(ev):len(ev)]
}

// Probes returns the probes recorded, with Var and Neurons filled in.
func (r *Recorder) Probes() []Probe {
	ps := make([]Probe, len(r.probes))
	for i, p := range r.probes {
		ps[i] = Probe{Node: p.Node, Var: p.Var, Neurons: slices.Clone(p.Neurons)}
	}
	return ps
}

// Trace returns the samples of one neuron's variable in one slot, one per
// recorded step (see Steps and Times), as a new slice; nil if that neuron,
// variable or slot is not recorded. An empty variable means VarV.
func (r *Recorder) Trace(node, variable string, slot, neuron int) []float32 {
	if variable == "" {
		variable = VarV
	}
	s := slices.Index(r.slots, slot)
	if s < 0 {
		return nil
	}
	for i := range r.probes {
		p := &r.probes[i]
		if p.Node != node || p.Var != variable {
			continue
		}
		if neuron < 0 || neuron >= p.size || p.col[neuron] < 0 {
			return nil
		}
		stride := len(r.slots) * len(p.Neurons)
		off := s*len(p.Neurons) + p.col[neuron]
		tr := make([]float32, len(r.steps))
		for k := range tr {
			tr[k] = p.data[k*stride+off]
		}
		return tr
	}
	return nil
}

// Clear forgets everything recorded so far, keeping the memory for what
// is recorded next: slices returned by Spikes and Steps before Clear are
// overwritten by later recording.
func (r *Recorder) Clear() {
	for i := range r.spikes {
		r.spikes[i].events = r.spikes[i].events[:0]
	}
	for i := range r.probes {
		r.probes[i].data = r.probes[i].data[:0]
	}
	r.steps = r.steps[:0]
}
