package onnx

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update if the change is intended):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// valueDyn declares a FLOAT graph value whose -1 dimensions are symbolic
// ("batch").
func valueDyn(name string, dims ...int64) pb {
	var shape pb
	for _, d := range dims {
		if d < 0 {
			shape = shape.bytes(1, pb(nil).str(2, "batch"))
		} else {
			shape = shape.bytes(1, pb(nil).varint(1, d))
		}
	}
	tt := pb(nil).varint(1, dtFloat).bytes(2, shape)
	return pb(nil).str(1, name).bytes(2, pb(nil).bytes(1, tt))
}

// randT is an initializer of seeded random values.
func randT(rng *rand.Rand, name string, dims ...int64) pb {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(rng.NormFloat64() * 0.5)
	}
	return tensorF(name, dims, data)
}

// syntheticModels are small graphs, written with the protobuf writer of
// validate_test.go, that together use every mapping rule.
func syntheticModels() map[string]graphSpec {
	rng := rand.New(rand.NewPCG(7, 8))
	return map[string]graphSpec{
		// Gemm with alpha, beta, transB 0 and 1, biases [1,N] and scalar.
		"gemm": {13, []pb{
			node("Gemm", "fc1", []string{"x", "w1", "c1"}, []string{"h"}, attrF("alpha", 0.5), attrF("beta", 2)),
			node("Relu", "relu", []string{"h"}, []string{"r"}),
			node("Gemm", "fc2", []string{"r", "w2", "c2"}, []string{"y"}, attrI("transB", 1)),
		}, []pb{randT(rng, "w1", 6, 4), randT(rng, "c1", 1, 4), randT(rng, "w2", 3, 4), tensorF("c2", nil, []float32{0.25})},
			[]pb{valueDyn("x", -1, 6)}, []pb{valueDyn("y", -1, 3)}},
		// MatMul by a transposed constant, biases added constant-first and
		// twice in a row, Dropout (opset 13 form) and Identity.
		"matmul": {13, []pb{
			node("Transpose", "t", []string{"wt"}, []string{"w"}, attrIs("perm", 1, 0)),
			node("MatMul", "mm1", []string{"x", "w"}, []string{"m1"}),
			node("Add", "bias1", []string{"b1", "m1"}, []string{"h"}),
			node("Relu", "relu", []string{"h"}, []string{"r"}),
			node("Dropout", "drop", []string{"r", "ratio"}, []string{"d"}),
			node("Identity", "id", []string{"d"}, []string{"i"}),
			node("MatMul", "mm2", []string{"i", "w2"}, []string{"m2"}),
			node("Add", "bias2", []string{"m2", "b2"}, []string{"y0"}),
			node("Add", "bias3", []string{"y0", "b3"}, []string{"y"}),
		}, []pb{randT(rng, "wt", 5, 6), randT(rng, "b1", 5), tensorF("ratio", nil, []float32{0.2}), randT(rng, "w2", 5, 2),
			randT(rng, "b2", 1, 2), randT(rng, "b3", 2)},
			[]pb{valueF("x", 1, 6)}, []pb{valueF("y", 1, 2)}},
		// Convolutions (explicit and SAME_UPPER padding, one without a
		// bias plus an Add of a per-channel constant), batch norm, a Pad
		// folded into an AveragePool, a residual Add, MaxPool, Reshape to
		// (batch, -1).
		"conv": {13, []pb{
			node("Conv", "conv1", []string{"x", "cw1", "cb1"}, []string{"c1"}, attrIs("pads", 1, 1, 1, 1), attrIs("kernel_shape", 3, 3)),
			node("BatchNormalization", "bn", []string{"c1", "g", "be", "mu", "var"}, []string{"n1"}, attrF("epsilon", 1e-3)),
			node("Relu", "relu1", []string{"n1"}, []string{"r1"}),
			node("Pad", "pad", []string{"r1", "pads"}, []string{"p1"}),
			node("AveragePool", "avg", []string{"p1"}, []string{"a1"}, attrIs("kernel_shape", 3, 3), attrIs("strides", 2, 2)),
			node("Conv", "conv2", []string{"a1", "cw2"}, []string{"c2"}, attrS("auto_pad", "SAME_UPPER")),
			node("Add", "conv2.bias", []string{"c2", "cb2"}, []string{"c2b"}),
			node("Relu", "relu2", []string{"c2b"}, []string{"r2"}),
			node("Conv", "conv3", []string{"a1", "cw3", "cb3"}, []string{"c3"}),
			node("Relu", "relu3", []string{"c3"}, []string{"r3"}),
			node("Add", "residual", []string{"r2", "r3"}, []string{"s"}),
			node("MaxPool", "max", []string{"s"}, []string{"mx"}, attrIs("kernel_shape", 2, 2)),
			node("Reshape", "flat", []string{"mx", "shape"}, []string{"f"}),
			node("Gemm", "fc", []string{"f", "fw", "fb"}, []string{"y"}, attrI("transB", 1)),
		}, []pb{randT(rng, "cw1", 4, 2, 3, 3), randT(rng, "cb1", 4),
			tensorF("g", []int64{4}, []float32{1, 0.5, 2, 1.5}), randT(rng, "be", 4), randT(rng, "mu", 4), tensorF("var", []int64{4}, []float32{1, 0.25, 4, 2}),
			tensorI64("pads", []int64{0, 0, 1, 1, 0, 0, 1, 1}),
			randT(rng, "cw2", 3, 4, 3, 3), randT(rng, "cb2", 1, 3, 1, 1), randT(rng, "cw3", 3, 4, 1, 1), randT(rng, "cb3", 3),
			tensorI64("shape", []int64{-1, 12}), randT(rng, "fw", 2, 12), randT(rng, "fb", 2)},
			[]pb{valueDyn("x", -1, 2, 6, 6)}, []pb{valueDyn("y", -1, 2)}},
		// Average pooling with padding counted, max pooling with padding
		// (excluded), global pooling, Flatten, Reshape that keeps the shape,
		// Pad of zeros (an identity).
		"pool": {11, []pb{
			node("AveragePool", "avg", []string{"x"}, []string{"a"}, attrIs("kernel_shape", 3, 3), attrIs("pads", 1, 1, 1, 1), attrI("count_include_pad", 1)),
			node("Relu", "relu", []string{"a"}, []string{"r"}),
			node("Pad", "nopad", []string{"r", "zeros"}, []string{"rp"}),
			node("MaxPool", "max", []string{"rp"}, []string{"m"}, attrIs("kernel_shape", 3, 3), attrIs("strides", 2, 2), attrIs("pads", 1, 1, 1, 1)),
			node("GlobalAveragePool", "gap", []string{"m"}, []string{"g"}),
			node("Flatten", "flat", []string{"g"}, []string{"f"}),
			node("Reshape", "same", []string{"f", "shape"}, []string{"fs"}),
			node("Gemm", "fc", []string{"fs", "fw"}, []string{"y"}, attrI("transB", 1)),
		}, []pb{tensorI64("zeros", make([]int64, 8)), tensorI64("shape", []int64{1, 2}), randT(rng, "fw", 3, 2)},
			[]pb{valueF("x", 1, 2, 5, 5)}, []pb{valueF("y", 1, 3)}},
	}
}

// forwardRun compares the mapped ANN's Forward with Model.Run on one input.
func forwardRun(t *testing.T, m *Model, x []float32) float64 {
	t.Helper()
	ann, _, err := m.ANN()
	if err != nil {
		t.Fatal(err)
	}
	vals, err := ann.Forward(x)
	if err != nil {
		t.Fatal(err)
	}
	shape := slices.Clone(m.Inputs[0].Shape)
	shape[0] = 1
	out, err := m.Run(map[string]*Tensor{m.Inputs[0].Name: {DType: Float32, Shape: shape, Data: x}})
	if err != nil {
		t.Fatal(err)
	}
	want := out[m.Outputs[0].Name].Data
	got := vals[ann.Output]
	if len(got) != len(want) {
		t.Fatalf("ANN gives %d outputs, Run %d", len(got), len(want))
	}
	worst := 0.0
	for i := range got {
		worst = math.Max(worst, math.Abs(got[i]-float64(want[i])))
	}
	return worst
}

// TestANNMatchesRun checks that the mapped ANN computes what the ONNX graph
// computes (Model.Run), on random inputs, for graphs that use every rule.
func TestANNMatchesRun(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for name, g := range syntheticModels() {
		t.Run(name, func(t *testing.T) {
			m, err := DecodeBytes(g.bytes(), nil)
			if err != nil {
				t.Fatal(err)
			}
			size := 1
			for _, d := range m.Inputs[0].Shape[1:] {
				size *= d
			}
			for k := 0; k < 5; k++ {
				x := make([]float32, size)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				if d := forwardRun(t, m, x); d > 1e-4 {
					t.Fatalf("ANN and Run differ by %g", d)
				}
			}
		})
	}
}

// TestANNMatchesTorch runs the mapped ANN of every fixture it accepts on
// the input torch was run on, and compares with torch's output.
func TestANNMatchesTorch(t *testing.T) {
	exp := loadExpected(t)
	names := make([]string, 0, len(exp))
	for name := range exp {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.HasPrefix(name, "misc") {
			continue // a 3-D MatMul: refused, see TestANNUnsupported
		}
		t.Run(name, func(t *testing.T) {
			m, err := decodeFile(t, name)
			if err != nil {
				t.Fatal(err)
			}
			ann, _, err := m.ANN()
			if err != nil {
				t.Fatal(err)
			}
			in, out := exp[name].Inputs["input"], exp[name].Outputs["output"]
			per, classes := len(in.Data)/in.Shape[0], len(out.Data)/out.Shape[0]
			for b := 0; b < in.Shape[0]; b++ {
				vals, err := ann.Forward(in.Data[b*per : (b+1)*per])
				if err != nil {
					t.Fatal(err)
				}
				for i, v := range vals[ann.Output] {
					if w := out.Data[b*classes+i]; math.Abs(v-float64(w)) > 1e-4 {
						t.Fatalf("sample %d output %d: ANN %v, torch %v", b, i, v, w)
					}
				}
			}
		})
	}
}

// describe writes an ANN's structure, one node a line, for golden files.
func describe(a *compile.ANN) string {
	var b strings.Builder
	for _, n := range a.Nodes {
		fmt.Fprintf(&b, "%s %s", n.Name, n.Op)
		if len(n.Inputs) > 0 {
			fmt.Fprintf(&b, " in=%q", n.Inputs)
		}
		if n.Shape != nil {
			fmt.Fprintf(&b, " shape=%v", n.Shape)
		}
		if n.Weight != nil {
			fmt.Fprintf(&b, " weight=%v", n.Weight.Shape)
		}
		if n.Bias != nil {
			fmt.Fprintf(&b, " bias=%d", len(n.Bias))
		}
		switch n.Op {
		case compile.OpConv2d:
			fmt.Fprintf(&b, " stride=%v pad=%v dilation=%v groups=%d", n.Stride, n.Padding, n.Dilation, n.Groups)
		case compile.OpAvgPool2d, compile.OpMaxPool2d:
			fmt.Fprintf(&b, " kernel=%v stride=%v pad=%v", n.Kernel, n.Stride, n.Padding)
		case compile.OpBatchNorm:
			fmt.Fprintf(&b, " channels=%d", len(n.Scale))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "output %s\n", a.Output)
	return b.String()
}

// TestANNGolden keeps the mapping of every fixture, the synthetic graphs
// and the digits models in a golden file: nodes, or the error.
func TestANNGolden(t *testing.T) {
	var files []string
	for _, pat := range []string{filepath.Join("testdata", "*.onnx"), filepath.Join(digitsDir, "*.onnx")} {
		f, _ := filepath.Glob(pat)
		files = append(files, f...)
	}
	type entry struct {
		name string
		b    []byte
	}
	var entries []entry
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "bad_") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, entry{filepath.ToSlash(f), b})
	}
	syn := syntheticModels()
	for _, name := range []string{"gemm", "matmul", "conv", "pool"} {
		entries = append(entries, entry{"synthetic " + name, syn[name].bytes()})
	}
	var out strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&out, "== %s\n", e.name)
		m, err := DecodeBytes(e.b, nil)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		ann, notes, err := m.ANN()
		if err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
			continue
		}
		out.WriteString(describe(ann))
		for _, s := range notes.Folded() {
			fmt.Fprintf(&out, "folded: %s\n", s)
		}
		for _, s := range notes.Approximated() {
			fmt.Fprintf(&out, "approximated: %s\n", s)
		}
	}
	golden(t, "ann.txt", []byte(out.String()))
}

// TestANNUnsupported checks that what the ANN cannot express is refused
// with a *compile.UnsupportedError that names the node and operator.
func TestANNUnsupported(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	x4 := valueF("x", 1, 1, 5, 5)
	x2 := valueDyn("x", -1, 4)
	w := randT(rng, "w", 1, 1, 3, 3)
	cases := []struct {
		name     string
		g        graphSpec
		node     string // the node the error must name
		contains string
	}{
		{"asymmetric conv pads", graphSpec{13, []pb{node("Conv", "conv", []string{"x", "w"}, []string{"y"}, attrIs("pads", 0, 0, 1, 1))}, []pb{w}, []pb{x4}, nil},
			"conv", "Conv: asymmetric padding"},
		{"same_upper even kernel", graphSpec{13, []pb{node("Conv", "conv", []string{"x", "w2"}, []string{"y"}, attrS("auto_pad", "SAME_UPPER"))}, []pb{randT(rng, "w2", 1, 1, 2, 2)}, []pb{x4}, nil},
			"conv", "asymmetric padding (top 0, left 0, bottom 1, right 1)"},
		{"asymmetric pad folded", graphSpec{13, []pb{node("Pad", "pad", []string{"x", "pads"}, []string{"p"}), node("AveragePool", "avg", []string{"p"}, []string{"y"}, attrIs("kernel_shape", 2, 2))},
			[]pb{tensorI64("pads", []int64{0, 0, 1, 0, 0, 0, 0, 0})}, []pb{x4}, nil}, "avg", "AveragePool: asymmetric padding"},
		{"count_include_pad 0", graphSpec{13, []pb{node("AveragePool", "avg", []string{"x"}, []string{"y"}, attrIs("kernel_shape", 3, 3), attrIs("pads", 1, 1, 1, 1))}, nil, []pb{x4}, nil},
			"avg", "count_include_pad=0"},
		{"pad before maxpool", graphSpec{13, []pb{node("Pad", "pad", []string{"x", "pads"}, []string{"p"}), node("MaxPool", "max", []string{"p"}, []string{"y"}, attrIs("kernel_shape", 2, 2))},
			[]pb{tensorI64("pads", []int64{0, 0, 1, 1, 0, 0, 1, 1})}, []pb{x4}, nil}, "pad", "Pad: a Pad of non-zero size folds only"},
		{"pad value", graphSpec{13, []pb{node("Pad", "pad", []string{"x", "pads", "v"}, []string{"p"}), node("AveragePool", "avg", []string{"p"}, []string{"y"}, attrIs("kernel_shape", 2, 2))},
			[]pb{tensorI64("pads", []int64{0, 0, 1, 1, 0, 0, 1, 1}), tensorF("v", nil, []float32{1})}, []pb{x4}, nil}, "pad", "value 1"},
		{"pad channels", graphSpec{13, []pb{node("Pad", "pad", []string{"x", "pads"}, []string{"p"}), node("AveragePool", "avg", []string{"p"}, []string{"y"}, attrIs("kernel_shape", 2, 2))},
			[]pb{tensorI64("pads", []int64{0, 1, 0, 0, 0, 0, 0, 0})}, []pb{x4}, nil}, "pad", "batch or channel"},
		{"ceil mode", graphSpec{13, []pb{node("MaxPool", "max", []string{"x"}, []string{"y"}, attrIs("kernel_shape", 2, 2), attrIs("strides", 2, 2), attrI("ceil_mode", 1))}, nil, []pb{x4}, nil},
			"max", "ceil_mode=1"},
		{"pool dilation", graphSpec{13, []pb{node("MaxPool", "max", []string{"x"}, []string{"y"}, attrIs("kernel_shape", 2, 2), attrIs("dilations", 2, 2))}, nil, []pb{x4}, nil},
			"max", "dilation"},
		{"conv1d", graphSpec{13, []pb{node("Conv", "conv", []string{"x", "w1"}, []string{"y"})}, []pb{randT(rng, "w1", 1, 1, 3)}, []pb{valueF("x", 1, 1, 5)}, nil},
			"conv", "only 2-D convolution"},
		{"transA", graphSpec{13, []pb{node("Gemm", "fc", []string{"x", "wg"}, []string{"y"}, attrI("transA", 1))}, []pb{randT(rng, "wg", 1, 2)}, []pb{valueF("x", 1, 1)}, nil},
			"fc", "Gemm: transA=1"},
		{"gemm runtime weight", graphSpec{13, []pb{node("Relu", "r", []string{"x"}, []string{"r"}), node("Gemm", "fc", []string{"x", "r"}, []string{"y"}, attrI("transB", 1))}, nil, []pb{valueF("x", 1, 4)}, nil},
			"fc", "weight B \"r\" must be a constant"},
		{"fixed batch", graphSpec{13, []pb{node("Relu", "r", []string{"x"}, []string{"y"})}, nil, []pb{valueF("x", 3, 4)}, nil},
			"x", "batch dimension 3"},
		{"gemm bias over batch", graphSpec{13, []pb{node("Gemm", "fc", []string{"x", "wg", "c"}, []string{"y"})}, []pb{randT(rng, "wg", 4, 2), randT(rng, "c", 3, 2)}, []pb{x2}, nil},
			"fc", "not one value per channel"},
		{"matmul const left", graphSpec{13, []pb{node("MatMul", "mm", []string{"wm", "x"}, []string{"y"})}, []pb{randT(rng, "wm", 2, 1)}, []pb{valueF("x", 1, 2)}, nil},
			"mm", "left operand is a constant"},
		{"matmul 3-D (misc fixture)", graphSpec{}, "/Reshape", "Reshape: reshape of [4 1 1] per sample to [1 2 2]"},
		{"matmul rank 3", graphSpec{13, []pb{node("MatMul", "mm", []string{"x", "wm"}, []string{"y"})}, []pb{randT(rng, "wm", 5, 2)}, []pb{valueF("x", 1, 3, 5)}, nil},
			"mm", "input of rank 3"},
		{"add broadcast", graphSpec{13, []pb{node("GlobalAveragePool", "gap", []string{"x"}, []string{"g"}), node("Add", "add", []string{"x", "g"}, []string{"y"})}, nil, []pb{x4}, nil},
			"add", "Add: operands of shapes [1 5 5] and [1 1 1]"},
		{"add const after relu", graphSpec{13, []pb{node("Relu", "r", []string{"x"}, []string{"r"}), node("Add", "add", []string{"r", "b"}, []string{"y"})}, []pb{randT(rng, "b", 4)}, []pb{x2}, nil},
			"add", "only as the bias of a Gemm, MatMul or Conv"},
		{"bias before second use", graphSpec{13, []pb{node("Gemm", "fc", []string{"x", "wg"}, []string{"h"}), node("Add", "add", []string{"h", "b"}, []string{"a"}), node("Add", "sum", []string{"a", "h"}, []string{"y"})},
			[]pb{randT(rng, "wg", 4, 4), randT(rng, "b", 4)}, []pb{x2}, nil}, "add", "feeds nothing else"},
		{"add spatial const", graphSpec{13, []pb{node("Conv", "conv", []string{"x", "w"}, []string{"c"}), node("Add", "add", []string{"c", "b"}, []string{"y"})}, []pb{w, randT(rng, "b", 3, 3)}, []pb{x4}, nil},
			"add", "not one value per channel"},
		{"add two consts", graphSpec{13, []pb{node("Add", "add", []string{"a", "b"}, []string{"y"})}, []pb{randT(rng, "a", 1), randT(rng, "b", 1)}, []pb{x2}, nil},
			"add", "both operands are constants"},
		{"relu of const", graphSpec{13, []pb{node("Relu", "r", []string{"b"}, []string{"y"})}, []pb{randT(rng, "b", 1, 4)}, []pb{x2}, nil},
			"r", "is a constant"},
		{"transpose runtime", graphSpec{13, []pb{node("Transpose", "tr", []string{"x"}, []string{"y"}, attrIs("perm", 1, 0))}, nil, []pb{x2}, nil},
			"tr", "Transpose: only a constant"},
		{"flatten axis 0", graphSpec{13, []pb{node("Flatten", "fl", []string{"x"}, []string{"y"}, attrI("axis", 0))}, nil, []pb{x4}, nil},
			"fl", "Flatten: axis 0 merges the batch"},
		{"flatten axis 2", graphSpec{13, []pb{node("Flatten", "fl", []string{"x"}, []string{"y"}, attrI("axis", 2))}, nil, []pb{x4}, nil},
			"fl", "axis 2"},
		{"reshape 4-D", graphSpec{13, []pb{node("Reshape", "rs", []string{"x", "s"}, []string{"y"})}, []pb{tensorI64("s", []int64{1, 1, 2, 2})}, []pb{x2}, nil},
			"rs", "only reshapes to (batch, features)"},
		{"reshape batch into features", graphSpec{13, []pb{node("Reshape", "rs", []string{"x", "s"}, []string{"y"})}, []pb{tensorI64("s", []int64{1, -1})}, []pb{x2}, nil},
			"rs", "holds a batch of 1 only"},
		{"batch norm input", graphSpec{13, []pb{node("BatchNormalization", "bn", []string{"x", "s", "s", "s", "s"}, []string{"y"})}, []pb{tensorF("s", []int64{4}, []float32{1, 1, 1, 1})}, []pb{x2}, nil},
			"bn", "batch norm must directly follow"},
		{"two inputs", graphSpec{13, []pb{node("Add", "add", []string{"x", "z"}, []string{"y"})}, nil, []pb{x2, valueDyn("z", -1, 4)}, nil},
			"", "2 inputs"},
		{"two outputs", graphSpec{13, []pb{node("Relu", "r", []string{"x"}, []string{"y"}), node("Relu", "r2", []string{"x"}, []string{"z"})}, nil, []pb{x2}, []pb{valueDyn("y", -1, 4), valueDyn("z", -1, 4)}},
			"", "2 outputs"},
		{"output constant", graphSpec{13, []pb{node("Relu", "r", []string{"x"}, []string{"r"})}, []pb{randT(rng, "c", 1)}, []pb{x2}, []pb{valueF("c", 1)}},
			"c", "graph output is a constant"},
		{"no input shape", graphSpec{13, []pb{node("Relu", "r", []string{"x"}, []string{"y"})}, nil, []pb{pb(nil).str(1, "x")}, nil},
			"x", "declares no shape"},
		{"symbolic feature", graphSpec{13, []pb{node("Relu", "r", []string{"x"}, []string{"y"})}, nil, []pb{valueDyn("x", 1, -1)}, nil},
			"x", "symbolic dimension besides the batch"},
		{"rank 1 input", graphSpec{13, []pb{node("Relu", "r", []string{"x"}, []string{"y"})}, nil, []pb{valueF("x", 4)}, nil},
			"x", "need [batch, features...]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b []byte
			if c.g.opset == 0 {
				var err error
				if b, err = os.ReadFile(filepath.Join("testdata", "misc_opset13_fold1.onnx")); err != nil {
					t.Fatal(err)
				}
			} else {
				if c.g.output == nil {
					c.g.output = []pb{pb(nil).str(1, "y")}
				}
				b = c.g.bytes()
			}
			m, err := DecodeBytes(b, nil)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			_, _, err = m.ANN()
			_, _, ierr := Import(bytes.NewReader(b), int64(len(b)), nil)
			if c.contains == "batch norm must directly follow" {
				// Mapped, then refused by ConvertANN: Import passes it on.
				if err != nil {
					t.Fatal(err)
				}
				err = ierr
			} else if ierr == nil || ierr.Error() != fmt.Sprint(err) {
				t.Errorf("Import error %v, ANN error %v", ierr, err)
			}
			var ue *compile.UnsupportedError
			if !errors.As(err, &ue) || !errors.Is(err, compile.ErrUnsupported) {
				t.Fatalf("error %v, want a *compile.UnsupportedError", err)
			}
			if ue.Node != c.node || !strings.Contains(err.Error(), c.contains) {
				t.Errorf("error %q names node %q; want node %q and %q", err, ue.Node, c.node, c.contains)
			}
		})
	}
}

// TestANNMalformedValues checks that non-finite weights and impossible
// batch-norm statistics are refused as malformed, naming the node.
func TestANNMalformedValues(t *testing.T) {
	x2 := valueDyn("x", -1, 2)
	nan := float32(math.NaN())
	cases := []struct {
		name, node string
		g          graphSpec
	}{
		{"nan weight", "fc", graphSpec{13, []pb{node("Gemm", "fc", []string{"x", "w"}, []string{"y"})}, []pb{tensorF("w", []int64{2, 2}, []float32{1, nan, 0, 1})}, []pb{x2}, nil}},
		{"alpha overflow", "fc", graphSpec{13, []pb{node("Gemm", "fc", []string{"x", "w"}, []string{"y"}, attrF("alpha", 1e30))}, []pb{tensorF("w", []int64{2, 2}, []float32{1e30, 0, 0, 1})}, []pb{x2}, nil}},
		{"negative variance", "bn", graphSpec{13, []pb{node("Gemm", "fc", []string{"x", "w"}, []string{"h"}), node("BatchNormalization", "bn", []string{"h", "s", "s", "s", "v"}, []string{"y"})},
			[]pb{tensorF("w", []int64{2, 2}, []float32{1, 0, 0, 1}), tensorF("s", []int64{2}, []float32{1, 1}), tensorF("v", []int64{2}, []float32{1, -1})}, []pb{x2}, nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.g.output = []pb{pb(nil).str(1, "y")}
			m, err := DecodeBytes(c.g.bytes(), nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = m.ANN()
			var ne *NodeError
			if !errors.As(err, &ne) || ne.Node != c.node || !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v, want a NodeError naming %q", err, c.node)
			}
		})
	}
}

// TestImportOptions checks the format registration, the size limit, short
// readers, and that the converted graph behaves the same at any Dt.
func TestImportOptions(t *testing.T) {
	if !slices.Contains(compile.Formats(), "onnx") {
		t.Fatalf("formats %v lack onnx", compile.Formats())
	}
	d := loadDigits(t)
	b := d.Files["mlp"]
	_, _, err := compile.Import("onnx", bytes.NewReader(b), int64(len(b)), &compile.ImportOptions{MaxBytes: 1000})
	if !errors.Is(err, ErrLimit) {
		t.Errorf("MaxBytes 1000: %v", err)
	}
	if _, _, err := Import(bytes.NewReader(b[:100]), int64(len(b)), nil); err == nil || !strings.Contains(err.Error(), "read 100 of") {
		t.Errorf("short reader: %v", err)
	}
	if _, _, err := Import(bytes.NewReader(b), -1, nil); err == nil {
		t.Error("negative size accepted")
	}
	if _, _, err := Import(bytes.NewReader(b[:len(b)/2]), int64(len(b)/2), nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated file: %v", err)
	}
	_, rep, err := Import(bytes.NewReader(b), int64(len(b)), &compile.ImportOptions{Layers: []compile.LayerSpec{{Name: "0", Kind: "linear"}}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Format != "onnx" || !strings.Contains(strings.Join(rep.Warnings, "\n"), "Layers ignored") || !strings.Contains(strings.Join(rep.Warnings, "\n"), "no calibration data") {
		t.Errorf("report %+v", rep)
	}

	// The same network built for 1 ms and for 0.1 ms steps gives the same
	// readout after the same number of steps, each simulated at its own dt.
	var outs [][]float32
	for _, dt := range []float64{compile.ConvertedDt, 1e-4} {
		g, _, err := Import(bytes.NewReader(b), int64(len(b)), &compile.ImportOptions{Dt: dt, Conversion: compile.ConversionOptions{Calibration: d.Calibration.Inputs}})
		if err != nil {
			t.Fatal(err)
		}
		sim, err := snn.NewSimulator(g, &snn.Options{Dt: dt})
		if err != nil {
			t.Fatal(err)
		}
		for s := 0; s < 32; s++ {
			if err := sim.Step(d.Test.Inputs[0]); err != nil {
				t.Fatal(err)
			}
		}
		outs = append(outs, slices.Clone(sim.Output(0)))
	}
	for i := range outs[0] {
		if math.Abs(float64(outs[0][i]-outs[1][i])) > 1e-3*(1+math.Abs(float64(outs[0][i]))) {
			t.Fatalf("readout %d: %v at 1 ms, %v at 0.1 ms", i, outs[0][i], outs[1][i])
		}
	}
}

// TestImportReservedNames imports a network whose nodes carry the names
// ConvertANN gives its own nodes ("output", "readout", "<relu>.scale"):
// they must be renamed, not overwrite each other, so the spiking readout
// still tracks the ANN's logits.
func TestImportReservedNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	g := graphSpec{13, []pb{
		node("Gemm", "readout", []string{"x", "w1", "b1"}, []string{"h"}, attrI("transB", 1)),
		node("Relu", "output", []string{"h"}, []string{"r"}),
		node("Gemm", "output.scale", []string{"r", "w2", "b2"}, []string{"y"}, attrI("transB", 1)),
	}, []pb{randT(rng, "w1", 12, 6), randT(rng, "b1", 12), randT(rng, "w2", 3, 12), randT(rng, "b2", 3)},
		[]pb{valueDyn("x", -1, 6)}, []pb{valueDyn("y", -1, 3)}}
	b := g.bytes()
	m, err := DecodeBytes(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	ann, _, err := m.ANN()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range ann.Nodes {
		names = append(names, n.Name)
	}
	if want := []string{"x", "readout#1", "output#1", "output.scale#1"}; !slices.Equal(names, want) {
		t.Fatalf("ANN names %q, want %q", names, want)
	}
	var calib [][]float32
	for i := 0; i < 50; i++ {
		x := make([]float32, 6)
		for j := range x {
			x[j] = float32(rng.Float64())
		}
		calib = append(calib, x)
	}
	sg, _, err := Import(bytes.NewReader(b), int64(len(b)), &compile.ImportOptions{Conversion: compile.ConversionOptions{Calibration: calib}})
	if err != nil {
		t.Fatal(err)
	}
	const T = 400
	sim, err := snn.NewSimulator(sg, &snn.Options{Dt: compile.ConvertedDt})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range calib[:10] {
		sim.ResetAll()
		for s := 0; s < T; s++ {
			if err := sim.Step(x); err != nil {
				t.Fatal(err)
			}
		}
		vals, _ := ann.Forward(x)
		for i, v := range vals[ann.Output] {
			if got := float64(sim.Output(0)[i]) / T; math.Abs(got-v) > 0.05*(1+math.Abs(v)) {
				t.Fatalf("readout/T %v, ANN logit %v", got, v)
			}
		}
	}
}

// FuzzImport feeds whole files to Import: it must return a graph or an
// error, never panic (a recovered panic is an internal error) or run away,
// and a graph it returns must be valid.
func FuzzImport(f *testing.F) {
	for _, dir := range []string{"testdata", digitsDir} {
		files, _ := filepath.Glob(filepath.Join(dir, "*.onnx"))
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	for _, name := range []string{"gemm", "matmul", "conv", "pool"} {
		f.Add(syntheticModels()[name].bytes())
	}
	opts := &compile.ImportOptions{MaxBytes: 1 << 18}
	f.Fuzz(func(t *testing.T, b []byte) {
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %v", d)
			}
		}()
		g, rep, err := Import(bytes.NewReader(b), int64(len(b)), opts)
		if err != nil {
			if errors.Is(err, errInternal) {
				t.Fatal(err)
			}
			if g != nil || rep != nil {
				t.Fatal("graph and error both returned")
			}
			return
		}
		if err := g.Validate(); err != nil {
			t.Fatalf("invalid graph: %v", err)
		}
		if !rep.Converted || rep.Conversion == nil {
			t.Fatalf("report %+v", rep)
		}
	})
}

func ExampleImport() {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "digits", "mlp.onnx"))
	if err != nil {
		log.Fatal(err)
	}
	// Calibration samples set the layer scales; without them the scales
	// come from the weights and the network needs more steps.
	calib := [][]float32{make([]float32, 64), slices.Repeat([]float32{0.5}, 64)}
	g, rep, err := compile.Import("onnx", bytes.NewReader(b), int64(len(b)),
		&compile.ImportOptions{Conversion: compile.ConversionOptions{Calibration: calib}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rep.Format, rep.Kind, rep.Converted)
	for _, l := range rep.Conversion.Layers {
		fmt.Println("spiking layer", l.Layer)
	}
	fmt.Println(len(g.NamesOfKind(snn.KindIF)), "IF layers, readout", g.NamesOfKind(snn.KindI))
	// Output:
	// onnx onnx ann true
	// spiking layer /1/Relu
	// spiking layer /3/Relu
	// 2 IF layers, readout [readout]
}

func ExampleModel_ANN() {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "digits", "cnn.onnx"))
	if err != nil {
		log.Fatal(err)
	}
	m, err := DecodeBytes(b, nil)
	if err != nil {
		log.Fatal(err)
	}
	ann, notes, err := m.ANN()
	if err != nil {
		log.Fatal(err)
	}
	for _, n := range ann.Nodes {
		fmt.Println(n.Op, n.Name)
	}
	fmt.Println(notes.Folded())
	// Output:
	// input input
	// conv2d /0/Conv
	// relu /1/Relu
	// avgpool2d /2/AveragePool
	// conv2d /3/Conv
	// relu /4/Relu
	// avgpool2d /5/AveragePool
	// flatten /6/Flatten
	// dense /7/Gemm
	// [node "/2/Pad" (Pad): identity, dropped node "/5/Pad" (Pad): identity, dropped]
}
