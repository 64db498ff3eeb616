package snn

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// eventsGraph is 40 inputs through a dense and a compressed-column
// Linear, each into LIF neurons.
func eventsGraph(rng *rand.Rand) *Graph {
	w2 := randTensor(rng, 0.1, 8, 24)
	return NewGraph().
		Add("in", &Input{Shape: []int{40}}).
		Add("fc1", &Linear{Weight: randTensor(rng, 1, 24, 40)}).
		Add("lif1", lifNode(24)).
		Add("fc2", &Linear{Weight: w2}).
		Add("lif2", lifNode(8)).
		Add("out", &Output{}).
		Connect("in", "fc1", "lif1", "fc2", "lif2", "out")
}

// StepEvents gives Step's results bit for bit, idle slots included, and
// also when steps by Step, a slot's state loaded and writes to
// InputBuffer come between its steps.
func TestStepEventsMatchesStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	g := eventsGraph(rng)
	const batch = 3
	dense, err := NewSimulator(g, &Options{Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	events, _ := NewSimulator(g, &Options{Batch: batch})
	x := make([]float32, batch*40)
	lists := make([][]int32, batch)
	var saved []byte
	for step := range 60 {
		if step == 20 {
			for _, s := range []*Simulator{dense, events} {
				s.SetActive([]bool{true, false, true})
			}
		}
		clear(x)
		for slot := range batch {
			lists[slot] = lists[slot][:0]
			for i := range 40 {
				if rng.Float64() < 0.3 {
					x[slot*40+i] = 1
					lists[slot] = append(lists[slot], int32(i))
				}
			}
		}
		if err := dense.Step(x); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case step%7 == 3:
			err = events.Step(x)
		case step%11 == 5:
			for i := range events.InputBuffer(0) {
				events.InputBuffer(0)[i] = 1 // written, then not fed
			}
			err = events.StepEvents(lists)
		default:
			err = events.StepEvents(lists)
		}
		if err != nil {
			t.Fatal(err)
		}
		switch step {
		case 12:
			saved, err = events.SaveSlot(nil, 2)
			if err != nil {
				t.Fatal(err)
			}
		case 33:
			for _, s := range []*Simulator{dense, events} {
				if err := s.LoadSlot(2, saved); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, name := range []string{"in", "lif1", "fc2", "out"} {
			a, b := dense.NodeOutput(name), events.NodeOutput(name)
			for i := range a {
				if name == "in" && step >= 20 && i/40 == 1 {
					continue // an idle slot's input is not read
				}
				if a[i] != b[i] {
					t.Fatalf("step %d: %s[%d] is %v by Step, %v by StepEvents", step, name, i, a[i], b[i])
				}
			}
		}
		if dense.LastStep() != events.LastStep() {
			t.Fatalf("step %d: counters %+v by Step, %+v by StepEvents", step, dense.LastStep(), events.LastStep())
		}
	}
	if a := testing.AllocsPerRun(50, func() { events.StepEvents(lists) }); a != 0 {
		t.Fatalf("StepEvents allocates %v times", a)
	}
}

func TestStepEventsRefused(t *testing.T) {
	sim, err := NewSimulator(eventsGraph(rand.New(rand.NewPCG(5, 6))), &Options{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	for name, lists := range map[string][][]int32{
		"one list for two slots": {{1}},
		"out of order":           {{3, 2}, nil},
		"twice":                  {{2, 2}, nil},
		"out of range":           {nil, {40}},
		"negative":               {{-1}, nil},
	} {
		if err := sim.StepEvents(lists); !errors.Is(err, ErrInputSize) {
			t.Errorf("%s: %v, want ErrInputSize", name, err)
		}
	}
	if sim.Time() != 0 {
		t.Fatal("a refused step advanced time")
	}
	two, err := NewSimulator(allKindsGraph(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := two.StepEvents([][]int32{{0}}); !errors.Is(err, ErrInputSize) {
		t.Fatalf("a graph of two Input nodes: %v, want ErrInputSize", err)
	}
}

// Sharing the slots' event-driven products among workers changes no bit
// of any output or counter, and a step still allocates nothing.
func TestWorkersShareEvents(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	g := NewGraph().
		Add("in", &Input{Shape: []int{200}}).
		Add("fc1", &Linear{Weight: randTensor(rng, 1, 256, 200)}).
		Add("lif1", lifNode(256)).
		Add("fc2", &Linear{Weight: randTensor(rng, 1, 10, 256)}).
		Add("lif2", lifNode(10)).
		Add("out", &Output{}).
		Connect("in", "fc1", "lif1", "fc2", "lif2", "out")
	const batch = 8
	run := func(workers int) ([]float32, Counters) {
		sim, err := NewSimulator(g, &Options{Batch: batch, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		defer sim.Close()
		if sim.pool == nil && workers > 1 {
			t.Fatal("no pool")
		}
		rng := rand.New(rand.NewPCG(9, 9))
		lists := make([][]int32, batch)
		var out []float32
		for step := range 40 {
			if step == 20 {
				sim.SetActive([]bool{true, false, true, true, false, true, true, true})
			}
			for slot := range lists {
				lists[slot] = lists[slot][:0]
				for i := range 200 {
					if rng.Float64() < 0.2 {
						lists[slot] = append(lists[slot], int32(i))
					}
				}
			}
			if err := sim.StepEvents(lists); err != nil {
				t.Fatal(err)
			}
			out = append(out, sim.NodeOutput("fc1")...)
			out = append(out, sim.Output(0)...)
		}
		if a := testing.AllocsPerRun(5, func() { sim.StepEvents(lists) }); a != 0 {
			t.Fatalf("workers %d: %v allocations per step", workers, a)
		}
		return out, sim.Counters()
	}
	one, c1 := run(1)
	two, c2 := run(2)
	if c1 != c2 {
		t.Fatalf("counters %+v with one worker, %+v with two", c1, c2)
	}
	for i := range one {
		if math.Float32bits(one[i]) != math.Float32bits(two[i]) {
			t.Fatalf("value %d is %v with one worker, %v with two", i, one[i], two[i])
		}
	}
}
