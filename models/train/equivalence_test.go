// Package train_test checks that the Go simulator reproduces the PyTorch
// forward pass of a trained neuro-1 candidate, from the files export.py
// writes: graph.json (the node graph), neuro.pt (its tensors) and
// reference.pt (512 held-out tokens with PyTorch's logits after each, and a
// chat prompt with its 200-token greedy continuation).
//
// This builds the graph straight from graph.json; the import path
// through compile/pytorch is the next step (models/train/README.md).
package train_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/snn"
)

const run = "runs/lite-lima"

// tensors reads every tensor of a .pt file as float32.
func tensors(t *testing.T, path string) map[string]*snn.Tensor {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := pytorch.Open(f, st.Size(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sd, err := pf.StateDict()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*snn.Tensor{}
	for _, nt := range sd {
		x := &snn.Tensor{Shape: make([]int, len(nt.Tensor.Shape))}
		for i, d := range nt.Tensor.Shape {
			x.Shape[i] = int(d)
		}
		if x.Data, err = nt.Tensor.Float32s(); err != nil {
			t.Fatal(err)
		}
		m[nt.Name] = x
	}
	return m
}

type nodeJSON struct {
	Name      string  `json:"name"`
	Kind      string  `json:"kind"`
	Shape     []int   `json:"shape"`
	Weight    string  `json:"weight"`
	Bias      string  `json:"bias"`
	Tau       string  `json:"tau"`
	R         float64 `json:"r"`
	VLeak     float64 `json:"v_leak"`
	Scale     float64 `json:"scale"`
	Threshold float64 `json:"threshold"`
	N         int     `json:"n"`
}

// graph builds the snn graph graph.json describes.
func graph(t *testing.T) (*snn.Graph, int) {
	var gj struct {
		Dt    float64            `json:"dt"`
		Input struct{ Size int } `json:"input"`
		Nodes []nodeJSON         `json:"nodes"`
		Edges [][2]string        `json:"edges"`
	}
	b, err := os.ReadFile(filepath.Join(run, "graph.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &gj); err != nil {
		t.Fatal(err)
	}
	ts := tensors(t, filepath.Join(run, "neuro.pt"))
	weight := func(name string) *snn.Tensor {
		if ts[name] == nil {
			t.Fatalf("neuro.pt has no tensor %q", name)
		}
		return ts[name]
	}
	g := snn.NewGraph()
	for _, n := range gj.Nodes {
		switch n.Kind {
		case "Input":
			g.Add(n.Name, &snn.Input{Shape: n.Shape})
		case "Output":
			g.Add(n.Name, &snn.Output{})
		case "Linear":
			g.Add(n.Name, &snn.Linear{Weight: weight(n.Weight)})
		case "Affine":
			g.Add(n.Name, &snn.Affine{Weight: weight(n.Weight), Bias: weight(n.Bias).Data})
		case "LI":
			tau := make([]float64, len(weight(n.Tau).Data))
			for i, v := range weight(n.Tau).Data {
				tau[i] = float64(v)
			}
			g.Add(n.Name, &snn.LI{Tau: tau, R: []float64{n.R}, VLeak: []float64{n.VLeak}})
		case "Scale":
			g.Add(n.Name, &snn.Scale{Scale: []float32{float32(n.Scale)}, Shape: []int{n.N}})
		case "Threshold":
			g.Add(n.Name, &snn.Threshold{Threshold: []float64{n.Threshold}, Shape: []int{n.N}})
		default:
			t.Fatalf("node %q: kind %q", n.Name, n.Kind)
		}
	}
	for _, e := range gj.Edges {
		g.Connect(e[0], e[1])
	}
	if gj.Dt == 0 {
		gj.Dt = 1e-3
	}
	return g, gj.Input.Size
}

// TestLiteMatchesPyTorch: the readout within 1e-3 of PyTorch's over 512
// held-out tokens, and the same 200-token greedy continuation.
func TestLiteMatchesPyTorch(t *testing.T) {
	g, vocab := graph(t)
	sim, err := snn.NewSimulator(g, &snn.Options{Dt: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	ref := tensors(t, filepath.Join(run, "reference.pt"))
	toks, logits := ref["tokens"].Data, ref["logits"].Data
	in := make([]float32, vocab)
	step := func(tok int) []float32 {
		in[tok] = 1
		if err := sim.Step(in); err != nil {
			t.Fatal(err)
		}
		in[tok] = 0
		return sim.Output(0)
	}
	worst := 0.0
	for i, tk := range toks {
		for j, v := range step(int(tk)) {
			worst = math.Max(worst, math.Abs(float64(v)-float64(logits[i*vocab+j])))
		}
	}
	if worst > 1e-3 {
		t.Fatalf("largest readout difference over %d tokens: %g, want <= 1e-3", len(toks), worst)
	}
	sim.ResetAll()
	var out []float32
	for _, tk := range ref["prompt"].Data {
		out = step(int(tk))
	}
	greedy := ref["greedy"].Data
	for i, want := range greedy {
		best := 0
		for j, v := range out {
			if v > out[best] {
				best = j
			}
		}
		if best != int(want) {
			t.Fatalf("greedy token %d: %d, PyTorch %d", i, best, int(want))
		}
		out = step(best)
	}
	t.Logf("readout within %.3g of PyTorch over %d tokens; %d greedy tokens identical", worst, len(toks), len(greedy))
}
