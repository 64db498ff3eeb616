package onnx_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/neuro-go/neuro/compile/onnx"
)

func ExampleDecode() {
	f, err := os.Open("testdata/cnn_opset13_fold0.onnx")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	m, err := onnx.Decode(f, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("opset", m.Opset, "input", m.Inputs[0].Name, m.Inputs[0].Shape)
	for _, n := range m.Nodes {
		if n.Op == "Constant" {
			continue
		}
		fmt.Println(n.Op, m.Shapes[n.Outputs[0]])
	}
	// Output:
	// opset 13 input input [1 1 8 8]
	// Conv [1 4 8 8]
	// BatchNormalization [1 4 8 8]
	// Relu [1 4 8 8]
	// Pad [1 4 8 8]
	// AveragePool [1 4 4 4]
	// Conv [1 8 4 4]
	// Relu [1 8 4 4]
	// MaxPool [1 8 2 2]
	// Flatten [1 32]
	// Gemm [1 5]
}

func ExampleDecodeBytes_unsupported() {
	b, err := os.ReadFile("testdata/bad_unsupported_op.onnx")
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = onnx.DecodeBytes(b, nil)
	var op *onnx.UnsupportedOpError
	if errors.As(err, &op) {
		fmt.Printf("node %q uses %s\n", op.Node, op.Op)
	}
	fmt.Println(errors.Is(err, onnx.ErrUnsupported))
	// Output:
	// node "probs" uses Softmax
	// true
}

func ExampleModel_Run() {
	m, err := onnx.DecodeBytes(mustRead("testdata/mlp_opset17.onnx"), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The input has a symbolic batch axis: any batch size runs.
	x := &onnx.Tensor{DType: onnx.Float32, Shape: []int{2, 8}, Data: make([]float32, 16)}
	out, err := m.Run(map[string]*onnx.Tensor{"input": x})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out["output"].Shape)
	// Output:
	// [2 4]
}

func ExampleOptions() {
	// A tighter per-tensor limit than the default refuses the digits MLP's
	// 128x64 weight before allocating it.
	_, err := onnx.DecodeBytes(mustRead("../testdata/digits/mlp.onnx"), &onnx.Options{MaxTensorElements: 4096})
	fmt.Println(errors.Is(err, onnx.ErrLimit))
	fmt.Println(err)
	// Output:
	// true
	// onnx: element count of tensor "0.weight" is 8192, over the limit of 4096
}

func mustRead(name string) []byte {
	b, err := os.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return b
}
