package main

import (
	"math"
	"math/rand/v2"

	"github.com/neuro-go/neuro/snn"
)

// CUBA is the benchmark network with its initial membrane potentials.
type CUBA struct {
	Graph    *snn.Graph
	V0       []float32 // initial v of node "P", mV
	Dt       float64
	Neurons  int
	Synapses int
}

// NewCUBA builds the network of Brian2's examples/CUBA.py. Voltages are in
// mV, times in seconds. One LIF population "P" (the first 3200 neurons
// excitatory) feeds two leaky integrators, ge (τ 5 ms) and gi (τ 10 ms),
// through sparse Linear nodes; their sum drives P:
//
//	τm dv/dt = (ge + gi) − (v − El),  a spike adds we to ge or wi to gi.
//
// An LI node integrates its input over the step (zero-order hold), so its
// R is 1/(1 − e^(−dt/τ)): a weight w then raises g by exactly w per spike.
func NewCUBA(seed uint64) *CUBA {
	const (
		n, ne             = 4000, 3200
		p                 = 0.02
		dt                = 1e-4
		taum, taue, taui  = 20e-3, 5e-3, 10e-3
		vt, vr, el        = -50.0, -60.0, -49.0
		we                = 60 * 0.27 / 10
		wi                = -20 * 4.5 / 10
		refractorySeconds = 5e-3
	)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	ce, ci := snn.NewTensor(n, n), snn.NewTensor(n, n)
	synapses := 0
	for pre := 0; pre < n; pre++ {
		w, t := we, ce
		if pre >= ne {
			w, t = wi, ci
		}
		for post := 0; post < n; post++ {
			if rng.Float64() < p {
				t.Data[post*n+pre] = float32(w)
				synapses++
			}
		}
	}
	rOf := func(tau float64) []float64 { return []float64{1 / -math.Expm1(-dt/tau)} }
	g := snn.NewGraph().
		Add("P", &snn.LIF{
			Tau: []float64{taum}, R: []float64{1}, VLeak: []float64{el},
			VThreshold: []float64{vt}, VReset: []float64{vr},
			Refractory: []float64{refractorySeconds}, Shape: []int{n},
		}).
		Add("Ce", &snn.Linear{Weight: ce}).
		Add("Ci", &snn.Linear{Weight: ci}).
		Add("ge", &snn.LI{Tau: []float64{taue}, R: rOf(taue), VLeak: []float64{0}}).
		Add("gi", &snn.LI{Tau: []float64{taui}, R: rOf(taui), VLeak: []float64{0}}).
		Connect("P", "Ce", "ge", "P").
		Connect("P", "Ci", "gi", "P")
	v0 := make([]float32, n)
	for i := range v0 {
		v0[i] = float32(vr + rng.Float64()*(vt-vr))
	}
	return &CUBA{Graph: g, V0: v0, Dt: dt, Neurons: n, Synapses: synapses}
}
