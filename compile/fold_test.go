package compile_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuro-go/neuro/compile"
	_ "github.com/neuro-go/neuro/compile/pytorch"
	_ "github.com/neuro-go/neuro/models/lima" // neuro-1-lite's architecture, for liteGraph
	"github.com/neuro-go/neuro/snn"
)

func randTensor(r *rand.Rand, rows, cols int) *snn.Tensor {
	t := snn.NewTensor(rows, cols)
	for i := range t.Data {
		t.Data[i] = float32(r.NormFloat64() / math.Sqrt(float64(cols)))
	}
	return t
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * 0.3)
	}
	return v
}

// miniLima is a two-block lima-shaped graph (models/lima/lima.go) with
// random weights: residual Scale junctions, LI mixing, Threshold MLP.
func miniLima(seed uint64) *snn.Graph {
	r := rand.New(rand.NewPCG(seed, 1))
	const v, d, k, h = 12, 6, 5, 9
	g := snn.NewGraph().
		Add("token", &snn.Input{Shape: []int{v}}).
		Add("embed", &snn.Linear{Weight: randTensor(r, d, v)})
	g.Connect("token", "embed")
	u := "embed"
	for _, p := range []string{"b0.", "b1."} {
		tau := make([]float64, k)
		for i := range tau {
			tau[i] = 1e-3 * (1 + 20*r.Float64())
		}
		g.Add(p+"mix_in", &snn.Linear{Weight: randTensor(r, k, d)}).
			Add(p+"mix", &snn.LI{Tau: tau, R: []float64{1}, VLeak: []float64{0}}).
			Add(p+"mix_out", &snn.Linear{Weight: randTensor(r, d, k)}).
			Add(p+"sum", &snn.Scale{Scale: []float32{1}, Shape: []int{d}}).
			Add(p+"fc1", &snn.Affine{Weight: randTensor(r, h, d), Bias: randVec(r, h)}).
			Add(p+"spk", &snn.Threshold{Threshold: []float64{0}, Shape: []int{h}}).
			Add(p+"fc2", &snn.Linear{Weight: randTensor(r, d, h)}).
			Add(p+"out", &snn.Scale{Scale: randVec(r, d)}).
			Connect(u, p+"mix_in", p+"mix", p+"mix_out", p+"sum").
			Connect(u, p+"sum", p+"fc1", p+"spk", p+"fc2", p+"out").
			Connect(p+"sum", p+"out")
		u = p + "out"
	}
	g.Add("head", &snn.Affine{Weight: randTensor(r, v, d), Bias: randVec(r, v)}).
		Add("logits", &snn.Output{}).
		Connect(u, "head", "logits")
	return g
}

// run steps g over the inputs and returns every output of every step.
func run(t *testing.T, g *snn.Graph, inputs [][]float32) [][]float32 {
	t.Helper()
	sim, err := snn.NewSimulator(g, &snn.Options{Dt: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	var outs [][]float32
	for _, x := range inputs {
		if err := sim.Step(x); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, append([]float32(nil), sim.Output(0)...))
	}
	return outs
}

func maxDiff(a, b [][]float32) float64 {
	worst := 0.0
	for i := range a {
		for j := range a[i] {
			worst = math.Max(worst, math.Abs(float64(a[i][j])-float64(b[i][j])))
		}
	}
	return worst
}

// checkCanonical: every synapse node has one source and one target, and
// neither is linear.
func checkCanonical(t *testing.T, g *snn.Graph, skipped []string) {
	t.Helper()
	ins, outs := map[string][]string{}, map[string][]string{}
	for _, e := range g.Edges {
		ins[e.To] = append(ins[e.To], e.From)
		outs[e.From] = append(outs[e.From], e.To)
	}
	linear := func(n string) bool {
		k := g.Nodes[n].Kind()
		return k == snn.KindLinear || k == snn.KindAffine || k == snn.KindScale
	}
	for _, n := range g.Names() {
		if !linear(n) || contains(skipped, n) {
			continue
		}
		if g.Nodes[n].Kind() == snn.KindScale {
			t.Errorf("Scale node %q survived the fold", n)
			continue
		}
		if len(ins[n]) != 1 || len(outs[n]) != 1 || linear(ins[n][0]) || linear(outs[n][0]) {
			t.Errorf("synapse node %q: sources %v, targets %v", n, ins[n], outs[n])
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func TestFoldLinearSameFunction(t *testing.T) {
	oneHot := func(r *rand.Rand, n, steps int) [][]float32 {
		var xs [][]float32
		for range steps {
			x := make([]float32, n)
			x[r.IntN(n)] = 1
			xs = append(xs, x)
		}
		return xs
	}
	dense := func(r *rand.Rand, n, steps int) [][]float32 {
		var xs [][]float32
		for range steps {
			xs = append(xs, randVec(r, n))
		}
		return xs
	}
	chain := snn.NewGraph().
		Add("x", &snn.Input{Shape: []int{4}}).
		Add("a", &snn.Affine{Weight: randTensor(rand.New(rand.NewPCG(3, 3)), 3, 4), Bias: []float32{0.5, -1, 0.25}}).
		Add("s", &snn.Scale{Scale: []float32{2, -1, 0.5}}).
		Add("b", &snn.Linear{Weight: randTensor(rand.New(rand.NewPCG(4, 4)), 3, 3)}).
		Add("lif", &snn.LIF{Tau: []float64{5e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{0.3}, VReset: []float64{0}}).
		Add("y", &snn.Output{}).
		Connect("x", "a", "s", "b", "lif", "y")
	// One Linear feeding two neurons: split into one synapse node each.
	fan := snn.NewGraph().
		Add("x", &snn.Input{Shape: []int{4}}).
		Add("w", &snn.Linear{Weight: randTensor(rand.New(rand.NewPCG(5, 5)), 3, 4)}).
		Add("n1", &snn.LI{Tau: []float64{4e-3}, R: []float64{1}, VLeak: []float64{0}}).
		Add("n2", &snn.LI{Tau: []float64{9e-3}, R: []float64{1}, VLeak: []float64{0}}).
		Add("w2", &snn.Linear{Weight: randTensor(rand.New(rand.NewPCG(6, 6)), 3, 3)}).
		Add("y", &snn.Output{}).
		Connect("x", "w", "n1", "w2", "y").
		Connect("w", "n2", "w2")
	for _, tc := range []struct {
		name    string
		g       *snn.Graph
		inputs  func(*rand.Rand, int, int) [][]float32
		in      int
		removed int
	}{
		{"mini lima", miniLima(1), oneHot, 12, 14},
		{"mini lima, dense input", miniLima(2), dense, 12, 14},
		{"affine-scale-linear chain", chain, dense, 4, 3},
		{"fan-out", fan, dense, 4, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.g.Clone()
			f, rep, err := compile.FoldLinear(tc.g)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Removed) != tc.removed {
				t.Errorf("removed %d nodes %v, want %d", len(rep.Removed), rep.Removed, tc.removed)
			}
			checkCanonical(t, f, rep.Skipped)
			xs := tc.inputs(rand.New(rand.NewPCG(9, 9)), tc.in, 64)
			a, b := run(t, tc.g, xs), run(t, f, xs)
			if d := maxDiff(a, b); d > 1e-5 {
				t.Errorf("folded graph differs by %g", d)
			}
			// The input graph is untouched.
			if d := maxDiff(run(t, before, xs), a); d != 0 || len(before.Edges) != len(tc.g.Edges) {
				t.Errorf("FoldLinear modified its input")
			}
			t.Logf("weights %d -> %d; added %v", rep.WeightsBefore, rep.WeightsAfter, rep.Added)
		})
	}
}

func TestFoldLinearLeavesCanonicalGraphs(t *testing.T) {
	g := snn.NewGraph().
		Add("x", &snn.Input{Shape: []int{2}}).
		Add("w", &snn.Linear{Weight: &snn.Tensor{Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4}}}).
		Add("n", &snn.LIF{Tau: []float64{1e-2}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}).
		Add("y", &snn.Output{}).
		Connect("x", "w", "n", "y")
	f, rep, err := compile.FoldLinear(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed)+len(rep.Added)+len(rep.Skipped) != 0 || rep.WeightsBefore != 4 || rep.WeightsAfter != 4 {
		t.Fatalf("report %+v", rep)
	}
	if len(f.Nodes) != 4 || len(f.Edges) != 3 || f.Nodes["w"] == g.Nodes["w"] {
		t.Fatalf("folded %v %v (the result must be a copy)", f.Names(), f.Edges)
	}
}

func TestFoldLinearSkipsCycles(t *testing.T) {
	// n → r → s → n closes a cycle through the Scale junction s, which
	// also takes the input: folding could move the cycle's step of delay.
	r := rand.New(rand.NewPCG(7, 7))
	g := snn.NewGraph().
		Add("x", &snn.Input{Shape: []int{3}}).
		Add("w", &snn.Linear{Weight: randTensor(r, 3, 3)}).
		Add("s", &snn.Scale{Scale: []float32{1}, Shape: []int{3}}).
		Add("v", &snn.Linear{Weight: randTensor(r, 3, 3)}).
		Add("n", &snn.LIF{Tau: []float64{1e-2}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{0.2}, VReset: []float64{0}}).
		Add("rec", &snn.Linear{Weight: randTensor(r, 3, 3)}).
		Add("y", &snn.Output{}).
		Connect("x", "w", "s", "v", "n", "y").
		Connect("n", "rec", "s")
	f, rep, err := compile.FoldLinear(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Skipped) != 4 || len(rep.Removed) != 0 {
		t.Fatalf("report %+v, want the region {rec, s, v, w} skipped", rep)
	}
	xs := [][]float32{}
	for range 32 {
		xs = append(xs, randVec(r, 3))
	}
	if d := maxDiff(run(t, g, xs), run(t, f, xs)); d != 0 {
		t.Fatalf("skipped graph differs by %g", d)
	}
}

func TestFoldLinearErrors(t *testing.T) {
	if _, _, err := compile.FoldLinear(nil); err == nil {
		t.Error("nil graph accepted")
	}
	bad := snn.NewGraph().Add("x", &snn.Input{Shape: []int{2}}).Add("w", &snn.Linear{Weight: snn.NewTensor(3, 3)}).Connect("x", "w")
	if _, _, err := compile.FoldLinear(bad); !errors.Is(err, snn.ErrInvalidGraph) {
		t.Errorf("mismatched shapes: %v, want ErrInvalidGraph", err)
	}
	// A bias with no input behind it cannot ride on a synapse: the region
	// x → w (all zero) → a (bias) → n has a constant input only.
	konst := snn.NewGraph().
		Add("x", &snn.Input{Shape: []int{2}}).
		Add("w", &snn.Linear{Weight: snn.NewTensor(2, 2)}).
		Add("a", &snn.Affine{Weight: &snn.Tensor{Shape: []int{2, 2}, Data: []float32{1, 0, 0, 1}}, Bias: []float32{1, 1}}).
		Add("n", &snn.LI{Tau: []float64{1e-2}, R: []float64{1}, VLeak: []float64{0}}).
		Add("y", &snn.Output{}).
		Connect("x", "w", "a", "n", "y")
	if _, _, err := compile.FoldLinear(konst); !errors.Is(err, compile.ErrUnsupported) {
		t.Errorf("constant-only input: %v, want ErrUnsupported", err)
	}
}

// liteGraph imports neuro-1-lite's model.pt, the path every user's model
// takes.
func liteGraph(t testing.TB) *snn.Graph {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "models", "train", "runs", "lite-lima", "model.pt"))
	if err != nil {
		t.Fatalf("neuro-1-lite's model.pt, a committed fixture: %v", err)
	}
	defer f.Close()
	st, _ := f.Stat()
	g, _, err := compile.Import("pytorch", f, st.Size(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestFoldLinearLite: the folded neuro-1-lite computes the same logits as
// the imported one over 256 held-out-like tokens, within float rounding.
func TestFoldLinearLite(t *testing.T) {
	g := liteGraph(t)
	f, rep, err := compile.FoldLinear(g)
	if err != nil {
		t.Fatal(err)
	}
	checkCanonical(t, f, nil)
	if len(rep.Skipped) != 0 {
		t.Fatalf("skipped %v", rep.Skipped)
	}
	// 3 blocks: the 7 targets b0.mix, b0.spk, b1.mix, … , logits each
	// take one synapse node from the token and from every LI and
	// Threshold layer before them: 1 + 2 + … + 7.
	if len(rep.Added) != 1+2+3+4+5+6+7 {
		t.Errorf("added %d synapse nodes, want 28: %v", len(rep.Added), rep.Added)
	}
	r := rand.New(rand.NewPCG(11, 11))
	xs := [][]float32{}
	for range 256 {
		x := make([]float32, 1024)
		x[r.IntN(1024)] = 1
		xs = append(xs, x)
	}
	d := maxDiff(run(t, g, xs), run(t, f, xs))
	if d > 1e-4 {
		t.Fatalf("folded lite differs by %g over 256 tokens", d)
	}
	t.Logf("lite: %d linear nodes -> %d synapse nodes, weights %d -> %d; logits within %.3g", len(rep.Removed), len(rep.Added), rep.WeightsBefore, rep.WeightsAfter, d)
}

// A residual junction: y = W·x + x reaches the neuron through a Scale.
// FoldLinear replaces the junction and the Linear by one synapse node from
// the input, holding W + I.
func ExampleFoldLinear() {
	g := snn.NewGraph().
		Add("x", &snn.Input{Shape: []int{2}}).
		Add("w", &snn.Linear{Weight: &snn.Tensor{Shape: []int{2, 2}, Data: []float32{1, 2, 3, 4}}}).
		Add("sum", &snn.Scale{Scale: []float32{1}, Shape: []int{2}}).
		Add("n", &snn.LI{Tau: []float64{1e-2}, R: []float64{1}, VLeak: []float64{0}}).
		Add("y", &snn.Output{}).
		Connect("x", "w", "sum", "n", "y").
		Connect("x", "sum")
	f, rep, err := compile.FoldLinear(g)
	if err != nil {
		panic(err)
	}
	fmt.Println(rep.Removed, "->", rep.Added)
	fmt.Println(f.Nodes["sum/x"].(*snn.Linear).Weight.Data)
	// Output:
	// [sum w] -> [sum/x]
	// [2 2 3 5]
}
