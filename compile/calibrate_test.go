package compile

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/snn"
)

// calibrationProgram is in(2) → Linear → li(2) → out, with a spiking
// branch in → lif that Ranges must leave out, and a one-step Delay.
func calibrationProgram(t testing.TB, kind InputKind) *Program {
	t.Helper()
	w := &snn.Tensor{Shape: []int{2, 2}, Data: []float32{1, 0, 0, -2}}
	tau := []float64{0.01}
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{2}}).
		Add("fc", &snn.Linear{Weight: w}).
		Add("li", &snn.LI{Tau: tau, R: []float64{1}, VLeak: []float64{0}}).
		Add("out", &snn.Output{}).
		Connect("in", "fc", "li", "out").
		Add("fc2", &snn.Linear{Weight: w}).
		Add("lif", &snn.LIF{Tau: tau, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{0.5}, VReset: []float64{0}}).
		Add("spikes", &snn.Output{}).
		Connect("in", "fc2", "lif", "spikes").
		Add("delay", &snn.Delay{Delay: []float64{1e-3}}).
		Add("late", &snn.Output{}).
		Connect("li", "delay", "late")
	p, _, err := Compile(g, &Options{Dt: 1e-3, Timesteps: 5})
	if err != nil {
		t.Fatal(err)
	}
	p.Input = Encoding{Kind: kind, Node: "in", Size: 2}
	return p
}

// TestCalibrate: the ranges are the closed-form peaks of an LI driven by
// held inputs, v_k = (1 − a^k)·w·x with a = e^(−dt/τ); each sequence
// starts from rest, the Delay's is the LI's a step later (the first
// sequence ends before the Delay has passed on the LI's last value), and
// spiking nodes get none.
func TestCalibrate(t *testing.T) {
	a := math.Exp(-1e-3 / 0.01)
	for _, tc := range []struct {
		kind           InputKind
		steps, delayed int // steps of input per vector; the Delay's, seen within the first sequence
	}{{InputCurrent, 5, 4}, {InputOneHotPulse, 1, 1}} {
		p := calibrationProgram(t, tc.kind)
		seqs := [][][]float32{
			{{1, 0}},         // li[0] rises for the vector's steps
			{{0, 1}, {0, 0}}, // li[1] rises, then decays: the peak is kept
		}
		if err := Calibrate(p, seqs); err != nil {
			t.Fatal(err)
		}
		peak := 1 - math.Pow(a, float64(tc.steps))
		wants := map[string][]float64{"li": {peak, 2 * peak}, "delay": {1 - math.Pow(a, float64(tc.delayed)), 2 * peak}}
		for node, want := range wants {
			got := p.Ranges[node]
			if len(got) != 2 || math.Abs(float64(got[0])-want[0]) > 1e-6 || math.Abs(float64(got[1])-want[1]) > 1e-6 {
				t.Errorf("%s: %s ranges %v, want %v", tc.kind, node, got, want)
			}
		}
		if _, ok := p.Ranges["lif"]; ok || len(p.Ranges) != 2 {
			t.Errorf("%s: ranges for %d nodes (%v), want li and delay only", tc.kind, len(p.Ranges), p.Ranges)
		}
	}
}

func TestCalibrateRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		kind InputKind
		seqs [][][]float32
		want string
	}{
		"no sequences":  {InputCurrent, nil, "no sequences"},
		"rate input":    {InputRate, [][][]float32{{{1, 0}}}, `input kind "rate"`},
		"short vector":  {InputCurrent, [][][]float32{{{1, 0}, {1}}}, "sequence 0, vector 1 has 1 values, the input \"in\" takes 2"},
		"not finite":    {InputCurrent, [][][]float32{{{float32(math.NaN()), 0}}}, "non-finite"},
		"infinite seqs": {InputCurrent, [][][]float32{{{1, 0}}, {{float32(math.Inf(1)), 0}}}, "sequence 1, vector 0 has a non-finite value"},
	} {
		p := calibrationProgram(t, tc.kind)
		err := Calibrate(p, tc.seqs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, err, tc.want)
		}
		if p.Ranges != nil {
			t.Errorf("%s: a refused calibration set ranges", name)
		}
	}
}

// TestRangesSaveLoad: ranges survive Save and Load, and Load refuses
// ranges that do not fit the graph, naming the node.
func TestRangesSaveLoad(t *testing.T) {
	p := calibrationProgram(t, InputCurrent)
	if err := Calibrate(p, [][][]float32{{{1, 1}}}); err != nil {
		t.Fatal(err)
	}
	q, err := Load(bytes.NewReader(saved(t, p)), int64(len(saved(t, p))), nil)
	if err != nil {
		t.Fatal(err)
	}
	for node, r := range p.Ranges {
		if got := q.Ranges[node]; len(got) != len(r) || got[0] != r[0] || got[1] != r[1] {
			t.Errorf("%s: loaded %v, saved %v", node, got, r)
		}
	}
	for name, tc := range map[string]struct {
		r    Ranges
		want string
	}{
		"unknown node": {Ranges{"nope": {1}}, `no node "nope"`},
		"spiking node": {Ranges{"lif": {1, 1}}, `node "lif" is a LIF, not a graded node`},
		"wrong size":   {Ranges{"li": {1}}, `node "li" has 1 values, want one per element (2)`},
		"negative":     {Ranges{"li": {1, -1}}, `node "li" element 1 is -1`},
	} {
		p.Ranges = tc.r
		b := saved(t, p)
		_, err := Load(bytes.NewReader(b), int64(len(b)), nil)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrCorrupt naming %q", name, err, tc.want)
		}
	}
}
