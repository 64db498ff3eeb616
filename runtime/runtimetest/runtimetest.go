// Package runtimetest provides what tests of the runtime and of the layers
// above it share: a small language-model Program with random weights.
package runtimetest

import (
	"math/rand/v2"
	"strconv"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// Program is a small language model with random weights: one-hot tokens
// into a recurrent LIF layer of hidden neurons, read out by leaky
// integrators, 4 timesteps per token. The same arguments give the same
// program. contextLength 0 leaves the context unbounded.
func Program(name string, vocab, hidden int, seed uint64, contextLength int) *compile.Program {
	if vocab <= 0 || hidden <= 0 {
		panic("runtimetest: Program: vocab and hidden must be positive")
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	randT := func(scale float64, shape ...int) *snn.Tensor {
		t := snn.NewTensor(shape...)
		for i := range t.Data {
			t.Data[i] = float32(rng.NormFloat64() * scale)
		}
		return t
	}
	g := snn.NewGraph().
		Add("token", &snn.Input{Shape: []int{vocab}}).
		Add("embed", &snn.Linear{Weight: randT(1.5, hidden, vocab)}).
		Add("lif", &snn.LIF{Tau: []float64{5e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}).
		Add("rec", &snn.Linear{Weight: randT(0.3, hidden, hidden)}).
		Add("head", &snn.Linear{Weight: randT(2, vocab, hidden)}).
		Add("readout", &snn.LI{Tau: []float64{4e-3}, R: []float64{1}, VLeak: []float64{0}}).
		Add("logits", &snn.Output{}).
		Connect("token", "embed", "lif", "head", "readout", "logits").
		Connect("lif", "rec", "lif")
	p := &compile.Program{
		Name: name, Task: compile.TaskCausalLM, Graph: g, Dt: 1e-3, Timesteps: 4,
		Input:  compile.Encoding{Kind: compile.InputOneHot, Size: vocab},
		Output: compile.Decoding{Kind: compile.OutputLogits, Size: vocab},
	}
	if contextLength > 0 {
		p.Metadata = map[string]string{"context_length": strconv.Itoa(contextLength)}
	}
	return p
}
