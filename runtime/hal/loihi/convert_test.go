package loihi_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/runtime/hal/haltest"
	"github.com/neuro-go/neuro/runtime/hal/loihi"
	"github.com/neuro-go/neuro/snn"
)

// haltest's program: LIF with τ = 20 ms at dt = 1 ms, weights multiples of
// 1/64. u must follow the input in one step (du = 4095: decay factor
// 4096 − 4096 = 0); dv = 4096 − round(4096·e^(−0.05)) = 4096 −
// round(3896.23) = 200; the weights are exact.
func TestConvertLIF(t *testing.T) {
	net, rep, err := loihi.Convert(haltest.Program(6, 3), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range net.Layers {
		for i := range l.Du {
			if l.Du[i] != 4095 || l.Dv[i] != 200 {
				t.Fatalf("%s[%d]: du %d dv %d, want 4095 and 200", l.Name, i, l.Du[i], l.Dv[i])
			}
			// The threshold in float: vth·2^6·scale ≈ 1.
			if th := float64(l.Vth[i]) * 64 * l.Scale[i]; math.Abs(th-1) > 1e-4 {
				t.Fatalf("%s[%d]: threshold %v", l.Name, i, th)
			}
		}
	}
	for _, name := range []string{"fc1", "fc2"} {
		if r := rep.Node(name); r == nil || r.WeightError != 0 {
			t.Fatalf("%s: %+v, want exact weights", name, r)
		}
	}
	// |3896/4096 − e^(−0.05)| = |0.951172 − 0.951229| = 5.75e-5.
	if r := rep.Node("lif1"); math.Abs(r.DecayVError-5.7e-5) > 1e-6 || r.DecayUError != 0 || r.ThresholdError > 1e-4 {
		t.Fatalf("lif1 report %+v", r)
	}
}

func TestConvertRefuses(t *testing.T) {
	lif := func() *snn.LIF {
		return &snn.LIF{Tau: []float64{20e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}
	}
	w := func() *snn.Tensor { t := snn.NewTensor(2, 2); t.Data = []float32{1, 0.5, -0.5, 1}; return t }
	prog := func(n snn.Node) *compile.Program {
		g := snn.NewGraph().Add("in", &snn.Input{Shape: []int{2}}).Add("fc", &snn.Linear{Weight: w()}).
			Add("n", n).Add("out", &snn.Output{}).Connect("in", "fc", "n", "out")
		return &compile.Program{Graph: g, Dt: 1e-3}
	}
	refr := lif()
	refr.Refractory = []float64{2e-3}
	negTh := lif()
	negTh.VThreshold = []float64{-1}
	// An LI's graded spikes back into itself: the payload scale is not
	// known when the layer is converted.
	liLoop := snn.NewGraph().Add("in", &snn.Input{Shape: []int{2}}).Add("fc", &snn.Linear{Weight: w()}).
		Add("li", &snn.LI{Tau: []float64{1e-2}, R: []float64{1}, VLeak: []float64{0}}).Add("rec", &snn.Linear{Weight: w()}).
		Add("out", &snn.Output{}).Connect("in", "fc", "li", "out").Connect("li", "rec", "li")
	// A relay chain holds the same delay for every element, up to 64
	// steps; a Delay straight off the Input has no synapses to take its
	// input through.
	delayOf := func(d ...float64) *snn.Graph {
		return snn.NewGraph().Add("in", &snn.Input{Shape: []int{2}}).Add("fc0", &snn.Linear{Weight: w()}).
			Add("dl", &snn.Delay{Delay: d}).Add("fc", &snn.Linear{Weight: w()}).Add("n", lif()).
			Add("out", &snn.Output{}).Connect("in", "fc0", "dl", "fc", "n", "out")
	}
	bareDelay := snn.NewGraph().Add("in", &snn.Input{Shape: []int{2}}).Add("dl", &snn.Delay{Delay: []float64{1e-3}}).
		Add("fc", &snn.Linear{Weight: w()}).Add("n", lif()).Add("out", &snn.Output{}).Connect("in", "dl", "fc", "n", "out")
	// A Scale junction on a cycle is not folded (the cycle's step of delay
	// could move), so it stays, and the chip has no Scale.
	scaleLoop := snn.NewGraph().Add("in", &snn.Input{Shape: []int{2}}).Add("fc", &snn.Linear{Weight: w()}).
		Add("sc", &snn.Scale{Scale: []float32{1}, Shape: []int{2}}).Add("fc2", &snn.Linear{Weight: w()}).Add("n", lif()).
		Add("rec", &snn.Linear{Weight: w()}).Add("out", &snn.Output{}).
		Connect("in", "fc", "sc", "fc2", "n", "out").Connect("n", "rec", "sc")
	// A Threshold must take its input through synapses, like any neuron.
	bareTh := snn.NewGraph().Add("in", &snn.Input{Shape: []int{2}}).Add("fc", &snn.Linear{Weight: w()}).
		Add("th", &snn.Threshold{Threshold: []float64{0}}).Add("th2", &snn.Threshold{Threshold: []float64{0.5}}).
		Add("out", &snn.Output{}).Connect("in", "fc", "th", "th2", "out")
	for _, tc := range []struct {
		name, node, want string
		p                *compile.Program
	}{
		{"refractory", "n", "refractory", prog(refr)},
		{"threshold", "n", "v_threshold", prog(negTh)},
		{"graded spikes in a cycle", "rec", "cycle", &compile.Program{Graph: liLoop}},
		{"delays that differ", "dl", "2 steps", &compile.Program{Graph: delayOf(1e-3, 2e-3)}},
		{"delay of 65 steps", "dl", "65 steps", &compile.Program{Graph: delayOf(65e-3)}},
		{"delay of half a step", "dl", "0 steps", &compile.Program{Graph: delayOf(0.4e-3)}},
		{"Delay off the Input", "dl", "Linear or Affine", &compile.Program{Graph: bareDelay}},
		{"Scale on a cycle", "sc", "Scale", &compile.Program{Graph: scaleLoop}},
		{"Threshold into Threshold", "th2", "Linear or Affine", &compile.Program{Graph: bareTh}},
	} {
		_, _, err := loihi.Convert(tc.p, nil)
		var ue *compile.UnsupportedError
		if !errors.Is(err, compile.ErrUnsupported) || !errors.As(err, &ue) || ue.Node != tc.node || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an UnsupportedError naming %q and %q", tc.name, err, tc.node, tc.want)
			continue
		}
		// Load refuses it too, through Partition or Convert.
		d, _ := hal.Open(loihi.Name, hal.Config{})
		if _, err := d.Load(context.Background(), tc.p, 1); !errors.Is(err, compile.ErrUnsupported) {
			t.Errorf("%s: Load: %v", tc.name, err)
		}
	}
}

// run steps both devices on the same inputs and calls f after each step
// with the two instances.
func run(t *testing.T, p *compile.Program, cfg hal.Config, batch, steps int, input func(step int) []float32, f func(step int, cpu, chip hal.Instance)) *loihi.Instance {
	t.Helper()
	cd, _ := hal.Open("cpu", hal.Config{})
	ld, err := hal.Open(loihi.Name, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ci, err := cd.Load(context.Background(), p, batch)
	if err != nil {
		t.Fatal(err)
	}
	li, err := ld.Load(context.Background(), p, batch)
	if err != nil {
		t.Fatal(err)
	}
	for s := 0; s < steps; s++ {
		x := input(s)
		if err := ci.Step(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		if err := li.Step(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		f(s, ci, li)
	}
	return li.(*loihi.Instance)
}

// Integrate-and-fire neurons with subtractive reset, a recurrent Linear,
// weights on the 1/64 grid and inputs on the chip's input grid: the float
// dynamics are exact in float32 (dyadic values, small sums) and the integer
// ones exact by construction, so the spike trains must be identical. The
// same holds for the reset microcode variants (Neuron.VReset) when v_reset
// is on the threshold's grid: a reset to a value, and a subtraction of
// v_threshold − v_reset.
func TestIFSpikeTrainsIdentical(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reset  snn.ResetMode
		vreset float64
		notes  string
	}{
		{"subtract threshold", snn.ResetSubtract, 0, ""},
		{"subtract towards -0.25", snn.ResetSubtract, -0.25, "subtractive reset by v_threshold − v_reset"},
		{"reset to 0", snn.ResetToValue, 0, ""},
		{"reset to -0.5", snn.ResetToValue, -0.5, "reset to v_reset"},
		{"reset to 0.125", snn.ResetToValue, 0.125, "reset to v_reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			li := ifSpikeTrains(t, func() *snn.IF {
				return &snn.IF{R: []float64{1 / 1e-3}, VThreshold: []float64{1}, VReset: []float64{tc.vreset}, Reset: tc.reset}
			})
			for _, name := range []string{"h", "o"} {
				l, r := layer(li.Network(), name), li.Report().Node(name)
				hasNote := strings.Contains(strings.Join(r.Notes, "; "), "microcode variant")
				if tc.notes == "" {
					if l.VReset != nil || hasNote {
						t.Errorf("%s: VReset %v, notes %q: want Lava's neuron", name, l.VReset, r.Notes)
					}
					continue
				}
				// v_reset on the threshold's grid: round(v_reset/(δ·2^6)),
				// exact here (v_threshold's grid holds it too).
				want := int32(math.Round(tc.vreset / (l.Scale[0] * 64)))
				if l.VReset[0] != want || r.ResetError > 1e-12 || !strings.Contains(strings.Join(r.Notes, "; "), tc.notes) {
					t.Errorf("%s: scale %g, VReset[0] %d (want %d), reset error %g, notes %q", name, l.Scale[0], l.VReset[0], want, r.ResetError, r.Notes)
				}
			}
		})
	}
}

func layer(net *loihi.Network, name string) *loihi.Layer {
	for _, l := range net.Layers {
		if l.Name == name {
			return l
		}
	}
	return nil
}

// ifSpikeTrains runs TestIFSpikeTrainsIdentical's network with the IF
// neurons ifn makes on cpu and loihi and requires identical outputs.
func ifSpikeTrains(t *testing.T, ifn func() *snn.IF) *loihi.Instance {
	rng := rand.New(rand.NewPCG(11, 12))
	const nIn, nH, nOut = 8, 16, 4
	wt := func(r, c, lo, n int) *snn.Tensor {
		w := snn.NewTensor(r, c)
		for i := range w.Data {
			w.Data[i] = float32(rng.IntN(n)+lo) / 64
		}
		return w
	}
	g := snn.NewGraph().Add("in", &snn.Input{Shape: []int{nIn}}).Add("fc1", &snn.Linear{Weight: wt(nH, nIn, -40, 161)}).
		Add("h", ifn()).Add("rec", &snn.Linear{Weight: wt(nH, nH, -40, 81)}).Add("fc2", &snn.Linear{Weight: wt(nOut, nH, -40, 81)}).
		Add("o", ifn()).Add("out", &snn.Output{}).
		Connect("in", "fc1", "h", "fc2", "o", "out").Connect("h", "rec", "h")
	p := &compile.Program{Graph: g, Dt: 1e-3, Timesteps: 64}
	spikes := 0
	// 6-bit inputs with 6 fractional bits ([−0.5, 0.5)) and a headroom of
	// 8 thresholds keep the worst-case state under 16 thresholds, so one
	// unit of v is 2^−19, the weight exponents come out ≥ 0 and no sum is
	// floored.
	li := run(t, p, hal.Config{Options: map[string]string{"headroom": "8", "input_bits": "6"}}, 2, 600, func(int) []float32 {
		x := make([]float32, 2*nIn)
		for i := range x {
			x[i] = float32(rng.IntN(24)) / 64 // in steps of 1/64: exact on the chip
		}
		return x
	}, func(s int, cpu, chip hal.Instance) {
		a, b := cpu.Output(0), chip.Output(0)
		for i := range a {
			if a[i] != b[i] {
				for _, n := range chip.(*loihi.Instance).Report().Nodes {
					t.Logf("%+v", n)
				}
				t.Fatalf("step %d: float %v, chip %v, %d saturations", s, a, b, chip.(*loihi.Instance).Saturations())
			}
			spikes += int(a[i])
		}
	})
	// Hidden neurons with a net negative drive sink below the headroom of
	// −16 thresholds and saturate there (counted); in 600 steps none of
	// them comes back up, so the trains stay identical.
	t.Logf("%d output spikes identical over 600 steps; %d saturations", spikes, li.Saturations())
	if spikes < 100 {
		t.Fatalf("only %d output spikes", spikes)
	}
	c := li.Counters()
	if c.Steps != 600 || c.NeuronUpdates != 600*2*(nH+nOut) || c.SynapticOps == 0 {
		t.Fatalf("counters %+v", c)
	}
	return li
}

// Leaky neurons: the chip decays by 3896/4096 with truncation where the
// float simulator multiplies by e^(−0.05) in float32, so spike trains agree
// until a neuron sits within rounding of its threshold. Measured: the
// fraction of (step, neuron) pairs with the same spike state.
func TestLIFSpikeAgreement(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *compile.Program
		min  float64
	}{
		{"LIF", haltest.Program(6, 3), 0.98},
		{"CubaLIF", cubaProgram(), 0.98},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			same, total, spikes := 0, 0, 0
			firstDiff := -1
			// Inputs k/4 up to 2.75: 8-bit graded spikes with 5 fractional
			// bits ([−4, 4) in steps of 1/32) carry them exactly.
			li := run(t, tc.p, hal.Config{Options: map[string]string{"input_frac_bits": "5"}}, 4, 1000, func(int) []float32 {
				x := make([]float32, 4*6)
				for i := range x {
					x[i] = float32(rng.IntN(12)) / 4
				}
				return x
			}, func(s int, cpu, chip hal.Instance) {
				a, b := cpu.Output(0), chip.Output(0)
				for i := range a {
					total++
					spikes += int(a[i])
					if a[i] == b[i] {
						same++
					} else if firstDiff < 0 {
						firstDiff = s
					}
				}
			})
			rate := float64(same) / float64(total)
			t.Logf("%s: %d of %d output states agree (%.4f), %d float spikes, first difference at step %d, %d saturations", tc.name, same, total, rate, spikes, firstDiff, li.Saturations())
			if rate < tc.min || spikes < 100 {
				t.Fatalf("agreement %.4f below %.2f (or too few spikes: %d)", rate, tc.min, spikes)
			}
		})
	}
}

func cubaProgram() *compile.Program {
	p := haltest.Program(6, 3)
	for _, name := range []string{"lif1", "lif2"} {
		p.Graph.Nodes[name] = &snn.CubaLIF{TauSyn: []float64{5e-3}, TauMem: []float64{20e-3}, R: []float64{1}, VLeak: []float64{0},
			VThreshold: []float64{0.2}, VReset: []float64{0}, WIn: []float64{1}}
	}
	return p
}

// A LIF whose worst case of one step's input is millions of thresholds
// cannot keep its threshold on the chip's grid: the conversion goes
// through, and the report says by how much the thresholds moved and why.
func TestConvertCoarseThresholdSaysWhy(t *testing.T) {
	p := haltest.Program(6, 3)
	w := p.Graph.Nodes["fc1"].(*snn.Linear).Weight.Data
	for i := range w {
		w[i] *= 1e6
	}
	_, rep, err := loihi.Convert(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Node("lif1")
	notes := strings.Join(r.Notes, "; ")
	if r.ThresholdError < 0.05 || !strings.Contains(notes, "thresholds are off by up to") || !strings.Contains(notes, "worst-case step of input") {
		t.Fatalf("lif1: threshold error %g, notes %q: want an error over 5%% and a note that says why", r.ThresholdError, notes)
	}
	if n := rep.Node("lif2"); strings.Contains(strings.Join(n.Notes, "; "), "thresholds are off") {
		t.Fatalf("lif2, whose inputs are unchanged, has the note: %q", n.Notes)
	}
}
