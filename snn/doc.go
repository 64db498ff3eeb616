// Package snn is Neuro's spiking-network model and simulator.
//
// # Overview
//
// A Graph holds named nodes and directed edges. The node kinds are those of
// the Neuromorphic Intermediate Representation (NIR): Input, Output, Affine,
// Linear, Scale, Conv1d, Conv2d, Flatten, SumPool2d, AvgPool2d, Delay,
// Threshold, I, IF, LI, LIF, CubaLI and CubaLIF, with NIR's continuous-time
// parameters (tau, r, v_leak, v_threshold, v_reset, tau_syn, tau_mem, w_in)
// given per neuron or as one value for all. Two extensions of NIR are
// marked as such: a subtractive reset (Reset: ResetSubtract) and an
// absolute refractory period (Refractory) on LIF and CubaLIF. Graphs have a
// JSON form (EncodeJSON, DecodeJSON) whose weights are inline or stored
// elsewhere by reference.
//
// NewSimulator validates a graph and compiles it once into a plan: an
// evaluation order, buffers, and a one-step delay on every edge that closes
// a cycle. The order and the delayed edges come from Graph.Topology, which
// the chip emulators and compile passes read too, so that every backend
// delays the same edges. Step advances a batch of independent states by dt and allocates
// nothing. Synapse nodes whose input is sparse (spikes, or graded values
// with few non-zeros) add only the weight columns of the active inputs;
// dense graded inputs go through a register-blocked matrix-vector kernel,
// and batch slots that share a dense input share each block of weights
// while it is in the cache. Weights with few non-zeros are stored as
// compressed columns.
//
// SnnTorchLeaky, SnnTorchSynaptic and NorseLIF map those frameworks'
// discrete-time neurons onto nodes that reproduce their outputs; the tests
// replay traces the libraries produced (testdata/reference).
//
// # Discretisation
//
// Time advances in steps of dt. Within a step nodes are evaluated in plan
// order; a node's input is the sum of its incoming edges, each carrying its
// source's output of this step, or of the previous step for an edge that
// closes a cycle. The linear parts are integrated exactly:
//
//   - LI and LIF hold their input x constant over the step (zero-order
//     hold): v ← v_leak + R·x + (v − v_leak − R·x)·e^(−dt/τ). A constant
//     current therefore gives the analytic membrane at every step.
//   - I and IF: v ← v + dt·R·x.
//   - CubaLI and CubaLIF receive their input as an impulse at the start of
//     the step, I ← I + w_in·x·(e^(dt/τs) − 1), scaled so that a constant
//     input settles I at w_in·x as the continuous equation does; then I and
//     v evolve over the step by the exact solution of the linear system
//     (a double exponential).
//
// Spiking nodes test v > v_threshold after the integration (strictly
// greater), emit 1 and reset: to v_reset (NIR's rule), or, with
// ResetSubtract, by lowering v by v_threshold − v_reset. A neuron with a
// refractory period then holds v at its post-reset value for
// ceil(refractory/dt) steps while its synaptic current goes on evolving.
// Neuron states start at rest: v = v_leak, I = 0.
//
// A spike belongs to the step that fired it and is dated at that step's
// end: Time() × dt after the Step that produced it (the Recorder's
// convention).
//
// Delay rounds each delay to whole steps. AvgPool2d divides by the kernel
// area, padding included.
//
// # Invariants
//
//   - A Graph that Validate accepts runs: NewSimulator refuses only graphs
//     that do not validate or whose plan would exceed Options.MaxStateBytes.
//   - Step allocates nothing and returns an error (wrapping ErrInputSize),
//     never panics, on inputs of the wrong size; the state is then
//     untouched.
//   - Batch slots never interact: stepping B slots together gives exactly
//     what B simulators give, and Reset(slot) touches only its slot.
//   - The plan is deterministic: the same graph and inputs give the same
//     outputs, bit for bit, on the same machine. (On amd64 with AVX2 the
//     neuron updates use fused multiply-adds, so other machines may differ
//     in the last bit.)
//   - Errors about a graph name the node and field at fault (*FieldError)
//     and wrap ErrInvalidGraph.
package snn
