package xylo_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal/xylo"
	"github.com/neuro-go/neuro/snn"
)

func lif(tau float64) *snn.LIF {
	return &snn.LIF{Tau: []float64{tau}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}, Reset: snn.ResetSubtract}
}

func weights(rows, cols int, v float32) *snn.Tensor {
	w := snn.NewTensor(rows, cols)
	for i := range w.Data {
		w.Data[i] = v
	}
	return w
}

// chain is Input(in) → fc1 → h (LIF) → fc2 → o → Output.
func chain(in, hidden int, h, o snn.Node) *compile.Program {
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{in}}).
		Add("fc1", &snn.Linear{Weight: weights(hidden, in, 0.5)}).Add("h", h).
		Add("fc2", &snn.Linear{Weight: weights(1, hidden, 1)}).Add("o", o).
		Add("out", &snn.Output{}).
		Connect("in", "fc1", "h", "fc2", "o", "out")
	return &compile.Program{Graph: g, Dt: 1e-3}
}

func TestConvertHandChecked(t *testing.T) {
	net, rep, err := xylo.Convert(chain(1, 1, lif(16e-3), lif(16e-3)), nil)
	if err != nil {
		t.Fatal(err)
	}
	// τ = 16 ms, dt = 1 ms: dash_mem = round(log2 16) = 4; a LIF gets
	// dash_syn 1. Gain per unit input (DC-matched, β = 1/2, α = 15/16):
	// k = R(1−α)(1−β)/β = 1/16. Scale s = 8192 / θ = 8192.
	// Input weight 0.5 per event: 8192 · 1/16 · 0.5 = 256 → shift 2, 64
	// (shifts 0 and 1 would clip at 127; 3 is exact too but larger).
	// Output weight 1: 8192/16 = 512 → shift 3, 64.
	if net.WIn[0][0] != 64 || net.ShiftIn != 2 || net.WOut[0] != 64 || net.ShiftOut != 3 {
		t.Errorf("weights %d<<%d, %d<<%d; want 64<<2, 64<<3", net.WIn[0][0], net.ShiftIn, net.WOut[0], net.ShiftOut)
	}
	if net.DashMem[0] != 4 || net.DashSyn[0] != 1 || net.Threshold[0] != 8192 || net.ThresholdOut[0] != 8192 {
		t.Errorf("dash %d/%d threshold %d/%d", net.DashMem[0], net.DashSyn[0], net.Threshold[0], net.ThresholdOut[0])
	}
	h := rep.Neurons[0]
	// τ_eff = −1 ms / ln(15/16) = 1 ms / 0.0645385 = 15.4946 ms: error
	// (16 − 15.4946)/16 = 0.03159.
	if math.Abs(h.TauMemEff[0]-15.4946e-3) > 1e-7 || math.Abs(h.MaxTauRelErr-0.03159) > 1e-4 {
		t.Errorf("τ_eff %g, error %g", h.TauMemEff[0], h.MaxTauRelErr)
	}
	for _, w := range rep.Weights {
		if w.MaxAbsError != 0 || w.Clipped != 0 {
			t.Errorf("%s: %+v, want exact", w.Node, w)
		}
	}
	found := false
	for _, a := range rep.Approximations {
		found = found || strings.Contains(a, "h: LIF has no synaptic current")
	}
	if !found {
		t.Errorf("the LIF synapse approximation is not reported: %q", rep.Approximations)
	}
	// A weight off the grid: 0.3 → 8192/16·0.3 = 153.6 → shift 1: 77·2 =
	// 154, error 0.4 integer units = 0.4/512 = 7.8e-4 in float units.
	p := chain(1, 1, lif(16e-3), lif(16e-3))
	p.Graph.Nodes["fc1"].(*snn.Linear).Weight.Data[0] = 0.3
	_, rep, err = xylo.Convert(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Weights[0]; w.Node != "fc1" || w.Shift != 1 || math.Abs(w.MaxAbsError-0.4/512) > 1e-6 {
		t.Errorf("fc1 report %+v", w)
	}
}

func TestConvertRefuses(t *testing.T) {
	reset := lif(16e-3)
	reset.Reset = snn.ResetToValue
	refr := lif(16e-3)
	refr.Refractory = []float64{2e-3}
	conv := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{1, 4, 4}}).
		Add("c", &snn.Conv2d{Weight: weights(1, 1, 1), Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1, InputShape: []int{1, 4, 4}}).
		Add("out", &snn.Output{}).Connect("in", "c", "out")
	conv.Nodes["c"].(*snn.Conv2d).Weight = snn.NewTensor(1, 1, 1, 1)
	direct := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{2}}).
		Add("fc", &snn.Linear{Weight: weights(1, 2, 1)}).Add("o", lif(16e-3)).
		Add("out", &snn.Output{}).Connect("in", "fc", "o", "out")
	// Two weight nodes in series, the second first in name order: it is
	// met while its source is still a weight node.
	series := chain(2, 3, lif(16e-3), lif(16e-3))
	series.Graph.Add("w2", &snn.Linear{Weight: weights(2, 2, 1)}).Add("w1", &snn.Linear{Weight: weights(3, 2, 0.5)})
	delete(series.Graph.Nodes, "fc1")
	series.Graph.Edges = slices.DeleteFunc(series.Graph.Edges, func(e snn.Edge) bool { return e.From == "in" || e.To == "h" })
	series.Graph.Connect("in", "w2", "w1", "h")
	for _, c := range []struct {
		name string
		p    *compile.Program
		node string
		want string
	}{
		{"reset to value", chain(2, 3, reset, lif(16e-3)), "h", "only subtracts"},
		{"refractory", chain(2, 3, refr, lif(16e-3)), "h", "refractory"},
		{"tau <= dt", chain(2, 3, lif(1e-3), lif(16e-3)), "h", "τ > dt"},
		{"dash > 15", chain(2, 3, lif(1e-3*(1<<16)), lif(16e-3)), "h", "decay bit-shift"},
		{"1001 hidden", chain(2, 1001, lif(16e-3), lif(16e-3)), "h", "hidden neurons: needs 1001, the device has 1000"},
		{"17 inputs", chain(17, 3, lif(16e-3), lif(16e-3)), "in", "input channels"},
		{"non-spiking hidden", chain(2, 3, &snn.LI{Tau: []float64{16e-3}, R: []float64{1}, VLeak: []float64{0}}, lif(16e-3)), "h", "hidden neurons must spike"},
		{"conv", &compile.Program{Graph: conv}, "c", "no Conv2d"},
		{"no hidden layer", &compile.Program{Graph: direct}, "o", "needs a hidden layer"},
		{"weights in series", series, "w1", "weights carry the Input or spikes of neurons"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := xylo.Convert(c.p, nil)
			if !errors.Is(err, compile.ErrUnsupported) {
				t.Fatalf("err %v, want compile.ErrUnsupported", err)
			}
			if !strings.Contains(err.Error(), `"`+c.node+`"`) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %q does not name node %q and %q", err, c.node, c.want)
			}
		})
	}
}
