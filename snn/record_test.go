package snn_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/snn"
)

// recIFGraph is three inputs driving three IF neurons one to one: with
// dt = 1 ms and R = 1000, v grows by its input every step and fires above
// 2.5, then resets to 0.
func recIFGraph(t *testing.T, batch int) *snn.Simulator {
	t.Helper()
	w := snn.NewTensor(3, 3)
	for i := 0; i < 3; i++ {
		w.Set(1, i, i)
	}
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{3}}).
		Add("syn", &snn.Linear{Weight: w}).
		Add("if", &snn.IF{R: []float64{1000}, VThreshold: []float64{2.5}, VReset: []float64{0}, Shape: []int{3}}).
		Add("out", &snn.Output{}).
		Connect("in", "syn", "if", "out")
	sim, err := snn.NewSimulator(g, &snn.Options{Dt: 1e-3, Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

func TestRecorderSpikesAndTraces(t *testing.T) {
	sim := recIFGraph(t, 2)
	rec, err := snn.NewRecorder(sim, &snn.RecorderOptions{
		Spikes: []string{"if"},
		Probes: []snn.Probe{
			{Node: "if", Neurons: []int{0, 2}},
			{Node: "syn", Var: snn.VarOut, Neurons: []int{2}},
		},
		Slots: []int{1},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Slot 0 is driven too, to show it is not recorded.
	in := []float32{
		5, 5, 5, // slot 0
		1, 0, 2, // slot 1
	}
	for range 7 {
		if err := rec.Step(in); err != nil {
			t.Fatal(err)
		}
	}
	want := []snn.SpikeEvent{
		{Step: 2, Slot: 1, Index: 2},
		{Step: 3, Slot: 1, Index: 0},
		{Step: 4, Slot: 1, Index: 2},
		{Step: 6, Slot: 1, Index: 0},
		{Step: 6, Slot: 1, Index: 2},
	}
	if got := rec.Spikes("if"); !slices.Equal(got, want) {
		t.Errorf("spikes\n got %v\nwant %v", got, want)
	}
	if got, want := rec.Steps(), []int64{1, 2, 3, 4, 5, 6, 7}; !slices.Equal(got, want) {
		t.Errorf("steps %v, want %v", got, want)
	}
	if got := rec.Times(); len(got) != 7 || got[0] != 1e-3 || got[6] != 7e-3 {
		t.Errorf("times %v, want 1e-3 ... 7e-3", got)
	}
	// The membrane after each step, reset where the neuron fired.
	if got, want := rec.Trace("if", snn.VarV, 1, 0), []float32{1, 2, 0, 1, 2, 0, 1}; !slices.Equal(got, want) {
		t.Errorf("v of neuron 0: %v, want %v", got, want)
	}
	if got, want := rec.Trace("if", "", 1, 2), []float32{2, 0, 2, 0, 2, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("v of neuron 2: %v, want %v", got, want)
	}
	if got, want := rec.Trace("syn", snn.VarOut, 1, 2), []float32{2, 2, 2, 2, 2, 2, 2}; !slices.Equal(got, want) {
		t.Errorf("output of syn 2: %v, want %v", got, want)
	}
	for _, c := range []struct {
		node, v     string
		slot, index int
	}{
		{"if", snn.VarV, 0, 0},   // slot not recorded
		{"if", snn.VarV, 1, 1},   // neuron not probed
		{"if", snn.VarV, 1, 3},   // out of range
		{"if", snn.VarV, 1, -1},  // out of range
		{"if", snn.VarOut, 1, 0}, // variable not probed
		{"in", snn.VarOut, 1, 0}, // node not probed
	} {
		if got := rec.Trace(c.node, c.v, c.slot, c.index); got != nil {
			t.Errorf("Trace(%q, %q, %d, %d) = %v, want nil", c.node, c.v, c.slot, c.index, got)
		}
	}
	if got := rec.Spikes("in"); got != nil {
		t.Errorf("spikes of an unrecorded node: %v", got)
	}
	if got := rec.SpikeNodes(); !slices.Equal(got, []string{"if"}) {
		t.Errorf("SpikeNodes %v", got)
	}
	ps := rec.Probes()
	if len(ps) != 2 || ps[0].Var != snn.VarV || !slices.Equal(ps[0].Neurons, []int{0, 2}) {
		t.Errorf("Probes %+v", ps)
	}

	// Spikes already returned survive later recording; Clear starts over.
	before := rec.Spikes("if")
	if err := rec.Step(in); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, want) {
		t.Error("recording changed events returned earlier")
	}
	rec.Clear()
	if rec.Len() != 0 || len(rec.Spikes("if")) != 0 || len(rec.Trace("if", snn.VarV, 1, 0)) != 0 {
		t.Error("Clear left data behind")
	}
	if err := rec.Step(in); err != nil {
		t.Fatal(err)
	}
	if got := rec.Trace("if", snn.VarV, 1, 0); !slices.Equal(got, []float32{0}) || rec.Steps()[0] != 9 {
		t.Errorf("after Clear: trace %v steps %v, want [0] (a spike) at step 9", got, rec.Steps())
	}
}

func TestRecorderRecordTwice(t *testing.T) {
	sim := recIFGraph(t, 1)
	rec, err := snn.NewRecorder(sim, &snn.RecorderOptions{Probes: []snn.Probe{{Node: "if"}}})
	if err != nil {
		t.Fatal(err)
	}
	// The initial state may be sampled before the first step.
	if err := rec.Record(); err != nil {
		t.Fatal(err)
	}
	if err := rec.Record(); err == nil || !strings.HasPrefix(err.Error(), "snn: ") {
		t.Errorf("second Record of step 0: error %v", err)
	}
	if err := rec.Step([]float32{1, 1, 1}); err != nil {
		t.Fatal(err)
	}
	if err := rec.Step([]float32{1}); !errors.Is(err, snn.ErrInputSize) {
		t.Errorf("Step with a short input: %v, want ErrInputSize", err)
	}
	if got := rec.Trace("if", snn.VarV, 0, 1); !slices.Equal(got, []float32{0, 1}) {
		t.Errorf("trace %v, want [0 1]", got)
	}
}

// recLIFSim is a random LIF layer with a CubaLIF readout, batch 3.
func recLIFSim(t testing.TB) *snn.Simulator {
	const nin, n, nout = 40, 60, 5
	rng := rand.New(rand.NewPCG(1, 2))
	w := snn.NewTensor(n, nin)
	for i := range w.Data {
		w.Data[i] = float32(rng.NormFloat64()) * 0.6
	}
	w2 := snn.NewTensor(nout, n)
	for i := range w2.Data {
		w2.Data[i] = float32(rng.NormFloat64())
	}
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{nin}}).
		Add("fc", &snn.Linear{Weight: w}).
		Add("lif", &snn.LIF{Tau: []float64{10e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}, Shape: []int{n}}).
		Add("fc2", &snn.Linear{Weight: w2}).
		Add("cuba", &snn.CubaLIF{TauSyn: []float64{5e-3}, TauMem: []float64{20e-3}, R: []float64{1}, VLeak: []float64{0.1}, VThreshold: []float64{1}, VReset: []float64{0}, WIn: []float64{1}, Shape: []int{nout}}).
		Add("out", &snn.Output{}).
		Connect("in", "fc", "lif", "fc2", "cuba", "out")
	sim, err := snn.NewSimulator(g, &snn.Options{Batch: 3})
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

// TestRecorderMatchesSimulator checks every recorded value against the
// simulator's own accessors, on both reading paths (a few neurons looked
// up one by one, and whole variables copied at once).
func TestRecorderMatchesSimulator(t *testing.T) {
	sim := recLIFSim(t)
	rec, err := snn.NewRecorder(sim, &snn.RecorderOptions{
		Spikes: []string{"lif", "cuba", "in"},
		Probes: []snn.Probe{
			{Node: "lif", Var: snn.VarV, Neurons: []int{59, 3, 17}}, // one by one
			{Node: "cuba", Var: snn.VarI},                           // whole
			{Node: "cuba", Var: snn.VarV},                           // whole
			{Node: "fc", Var: snn.VarOut, Neurons: []int{0, 1}},
		},
		Slots: []int{2, 0},
		Steps: 50,
	})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := snn.NewBernoulli(&snn.BernoulliOptions{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	p := make([]float32, 40)
	for i := range p {
		p[i] = 0.3
	}
	type key struct {
		node, v     string
		slot, index int
	}
	want := map[key][]float32{}
	wantSpikes := map[string][]snn.SpikeEvent{}
	for range 50 {
		if err := enc.Encode(sim.InputBuffer(0), p); err != nil {
			t.Fatal(err)
		}
		if err := rec.Step(); err != nil {
			t.Fatal(err)
		}
		for _, slot := range []int{2, 0} {
			for _, pr := range rec.Probes() {
				for _, j := range pr.Neurons {
					var v float32
					if pr.Var == snn.VarOut {
						v = sim.NodeOutput(pr.Node)[slot*len(sim.NodeOutput(pr.Node))/3+j]
					} else if v, err = sim.StateAt(pr.Node, pr.Var, slot, j); err != nil {
						t.Fatal(err)
					}
					k := key{pr.Node, pr.Var, slot, j}
					want[k] = append(want[k], v)
				}
			}
			for _, node := range []string{"lif", "cuba", "in"} {
				out := sim.NodeOutput(node)
				size := len(out) / 3
				for j, v := range out[slot*size : (slot+1)*size] {
					if v != 0 {
						wantSpikes[node] = append(wantSpikes[node], snn.SpikeEvent{Step: sim.Time(), Slot: int32(slot), Index: int32(j)})
					}
				}
			}
		}
	}
	for k, w := range want {
		if got := rec.Trace(k.node, k.v, k.slot, k.index); !slices.Equal(got, w) {
			t.Errorf("Trace%v:\n got %v\nwant %v", k, got, w)
		}
	}
	if len(want) != 2*(3+5+5+2) {
		t.Errorf("%d traces checked", len(want))
	}
	for node, w := range wantSpikes {
		if got := rec.Spikes(node); !slices.Equal(got, w) {
			t.Errorf("spikes of %s:\n got %v\nwant %v", node, got, w)
		}
	}
	if len(wantSpikes["lif"]) == 0 || len(wantSpikes["in"]) == 0 {
		t.Errorf("the test network is silent: %d lif spikes, %d input spikes", len(wantSpikes["lif"]), len(wantSpikes["in"]))
	}
}

func TestRecorderDefaults(t *testing.T) {
	sim := recLIFSim(t)
	for _, opts := range []*snn.RecorderOptions{nil, {}} {
		rec, err := snn.NewRecorder(sim, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := rec.SpikeNodes(); !slices.Equal(got, []string{"cuba", "lif"}) {
			t.Errorf("default spike nodes %v, want the spiking nodes [cuba lif]", got)
		}
		if got := rec.Slots(); !slices.Equal(got, []int{0, 1, 2}) {
			t.Errorf("default slots %v", got)
		}
		if len(rec.Probes()) != 0 {
			t.Errorf("default probes %v", rec.Probes())
		}
	}
	// Probes alone record no spikes.
	rec, err := snn.NewRecorder(sim, &snn.RecorderOptions{Probes: []snn.Probe{{Node: "lif"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.SpikeNodes(); len(got) != 0 {
		t.Errorf("spike nodes %v, want none", got)
	}
	if got := rec.Probes()[0].Neurons; len(got) != 60 || got[59] != 59 {
		t.Errorf("default neurons %v, want all 60", got)
	}
}

func TestRecorderErrors(t *testing.T) {
	sim := recLIFSim(t)
	tests := []struct {
		name    string
		opts    snn.RecorderOptions
		noState bool // wraps ErrNoState
	}{
		{"unknown spike node", snn.RecorderOptions{Spikes: []string{"nope"}}, true},
		{"spike node twice", snn.RecorderOptions{Spikes: []string{"lif", "lif"}}, false},
		{"unknown probe node", snn.RecorderOptions{Probes: []snn.Probe{{Node: "nope"}}}, true},
		{"unknown variable", snn.RecorderOptions{Probes: []snn.Probe{{Node: "lif", Var: "w"}}}, true},
		{"current of a LIF", snn.RecorderOptions{Probes: []snn.Probe{{Node: "lif", Var: snn.VarI}}}, true},
		{"membrane of a Linear", snn.RecorderOptions{Probes: []snn.Probe{{Node: "fc"}}}, true},
		{"neuron out of range", snn.RecorderOptions{Probes: []snn.Probe{{Node: "lif", Neurons: []int{60}}}}, false},
		{"negative neuron", snn.RecorderOptions{Probes: []snn.Probe{{Node: "fc", Var: snn.VarOut, Neurons: []int{-1}}}}, false},
		{"neuron twice", snn.RecorderOptions{Probes: []snn.Probe{{Node: "lif", Neurons: []int{1, 2, 1}}}}, false},
		{"probe twice", snn.RecorderOptions{Probes: []snn.Probe{{Node: "lif"}, {Node: "lif", Var: snn.VarV}}}, false},
		{"slot out of range", snn.RecorderOptions{Slots: []int{3}}, false},
		{"negative slot", snn.RecorderOptions{Slots: []int{-1}}, false},
		{"slot twice", snn.RecorderOptions{Slots: []int{1, 1}}, false},
		{"negative steps", snn.RecorderOptions{Steps: -1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := snn.NewRecorder(sim, &tc.opts)
			if err == nil {
				t.Fatalf("no error, got a recorder of %v", rec.SpikeNodes())
			}
			if !strings.HasPrefix(err.Error(), "snn: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			if errors.Is(err, snn.ErrNoState) != tc.noState {
				t.Errorf("error %v: errors.Is(ErrNoState) = %v, want %v", err, !tc.noState, tc.noState)
			}
		})
	}
	if _, err := snn.NewRecorder(nil, nil); err == nil {
		t.Error("nil simulator: no error")
	}
}

// TestRecorderAllocations: with Steps reserved, recording traces never
// allocates; spike events grow their buffers geometrically, so a long run
// allocates only a few times in all.
func TestRecorderAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	sim := recLIFSim(t)
	const steps = 2000
	traces, err := snn.NewRecorder(sim, &snn.RecorderOptions{
		Probes: []snn.Probe{
			{Node: "lif", Neurons: []int{1, 2, 3}},
			{Node: "cuba", Var: snn.VarI},
			{Node: "fc", Var: snn.VarOut, Neurons: []int{4}},
		},
		Steps: steps + 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	spikes, err := snn.NewRecorder(sim, &snn.RecorderOptions{Spikes: []string{"in", "lif", "cuba"}})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := snn.NewBernoulli(&snn.BernoulliOptions{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	p := make([]float32, 40)
	for i := range p {
		p[i] = 0.2
	}
	step := func() {
		if err := enc.Encode(sim.InputBuffer(0), p); err != nil {
			t.Fatal(err)
		}
		if err := traces.Step(); err != nil {
			t.Fatal(err)
		}
		if err := spikes.Record(); err != nil {
			t.Fatal(err)
		}
	}
	step()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range steps {
		step()
	}
	runtime.ReadMemStats(&after)
	n := 0
	for _, node := range spikes.SpikeNodes() {
		n += len(spikes.Spikes(node))
	}
	if n < steps {
		t.Fatalf("only %d spikes in %d steps", n, steps)
	}
	// About log2(n) growths per spiking node, and nothing else.
	if got := after.Mallocs - before.Mallocs; got > 3*40 {
		t.Errorf("%d allocations in %d steps (%d events)", got, steps, n)
	}
	traces.Clear()
	if got := testing.AllocsPerRun(steps-1, func() {
		if err := traces.Step(); err != nil {
			t.Fatal(err)
		}
	}); got != 0 {
		t.Errorf("recording reserved traces: %v allocations per step, want 0", got)
	}
}

func ExampleRecorder() {
	// Two integrate-and-fire neurons driven by constant currents: v grows
	// by the input each 1 ms step and fires above 2.5.
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{2}}).
		Add("if", &snn.IF{R: []float64{1000}, VThreshold: []float64{2.5}, VReset: []float64{0}, Shape: []int{2}}).
		Connect("in", "if")
	sim, err := snn.NewSimulator(g, nil)
	if err != nil {
		panic(err)
	}
	rec, err := snn.NewRecorder(sim, &snn.RecorderOptions{
		Spikes: []string{"if"},
		Probes: []snn.Probe{{Node: "if", Var: snn.VarV, Neurons: []int{0}}},
	})
	if err != nil {
		panic(err)
	}
	for range 6 {
		if err := rec.Step([]float32{1, 2}); err != nil {
			panic(err)
		}
	}
	for _, s := range rec.Spikes("if") {
		fmt.Printf("neuron %d fired at %.0f ms\n", s.Index, float64(s.Step)*rec.Dt()*1e3)
	}
	fmt.Println("v of neuron 0:", rec.Trace("if", snn.VarV, 0, 0))
	// Output:
	// neuron 1 fired at 2 ms
	// neuron 0 fired at 3 ms
	// neuron 1 fired at 4 ms
	// neuron 0 fired at 6 ms
	// neuron 1 fired at 6 ms
	// v of neuron 0: [1 2 0 1 2 0]
}

// BenchmarkRecord measures a step of the random LIF network with and
// without recording its spikes and a few membrane traces.
func BenchmarkRecord(b *testing.B) {
	for _, record := range []bool{false, true} {
		name := "step"
		if record {
			name = "step+record"
		}
		b.Run(name, func(b *testing.B) {
			sim := recLIFSim(b)
			rec, err := snn.NewRecorder(sim, &snn.RecorderOptions{
				Spikes: []string{"in", "lif", "cuba"},
				Probes: []snn.Probe{{Node: "lif", Neurons: []int{0, 1, 2, 3}}, {Node: "cuba", Var: snn.VarI}},
				Steps:  b.N,
			})
			if err != nil {
				b.Fatal(err)
			}
			enc, err := snn.NewBernoulli(&snn.BernoulliOptions{Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			p := make([]float32, 40)
			for i := range p {
				p[i] = 0.2
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				_ = enc.Encode(sim.InputBuffer(0), p)
				if err := sim.Step(); err != nil {
					b.Fatal(err)
				}
				if record {
					if err := rec.Record(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "timesteps/s")
			b.ReportMetric(float64(sim.Counters().Spikes)/float64(b.N), "spikes/op")
		})
	}
}
