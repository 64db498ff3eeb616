package loihi_test

import (
	"context"
	"fmt"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime/hal"
	"github.com/neuro-go/neuro/runtime/hal/loihi"
	"github.com/neuro-go/neuro/snn"
)

// Convert shows the integers a float LIF layer becomes.
func ExampleConvert() {
	w := snn.NewTensor(1, 2)
	w.Data = []float32{0.5, -0.25}
	g := snn.NewGraph().Add("in", &snn.Input{Shape: []int{2}}).Add("fc", &snn.Linear{Weight: w}).
		Add("lif", &snn.LIF{Tau: []float64{20e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}).
		Add("out", &snn.Output{}).Connect("in", "fc", "lif", "out")
	net, rep, err := loihi.Convert(&compile.Program{Graph: g, Dt: 1e-3}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	l, d := net.Layers[0], net.Denses[0]
	fmt.Println("du", l.Du[0], "dv", l.Dv[0], "weights", d.Weights, d.Sign)
	fmt.Printf("weight error %.3g, decay error %.2g\n", rep.Node("fc").WeightError, rep.Node("lif").DecayVError)
	// Output:
	// du 4095 dv 200 weights [252 -126] mixed
	// weight error 0, decay error 5.8e-05
}

// A program that needs a kind the chip does not run is refused by name.
func ExampleDevice_Load() {
	g := snn.NewGraph().Add("in", &snn.Input{Shape: []int{1, 4, 4}}).Add("pool", &snn.SumPool2d{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}}).
		Add("out", &snn.Output{}).Connect("in", "pool", "out")
	dev, _ := hal.Open(loihi.Name, hal.Config{})
	_, err := dev.Load(context.Background(), &compile.Program{Graph: g}, 1)
	fmt.Println(err)
	// Output:
	// loihi: compile: unsupported: node "pool": loihi2 does not run SumPool2d nodes
}

// A program that links the backend configures it with types; the
// registry's string options arrive at the same Config.
func ExampleNew() {
	dev, err := loihi.New(&loihi.Config{PayloadBits: 16, Headroom: 2.5})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(dev.Capabilities().Name, dev.Config().PayloadBits, dev.Config().Headroom)
	_, err = loihi.New(&loihi.Config{PayloadBits: 40})
	fmt.Println(err)
	// Output:
	// loihi 16 2.5
	// loihi: Config.PayloadBits 40 out of [2, 24]
}
