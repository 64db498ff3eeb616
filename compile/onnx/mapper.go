package onnx

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// MapNotes says what (*Model).ANN folded or approximated on the way.
type MapNotes struct {
	folded       []string
	approximated []string
}

// Folded lists the operators folded into others or dropped as identities.
func (n MapNotes) Folded() []string { return slices.Clone(n.folded) }

// Approximated lists what the conversion will only approximate.
func (n MapNotes) Approximated() []string { return slices.Clone(n.approximated) }

// ANN maps the model onto compile's ANN description, per sample: the batch
// dimension of the single graph input (symbolic or 1) is dropped.
//
//   - Gemm (transA 0; alpha, beta, transB, bias C folded), and MatMul of a
//     [batch, features] value by a constant, become dense layers; an Add of
//     a constant right after one (or after a Conv) becomes its bias.
//   - Conv (2-D, symmetric padding), Relu, BatchNormalization (as a
//     per-channel affine map), GlobalAveragePool, AveragePool and MaxPool
//     (2-D, symmetric padding, floor mode; AveragePool divides by the whole
//     kernel, so padding with count_include_pad 0 is refused) map one to
//     one; Add of two run-time values of one shape is an add.
//   - Flatten at axis 1, and Reshape to (batch, features), flatten.
//   - Dropout, Identity, all-zero Pads and Reshapes that keep the shape are
//     identities; a Pad of zeros before a Conv or AveragePool folds into its
//     padding (PyTorch writes nn.AvgPool2d as Pad then AveragePool); a
//     Transpose of a constant folds into the constant.
//
// Anything else is a *compile.UnsupportedError naming the node and
// operator. ANN node names are the ONNX node names (or "output <value>"
// for unnamed nodes), made unique.
func (m *Model) ANN() (*compile.ANN, MapNotes, error) {
	mp := &mapper{
		m: m, ann: &compile.ANN{}, by: map[string]*compile.ANNNode{},
		vals: map[string]annValue{}, consts: map[string]*Tensor{}, pads: map[string]pendingPad{},
		uses: map[string]int{}, consumers: map[string][]*Node{}, names: map[string]bool{},
	}
	for i := range m.Nodes {
		n := &m.Nodes[i]
		for _, in := range n.Inputs {
			if in != "" {
				mp.uses[in]++
				mp.consumers[in] = append(mp.consumers[in], n)
			}
		}
	}
	for _, o := range m.Outputs {
		mp.uses[o.Name]++
	}
	if err := mp.input(); err != nil {
		return nil, MapNotes{}, err
	}
	for i := range m.Nodes {
		if err := mp.node(&m.Nodes[i]); err != nil {
			return nil, MapNotes{}, err
		}
	}
	if len(m.Outputs) != 1 {
		return nil, MapNotes{}, &compile.UnsupportedError{Reason: fmt.Sprintf("the graph has %d outputs; a converted network has one", len(m.Outputs))}
	}
	out := m.Outputs[0].Name
	v, ok := mp.vals[out]
	if !ok {
		return nil, MapNotes{}, &compile.UnsupportedError{Node: out, Reason: "the graph output is a constant or a pending Pad, not a value computed from the input"}
	}
	mp.ann.Output = v.node
	return mp.ann, mp.notes, nil
}

// annValue is an ONNX value computed from the input: the ANN node whose
// output it is, and its shape per sample.
type annValue struct {
	node  string
	shape []int
	// direct: the ANN node was made for the ONNX node producing this value
	// (not an alias through an identity), so a bias may fold into it when
	// this value has no other consumer.
	direct bool
}

// pendingPad is a Pad of zeros waiting to fold into the Conv or
// AveragePool that consumes it.
type pendingPad struct {
	node *Node
	src  annValue
	pads [4]int // top, left, bottom, right
}

type mapper struct {
	m         *Model
	ann       *compile.ANN
	by        map[string]*compile.ANNNode
	vals      map[string]annValue
	consts    map[string]*Tensor // folded constants (Transpose, Identity of a constant)
	pads      map[string]pendingPad
	uses      map[string]int     // consumers of each value, graph outputs included
	consumers map[string][]*Node // consuming nodes of each value
	names     map[string]bool
	batchDyn  bool // the input's batch dimension is symbolic
	notes     MapNotes
}

func unsupportedNode(n *Node, format string, args ...any) error {
	return &compile.UnsupportedError{Node: n.Label(), Reason: n.Op + ": " + fmt.Sprintf(format, args...)}
}

func badNode(n *Node, format string, args ...any) error {
	return &NodeError{Op: n.Op, Node: n.Label(), Err: malformed(format, args...)}
}

// name returns a unique ANN node name for label. ConvertANN adds nodes
// called "readout" and "output" and suffixes ".scale" and ".in<k>" to
// others, and snn.Graph.Add replaces a node of the same name silently, so
// those names are avoided.
func (mp *mapper) name(label string) string {
	reserved := func(s string) bool {
		if s == "readout" || s == "output" || strings.HasSuffix(s, ".scale") {
			return true
		}
		if i := strings.LastIndex(s, ".in"); i >= 0 && i+3 < len(s) && strings.Trim(s[i+3:], "0123456789") == "" {
			return true
		}
		return false
	}
	s := label
	for k := 1; mp.names[s] || reserved(s) || s == ""; k++ {
		s = fmt.Sprintf("%s#%d", label, k)
	}
	mp.names[s] = true
	return s
}

func (mp *mapper) add(n *compile.ANNNode, shape []int, out string) {
	mp.ann.Nodes = append(mp.ann.Nodes, n)
	mp.by[n.Name] = n
	mp.vals[out] = annValue{node: n.Name, shape: shape, direct: true}
}

func (mp *mapper) input() error {
	if len(mp.m.Inputs) != 1 {
		return &compile.UnsupportedError{Reason: fmt.Sprintf("the graph has %d inputs; a converted network has one", len(mp.m.Inputs))}
	}
	in := mp.m.Inputs[0]
	bad := func(format string, args ...any) error {
		return &compile.UnsupportedError{Node: in.Name, Reason: "graph input: " + fmt.Sprintf(format, args...)}
	}
	if in.Shape == nil {
		return bad("declares no shape")
	}
	if len(in.Shape) < 2 {
		return bad("shape %v; need [batch, features...]", in.Shape)
	}
	switch in.Shape[0] {
	case -1:
		mp.batchDyn = true
	case 1:
	default:
		return bad("batch dimension %d; only a symbolic or unit batch is supported (shapes are per sample)", in.Shape[0])
	}
	shape := slices.Clone(in.Shape[1:])
	for _, d := range shape {
		if d <= 0 {
			return bad("shape %v has a symbolic dimension besides the batch", in.Shape)
		}
	}
	mp.add(&compile.ANNNode{Name: mp.name(in.Name), Op: compile.OpInput, Shape: shape}, shape, in.Name)
	return nil
}

// constant returns the constant called name, folded ones included.
func (mp *mapper) constant(name string) (*Tensor, bool) {
	if t, ok := mp.consts[name]; ok {
		return t, true
	}
	return mp.m.Const(name)
}

// value returns input j of n as a value computed from the graph input.
func (mp *mapper) value(n *Node, j int) (annValue, error) {
	name := n.Inputs[j]
	if v, ok := mp.vals[name]; ok {
		return v, nil
	}
	if p, ok := mp.pads[name]; ok {
		return annValue{}, unsupportedNode(p.node, "a Pad of non-zero size folds only into the Conv or AveragePool that follows it")
	}
	if _, ok := mp.constant(name); ok {
		return annValue{}, unsupportedNode(n, "input %d (%q) is a constant; only weights and biases may be constant", j, name)
	}
	return annValue{}, unsupportedNode(n, "input %d (%q) is not computed from the graph input", j, name)
}

// weight returns input j of n as a constant of float values, checked finite.
func (mp *mapper) weight(n *Node, j int, what string) (*Tensor, error) {
	name := n.Inputs[j]
	t, ok := mp.constant(name)
	if !ok {
		return nil, unsupportedNode(n, "%s %q must be a constant (an initializer or Constant node)", what, name)
	}
	if t.DType != Float32 {
		return nil, unsupportedNode(n, "%s %q is %v; weights must be FLOAT", what, name, t.DType)
	}
	if i, ok := finite(t.Data); !ok {
		return nil, badNode(n, "%s %q has a non-finite value %v at %d", what, name, t.Data[i], i)
	}
	return t, nil
}

func finite(xs []float32) (int, bool) {
	for i, v := range xs {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return i, false
		}
	}
	return 0, true
}

// sample returns the per-sample shape of the first output of n as Decode
// inferred it: every dimension known but the batch.
func (mp *mapper) sample(n *Node) ([]int, error) {
	s := mp.m.Shapes[n.Outputs[0]]
	if len(s) < 2 {
		return nil, unsupportedNode(n, "output shape %v; need [batch, ...]", s)
	}
	for _, d := range s[1:] {
		if d <= 0 {
			return nil, unsupportedNode(n, "output shape %v is not known per sample", s)
		}
	}
	return slices.Clone(s[1:]), nil
}

func (mp *mapper) alias(n *Node, v annValue) {
	v.direct = false
	mp.vals[n.Outputs[0]] = v
	mp.notes.folded = append(mp.notes.folded, fmt.Sprintf("node %q (%s): identity, dropped", n.Label(), n.Op))
}

func (mp *mapper) node(n *Node) error {
	out := n.Outputs[0]
	switch n.Op {
	case "Constant":
		return nil
	case "Identity", "Dropout":
		if t, ok := mp.constant(n.Inputs[0]); ok {
			mp.consts[out] = t
			return nil
		}
		v, err := mp.value(n, 0)
		if err != nil {
			return err
		}
		mp.alias(n, v)
		return nil
	case "Transpose":
		t, ok := mp.constant(n.Inputs[0])
		if !ok {
			return unsupportedNode(n, "only a constant (a weight) can be transposed, by folding; this one transposes a run-time value")
		}
		tt, err := transpose(n, t)
		if err != nil {
			return err
		}
		mp.consts[out] = tt
		mp.notes.folded = append(mp.notes.folded, fmt.Sprintf("node %q (Transpose): folded into its constant", n.Label()))
		return nil
	case "Relu":
		v, err := mp.value(n, 0)
		if err != nil {
			return err
		}
		mp.add(&compile.ANNNode{Name: mp.name(n.Label()), Op: compile.OpReLU, Inputs: []string{v.node}}, v.shape, out)
		return nil
	case "Gemm":
		return mp.gemm(n)
	case "MatMul":
		return mp.matmul(n)
	case "Add":
		return mp.addOp(n)
	case "Conv":
		return mp.conv(n)
	case "AveragePool", "MaxPool":
		return mp.pool(n)
	case "GlobalAveragePool":
		v, err := mp.value(n, 0)
		if err != nil {
			return err
		}
		if len(v.shape) != 3 {
			return unsupportedNode(n, "input of %d dimensions per sample; only 2-D ([batch, C, H, W]) pooling is supported", len(v.shape))
		}
		mp.add(&compile.ANNNode{Name: mp.name(n.Label()), Op: compile.OpGlobalAvgPool, Inputs: []string{v.node}}, []int{v.shape[0], 1, 1}, out)
		return nil
	case "BatchNormalization":
		return mp.batchNorm(n)
	case "Flatten":
		v, err := mp.value(n, 0)
		if err != nil {
			return err
		}
		r := len(v.shape) + 1
		axis := int(n.Int("axis", 1))
		if axis < 0 {
			axis += r
		}
		if axis != 1 {
			return unsupportedNode(n, "axis %d merges the batch dimension with others; only axis 1 (flatten per sample) is supported", n.Int("axis", 1))
		}
		return mp.flatten(n, v)
	case "Reshape":
		return mp.reshape(n)
	case "Pad":
		return mp.pad(n)
	}
	return unsupportedNode(n, "operator has no ANN equivalent")
}

func (mp *mapper) flatten(n *Node, v annValue) error {
	if len(v.shape) == 1 {
		mp.alias(n, v)
		return nil
	}
	mp.add(&compile.ANNNode{Name: mp.name(n.Label()), Op: compile.OpFlatten, Inputs: []string{v.node}}, []int{snn.Size(v.shape)}, n.Outputs[0])
	return nil
}

func (mp *mapper) reshape(n *Node) error {
	v, err := mp.value(n, 0)
	if err != nil {
		return err
	}
	target := n.Ints("shape", nil)
	allowZero := n.Int("allowzero", 0) != 0
	size := snn.Size(v.shape)
	per := func(b int) ([]int, []int, []int, error) {
		in := append([]int{b}, v.shape...)
		got, err := reshapeShape(in, target, allowZero)
		return got, in, []int{b, size}, err
	}
	got, in, flat, err := per(1)
	if err != nil {
		return unsupportedNode(n, "shape %v: %v", target, err)
	}
	same := slices.Equal(got, in)
	if !same && !slices.Equal(got, flat) {
		return unsupportedNode(n, "reshape of %v per sample to %v: only reshapes to (batch, features) are supported", v.shape, target)
	}
	// What the reshape does per sample must not depend on the batch.
	if mp.batchDyn {
		got, in, flat, err := per(2)
		if err != nil || !slices.Equal(got, map[bool][]int{true: in, false: flat}[same]) {
			return unsupportedNode(n, "shape %v holds a batch of 1 only; the graph input's batch is symbolic (use 0 or -1 for the batch)", target)
		}
	}
	if same {
		mp.alias(n, v)
		return nil
	}
	return mp.flatten(n, v)
}

// pad handles a Pad: all-zero pads are an identity; zeros around the
// spatial dimensions wait to fold into the Conv or AveragePool consuming
// them; anything else is refused.
func (mp *mapper) pad(n *Node) error {
	v, err := mp.value(n, 0)
	if err != nil {
		return err
	}
	pads := n.Ints("pads", nil)
	zero := true
	for _, p := range pads {
		zero = zero && p == 0
	}
	if zero {
		mp.alias(n, v)
		return nil
	}
	r := len(v.shape) + 1
	if len(pads) != 2*r {
		return badNode(n, "%d pads for rank %d", len(pads), r)
	}
	if r != 4 {
		return unsupportedNode(n, "non-zero pads %v on a rank-%d value; only spatial padding of [batch, C, H, W] folds", pads, r)
	}
	for _, p := range pads {
		if p < 0 {
			return unsupportedNode(n, "negative pads %v (cropping) are not supported", pads)
		}
	}
	if pads[0] != 0 || pads[1] != 0 || pads[4] != 0 || pads[5] != 0 {
		return unsupportedNode(n, "pads %v pad the batch or channel dimension", pads)
	}
	if val := n.Float("value", 0); val != 0 {
		return unsupportedNode(n, "pads with value %v; only zero padding folds into a convolution or average pooling", val)
	}
	cs := mp.consumers[n.Outputs[0]]
	if mp.uses[n.Outputs[0]] != 1 || len(cs) != 1 || (cs[0].Op != "Conv" && cs[0].Op != "AveragePool") || cs[0].Inputs[0] != n.Outputs[0] {
		return unsupportedNode(n, "a Pad of non-zero size folds only into the Conv or AveragePool that follows it, as its only consumer")
	}
	mp.pads[n.Outputs[0]] = pendingPad{node: n, src: v, pads: [4]int{int(pads[2]), int(pads[3]), int(pads[6]), int(pads[7])}}
	mp.notes.folded = append(mp.notes.folded, fmt.Sprintf("node %q (Pad): folded into the padding of %q", n.Label(), cs[0].Label()))
	return nil
}
