package loihi_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/loihi"
	"github.com/neuro-go/neuro/snn"
)

// rangedProgram is in(4) → fc → li(2) → head → out: li is a graded layer
// (an LI that feeds synapses) whose worst case, four inputs of up to 2
// held until the leak settles, is 8.
func rangedProgram(t *testing.T) *compile.Program {
	t.Helper()
	fc := &snn.Tensor{Shape: []int{2, 4}, Data: []float32{1, 1, 1, 1, 1, 1, 1, 1}}
	head := &snn.Tensor{Shape: []int{1, 2}, Data: []float32{1, -1}}
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{4}}).
		Add("fc", &snn.Linear{Weight: fc}).
		Add("li", &snn.LI{Tau: []float64{0.02}, R: []float64{1}, VLeak: []float64{0}}).
		Add("head", &snn.Linear{Weight: head}).
		Add("out", &snn.Output{}).
		Connect("in", "fc", "li", "head", "out")
	p, _, err := compile.Compile(g, &compile.Options{Dt: 1e-3, Timesteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCalibratedPayloads: a calibrated range makes a graded layer's
// payloads finer (a smaller shift) and says so in the report; "worst-case"
// ignores it; a value past RangeMargin times the range saturates, and
// Saturations counts it.
func TestCalibratedPayloads(t *testing.T) {
	p := rangedProgram(t)
	load := func(opts map[string]string) *loihi.Instance {
		t.Helper()
		d, err := hal.Open(loihi.Name, hal.Config{Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		in, err := d.Load(context.Background(), p, 1)
		if err != nil {
			t.Fatal(err)
		}
		return in.(*loihi.Instance)
	}
	shifts := func(in *loihi.Instance) []int32 {
		for _, l := range in.Network().Layers {
			if l.Name == "li" {
				return l.PayloadShift
			}
		}
		t.Fatal("no layer li")
		return nil
	}
	worst := shifts(load(nil))
	// li[0] reached 0.1 on the calibration data, li[1] never moved: it
	// keeps the worst case.
	p.Ranges = compile.Ranges{"li": {0.1, 0}}
	cal := load(nil)
	got := shifts(cal)
	if got[0] >= worst[0] || got[1] != worst[1] {
		t.Errorf("payload shifts %v calibrated, %v worst case: want li[0]'s smaller, li[1]'s the same", got, worst)
	}
	notes := cal.Report().Node("li").Notes
	if !slices.ContainsFunc(notes, func(s string) bool {
		return strings.Contains(s, "payloads of 1 of 2 neurons sized for 4 times their calibrated range")
	}) {
		t.Errorf("report notes %q do not name the calibrated payloads", notes)
	}
	if w := shifts(load(map[string]string{"ranges": loihi.RangesWorstCase})); !slices.Equal(w, worst) {
		t.Errorf("worst-case ranges give shifts %v, want %v", w, worst)
	}
	if m := shifts(load(map[string]string{"range_margin": "16"})); m[0] <= got[0] || m[0] > worst[0] {
		t.Errorf("margin 16 gives li[0] shift %d, want between margin 4's %d and the worst case's %d", m[0], got[0], worst[0])
	}
	// Inputs of 0.01 stay inside 4 × 0.1 however long they last; inputs of
	// 2 drive li[0] to 8, past it.
	step := func(in *loihi.Instance, x float32, n int) {
		t.Helper()
		for range n {
			if err := in.Step(context.Background(), []float32{x, x, x, x}); err != nil {
				t.Fatal(err)
			}
		}
	}
	step(cal, 0.01, 200)
	if s := cal.Saturations(); s != 0 {
		t.Errorf("%d saturations inside the calibrated range", s)
	}
	step(cal, 1.99, 200)
	if cal.Saturations() == 0 {
		t.Error("li[0] far past its calibrated range, and no saturation counted")
	}
}

// TestBadRangesRefused: Load names a calibration that does not fit the
// graph instead of sizing payloads from it.
func TestBadRangesRefused(t *testing.T) {
	p := rangedProgram(t)
	d, _ := hal.Open(loihi.Name, hal.Config{})
	for r, want := range map[*compile.Ranges]string{
		{"li": {0.1}}:     `node "li" has 1 values, want one per element (2)`,
		{"fc": {1, 1}}:    `node "fc" is a Linear, not a graded node`,
		{"li": {0.1, -1}}: `node "li" element 1 is -1`,
	} {
		p.Ranges = *r
		if _, err := d.Load(context.Background(), p, 1); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ranges %v: %v, want an error naming %q", *r, err, want)
		}
	}
}
