package loihi

import (
	"context"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all" // the neuro-1 language models
	"github.com/neuro-go/neuro/snn"
)

// residualProgram is a small lima-like graph: an embedding, blocks whose
// residual junctions are Scale nodes, and a head into the Output, with
// some zero rows, columns and scales so that the patterns are not all
// dense. With shift > 0 each block also has shift channels, a one-step
// Delay between two Linear nodes, and as many channels two steps back, two
// one-step Delays in series.
func residualProgram(blocks, d, hidden, vocab, shift int, seed uint64) *compile.Program {
	rng := rand.New(rand.NewPCG(seed, 1))
	w := func(r, c int) *snn.Tensor {
		t := snn.NewTensor(r, c)
		for i := range t.Data {
			if rng.IntN(4) > 0 {
				t.Data[i] = float32(rng.NormFloat64())
			}
		}
		// A dead row and a dead column.
		for j := 0; j < c; j++ {
			t.Data[j] = 0
		}
		for i := 0; i < r; i++ {
			t.Data[i*c+c-1] = 0
		}
		return t
	}
	sc := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(i % 3)
		}
		return s
	}
	g := snn.NewGraph().Add("tok", &snn.Input{Shape: []int{vocab}}).Add("embed", &snn.Linear{Weight: w(d, vocab)}).
		Add("head", &snn.Linear{Weight: w(vocab, d)}).Add("logits", &snn.Output{})
	prev := "embed"
	for b := 0; b < blocks; b++ {
		n := func(s string) string { return string(rune('a'+b)) + "." + s }
		g.Add(n("in"), &snn.Linear{Weight: w(d, d)}).Add(n("mix"), &snn.LI{Tau: []float64{5e-3}, R: []float64{1}, VLeak: []float64{0}}).
			Add(n("out"), &snn.Linear{Weight: w(d, d)}).Add(n("sum"), &snn.Scale{Scale: sc(d)}).
			Add(n("fc1"), &snn.Affine{Weight: w(hidden, d), Bias: make([]float32, hidden)}).
			Add(n("spk"), &snn.Threshold{Threshold: []float64{0.1}}).Add(n("fc2"), &snn.Linear{Weight: w(d, hidden)}).
			Add(n("res"), &snn.Scale{Scale: []float32{1}})
		g.Connect(prev, n("in"), n("mix"), n("out"), n("sum"), n("fc1"), n("spk"), n("fc2"), n("res")).Connect(prev, n("sum")).Connect(n("sum"), n("res"))
		if shift > 0 {
			g.Add(n("sin"), &snn.Linear{Weight: w(shift, d)}).Add(n("dl"), &snn.Delay{Delay: []float64{1e-3}}).Add(n("sout"), &snn.Linear{Weight: w(d, shift)}).
				Connect(prev, n("sin"), n("dl"), n("sout"), n("sum"))
			g.Add(n("sin2"), &snn.Linear{Weight: w(shift, d)}).Add(n("dl2"), &snn.Delay{Delay: []float64{1e-3}}).
				Add(n("dl2b"), &snn.Delay{Delay: []float64{1e-3}}).Add(n("sout2"), &snn.Linear{Weight: w(d, shift)}).
				Connect(prev, n("sin2"), n("dl2"), n("dl2b"), n("sout2"), n("sum"))
		}
		prev = n("res")
	}
	g.Connect("tok", "embed").Connect(prev, "head", "logits")
	return &compile.Program{Name: "residual", Graph: g, Dt: 1e-3, Timesteps: 8}
}

// The estimate from sparsity patterns must place every program as
// Partition places its folded form: the same cores, slices, synapses and
// fan-ins.
func TestEstimateMatchesPartition(t *testing.T) {
	tgt := Target()
	progs := map[string]*compile.Program{}
	for i, sz := range []struct{ blocks, d, hidden, vocab, shift int }{{1, 8, 16, 10, 0}, {2, 70, 130, 65, 0}, {3, 33, 64, 200, 0}, {2, 40, 50, 30, 7}} {
		progs[string(rune('A'+i))] = residualProgram(sz.blocks, sz.d, sz.hidden, sz.vocab, sz.shift, uint64(i))
	}
	// A recurrent Linear and a one-to-one recurrence (a Scale on a cycle).
	rec := snn.NewGraph().Add("in", &snn.Input{Shape: []int{5}}).Add("fc", &snn.Linear{Weight: snn.NewTensor(6, 5)}).
		Add("n", &snn.LIF{Tau: []float64{1e-2}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}).
		Add("v", &snn.Scale{Scale: []float32{0.5, 0, 1, 1, 2, 3}}).Add("r", &snn.Linear{Weight: snn.NewTensor(6, 6)}).Add("out", &snn.Output{}).
		Connect("in", "fc", "n", "out").Connect("n", "v", "n").Connect("n", "r", "n")
	for i := range rec.Nodes["fc"].(*snn.Linear).Weight.Data {
		rec.Nodes["fc"].(*snn.Linear).Weight.Data[i] = float32(i % 4)
	}
	for i := range rec.Nodes["r"].(*snn.Linear).Weight.Data {
		rec.Nodes["r"].(*snn.Linear).Weight.Data[i] = float32(i % 5)
	}
	progs["recurrent"] = &compile.Program{Graph: rec, Dt: 1e-3}
	for name, p := range progs {
		est, err := estimatePlacement(p.Graph, &tgt, p.Name)
		if err != nil || est == nil {
			t.Fatalf("%s: estimate %v, %v", name, est, err)
		}
		g, _, err := fold(p.Graph)
		if err != nil {
			t.Fatal(err)
		}
		exact, err := compile.Partition(placementGraph(g), &tgt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(est, exact) {
			t.Errorf("%s: estimate %+v, Partition of the folded graph %+v", name, est, exact)
		}
		if _, err := (&Device{}).Load(context.Background(), p, 1); err != nil {
			t.Errorf("%s: Load: %v", name, err)
		}
	}
}

// A program whose folded form needs more cores than the chip has is
// refused by the estimate, with the error Partition would give.
func TestEstimateRefuses(t *testing.T) {
	p := residualProgram(2, 300, 600, 500, 0, 9)
	tgt := Target()
	tgt.Cores = 3
	_, err := estimatePlacement(p.Graph, &tgt, p.Name)
	g, _, _ := fold(p.Graph)
	_, want := compile.Partition(placementGraph(g), &tgt)
	var fe *compile.FitError
	if !errors.As(err, &fe) || !errors.Is(err, compile.ErrUnsupported) || want == nil || err.Error() != want.Error() {
		t.Fatalf("estimate: %v; Partition: %v", err, want)
	}
}

// The built-in language models: neuro-1-lite's estimate is its placement
// exactly (its composed maps are dense); neuro-1-standard's fits;
// neuro-1-heavy's is refused with the error that folding and Partition
// gave before the estimate existed (measured: 14 s and 750 MB to get it;
// 20 ms and 1 MB now).
func TestEstimateModels(t *testing.T) {
	tgt := Target()
	for _, id := range []string{models.Lite, models.Standard, models.Heavy} {
		m, err := models.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		est, err := estimatePlacement(m.Program.Graph, &tgt, m.Program.Name)
		switch id {
		case models.Heavy:
			const want = `compile: node "b3.mix" does not fit loihi2: cores: needs 129, the device has 128`
			if err == nil || err.Error() != want {
				t.Errorf("%s: %v, want %s", id, err, want)
			}
			continue
		case models.Standard:
			if err != nil || est == nil {
				t.Errorf("%s: %v", id, err)
			}
			continue
		}
		g, _, err := fold(m.Program.Graph)
		if err != nil {
			t.Fatal(err)
		}
		exact, err := compile.Partition(placementGraph(g), &tgt)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(est, exact) {
			t.Errorf("%s: estimate %+v, Partition of the folded graph %+v", id, est, exact)
		}
	}
}
