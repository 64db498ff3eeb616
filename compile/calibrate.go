package compile

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/neuro-go/neuro/snn"
)

// Ranges records, for each graded node of a graph (a non-spiking neuron or
// a Delay: the nodes whose outputs are values rather than spikes), the
// largest magnitude each of its elements reached on calibration data, in
// the float network's units. Fixed-point targets size those values' ranges
// from it instead of from the worst case the weights allow, which for a
// deep network is tens to thousands of times what the data ever reaches
// (runtime/hal/loihi). Calibrate measures it; a Program carries it.
type Ranges map[string][]float32

// rangedNode reports whether a node kind's output is a graded value that
// Ranges describes.
func rangedNode(k snn.Kind) bool {
	return k == snn.KindDelay || snn.IsNeuron(k) && !snn.IsSpiking(k)
}

// Calibrate runs p's float network on sequences of input vectors and sets
// p.Ranges to the largest magnitude every graded node's elements reach.
// Each sequence starts from rest; each vector is presented as p.Input's
// encoding presents a sample: held for p.Timesteps steps ("current",
// "spikes", "one-hot"), or on the first of them only ("one-hot-pulse").
// A "rate" input is refused: its spikes are random draws, and calibrating
// on one draw would not bound the next. For a language model, a sequence
// is a window of text as one-hot token vectors; text the model was not
// evaluated on, and as varied as what it will serve, since a value past
// its calibrated range is clipped by the targets that use it.
func Calibrate(p *Program, seqs [][][]float32) error {
	if p == nil || p.Graph == nil {
		return errors.New("compile: Calibrate: program has no graph")
	}
	if len(seqs) == 0 {
		return errors.New("compile: Calibrate: no sequences to calibrate on")
	}
	pulse := false
	switch p.Input.Kind {
	case "", InputCurrent, InputSpikes, InputOneHot:
	case InputOneHotPulse:
		pulse = true
	default:
		return fmt.Errorf("compile: Calibrate: input kind %q cannot be calibrated on fixed vectors", p.Input.Kind)
	}
	dt := p.Dt
	if dt == 0 {
		dt = 1e-3
	}
	steps := max(p.Timesteps, 1)
	sim, err := snn.NewSimulator(p.Graph, &snn.Options{Dt: dt})
	if err != nil {
		return fmt.Errorf("compile: Calibrate: %w", err)
	}
	ins := sim.Inputs()
	if len(ins) != 1 {
		return fmt.Errorf("compile: Calibrate: the graph has %d inputs, want 1", len(ins))
	}
	size := ins[0].Size
	var names []string
	for name, n := range p.Graph.Nodes {
		if rangedNode(n.Kind()) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	r := Ranges{}
	for _, name := range names {
		r[name] = make([]float32, len(sim.NodeOutput(name)))
	}
	zero := make([]float32, size)
	for si, seq := range seqs {
		sim.ResetAll()
		for vi, x := range seq {
			if len(x) != size {
				return fmt.Errorf("compile: Calibrate: sequence %d, vector %d has %d values, the input %q takes %d", si, vi, len(x), ins[0].Name, size)
			}
			for _, v := range x {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return fmt.Errorf("compile: Calibrate: sequence %d, vector %d has a non-finite value", si, vi)
				}
			}
			for k := range steps {
				in := x
				if pulse && k > 0 {
					in = zero
				}
				if err := sim.Step(in); err != nil {
					return fmt.Errorf("compile: Calibrate: sequence %d, vector %d: %w", si, vi, err)
				}
				for _, name := range names {
					m := r[name]
					for i, v := range sim.NodeOutput(name) {
						m[i] = max(m[i], float32(math.Abs(float64(v))))
					}
				}
			}
		}
	}
	p.Ranges = r
	return nil
}

// CheckRanges reports whether p.Ranges fits p.Graph: every entry names a
// graded node and has one finite, non-negative value per element.
func (p *Program) CheckRanges() error {
	if len(p.Ranges) == 0 {
		return nil
	}
	shapes, err := p.Graph.Shapes()
	if err != nil {
		return err
	}
	for name, r := range p.Ranges {
		n, ok := p.Graph.Nodes[name]
		if !ok {
			return fmt.Errorf("ranges: no node %q in the graph", name)
		}
		if !rangedNode(n.Kind()) {
			return fmt.Errorf("ranges: node %q is a %s, not a graded node (a non-spiking neuron or a Delay)", name, n.Kind())
		}
		if want := snn.Size(shapes[name].Out); len(r) != want {
			return fmt.Errorf("ranges: node %q has %d values, want one per element (%d)", name, len(r), want)
		}
		for i, v := range r {
			if !(v >= 0) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("ranges: node %q element %d is %v, want a finite magnitude", name, i, v)
			}
		}
	}
	return nil
}
