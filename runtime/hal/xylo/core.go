package xylo

import (
	"fmt"

	"github.com/neuro-go/neuro/snn"
)

// Core is the integer model of the Xylo Audio 2 SNN core, stepping a batch
// of independent states. It is modelled on xylosim 0.1.3 (src/v2/cpp,
// XyloLayer::evolve and XyloIAFNeuron::evolve), the simulator Rockpool's
// syns61201.XyloSim runs; xylosim is a closed binary, so the package doc
// says what is checked against a reference and what is not. One step of one slot is, in this order:
//
//  1. Input events: each input channel's count (at most 15) adds its
//     weights, shifted left by ShiftIn, to the synaptic currents of its
//     targets, once per event, saturating at 16 bits after each addition.
//  2. Recurrent events: each hidden neuron's spikes of the previous step
//     (at most 31) do the same through WRec << ShiftRec onto hidden
//     neurons, then through WOut << ShiftOut onto the output neurons.
//  3. Hidden neurons, in index order: each synaptic current decays, I -=
//     decay(I, dash_syn); then v += sat(sat(−decay(v, dash_mem) + I1 + I2)
//     + bias), saturating; then, while v ≥ threshold and fewer than 31
//     spikes were counted (including spikes an alias source already gave
//     this neuron this step), one more spike and v −= threshold. A neuron's
//     spikes are added, capped at 31, to its alias target's count.
//  4. Output neurons likewise, one synapse each, at most one spike.
//
// decay(x, d) is x >> d (an arithmetic shift: rounding towards −∞), or
// sign(x) when that is 0, so every non-zero state decays by at least one.
// Step allocates nothing.
type Core struct {
	net   *Network
	batch int

	in, rec, out [][]synapse // per presynaptic input channel / hidden neuron

	// State, slot-major.
	i1, i2, v []int16 // batch × Hidden
	spk       []uint8 // batch × Hidden: spikes of the last step
	io, vo    []int16 // batch × Outputs
	spko      []uint8 // batch × Outputs

	// on chooses the slots Step advances (SetActive); nil is all of them.
	on []bool

	total snn.Counters
}

type synapse struct {
	post int32
	syn  uint8 // 0: Isyn, 1: Isyn2
	w    int16 // weight << shift
}

// NewCore validates net and builds a core of batch independent states.
func NewCore(net *Network, batch int) (*Core, error) {
	if err := net.Validate(); err != nil {
		return nil, err
	}
	if batch < 1 {
		return nil, fmt.Errorf("xylo: batch %d, must be at least 1", batch)
	}
	c := &Core{net: net, batch: batch}
	lists := func(pre, post int, w [2][]int8, shift uint8) [][]synapse {
		l := make([][]synapse, pre)
		for p := range pre {
			for s := range 2 {
				if w[s] == nil {
					continue
				}
				for q, x := range w[s][p*post : (p+1)*post] {
					if x != 0 {
						l[p] = append(l[p], synapse{int32(q), uint8(s), int16(int32(x) << shift)})
					}
				}
			}
		}
		return l
	}
	c.in = lists(net.Inputs, net.Hidden, net.WIn, net.ShiftIn)
	c.rec = lists(net.Hidden, net.Hidden, net.WRec, net.ShiftRec)
	c.out = lists(net.Hidden, net.Outputs, [2][]int8{net.WOut, nil}, net.ShiftOut)
	h, o := batch*net.Hidden, batch*net.Outputs
	c.i1, c.i2, c.v, c.spk = make([]int16, h), make([]int16, h), make([]int16, h), make([]uint8, h)
	c.io, c.vo, c.spko = make([]int16, o), make([]int16, o), make([]uint8, o)
	return c, nil
}

// Network returns the configuration the core runs.
func (c *Core) Network() *Network { return c.net }

// Batch is the number of independent states.
func (c *Core) Batch() int { return c.batch }

// Counters reports the work of the slots stepped so far: neuron updates
// (hidden and output), spiking updates (the same: every neuron on the chip
// is an integrate-and-fire neuron, output neurons included), spikes (each
// of a neuron's several spikes in a step counts), and synaptic operations
// (one per weight addition: an event count n onto f synapses is n·f, as
// the chip adds the weight n times).
func (c *Core) Counters() snn.Counters { return c.total }

// SetActive chooses the slots Step advances: the others keep their state
// and pending spikes, their input counts are not read, and they cost
// nothing in Counters. nil (the default) activates every slot.
func (c *Core) SetActive(active []bool) error {
	if active == nil {
		c.on = nil
		return nil
	}
	if len(active) != c.batch {
		return fmt.Errorf("%w: xylo: SetActive got %d flags for a batch of %d", snn.ErrInputSize, len(active), c.batch)
	}
	if c.on == nil {
		c.on = make([]bool, c.batch)
	}
	copy(c.on, active)
	return nil
}

// Active reports whether Step advances slot.
func (c *Core) Active(slot int) bool { return c.on == nil || c.on[slot] }

// Step advances the active slots (every slot unless SetActive chose some)
// by one timestep. counts holds, slot-major, the number of events on each
// input channel (batch × Inputs); counts above 15 are clipped to 15 as the
// chip does.
func (c *Core) Step(counts []uint8) error {
	if len(counts) != c.batch*c.net.Inputs {
		return fmt.Errorf("%w: xylo: %d input counts, want %d (batch %d × %d channels)", snn.ErrInputSize, len(counts), c.batch*c.net.Inputs, c.batch, c.net.Inputs)
	}
	for slot := range c.batch {
		if c.Active(slot) {
			c.stepSlot(slot, counts[slot*c.net.Inputs:(slot+1)*c.net.Inputs])
		}
	}
	c.total.Steps++
	return nil
}

func (c *Core) stepSlot(slot int, counts []uint8) {
	n := c.net
	H, O := n.Hidden, n.Outputs
	i1, i2 := c.i1[slot*H:(slot+1)*H], c.i2[slot*H:(slot+1)*H]
	v, spk := c.v[slot*H:(slot+1)*H], c.spk[slot*H:(slot+1)*H]
	io, vo, spko := c.io[slot*O:(slot+1)*O], c.vo[slot*O:(slot+1)*O], c.spko[slot*O:(slot+1)*O]
	var ops int64
	// Adding w to a saturating 16-bit state k times in a row is
	// sat(I + k·w): the partial sums move one way, so once clamped they
	// stay clamped. The order of different weights onto one state matters
	// (saturation is not associative) and is the reference's: input
	// channels in order, then hidden neurons in order.
	deliver := func(list []synapse, k int32, a, b []int16) {
		for _, s := range list {
			p := &a[s.post]
			if s.syn == 1 {
				p = &b[s.post]
			}
			*p = sat16(int32(*p) + k*int32(s.w))
		}
		ops += int64(k) * int64(len(list))
	}
	for pre, k := range counts {
		if k == 0 {
			continue
		}
		deliver(c.in[pre], int32(min(k, MaxInputSpikes)), i1, i2)
	}
	for pre, k := range spk {
		if k == 0 {
			continue
		}
		k := int32(min(k, MaxHiddenSpikes))
		deliver(c.rec[pre], k, i1, i2)
		deliver(c.out[pre], k, io, nil)
	}
	clear(spk)
	clear(spko)
	var spikes int64
	for j := range H {
		i1[j] -= decay(i1[j], n.DashSyn[j])
		i2[j] -= decay(i2[j], n.DashSyn2[j])
		given := spk[j]
		k := fire(&v[j], int32(i1[j])+int32(i2[j]), n.DashMem[j], n.Bias[j], n.Threshold[j], given, MaxHiddenSpikes)
		spk[j] = k
		spikes += int64(k - given) // spikes copied from an alias source are not new
		if a := n.Alias[j]; a >= 0 {
			spk[a] = uint8(min(int(spk[a])+int(k), MaxHiddenSpikes))
		}
	}
	for j := range O {
		io[j] -= decay(io[j], n.DashSynOut[j])
		k := fire(&vo[j], int32(io[j]), n.DashMemOut[j], n.BiasOut[j], n.ThresholdOut[j], 0, MaxOutputSpikes)
		spko[j] = k
		spikes += int64(k)
	}
	c.total.NeuronUpdates += int64(H + O)
	c.total.SpikingUpdates += int64(H + O)
	c.total.Spikes += spikes
	c.total.SynapticOps += ops
}

// fire integrates one neuron whose synaptic currents have decayed: it
// returns the neuron's spike count, starting from k spikes already given by
// alias sources.
func fire(v *int16, isyn int32, dash uint8, bias, th int16, k uint8, maxSpikes uint8) uint8 {
	// xylosim holds −decay(v) in an int16, so −(−32768) wraps to −32768.
	dv := int32(int16(-int32(decay(*v, dash))))
	dv = int32(sat16(dv + isyn))
	dv = int32(sat16(dv + int32(bias)))
	x := sat16(int32(*v) + dv)
	for x >= th && k < maxSpikes {
		k++
		x = int16(int32(x) - int32(th)) // wraps, as xylosim's int16 does
	}
	*v = x
	return k
}

// decay is the amount a bit-shift decay removes: x >> dash (rounding
// towards −∞), at least one step towards zero for a non-zero x.
func decay(x int16, dash uint8) int16 {
	d := x >> dash
	if d == 0 {
		switch {
		case x > 0:
			d = 1
		case x < 0:
			d = -1
		}
	}
	return d
}

// sat16 clamps to the 16-bit state range.
func sat16(x int32) int16 {
	if x > stateMax {
		return stateMax
	}
	if x < stateMin {
		return stateMin
	}
	return int16(x)
}

// Reset returns one slot to rest: all states and pending spikes zero.
func (c *Core) Reset(slot int) error {
	if slot < 0 || slot >= c.batch {
		return fmt.Errorf("xylo: reset of slot %d, batch is %d", slot, c.batch)
	}
	H, O := c.net.Hidden, c.net.Outputs
	for _, s := range [][]int16{c.i1, c.i2, c.v} {
		clear(s[slot*H : (slot+1)*H])
	}
	clear(c.spk[slot*H : (slot+1)*H])
	clear(c.io[slot*O : (slot+1)*O])
	clear(c.vo[slot*O : (slot+1)*O])
	clear(c.spko[slot*O : (slot+1)*O])
	return nil
}

// State of one slot after the last step. The slices are views into the
// core and change with the next Step.
func (c *Core) HiddenV(slot int) []int16    { return view(c.v, slot, c.net.Hidden) }
func (c *Core) HiddenISyn(slot int) []int16 { return view(c.i1, slot, c.net.Hidden) }
func (c *Core) HiddenISyn2(slot int) []int16 {
	return view(c.i2, slot, c.net.Hidden)
}
func (c *Core) HiddenSpikes(slot int) []uint8 { return view(c.spk, slot, c.net.Hidden) }
func (c *Core) OutputV(slot int) []int16      { return view(c.vo, slot, c.net.Outputs) }
func (c *Core) OutputISyn(slot int) []int16   { return view(c.io, slot, c.net.Outputs) }
func (c *Core) OutputSpikes(slot int) []uint8 { return view(c.spko, slot, c.net.Outputs) }

func view[T any](s []T, slot, n int) []T { return s[slot*n : (slot+1)*n : (slot+1)*n] }
