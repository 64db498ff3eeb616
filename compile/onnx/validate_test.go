package onnx

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// A minimal protobuf writer, to build models that exporters do not write.
type pb []byte

func (p pb) key(f, wt int) pb { return binary.AppendUvarint(p, uint64(f<<3|wt)) }
func (p pb) varint(f int, v int64) pb {
	return binary.AppendUvarint(p.key(f, wireVarint), uint64(v))
}
func (p pb) bytes(f int, b []byte) pb {
	return append(binary.AppendUvarint(p.key(f, wireBytes), uint64(len(b))), b...)
}
func (p pb) str(f int, s string) pb { return p.bytes(f, []byte(s)) }
func (p pb) f32(f int, v float32) pb {
	return binary.LittleEndian.AppendUint32(p.key(f, wireFixed32), math.Float32bits(v))
}

func tensorF(name string, dims []int64, data []float32) pb {
	var p pb
	for _, d := range dims {
		p = p.varint(1, d)
	}
	p = p.varint(2, dtFloat).str(8, name)
	var raw []byte
	for _, v := range data {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
	}
	return p.bytes(9, raw)
}

func tensorI64(name string, data []int64) pb {
	p := pb(nil).varint(1, int64(len(data))).varint(2, dtInt64).str(8, name)
	for _, v := range data {
		p = p.varint(7, v)
	}
	return p
}

func valueF(name string, dims ...int64) pb {
	var shape pb
	for _, d := range dims {
		shape = shape.bytes(1, pb(nil).varint(1, d))
	}
	tt := pb(nil).varint(1, dtFloat).bytes(2, shape)
	return pb(nil).str(1, name).bytes(2, pb(nil).bytes(1, tt))
}

func node(op, name string, ins, outs []string, attrs ...pb) pb {
	var p pb
	for _, s := range ins {
		p = p.str(1, s)
	}
	for _, s := range outs {
		p = p.str(2, s)
	}
	p = p.str(3, name).str(4, op)
	for _, a := range attrs {
		p = p.bytes(5, a)
	}
	return p
}

func attrI(name string, v int64) pb   { return pb(nil).str(1, name).varint(3, v).varint(20, attrInt) }
func attrS(name, v string) pb         { return pb(nil).str(1, name).str(4, v).varint(20, attrString) }
func attrF(name string, v float32) pb { return pb(nil).str(1, name).f32(2, v).varint(20, attrFloat) }
func attrIs(name string, v ...int64) pb {
	p := pb(nil).str(1, name).varint(20, attrInts)
	for _, x := range v {
		p = p.varint(8, x)
	}
	return p
}

type graphSpec struct {
	opset          int64
	nodes, inits   []pb
	inputs, output []pb
}

func (g graphSpec) bytes() []byte {
	var gp pb
	for _, n := range g.nodes {
		gp = gp.bytes(1, n)
	}
	gp = gp.str(2, "g")
	for _, t := range g.inits {
		gp = gp.bytes(5, t)
	}
	for _, v := range g.inputs {
		gp = gp.bytes(11, v)
	}
	for _, v := range g.output {
		gp = gp.bytes(12, v)
	}
	m := pb(nil).varint(1, 8).str(2, "test")
	if g.opset != 0 {
		m = m.bytes(8, pb(nil).str(1, "").varint(2, g.opset))
	}
	return m.bytes(7, gp)
}

func TestValidation(t *testing.T) {
	x := valueF("x", 1, 4)
	y := valueF("y", 1, 4)
	relu := node("Relu", "relu", []string{"x"}, []string{"y"})
	cases := []struct {
		name string
		g    graphSpec
		opts *Options
		want string // substring of the error; "" for success
		is   error
	}{
		{"ok", graphSpec{13, []pb{relu}, nil, []pb{x}, []pb{y}}, nil, "", nil},
		{"no opset", graphSpec{0, []pb{relu}, nil, []pb{x}, []pb{y}}, nil, "imports no ai.onnx opset", ErrUnsupported},
		{"self loop", graphSpec{13, []pb{node("Relu", "r", []string{"y"}, []string{"y"})}, nil, []pb{x}, []pb{y}}, nil, "cycle", ErrMalformed},
		{"twice produced", graphSpec{13, []pb{relu, node("Relu", "relu2", []string{"x"}, []string{"y"})}, nil, []pb{x}, []pb{y}}, nil, `also produced by node "relu"`, ErrMalformed},
		{"bn training", graphSpec{14, []pb{node("BatchNormalization", "bn", []string{"x", "s", "s", "s", "s"}, []string{"y"}, attrI("training_mode", 1))},
			[]pb{tensorF("s", []int64{4}, []float32{1, 1, 1, 1})}, []pb{x}, []pb{y}}, nil, `node "bn" (BatchNormalization): training_mode=1`, ErrUnsupported},
		{"unknown attr", graphSpec{13, []pb{node("Relu", "relu", []string{"x"}, []string{"y"}, attrI("alpha", 1))}, nil, []pb{x}, []pb{y}}, nil, `unknown attribute "alpha"`, ErrUnsupported},
		{"attr type", graphSpec{13, []pb{node("Flatten", "fl", []string{"x"}, []string{"y"}, attrF("axis", 1))}, nil, []pb{x}, []pb{y}}, nil, `attribute "axis" is a float, want int`, ErrMalformed},
		{"bad auto_pad", graphSpec{13, []pb{node("MaxPool", "mp", []string{"x"}, []string{"y"}, attrIs("kernel_shape", 1), attrS("auto_pad", "FOO"))}, nil, []pb{valueF("x", 1, 1, 4)}, []pb{y}}, nil, `auto_pad "FOO"`, ErrMalformed},
		{"short data", graphSpec{13, []pb{node("Add", "add", []string{"x", "b"}, []string{"y"})}, []pb{tensorF("b", []int64{4}, []float32{1, 2, 3})}, []pb{x}, []pb{y}}, nil, "need 16 bytes of raw_data, file has 12", ErrMalformed},
		{"external", graphSpec{13, []pb{node("Add", "add", []string{"x", "b"}, []string{"y"})}, []pb{pb(nil).varint(1, 4).varint(2, dtFloat).str(8, "b").varint(14, 1)}, []pb{x}, []pb{y}}, nil, "external data", ErrUnsupported},
		{"negative dim", graphSpec{13, []pb{node("Add", "add", []string{"x", "b"}, []string{"y"})}, []pb{tensorF("b", []int64{-4}, nil)}, []pb{x}, []pb{y}}, nil, "negative dimension", ErrMalformed},
		{"overflow", graphSpec{13, []pb{node("Add", "add", []string{"x", "b"}, []string{"y"})}, []pb{tensorF("b", []int64{1 << 40, 1 << 40}, nil)}, []pb{x}, []pb{y}}, nil, "overflows int64", ErrLimit},
		{"max nodes", graphSpec{13, []pb{relu}, nil, []pb{x}, []pb{y}}, &Options{MaxNodes: 1}, "", nil},
		{"max nodes hit", graphSpec{13, []pb{node("Relu", "a", []string{"x"}, []string{"h"}), node("Relu", "b", []string{"h"}, []string{"y"})}, nil, []pb{x}, []pb{y}}, &Options{MaxNodes: 1}, "number of nodes is 2, over the limit of 1", ErrLimit},
		{"shape mismatch", graphSpec{13, []pb{node("Gemm", "fc", []string{"x", "w"}, []string{"y"})}, []pb{tensorF("w", []int64{3, 4}, make([]float32, 12))}, []pb{x}, []pb{y}}, nil, `node "fc" (Gemm): A [1 4] and B [3 4] disagree on K`, ErrMalformed},
		{"reshape dynamic", graphSpec{13, []pb{node("Reshape", "rs", []string{"x", "x"}, []string{"y"})}, nil, []pb{x}, []pb{y}}, nil, "must be a constant", ErrUnsupported},
		{"dropout attr at 13", graphSpec{13, []pb{node("Dropout", "d", []string{"x"}, []string{"y"}, attrF("ratio", 0.1))}, nil, []pb{x}, []pb{y}}, nil, "ratio became an input in opset 12", ErrMalformed},
		{"pad reflect", graphSpec{10, []pb{node("Pad", "p", []string{"x"}, []string{"y"}, attrS("mode", "reflect"), attrIs("pads", 0, 0, 0, 0))}, nil, []pb{x}, []pb{y}}, nil, `mode "reflect"`, ErrUnsupported},
		{"output declared wrong", graphSpec{13, []pb{relu}, nil, []pb{x}, []pb{valueF("y", 1, 5)}}, nil, "declared [1 5], inferred [1 4]", ErrMalformed},
		{"empty", graphSpec{}, nil, "graph has no nodes", ErrUnsupported},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "empty" {
				c.g.opset = 13
			}
			m, err := DecodeBytes(c.g.bytes(), c.opts)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(m.Nodes) == 0 {
					t.Fatal("no nodes")
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) || !errors.Is(err, c.is) || !strings.HasPrefix(err.Error(), "onnx: ") {
				t.Errorf("error %q; want it to contain %q and match %v", err, c.want, c.is)
			}
		})
	}
}

// TestOpsetForms checks that the opset-dependent spellings of the same
// parameters decode to the same attributes and run alike.
func TestOpsetForms(t *testing.T) {
	x := valueF("x", 1, 4)
	y := valueF("y", 1, 2, 2)
	// Constant value_ints (opset 12+) feeding Reshape, and Add(x, x), which a
	// simple graph backend would see as one input.
	g := graphSpec{13, []pb{
		node("Constant", "shape", nil, []string{"s"}, pb(nil).str(1, "value_ints").varint(20, attrInts).varint(8, 1).varint(8, 2).varint(8, -1)),
		node("Add", "double", []string{"x", "x"}, []string{"xx"}),
		node("Reshape", "rs", []string{"xx", "s"}, []string{"y"}),
	}, nil, []pb{x}, []pb{y}}
	m, err := DecodeBytes(g.bytes(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Nodes[2].Ints("shape", nil); !slices.Equal(got, []int64{1, 2, -1}) {
		t.Errorf("Reshape shape attr %v", got)
	}
	if c, ok := m.Const("s"); !ok || !slices.Equal(c.Int64s, []int64{1, 2, -1}) {
		t.Errorf("Const(s) = %+v, %v", c, ok)
	}
	if !slices.Equal(m.Nodes[1].Inputs, []string{"x", "x"}) {
		t.Errorf("Add inputs %v", m.Nodes[1].Inputs)
	}
	out, err := m.Run(map[string]*Tensor{"x": {DType: Float32, Shape: []int{1, 4}, Data: []float32{1, 2, 3, 4}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := out["y"]; !slices.Equal(r.Shape, []int{1, 2, 2}) || !slices.Equal(r.Data, []float32{2, 4, 6, 8}) {
		t.Errorf("Run = %v %v", r.Shape, r.Data)
	}

	// Pad: attribute form (opset 10) and input form (opset 11) agree.
	pads := []int64{0, 1, 0, 2}
	p10 := graphSpec{10, []pb{node("Pad", "p", []string{"x"}, []string{"y"}, attrIs("pads", pads...), attrF("value", 7))}, nil, []pb{x}, []pb{valueF("y", 1, 7)}}
	p11 := graphSpec{11, []pb{node("Pad", "p", []string{"x", "pads", "v"}, []string{"y"})},
		[]pb{tensorI64("pads", pads), tensorF("v", nil, []float32{7})}, []pb{x}, []pb{valueF("y", 1, 7)}}
	for _, g := range []graphSpec{p10, p11} {
		m, err := DecodeBytes(g.bytes(), nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := m.Run(map[string]*Tensor{"x": {DType: Float32, Shape: []int{1, 4}, Data: []float32{1, 2, 3, 4}}})
		if err != nil {
			t.Fatal(err)
		}
		if r := out["y"]; !slices.Equal(r.Data, []float32{7, 1, 2, 3, 4, 7, 7}) {
			t.Errorf("opset %d Pad = %v", g.opset, r.Data)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := (&Options{}).Validate(); err != nil {
		t.Error(err)
	}
	err := (&Options{MaxBytes: -1, MaxRank: -2}).Validate()
	if err == nil || !strings.Contains(err.Error(), "MaxBytes") || !strings.Contains(err.Error(), "MaxRank") {
		t.Errorf("Validate = %v", err)
	}
	if _, err := DecodeBytes([]byte{1}, &Options{MaxNodes: -1}); err == nil {
		t.Error("DecodeBytes accepted invalid options")
	}
	if _, err := DecodeBytes(make([]byte, 100), &Options{MaxBytes: 10}); !errors.Is(err, ErrLimit) {
		t.Errorf("MaxBytes not enforced: %v", err)
	}
}
