package onnx

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

type expectedCase struct {
	Inputs  map[string]jsonTensor `json:"inputs"`
	Outputs map[string]jsonTensor `json:"outputs"`
}

type jsonTensor struct {
	Shape []int     `json:"shape"`
	Data  []float32 `json:"data"`
}

func loadExpected(t testing.TB) map[string]expectedCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]expectedCase
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func decodeFile(t testing.TB, name string) (*Model, error) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return Decode(bytes.NewReader(b), nil)
}

// TestFixturesMatchTorch decodes every valid fixture and checks Run against
// the output torch computed for the same input.
func TestFixturesMatchTorch(t *testing.T) {
	exp := loadExpected(t)
	if len(exp) != 20 {
		t.Fatalf("expected.json has %d fixtures, want 20", len(exp))
	}
	for name, c := range exp {
		t.Run(name, func(t *testing.T) {
			m, err := decodeFile(t, name)
			if err != nil {
				t.Fatal(err)
			}
			in := map[string]*Tensor{}
			for k, v := range c.Inputs {
				in[k] = &Tensor{DType: Float32, Shape: v.Shape, Data: v.Data}
			}
			out, err := m.Run(in)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range c.Outputs {
				got := out[k]
				if got == nil {
					t.Fatalf("no output %q", k)
				}
				if !slices.Equal(got.Shape, want.Shape) {
					t.Fatalf("output %q shape %v, torch %v", k, got.Shape, want.Shape)
				}
				for i := range want.Data {
					if d := math.Abs(float64(got.Data[i] - want.Data[i])); d > 1e-5+1e-5*math.Abs(float64(want.Data[i])) {
						t.Fatalf("output %q[%d] = %v, torch %v", k, i, got.Data[i], want.Data[i])
					}
				}
			}
		})
	}
}

// TestFixtureStructure checks what each opset's export decodes to.
func TestFixtureStructure(t *testing.T) {
	ops := func(m *Model) []string {
		var s []string
		for _, n := range m.Nodes {
			s = append(s, n.Op)
		}
		return s
	}
	for _, op := range []int{9, 11, 13, 17} {
		m, err := decodeFile(t, "mlp_opset"+itoa(op)+".onnx")
		if err != nil {
			t.Fatal(err)
		}
		if m.Opset != op || !slices.Equal(ops(m), []string{"Gemm", "Relu", "Gemm"}) {
			t.Errorf("mlp opset %d: got opset %d ops %v", op, m.Opset, ops(m))
		}
		if len(m.Inputs) != 1 || !slices.Equal(m.Inputs[0].Shape, []int{-1, 8}) || m.Inputs[0].DimParams[0] != "batch" {
			t.Errorf("mlp opset %d: inputs %+v", op, m.Inputs)
		}
		if got := m.Shapes["output"]; !slices.Equal(got, []int{-1, 4}) {
			t.Errorf("mlp opset %d: output shape %v", op, got)
		}
		g := m.Nodes[0]
		if g.Int("transB", 0) != 1 || g.Float("alpha", 0) != 1 || !slices.Equal(m.Initializers[g.Inputs[1]].Shape, []int{16, 8}) {
			t.Errorf("mlp opset %d: first Gemm %+v", op, g)
		}

		m, err = decodeFile(t, "cnn_opset"+itoa(op)+"_fold0.onnx")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(ops(m), "BatchNormalization") {
			t.Errorf("cnn opset %d fold0: no BatchNormalization in %v", op, ops(m))
		}
		for _, n := range m.Nodes {
			if n.Op == "Pad" && !slices.Equal(n.Ints("pads", nil), make([]int64, 8)) {
				t.Errorf("cnn opset %d: Pad pads %v, want 8 zeros whatever the opset", op, n.Ints("pads", nil))
			}
		}
		m2, err := decodeFile(t, "cnn_opset"+itoa(op)+"_fold1.onnx")
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ops(m2), "BatchNormalization") {
			t.Errorf("cnn opset %d fold1: BatchNormalization not folded: %v", op, ops(m2))
		}
		wantShapes := map[string][]int{"Conv": {1, 4, 8, 8}, "AveragePool": {1, 4, 4, 4}, "MaxPool": {1, 8, 2, 2}, "Flatten": {1, 32}}
		for _, n := range m.Nodes {
			if w, ok := wantShapes[n.Op]; ok && n.Op != "Conv" && !slices.Equal(m.Shapes[n.Outputs[0]], w) {
				t.Errorf("cnn opset %d: %s output shape %v, want %v", op, n.Op, m.Shapes[n.Outputs[0]], w)
			}
		}

		for _, fold := range []string{"0", "1"} {
			m, err := decodeFile(t, "misc_opset"+itoa(op)+"_fold"+fold+".onnx")
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range m.Nodes {
				switch n.Op {
				case "Dropout":
					if r := n.Float("ratio", -1); math.Abs(float64(r)-0.3) > 1e-6 {
						t.Errorf("misc opset %d: Dropout ratio %v, want 0.3 whatever the opset", op, r)
					}
				case "Reshape":
					if s := n.Ints("shape", nil); !slices.Equal(s, []int64{1, 2, 2}) {
						t.Errorf("misc opset %d fold %s: Reshape shape %v", op, fold, s)
					}
					if c, ok := m.Const(n.Inputs[1]); !ok || c.DType != Int64 {
						t.Errorf("misc opset %d fold %s: Reshape shape input not a constant", op, fold)
					}
				}
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestHostileFixtures(t *testing.T) {
	cases := []struct {
		file  string
		check func(error) bool
		sub   string
	}{
		{"bad_unsupported_op.onnx", func(err error) bool {
			var e *UnsupportedOpError
			return errors.As(err, &e) && e.Op == "Softmax" && e.Node == "probs" && errors.Is(err, ErrUnsupported)
		}, `node "probs": operator Softmax is not supported`},
		{"bad_cycle.onnx", func(err error) bool {
			var e *CycleError
			return errors.As(err, &e) && slices.Contains(e.Nodes, "relu_a") && errors.Is(err, ErrMalformed)
		}, "cycle"},
		{"bad_huge_dim.onnx", func(err error) bool {
			var e *LimitError
			return errors.As(err, &e) && e.Value == 1e12 && errors.Is(err, ErrLimit)
		}, `tensor "w"`},
		{"bad_huge_input.onnx", func(err error) bool {
			var e *LimitError
			return errors.As(err, &e) && e.Value == 1e12
		}, `graph input "x"`},
		{"bad_truncated.onnx", func(err error) bool {
			var e *FormatError
			return errors.As(err, &e) && e.Offset > 0 && errors.Is(err, ErrMalformed)
		}, "runs past the end"},
		{"bad_opset8.onnx", func(err error) bool {
			var e *OpsetError
			return errors.As(err, &e) && e.Version == 8
		}, "opset 8 is not supported"},
		{"bad_opset18.onnx", func(err error) bool {
			var e *OpsetError
			return errors.As(err, &e) && e.Version == 18
		}, "opset 18"},
		{"bad_dangling.onnx", func(err error) bool {
			var e *DanglingInputError
			return errors.As(err, &e) && e.Node == "add_dangling" && e.Input == "nowhere"
		}, `"nowhere"`},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m, err := decodeFile(t, c.file)
			if err == nil {
				t.Fatalf("decoded %d nodes, want an error", len(m.Nodes))
			}
			if !c.check(err) || !strings.Contains(err.Error(), c.sub) || !strings.HasPrefix(err.Error(), "onnx: ") {
				t.Errorf("error %q (%T) is not the one expected (%q)", err, err, c.sub)
			}
		})
	}
}
