// Package lmtest checks an imported spiking language model against what
// snnTorch computed for it: the fixture compile/pytorch/testdata/snn/
// snntorch_lm.{pt,json}, written by gen_lm.py there, which the PyTorch
// and NIR importers' tests both read.
package lmtest

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// Layers is the options.layers a user sends with snntorch_lm.pt: the
// attribute names of the model's modules in forward order. The RLeaky
// was built with reset_delay=False, which a state_dict does not record.
var Layers = []compile.LayerSpec{
	{Name: "embed", Kind: "embedding"},
	{Name: "fc1", Kind: "linear"},
	{Name: "lif1", Kind: "snntorch.leaky"},
	{Name: "fc2", Kind: "linear"},
	{Name: "lif2", Kind: "snntorch.rleaky", Params: map[string]float64{"reset_delay": 0}},
	{Name: "fc_out", Kind: "linear"},
}

// Ref is what gen_lm.py recorded from snnTorch.
type Ref struct {
	Vocab        int         `json:"vocab"`
	Prompt       []int       `json:"prompt"`
	Logits       [][]float64 `json:"logits"`
	Continuation []int       `json:"continuation"`
}

// ReadRef reads the record at path (snntorch_lm.json).
func ReadRef(t testing.TB, path string) Ref {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ref Ref
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// Tolerance bounds the difference of a logit from snnTorch's.
const Tolerance = 1e-4

// Check compiles g as a causal language model (one step per token),
// checks that it has one Input of ref.Vocab one-hot tokens and one Output
// of ref.Vocab logits, and runs it on ref's prompt one token a step: the
// logits of every step must be snnTorch's within Tolerance, and feeding
// back the argmax must continue the prompt with the tokens snnTorch's own
// greedy decoding chose. It returns the largest difference of a logit.
func Check(t testing.TB, g *snn.Graph, ref Ref) float64 {
	t.Helper()
	p, _, err := compile.Compile(g, &compile.Options{Task: compile.TaskCausalLM, Timesteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	ins, outs := p.Graph.NamesOfKind(snn.KindInput), p.Graph.NamesOfKind(snn.KindOutput)
	shapes, err := p.Graph.Shapes()
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) != 1 || len(outs) != 1 || snn.Size(shapes[ins[0]].Out) != ref.Vocab || snn.Size(shapes[outs[0]].Out) != ref.Vocab {
		t.Fatalf("graph inputs %v, outputs %v: want one of %d values each", ins, outs, ref.Vocab)
	}
	sim, err := snn.NewSimulator(p.Graph, &snn.Options{Dt: p.Dt})
	if err != nil {
		t.Fatal(err)
	}
	onehot := make([]float32, ref.Vocab)
	step := func(tok int) []float32 {
		clear(onehot)
		onehot[tok] = 1
		if err := sim.Step(onehot); err != nil {
			t.Fatal(err)
		}
		return sim.Output(0)
	}
	var out []float32
	worst := 0.0
	for s, tok := range ref.Prompt {
		out = step(tok)
		for i, v := range out {
			d := math.Abs(float64(v) - ref.Logits[s][i])
			worst = math.Max(worst, d)
			if d > Tolerance {
				t.Fatalf("token %d (id %d) logit %d: %v, snnTorch gives %v (diff %g)", s, tok, i, v, ref.Logits[s][i], d)
			}
		}
	}
	for k, want := range ref.Continuation {
		got := 0
		for i, v := range out {
			if v > out[got] {
				got = i
			}
		}
		if got != want {
			t.Fatalf("greedy token %d: %d, snnTorch chose %d", k, got, want)
		}
		out = step(got)
	}
	return worst
}
