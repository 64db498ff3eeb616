package xylo

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/snn"
)

// Name is the name the backend registers.
const Name = "xylo"

func init() {
	hal.Register(Name, func(cfg hal.Config) (hal.Device, error) {
		var c Config
		if err := hal.ParseOptions(Name, cfg.Options, map[string]func(string) error{
			"input_quantum":    hal.FloatOption(&c.InputQuantum),
			"threshold_target": hal.IntOption(&c.ThresholdTarget),
		}); err != nil {
			return nil, err
		}
		d, err := New(&c)
		if err != nil {
			return nil, err
		}
		return d, nil
	})
}

// ErrInputValue is wrapped by Step when an input value is not a whole
// number of events the chip can take (0 to 15 times the input quantum).
var ErrInputValue = errors.New("xylo: input is not a whole number of events in [0, 15]")

// Device is the Xylo Audio 2 emulator. The zero value is a device with
// the default Config.
type Device struct{ cfg Config }

// New returns a Xylo Audio 2 emulator; nil cfg means the defaults.
func New(cfg *Config) (*Device, error) {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &Device{cfg: c}, nil
}

// Config returns the configuration the device was built with.
func (d *Device) Config() Config { return d.cfg }

// Cost-model figures.
//
// Energy: Bos & Muir, "Sub-mW Neuromorphic SNN audio processing
// applications with Rockpool and Xylo" (arXiv:2208.12991, 2022) measured
// 219 µW idle and 93 µW dynamic inference power on Xylo Audio (figures as
// quoted at open-neuromorphic.org/neuromorphic-computing/hardware/
// xylo-synsense). Per-operation energies are not published; they are
// derived here as cycles × energy per cycle, with the cycle counts of
// Rockpool's cycle model (rockpool/devices/xylo/syns61201/
// power_cycles_model.py, cycles_model: 7 cycles per recurrent synaptic
// update, 19 fixed cycles per hidden neuron update, about 3 extra per
// spiking neuron) and an energy per cycle of 93 µW / 50 MHz = 1.86 pJ, which
// assumes the core was busy on every cycle of the default 50 MHz master
// clock (rockpool/devices/xylo/syns61201/xylo_monitor.py, XyloMonitor
// main_clk_rate) during that measurement; the true figure per cycle can
// only be higher, so the per-operation energies are lower bounds. The static
// energy per step is the idle power over a 1 ms step.
//
// Latency: the same cycle counts at 50 MHz (20 ns per cycle).
const (
	clockHz        = 50e6
	pjPerCycle     = 93e-6 / clockHz * 1e12 // 1.86 pJ
	nsPerCycle     = 1e9 / clockHz          // 20 ns
	cyclesSynOp    = 7
	cyclesNeuron   = 19
	cyclesSpike    = 3
	idlePowerW     = 219e-6
	defaultStepSec = 1e-3
)

// Target is the resource and cost model of Xylo Audio 2 for compile.
func Target() compile.Target {
	return compile.Target{
		Name:           target,
		Cores:          1,
		NeuronsPerCore: MaxHidden,
		// Derived: 16×1000 input + 64,000 recurrent + 1000×8 output weights.
		SynapsesPerCore: MaxInputs*MaxHidden + MaxRecurrentSynapses + MaxHidden*MaxOutputs,
		// Derived: every input channel plus every hidden neuron may reach a
		// hidden neuron; the chip bounds fan-out (64), not fan-in.
		MaxFanIn:       MaxInputs + MaxHidden,
		InputChannels:  MaxInputs,
		OutputChannels: MaxOutputs,
		WeightBits:     WeightBits,
		StateBits:      StateBits,
		Kinds:          []snn.Kind{snn.KindInput, snn.KindOutput, snn.KindLinear, snn.KindAffine, snn.KindLIF, snn.KindCubaLIF, snn.KindLI, snn.KindCubaLI},
		Energy: compile.EnergyModel{
			SynapticOpPJ:    cyclesSynOp * pjPerCycle,
			NeuronUpdatePJ:  cyclesNeuron * pjPerCycle,
			SpikePJ:         cyclesSpike * pjPerCycle,
			StaticPerStepPJ: idlePowerW * defaultStepSec * 1e12,
			Source:          "Bos & Muir 2022 (arXiv:2208.12991): 219 µW idle, 93 µW dynamic; per-op = Rockpool cycles_model cycle counts × 93 µW/50 MHz (a lower bound); static = idle power × 1 ms",
		},
		Latency: compile.LatencyModel{
			SynapticOpNS:   cyclesSynOp * nsPerCycle,
			NeuronUpdateNS: cyclesNeuron * nsPerCycle,
			SpikeNS:        cyclesSpike * nsPerCycle,
			Source:         "Rockpool syns61201 power_cycles_model.cycles_model cycle counts at the 50 MHz default master clock",
		},
	}
}

// Capabilities describe the emulator.
func (d *Device) Capabilities() hal.Capabilities {
	return hal.Capabilities{Name: Name, Kind: hal.KindEmulator, Vendor: "SynSense", Model: "Xylo Audio 2 (SYNS61201), bit-accurate to xylosim", Target: Target()}
}

// Load converts p (see Convert) and builds a core of batch states. A
// program that does not fit is refused with an error wrapping
// compile.ErrUnsupported that names the node and limit.
func (d *Device) Load(ctx context.Context, p *compile.Program, batch int) (hal.Instance, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := hal.CheckBatch(d.Capabilities(), batch); err != nil {
		return nil, err
	}
	net, rep, err := Convert(p, &d.cfg)
	if err != nil {
		return nil, err
	}
	core, err := NewCore(net, batch)
	if err != nil {
		return nil, err
	}
	in := &Instance{core: core, rep: rep, quantum: rep.InputQuantum}
	g := p.Graph
	for _, name := range g.NamesOfKind(snn.KindInput) {
		in.inPorts = append(in.inPorts, snn.Port{Name: name, Shape: []int{net.Inputs}, Size: net.Inputs})
	}
	for _, name := range g.NamesOfKind(snn.KindOutput) {
		in.outPorts = append(in.outPorts, snn.Port{Name: name, Shape: []int{net.Outputs}, Size: net.Outputs})
	}
	in.counts = make([]uint8, batch*net.Inputs)
	in.out = make([]float32, batch*net.Outputs)
	return in, nil
}

var _ hal.SlotMasker = (*Instance)(nil)

// Instance is a loaded program.
type Instance struct {
	core              *Core
	rep               *ConversionReport
	quantum           float64
	inPorts, outPorts []snn.Port
	counts            []uint8
	out               []float32
	closed            bool
}

// Core gives access to the integer model (states, configuration).
func (in *Instance) Core() *Core { return in.core }

// Report is what the conversion did.
func (in *Instance) Report() *ConversionReport { return in.rep }

func (in *Instance) Batch() int          { return in.core.Batch() }
func (in *Instance) Inputs() []snn.Port  { return append([]snn.Port(nil), in.inPorts...) }
func (in *Instance) Outputs() []snn.Port { return append([]snn.Port(nil), in.outPorts...) }

// Counters reports the core's work (Core.Counters), except that a readout
// of membranes (ConversionReport.OutputMembrane) is not counted among the
// spiking updates: its threshold is out of reach, as a leaky integrator
// has none.
func (in *Instance) Counters() snn.Counters {
	c := in.core.Counters()
	if in.rep.OutputMembrane {
		n := in.core.net
		c.SpikingUpdates -= c.NeuronUpdates / int64(n.Hidden+n.Outputs) * int64(n.Outputs)
	}
	return c
}

// SetActive chooses the slots Step advances (hal.SlotMasker): the others
// keep their state and outputs, their inputs are not read, and they cost
// nothing in Counters. nil activates every slot.
func (in *Instance) SetActive(active []bool) error {
	if in.closed {
		return hal.ErrClosed
	}
	return in.core.SetActive(active)
}

// Output returns the output neurons after the last step, slot-major: spike
// counts, or for a non-spiking output node its membrane in float units.
func (in *Instance) Output(i int) []float32 {
	if i != 0 {
		return nil
	}
	return in.out
}

// Step converts each active slot's input values to events (value / input
// quantum, a whole number in [0, 15], else an error wrapping ErrInputValue
// with the state untouched) and steps the core.
func (in *Instance) Step(ctx context.Context, inputs ...[]float32) error {
	if in.closed {
		return hal.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(inputs) != 1 || len(inputs[0]) != len(in.counts) {
		got := 0
		if len(inputs) > 0 {
			got = len(inputs[0])
		}
		return fmt.Errorf("%w: xylo: want one input of %d values (batch %d × %d channels), got %d inputs (first of %d)", snn.ErrInputSize, len(in.counts), in.core.Batch(), in.core.net.Inputs, len(inputs), got)
	}
	for i, x := range inputs[0] {
		if !in.core.Active(i / in.core.net.Inputs) {
			continue
		}
		k := float64(x) / in.quantum
		r := math.Round(k)
		if !(r >= 0 && r <= MaxInputSpikes) || math.Abs(k-r) > 1e-6*math.Max(1, r) {
			return fmt.Errorf("%w: slot %d channel %d has %g, %g events of %g", ErrInputValue, i/in.core.net.Inputs, i%in.core.net.Inputs, x, k, in.quantum)
		}
		in.counts[i] = uint8(r)
	}
	if err := in.core.Step(in.counts); err != nil {
		return err
	}
	O := in.core.net.Outputs
	for slot := range in.core.Batch() {
		if !in.core.Active(slot) {
			continue
		}
		dst := in.out[slot*O : (slot+1)*O]
		if in.rep.OutputMembrane {
			for j, v := range in.core.OutputV(slot) {
				dst[j] = float32(float64(v)/in.rep.OutputScale[j] + in.rep.OutputLeak[j])
			}
		} else {
			for j, s := range in.core.OutputSpikes(slot) {
				dst[j] = float32(s)
			}
		}
	}
	return nil
}

// Reset returns one slot to rest.
func (in *Instance) Reset(slot int) error {
	if in.closed {
		return hal.ErrClosed
	}
	if err := in.core.Reset(slot); err != nil {
		return err
	}
	O := in.core.net.Outputs
	clear(in.out[slot*O : (slot+1)*O])
	if in.rep.OutputMembrane {
		for j := range O {
			in.out[slot*O+j] = float32(in.rep.OutputLeak[j])
		}
	}
	return nil
}

// Close releases the instance.
func (in *Instance) Close() error {
	if in.closed {
		return hal.ErrClosed
	}
	in.closed = true
	return nil
}
