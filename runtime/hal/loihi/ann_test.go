package loihi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuro-go/neuro/compile"
	_ "github.com/neuro-go/neuro/compile/onnx"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/loihi"
	"github.com/neuro-go/neuro/snn"
)

func argmax(xs []float32) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

// classAgreement runs p on the float simulator and the chip for T steps
// per sample (batched) and returns how many samples get the same class.
func classAgreement(t *testing.T, p *compile.Program, cfg hal.Config, samples [][]float32, T int) (int, *loihi.Instance) {
	t.Helper()
	const batch = 50
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
	size := len(samples[0])
	agree := 0
	for lo := 0; lo < len(samples); lo += batch {
		x := make([]float32, batch*size)
		for s := 0; s < batch && lo+s < len(samples); s++ {
			copy(x[s*size:], samples[lo+s])
		}
		for s := 0; s < batch; s++ {
			ci.Reset(s)
			li.Reset(s)
		}
		for step := 0; step < T; step++ {
			if err := ci.Step(context.Background(), x); err != nil {
				t.Fatal(err)
			}
			if err := li.Step(context.Background(), x); err != nil {
				t.Fatal(err)
			}
		}
		n := ci.Outputs()[0].Size
		for s := 0; s < batch && lo+s < len(samples); s++ {
			if argmax(ci.Output(0)[s*n:(s+1)*n]) == argmax(li.Output(0)[s*n:(s+1)*n]) {
				agree++
			}
		}
	}
	return agree, li.(*loihi.Instance)
}

// An ANN-to-SNN converted ReLU MLP (IF neurons with subtractive reset, an
// I readout), 200 random inputs, 64 steps: with the program's weights on
// an 8-bit grid the chip must pick the float simulator's class on at least
// 99% of them; with float weights, 97%.
func TestANNConversionAgreement(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{20, 40, 30, 5}
	a := &compile.ANN{Nodes: []*compile.ANNNode{{Name: "x", Op: compile.OpInput, Shape: []int{sizes[0]}}}}
	prev := "x"
	for l := 1; l < len(sizes); l++ {
		w := snn.NewTensor(sizes[l], sizes[l-1])
		for i := range w.Data {
			w.Data[i] = float32(rng.NormFloat64() / math.Sqrt(float64(sizes[l-1])))
		}
		b := make([]float32, sizes[l])
		for i := range b {
			b[i] = float32(rng.NormFloat64() * 0.05)
		}
		name := "fc" + string(rune('0'+l))
		a.Nodes = append(a.Nodes, &compile.ANNNode{Name: name, Op: compile.OpDense, Inputs: []string{prev}, Weight: w, Bias: b})
		prev = name
		if l < len(sizes)-1 {
			a.Nodes = append(a.Nodes, &compile.ANNNode{Name: name + ".relu", Op: compile.OpReLU, Inputs: []string{prev}})
			prev = name + ".relu"
		}
	}
	sample := func() []float32 {
		x := make([]float32, sizes[0])
		for i := range x {
			x[i] = float32(rng.Float64())
		}
		return x
	}
	var calib, test [][]float32
	for i := 0; i < 100; i++ {
		calib = append(calib, sample())
	}
	for i := 0; i < 200; i++ {
		test = append(test, sample())
	}
	g, _, err := compile.ConvertANN(a, &compile.ConversionOptions{Calibration: calib})
	if err != nil {
		t.Fatal(err)
	}
	p := &compile.Program{Name: "mlp", Graph: g, Dt: compile.ConvertedDt, Timesteps: 64}
	agree, li := classAgreement(t, p, hal.Config{}, test, 64)
	// With float weights the chip's own 8-bit rounding (0.39% of the
	// largest weight at most, in every layer) flips a few near ties:
	// measured 196 of 200.
	t.Logf("float weights: same class on %d of %d inputs; %d saturations", agree, len(test), li.Saturations())
	if agree < 194 {
		t.Fatalf("float weights: chip and float simulator agree on %d of 200 inputs, want at least 194", agree)
	}
	// The compiler's own 8-bit pass first (compile.Quantize, per layer):
	// then both devices run the same weights and must agree on 99%.
	if _, err := compile.Quantize(g, 8, false); err != nil {
		t.Fatal(err)
	}
	agree, li = classAgreement(t, p, hal.Config{}, test, 64)
	for _, n := range li.Report().Nodes {
		t.Logf("%+v", n)
	}
	t.Logf("8-bit program: same class on %d of %d inputs; %d saturations", agree, len(test), li.Saturations())
	if agree < 198 {
		t.Fatalf("chip and float simulator agree on %d of 200 inputs, want at least 198", agree)
	}
}

// The digits MLP (compile/testdata/digits) imported through the onnx
// format, converted with the shipped calibration
// samples: the chip must give the float simulator's class on at least 99%
// of the 450 test images.
func TestDigitsAgreement(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "compile", "testdata", "digits")
	b, err := os.ReadFile(filepath.Join(dir, "mlp.onnx"))
	if err != nil {
		t.Fatal(err) // a committed fixture
	}
	var data struct {
		Test struct {
			Inputs [][]float32 `json:"inputs"`
		} `json:"test"`
		Calibration struct {
			Inputs [][]float32 `json:"inputs"`
		} `json:"calibration"`
	}
	js, err := os.ReadFile(filepath.Join(dir, "digits_test.json"))
	if err != nil {
		t.Fatal(err) // a committed fixture
	}
	if err := json.Unmarshal(js, &data); err != nil {
		t.Fatal(err)
	}
	g, _, err := compile.Import("onnx", bytes.NewReader(b), int64(len(b)), &compile.ImportOptions{Conversion: compile.ConversionOptions{Calibration: data.Calibration.Inputs}})
	if errors.Is(err, compile.ErrUnknownFormat) {
		t.Fatal("the onnx format is not registered, though this test imports compile/onnx")
	}
	if err != nil {
		t.Fatal(err)
	}
	p := &compile.Program{Name: "digits-mlp", Graph: g, Dt: 1e-3, Timesteps: 64}
	agree, li := classAgreement(t, p, hal.Config{}, data.Test.Inputs, 64)
	for _, n := range li.Report().Nodes {
		t.Logf("%+v", n)
	}
	n := len(data.Test.Inputs)
	t.Logf("same class on %d of %d digits; %d saturations", agree, n, li.Saturations())
	if float64(agree) < 0.99*float64(n) {
		t.Fatalf("chip and float simulator agree on %d of %d digits, want 99%%", agree, n)
	}
}
