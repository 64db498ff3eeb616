package snn

import (
	"math"
	"testing"
)

// single builds Input(n) -> node -> Output and returns its simulator.
func single(t *testing.T, n int, node Node, opts *Options) *Simulator {
	t.Helper()
	g := NewGraph().Add("x", &Input{Shape: []int{n}}).Add("node", node).Add("y", &Output{}).Connect("x", "node", "y")
	sim, err := NewSimulator(g, opts)
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

// An LIF under a constant current I with v_leak = v_reset = 0 reaches
// threshold θ after T = τ·ln(RI / (RI − θ)). The simulator integrates
// exactly, so spike k falls on the first step boundary at or after the
// continuous crossing of a neuron restarted at each of its spikes: the
// interval is ceil(T/dt) steps, exactly.
func TestLIFInterSpikeInterval(t *testing.T) {
	const dt = 1e-4
	for _, tc := range []struct{ tau, r, i, th float64 }{
		{20e-3, 1, 1.5, 1},
		{10e-3, 2, 0.7, 1},
		{5e-3, 1, 10, 1},
	} {
		isi := tc.tau * math.Log(tc.r*tc.i/(tc.r*tc.i-tc.th))
		want := int(math.Ceil(isi / dt))
		sim := single(t, 1, &LIF{Tau: []float64{tc.tau}, R: []float64{tc.r}, VLeak: []float64{0},
			VThreshold: []float64{tc.th}, VReset: []float64{0}}, &Options{Dt: dt})
		var spikes []int
		for step := 1; step <= 10*want+10; step++ {
			if err := sim.Step([]float32{float32(tc.i)}); err != nil {
				t.Fatal(err)
			}
			if sim.Output(0)[0] == 1 {
				spikes = append(spikes, step)
			}
		}
		if len(spikes) < 5 {
			t.Fatalf("%+v: %d spikes", tc, len(spikes))
		}
		for k, s := range spikes {
			if s != (k+1)*want {
				t.Fatalf("%+v: spike %d at step %d, want %d (analytic ISI %.6g s = %.3f steps)", tc, k, s, (k+1)*want, isi, isi/dt)
			}
		}
	}
}

// LI's response to a step input: v(t) = v_leak + R·I·(1 − e^(−t/τ)),
// exactly at every step up to float32 rounding, which accumulates over 100
// steps to about 1e-6: tolerance 1e-5 relative.
func TestLIStepResponse(t *testing.T) {
	const dt, tau, r, vleak, in = 1e-3, 15e-3, 2.0, -0.5, 0.8
	sim := single(t, 1, &LI{Tau: []float64{tau}, R: []float64{r}, VLeak: []float64{vleak}}, &Options{Dt: dt})
	for step := 1; step <= 100; step++ {
		if err := sim.Step([]float32{in}); err != nil {
			t.Fatal(err)
		}
		want := vleak + r*in*(1-math.Exp(-float64(step)*dt/tau))
		if got := float64(sim.Output(0)[0]); math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
			t.Fatalf("step %d: v = %v, want %v", step, got, want)
		}
	}
}

// CubaLIF (below threshold) answers an impulse q at t = 0 with the double
// exponential v(t) = R·I0·τs/(τs−τm)·(e^(−t/τs) − e^(−t/τm)), where the
// impulse sets I0 = w_in·q·(e^(dt/τs) − 1) (the jump whose steady state
// equals the continuous equation's). Tolerance 1e-6 relative to the peak.
func TestCubaLIFDoubleExponential(t *testing.T) {
	const dt, ts, tm, r, w, q = 1e-3, 5e-3, 20e-3, 3.0, 1.5, 2.0
	for _, node := range []Node{
		&CubaLIF{TauSyn: []float64{ts}, TauMem: []float64{tm}, R: []float64{r}, VLeak: []float64{0},
			VThreshold: []float64{1e9}, VReset: []float64{0}, WIn: []float64{w}},
		&CubaLI{TauSyn: []float64{ts}, TauMem: []float64{tm}, R: []float64{r}, VLeak: []float64{0}, WIn: []float64{w}},
	} {
		sim := single(t, 1, node, &Options{Dt: dt})
		i0 := w * q * math.Expm1(dt/ts)
		peak := 0.0
		var got, want []float64
		for step := 0; step < 150; step++ {
			x := float32(0)
			if step == 0 {
				x = q
			}
			if err := sim.Step([]float32{x}); err != nil {
				t.Fatal(err)
			}
			tt := float64(step+1) * dt
			v, _ := sim.StateAt("node", VarV, 0, 0)
			got = append(got, float64(v))
			want = append(want, r*i0*ts/(ts-tm)*(math.Exp(-tt/ts)-math.Exp(-tt/tm)))
			peak = math.Max(peak, want[step])
		}
		for k := range got {
			if math.Abs(got[k]-want[k]) > 1e-6*peak {
				t.Fatalf("%s step %d: v = %v, want %v", node.Kind(), k, got[k], want[k])
			}
		}
	}
}

// IF integrates exactly: v = dt·R·Σx, with a subtractive reset keeping the
// remainder. Inputs are dyadic so that float32 sums are exact.
func TestIFIntegratesExactly(t *testing.T) {
	const dt = 0.5
	sim := single(t, 1, &IF{R: []float64{2}, VThreshold: []float64{1}, VReset: []float64{0}, Reset: ResetSubtract}, &Options{Dt: dt})
	inputs := []float32{0.25, 0.5, 0.125, 0.75, 0, 0.0625}
	var v float64
	for step, x := range inputs {
		if err := sim.Step([]float32{x}); err != nil {
			t.Fatal(err)
		}
		v += dt * 2 * float64(x)
		spike := v > 1
		if spike {
			v--
		}
		if got := sim.Output(0)[0] == 1; got != spike {
			t.Fatalf("step %d: spike %v, want %v", step, got, spike)
		}
		if got, _ := sim.StateAt("node", VarV, 0, 0); float64(got) != v {
			t.Fatalf("step %d: v = %v, want exactly %v", step, got, v)
		}
	}
	// I: the same without threshold.
	sim = single(t, 1, &I{R: []float64{2}}, &Options{Dt: dt})
	v = 0
	for _, x := range inputs {
		sim.Step([]float32{x})
		v += dt * 2 * float64(x)
		if got := float64(sim.Output(0)[0]); got != v {
			t.Fatalf("I: v = %v, want exactly %v", got, v)
		}
	}
}

// Refractory: after a spike the membrane stays at v_reset for
// ceil(t_ref/dt) steps, whatever the input.
func TestLIFRefractory(t *testing.T) {
	const dt = 1e-3
	sim := single(t, 1, &LIF{Tau: []float64{10e-3}, R: []float64{1}, VLeak: []float64{0},
		VThreshold: []float64{0.5}, VReset: []float64{-0.2}, Refractory: []float64{3e-3}}, &Options{Dt: dt})
	var spikes []int
	for step := 0; step < 40; step++ {
		sim.Step([]float32{100})
		if sim.Output(0)[0] == 1 {
			spikes = append(spikes, step)
		} else if len(spikes) > 0 && step-spikes[len(spikes)-1] <= 3 {
			if v, _ := sim.StateAt("node", VarV, 0, 0); v != -0.2 {
				t.Fatalf("step %d: v = %v during the refractory period, want -0.2", step, v)
			}
		}
	}
	// A huge input crosses threshold at every step it may: every 4th.
	for k := 1; k < len(spikes); k++ {
		if spikes[k]-spikes[k-1] != 4 {
			t.Fatalf("spikes at %v, want every 4 steps", spikes)
		}
	}
}

// Delay shifts each element by round(delay/dt) steps.
func TestDelay(t *testing.T) {
	sim := single(t, 3, &Delay{Delay: []float64{0, 2e-3, 5e-3}}, nil)
	for step := 0; step < 10; step++ {
		x := float32(step + 1)
		sim.Step([]float32{x, x, x})
		out := sim.Output(0)
		for i, d := range []int{0, 2, 5} {
			want := float32(0)
			if step-d >= 0 {
				want = float32(step - d + 1)
			}
			if out[i] != want {
				t.Fatalf("step %d element %d: %v, want %v", step, i, out[i], want)
			}
		}
	}
}
