package snn

import (
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
