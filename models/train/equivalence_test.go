// Package train_test checks that the Go simulator reproduces the PyTorch
// forward pass of a trained neuro-1 candidate, from the files export.py
// writes: graph.json (the node graph), neuro.pt (its tensors) and
// reference.pt (512 held-out tokens with PyTorch's logits after each, and a
// chat prompt with its 200-token greedy continuation).
//
// The graph comes from model.pt through compile/pytorch, as any user's
// model would; graph.json and neuro.pt are export.py's description of the
// same graph, kept for readers and other tools.
package train_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/compile/pytorch"
	_ "github.com/neuro-go/neuro/models/lima" // the neuro-1 architecture, for compile.Import
	"github.com/neuro-go/neuro/snn"
)

// graph imports the run's model.pt through compile/pytorch, the path every
// user's model takes.
func graph(t *testing.T, run string) (*snn.Graph, int) {
	t.Helper()
	f, err := os.Open(filepath.Join(run, "model.pt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	g, rep, err := compile.Import("pytorch", f, st.Size(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != "neuro lima state_dict" {
		t.Fatalf("imported as %q", rep.Kind)
	}
	return g, snn.Size(mustShapes(t, g)["token"].Out)
}

func mustShapes(t *testing.T, g *snn.Graph) map[string]snn.Shape {
	s, err := g.Shapes()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestMatchesPyTorch: for every lima run with an equivalence fixture, the
// readout within 1e-3 of PyTorch's over 512 held-out tokens, and the same
// 200-token greedy continuation.
func TestMatchesPyTorch(t *testing.T) {
	refs, err := filepath.Glob("runs/*-lima*/reference.pt")
	if err != nil || len(refs) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, ref := range refs {
		run := filepath.Dir(ref)
		t.Run(filepath.Base(run), func(t *testing.T) { matchesPyTorch(t, run) })
	}
}

func matchesPyTorch(t *testing.T, run string) {
	g, vocab := graph(t, run)
	sim, err := snn.NewSimulator(g, &snn.Options{Dt: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := pytorch.ReadFloat32s(filepath.Join(run, "reference.pt"), nil)
	if err != nil {
		t.Fatal(err)
	}
	toks, logits := ref["tokens"], ref["logits"]
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
	for _, tk := range ref["prompt"] {
		out = step(int(tk))
	}
	greedy := ref["greedy"]
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
