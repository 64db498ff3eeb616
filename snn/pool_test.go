package snn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestWorkersSameResult: splitting dense products among workers changes
// no bit of any output, for one slot and several, and Step still
// allocates nothing.
func TestWorkersSameResult(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	randT := func(scale float64, shape ...int) *Tensor {
		x := NewTensor(shape...)
		for i := range x.Data {
			x.Data[i] = float32(rng.NormFloat64() * scale)
		}
		return x
	}
	g := NewGraph().
		Add("in", &Input{Shape: []int{300}}).
		Add("fc1", &Affine{Weight: randT(0.1, 700, 300), Bias: randT(0.1, 700).Data}).
		Add("lif", &LIF{Tau: []float64{5e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{0.5}, VReset: []float64{0}}).
		Add("fc2", &Linear{Weight: randT(0.1, 500, 700)}).
		Add("mix", &LI{Tau: []float64{4e-3}, R: []float64{1}, VLeak: []float64{0}}).
		Add("fc3", &Linear{Weight: randT(0.1, 130, 500)}).
		Add("out", &Output{}).
		Connect("in", "fc1", "lif", "fc2", "mix", "fc3", "out")
	for _, batch := range []int{1, 3} {
		run := func(workers int) []float32 {
			sim, err := NewSimulator(g, &Options{Batch: batch, Workers: workers, EventFraction: 0.01})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			in := make([]float32, 300*batch)
			var out []float32
			for step := range 20 {
				for i := range in {
					in[i] = float32(rng.NormFloat64())
				}
				if err := sim.Step(in); err != nil {
					t.Fatal(err)
				}
				if step == 0 {
					if a := testing.AllocsPerRun(5, func() { sim.Step(in) }); a != 0 {
						t.Fatalf("workers %d: %v allocations per step", workers, a)
					}
				}
				out = append(out, sim.Output(0)...)
			}
			return out
		}
		seed := rng.Uint64()
		rng = rand.New(rand.NewPCG(seed, 1))
		one := run(1)
		rng = rand.New(rand.NewPCG(seed, 1))
		three := run(3)
		if !slices.Equal(one, three) {
			t.Fatalf("batch %d: outputs differ between 1 and 3 workers", batch)
		}
	}
	if _, err := NewSimulator(g, &Options{Workers: -1}); err == nil {
		t.Fatal("Workers -1 accepted")
	}
}

// The slots of a large step are shared among the workers (a convolution
// and a neuron node's step, CUBA's fused chain among them), with the results
// of one worker bit for bit, idle slots and refractory holds included.
func TestWorkersShareSlots(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	one := func(v float64) []float64 { return []float64{v} }
	conv := NewGraph().
		Add("in", &Input{Shape: []int{2, 16, 16}}).
		Add("conv", &Conv2d{Weight: randTensor(rng, 1, 8, 2, 3, 3), Stride: [2]int{1, 1}, Padding: [2]int{1, 1},
			Dilation: [2]int{1, 1}, Groups: 1, InputShape: []int{2, 16, 16}}).
		Add("lif1", &LIF{Tau: one(0.01), R: one(20), VLeak: one(0), VThreshold: one(1), VReset: one(0),
			Refractory: one(0.002), Shape: []int{8 * 16 * 16}}).
		Add("fc", &Linear{Weight: randTensor(rng, 0.5, 10, 8*16*16)}).
		Add("lif2", lifNode(10)).
		Add("out", &Output{}).
		Connect("in", "conv", "lif1", "fc", "lif2", "out")
	sparse := func(scale float64) *Tensor {
		w := randTensor(rng, 0.02, 2048, 2048)
		for i := range w.Data {
			w.Data[i] = float32(scale * math.Abs(float64(w.Data[i])))
		}
		return w
	}
	for _, tc := range []struct {
		name   string
		g      *Graph
		batch  int
		shared string // a node whose step is shared
		nodes  []string
	}{
		{"conv", conv, 16, "conv", []string{"conv", "lif1", "out"}},
		{"chain", chainGraph(2048, sparse(0.3), sparse(-0.3)), 8, "P", []string{"P", "ge", "gi", "y"}},
	} {
		run := func(workers int) ([]float32, Counters) {
			sim, err := NewSimulator(tc.g, &Options{Batch: tc.batch, Workers: workers, Dt: 1e-4})
			if err != nil {
				t.Fatal(err)
			}
			defer sim.Close()
			rng := rand.New(rand.NewPCG(13, 14))
			lists := make([][]int32, tc.batch)
			on := make([]bool, tc.batch)
			var out []float32
			for step := range 60 {
				if step == 30 {
					for slot := range on {
						on[slot] = slot%3 != 1
					}
					sim.SetActive(on)
				}
				if len(sim.inputs) == 0 {
					err = sim.Step()
				} else {
					for slot := range lists {
						lists[slot] = lists[slot][:0]
						for i := range 2 * 16 * 16 {
							if rng.Float64() < 0.2 {
								lists[slot] = append(lists[slot], int32(i))
							}
						}
					}
					err = sim.StepEvents(lists)
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, name := range tc.nodes {
					out = append(out, sim.NodeOutput(name)...)
				}
			}
			step := func() {
				if len(sim.inputs) == 0 {
					sim.Step()
				} else {
					sim.StepEvents(lists)
				}
			}
			if a := testing.AllocsPerRun(5, step); a != 0 {
				t.Fatalf("%s: workers %d: %v allocations per step", tc.name, workers, a)
			}
			if workers > 1 {
				var tasks int
				switch op := sim.byName[tc.shared].op.(type) {
				case *convOp:
					tasks = len(op.job.tasks)
				case *neuronOp:
					tasks = len(op.job.tasks)
				}
				if tasks == 0 {
					t.Fatalf("%s: the step of %s was not shared", tc.name, tc.shared)
				}
			}
			return out, sim.Counters()
		}
		one, c1 := run(1)
		two, c2 := run(2)
		if c1 != c2 {
			t.Fatalf("%s: counters %+v with one worker, %+v with two", tc.name, c1, c2)
		}
		if c1.Spikes == 0 {
			t.Fatalf("%s: no spikes", tc.name)
		}
		for i := range one {
			if math.Float32bits(one[i]) != math.Float32bits(two[i]) {
				t.Fatalf("%s: value %d is %v with one worker, %v with two", tc.name, i, one[i], two[i])
			}
		}
	}
}
