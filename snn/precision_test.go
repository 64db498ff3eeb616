package snn

import (
	"math"
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

// TestInt8Weights: a simulator with int8 weights gives the same outputs,
// bit for bit, at every kernel level and in four-slot groups as in single
// slots, on the event path and the dense one; each output is within the
// rounding the steps allow of the float32 simulator's.
func TestInt8Weights(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	const nin, nout, batch = 300, 200, 6
	w := NewTensor(nout, nin)
	for i := range w.Data {
		w.Data[i] = float32(rng.NormFloat64())
	}
	for r := range nout { // a column of zeros: step 0
		w.Data[r*nin+7] = 0
	}
	g := NewGraph().Add("x", &Input{Shape: []int{nin}}).Add("w", &Linear{Weight: w}).
		Add("y", &Output{}).Connect("x", "w", "y")
	in := make([]float32, batch*nin)
	for i := range in {
		switch {
		case i < nin: // slot 0: a few events
			if i%37 == 0 {
				in[i] = 1
			}
		default: // the others dense: five slots, a group of four and one alone
			in[i] = float32(rng.NormFloat64())
		}
	}
	run := func(p Precision) []float32 {
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
	var want, exact []float32
	withISA(isaGo, func() { want, exact = run(Int8), run(Float32) })
	q, step := make([]int8, nin*nout), make([]float32, nin)
	quantizeInt8(w.Data, nout, nin, q, step)
	if step[7] != 0 {
		t.Fatalf("zero column: step %v", step[7])
	}
	for s := range batch {
		x := in[s*nin : (s+1)*nin]
		for r := range nout {
			var bound float64 // half a step per weight, plus float32 rounding
			for j, xj := range x {
				bound += math.Abs(float64(xj)) * (float64(step[j])/2 + 1e-5)
			}
			if d := math.Abs(float64(want[s*nout+r] - exact[s*nout+r])); d > bound {
				t.Fatalf("slot %d output %d: int8 %v, float32 %v: off by %v, bound %v", s, r, want[s*nout+r], exact[s*nout+r], d, bound)
			}
		}
	}
	for _, l := range isaLevels() {
		var got []float32
		withISA(l, func() { got = run(Int8) })
		if i := sameBits(got, want); i >= 0 {
			t.Fatalf("level %v: [%d] = %v, portable %v", l, i, got[i], want[i])
		}
	}
}

// TestQuantizeInt8: every weight is within half a step of its integer
// times the step, and the largest of each column is ±127 steps.
func TestQuantizeInt8(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const nout, nin = 37, 11
	w := make([]float32, nout*nin)
	for i := range w {
		w[i] = float32(rng.NormFloat64() * float64(1+i%nin))
	}
	q, step := make([]int8, nout*nin), make([]float32, nin)
	quantizeInt8(w, nout, nin, q, step)
	for j := range nin {
		peak := 0
		for r := range nout {
			v, k := float64(w[r*nin+j]), q[j*nout+r]
			if d := math.Abs(v - float64(step[j])*float64(k)); d > float64(step[j])*0.5000001 {
				t.Fatalf("w[%d,%d] = %v: %d steps of %v, off by %v", r, j, v, k, step[j], d)
			}
			if k == 127 || k == -127 {
				peak++
			}
		}
		if peak == 0 {
			t.Fatalf("column %d: no weight at ±127", j)
		}
	}
}
