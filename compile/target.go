package compile

import "github.com/neuro-go/neuro/snn"

// Target is the resource model of a device: what a compiled network may use
// and what its operations cost. The hal package hands one in for each
// device; zero limits mean unlimited.
type Target struct {
	Name string `json:"name"`
	// Cores is the number of neuro cores.
	Cores int `json:"cores"`
	// NeuronsPerCore and SynapsesPerCore are the capacity of one core;
	// synapses are counted at their destination neuron's core.
	NeuronsPerCore  int `json:"neurons_per_core"`
	SynapsesPerCore int `json:"synapses_per_core"`
	// MaxFanIn is the most synapses one neuron may receive.
	MaxFanIn int `json:"max_fan_in"`
	// InputChannels and OutputChannels bound the graph's Input and Output
	// sizes (devices with fixed I/O, such as Xylo); 0 is unlimited.
	InputChannels  int `json:"input_channels,omitempty"`
	OutputChannels int `json:"output_channels,omitempty"`
	// WeightBits and StateBits are the precision of weights and neuron
	// state; 0 is floating point.
	WeightBits int `json:"weight_bits"`
	StateBits  int `json:"state_bits"`
	// Kinds lists the node kinds the device runs; nil means all.
	Kinds []snn.Kind `json:"kinds,omitempty"`
	// Energy and Latency are the per-operation cost model.
	Energy  EnergyModel  `json:"energy"`
	Latency LatencyModel `json:"latency"`
}

// EnergyModel is the energy of each operation, in picojoules.
type EnergyModel struct {
	SynapticOpPJ    float64 `json:"synaptic_op_pj"`
	NeuronUpdatePJ  float64 `json:"neuron_update_pj"`   // a neuron that did not spike
	SpikePJ         float64 `json:"spike_pj"`           // extra for a neuron that spiked
	StaticPerStepPJ float64 `json:"static_per_step_pj"` // per timestep, independent of activity
	Source          string  `json:"source,omitempty"`   // where the figures come from
}

// LatencyModel is the time of each operation, in nanoseconds, on one core;
// cores work in parallel, so a step takes as long as its busiest core.
type LatencyModel struct {
	SynapticOpNS   float64 `json:"synaptic_op_ns"`
	NeuronUpdateNS float64 `json:"neuron_update_ns"`
	SpikeNS        float64 `json:"spike_ns"`
	PerStepNS      float64 `json:"per_step_ns"` // barrier synchronisation and the like
	Source         string  `json:"source,omitempty"`
}

// Supports reports whether the target runs nodes of kind k.
func (t *Target) Supports(k snn.Kind) bool {
	if t.Kinds == nil {
		return true
	}
	for _, s := range t.Kinds {
		if s == k {
			return true
		}
	}
	return false
}

// CPUTarget is the resource model of the float simulator on a general
// purpose processor: no resource limits. Its cost figures are measured on
// this project's build machine (snn benchmarks: about 0.25 ns per neuron
// update and 0.2 ns per synaptic operation on one core with AVX2), with
// energy from a nominal 10 W per core; they are rough and say so.
func CPUTarget() Target {
	return Target{
		Name: "cpu",
		Energy: EnergyModel{
			SynapticOpPJ: 2, NeuronUpdatePJ: 2.5, SpikePJ: 5,
			Source: "estimate: 10 W per core times the measured time per operation (snn benchmarks)",
		},
		Latency: LatencyModel{
			SynapticOpNS: 0.2, NeuronUpdateNS: 0.25, SpikeNS: 1, PerStepNS: 200,
			Source: "snn benchmarks on the project's build machine (BenchmarkLIFLayer, BenchmarkPropagateEvents)",
		},
	}
}
