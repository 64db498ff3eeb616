package snn

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func randTensor(rng *rand.Rand, density float64, shape ...int) *Tensor {
	t := NewTensor(shape...)
	for i := range t.Data {
		if rng.Float64() < density {
			t.Data[i] = float32(rng.NormFloat64())
		}
	}
	return t
}

func randInput(rng *rand.Rand, n int, density float64, binary bool) []float32 {
	x := make([]float32, n)
	for i := range x {
		if rng.Float64() < density {
			if binary {
				x[i] = 1
			} else {
				x[i] = float32(rng.NormFloat64())
			}
		}
	}
	return x
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// Linear and Affine give W·x + b whichever path (event-driven or dense,
// compressed or dense weights) the simulator takes, checked against a
// plain double loop.
func TestLinearPaths(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, wd := range []float64{0.05, 1} {
		for _, xd := range []float64{0.02, 0.6} {
			for _, binary := range []bool{true, false} {
				w := randTensor(rng, wd, 30, 50)
				bias := make([]float32, 30)
				for i := range bias {
					bias[i] = float32(i) / 10
				}
				sim := single(t, 50, &Affine{Weight: w, Bias: bias}, &Options{Batch: 3})
				in := randInput(rng, 150, xd, binary)
				if err := sim.Step(in); err != nil {
					t.Fatal(err)
				}
				var wantOps int64
				for slot := 0; slot < 3; slot++ {
					for r := 0; r < 30; r++ {
						want := float64(bias[r])
						for j := 0; j < 50; j++ {
							want += float64(w.Data[r*50+j]) * float64(in[slot*50+j])
							if r == 0 && in[slot*50+j] != 0 {
								for rr := 0; rr < 30; rr++ {
									if w.Data[rr*50+j] != 0 {
										wantOps++
									}
								}
							}
						}
						if got := sim.Output(0)[slot*30+r]; !near(float64(got), want, 1e-5) {
							t.Fatalf("wd %v xd %v binary %v slot %d row %d: %v, want %v", wd, xd, binary, slot, r, got, want)
						}
					}
				}
				if got := sim.LastStep().SynapticOps; got != wantOps {
					t.Errorf("wd %v xd %v: %d synaptic ops, want %d", wd, xd, got, wantOps)
				}
			}
		}
	}
}

// naiveConv2d is the textbook grouped convolution.
func naiveConv2d(x []float32, in []int, w *Tensor, bias []float32, stride, pad, dil [2]int, groups int) ([]float64, int, int) {
	oc, icPer, kh, kw := w.Shape[0], w.Shape[1], w.Shape[2], w.Shape[3]
	oh := convOut(in[1], kh, stride[0], pad[0], dil[0])
	ow := convOut(in[2], kw, stride[1], pad[1], dil[1])
	out := make([]float64, oc*oh*ow)
	ocPer := oc / groups
	for o := 0; o < oc; o++ {
		g := o / ocPer
		for y := 0; y < oh; y++ {
			for xx := 0; xx < ow; xx++ {
				s := 0.0
				if bias != nil {
					s = float64(bias[o])
				}
				for ci := 0; ci < icPer; ci++ {
					c := g*icPer + ci
					for ky := 0; ky < kh; ky++ {
						for kx := 0; kx < kw; kx++ {
							iy := y*stride[0] - pad[0] + ky*dil[0]
							ix := xx*stride[1] - pad[1] + kx*dil[1]
							if iy < 0 || ix < 0 || iy >= in[1] || ix >= in[2] {
								continue
							}
							s += float64(w.Data[((o*icPer+ci)*kh+ky)*kw+kx]) * float64(x[(c*in[1]+iy)*in[2]+ix])
						}
					}
				}
				out[(o*oh+y)*ow+xx] = s
			}
		}
	}
	return out, oh, ow
}

func TestConv2dMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		in               []int
		oc, k            int
		stride, pad, dil [2]int
		groups           int
		density          float64
	}{
		{[]int{1, 8, 8}, 4, 3, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1}, 1, 0.3},
		{[]int{4, 9, 7}, 6, 3, [2]int{2, 1}, [2]int{0, 2}, [2]int{1, 2}, 2, 1},
		{[]int{3, 5, 6}, 3, 2, [2]int{1, 2}, [2]int{1, 0}, [2]int{2, 1}, 3, 0.05},
	} {
		w := randTensor(rng, 1, tc.oc, tc.in[0]/tc.groups, tc.k, tc.k)
		bias := make([]float32, tc.oc)
		bias[0] = 0.5
		node := &Conv2d{Weight: w, Bias: bias, Stride: tc.stride, Padding: tc.pad, Dilation: tc.dil, Groups: tc.groups, InputShape: tc.in}
		n := Size(tc.in)
		sim := single(t, n, node, &Options{Batch: 2})
		x := randInput(rng, 2*n, tc.density, tc.density < 0.5)
		if err := sim.Step(x); err != nil {
			t.Fatal(err)
		}
		for slot := 0; slot < 2; slot++ {
			want, _, _ := naiveConv2d(x[slot*n:(slot+1)*n], tc.in, w, bias, tc.stride, tc.pad, tc.dil, tc.groups)
			got := sim.Output(0)[slot*len(want) : (slot+1)*len(want)]
			for i := range want {
				if !near(float64(got[i]), want[i], 1e-5) {
					t.Fatalf("%+v slot %d out %d: %v, want %v", tc, slot, i, got[i], want[i])
				}
			}
		}
	}
}

func TestConv1dAndPools(t *testing.T) {
	// Conv1d: a kernel [1, 0, -1] over a ramp gives a constant slope.
	w := &Tensor{Shape: []int{1, 1, 3}, Data: []float32{1, 0, -1}}
	sim := single(t, 6, &Conv1d{Weight: w, Stride: 1, Padding: 0, Dilation: 1, Groups: 1, InputShape: []int{1, 6}}, nil)
	sim.Step([]float32{0, 1, 2, 3, 4, 5})
	for i, v := range sim.Output(0) {
		if v != -2 {
			t.Fatalf("conv1d out %d = %v, want -2", i, v)
		}
	}
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	sim = single(t, 16, &SumPool2d{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, InputShape: []int{1, 4, 4}}, nil)
	sim.Step(x)
	if got, want := sim.Output(0), []float32{14, 22, 46, 54}; !equal32(got, want) {
		t.Fatalf("sum pool %v, want %v", got, want)
	}
	sim = single(t, 16, &AvgPool2d{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}, InputShape: []int{1, 4, 4}}, nil)
	sim.Step(x)
	if got, want := sim.Output(0), []float32{3.5, 5.5, 11.5, 13.5}; !equal32(got, want) {
		t.Fatalf("avg pool %v, want %v", got, want)
	}
	sim = single(t, 4, &Scale{Scale: []float32{1, 2, 3, 4}}, nil)
	sim.Step([]float32{1, 1, 1, 0.5})
	if got, want := sim.Output(0), []float32{1, 2, 3, 2}; !equal32(got, want) {
		t.Fatalf("scale %v, want %v", got, want)
	}
	sim = single(t, 3, &Threshold{Threshold: []float64{0.5}}, nil)
	sim.Step([]float32{0.4, 0.5, 0.6})
	if got, want := sim.Output(0), []float32{0, 0, 1}; !equal32(got, want) {
		t.Fatalf("threshold %v, want %v", got, want)
	}
}

func equal32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// An edge that closes a cycle carries the previous step's value: an IF
// neuron driven once excites itself through a recurrent weight on the next
// step, and so on.
func TestRecurrenceOneStepDelay(t *testing.T) {
	w := &Tensor{Shape: []int{1, 1}, Data: []float32{2}}
	g := NewGraph().
		Add("x", &Input{Shape: []int{1}}).
		Add("n", &IF{R: []float64{1}, VThreshold: []float64{1}, VReset: []float64{0}}).
		Add("rec", &Linear{Weight: w}).
		Add("y", &Output{}).
		Connect("x", "n", "y").
		Connect("n", "rec", "n")
	sim, err := NewSimulator(g, &Options{Dt: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []float32
	for step := 0; step < 4; step++ {
		in := float32(0)
		if step == 0 {
			in = 1.5
		}
		sim.Step([]float32{in})
		got = append(got, sim.Output(0)[0])
	}
	// Step 0 fires from the input; each spike re-excites the neuron by 2
	// one step later.
	if !equal32(got, []float32{1, 1, 1, 1}) {
		t.Fatalf("spikes %v, want a self-sustained train", got)
	}
}

// Batch slots are independent, and Reset(slot) touches only its slot.
func TestBatchIndependenceAndReset(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	g := mlpGraph()
	b, err := NewSimulator(g, &Options{Batch: 3})
	if err != nil {
		t.Fatal(err)
	}
	solo := make([]*Simulator, 3)
	for i := range solo {
		solo[i], _ = NewSimulator(g, nil)
	}
	in := make([]float32, 12)
	for step := 0; step < 50; step++ {
		for i := range in {
			in[i] = float32(rng.Float64() * 3)
		}
		if step == 20 {
			b.Reset(1)
			solo[1].Reset(0)
		}
		b.Step(in)
		for s := 0; s < 3; s++ {
			solo[s].Step(in[s*4 : (s+1)*4])
			if !equal32(b.Output(0)[s*2:(s+1)*2], solo[s].Output(0)) {
				t.Fatalf("step %d slot %d: batched %v, alone %v", step, s, b.Output(0)[s*2:(s+1)*2], solo[s].Output(0))
			}
		}
	}
	if err := b.Reset(3); err == nil {
		t.Fatal("Reset out of range accepted")
	}
}

func TestStepInputErrors(t *testing.T) {
	sim, err := NewSimulator(mlpGraph(), &Options{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Step(make([]float32, 4)); !errors.Is(err, ErrInputSize) {
		t.Fatalf("short input: %v", err)
	}
	if err := sim.Step(make([]float32, 8), make([]float32, 8)); !errors.Is(err, ErrInputSize) {
		t.Fatalf("extra input: %v", err)
	}
	if sim.Time() != 0 {
		t.Fatal("a refused step advanced time")
	}
	if err := sim.Step(make([]float32, 8)); err != nil {
		t.Fatal(err)
	}
	if _, err := NewSimulator(mlpGraph(), &Options{Dt: -1}); err == nil {
		t.Fatal("negative dt accepted")
	}
	if _, err := sim.StateAt("fc1", VarV, 0, 0); !errors.Is(err, ErrNoState) {
		t.Fatalf("state of a synapse: %v", err)
	}
	if err := sim.SetState("lif1", VarV, []float32{1}); !errors.Is(err, ErrInputSize) {
		t.Fatalf("SetState wrong size: %v", err)
	}
}

func TestStepAllocatesNothing(t *testing.T) {
	g := allKindsGraph()
	sim, err := NewSimulator(g, &Options{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	in1, in2 := randInput(rng, 20, 0.5, false), randInput(rng, 64, 0.5, true)
	for i := 0; i < 20; i++ { // let the active lists reach their size
		sim.Step(in1, in2)
	}
	if a := testing.AllocsPerRun(100, func() { sim.Step(in1, in2) }); a != 0 {
		t.Fatalf("Step allocates %v times", a)
	}
}

// Inactive slots keep their state and cost nothing; active ones step as
// if alone.
func TestSetActive(t *testing.T) {
	g := mlpGraph()
	b, _ := NewSimulator(g, &Options{Batch: 3})
	solo, _ := NewSimulator(g, nil)
	in := []float32{1, 2, 0.5, 1, 1, 2, 0.5, 1, 1, 2, 0.5, 1}
	for step := 0; step < 10; step++ {
		b.Step(in)
		solo.Step(in[:4])
	}
	frozen := append([]float32(nil), b.Output(0)[2:4]...)
	if err := b.SetActive([]bool{true, false, true}); err != nil {
		t.Fatal(err)
	}
	before := b.Counters().NeuronUpdates
	for step := 0; step < 10; step++ {
		b.Step(in)
		solo.Step(in[:4])
	}
	if !equal32(b.Output(0)[2:4], frozen) {
		t.Fatal("an inactive slot changed")
	}
	if !equal32(b.Output(0)[0:2], solo.Output(0)) {
		t.Fatal("an active slot differs from its run alone")
	}
	if got := b.Counters().NeuronUpdates - before; got != 10*2*5 {
		t.Fatalf("%d neuron updates for 2 active slots of 5 neurons over 10 steps", got)
	}
	if err := b.SetActive([]bool{true}); err == nil {
		t.Fatal("wrong length accepted")
	}
}

// A Delay's line stands still in an idle slot: after the pause the slot
// reads its own last inputs, as a run that never paused does.
func TestSetActiveDelay(t *testing.T) {
	g := NewGraph().Add("in", &Input{Shape: []int{2}}).Add("dl", &Delay{Delay: []float64{1e-3, 3e-3}}).
		Add("out", &Output{}).Connect("in", "dl", "out")
	b, _ := NewSimulator(g, &Options{Batch: 2})
	solo, _ := NewSimulator(g, nil)
	for step := 0; step < 12; step++ {
		paused := step >= 4 && step < 7 // slot 1 idles for three steps
		if err := b.SetActive([]bool{true, !paused}); err != nil {
			t.Fatal(err)
		}
		x := []float32{float32(step), float32(-step)}
		if err := b.Step(append(x, x...)); err != nil {
			t.Fatal(err)
		}
		if paused {
			continue
		}
		if err := solo.Step(x); err != nil {
			t.Fatal(err)
		}
		if !equal32(b.Output(0)[2:4], solo.Output(0)) {
			t.Fatalf("step %d: slot 1 reads %v, alone %v", step, b.Output(0)[2:4], solo.Output(0))
		}
	}
}
