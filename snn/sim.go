package snn

import (
	"errors"
	"fmt"
	"math"
)

// Options configure a Simulator. The zero value works: dt of 1 ms, one
// batch slot.
type Options struct {
	// Dt is the time step in seconds. Default 1e-3.
	Dt float64
	// Batch is the number of independent states stepped together. Default 1.
	Batch int
	// EventFraction is the largest fraction of non-zero inputs for which a
	// synapse node propagates event by event (gathering only the weight
	// columns of active inputs) instead of by a dense product. Default 0.25.
	EventFraction float64
	// SparseDensity is the largest fraction of non-zero weights for which a
	// Linear or Affine weight is stored as compressed columns. Default 0.2.
	SparseDensity float64
	// MaxStateBytes bounds the memory the plan may allocate beyond the
	// graph's own weights (buffers, states, delay lines, convolution
	// tables); NewSimulator checks it before allocating. Default 4 GiB.
	MaxStateBytes int64
	// Workers is how many goroutines one Step may use: dense synapse
	// products of at least 65,536 multiply-adds are split by output columns
	// among them. Default 1 (Step runs on the caller's goroutine alone).
	Workers int
	// Weights is the precision of the weights of dense synapse products
	// (Linear and Affine nodes not stored as compressed columns). Default
	// Float32, exact; BFloat16 halves the bytes each product streams, Int8
	// quarters them.
	Weights Precision
}

func (o *Options) withDefaults() (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	if c.Dt == 0 {
		c.Dt = 1e-3
	}
	if !(c.Dt > 0) || math.IsInf(c.Dt, 0) {
		return c, fmt.Errorf("snn: Options.Dt is %v, must be a positive finite number of seconds", c.Dt)
	}
	if c.Batch == 0 {
		c.Batch = 1
	}
	if c.Batch < 0 || c.Batch > 1<<20 {
		return c, fmt.Errorf("snn: Options.Batch is %d, must be between 1 and %d", c.Batch, 1<<20)
	}
	if c.Weights > Int8 {
		return c, fmt.Errorf("snn: Options.Weights is %v, must be Float32, BFloat16 or Int8", c.Weights)
	}
	if c.EventFraction == 0 {
		c.EventFraction = 0.25
	}
	if c.SparseDensity == 0 {
		c.SparseDensity = 0.2
	}
	if c.MaxStateBytes == 0 {
		c.MaxStateBytes = 4 << 30
	}
	if c.Workers == 0 {
		c.Workers = 1
	}
	if c.Workers < 0 || c.Workers > 256 {
		return c, fmt.Errorf("snn: Options.Workers is %d, must be between 1 and 256", c.Workers)
	}
	return c, nil
}

// Counters say what stepping cost. They accumulate over steps; the
// Simulator also keeps those of the last step.
type Counters struct {
	Steps         int64 // time steps (each of the whole batch)
	NeuronUpdates int64 // updates of neuron nodes (Threshold included), summed over the batch
	Spikes        int64 // spikes emitted by spiking nodes
	SynapticOps   int64 // weight accumulations: for each non-zero input, its fan-out
	// SpikingUpdates are the updates of neurons that can spike: the
	// denominator of a spike rate (leaky integrators never fire).
	SpikingUpdates int64
}

// Add returns the sum of two counters.
func (c Counters) Add(d Counters) Counters {
	return Counters{c.Steps + d.Steps, c.NeuronUpdates + d.NeuronUpdates, c.Spikes + d.Spikes, c.SynapticOps + d.SynapticOps,
		c.SpikingUpdates + d.SpikingUpdates}
}

// ErrInputSize is wrapped by Step when an input has the wrong length.
var ErrInputSize = errors.New("snn: input size mismatch")

// ErrTooLarge is wrapped by NewSimulator's error for a graph whose state
// would pass Options.MaxStateBytes.
var ErrTooLarge = errors.New("snn: graph too large")

// Simulator steps a Graph in discrete time. Build it once with NewSimulator;
// Step then allocates nothing. A Simulator is not safe for concurrent use.
type Simulator struct {
	graph             *Graph
	opts              Options
	batch             int
	nodes             []*simNode
	plan              []*simNode // the nodes a step steps: all but the integrators of fused chains
	byName            map[string]*simNode
	chains            []*simNode // spiking nodes whose fused step updates their integrators (fuseChains)
	inputs            []*simNode
	outputs           []*simNode
	inPorts, outPorts []Port
	slotOn            []bool // nil: every slot steps
	nOn               int
	step              int64
	total             Counters
	last              Counters
	pool              *pool       // nil unless Options.Workers > 1
	slots             *slotLayout // what SaveSlot saves; made on first use
	events            eventInput
}

// eventInput is the buffer StepEvents writes the spikes of the single
// Input node into, apart from the one InputBuffer returns: only StepEvents
// writes it, so a slot's non-zeros are the indices of its last list, and
// the next StepEvents zeroes those instead of the whole slot (at batch 64
// with 700 inputs, 179 KB a step). While StepEvents feeds the network the
// node's out is buf; Step gives it back user.
type eventInput struct {
	buf, user []float32
	// stale marks the slots to clear whole at the next StepEvents: all of
	// them when buf takes over from user, and one whose state was loaded.
	stale []bool
}

// Port is an Input or Output node of a running simulator.
type Port struct {
	Name  string
	Shape []int
	// Size is the number of values per batch slot.
	Size int
}

type source struct {
	node    *simNode
	delayed bool // closes a cycle: reads the value of the previous step
}

// simNode is one node in the plan.
type simNode struct {
	name    string
	kind    Kind
	n, nin  int // per-sample output and input sizes
	batch   int
	srcs    []source
	out     []float32 // batch × n
	in      []float32 // batch × nin, summed inputs of nonlinear nodes with several sources
	selfBuf []float32 // copy of out for a node that feeds itself
	op      operator

	// active holds, per batch slot, the indices of non-zero outputs, valid
	// when activeStep equals the simulator's step.
	active     [][]int32
	activeStep int64
	spiking    bool // out holds only 0 and 1, and the op fills active itself
}

// operator is the kind-specific part of a node.
type operator interface {
	// step computes n.out from the node's sources.
	step(s *Simulator, n *simNode, c *Counters)
	// reset clears the state of one batch slot.
	reset(n *simNode, slot int)
}

// NewSimulator validates g and compiles it into a plan. The graph must not
// be changed while the simulator uses it.
func NewSimulator(g *Graph, opts *Options) (*Simulator, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	shapes, err := g.Shapes()
	if err != nil {
		return nil, err
	}
	if need := planBytes(g, shapes, o); need > o.MaxStateBytes {
		return nil, fmt.Errorf("%w: simulating this graph needs about %d bytes of state, over Options.MaxStateBytes (%d)", ErrTooLarge, need, o.MaxStateBytes)
	}
	s := &Simulator{graph: g, opts: o, batch: o.Batch, byName: map[string]*simNode{}}
	topo := g.Topology()
	for _, name := range topo.Order {
		node := g.Nodes[name]
		sh := shapes[name]
		sn := &simNode{
			name:       name,
			kind:       node.Kind(),
			n:          Size(sh.Out),
			nin:        Size(sh.In),
			batch:      o.Batch,
			active:     make([][]int32, o.Batch),
			activeStep: -1,
		}
		sn.out = make([]float32, o.Batch*sn.n)
		s.nodes = append(s.nodes, sn)
		s.byName[name] = sn
	}
	for i, e := range g.Edges {
		dst := s.byName[e.To]
		dst.srcs = append(dst.srcs, source{node: s.byName[e.From], delayed: topo.Delayed(i)})
	}
	for _, sn := range s.nodes {
		for _, src := range sn.srcs {
			if src.node == sn && sn.selfBuf == nil {
				sn.selfBuf = make([]float32, len(sn.out))
			}
		}
		op, err := s.compileNode(g.Nodes[sn.name], sn, shapes[sn.name])
		if err != nil {
			return nil, fmt.Errorf("snn: node %q: %w", sn.name, err)
		}
		sn.op = op
		switch sn.kind {
		case KindInput:
			s.inputs = append(s.inputs, sn)
		case KindOutput:
			s.outputs = append(s.outputs, sn)
		}
	}
	s.fuseChains()
	for _, sn := range s.nodes {
		if op, ok := sn.op.(*neuronOp); !ok || !op.fused {
			s.plan = append(s.plan, sn)
		}
	}
	sortNodes(s.inputs)
	sortNodes(s.outputs)
	s.inPorts, s.outPorts = ports(s.inputs, shapes), ports(s.outputs, shapes)
	for slot := 0; slot < s.batch; slot++ {
		s.resetSlot(slot)
	}
	s.startPool()
	return s, nil
}

func sortNodes(ns []*simNode) {
	for i := 1; i < len(ns); i++ {
		for j := i; j > 0 && ns[j].name < ns[j-1].name; j-- {
			ns[j], ns[j-1] = ns[j-1], ns[j]
		}
	}
}

// Dt is the time step in seconds.
func (s *Simulator) Dt() float64 { return s.opts.Dt }

// Batch is the number of independent states.
func (s *Simulator) Batch() int { return s.batch }

// Graph returns the graph the simulator runs.
func (s *Simulator) Graph() *Graph { return s.graph }

// Time is the number of steps taken since the simulator was built.
func (s *Simulator) Time() int64 { return s.step }

// Inputs describes the Input nodes, sorted by name: the order Step takes.
func (s *Simulator) Inputs() []Port { return append([]Port(nil), s.inPorts...) }

// Outputs describes the Output nodes, sorted by name.
func (s *Simulator) Outputs() []Port { return append([]Port(nil), s.outPorts...) }

func ports(ns []*simNode, shapes map[string]Shape) []Port {
	ps := make([]Port, len(ns))
	for i, n := range ns {
		ps[i] = Port{Name: n.name, Shape: shapes[n.name].Out, Size: n.n}
	}
	return ps
}

// InputBuffer returns the buffer of the i-th Input node (batch × size,
// slot-major). Writing it and calling Step with no arguments feeds the
// network without copying.
func (s *Simulator) InputBuffer(i int) []float32 {
	if i == 0 && s.events.user != nil {
		return s.events.user
	}
	return s.inputs[i].out
}

// Output returns the values of the i-th Output node after the last step
// (batch × size, slot-major). The slice is reused by the next Step.
func (s *Simulator) Output(i int) []float32 { return s.outputs[i].out }

// NodeOutput returns the output buffer of any node by name (batch × size),
// or nil if there is no such node. The slice is reused by the next Step.
func (s *Simulator) NodeOutput(name string) []float32 {
	s.settle()
	if n := s.byName[name]; n != nil {
		return n.out
	}
	return nil
}

// Counters returns what all steps so far cost.
func (s *Simulator) Counters() Counters { return s.total }

// LastStep returns what the last step cost.
func (s *Simulator) LastStep() Counters { return s.last }

// Step advances every batch slot by one time step. With arguments, it
// first copies inputs[i] into the i-th Input node (in Inputs order), each of
// length batch × size; with none, the input buffers are used as they are.
// Wrong counts or lengths return an error wrapping ErrInputSize and leave
// the state untouched.
func (s *Simulator) Step(inputs ...[]float32) error {
	if s.events.user != nil {
		s.inputs[0].out = s.events.user
	}
	if len(inputs) > 0 {
		if len(inputs) != len(s.inputs) {
			return fmt.Errorf("%w: got %d inputs, the graph has %d Input nodes", ErrInputSize, len(inputs), len(s.inputs))
		}
		for i, in := range inputs {
			if want := len(s.inputs[i].out); len(in) != want {
				return fmt.Errorf("%w: input %q: got %d values, want %d (batch %d × %d)", ErrInputSize, s.inputs[i].name, len(in), want, s.batch, s.inputs[i].n)
			}
		}
		for i, in := range inputs {
			n := s.inputs[i]
			if s.slotOn == nil {
				copy(n.out, in)
				continue
			}
			for slot, on := range s.slotOn { // idle slots keep their outputs
				if on {
					copy(n.out[slot*n.n:(slot+1)*n.n], in[slot*n.n:(slot+1)*n.n])
				}
			}
		}
	}
	s.advance()
	return nil
}

// StepEvents advances every batch slot by one time step, as Step does,
// with the spikes of a graph's single Input node given as lists instead
// of a dense buffer: events[slot] holds, in increasing order, the indices
// whose input is 1 this step, and every other input is 0. The lists are
// copied; an idle slot's (SetActive) is not read. The result is the same
// as Step with the equivalent dense input, bit for bit, without scanning
// the input for its spikes. A graph with other than one Input node, a
// count other than the batch, or an index out of range or out of order
// returns an error wrapping ErrInputSize and leaves the state untouched.
// StepEvents does not write the buffer InputBuffer returns: a Step with
// no arguments after it reads that buffer as it was.
func (s *Simulator) StepEvents(events [][]int32) error {
	if len(s.inputs) != 1 {
		return fmt.Errorf("%w: StepEvents takes one Input node, the graph has %d", ErrInputSize, len(s.inputs))
	}
	if len(events) != s.batch {
		return fmt.Errorf("%w: StepEvents got %d lists for a batch of %d", ErrInputSize, len(events), s.batch)
	}
	n := s.inputs[0]
	for slot, list := range events {
		if s.idle(slot) {
			continue
		}
		prev := int32(-1)
		for _, i := range list {
			if i <= prev || int(i) >= n.n {
				return fmt.Errorf("%w: StepEvents: slot %d: index %d is out of range [0, %d) or not above the one before", ErrInputSize, slot, i, n.n)
			}
			prev = i
		}
	}
	ev := &s.events
	if ev.buf == nil {
		ev.buf, ev.user, ev.stale = make([]float32, len(n.out)), n.out, make([]bool, s.batch)
	}
	if &n.out[0] != &ev.buf[0] {
		copy(ev.buf, n.out) // what idle slots hold
		n.out = ev.buf
		for slot := range ev.stale {
			ev.stale[slot] = true
		}
	}
	for slot, list := range events {
		if s.idle(slot) {
			continue
		}
		x := n.out[slot*n.n : (slot+1)*n.n]
		if ev.stale[slot] {
			clear(x)
			ev.stale[slot] = false
		} else {
			for _, i := range n.active[slot] {
				x[i] = 0
			}
		}
		for _, i := range list {
			x[i] = 1
		}
		n.active[slot] = append(n.active[slot][:0], list...)
	}
	n.activeStep = s.step
	s.advance()
	return nil
}

// advance steps every node once, the input buffers as they are.
func (s *Simulator) advance() {
	// The counters live in the simulator: a local passed to an interface
	// method would escape and cost an allocation per step.
	s.last = Counters{Steps: 1}
	for _, n := range s.plan {
		if n.selfBuf != nil {
			copy(n.selfBuf, n.out)
		}
		n.op.step(s, n, &s.last)
	}
	s.step++
	s.total = s.total.Add(s.last)
}

// SetActive chooses the batch slots that Step advances: the others keep
// their state and outputs as they are and cost nothing, so a server can
// hold a large batch and pay only for the sequences it is running. nil (or
// all true) activates every slot.
func (s *Simulator) SetActive(on []bool) error {
	if on == nil {
		s.slotOn, s.nOn = nil, s.batch
		return nil
	}
	if len(on) != s.batch {
		return fmt.Errorf("%w: SetActive got %d flags for a batch of %d", ErrInputSize, len(on), s.batch)
	}
	if s.slotOn == nil {
		s.slotOn = make([]bool, s.batch)
	}
	copy(s.slotOn, on)
	s.nOn = 0
	for _, b := range on {
		if b {
			s.nOn++
		}
	}
	return nil
}

func (s *Simulator) idle(slot int) bool { return s.slotOn != nil && !s.slotOn[slot] }

func (s *Simulator) activeSlots() int {
	if s.slotOn == nil {
		return s.batch
	}
	return s.nOn
}

// Reset returns one batch slot to its initial state without touching the
// others.
func (s *Simulator) Reset(slot int) error {
	if slot < 0 || slot >= s.batch {
		return fmt.Errorf("snn: Reset(%d): slot out of range [0, %d)", slot, s.batch)
	}
	s.resetSlot(slot)
	return nil
}

// ResetAll returns every slot to its initial state and clears the counters.
// Time keeps counting, so that recorded spike times stay monotonic.
func (s *Simulator) ResetAll() {
	for slot := 0; slot < s.batch; slot++ {
		s.resetSlot(slot)
	}
	s.total, s.last = Counters{}, Counters{}
}

func (s *Simulator) resetSlot(slot int) {
	for _, p := range s.chains {
		p.op.(*neuronOp).owed[slot] = false
	}
	for _, n := range s.nodes {
		clear(n.out[slot*n.n : (slot+1)*n.n])
		if n.selfBuf != nil {
			clear(n.selfBuf[slot*n.n : (slot+1)*n.n])
		}
		n.active[slot] = n.active[slot][:0]
		n.op.reset(n, slot)
	}
}

// srcOut returns the buffer a source's value is read from this step.
func (src source) buf(dst *simNode) []float32 {
	if src.node == dst {
		return dst.selfBuf
	}
	return src.node.out
}

// gatherInput returns the summed input of a node for all slots: the
// source's own buffer when there is exactly one, else the sum in n.in.
func (n *simNode) gatherInput() []float32 {
	if len(n.srcs) == 1 {
		return n.srcs[0].buf(n)
	}
	if n.in == nil {
		n.in = make([]float32, n.batch*n.nin)
	}
	clear(n.in)
	for _, src := range n.srcs {
		addTo(n.in, src.buf(n))
	}
	return n.in
}

// eventList returns the indices of the non-zero values that src delivers
// to dst in one slot, if they can be had without a dense pass of dst's own:
// spiking nodes record them as they fire, other nodes are scanned once per
// step and the list is shared by all their consumers. A source read through
// a delayed edge has not stepped yet, so its lists are those of the
// previous step, matching its buffer; if it did not record them, or the
// source is dst itself, there is no list.
func (s *Simulator) eventList(src source, dst *simNode, slot int) ([]int32, bool) {
	n := src.node
	if n == dst {
		return nil, false
	}
	if src.delayed {
		if n.activeStep == s.step-1 || (n.spiking && n.activeStep >= s.step-1) {
			return n.active[slot], true
		}
		return nil, false
	}
	if n.activeStep != s.step {
		s.scanActive(n)
	}
	return n.active[slot], true
}

// scanActive fills n.active for every stepped slot by scanning n.out,
// once per step. An idle slot (SetActive) keeps its list: its outputs have
// not changed since it was last scanned, and a deployment with a large
// batch and one busy slot must not pay for the others.
func (s *Simulator) scanActive(n *simNode) {
	if n.activeStep == s.step {
		return
	}
	for slot := 0; slot < n.batch; slot++ {
		if s.idle(slot) {
			continue
		}
		n.active[slot] = scanNonZero(n.active[slot][:0], n.out[slot*n.n:(slot+1)*n.n])
	}
	n.activeStep = s.step
}

func scanNonZero(dst []int32, xs []float32) []int32 {
	for i, x := range xs {
		if x != 0 {
			dst = append(dst, int32(i))
		}
	}
	return dst
}

// planBytes estimates what NewSimulator allocates for g, in float64 to
// stay clear of overflow, saturating at MaxInt64.
func planBytes(g *Graph, shapes map[string]Shape, o Options) int64 {
	var total float64
	b := float64(o.Batch)
	for name, node := range g.Nodes {
		sh := shapes[name]
		in, out := float64(Size(sh.In)), float64(Size(sh.Out))
		total += 4 * b * (2*in + 3*out) // output, summed input, states
		switch x := node.(type) {
		case *Delay:
			maxd := 0.0
			for _, d := range x.Delay {
				maxd = math.Max(maxd, math.Round(d/o.Dt))
			}
			total += 4 * b * out * (maxd + 1)
		case *Conv2d:
			total += 8 * in * float64(Size(x.Weight.Shape[2:]))
		case *Conv1d:
			total += 8 * in * float64(x.Weight.Shape[2])
		case *SumPool2d:
			total += 4 * in * float64(x.Kernel[0]*x.Kernel[1])
		case *AvgPool2d:
			total += 4 * in * float64(x.Kernel[0]*x.Kernel[1])
		}
	}
	if total >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(total)
}
