// Package xylo is the hal backend of SynSense Xylo Audio 2 (SYNS61201): an
// integer emulator modelled on xylosim, the simulator Rockpool's
// syns61201.XyloSim wraps. xylosim is a closed binary, so the emulator is
// not checked against it (see "What is verified" below). A program that
// links it builds the device with New and a typed Config; one that
// chooses devices by name imports it for its side effect and gives the
// Config's fields as strings:
//
//	import _ "github.com/neuro-go/neuro/runtime/hal/xylo"
//	dev, err := hal.Open("xylo", hal.Config{Options: map[string]string{"input_quantum": "0.25"}})
//
// # Overview
//
// The chip has 16 input channels, 1000 hidden neurons with two synaptic
// currents each, and 8 output neurons; 8-bit weights with one left shift
// per weight matrix (input, recurrent, output); 16-bit saturating synaptic
// currents and membranes that decay by bit shifts, v −= v >> dash; integer
// thresholds with subtractive reset, biases, and up to 31 spikes per hidden
// neuron per step (chip.go cites each figure).
//
// Three layers:
//
//   - Network is a configuration in the chip's integers, as Rockpool's
//     config_from_specification takes it; Validate checks it against the
//     chip's limits.
//   - Core steps a Network over a batch of states in the integer
//     arithmetic modelled on xylosim (core.go gives the order of
//     operations), allocating nothing.
//   - Convert maps a float compile.Program onto a Network: Input → weights
//     → spiking hidden nodes (LIF, CubaLIF; recurrence allowed) → weights →
//     one output node (LIF, CubaLIF, LI, CubaLI) → Output. Time constants
//     become dash = round(log2(τ/dt)) (Rockpool's rule); each neuron's
//     membrane is scaled so its threshold lands on
//     Config.ThresholdTarget; weights become 8-bit integers with the shift
//     of least squared error per matrix. The ConversionReport gives, per node,
//     the asked and effective time constants, threshold and bias rounding,
//     and per weight node the quantisation error, and lists in words every
//     behaviour that differs from the float simulator.
//
// Device and Instance put these behind hal: Load converts and builds a
// Core; Step takes float inputs that must be whole multiples (0 to 15) of
// the input quantum and returns spike counts, or the membrane in float
// units for a non-spiking output node.
//
// What is verified and what is not. Core models xylosim 0.1.3's integer
// neuron (per-addition saturation in delivery order, rounding towards −∞
// with a minimum decay of 1, the spike caps, aliases, the int16 wrap of
// −decay(−32768)); the tests check it on hand-worked vectors of that
// model (core_test.go), not against xylosim, which no test here can run,
// and Rockpool has no other runnable model of the integer core (its
// LIFBitshiftTorch decays in floating point). Against Rockpool's own code
// the tests check the time-constant rules: τ → dash
// (calc_bitshift_decay) and dash → τ (bitshift_to_tau), over 4,000 time
// constants (rockpool_test.go). Convert is exact in the linear dynamics of
// CubaLIF nodes whose time constants are the chip's own, τ = −dt / ln(1 −
// 2^−dash), and whose weights land on the 8-bit grid; integer rounding of
// the states still makes spike trains differ a little (agree_test.go
// measures it). LIF and LI nodes have no synaptic current on the chip:
// their input passes through Isyn with dash_syn 1 at the same DC gain.
// Output neurons see hidden spikes one step late.
//
// # Invariants
//
//   - Load refuses, with an error wrapping compile.ErrUnsupported that
//     names the node and the limit (*compile.FitError or
//     *compile.UnsupportedError), any program the chip cannot run: other
//     node kinds, reset to a value, refractory periods, τ ≤ dt, more than
//     16 inputs, 1000 hidden or 8 output neurons, recurrent fan-out over
//     64.
//   - Nothing is approximated silently: every rounding is in the
//     ConversionReport (Instance.Report).
//   - Core.Step and Instance.Step allocate nothing; batch slots never
//     interact; Reset(slot) touches only its slot.
//   - Only the slots SetActive chooses are stepped and counted
//     (hal.SlotMasker): an idle slot keeps its state and costs nothing.
//   - Step returns errors, never panics: wrong sizes wrap snn.ErrInputSize,
//     values that are not whole event counts wrap ErrInputValue, and the
//     state is then untouched.
package xylo
