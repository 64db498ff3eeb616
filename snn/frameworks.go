package snn

import (
	"fmt"
	"math"
)

// This file maps the discrete-time neurons of the training frameworks onto
// the simulator's continuous-time nodes, so that a network imported from
// them reproduces their outputs step for step. The equations of each
// framework, as read from its source, are in testdata/reference/README.md;
// the tests replay traces those libraries produced.

// SnnTorchParams are the hyperparameters of snnTorch's Leaky and Synaptic
// neurons. Arrays broadcast as in Graph nodes (length 1 or one per neuron).
type SnnTorchParams struct {
	Alpha     []float64 // Synaptic only: synaptic decay per step
	Beta      []float64 // membrane decay per step
	Threshold []float64
	// ResetMechanism is "subtract" (snnTorch's default), "zero" or "none".
	ResetMechanism string
	// ResetDelay is snnTorch's reset_delay (default true there): the reset
	// of a spike is applied within the next step's update, after the decay.
	ResetDelay bool
}

// SnnTorchLeaky returns the node that reproduces snntorch.Leaky:
//
//	mem[t] = β·mem[t−1] + x[t] − reset
//
// as an LIF whose step decay is β (τ = −dt/ln β) and input gain 1
// (R = 1/(1−β)). A delayed subtractive reset removes the threshold after
// the decay, which equals removing threshold/β at once; a zero reset is a
// reset to 0. β = 1 gives an IF neuron. The membrane the simulator holds is
// the value after the reset; snnTorch's returned mem (with ResetDelay) is
// the value before it.
func SnnTorchLeaky(p SnnTorchParams, n int, dt float64) (Node, error) {
	beta, th, err := snnTorchCommon(p, n, dt)
	if err != nil {
		return nil, err
	}
	allOne := true
	for _, b := range beta {
		allOne = allOne && b == 1
	}
	vreset, mode, err := snnTorchReset(p, beta, th)
	if err != nil {
		return nil, err
	}
	if allOne {
		return &IF{R: []float64{1 / dt}, VThreshold: th, VReset: vreset, Reset: mode, Shape: []int{n}}, nil
	}
	tau, r := make([]float64, n), make([]float64, n)
	for i, b := range beta {
		if !(b > 0 && b < 1) {
			return nil, fmt.Errorf("snn: snnTorch Leaky: beta[%d] = %v: mixing beta = 1 with beta < 1 in one layer, or beta <= 0, is not supported", i, b)
		}
		tau[i] = -dt / math.Log(b)
		r[i] = 1 / (1 - b)
	}
	return &LIF{Tau: tau, R: r, VLeak: []float64{0}, VThreshold: th, VReset: vreset, Reset: mode, Shape: []int{n}}, nil
}

// SnnTorchSynaptic returns the node that reproduces snntorch.Synaptic:
//
//	syn[t] = α·syn[t−1] + x[t];  mem[t] = β·mem[t−1] + syn[t] − reset
//
// as a CubaLIF with step decays α and β, an input impulse of 1 and a unit
// response of the membrane to the current. Its "zero" reset also zeroes the
// step after a spike, which is a reset to 0 with a one-step refractory
// period.
func SnnTorchSynaptic(p SnnTorchParams, n int, dt float64) (*CubaLIF, error) {
	beta, th, err := snnTorchCommon(p, n, dt)
	if err != nil {
		return nil, err
	}
	alpha, err := broadcastParam("alpha", p.Alpha, n)
	if err != nil {
		return nil, err
	}
	vreset, mode, err := snnTorchReset(p, beta, th)
	if err != nil {
		return nil, err
	}
	node := &CubaLIF{VLeak: []float64{0}, VThreshold: th, VReset: vreset, Reset: mode, Shape: []int{n}}
	for i := 0; i < n; i++ {
		a, b := clamp01(alpha[i]), beta[i]
		if !(a > 0 && a < 1 && b > 0 && b < 1) {
			return nil, fmt.Errorf("snn: snnTorch Synaptic: alpha[%d] = %v, beta[%d] = %v: both must be in (0, 1)", i, a, i, b)
		}
		ts, tm, r := cubaFromDecays(a, b, 1, dt)
		node.TauSyn = append(node.TauSyn, ts)
		node.TauMem = append(node.TauMem, tm)
		node.R = append(node.R, r)
		node.WIn = append(node.WIn, 1/math.Expm1(dt/ts))
	}
	if p.ResetMechanism == "zero" && p.ResetDelay {
		node.Refractory = []float64{dt}
	}
	return node, nil
}

// NorseLIFParams are the parameters of Norse's LIFCell (LIFParameters).
type NorseLIFParams struct {
	TauSynInv, TauMemInv, VLeak, VTh, VReset []float64
}

// NorseLIF returns the node that reproduces norse.torch.LIFCell with time
// step dt:
//
//	i ← i + x;  v ← v + dt·τm⁻¹·(v_leak − v + i);  i ← (1 − dt·τs⁻¹)·i
//
// then a spike where v > v_th and v ← v_reset. Norse's forward-Euler decays
// 1 − dt/τ become the exact decays of time constants −dt/ln(1 − dt/τ).
func NorseLIF(p NorseLIFParams, n int, dt float64) (*CubaLIF, error) {
	get := func(name string, xs []float64) ([]float64, error) { return broadcastParam(name, xs, n) }
	ts, err := get("tau_syn_inv", p.TauSynInv)
	if err != nil {
		return nil, err
	}
	tm, err := get("tau_mem_inv", p.TauMemInv)
	if err != nil {
		return nil, err
	}
	node := &CubaLIF{VLeak: p.VLeak, VThreshold: p.VTh, VReset: p.VReset, Shape: []int{n}}
	for i := 0; i < n; i++ {
		a, b := 1-dt*ts[i], 1-dt*tm[i]
		if !(a > 0 && a < 1 && b > 0 && b < 1) {
			return nil, fmt.Errorf("snn: Norse LIF: dt·tau_syn_inv = %v and dt·tau_mem_inv = %v must be in (0, 1)", dt*ts[i], dt*tm[i])
		}
		s, m, r := cubaFromDecays(a, b, 1-b, dt)
		node.TauSyn = append(node.TauSyn, s)
		node.TauMem = append(node.TauMem, m)
		node.R = append(node.R, r)
		node.WIn = append(node.WIn, 1/math.Expm1(dt/s))
	}
	return node, nil
}

// cubaFromDecays returns the time constants and R of a CubaLIF whose step
// decays are a (current) and b (membrane) and whose membrane gains p per
// unit of current at the start of a step.
func cubaFromDecays(a, b, p, dt float64) (tauSyn, tauMem, r float64) {
	tauSyn, tauMem = -dt/math.Log(a), -dt/math.Log(b)
	if math.Abs(tauSyn-tauMem) <= 1e-12*math.Max(tauSyn, tauMem) {
		return tauSyn, tauMem, p * tauMem / (dt * b)
	}
	return tauSyn, tauMem, p * (tauSyn - tauMem) / (tauSyn * (a - b))
}

func snnTorchCommon(p SnnTorchParams, n int, dt float64) (beta, th []float64, err error) {
	if !(dt > 0) {
		return nil, nil, fmt.Errorf("snn: dt is %v, must be positive", dt)
	}
	if beta, err = broadcastParam("beta", p.Beta, n); err != nil {
		return nil, nil, err
	}
	for i := range beta {
		beta[i] = clamp01(beta[i]) // snnTorch clamps beta in every forward
	}
	if th, err = broadcastParam("threshold", p.Threshold, n); err != nil {
		return nil, nil, err
	}
	return beta, th, nil
}

func snnTorchReset(p SnnTorchParams, beta, th []float64) ([]float64, ResetMode, error) {
	vreset := make([]float64, len(th))
	switch p.ResetMechanism {
	case "subtract", "":
		for i := range th {
			amount := th[i]
			if p.ResetDelay {
				amount = th[i] / beta[i]
			}
			vreset[i] = th[i] - amount
		}
		return vreset, ResetSubtract, nil
	case "zero":
		return vreset, ResetToValue, nil
	case "none":
		copy(vreset, th)
		return vreset, ResetSubtract, nil
	}
	return nil, "", fmt.Errorf("snn: snnTorch reset_mechanism %q: want subtract, zero or none", p.ResetMechanism)
}

func broadcastParam(name string, xs []float64, n int) ([]float64, error) {
	if len(xs) != 1 && len(xs) != n {
		return nil, fmt.Errorf("snn: %s has %d values, want 1 or %d", name, len(xs), n)
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = at(xs, i)
		if math.IsNaN(out[i]) || math.IsInf(out[i], 0) {
			return nil, fmt.Errorf("snn: %s[%d] is %v", name, i, out[i])
		}
	}
	return out, nil
}

func clamp01(x float64) float64 { return math.Min(1, math.Max(0, x)) }
