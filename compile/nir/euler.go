package nir

import (
	"math"

	"github.com/neuro-go/neuro/snn"
)

// NIR's reference importers integrate its equations with forward Euler at
// their step dt: per step v ← v + dt/τ·(v_leak − v + R·x), a decay of
// 1 − dt/τ. snn integrates exactly (decay e^(−dt/τ)). With Options.Euler the
// reader rewrites the time constants so that the exact decays equal the
// Euler ones; the writer (WriteOptions.Euler) applies the inverse. The
// derivations are in docs/nir.md.

// toExact converts a node's NIR (Euler) parameters to snn's (exact).
func toExact(name string, n snn.Node, dt float64) error {
	switch n := n.(type) {
	case *snn.LI:
		t, err := tauExact(name, "tau", n.Tau, dt)
		n.Tau = t
		return err
	case *snn.LIF:
		t, err := tauExact(name, "tau", n.Tau, dt)
		n.Tau = t
		return err
	case *snn.CubaLI:
		var err error
		n.TauSyn, n.TauMem, n.R, err = cubaExact(name, n.TauSyn, n.TauMem, n.R, dt)
		return err
	case *snn.CubaLIF:
		var err error
		n.TauSyn, n.TauMem, n.R, err = cubaExact(name, n.TauSyn, n.TauMem, n.R, dt)
		return err
	}
	return nil
}

// toEuler is toExact's inverse, for export.
func toEuler(n snn.Node, dt float64) snn.Node {
	switch n := n.(type) {
	case *snn.LI:
		c := *n
		c.Tau = tauEuler(n.Tau, dt)
		return &c
	case *snn.LIF:
		c := *n
		c.Tau = tauEuler(n.Tau, dt)
		return &c
	case *snn.CubaLI:
		c := *n
		c.TauSyn, c.TauMem, c.R = cubaEuler(n.TauSyn, n.TauMem, n.R, dt)
		return &c
	case *snn.CubaLIF:
		c := *n
		c.TauSyn, c.TauMem, c.R = cubaEuler(n.TauSyn, n.TauMem, n.R, dt)
		return &c
	}
	return n
}

func at(xs []float64, i int) float64 {
	if len(xs) == 1 {
		return xs[0]
	}
	return xs[i]
}

func maxLen(xss ...[]float64) int {
	n := 1
	for _, xs := range xss {
		n = max(n, len(xs))
	}
	return n
}

// eulerDecay is 1 − dt/τ, which must lie in (0, 1) for the Euler update
// to be a decay that an exponential can match.
func eulerDecay(node, field string, tau, dt float64) (float64, error) {
	if !(tau > dt) {
		return 0, invalidf(node, field, "%v is not larger than Options.Dt = %v: the Euler update with this step does not decay, and no exact time constant reproduces it", tau, dt)
	}
	return 1 - dt/tau, nil
}

func tauExact(node, field string, tau []float64, dt float64) ([]float64, error) {
	out := make([]float64, len(tau))
	for i, t := range tau {
		a, err := eulerDecay(node, field, t, dt)
		if err != nil {
			return nil, err
		}
		out[i] = -dt / math.Log(a)
	}
	return out, nil
}

func tauEuler(tau []float64, dt float64) []float64 {
	out := make([]float64, len(tau))
	for i, t := range tau {
		out[i] = dt / -math.Expm1(-dt/t)
	}
	return out
}

// cubaExact: the Euler system I ← a·I + (dt/τs)·w_in·x, then
// v ← b·v + (dt/τm)·(v_leak + R·I) equals snn's impulse form with the
// exact decays a and b, the same w_in, and a membrane gain per unit of
// current of p = R·(dt/τm)·a.
func cubaExact(node string, tauSyn, tauMem, r []float64, dt float64) (ts, tm, rr []float64, err error) {
	n := maxLen(tauSyn, tauMem, r)
	ts, tm, rr = make([]float64, n), make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		a, err := eulerDecay(node, "tau_syn", at(tauSyn, i), dt)
		if err != nil {
			return nil, nil, nil, err
		}
		b, err := eulerDecay(node, "tau_mem", at(tauMem, i), dt)
		if err != nil {
			return nil, nil, nil, err
		}
		p := at(r, i) * dt / at(tauMem, i) * a
		ts[i], tm[i] = -dt/math.Log(a), -dt/math.Log(b)
		rr[i] = rFromGain(p, ts[i], tm[i], a, b, dt)
	}
	return ts, tm, rr, nil
}

func cubaEuler(tauSyn, tauMem, r []float64, dt float64) (ts, tm, rr []float64) {
	n := maxLen(tauSyn, tauMem, r)
	ts, tm, rr = make([]float64, n), make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		s, m := at(tauSyn, i), at(tauMem, i)
		a, b := math.Exp(-dt/s), math.Exp(-dt/m)
		p := gain(at(r, i), s, m, a, b, dt)
		ts[i], tm[i] = dt/(1-a), dt/(1-b)
		rr[i] = p * tm[i] / (dt * a)
	}
	return ts, tm, rr
}

// gain is how much snn's exact CubaLIF membrane rises over one step per
// unit of synaptic current present at the start of the step.
func gain(r, ts, tm, a, b, dt float64) float64 {
	if math.Abs(ts-tm) <= 1e-12*math.Max(ts, tm) {
		return r * dt * b / tm
	}
	return r * ts * (a - b) / (ts - tm)
}

// rFromGain inverts gain for R.
func rFromGain(p, ts, tm, a, b, dt float64) float64 {
	if math.Abs(ts-tm) <= 1e-12*math.Max(ts, tm) {
		return p * tm / (dt * b)
	}
	return p * (ts - tm) / (ts * (a - b))
}
