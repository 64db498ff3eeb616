package compile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/neuro-go/neuro/compile"
	_ "github.com/neuro-go/neuro/compile/onnx" // registers the "onnx" format Import reads
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu" // registers the "cpu" device the deployment runs on
	"github.com/neuro-go/neuro/snn"
)

// An ONNX classifier of 8×8 handwritten digits, converted to a spiking
// network, compiled for the CPU simulator and run by a runtime on three
// images of the test split. Import converts the ReLU network to IF
// neurons whose thresholds are balanced on images of the training split;
// Compile plans it for the target; the runtime deploys the Program and
// presents each image for the program's timesteps. The readout
// integrates its input over those steps, and the prediction is its
// largest value.
func ExampleCompile() {
	file, err := os.ReadFile("testdata/digits/mlp.onnx")
	if err != nil {
		panic(err)
	}
	var digits struct {
		Test struct {
			Inputs [][]float32 `json:"inputs"`
			Labels []int       `json:"labels"`
		} `json:"test"`
		Calibration struct {
			Inputs [][]float32 `json:"inputs"`
		} `json:"calibration"`
	}
	b, err := os.ReadFile("testdata/digits/digits_test.json")
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(b, &digits); err != nil {
		panic(err)
	}
	images, labels := digits.Test.Inputs[:3], digits.Test.Labels[:3]

	g, _, err := compile.Import("onnx", bytes.NewReader(file), int64(len(file)), &compile.ImportOptions{
		Conversion: compile.ConversionOptions{Calibration: digits.Calibration.Inputs, Timesteps: 32}})
	if err != nil {
		panic(err)
	}
	prog, rep, err := compile.Compile(g, &compile.Options{Name: "digits", Task: compile.TaskClassification, Timesteps: 32})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d inputs, %d neurons in %d layers, %d outputs; fits %s: %v\n",
		rep.Network.Inputs, rep.Network.Neurons, rep.Network.Layers, rep.Network.Outputs, rep.Target.Device, rep.Target.Fits)

	ctx := context.Background()
	rt := runtime.New(nil)
	defer rt.Close()
	if err := rt.RegisterModel(&runtime.Model{ID: "digits", Program: prog}); err != nil {
		panic(err)
	}
	if _, err := rt.Deploy(ctx, runtime.DeploymentSpec{ID: "digits-cpu", Model: "digits", Device: "cpu"}); err != nil {
		panic(err)
	}
	req := &runtime.RunRequest{Deployment: "digits-cpu"}
	for _, x := range images {
		req.Samples = append(req.Samples, runtime.Sample{Vector: x})
	}
	res, err := rt.Run(ctx, req)
	if err != nil {
		panic(err)
	}
	for i, out := range res.Outputs {
		fmt.Printf("label %d, predicted %d\n", labels[i], out.Prediction)
	}
	fmt.Println("timesteps:", res.Usage.Timesteps)
	// Output:
	// 64 inputs, 202 neurons in 3 layers, 10 outputs; fits cpu: true
	// label 2, predicted 2
	// label 8, predicted 8
	// label 2, predicted 2
	// timesteps: 96
}

// A network built in code, compiled, and run on the simulator directly,
// without a runtime: the Program's graph and time step are all the
// simulator needs.
func ExampleCompile_simulator() {
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{2}}).
		Add("syn", &snn.Linear{Weight: &snn.Tensor{Shape: []int{3, 2}, Data: []float32{
			1, 0,
			0, 1,
			0.5, 0.5,
		}}}).
		Add("lif", &snn.LIF{Shape: []int{3},
			Tau: []float64{10e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}).
		Add("out", &snn.Output{}).
		Connect("in", "syn", "lif", "out")
	prog, rep, err := compile.Compile(g, &compile.Options{Name: "three", Timesteps: 100})
	if err != nil {
		panic(err)
	}
	fmt.Println(prog.Input.Node, prog.Input.Size, "->", prog.Output.Node, prog.Output.Size, "synapses:", rep.Network.Synapses)

	sim, err := snn.NewSimulator(prog.Graph, &snn.Options{Dt: prog.Dt})
	if err != nil {
		panic(err)
	}
	counts := make([]int, prog.Output.Size)
	for range prog.Timesteps {
		if err := sim.Step([]float32{3, 1.5}); err != nil {
			panic(err)
		}
		for i, s := range sim.Output(0) {
			counts[i] += int(s)
		}
	}
	fmt.Println("spikes:", counts)
	// Output:
	// in 2 -> out 3 synapses: 4
	// spikes: [20 9 16]
}
