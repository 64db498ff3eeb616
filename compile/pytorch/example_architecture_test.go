package pytorch_test

import (
	"fmt"
	"log"
	"math"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/snn"
)

// readout is a user's architecture: one linear layer into leaky
// integrators, saved by a model whose state_dict is
//
//	readout.weight (n, m), readout.bias (n), readout.beta ()
//
// with beta the integrators' decay per step.
type readout struct{}

// Match looks at keys only: it is asked about every state_dict imported.
func (readout) Match(sd *pytorch.StateDict) bool {
	return sd.Has("readout.weight") && sd.Has("readout.beta")
}

// Build reads the tensors through the view, which bounds what a hostile
// file can make it allocate and refuses NaN and infinite elements.
func (readout) Build(sd *pytorch.StateDict, opts *compile.ImportOptions) (*snn.Graph, *compile.ImportReport, error) {
	for _, k := range sd.Keys() {
		if k != "readout.weight" && k != "readout.bias" && k != "readout.beta" {
			return nil, nil, &compile.UnsupportedError{Node: k, Reason: "not a tensor of a readout"}
		}
	}
	w, err := sd.Tensor("readout.weight", 2)
	if err != nil {
		return nil, nil, err
	}
	b, err := sd.Float32s("readout.bias")
	if err != nil {
		return nil, nil, err
	}
	beta, err := sd.Float32s("readout.beta")
	if err != nil {
		return nil, nil, err
	}
	if len(b) != w.Shape[0] || len(beta) != 1 || !(beta[0] > 0 && beta[0] < 1) {
		return nil, nil, &compile.UnsupportedError{Node: "readout", Reason: "bias or beta does not fit the weight"}
	}
	tau := -opts.Dt / math.Log(float64(beta[0])) // beta = exp(-dt/tau)
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{w.Shape[1]}}).
		Add("fc", &snn.Affine{Weight: w, Bias: b}).
		Add("li", &snn.LI{Tau: []float64{tau}, R: []float64{1}, VLeak: []float64{0}}).
		Add("out", &snn.Output{}).
		Connect("in", "fc", "li", "out")
	return g, &compile.ImportReport{Kind: "readout state_dict"}, nil
}

// The package that defines an architecture registers it in init; programs
// choose it by a blank import of that package, and from then on
// compile.Import("pytorch", ...) builds every state_dict that Match
// accepts with Build.
func init() { pytorch.RegisterArchitecture("example.readout", readout{}) }

func Example_architecture() {
	// A test of an architecture needs no file: NewStateDict holds the
	// tensors in memory, as Import's view holds a file's.
	w := snn.NewTensor(2, 3)
	for i := range w.Data {
		w.Data[i] = float32(i) / 10
	}
	sd, err := pytorch.NewStateDict(
		[]string{"readout.weight", "readout.bias", "readout.beta"},
		[]*snn.Tensor{w, {Shape: []int{2}, Data: []float32{0, 1}}, {Shape: []int{}, Data: []float32{0.9}}},
	)
	if err != nil {
		log.Fatal(err)
	}
	var a readout
	fmt.Println("match:", a.Match(sd))
	opts := (&compile.ImportOptions{}).WithDefaults()
	g, rep, err := a.Build(sd, &opts)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Kind, g.Names())
	// Output:
	// match: true
	// readout state_dict [fc in li out]
}
