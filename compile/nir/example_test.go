package nir_test

import (
	"bytes"
	"fmt"

	"github.com/neuro-go/neuro/compile/nir"
	"github.com/neuro-go/neuro/snn"
)

// Read a NIR file written by the Python nir package. The recurrent layer
// was a nested NIRGraph; it comes back flattened with qualified names.
func ExampleReadFile() {
	g, err := nir.ReadFile("testdata/recurrent.nir", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g.Names())
	for _, e := range g.Edges {
		if e.From == "lif1.w_rec" {
			fmt.Println("recurrent edge:", e.From, "->", e.To)
		}
	}
	// Output:
	// [fc1 fc2 input lif1.lif lif1.w_rec lif2 output]
	// recurrent edge: lif1.w_rec -> lif1.lif
}

// Read with the Euler conversion: snnTorch exports Leaky(beta=0.8) at
// dt = 1e-4 as tau = dt/(1-beta); read at that step, the exact time
// constant reproduces a per-step decay of 0.8.
func ExampleRead_euler() {
	g, err := nir.ReadFile("testdata/recurrent.nir", &nir.Options{Euler: true, Dt: 1e-4})
	if err != nil {
		fmt.Println(err)
		return
	}
	lif := g.Nodes["lif2"].(*snn.LIF)
	fmt.Printf("tau = %.4g s, R = %.4g\n", lif.Tau[0], lif.R[0])
	// Output:
	// tau = 0.0004481 s, R = 5
}

// Write a graph as NIR and read it back.
func ExampleWrite() {
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{2}}).
		Add("fc", &snn.Linear{Weight: &snn.Tensor{Shape: []int{1, 2}, Data: []float32{0.5, -1}}}).
		Add("lif", &snn.LIF{Tau: []float64{0.02}, R: []float64{1}, VLeak: []float64{0},
			VThreshold: []float64{1}, VReset: []float64{0}}).
		Add("out", &snn.Output{}).
		Connect("in", "fc", "lif", "out")
	var buf bytes.Buffer
	if err := nir.Write(&buf, g, nil); err != nil {
		fmt.Println(err)
		return
	}
	back, err := nir.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(back.Names(), back.Nodes["fc"].(*snn.Linear).Weight.Data)
	// Output:
	// [fc in lif out] [0.5 -1]
}
