// Package haltest is the conformance suite every hal backend runs in its
// tests, in the manner of gonum's blas/testblas:
//
//	func TestConformance(t *testing.T) {
//		haltest.Run(t, haltest.Backend{Open: func() (hal.Device, error) { return cpu.New(nil) }})
//	}
//
// It loads small programs that fit any device worth the name (a few
// neurons, 8-bit-representable weights), and checks the contract of
// hal.Device and hal.Instance: shapes, batching, slot independence, reset,
// counters, refusal of programs that do not fit, and error values.
package haltest

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/snn"
)

// Backend describes the device under test.
type Backend struct {
	// Open returns a fresh device.
	Open func() (hal.Device, error)
	// Program, when set, builds the test program for the device (for
	// devices that only run some node kinds); it gets the input and output
	// sizes and must return a program whose outputs depend on its inputs.
	// Default: Input → Affine → LIF → Linear → LIF → Output, weights on an
	// 8-bit grid.
	Program func(inputs, outputs int) *compile.Program
	// Unreadable is a value the device cannot take on an input (out of
	// its range): the idle slots of an instance that masks slots
	// (hal.SlotMasker) hold it on their inputs, which must not be read.
	// Default 1e6.
	Unreadable float32
}

// Program is the default test program: two LIF layers with weights that are
// multiples of 1/64 in [-2, 2) (exact on 8-bit devices), thresholds 1.
func Program(inputs, outputs int) *compile.Program {
	rng := rand.New(rand.NewPCG(42, 7))
	const hidden = 12
	w1, w2 := snn.NewTensor(hidden, inputs), snn.NewTensor(outputs, hidden)
	for _, w := range []*snn.Tensor{w1, w2} {
		for i := range w.Data {
			w.Data[i] = float32(rng.IntN(160)-40) / 64
		}
	}
	lif := func() *snn.LIF {
		return &snn.LIF{Tau: []float64{20e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}
	}
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{inputs}}).
		Add("fc1", &snn.Linear{Weight: w1}).
		Add("lif1", lif()).
		Add("fc2", &snn.Linear{Weight: w2}).
		Add("lif2", lif()).
		Add("out", &snn.Output{}).
		Connect("in", "fc1", "lif1", "fc2", "lif2", "out")
	return &compile.Program{Name: "haltest", Graph: g, Dt: 1e-3, Timesteps: 32}
}

const (
	nIn, nOut = 6, 3
	batch     = 3
)

// Run runs the whole suite.
func Run(t *testing.T, b Backend) {
	if b.Program == nil {
		b.Program = Program
	}
	if b.Unreadable == 0 {
		b.Unreadable = 1e6
	}
	t.Run("IdleSlots", func(t *testing.T) { idleSlots(t, b) })
	t.Run("Snapshots", func(t *testing.T) { snapshots(t, b) })
	open := func(t *testing.T) hal.Device {
		t.Helper()
		d, err := b.Open()
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return d
	}
	load := func(t *testing.T, d hal.Device, n int) hal.Instance {
		t.Helper()
		in, err := d.Load(context.Background(), b.Program(nIn, nOut), n)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		t.Cleanup(func() { in.Close() })
		return in
	}
	t.Run("Capabilities", func(t *testing.T) {
		c := open(t).Capabilities()
		if c.Name == "" {
			t.Error("no name")
		}
		switch c.Kind {
		case hal.KindCPU, hal.KindEmulator, hal.KindHardware:
		default:
			t.Errorf("kind %q", c.Kind)
		}
		if c.Target.Name == "" {
			t.Error("target has no name")
		}
		if c.Target.Energy.SynapticOpPJ <= 0 || c.Target.Latency.PerStepNS < 0 {
			t.Errorf("cost model missing: %+v %+v", c.Target.Energy, c.Target.Latency)
		}
	})
	t.Run("Ports", func(t *testing.T) {
		in := load(t, open(t), batch)
		if in.Batch() != batch {
			t.Fatalf("batch %d, want %d", in.Batch(), batch)
		}
		if len(in.Inputs()) != 1 || in.Inputs()[0].Size != nIn || len(in.Outputs()) != 1 || in.Outputs()[0].Size != nOut {
			t.Fatalf("ports %+v %+v", in.Inputs(), in.Outputs())
		}
	})
	t.Run("StepProducesActivity", func(t *testing.T) {
		in := load(t, open(t), 1)
		x := drive(0)
		total := 0.0
		for s := 0; s < 64; s++ {
			if err := in.Step(context.Background(), x[:nIn]); err != nil {
				t.Fatal(err)
			}
			for _, v := range in.Output(0) {
				total += float64(v)
			}
		}
		c := in.Counters()
		if c.Steps != 64 || c.NeuronUpdates <= 0 || c.Spikes <= 0 || c.SynapticOps <= 0 {
			t.Fatalf("counters %+v after 64 driven steps", c)
		}
		if total == 0 {
			t.Fatal("outputs never moved")
		}
	})
	t.Run("SlotsIndependent", func(t *testing.T) {
		d := open(t)
		batched := load(t, d, batch)
		alone := make([]hal.Instance, batch)
		for i := range alone {
			alone[i] = load(t, d, 1)
		}
		for s := 0; s < 48; s++ {
			x := make([]float32, 0, batch*nIn)
			for slot := 0; slot < batch; slot++ {
				x = append(x, drive(slot*1000 + s)[:nIn]...)
			}
			if s == 20 {
				if err := batched.Reset(1); err != nil {
					t.Fatal(err)
				}
				alone[1].Reset(0)
			}
			if err := batched.Step(context.Background(), x); err != nil {
				t.Fatal(err)
			}
			for slot := 0; slot < batch; slot++ {
				if err := alone[slot].Step(context.Background(), x[slot*nIn:(slot+1)*nIn]); err != nil {
					t.Fatal(err)
				}
				got, want := batched.Output(0)[slot*nOut:(slot+1)*nOut], alone[slot].Output(0)
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("step %d slot %d: batched %v, alone %v", s, slot, got, want)
					}
				}
			}
		}
	})
	t.Run("Deterministic", func(t *testing.T) {
		d := open(t)
		a, c := load(t, d, 1), load(t, d, 1)
		for s := 0; s < 40; s++ {
			x := drive(s)[:nIn]
			a.Step(context.Background(), x)
			c.Step(context.Background(), x)
			for i, v := range a.Output(0) {
				if c.Output(0)[i] != v {
					t.Fatalf("two loads of one program differ at step %d", s)
				}
			}
		}
	})
	t.Run("Errors", func(t *testing.T) {
		d := open(t)
		in := load(t, d, 2)
		if err := in.Step(context.Background(), make([]float32, 3)); !errors.Is(err, snn.ErrInputSize) {
			t.Errorf("short input: %v, want ErrInputSize", err)
		}
		if err := in.Reset(5); err == nil {
			t.Error("Reset out of range accepted")
		}
		if _, err := d.Load(context.Background(), b.Program(nIn, nOut), 0); err == nil {
			t.Error("batch 0 accepted")
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := d.Load(ctx, b.Program(nIn, nOut), 1); !errors.Is(err, context.Canceled) {
			t.Errorf("Load with a cancelled context: %v", err)
		}
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		if err := in.Step(context.Background(), make([]float32, 2*nIn)); !errors.Is(err, hal.ErrClosed) {
			t.Errorf("Step after Close: %v, want ErrClosed", err)
		}
	})
	t.Run("RefusesWhatDoesNotFit", func(t *testing.T) {
		d := open(t)
		tg := d.Capabilities().Target
		if tg.Cores == 0 && tg.MaxFanIn == 0 && tg.InputChannels == 0 {
			t.Skip("device has no resource limits")
		}
		// A layer wider than the whole device, or with more inputs than a
		// neuron may receive.
		n := 1 << 16
		if tg.InputChannels > 0 {
			n = tg.InputChannels + 1
		} else if tg.Cores > 0 && tg.NeuronsPerCore > 0 {
			n = tg.Cores*tg.NeuronsPerCore + 1
		}
		_, err := d.Load(context.Background(), b.Program(n, nOut), 1)
		if !errors.Is(err, compile.ErrUnsupported) {
			t.Fatalf("oversized program: %v, want an error wrapping compile.ErrUnsupported", err)
		}
		t.Logf("refused with: %v", err)
	})
}

// drive is a deterministic input pattern that makes the test program
// spike: values in [0, 3).
func drive(seed int) []float32 {
	rng := rand.New(rand.NewPCG(uint64(seed), 99))
	x := make([]float32, 64)
	for i := range x {
		x[i] = float32(rng.IntN(12)) / 4
	}
	return x
}

// idleSlots steps a batch of two in which slot 1 is idle for a while,
// with unreadable values on its input, beside two instances that step
// each slot's inputs alone: the outputs agree at every step, the idle
// slot resumes where it stopped, and the batch's counters (and
// saturations, where the device counts them) are the two instances'
// sums. An instance without hal.SlotMasker skips it.
func idleSlots(t *testing.T, b Backend) {
	ctx := context.Background()
	d, err := b.Open()
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	p := b.Program(nIn, nOut)
	load := func(n int) hal.Instance {
		in, err := d.Load(ctx, p, n)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		t.Cleanup(func() { in.Close() })
		return in
	}
	batched := load(2)
	masker, ok := batched.(hal.SlotMasker)
	if !ok {
		t.Skip("the instance steps every slot (no hal.SlotMasker)")
	}
	alone := []hal.Instance{load(1), load(1)}
	rng := rand.New(rand.NewPCG(7, 1))
	x := make([]float32, 2*nIn)
	for step := range 60 {
		idle := step >= 15 && step < 40
		on := []bool{true, !idle}
		if err := masker.SetActive(on); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			x[i] = float32(rng.IntN(12)) / 4
			if idle && i >= nIn {
				x[i] = b.Unreadable
			}
		}
		before := slices.Clone(batched.Output(0)[nOut:])
		if err := batched.Step(ctx, x); err != nil {
			t.Fatal(err)
		}
		for slot, a := range alone {
			if !on[slot] {
				if got := batched.Output(0)[nOut:]; !slices.Equal(got, before) {
					t.Fatalf("step %d: idle slot's output moved from %v to %v", step, before, got)
				}
				continue
			}
			if err := a.Step(ctx, x[slot*nIn:(slot+1)*nIn]); err != nil {
				t.Fatal(err)
			}
			if got, want := batched.Output(0)[slot*nOut:(slot+1)*nOut], a.Output(0); !slices.Equal(got, want) {
				t.Fatalf("step %d slot %d: batched %v, alone %v", step, slot, got, want)
			}
		}
	}
	got, sum := batched.Counters(), alone[0].Counters().Add(alone[1].Counters())
	got.Steps, sum.Steps = 0, 0
	if got != sum || got.Spikes == 0 || got.SpikingUpdates == 0 {
		t.Errorf("batch counters %+v, the slots' alone %+v", got, sum)
	}
	type saturations interface{ Saturations() int64 }
	if bs, ok := batched.(saturations); ok {
		if s := alone[0].(saturations).Saturations() + alone[1].(saturations).Saturations(); bs.Saturations() != s {
			t.Errorf("batch saturations %d, the slots' alone %d", bs.Saturations(), s)
		}
	}
	if err := masker.SetActive([]bool{true}); !errors.Is(err, snn.ErrInputSize) {
		t.Errorf("one flag for a batch of two: %v", err)
	}
}

// snapshots saves a slot of one instance part way and loads it into
// another slot of another instance, whose own slot had a history: the
// loaded slot steps on exactly as the saved one does, and bytes that are
// not a state are refused with hal.ErrSlotState. An instance without
// hal.Snapshotter skips it.
func snapshots(t *testing.T, b Backend) {
	ctx := context.Background()
	d, err := b.Open()
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	p := b.Program(nIn, nOut)
	load := func() hal.Instance {
		in, err := d.Load(ctx, p, 2)
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		t.Cleanup(func() { in.Close() })
		return in
	}
	first, second := load(), load()
	fs, ok := first.(hal.Snapshotter)
	if !ok {
		t.Skip("the instance cannot save slots (no hal.Snapshotter)")
	}
	ss := second.(hal.Snapshotter)
	step := func(in hal.Instance, s int) {
		x := append(drive(s)[:nIn:nIn], drive(s + 500)[:nIn]...)
		if err := in.Step(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	for s := range 20 {
		step(first, s)
		step(second, s+100)
	}
	state, err := fs.SaveSlot(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := ss.LoadSlot(1, state); err != nil {
		t.Fatal(err)
	}
	for s := 20; s < 48; s++ {
		// The saved slot sees inputs drive(s); slot 1 of second the same.
		x := append(drive(s)[:nIn:nIn], drive(s + 500)[:nIn]...)
		y := append(drive(s + 900)[:nIn:nIn], drive(s)[:nIn]...)
		if err := first.Step(ctx, x); err != nil {
			t.Fatal(err)
		}
		if err := second.Step(ctx, y); err != nil {
			t.Fatal(err)
		}
		if got, want := second.Output(0)[nOut:], first.Output(0)[:nOut]; !slices.Equal(got, want) {
			t.Fatalf("step %d: the loaded slot gives %v, the saved one %v", s, got, want)
		}
	}
	for _, bad := range [][]byte{nil, state[:len(state)-1], append(slices.Clone(state), 1)} {
		if err := ss.LoadSlot(0, bad); !errors.Is(err, hal.ErrSlotState) {
			t.Errorf("%d bytes of a %d-byte state: %v, want hal.ErrSlotState", len(bad), len(state), err)
		}
	}
	if _, err := fs.SaveSlot(nil, 2); err == nil {
		t.Error("SaveSlot out of range accepted")
	}
}
