package snn

import "fmt"

// State variables a neuron node exposes.
const (
	VarV = "v" // membrane potential
	VarI = "i" // synaptic current (CubaLI, CubaLIF)
)

// ErrNoState is wrapped when a node or state variable does not exist.
var ErrNoState = fmt.Errorf("snn: no such state")

func (s *Simulator) neuron(node, variable string) (*neuronOp, error) {
	s.settle()
	sn := s.byName[node]
	if sn == nil {
		return nil, fmt.Errorf("%w: no node %q", ErrNoState, node)
	}
	op, ok := sn.op.(*neuronOp)
	if !ok {
		return nil, fmt.Errorf("%w: node %q (%s) has no state variables", ErrNoState, node, sn.kind)
	}
	switch {
	case variable == VarV:
	case variable == VarI && op.syn != nil:
	default:
		return nil, fmt.Errorf("%w: node %q (%s) has no variable %q", ErrNoState, node, sn.kind, variable)
	}
	return op, nil
}

// State copies a state variable of a neuron node into dst (grown as
// needed) for all batch slots, slot-major, and returns it.
func (s *Simulator) State(dst []float32, node, variable string) ([]float32, error) {
	op, err := s.neuron(node, variable)
	if err != nil {
		return dst, err
	}
	dst = append(dst[:0], make([]float32, len(op.u))...)
	if variable == VarI {
		copy(dst, op.syn)
		return dst, nil
	}
	for i, u := range op.u {
		dst[i] = u + op.vleak[i%op.n]
	}
	return dst, nil
}

// StateAt returns one value of a state variable: neuron idx in slot.
func (s *Simulator) StateAt(node, variable string, slot, idx int) (float32, error) {
	op, err := s.neuron(node, variable)
	if err != nil {
		return 0, err
	}
	if slot < 0 || slot >= s.batch || idx < 0 || idx >= op.n {
		return 0, fmt.Errorf("snn: StateAt(%q, %q, %d, %d): index out of range (batch %d, %d neurons)", node, variable, slot, idx, s.batch, op.n)
	}
	if variable == VarI {
		return op.syn[slot*op.n+idx], nil
	}
	return op.u[slot*op.n+idx] + op.vleak[idx], nil
}

// SetState overwrites a state variable of a neuron node for all slots
// (len(values) == batch × size) or for every slot alike (len == size).
func (s *Simulator) SetState(node, variable string, values []float32) error {
	op, err := s.neuron(node, variable)
	if err != nil {
		return err
	}
	if len(values) != op.n && len(values) != len(op.u) {
		return fmt.Errorf("%w: SetState(%q, %q): got %d values, want %d or %d", ErrInputSize, node, variable, len(values), op.n, len(op.u))
	}
	for i := range op.u {
		v := values[i%len(values)]
		if variable == VarI {
			op.syn[i] = v
		} else {
			op.u[i] = v - op.vleak[i%op.n]
		}
	}
	if variable == VarV {
		for slot := range op.stale { // the held neurons go back to their held values
			op.stale[slot] = true
		}
	}
	return nil
}
