package snn

import (
	"math/rand/v2"
	"testing"
)

// TestBFloat16Weights: a simulator with bfloat16 weights gives, bit for
// bit and at every kernel level, what a float32 simulator gives on the
// weights rounded to bfloat16, on both the event path (a sparse input)
// and the dense one, in a batch.
func TestBFloat16Weights(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const nin, nout, batch = 300, 200, 3
	w, wr := NewTensor(nout, nin), NewTensor(nout, nin)
	for i := range w.Data {
		w.Data[i] = float32(rng.NormFloat64())
		wr.Data[i] = fromBF16(toBF16(w.Data[i]))
	}
	bias := make([]float32, nout)
	for i := range bias {
		bias[i] = float32(rng.NormFloat64())
	}
	graph := func(w *Tensor) *Graph {
		return NewGraph().Add("x", &Input{Shape: []int{nin}}).Add("w", &Affine{Weight: w, Bias: bias}).
			Add("y", &Output{}).Connect("x", "w", "y")
	}
	in := make([]float32, batch*nin)
	for i := range in {
		switch {
		case i < nin: // slot 0: a few events
			if i%37 == 0 {
				in[i] = 1
			}
		default: // the others dense
			in[i] = float32(rng.NormFloat64())
		}
	}
	run := func(g *Graph, p Precision) []float32 {
		sim, err := NewSimulator(g, &Options{Batch: batch, Weights: p})
		if err != nil {
			t.Fatal(err)
		}
		defer sim.Close()
		if err := sim.Step(in); err != nil {
			t.Fatal(err)
		}
		return append([]float32(nil), sim.Output(0)...)
	}
	var want []float32
	withISA(isaGo, func() { want = run(graph(wr), Float32) })
	for _, l := range isaLevels() {
		var got, exact []float32
		withISA(l, func() { got, exact = run(graph(w), BFloat16), run(graph(w), Float32) })
		if i := sameBits(got, want); i >= 0 {
			t.Fatalf("level %v: [%d] = %v, want %v", l, i, got[i], want[i])
		}
		if sameBits(exact, want) < 0 {
			t.Fatalf("level %v: float32 weights gave the rounded weights' result", l)
		}
	}
	if _, err := NewSimulator(graph(w), &Options{Weights: 7}); err == nil {
		t.Fatal("Weights 7 accepted")
	}
}
