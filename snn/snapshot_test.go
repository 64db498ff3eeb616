package snn

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// snapshotGraph has every kind of slot state: a recurrent LIF with a
// refractory period (a delayed edge, refractory clocks), a delay line, a
// CUBA neuron (synaptic current), a leak-free integrator chain and a
// sparse linear layer that tracks the rows it wrote.
func snapshotGraph(rng *rand.Rand) *Graph {
	randT := func(scale, density float64, shape ...int) *Tensor {
		x := NewTensor(shape...)
		for i := range x.Data {
			if rng.Float64() < density {
				x.Data[i] = float32(rng.NormFloat64() * scale)
			}
		}
		return x
	}
	delays := make([]float64, 60)
	for i := range delays {
		delays[i] = float64(1+i%3) * 1e-3
	}
	return NewGraph().
		Add("in", &Input{Shape: []int{40}}).
		Add("fc1", &Linear{Weight: randT(0.6, 0.1, 60, 40)}).
		Add("lif", &LIF{Tau: []float64{5e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{0.5}, VReset: []float64{0}, Refractory: []float64{2e-3}}).
		Add("rec", &Linear{Weight: randT(0.3, 1, 60, 60)}).
		Add("delay", &Delay{Delay: delays}).
		Add("fc2", &Affine{Weight: randT(0.4, 1, 30, 60), Bias: randT(0.1, 1, 30).Data}).
		Add("cuba", &CubaLIF{TauSyn: []float64{3e-3}, TauMem: []float64{8e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{0.3}, VReset: []float64{0}, WIn: []float64{1}}).
		Add("fc3", &Linear{Weight: randT(0.5, 1, 10, 30)}).
		Add("li", &LI{Tau: []float64{4e-3}, R: []float64{1}, VLeak: []float64{0}}).
		Add("out", &Output{}).
		Connect("in", "fc1", "lif", "rec", "lif").
		Connect("lif", "delay", "fc2", "cuba", "fc3", "li", "out")
}

// TestSlotStateResumes: a slot saved after some steps and loaded into
// another slot of another simulator, beside slots doing other work, steps
// on to exactly the outputs of the slot that was never interrupted.
func TestSlotStateResumes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	g := snapshotGraph(rng)
	inputs := make([][]float32, 60)
	for i := range inputs {
		inputs[i] = make([]float32, 40)
		for j := range inputs[i] {
			if rng.Float64() < 0.3 {
				inputs[i][j] = 1
			}
		}
	}
	const batch = 3
	newSim := func() *Simulator {
		sim, err := NewSimulator(g, &Options{Batch: batch, Dt: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sim.Close() })
		return sim
	}
	// step feeds x to slot and noise to the other slots.
	buf := make([]float32, batch*40)
	step := func(sim *Simulator, slot int, x []float32) []float32 {
		for s := range batch {
			row := buf[s*40 : (s+1)*40]
			if s == slot {
				copy(row, x)
				continue
			}
			for j := range row {
				row[j] = float32(rng.IntN(2))
			}
		}
		if err := sim.Step(buf); err != nil {
			t.Fatal(err)
		}
		return slices.Clone(sim.Output(0)[slot*10 : (slot+1)*10])
	}
	whole := newSim()
	var want []float32
	for _, x := range inputs {
		want = append(want, step(whole, 0, x)...)
	}

	for _, at := range []int{0, 1, 17, 40} {
		first := newSim()
		var got []float32
		for _, x := range inputs[:at] {
			got = append(got, step(first, 2, x)...)
		}
		state, err := first.SaveSlot(nil, 2)
		if err != nil {
			t.Fatal(err)
		}
		second := newSim()
		for range 5 { // the target slot has a history of its own
			step(second, 1, inputs[0])
		}
		if err := second.LoadSlot(1, state); err != nil {
			t.Fatal(err)
		}
		for _, x := range inputs[at:] {
			got = append(got, step(second, 1, x)...)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("resumed after %d steps: outputs differ from the uninterrupted run", at)
		}
		again, _ := second.SaveSlot(nil, 1)
		if len(again) < 12 {
			t.Fatalf("state of %d bytes", len(again))
		}
	}
}

// TestSlotStateRefused: bytes that are not a state of this network are
// refused with ErrSlotState, and the slot is left reset.
func TestSlotStateRefused(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	g := snapshotGraph(rng)
	sim, err := NewSimulator(g, &Options{Batch: 2, Dt: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	x := make([]float32, 80)
	for i := range x {
		x[i] = 1
	}
	for range 5 {
		sim.Step(x)
	}
	state, _ := sim.SaveSlot(nil, 0)
	other, err := NewSimulator(mlpGraph(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	foreign, _ := other.SaveSlot(nil, 0)
	cases := map[string][]byte{
		"empty":           nil,
		"header only":     state[:4],
		"cut short":       state[:len(state)-3],
		"trailing":        append(slices.Clone(state), 0),
		"another network": foreign,
		"bad magic":       append([]byte("XXXX"), state[4:]...),
	}
	fresh := newReset(t, g)
	for name, b := range cases {
		if err := sim.LoadSlot(1, b); !errors.Is(err, ErrSlotState) {
			t.Errorf("%s: %v, want ErrSlotState", name, err)
		}
		// The slot now steps as a reset one does.
		fresh.ResetAll()
		for range 8 {
			sim.Step(x)
			fresh.Step(x[:40])
			if !slices.Equal(sim.Output(0)[10:], fresh.Output(0)) {
				t.Fatalf("%s: the slot is not reset after a refused load", name)
			}
		}
	}
	if err := sim.LoadSlot(2, state); err == nil {
		t.Error("slot out of range accepted")
	}
}

// TestSlotStateRefractoryRefused: a state whose held neurons are not
// what a step leaves (one held twice, out of the order they are released
// in, held until another clock than its refUntil, or refractory past the
// clock without being held) is refused; the state as saved loads and
// steps on as the slot it came from.
func TestSlotStateRefractoryRefused(t *testing.T) {
	w := NewTensor(30, 20)
	for i := range w.Data { // neuron r settles at 0.08·(r + 1): they fire at different steps
		w.Data[i] = float32(i/20+1) * 0.004
	}
	g := NewGraph().
		Add("in", &Input{Shape: []int{20}}).
		Add("fc", &Linear{Weight: w}).
		Add("lif", &LIF{Tau: []float64{5e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{0.5},
			VReset: []float64{0}, Refractory: []float64{6e-3}}).
		Connect("in", "fc", "lif")
	sim, err := NewSimulator(g, &Options{Batch: 2, Dt: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	x := make([]float32, 40)
	for i := range x {
		x[i] = 1
	}
	for range 7 {
		sim.Step(x)
	}
	op := sim.byName["lif"].op.(*neuronOp)
	held := op.refList[0].held()
	if len(held) < 2 || held[0].until == held[len(held)-1].until {
		t.Fatalf("held %v: the test needs neurons held until different steps", held)
	}
	state, _ := sim.SaveSlot(nil, 0)
	// The entries end the state: index, held value, until; 16 bytes each.
	entry := func(b []byte, k int) []byte { return b[len(b)-16*(len(held)-k):][:16] }
	dup, order, until, unheld := slices.Clone(state), slices.Clone(state), slices.Clone(state), slices.Clone(state)
	copy(entry(dup, 1), entry(state, 0))
	copy(entry(order, 0), entry(state, len(held)-1))
	copy(entry(order, len(held)-1), entry(state, 0))
	entry(until, 0)[8]++
	// Before the entries: the neurons' refUntil, 8 bytes each, the clock
	// and the count. A neuron not held, refractory past the clock.
	free := 0
	for slices.ContainsFunc(held, func(e refEntry) bool { return int(e.idx) == free }) {
		free++
	}
	refUntil := len(state) - 16*len(held) - 12 - 8*30
	binary.LittleEndian.PutUint64(unheld[refUntil+8*free:], binary.LittleEndian.Uint64(state[len(state)-16*len(held)-12:])+3)
	for name, b := range map[string][]byte{"held twice": dup, "out of order": order, "until": until, "not held": unheld} {
		if err := sim.LoadSlot(1, b); !errors.Is(err, ErrSlotState) {
			t.Errorf("%s: %v, want ErrSlotState", name, err)
		}
	}
	if err := sim.LoadSlot(1, state); err != nil {
		t.Fatal(err)
	}
	for range 8 {
		sim.Step(x)
		if out := sim.NodeOutput("lif"); !slices.Equal(out[:30], out[30:]) {
			t.Fatal("the loaded slot steps otherwise than the one saved")
		}
	}
}

func newReset(t *testing.T, g *Graph) *Simulator {
	sim, err := NewSimulator(g, &Options{Batch: 1, Dt: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	return sim
}

// FuzzLoadSlot: no bytes make LoadSlot panic, and what it accepts saves
// back to the same bytes.
func FuzzLoadSlot(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	g := snapshotGraph(rng)
	sim, err := NewSimulator(g, &Options{Batch: 1, Dt: 1e-3})
	if err != nil {
		f.Fatal(err)
	}
	x := make([]float32, 40)
	for i := range x {
		x[i] = float32(i % 2)
	}
	for range 6 {
		sim.Step(x)
	}
	state, _ := sim.SaveSlot(nil, 0)
	f.Add(state)
	f.Add(state[:20])
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := sim.LoadSlot(0, b); err != nil {
			if !errors.Is(err, ErrSlotState) {
				t.Fatalf("error %v does not wrap ErrSlotState", err)
			}
			return
		}
		back, _ := sim.SaveSlot(nil, 0)
		if !bytes.Equal(back, b) {
			t.Fatal("an accepted state does not save back to itself")
		}
		if err := sim.Step(x); err != nil {
			t.Fatal(err)
		}
	})
}

// A slot saved mid-run from a fused chain whose late integrator owes its
// last update (CUBA's shape: gi read through the cycle's delayed edge)
// loads into a fresh simulator and steps on as the slot would have, at
// every instruction set. The update read an output the state does not
// hold, so a state saved before it was applied loaded with gi wrong.
func TestSaveSlotOfFusedChain(t *testing.T) {
	const n, steps, at = 300, 200, 120
	rng := rand.New(rand.NewPCG(5, 6))
	sparse := func(scale float64) *Tensor {
		w := NewTensor(n, n)
		for i := range w.Data {
			if rng.Float64() < 0.05 {
				w.Data[i] = float32(scale * (0.5 + rng.Float64()))
			}
		}
		return w
	}
	g := chainGraph(n, sparse(0.05), sparse(-0.1))
	v0 := make([]float32, n)
	for i := range v0 {
		v0[i] = float32(rng.Float64())
	}
	for _, l := range isaLevels() {
		withISA(l, func() {
			a, err := NewSimulator(g, &Options{Dt: 1e-3, Batch: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			b, err := NewSimulator(g, &Options{Dt: 1e-3, Batch: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if err := a.SetState("P", VarV, append(slices.Clone(v0), v0...)); err != nil {
				t.Fatal(err)
			}
			for step := range steps {
				if step == at {
					state, err := a.SaveSlot(nil, 0)
					if err != nil {
						t.Fatal(err)
					}
					if err := b.LoadSlot(1, state); err != nil {
						t.Fatal(err)
					}
				}
				a.Step()
				if step < at {
					continue
				}
				b.Step()
				if i := sameBits(a.Output(0)[:n], b.Output(0)[n:]); i >= 0 {
					t.Fatalf("%v: step %d, output %d: %v from the loaded slot, %v from the saved one", l, step, i, b.Output(0)[n+i], a.Output(0)[i])
				}
			}
		})
	}
}
