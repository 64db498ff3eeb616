package xylo_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal/xylo"
	"github.com/neuro-go/neuro/snn"
)

// tauEff is the time constant of the chip's decay by 1 − 2^−d per step.
func tauEff(d int, dt float64) float64 { return -dt / math.Log1p(-math.Ldexp(1, -d)) }

// agreeProgram is Input(4) → Linear → CubaLIF(8) → Linear → CubaLIF(3) →
// Output, weights multiples of 1/64. With exact taus, τ_syn and τ_mem are
// the chip's own (τ_eff of dash 2 and 4); otherwise 4·dt and 16·dt, powers
// of two times dt that the chip rounds to the same dashes. w_in is chosen
// so that one unit of input moves the chip's current by exactly s units
// (g = s·p·wj/β = s; see snn/neuron.go for p and wj), which puts every
// weight on the chip's 8-bit grid.
func agreeProgram(exact bool) *compile.Program {
	const dt = 1e-3
	ts, tm := 4*dt, 16*dt
	if exact {
		ts, tm = tauEff(2, dt), tauEff(4, dt)
	}
	// The chip runs τ_eff whatever was asked, so w_in is computed with it.
	b, a := 0.75, 1-1.0/16
	tsE, tmE := tauEff(2, dt), tauEff(4, dt)
	p := tsE / (tsE - tmE) * (b - a) // R = 1
	win := b / (p * (1/b - 1))
	rng := rand.New(rand.NewPCG(3, 5))
	w1, w2 := snn.NewTensor(8, 4), snn.NewTensor(3, 8)
	for i := range w1.Data {
		w1.Data[i] = float32(rng.IntN(24)-6) / 64
	}
	for i := range w2.Data {
		w2.Data[i] = float32(rng.IntN(32)-12) / 64
	}
	lif := func() *snn.CubaLIF {
		return &snn.CubaLIF{TauSyn: []float64{ts}, TauMem: []float64{tm}, R: []float64{1}, VLeak: []float64{0},
			VThreshold: []float64{1}, VReset: []float64{0}, WIn: []float64{win}, Reset: snn.ResetSubtract}
	}
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{4}}).
		Add("fc1", &snn.Linear{Weight: w1}).Add("h", lif()).
		Add("fc2", &snn.Linear{Weight: w2}).Add("o", lif()).
		Add("out", &snn.Output{}).
		Connect("in", "fc1", "h", "fc2", "o", "out")
	return &compile.Program{Name: "agree", Graph: g, Dt: dt}
}

// agreement runs the chip and the float simulator on the same Bernoulli
// spike input and returns the fraction of (neuron, step) bins whose spike
// counts agree, hidden and output (the chip's output read one step later),
// and the spike totals.
func agreement(t *testing.T, p *compile.Program, thresholdTarget, steps int) (hid, out float64, nh, no [2]int) {
	dev, err := xylo.New(&xylo.Config{ThresholdTarget: thresholdTarget})
	if err != nil {
		t.Fatal(err)
	}
	inst, err := dev.Load(context.Background(), p, 1)
	if err != nil {
		t.Fatal(err)
	}
	xi := inst.(*xylo.Instance)
	sim, err := snn.NewSimulator(p.Graph, &snn.Options{Dt: p.Dt})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 13))
	x := make([]float32, 4)
	var prevOut []float32
	var hAgree, oAgree, hBins, oBins int
	for s := 0; s < steps; s++ {
		for i := range x {
			x[i] = 0
			if rng.Float64() < 0.3 {
				x[i] = 1
			}
		}
		if err := inst.Step(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		if err := sim.Step(x); err != nil {
			t.Fatal(err)
		}
		for i, k := range xi.Core().HiddenSpikes(0) {
			f := sim.NodeOutput("h")[i]
			if float32(k) == f {
				hAgree++
			}
			hBins++
			nh[0] += int(k)
			nh[1] += int(f)
		}
		if prevOut != nil {
			for i, k := range inst.Output(0) {
				if k == prevOut[i] {
					oAgree++
				}
				oBins++
				no[0] += int(k)
				no[1] += int(prevOut[i])
			}
		}
		prevOut = append(prevOut[:0], sim.Output(0)...)
	}
	return float64(hAgree) / float64(hBins), float64(oAgree) / float64(oBins), nh, no
}

func TestAgreementWithFloatSimulator(t *testing.T) {
	// Measured (1000 steps, 30% input spike probability): with the chip's
	// own taus, disagreements come only from integer rounding (decays that
	// round towards −∞ bias every state upwards by a few units, which the
	// membrane integrates), so a finer scale agrees better: hidden-bin
	// agreement 0.79 at threshold 1024, 0.86 at 4096, 0.92 at 8192 (the
	// default), 0.98 at 16384. With τ = 4·dt and 16·dt the chip's τ_eff are
	// 3.48 and 15.49 ms (−13%, −3.2%) and agreement stays near 0.78.
	for _, c := range []struct {
		name      string
		exact     bool
		threshold int
		wantHid   float64
		wantOut   float64
		maxTauErr float64
	}{
		// Output measured 0.86, 0.88, 0.79: the readout inherits every
		// hidden disagreement, through all 8 of its inputs.
		{"chip taus, threshold 16384", true, 16384, 0.97, 0.83, 1e-12},
		{"chip taus, default threshold", true, 0, 0.90, 0.85, 1e-12},
		{"power-of-two taus", false, 0, 0.75, 0.75, 0.14},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := agreeProgram(c.exact)
			_, rep, err := xylo.Convert(p, &xylo.Config{ThresholdTarget: c.threshold})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range rep.Weights {
				if w.MaxAbsError > 1e-9 || w.Clipped != 0 {
					t.Errorf("%s: weights off the grid: %+v", w.Node, w)
				}
			}
			for _, n := range rep.Neurons {
				if n.MaxTauRelErr > c.maxTauErr {
					t.Errorf("%s: τ error %g, want ≤ %g", n.Node, n.MaxTauRelErr, c.maxTauErr)
				}
			}
			hid, out, nh, no := agreement(t, p, c.threshold, 1000)
			t.Logf("spike-bin agreement: hidden %.4f (chip %d spikes, float %d), output %.4f (chip %d, float %d)", hid, nh[0], nh[1], out, no[0], no[1])
			if hid < c.wantHid || out < c.wantOut {
				t.Errorf("agreement hidden %.4f output %.4f, want ≥ %.2f, %.2f", hid, out, c.wantHid, c.wantOut)
			}
			if nh[1] == 0 || no[1] == 0 {
				t.Error("the float network never spiked: the comparison says nothing")
			}
		})
	}
}
