package snn

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func lifNode(n int) *LIF {
	return &LIF{Tau: []float64{0.01}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}, Shape: []int{n}}
}

func mlpGraph() *Graph {
	w1 := NewTensor(3, 4)
	for i := range w1.Data {
		w1.Data[i] = float32(i%5) * 0.25
	}
	w2 := NewTensor(2, 3)
	copy(w2.Data, []float32{1, -1, 0.5, 0.25, 0, 2})
	return NewGraph().
		Add("in", &Input{Shape: []int{4}}).
		Add("fc1", &Affine{Weight: w1, Bias: []float32{0.1, 0, -0.1}}).
		Add("lif1", lifNode(3)).
		Add("fc2", &Linear{Weight: w2}).
		Add("li", &LI{Tau: []float64{0.02}, R: []float64{1}, VLeak: []float64{0}}).
		Add("out", &Output{}).
		Connect("in", "fc1", "lif1", "fc2", "li", "out")
}

func TestValidateErrors(t *testing.T) {
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name   string
		mutate func(g *Graph)
		want   string // substring naming node and field
	}{
		{"tau zero", func(g *Graph) { g.Nodes["li"].(*LI).Tau = []float64{0} }, `node "li" field tau: element 0 is 0, must be > 0`},
		{"tau negative", func(g *Graph) { g.Nodes["lif1"].(*LIF).Tau = []float64{-1} }, `node "lif1" field tau`},
		{"NaN weight", func(g *Graph) { g.Nodes["fc2"].(*Linear).Weight.Data[4] = nan }, `node "fc2" field weight: element 4 is NaN`},
		{"NaN param", func(g *Graph) { g.Nodes["lif1"].(*LIF).VThreshold = []float64{math.NaN()} }, `node "lif1" field v_threshold`},
		{"missing node", func(g *Graph) { g.Connect("fc2", "ghost") }, `no node "ghost"`},
		{"missing source", func(g *Graph) { g.Edges = append(g.Edges, Edge{"ghost", "out"}) }, `no node "ghost"`},
		{"shapes do not chain", func(g *Graph) { g.Nodes["fc2"].(*Linear).Weight = NewTensor(2, 5) }, `shapes do not chain`},
		{"bias length", func(g *Graph) { g.Nodes["fc1"].(*Affine).Bias = []float32{1} }, `node "fc1" field bias: length 1, want 3`},
		{"weight data short", func(g *Graph) { g.Nodes["fc2"].(*Linear).Weight.Data = []float32{1} }, `node "fc2" field weight: shape [2 3] needs 6 values, have 1`},
		{"param length", func(g *Graph) { g.Nodes["lif1"].(*LIF).R = []float64{1, 2} }, `node "lif1" field shape`},
		{"bad reset", func(g *Graph) { g.Nodes["lif1"].(*LIF).Reset = "sideways" }, `node "lif1" field reset`},
		{"negative refractory", func(g *Graph) { g.Nodes["lif1"].(*LIF).Refractory = []float64{-1} }, `node "lif1" field refractory`},
		{"edge into input", func(g *Graph) { g.Connect("lif1", "in") }, `an Input node takes no edges`},
		{"dangling node", func(g *Graph) { g.Add("lonely", lifNode(3)) }, `node "lonely" field edges`},
		{"nil node", func(g *Graph) { g.Nodes["x"] = nil }, `node "x" field kind: nil node`},
		{"input shape", func(g *Graph) { g.Nodes["in"].(*Input).Shape = []int{-4} }, `node "in" field shape`},
		{"conv groups", func(g *Graph) {
			g.Add("c", &Conv2d{Weight: NewTensor(4, 3, 3, 3), Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 3, InputShape: []int{3, 8, 8}}).Connect("in", "c")
		}, `node "c" field groups`},
		{"conv too small", func(g *Graph) {
			g.Add("c", &Conv2d{Weight: NewTensor(1, 1, 9, 9), Stride: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1, InputShape: []int{1, 4, 4}}).Connect("in", "c")
		}, `node "c" field input_shape`},
		{"pool stride", func(g *Graph) {
			g.Add("p", &SumPool2d{Kernel: [2]int{2, 2}, InputShape: []int{1, 2, 2}}).Connect("in", "p")
		}, `node "p" field stride`},
		{"flatten dims", func(g *Graph) {
			g.Add("f", &Flatten{StartDim: 3, EndDim: -1, InputShape: []int{4}}).Connect("in", "f")
		}, `node "f" field start_dim`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := mlpGraph()
			tc.mutate(g)
			err := g.Validate()
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalidGraph) {
				t.Errorf("error does not wrap ErrInvalidGraph: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if _, err := NewSimulator(g, nil); err == nil {
				t.Error("NewSimulator accepted an invalid graph")
			}
		})
	}
	if err := mlpGraph().Validate(); err != nil {
		t.Fatalf("valid graph refused: %v", err)
	}
}

func TestShapeInference(t *testing.T) {
	g := NewGraph().
		Add("in", &Input{Shape: []int{2, 8, 8}}).
		Add("conv", &Conv2d{Weight: NewTensor(4, 2, 3, 3), Stride: [2]int{1, 1}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1, InputShape: []int{2, 8, 8}}).
		Add("lif", &LIF{Tau: []float64{0.01}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}).
		Add("pool", &AvgPool2d{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}}).
		Add("flat", &Flatten{StartDim: 0, EndDim: -1}).
		Add("out", &Output{}).
		Connect("in", "conv", "lif", "pool", "flat", "out")
	sh, err := g.Shapes()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]int{"conv": {4, 8, 8}, "lif": {4, 8, 8}, "pool": {4, 4, 4}, "flat": {64}, "out": {64}} {
		if got := sh[name].Out; !equalInts(got, want) {
			t.Errorf("%s: out shape %v, want %v", name, got, want)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// allKindsGraph has one node of every kind, for JSON tests.
func allKindsGraph() *Graph {
	conv1 := NewTensor(2, 1, 3)
	conv2 := NewTensor(2, 2, 3, 3)
	for i := range conv2.Data {
		conv2.Data[i] = float32(i) / 16
	}
	lin := NewTensor(4, 8)
	lin.Data[3] = 0.5
	aff := NewTensor(4, 4)
	aff.Data[0] = -1.25
	p := []float64{0.5}
	return NewGraph().
		Add("in", &Input{Shape: []int{1, 10}}).
		Add("c1", &Conv1d{Weight: conv1, Bias: []float32{0.1, 0.2}, Stride: 1, Padding: 1, Dilation: 1, Groups: 1, InputShape: []int{1, 10}}).
		Add("scale", &Scale{Scale: []float32{2}}).
		Add("thr", &Threshold{Threshold: []float64{0.1}}).
		Add("in2", &Input{Shape: []int{2, 4, 4}}).
		Add("c2", &Conv2d{Weight: conv2, Stride: [2]int{1, 1}, Padding: [2]int{1, 1}, Dilation: [2]int{1, 1}, Groups: 1, InputShape: []int{2, 4, 4}}).
		Add("sum", &SumPool2d{Kernel: [2]int{2, 2}, Stride: [2]int{2, 2}}).
		Add("avg", &AvgPool2d{Kernel: [2]int{1, 1}, Stride: [2]int{1, 1}}).
		Add("flat", &Flatten{StartDim: 0, EndDim: -1}).
		Add("lin", &Linear{Weight: lin}).
		Add("aff", &Affine{Weight: aff, Bias: []float32{0, 1, 2, 3}}).
		Add("delay", &Delay{Delay: []float64{0.002}}).
		Add("i", &I{R: p}).
		Add("if", &IF{R: p, VThreshold: p, VReset: []float64{0}, Reset: ResetSubtract}).
		Add("li", &LI{Tau: p, R: p, VLeak: []float64{0}}).
		Add("lif", &LIF{Tau: p, R: p, VLeak: []float64{0}, VThreshold: p, VReset: []float64{0}, Refractory: []float64{0.001}}).
		Add("culi", &CubaLI{TauSyn: p, TauMem: p, R: p, VLeak: []float64{0}, WIn: []float64{1}}).
		Add("culif", &CubaLIF{TauSyn: p, TauMem: []float64{0.25}, R: p, VLeak: []float64{0}, VThreshold: p, VReset: []float64{0}, WIn: []float64{1}}).
		Add("out", &Output{}).
		Add("out2", &Output{}).
		Connect("in", "c1", "scale", "thr", "out").
		Connect("in2", "c2", "sum", "avg", "flat", "lin", "aff", "delay", "i", "if", "li", "lif", "culi", "culif", "out2").
		Connect("lif", "aff") // recurrence
}

func TestJSONGolden(t *testing.T) {
	g := allKindsGraph()
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := g.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/all_kinds.golden.json"
	if *update {
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("JSON differs from %s (run go test -update if the change is intended)", golden)
	}
	var back Graph
	if err := back.UnmarshalJSON(want); err != nil {
		t.Fatal(err)
	}
	again, err := back.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, want) {
		t.Fatal("decode then encode changed the JSON")
	}
	for _, k := range Kinds {
		if len(back.NamesOfKind(k)) == 0 {
			t.Errorf("golden graph lacks kind %s", k)
		}
	}
}

func TestJSONExternalTensors(t *testing.T) {
	g := mlpGraph()
	store := map[string]*Tensor{}
	b, err := EncodeJSON(g, &JSONOptions{External: func(node, field string, t *Tensor) (string, error) {
		ref := node + "." + field
		store[ref] = t
		return ref, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"data"`)) || !bytes.Contains(b, []byte(`"ref": "fc1.weight"`)) {
		t.Fatalf("weights not written by reference:\n%s", b)
	}
	if _, err := DecodeJSON(b, nil); err == nil || !strings.Contains(err.Error(), "no tensor source") {
		t.Fatalf("decoding refs without a source: %v", err)
	}
	back, err := DecodeJSON(b, &JSONOptions{Resolve: func(ref string, shape []int) (*Tensor, error) {
		t, ok := store[ref]
		if !ok {
			return nil, errors.New("unknown ref")
		}
		return t, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Nodes["fc2"].(*Linear).Weight.Data; got[5] != 2 {
		t.Fatalf("resolved weight %v", got)
	}
	if err := back.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestJSONDecodeErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"format":"neuro.snn.graph","version":9,"nodes":{},"edges":[]}`, "version 9 not supported"},
		{`{"format":"other","version":1,"nodes":{},"edges":[]}`, `format "other"`},
		{`{"format":"neuro.snn.graph","version":1,"nodes":{"a":{"kind":"Banana"}},"edges":[]}`, `unknown node kind "Banana"`},
		{`{"format":"neuro.snn.graph","version":1,"nodes":{"a":{"kind":"LIF","tau":"x"}},"edges":[]}`, `node "a"`},
		{`{"format":"neuro.snn.graph","version":1,"nodes":{"a":{"kind":"LIF","colour":1}},"edges":[]}`, `unknown field "colour"`},
		{`{"format":"neuro.snn.graph","version":1,"nodes":{"a":{"kind":"Linear","weight":{"shape":[2,2],"data":[1]}}},"edges":[]}`, `node "a" field weight: shape [2 2] needs 4 values, have 1`},
		{`{"format":"neuro.snn.graph","version":1,"nodes":{"a":{"kind":"Linear","weight":{"shape":[99999999,99999999],"data":[]}}},"edges":[]}`, `more than`},
		{`{"format":"neuro.snn.graph"`, `decoding graph`},
	} {
		if _, err := DecodeJSON([]byte(tc.in), nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

func TestEncodeNaNRefused(t *testing.T) {
	g := mlpGraph()
	g.Nodes["lif1"].(*LIF).Tau = []float64{math.Inf(1)}
	if _, err := g.MarshalJSON(); err == nil {
		t.Fatal("encoded an infinite parameter")
	}
}

// FuzzGraphJSON decodes arbitrary bytes as a graph, validates it and, when
// it is valid, simulates a few steps: nothing may panic.
func FuzzGraphJSON(f *testing.F) {
	for _, g := range []*Graph{mlpGraph(), allKindsGraph()} {
		b, _ := g.MarshalJSON()
		f.Add(b)
	}
	if b, err := os.ReadFile("testdata/all_kinds.golden.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"format":"neuro.snn.graph","version":1,"nodes":{"in":{"kind":"Input","shape":[2]},"x":{"kind":"LIF","tau":[1e-300],"r":[1],"v_leak":[0],"v_threshold":[0],"v_reset":[0]}},"edges":[["in","x"],["x","x"]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := DecodeJSON(data, nil)
		if err != nil {
			return
		}
		fuzzSimulate(t, g)
	})
}

// fuzzSimulate validates g and, when valid and small, steps it.
func fuzzSimulate(t *testing.T, g *Graph) {
	sh, err := g.Shapes()
	if err != nil {
		return
	}
	total := 0
	for _, s := range sh {
		total += Size(s.Out)
	}
	if total > 1<<16 {
		return
	}
	sim, err := NewSimulator(g, &Options{Batch: 2, MaxStateBytes: 64 << 20})
	if err != nil {
		if strings.Contains(err.Error(), "MaxStateBytes") {
			return
		}
		t.Fatalf("valid graph refused by NewSimulator: %v", err)
	}
	ins := make([][]float32, len(sim.Inputs()))
	for i, p := range sim.Inputs() {
		ins[i] = make([]float32, 2*p.Size)
		for j := range ins[i] {
			ins[i][j] = float32(j%3) * 0.7
		}
	}
	for step := 0; step < 5; step++ {
		if err := sim.Step(ins...); err != nil {
			t.Fatal(err)
		}
	}
	sim.Reset(1)
}

// FuzzValidate mutates the fields of a valid graph with fuzzed numbers:
// Validate must refuse or accept without panicking, and an accepted graph
// must simulate.
func FuzzValidate(f *testing.F) {
	f.Add(int64(4), int64(3), 0.01, 1.0, int64(1), int64(0))
	f.Add(int64(-1), int64(0), -1.0, math.NaN(), int64(0), int64(-3))
	f.Add(int64(1<<40), int64(1<<40), 0.0, math.Inf(1), int64(7), int64(99))
	f.Fuzz(func(t *testing.T, d0, d1 int64, tau, th float64, stride, pad int64) {
		g := allKindsGraph()
		g.Nodes["in"].(*Input).Shape = []int{int(d0 % 64), int(d1 % 64)}
		g.Nodes["li"].(*LI).Tau = []float64{tau}
		g.Nodes["lif"].(*LIF).VThreshold = []float64{th}
		c := g.Nodes["c2"].(*Conv2d)
		c.Stride = [2]int{int(stride % 8), 1}
		c.Padding = [2]int{int(pad % 8), 0}
		g.Nodes["sum"].(*SumPool2d).Padding = [2]int{int(pad % 3), 0}
		fuzzSimulate(t, g)
	})
}
