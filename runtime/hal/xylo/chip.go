package xylo

import "fmt"

// Limits of the Xylo Audio 2 (SYNS61201) SNN core.
//
// Sources:
//   - [rockpool-overview]: Rockpool, docs/devices/xylo-overview.ipynb, table
//     "Xylo family members", column Xylo Audio 2: 16 SNN input channels,
//     1000 hidden neurons, 2 synaptic states, 8 output neurons, max. fanout
//     64, avg. fanout 32+32 (Syn1 and Syn2), input projection to and output
//     projection from all 1000 hidden neurons.
//   - [rockpool-mapper]: Rockpool, rockpool/devices/xylo/syns61201/
//     xylo_mapper.py, mapper(max_hidden_neurons=1000, max_output_neurons=8)
//     and the design rules le_16_input_channels, le_8_output_channels.
//   - [xylosim]: xylosim 0.1.3 (the bit-accurate simulator Rockpool's
//     syns61201.XyloSim wraps), src/v2/cpp/XyloIAFNeuron.h: BITS_STATE 16,
//     BITS_WEIGHT 8, MAX_NUM_INP_SPIKES 15, MAX_NUM_SPIKES 31,
//     MAX_NUM_OUT_SPIKES 1, dash parameters "should be 4 bits".
//   - [rockpool-graph]: Rockpool, rockpool/devices/xylo/syns61201/
//     xylo_graph_modules.py, XyloNeurons._convert_from: dash =
//     log2(tau/dt), refused for tau <= dt; xylo_samna.py,
//     config_from_specification rounds the dash values to integers.
const (
	MaxInputs  = 16   // [rockpool-overview], [rockpool-mapper]
	MaxHidden  = 1000 // [rockpool-overview], [rockpool-mapper]
	MaxOutputs = 8    // [rockpool-overview], [rockpool-mapper]
	// MaxFanOut is the most recurrent synapses (Syn1 and Syn2 together)
	// one hidden neuron may project to [rockpool-overview].
	MaxFanOut = 64
	// MaxRecurrentSynapses is the recurrent weight memory: 1000 neurons ×
	// an average fan-out of 32+32 [rockpool-overview] (derived: 64,000, the
	// "64,000 synaptic weights" open-neuromorphic.org quotes for Xylo Audio
	// 2).
	MaxRecurrentSynapses = 64000
	WeightBits           = 8  // [xylosim] BITS_WEIGHT
	StateBits            = 16 // [xylosim] BITS_STATE
	MaxDash              = 15 // 4-bit decay parameters [xylosim]
	// MaxWeightShift is the largest weight bit-shift for which every 8-bit
	// weight still fits the 16-bit state: 127<<8 = 32512 and -128<<8 =
	// -32768 (derived from WeightBits and StateBits; a larger shift would
	// wrap in xylosim's int16 cast).
	MaxWeightShift  = 8
	MaxInputSpikes  = 15 // events per input channel per step [xylosim]
	MaxHiddenSpikes = 31 // spikes per hidden neuron per step [xylosim]
	MaxOutputSpikes = 1  // spikes per output neuron per step [xylosim]
)

const (
	stateMax = 1<<(StateBits-1) - 1  // 32767
	stateMin = -1 << (StateBits - 1) // -32768
)

// Network is a Xylo Audio 2 configuration in the chip's own integers: what
// Rockpool's config_from_specification takes (weights_in, weights_rec,
// weights_out, dash_mem, dash_syn, dash_syn_2, thresholds, biases, weight
// shifts, aliases) and its syns61201.XyloSim runs.
//
// Weight matrices are dense and stored pre-major: WIn[s][pre*Hidden+post]
// is the weight from input channel pre onto synapse s (0: Isyn, 1: Isyn2)
// of hidden neuron post.
type Network struct {
	Inputs, Hidden, Outputs int

	WIn  [2][]int8 // Inputs × Hidden per synapse
	WRec [2][]int8 // Hidden × Hidden per synapse
	WOut []int8    // Hidden × Outputs

	ShiftIn, ShiftRec, ShiftOut uint8

	// Hidden neurons.
	DashMem, DashSyn, DashSyn2 []uint8
	Threshold, Bias            []int16
	// Alias[i] is the hidden neuron that also receives neuron i's spikes,
	// or -1. Xylo allows one alias target per neuron.
	Alias []int32

	// Output (readout) neurons: one synapse each.
	DashMemOut, DashSynOut []uint8
	ThresholdOut, BiasOut  []int16
}

// NewNetwork returns a network of the given size with zero weights, zero
// biases, no aliases, and the given default parameters elsewhere (dash 1,
// threshold 1), ready to be filled in.
func NewNetwork(inputs, hidden, outputs int) *Network {
	n := &Network{Inputs: inputs, Hidden: hidden, Outputs: outputs}
	for s := range 2 {
		n.WIn[s] = make([]int8, inputs*hidden)
		n.WRec[s] = make([]int8, hidden*hidden)
	}
	n.WOut = make([]int8, hidden*outputs)
	fill := func(k, v int) []uint8 {
		x := make([]uint8, k)
		for i := range x {
			x[i] = uint8(v)
		}
		return x
	}
	ones := func(k int) []int16 {
		x := make([]int16, k)
		for i := range x {
			x[i] = 1
		}
		return x
	}
	n.DashMem, n.DashSyn, n.DashSyn2 = fill(hidden, 1), fill(hidden, 1), fill(hidden, 1)
	n.Threshold, n.Bias = ones(hidden), make([]int16, hidden)
	n.Alias = make([]int32, hidden)
	for i := range n.Alias {
		n.Alias[i] = -1
	}
	n.DashMemOut, n.DashSynOut = fill(outputs, 1), fill(outputs, 1)
	n.ThresholdOut, n.BiasOut = ones(outputs), make([]int16, outputs)
	return n
}

const target = "xylo-audio-2"

// Validate checks the network against the chip: sizes, fan-out, dash and
// shift ranges. Errors wrap compile.ErrUnsupported (*compile.FitError for
// a resource limit) or say which field is malformed.
func (n *Network) Validate() error {
	switch {
	case n.Inputs < 1 || n.Hidden < 1 || n.Outputs < 1:
		return fmt.Errorf("xylo: network of %d inputs, %d hidden, %d outputs: each needs at least one", n.Inputs, n.Hidden, n.Outputs)
	case n.Inputs > MaxInputs:
		return fitError("input", "input channels", n.Inputs, MaxInputs)
	case n.Hidden > MaxHidden:
		return fitError("hidden", "hidden neurons", n.Hidden, MaxHidden)
	case n.Outputs > MaxOutputs:
		return fitError("output", "output neurons", n.Outputs, MaxOutputs)
	}
	lens := []struct {
		name      string
		got, want int
	}{
		{"WIn[0]", len(n.WIn[0]), n.Inputs * n.Hidden}, {"WIn[1]", len(n.WIn[1]), n.Inputs * n.Hidden},
		{"WRec[0]", len(n.WRec[0]), n.Hidden * n.Hidden}, {"WRec[1]", len(n.WRec[1]), n.Hidden * n.Hidden},
		{"WOut", len(n.WOut), n.Hidden * n.Outputs},
		{"DashMem", len(n.DashMem), n.Hidden}, {"DashSyn", len(n.DashSyn), n.Hidden}, {"DashSyn2", len(n.DashSyn2), n.Hidden},
		{"Threshold", len(n.Threshold), n.Hidden}, {"Bias", len(n.Bias), n.Hidden}, {"Alias", len(n.Alias), n.Hidden},
		{"DashMemOut", len(n.DashMemOut), n.Outputs}, {"DashSynOut", len(n.DashSynOut), n.Outputs},
		{"ThresholdOut", len(n.ThresholdOut), n.Outputs}, {"BiasOut", len(n.BiasOut), n.Outputs},
	}
	for _, l := range lens {
		if l.got != l.want {
			return fmt.Errorf("xylo: Network.%s has %d entries, want %d", l.name, l.got, l.want)
		}
	}
	for _, s := range []struct {
		name string
		v    uint8
	}{{"ShiftIn", n.ShiftIn}, {"ShiftRec", n.ShiftRec}, {"ShiftOut", n.ShiftOut}} {
		if s.v > MaxWeightShift {
			return fitError(s.name, "weight bit-shift", int(s.v), MaxWeightShift)
		}
	}
	for _, d := range []struct {
		name string
		v    []uint8
	}{{"DashMem", n.DashMem}, {"DashSyn", n.DashSyn}, {"DashSyn2", n.DashSyn2}, {"DashMemOut", n.DashMemOut}, {"DashSynOut", n.DashSynOut}} {
		for i, v := range d.v {
			if v > MaxDash {
				return fitError(fmt.Sprintf("%s[%d]", d.name, i), "decay bit-shift (4 bits)", int(v), MaxDash)
			}
		}
	}
	total := 0
	for pre := 0; pre < n.Hidden; pre++ {
		fan := 0
		for s := range 2 {
			for _, w := range n.WRec[s][pre*n.Hidden : (pre+1)*n.Hidden] {
				if w != 0 {
					fan++
				}
			}
		}
		if fan > MaxFanOut {
			return fitError(fmt.Sprintf("hidden[%d]", pre), "recurrent fan-out per neuron", fan, MaxFanOut)
		}
		total += fan
	}
	if total > MaxRecurrentSynapses {
		return fitError("hidden", "recurrent synapses", total, MaxRecurrentSynapses)
	}
	for i, a := range n.Alias {
		if a < -1 || int(a) >= n.Hidden {
			return fmt.Errorf("xylo: Network.Alias[%d] is %d, not a hidden neuron or -1", i, a)
		}
	}
	return nil
}
