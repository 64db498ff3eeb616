package snn_test

import (
	"fmt"

	"github.com/neuro-go/neuro/snn"
)

// A layer of two LIF neurons driven through a weight matrix; the second
// neuron gets twice the current and fires more often.
func ExampleNewSimulator() {
	w := &snn.Tensor{Shape: []int{2, 1}, Data: []float32{1, 2}}
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{1}}).
		Add("syn", &snn.Linear{Weight: w}).
		Add("lif", &snn.LIF{
			Tau: []float64{20e-3}, R: []float64{1}, VLeak: []float64{0},
			VThreshold: []float64{1}, VReset: []float64{0},
		}).
		Add("out", &snn.Output{}).
		Connect("in", "syn", "lif", "out")
	sim, err := snn.NewSimulator(g, &snn.Options{Dt: 1e-3})
	if err != nil {
		fmt.Println(err)
		return
	}
	counts := make([]int, 2)
	for step := 0; step < 200; step++ {
		if err := sim.Step([]float32{1.5}); err != nil {
			fmt.Println(err)
			return
		}
		for i, s := range sim.Output(0) {
			counts[i] += int(s)
		}
	}
	fmt.Println("spikes per neuron:", counts)
	fmt.Println("neuron updates:", sim.Counters().NeuronUpdates)
	// Output:
	// spikes per neuron: [9 22]
	// neuron updates: 400
}

// Validation names the node and field at fault.
func ExampleGraph_Validate() {
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{3}}).
		Add("li", &snn.LI{Tau: []float64{0}, R: []float64{1}, VLeak: []float64{0}}).
		Connect("in", "li")
	fmt.Println(g.Validate())
	// Output:
	// snn: invalid graph: snn: node "li" field tau: element 0 is 0, must be > 0
}

// An snnTorch Leaky neuron becomes an LIF node that reproduces it.
func ExampleSnnTorchLeaky() {
	node, err := snn.SnnTorchLeaky(snn.SnnTorchParams{
		Beta: []float64{0.9}, Threshold: []float64{1}, ResetMechanism: "subtract", ResetDelay: true,
	}, 4, 1e-3)
	if err != nil {
		fmt.Println(err)
		return
	}
	lif := node.(*snn.LIF)
	fmt.Printf("tau %.4g s, R %.4g, v_reset %.4g, reset %q\n", lif.Tau[0], lif.R[0], lif.VReset[0], lif.Reset)
	// Output:
	// tau 0.009491 s, R 10, v_reset -0.1111, reset "subtract"
}
