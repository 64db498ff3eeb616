package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/compile/nir"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/loihi"
	"github.com/neuro-go/neuro/snn"
)

const (
	digits  = "../../compile/testdata/digits"
	snnData = "../../compile/pytorch/testdata/snn"
)

// runJSON runs the command's logic and decodes the JSON objects it prints.
func runJSON(t *testing.T, args ...string) []map[string]json.RawMessage {
	t.Helper()
	var out bytes.Buffer
	if err := run(args, &out); err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	var objs []map[string]json.RawMessage
	dec := json.NewDecoder(&out)
	for dec.More() {
		var m map[string]json.RawMessage
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, m)
	}
	if len(objs) == 0 {
		t.Fatal("no output")
	}
	for _, k := range []string{"network", "target", "estimates", "warnings"} {
		if _, ok := objs[0][k]; !ok {
			t.Fatalf("report lacks %q: %s", k, out.String())
		}
	}
	return objs
}

func writeJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func argmax(xs []float32) int {
	best := 0
	for i, v := range xs {
		if v > xs[best] {
			best = i
		}
	}
	return best
}

// TestDigits compiles the digits MLP from ONNX and from a PyTorch module,
// runs the first test samples for 64 steps and requires the ANN's
// prediction from the readout; the PyTorch program is saved and loaded.
func TestDigits(t *testing.T) {
	var data struct {
		Test struct {
			Inputs [][]float32 `json:"inputs"`
		} `json:"test"`
	}
	var results struct {
		Models map[string]struct {
			Predictions []int `json:"test_predictions"`
		} `json:"models"`
	}
	for name, v := range map[string]any{"digits_test.json": &data, "results.json": &results} {
		b, err := os.ReadFile(filepath.Join(digits, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatal(err)
		}
	}
	calib := filepath.Join(digits, "digits_test.json")
	for _, c := range []struct{ format, file string }{{"onnx", "mlp.onnx"}, {"pytorch", "mlp_module.pt"}} {
		t.Run(c.format, func(t *testing.T) {
			prog := filepath.Join(t.TempDir(), "mlp.neuro")
			for i := 0; i < 3; i++ {
				in := writeJSON(t, data.Test.Inputs[i])
				objs := runJSON(t, "-format", c.format, "-in", filepath.Join(digits, c.file), "-calib", calib,
					"-timesteps", "64", "-out", prog, "-input", in)
				var net compile.NetworkReport
				if err := json.Unmarshal(objs[0]["network"], &net); err != nil {
					t.Fatal(err)
				}
				if net.Inputs != 64 || net.Outputs != 10 || net.Neurons < 192 {
					t.Fatalf("network %+v", net)
				}
				var final [][]float32
				if len(objs) != 2 || json.Unmarshal(objs[1]["output_final_state"], &final) != nil || len(final) != 1 || len(final[0]) != 10 {
					t.Fatalf("run output %v", objs)
				}
				if got, want := argmax(final[0]), results.Models["mlp"].Predictions[i]; got != want {
					t.Errorf("sample %d: readout argmax %d, the ANN predicts %d", i, got, want)
				}
			}
			f, err := os.Open(prog)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, _ := f.Stat()
			p, err := compile.Load(f, st.Size(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if p.Timesteps != 64 || p.Source.Format != c.format || len(p.Graph.Nodes) < 5 {
				t.Fatalf("loaded program %+v", p)
			}
		})
	}
}

// TestSnnTorch runs the snnTorch fixture on the input sequence it was
// recorded with: the output spike counts must be the library's.
func TestSnnTorch(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(snnData, "snntorch_leaky.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Input  [][]float32 `json:"input"`
		Layers map[string]struct {
			Spikes [][]float64 `json:"spikes"`
		} `json:"layers"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	want := make([]int, 4)
	for _, row := range ref.Layers["3"].Spikes {
		for j, s := range row {
			if s != 0 {
				want[j]++
			}
		}
	}
	objs := runJSON(t, "-format", "pytorch", "-in", filepath.Join(snnData, "snntorch_leaky.pt"), "-input", writeJSON(t, ref.Input))
	var counts [][]int
	if len(objs) != 2 || json.Unmarshal(objs[1]["output_spike_counts"], &counts) != nil || len(counts) != 1 {
		t.Fatalf("run output %v", objs)
	}
	if !equalInts(counts[0], want) {
		t.Fatalf("output spike counts %v, snnTorch %v", counts[0], want)
	}
	var warnings []string
	if err := json.Unmarshal(objs[0]["warnings"], &warnings); err != nil || !strings.Contains(strings.Join(warnings, "\n"), "reset_delay") {
		t.Fatalf("warnings %v do not state the reset_delay assumption", warnings)
	}
}

func equalInts(a, b []int) bool {
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

// TestErrors: unknown formats and devices, and files that do not fit a
// target, are errors.
func TestErrors(t *testing.T) {
	for _, args := range [][]string{
		{"-format", "pytorch"},
		{"-format", "keras", "-in", filepath.Join(snnData, "snntorch_leaky.pt")},
		{"-format", "pytorch", "-in", filepath.Join(snnData, "snntorch_leaky.pt"), "-target", "tpu"},
		{"-format", "pytorch", "-in", filepath.Join(snnData, "snntorch_leaky.pt"), "-target", "loihi"}, // graded spikes: a Scale node
	} {
		var out bytes.Buffer
		if err := run(args, &out); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// -export writes NIR that reads back as the same graph; a converted ANN
// (subtractive reset) needs -export-lossy.
func TestExportNIR(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "net.nir")
	in := filepath.Join("..", "..", "compile", "pytorch", "testdata", "snn", "snntorch_leaky.pt")
	if _, err := os.Stat(in); err != nil {
		t.Fatalf("a committed fixture is missing: %v", err)
	}
	var out bytes.Buffer
	err := run([]string{"-format", "pytorch", "-in", in, "-export", path}, &out)
	if err != nil && !strings.Contains(err.Error(), "subtract") && !strings.Contains(err.Error(), "extension") {
		t.Fatal(err)
	}
	if err != nil {
		if err := run([]string{"-format", "pytorch", "-in", in, "-export", path, "-export-lossy"}, &out); err != nil {
			t.Fatal(err)
		}
	}
	g, err := nir.ReadFile(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.NamesOfKind(snn.KindLIF)) == 0 {
		t.Fatalf("exported graph has no LIF node: %v", g.Names())
	}
}

// -ranges calibrates the graded neurons on sequences of inputs, the
// program saved with -out carries the ranges, and loihi (which folds the
// cpu program, as it does the built-in models) sizes its graded
// spikes by them; a file that is not sequences of vectors is an error
// that names the flag.
func TestRanges(t *testing.T) {
	in := filepath.Join("..", "..", "models", "lima", "testdata", "tiny.pt")
	out := filepath.Join(t.TempDir(), "tiny.neuro")
	_, vocab := tinyLima(t)
	var seq [][]float32
	for i := range 40 {
		x := make([]float32, vocab)
		x[(7*i)%vocab] = 1
		seq = append(seq, x)
	}
	runJSON(t, "-format", "pytorch", "-in", in, "-ranges", writeJSON(t, [][][]float32{seq}), "-out", out)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile.Load(bytes.NewReader(b), int64(len(b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Ranges["b0.mix"]) == 0 || slices.Max(p.Ranges["b0.mix"]) <= 0 {
		t.Fatalf("saved ranges %v lack b0.mix", p.Ranges)
	}
	dev, err := hal.Open("loihi", hal.Config{})
	if err != nil {
		t.Fatal(err)
	}
	li, err := dev.Load(context.Background(), p, 1)
	if err != nil {
		t.Fatal(err)
	}
	calibrated := false
	for _, n := range li.(*loihi.Instance).Report().Nodes {
		calibrated = calibrated || slices.ContainsFunc(n.Notes, func(s string) bool { return strings.Contains(s, "calibrated range") })
	}
	if !calibrated {
		t.Error("no graded layer sized by the calibrated ranges")
	}
	var buf bytes.Buffer
	err = run([]string{"-format", "pytorch", "-in", in, "-ranges", writeJSON(t, [][]float32{{1, 0}})}, &buf)
	if err == nil || !strings.Contains(err.Error(), "-ranges: want an array of sequences") {
		t.Errorf("vectors instead of sequences: %v", err)
	}
}

// tinyLima compiles models/lima's tiny fixture for the cpu and returns it
// with its vocabulary size.
func tinyLima(t testing.TB) (*compile.Program, int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "models", "lima", "testdata", "tiny.pt"))
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := compile.Import("pytorch", bytes.NewReader(b), int64(len(b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := compile.Compile(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	shapes, err := g.Shapes()
	if err != nil {
		t.Fatal(err)
	}
	return p, snn.Size(shapes["token"].Out)
}

// FuzzInputs feeds arbitrary bytes to the example's own JSON readers: -calib's
// vectors, -input's steps, and -ranges' sequences, which calibrate a small
// lima program. Each reads the bytes or says what is wrong with them; none
// panics, and a step list it accepts is one the simulator can run.
func FuzzInputs(f *testing.F) {
	p, vocab := tinyLima(f)
	onehot := make([]float32, vocab)
	onehot[1] = 1
	seq, err := json.Marshal([][][]float32{{onehot, onehot}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seq)
	f.Add([]byte(`[[1,0],[0,1]]`))
	f.Add([]byte(`{"inputs":[[1]]}`))
	f.Add([]byte(`{"calibration":{"inputs":[[0.5]]}}`))
	f.Add([]byte(`[0.5,1]`))
	f.Add([]byte(`[[[1e39]]]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := parseVectors(b); err != nil && err.Error() == "" {
			t.Fatal("an error without a message")
		}
		if rows, steps, err := parseSteps(b, 0, 4); err == nil && (len(rows) == 0 || steps < 1) {
			t.Fatalf("accepted %d rows for %d steps", len(rows), steps)
		}
		q := *p
		q.Ranges = nil
		if err := calibrate(&q, b); err == nil && len(q.Ranges) == 0 {
			t.Fatal("calibrated without recording a range")
		}
	})
}

// TestInputRunsOnTarget: -input runs the program on the device -target
// names, as the runtime would: on loihi the outputs are the emulator's
// fixed-point ones, not the float simulator's.
func TestInputRunsOnTarget(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "mlp.neuro")
	var data struct {
		Test struct {
			Inputs [][]float32 `json:"inputs"`
		} `json:"test"`
	}
	if err := readJSON(filepath.Join(digits, "digits_test.json"), &data); err != nil {
		t.Fatal(err)
	}
	x := data.Test.Inputs[0]
	objs := runJSON(t, "-format", "onnx", "-in", filepath.Join(digits, "mlp.onnx"), "-calib", filepath.Join(digits, "digits_test.json"),
		"-target", "loihi", "-out", prog, "-input", writeJSON(t, x))
	var got runResult
	if len(objs) != 2 || json.Unmarshal(objs[1]["output_spike_counts"], &got.SpikeCounts) != nil || json.Unmarshal(objs[1]["output_final_state"], &got.FinalState) != nil {
		t.Fatalf("run output %v", objs)
	}
	if err := json.Unmarshal(objs[1]["device"], &got.Device); err != nil || got.Device != "loihi" {
		t.Errorf("ran on %q (%v), want loihi", got.Device, err)
	}
	b, err := os.ReadFile(prog)
	if err != nil {
		t.Fatal(err)
	}
	p, err := compile.Load(bytes.NewReader(b), int64(len(b)), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The same program stepped on the emulator here, and on the float
	// simulator.
	in, err := (&loihi.Device{}).Load(context.Background(), p, 1)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := snn.NewSimulator(p.Graph, &snn.Options{Dt: p.Dt})
	if err != nil {
		t.Fatal(err)
	}
	for range p.Timesteps {
		if err := in.Step(context.Background(), x); err != nil {
			t.Fatal(err)
		}
		if err := sim.Step(x); err != nil {
			t.Fatal(err)
		}
	}
	if want := in.Output(0); !slices.Equal(got.FinalState[0], want) {
		t.Errorf("-target loihi -input: final state %v, the loihi emulator's %v", got.FinalState[0], want)
	}
	if slices.Equal(got.FinalState[0], sim.Output(0)) {
		t.Errorf("-target loihi -input gave the float simulator's final state %v", sim.Output(0))
	}
	t.Logf("loihi %v\nfloat %v", got.FinalState[0], sim.Output(0))
}
