package onnx

import (
	"fmt"
	"sort"
)

// Model is an ONNX graph as Decode read it: validated, in topological order,
// with the shape of every value inferred.
type Model struct {
	IRVersion int64
	Opset     int    // version of the default ("ai.onnx") operator set, MinOpset..MaxOpset
	Producer  string // producer_name and producer_version, such as "pytorch 1.13.0"
	GraphName string

	// Inputs are the graph inputs that are not initializers, in file order.
	Inputs []ValueInfo
	// Outputs are the graph outputs, in file order.
	Outputs []ValueInfo
	// Nodes are in topological order: a node comes after the nodes that
	// produce its inputs. Nodes with no such dependency keep file order.
	Nodes []Node
	// Initializers holds the graph's constant tensors by name.
	Initializers map[string]*Tensor
	// Shapes holds the shape of every value of the graph (inputs,
	// initializers, node outputs), inferred from the declared input shapes.
	// A dimension of -1 is unknown (a symbolic batch axis, say).
	Shapes map[string][]int

	lim limits // Decode's limits, also applied by Run
}

// ValueInfo is a graph input or output. Shape has -1 for a symbolic or
// missing dimension; it is nil when the file declares no shape.
type ValueInfo struct {
	Name  string
	Shape []int
	// DimParams names the symbolic dimensions ("batch"), "" elsewhere; nil
	// when every dimension is a number.
	DimParams []string
}

// Node is one operator application.
type Node struct {
	Name string // may be empty in a valid file: use Label for messages
	Op   string // operator type, such as "Conv"
	// Inputs name the values consumed, in the operator's order; "" marks an
	// omitted optional input.
	Inputs  []string
	Outputs []string
	Attrs   map[string]Attr
}

// Label names the node in messages: its name, or its first output when the
// file gives it no name.
func (n *Node) Label() string { return nodeLabel(n.Name, n.Outputs) }

// AttrType is the type of an attribute value.
type AttrType int

// Attribute types, with the numbering of ONNX's AttributeProto.
const (
	AttrFloat   AttrType = attrFloat
	AttrInt     AttrType = attrInt
	AttrString  AttrType = attrString
	AttrTensor  AttrType = attrTensor
	AttrFloats  AttrType = attrFloats
	AttrInts    AttrType = attrInts
	AttrStrings AttrType = attrStrings
)

func (t AttrType) String() string {
	switch t {
	case AttrFloat:
		return "float"
	case AttrInt:
		return "int"
	case AttrString:
		return "string"
	case AttrTensor:
		return "tensor"
	case AttrFloats:
		return "floats"
	case AttrInts:
		return "ints"
	case AttrStrings:
		return "strings"
	}
	return fmt.Sprintf("AttrType(%d)", int(t))
}

// Attr is an attribute value; the field named by Type holds it.
type Attr struct {
	Type    AttrType
	Float   float32
	Int     int64
	String  string
	Tensor  *Tensor
	Floats  []float32
	Ints    []int64
	Strings []string
}

// Int returns the int attribute name, or def when the node has none.
func (n *Node) Int(name string, def int64) int64 {
	if a, ok := n.Attrs[name]; ok && a.Type == AttrInt {
		return a.Int
	}
	return def
}

// Float returns the float attribute name, or def when the node has none.
func (n *Node) Float(name string, def float32) float32 {
	if a, ok := n.Attrs[name]; ok && a.Type == AttrFloat {
		return a.Float
	}
	return def
}

// Ints returns the ints attribute name, or def when the node has none.
func (n *Node) Ints(name string, def []int64) []int64 {
	if a, ok := n.Attrs[name]; ok && a.Type == AttrInts {
		return a.Ints
	}
	return def
}

// String returns the string attribute name, or def when the node has none.
func (n *Node) String(name string, def string) string {
	if a, ok := n.Attrs[name]; ok && a.Type == AttrString {
		return a.String
	}
	return def
}

// DType is a tensor's element type.
type DType int

// Element types a Tensor can hold.
const (
	Float32 DType = dtFloat // values in Tensor.Data
	Int64   DType = dtInt64 // values in Tensor.Int64s
)

func (d DType) String() string { return dtypeName(int64(d)) }

// Tensor is a dense row-major tensor. A scalar has an empty Shape and one value.
type Tensor struct {
	DType  DType
	Shape  []int
	Data   []float32 // when DType is Float32
	Int64s []int64   // when DType is Int64
}

// Len returns the number of elements Shape describes.
func (t *Tensor) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Floats returns the values as float32, converting Int64 values.
func (t *Tensor) Floats() []float32 {
	if t.DType == Float32 {
		return t.Data
	}
	f := make([]float32, len(t.Int64s))
	for i, v := range t.Int64s {
		f[i] = float32(v)
	}
	return f
}

// Const returns the constant tensor called name: an initializer or the value
// of a Constant node. Callers must not modify it.
func (m *Model) Const(name string) (*Tensor, bool) {
	if t, ok := m.Initializers[name]; ok {
		return t, true
	}
	for i := range m.Nodes {
		n := &m.Nodes[i]
		if n.Op == "Constant" && len(n.Outputs) == 1 && n.Outputs[0] == name {
			if a, ok := n.Attrs["value"]; ok && a.Type == AttrTensor {
				return a.Tensor, true
			}
		}
	}
	return nil, false
}

// supportedOps are the operators Decode accepts (default domain).
var supportedOps = map[string]bool{
	"Add": true, "AveragePool": true, "BatchNormalization": true, "Constant": true,
	"Conv": true, "Dropout": true, "Flatten": true, "Gemm": true, "GlobalAveragePool": true,
	"Identity": true, "MatMul": true, "MaxPool": true, "Pad": true, "Relu": true,
	"Reshape": true, "Transpose": true,
}

// SupportedOps returns the operators Decode accepts, sorted.
func SupportedOps() []string {
	ops := make([]string, 0, len(supportedOps))
	for op := range supportedOps {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return ops
}
