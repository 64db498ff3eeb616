package compile

import (
	"fmt"

	"github.com/neuro-go/neuro/snn"
)

// Options control Compile. The zero value compiles for the CPU simulator
// with float weights.
type Options struct {
	// Name of the program. Default "network".
	Name string
	// Task: TaskClassification, TaskCausalLM or "".
	Task Task
	// Target is the device's resource model. Default CPUTarget().
	Target *Target
	// Dt is the time step in seconds. Default 1e-3.
	Dt float64
	// Timesteps per sample or token. Default 64.
	Timesteps int
	// WeightBits quantises the weights; 0 uses the target's weight bits
	// (none for a float target). PerChannel picks one scale per output
	// channel instead of one per layer.
	WeightBits int
	PerChannel bool
	// PruneBelow zeroes weights smaller in magnitude; 0 prunes nothing.
	PruneBelow float64
	// Activity holds input samples to measure the network's activity for
	// the energy and latency estimates (each a flat vector for the graph's
	// single Input). Without them the estimate assumes 5% of neurons
	// spiking at each step, and says so.
	Activity [][]float32
}

// Report says what Compile did and what the program will cost.
type Report struct {
	Network      NetworkReport     `json:"network"`
	Target       TargetReport      `json:"target"`
	Estimates    Estimates         `json:"estimates"`
	Warnings     []string          `json:"warnings"`
	Approximated []string          `json:"approximated,omitempty"`
	Quantization *QuantizationInfo `json:"quantization,omitempty"`
	Pruned       int               `json:"pruned_weights,omitempty"`
	Placement    *Placement        `json:"-"`
}

// NetworkReport counts what the graph holds.
type NetworkReport struct {
	Inputs     int `json:"inputs"`
	Outputs    int `json:"outputs"`
	Layers     int `json:"layers"`
	Neurons    int `json:"neurons"`
	Synapses   int `json:"synapses"`
	Parameters int `json:"parameters"`
}

// TargetReport says how the graph sits on the device.
type TargetReport struct {
	Device      string  `json:"device"`
	CoresUsed   int     `json:"cores_used"`
	Utilisation float64 `json:"utilisation"`
	Fits        bool    `json:"fits"`
}

// Estimates are per timestep, from the target's cost model.
type Estimates struct {
	EnergyPerTimestepNJ  float64 `json:"energy_per_timestep_nj"`
	LatencyPerTimestepUS float64 `json:"latency_per_timestep_us"`
	// Basis says where the activity figures come from.
	Basis string `json:"basis"`
	// Per timestep and sample.
	NeuronUpdates float64 `json:"neuron_updates"`
	Spikes        float64 `json:"spikes"`
	SynapticOps   float64 `json:"synaptic_ops"`
}

// Compile validates g, applies the passes that opts and the target ask for
// (pruning, quantisation, partitioning) and returns the program with its
// report. g itself is not modified.
func Compile(g *snn.Graph, opts *Options) (*Program, *Report, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Name == "" {
		o.Name = "network"
	}
	if o.Target == nil {
		t := CPUTarget()
		o.Target = &t
	}
	if o.Dt == 0 {
		o.Dt = 1e-3
	}
	if o.Timesteps == 0 {
		o.Timesteps = 64
	}
	if err := g.Validate(); err != nil {
		return nil, nil, err
	}
	g = g.Clone()
	rep := &Report{Warnings: []string{}}
	if o.PruneBelow > 0 {
		rep.Pruned = Prune(g, o.PruneBelow)
	}
	bits := o.WeightBits
	if bits == 0 {
		bits = o.Target.WeightBits
	}
	if bits > 0 {
		q, err := Quantize(g, bits, o.PerChannel)
		if err != nil {
			return nil, nil, err
		}
		rep.Quantization = q
	}
	place, err := Partition(g, o.Target)
	if err != nil {
		return nil, nil, err
	}
	rep.Placement = place
	rep.Target = TargetReport{Device: o.Target.Name, CoresUsed: place.CoresUsed, Utilisation: place.Utilisation, Fits: true}
	shapes, _ := g.Shapes()
	rep.Network = countNetwork(g, shapes, place)
	est, err := estimate(g, o, place, rep.Network)
	if err != nil {
		return nil, nil, err
	}
	rep.Estimates = est
	p := &Program{
		Name: o.Name, Task: o.Task, Graph: g, Dt: o.Dt, Timesteps: o.Timesteps,
		Quantization: rep.Quantization, Placement: place,
	}
	ins, outs := g.NamesOfKind(snn.KindInput), g.NamesOfKind(snn.KindOutput)
	if len(ins) == 1 {
		p.Input = Encoding{Kind: InputCurrent, Node: ins[0], Size: snn.Size(shapes[ins[0]].Out)}
	}
	if len(outs) == 1 {
		p.Output = Decoding{Kind: OutputMembrane, Node: outs[0], Size: snn.Size(shapes[outs[0]].Out)}
	}
	return p, rep, nil
}

func countNetwork(g *snn.Graph, shapes map[string]snn.Shape, place *Placement) NetworkReport {
	var r NetworkReport
	for _, name := range g.Names() {
		n := g.Nodes[name]
		size := snn.Size(shapes[name].Out)
		switch k := n.Kind(); {
		case k == snn.KindInput:
			r.Inputs += size
		case k == snn.KindOutput:
			r.Outputs += size
		case isCompute(k):
			r.Neurons += size
			r.Layers++
		}
		switch x := n.(type) {
		case *snn.Linear:
			r.Parameters += len(x.Weight.Data)
		case *snn.Affine:
			r.Parameters += len(x.Weight.Data) + len(x.Bias)
		case *snn.Conv1d:
			r.Parameters += len(x.Weight.Data) + len(x.Bias)
		case *snn.Conv2d:
			r.Parameters += len(x.Weight.Data) + len(x.Bias)
		case *snn.Scale:
			r.Parameters += len(x.Scale)
		}
	}
	for _, c := range place.Cores {
		r.Synapses += c.Synapses
	}
	return r
}

// assumedRate is the spiking fraction the estimate assumes without data.
const assumedRate = 0.05

func estimate(g *snn.Graph, o Options, place *Placement, net NetworkReport) (Estimates, error) {
	var e Estimates
	if len(o.Activity) > 0 {
		sim, err := snn.NewSimulator(g, &snn.Options{Dt: o.Dt})
		if err != nil {
			return e, err
		}
		if len(sim.Inputs()) != 1 {
			return e, fmt.Errorf("compile: activity samples need a graph with one Input, this one has %d", len(sim.Inputs()))
		}
		for i, x := range o.Activity {
			if len(x) != sim.Inputs()[0].Size {
				return e, fmt.Errorf("compile: activity sample %d has %d values, the input takes %d", i, len(x), sim.Inputs()[0].Size)
			}
			sim.ResetAll()
			for s := 0; s < o.Timesteps; s++ {
				if err := sim.Step(x); err != nil {
					return e, err
				}
			}
			c := sim.Counters()
			e.NeuronUpdates += float64(c.NeuronUpdates)
			e.Spikes += float64(c.Spikes)
			e.SynapticOps += float64(c.SynapticOps)
		}
		steps := float64(len(o.Activity) * o.Timesteps)
		e.NeuronUpdates /= steps
		e.Spikes /= steps
		e.SynapticOps /= steps
		e.Basis = fmt.Sprintf("measured on %d samples of %d steps", len(o.Activity), o.Timesteps)
	} else {
		e.NeuronUpdates = float64(net.Neurons)
		e.Spikes = assumedRate * float64(net.Neurons)
		e.SynapticOps = assumedRate * float64(net.Synapses)
		e.Basis = fmt.Sprintf("assumed: %.0f%% of neurons spiking each step (no activity samples given)", 100*assumedRate)
	}
	t := o.Target
	e.EnergyPerTimestepNJ = (e.NeuronUpdates*t.Energy.NeuronUpdatePJ + e.Spikes*t.Energy.SpikePJ +
		e.SynapticOps*t.Energy.SynapticOpPJ + t.Energy.StaticPerStepPJ) / 1000
	// Cores run in parallel: a step lasts as long as the busiest core,
	// whose share of the work is taken as proportional to its synapses.
	cores := float64(max(1, place.CoresUsed))
	busiest := 1.0 / cores
	var total int
	for _, c := range place.Cores {
		total += c.Synapses
	}
	for _, c := range place.Cores {
		if total > 0 {
			busiest = max(busiest, float64(c.Synapses)/float64(total))
		}
	}
	if t.Cores == 0 {
		busiest = 1 // the CPU simulator runs one core
	}
	ns := (e.NeuronUpdates*t.Latency.NeuronUpdateNS+e.Spikes*t.Latency.SpikeNS+e.SynapticOps*t.Latency.SynapticOpNS)*busiest + t.Latency.PerStepNS
	e.LatencyPerTimestepUS = ns / 1000
	return e, nil
}
