package xylo

import (
	"errors"
	"testing"

	"github.com/neuro-go/neuro/compile"
)

func TestDecay(t *testing.T) {
	for _, c := range []struct {
		x    int16
		dash uint8
		want int16
	}{
		{100, 4, 6},         // 100 >> 4 = floor(6.25) = 6
		{-100, 4, -7},       // -100 >> 4 = floor(-6.25) = -7: towards -inf
		{5, 4, 1},           // 5 >> 4 = 0, raised to the minimum decay 1
		{-5, 4, -1},         // -5 >> 4 = floor(-0.3125) = -1
		{0, 3, 0},           // rest stays at rest
		{-32768, 0, -32768}, // dash 0 removes everything
		{32767, 15, 1},      // 32767 >> 15 = 0 -> 1
		{-32768, 15, -1},    // -32768 >> 15 = -1
	} {
		if got := decay(c.x, c.dash); got != c.want {
			t.Errorf("decay(%d, %d) = %d, want %d", c.x, c.dash, got, c.want)
		}
	}
}

// single builds 1 input → 1 hidden → 1 output.
func single() *Network {
	n := NewNetwork(1, 1, 1)
	n.WIn[0][0] = 100
	n.ShiftIn = 2 // 100 << 2 = 400 per event
	n.DashSyn[0], n.DashMem[0], n.Threshold[0] = 1, 2, 500
	n.WOut[0] = 10
	n.DashSynOut[0], n.DashMemOut[0], n.ThresholdOut[0] = 1, 1, 8
	return n
}

func TestCoreHandVector(t *testing.T) {
	c, err := NewCore(single(), 1)
	if err != nil {
		t.Fatal(err)
	}
	type state struct {
		i, v   int16
		s      uint8
		io, vo int16
		so     uint8
	}
	steps := []struct {
		in   uint8
		want state
	}{
		// I = 0 + 1·400 = 400; I -= 400>>1 → 200. v = 0 − 0 + 200 = 200 < 500.
		{1, state{200, 200, 0, 0, 0, 0}},
		// I = 200 − 100 = 100. v = 200 − (200>>2 = 50) + 100 = 250.
		{0, state{100, 250, 0, 0, 0, 0}},
		// I = 100 + 3·400 = 1300 → 1300 − 650 = 650. v = 250 − 62 + 650 = 838
		// ≥ 500: one spike, v = 338 (< 500, so no second).
		{3, state{650, 338, 1, 0, 0, 0}},
		// I = 650 − 325 = 325. v = 338 − 84 + 325 = 579: spike, v = 79.
		// Output gets the hidden spike of step 3: Io = 10 → 10 − 5 = 5;
		// vo = 0 − 0 + 5 = 5 < 8.
		{0, state{325, 79, 1, 5, 5, 0}},
		// I = 325 − 162 = 163. v = 79 − 19 + 163 = 223 < 500.
		// Io = 5 + 10 = 15 → 15 − 7 = 8; vo = 5 − 2 + 8 = 11 ≥ 8: spike,
		// vo = 3.
		{0, state{163, 223, 0, 8, 3, 1}},
		// I = 163 − 81 = 82. v = 223 − 55 + 82 = 250.
		// Io = 8 − 4 = 4 (no hidden spike last step); vo = 3 − 1 + 4 = 6.
		{0, state{82, 250, 0, 4, 6, 0}},
	}
	for k, s := range steps {
		if err := c.Step([]uint8{s.in}); err != nil {
			t.Fatal(err)
		}
		got := state{c.HiddenISyn(0)[0], c.HiddenV(0)[0], c.HiddenSpikes(0)[0], c.OutputISyn(0)[0], c.OutputV(0)[0], c.OutputSpikes(0)[0]}
		if got != s.want {
			t.Fatalf("step %d: got %+v, want %+v", k+1, got, s.want)
		}
	}
	cnt := c.Counters()
	// Synaptic ops: 1 + 3 input events onto one synapse, 2 hidden spikes
	// onto the one output synapse (no recurrent weights): 6. Spikes: 2
	// hidden + 1 output. Updates: 6 steps × 2 neurons.
	if cnt.Steps != 6 || cnt.SynapticOps != 6 || cnt.Spikes != 3 || cnt.NeuronUpdates != 12 {
		t.Errorf("counters %+v", cnt)
	}
}

func TestCoreSaturationAndSpikeCap(t *testing.T) {
	n := NewNetwork(1, 1, 1)
	n.WIn[0][0], n.ShiftIn = 127, 8 // 127 << 8 = 32512 per event
	n.DashSyn[0], n.DashMem[0], n.Threshold[0] = 1, 4, 100
	c, _ := NewCore(n, 1)
	// Two events: 2·32512 = 65024 saturates at 32767; decay 32767>>1 =
	// 16383 leaves 16384. v = 16384 could pay 163 spikes of 100; the cap
	// is 31: v = 16384 − 3100 = 13284.
	c.Step([]uint8{2})
	if i, v, s := c.HiddenISyn(0)[0], c.HiddenV(0)[0], c.HiddenSpikes(0)[0]; i != 16384 || v != 13284 || s != 31 {
		t.Fatalf("I %d v %d spikes %d, want 16384 13284 31", i, v, s)
	}
	// Input counts above 15 are clipped to 15: after Reset, 200 events
	// act as 15: 15·32512 saturates as before.
	c.Reset(0)
	c.Step([]uint8{200})
	if c.HiddenISyn(0)[0] != 16384 || c.Counters().SynapticOps != 2+15 {
		t.Fatalf("clipped input: I %d, ops %d", c.HiddenISyn(0)[0], c.Counters().SynapticOps)
	}
}

func TestCoreSaturationOrder(t *testing.T) {
	// Saturation is applied after every addition, in channel order: channel
	// 0 (2 × 32512) clamps at 32767, then channel 1 adds −64<<8 = −16384:
	// 16383. Summing first would give 65024 − 16384 = 48640 → 32767.
	n := NewNetwork(2, 1, 1)
	n.WIn[0][0], n.WIn[0][1], n.ShiftIn = 127, -64, 8
	n.DashSyn[0], n.DashMem[0], n.Threshold[0] = 15, 15, 32767
	c, _ := NewCore(n, 1)
	c.Step([]uint8{2, 1})
	// Decay: 16383 >> 15 = 0 → 1: I = 16382; v = 0 + 16382.
	if i, v := c.HiddenISyn(0)[0], c.HiddenV(0)[0]; i != 16382 || v != 16382 {
		t.Fatalf("I %d v %d, want 16382 16382", i, v)
	}
}

func TestCoreNegativeWrap(t *testing.T) {
	// xylosim holds −decay(v) in an int16: at v = −32768 with dash_mem 0
	// that is −(−32768), which wraps to −32768, so the membrane stays
	// pinned instead of following the current.
	n := NewNetwork(1, 1, 1)
	n.WIn[0][0], n.WIn[1][0], n.ShiftIn = -128, -128, 8 // −32768 on both synapses
	n.DashSyn[0], n.DashSyn2[0], n.DashMem[0], n.Threshold[0] = 1, 1, 0, 100
	c, _ := NewCore(n, 1)
	// Step 1: I1 = I2 = −32768 − (−16384) = −16384; v = 0 − 0 + sat(−32768) = −32768.
	c.Step([]uint8{1})
	if v := c.HiddenV(0)[0]; v != -32768 {
		t.Fatalf("step 1: v %d", v)
	}
	// Step 2: I1 = I2 = −16384 − (−8192) = −8192. dv = wrap(−(−32768)) =
	// −32768, + (−16384) saturates at −32768; v = −32768. (Without the wrap
	// dv would be 32768 − 16384 = 16384 and v = −16384.)
	c.Step([]uint8{0})
	if i, i2, v := c.HiddenISyn(0)[0], c.HiddenISyn2(0)[0], c.HiddenV(0)[0]; i != -8192 || i2 != -8192 || v != -32768 {
		t.Fatalf("step 2: I1 %d I2 %d v %d, want −8192 −8192 −32768", i, i2, v)
	}
}

func TestCoreAlias(t *testing.T) {
	// Neuron 0 aliases onto neuron 1: neuron 1 gets neuron 0's spikes in the
	// same step, and they count towards its own cap of 31.
	n := NewNetwork(1, 2, 1)
	n.WIn[0][0], n.WIn[0][1], n.ShiftIn = 100, 100, 0
	n.DashSyn[0], n.DashSyn[1] = 1, 1
	n.DashMem[0], n.DashMem[1] = 4, 4
	n.Threshold[0], n.Threshold[1] = 10, 2
	n.Alias[0] = 1
	c, _ := NewCore(n, 1)
	// I = 100 → 50 on both. Neuron 0: v = 50 → 5 spikes (v = 0).
	// Neuron 1 starts at 5 spikes; the cap would allow 26 more, v = 50 pays
	// for 25 of threshold 2 (v = 0): 30 spikes.
	c.Step([]uint8{1})
	if s := c.HiddenSpikes(0); s[0] != 5 || s[1] != 30 {
		t.Fatalf("spikes %v, want [5 30]", s)
	}
	// The counter counts neuron 1's own 25, not the 5 copied: 30.
	if got := c.Counters().Spikes; got != 30 {
		t.Errorf("spikes counted %d, want 30", got)
	}
}

func TestCoreBatchAndReset(t *testing.T) {
	c, _ := NewCore(single(), 2)
	one, _ := NewCore(single(), 1)
	in := [][2]uint8{{1, 3}, {0, 2}, {3, 0}, {0, 1}, {2, 2}}
	for k, x := range in {
		if k == 3 {
			c.Reset(1)
			one.Reset(0)
		}
		c.Step(x[:])
		one.Step(x[1:])
		if c.HiddenV(1)[0] != one.HiddenV(0)[0] || c.OutputV(1)[0] != one.OutputV(0)[0] {
			t.Fatalf("step %d: slot 1 of a batch differs from a lone core", k)
		}
	}
	if err := c.Reset(2); err == nil {
		t.Error("Reset(2) of a batch of 2 accepted")
	}
	if err := c.Step(make([]uint8, 3)); err == nil {
		t.Error("wrong input size accepted")
	}
}

func TestNetworkValidate(t *testing.T) {
	var fit *compile.FitError
	n := NewNetwork(17, 1, 1)
	if err := n.Validate(); !errors.As(err, &fit) || fit.Limit != "input channels" || fit.Have != 16 {
		t.Errorf("17 inputs: %v", err)
	}
	n = NewNetwork(1, 70, 1)
	for post := range 65 {
		n.WRec[post%2][3*70+post] = 1
	}
	if err := n.Validate(); !errors.As(err, &fit) || fit.Node != "hidden[3]" || fit.Need != 65 {
		t.Errorf("fan-out 65: %v", err)
	}
	n = NewNetwork(1, 1, 1)
	n.DashMem[0] = 16
	if err := n.Validate(); !errors.Is(err, compile.ErrUnsupported) {
		t.Errorf("dash 16: %v", err)
	}
	n = NewNetwork(1, 1, 1)
	n.ShiftRec = 9
	if err := n.Validate(); !errors.Is(err, compile.ErrUnsupported) {
		t.Errorf("shift 9: %v", err)
	}
}
