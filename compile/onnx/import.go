package onnx

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// errInternal marks a panic recovered at Import's boundary: a bug of this
// package, never a property of the file. Fuzz tests look for it.
var errInternal = errors.New("onnx: internal error")

// Import reads an ONNX file of a ReLU network and converts it to a spiking
// graph: Decode (bounded by opts.MaxBytes), (*Model).ANN, then
// compile.ConvertANN with opts.Conversion. It is registered as the
// compile format "onnx". opts may be nil.
//
// The converted graph is built for opts.Dt (default 1e-3): its IF and
// integrator neurons add their input once per step whatever the step is.
// Present a sample by injecting it as current at every step for
// opts.Conversion.Timesteps steps; the Output's value is then that many
// times the ANN's logits, approximately.
func Import(r io.ReaderAt, size int64, opts *compile.ImportOptions) (g *snn.Graph, rep *compile.ImportReport, err error) {
	o := opts.WithDefaults()
	if r == nil {
		return nil, nil, errors.New("onnx: Import: nil reader")
	}
	if size < 0 {
		return nil, nil, fmt.Errorf("onnx: Import: negative size %d", size)
	}
	if o.MaxBytes < 0 {
		return nil, nil, fmt.Errorf("onnx: Import: ImportOptions.MaxBytes is negative (%d)", o.MaxBytes)
	}
	if size > o.MaxBytes {
		return nil, nil, &LimitError{What: "file size", Value: size, Limit: o.MaxBytes}
	}
	// Grow as the bytes arrive rather than trust size with one allocation.
	b, err := io.ReadAll(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, nil, fmt.Errorf("onnx: reading model: %w", err)
	}
	if int64(len(b)) < size {
		return nil, nil, fmt.Errorf("onnx: reading model: read %d of %d bytes: %w", len(b), size, io.ErrUnexpectedEOF)
	}
	defer func() {
		if p := recover(); p != nil {
			g, rep = nil, nil
			err = fmt.Errorf("%w: panic importing the model: %v", errInternal, p)
		}
	}()
	// MaxBytes bounds the tensors too: four bytes per float32 element.
	elems := max(1, o.MaxBytes/4)
	m, err := DecodeBytes(b, &Options{MaxBytes: o.MaxBytes, MaxTensorElements: elems, MaxTotalElements: elems})
	if err != nil {
		return nil, nil, err
	}
	ann, notes, err := m.ANN()
	if err != nil {
		return nil, nil, err
	}
	g, crep, err := compile.ConvertANN(ann, &o.Conversion)
	if err != nil {
		return nil, nil, err
	}
	retime(g, o.Dt)
	rep = &compile.ImportReport{Format: "onnx", Kind: "onnx ann", Converted: true, Conversion: crep}
	if len(o.Layers) > 0 {
		rep.Warnings = append(rep.Warnings, "ImportOptions.Layers ignored: an ONNX file describes its own layers")
	}
	rep.Warnings = append(rep.Warnings, notes.folded...)
	rep.Warnings = append(rep.Warnings, crep.Warnings...)
	rep.Approximate = notes.approximated
	return g, rep, nil
}

// retime rebuilds the integrating neurons of a graph ConvertANN built for
// compile.ConvertedDt so that they add their input once per step of dt.
// Their R is 1/ConvertedDt (times a scale); the simulator integrates R·x·dt
// per step, so R must scale by ConvertedDt/dt.
func retime(g *snn.Graph, dt float64) {
	if dt == compile.ConvertedDt {
		return
	}
	f := compile.ConvertedDt / dt
	for _, n := range g.Nodes {
		switch x := n.(type) {
		case *snn.IF:
			for i := range x.R {
				x.R[i] *= f
			}
		case *snn.I:
			for i := range x.R {
				x.R[i] *= f
			}
		}
	}
}

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

// spatialInput returns input 0 of a Conv or pooling node, with the padding
// of a Pad folded into it, if any.
func (mp *mapper) spatialInput(n *Node) (annValue, [4]int, error) {
	if p, ok := mp.pads[n.Inputs[0]]; ok {
		return p.src, p.pads, nil
	}
	v, err := mp.value(n, 0)
	return v, [4]int{}, err
}

// padding resolves the window of a Conv or pooling node over a (C,H,W)
// input, adds extra (top, left, bottom, right), and requires the result to
// be symmetric. own reports whether the node's own pads are non-zero.
func (mp *mapper) padding(n *Node, in []int, k []int, extra [4]int) (pad [2]int, own bool, err error) {
	w, err := newWindow(n, in[1:], k)
	if err != nil {
		return pad, false, &NodeError{Op: n.Op, Node: n.Label(), Err: err}
	}
	own = w.pb[0] != 0 || w.pb[1] != 0 || w.pe[0] != 0 || w.pe[1] != 0
	top, left := w.pb[0]+extra[0], w.pb[1]+extra[1]
	bottom, right := w.pe[0]+extra[2], w.pe[1]+extra[3]
	if top != bottom || left != right {
		return pad, own, unsupportedNode(n, "asymmetric padding (top %d, left %d, bottom %d, right %d); only symmetric padding is supported", top, left, bottom, right)
	}
	return [2]int{top, left}, own, nil
}

func (mp *mapper) gemm(n *Node) error {
	if n.Int("transA", 0) != 0 {
		return unsupportedNode(n, "transA=1 (the input transposed) is not supported")
	}
	x, err := mp.value(n, 0)
	if err != nil {
		return err
	}
	b, err := mp.weight(n, 1, "weight B")
	if err != nil {
		return err
	}
	if len(b.Shape) != 2 {
		return badNode(n, "weight B has shape %v, want 2-D", b.Shape)
	}
	alpha, beta := float64(n.Float("alpha", 1)), float64(n.Float("beta", 1))
	k, o := b.Shape[0], b.Shape[1]
	transB := n.Int("transB", 0) != 0
	if transB {
		k, o = o, k
	}
	if len(x.shape) != 1 || x.shape[0] != k {
		return badNode(n, "input of %v per sample for a weight of %d inputs", x.shape, k)
	}
	w := snn.NewTensor(o, k)
	for r := 0; r < o; r++ {
		for c := 0; c < k; c++ {
			v := b.Data[c*o+r]
			if transB {
				v = b.Data[r*k+c]
			}
			w.Data[r*k+c] = float32(alpha * float64(v))
		}
	}
	var bias []float32
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		c, err := mp.weight(n, 2, "bias C")
		if err != nil {
			return err
		}
		bias, err = channelBias(n, c, 2, o)
		if err != nil {
			return err
		}
		for i := range bias {
			bias[i] = float32(beta * float64(bias[i]))
		}
	}
	return mp.dense(n, x, w, bias)
}

func (mp *mapper) matmul(n *Node) error {
	if _, isConst := mp.constant(n.Inputs[0]); isConst {
		return unsupportedNode(n, "the left operand is a constant; only input × constant weight maps to a dense layer")
	}
	x, err := mp.value(n, 0)
	if err != nil {
		return err
	}
	if len(x.shape) != 1 {
		return unsupportedNode(n, "input of rank %d; only [batch, features] inputs map to a dense layer", len(x.shape)+1)
	}
	b, err := mp.weight(n, 1, "weight")
	if err != nil {
		return err
	}
	if len(b.Shape) != 2 {
		return unsupportedNode(n, "weight of shape %v; only a 2-D weight maps to a dense layer", b.Shape)
	}
	k, o := b.Shape[0], b.Shape[1]
	if x.shape[0] != k {
		return badNode(n, "input of %d features for a weight of %d rows", x.shape[0], k)
	}
	w := snn.NewTensor(o, k)
	for r := 0; r < o; r++ {
		for c := 0; c < k; c++ {
			w.Data[r*k+c] = b.Data[c*o+r]
		}
	}
	return mp.dense(n, x, w, nil)
}

func (mp *mapper) dense(n *Node, x annValue, w *snn.Tensor, bias []float32) error {
	if i, ok := finite(w.Data); !ok {
		return badNode(n, "scaled weight is not finite at %d", i)
	}
	if i, ok := finite(bias); !ok {
		return badNode(n, "scaled bias is not finite at %d", i)
	}
	mp.add(&compile.ANNNode{Name: mp.name(n.Label()), Op: compile.OpDense, Inputs: []string{x.node}, Weight: w, Bias: bias}, []int{w.Shape[0]}, n.Outputs[0])
	return nil
}

// channelBias broadcasts constant c, added to a value of rank r whose
// dimension 1 has ch entries (features or channels), to one value per
// entry. Any other broadcast (over the batch, or varying over space) is
// refused.
func channelBias(n *Node, c *Tensor, r, ch int) ([]float32, error) {
	if len(c.Shape) > r {
		return nil, unsupportedNode(n, "constant of shape %v adds dimensions to a rank-%d value", c.Shape, r)
	}
	full := make([]int, r)
	for i := range full {
		full[i] = 1
	}
	copy(full[r-len(c.Shape):], c.Shape)
	for i, d := range full {
		if d != 1 && (i != 1 || d != ch) {
			return nil, unsupportedNode(n, "constant of shape %v is not one value per channel of %d (nor one value)", c.Shape, ch)
		}
	}
	out := make([]float32, ch)
	for i := range out {
		out[i] = c.Data[0]
		if full[1] == ch && ch > 1 {
			out[i] = c.Data[i]
		}
	}
	return out, nil
}

// addOp maps Add: of two computed values, an add layer; of a value and a
// constant, the bias of the dense or convolution layer just before.
func (mp *mapper) addOp(n *Node) error {
	_, c0 := mp.constant(n.Inputs[0])
	_, c1 := mp.constant(n.Inputs[1])
	switch {
	case c0 && c1:
		return unsupportedNode(n, "both operands are constants (constant subgraphs are not folded)")
	case !c0 && !c1:
		a, err := mp.value(n, 0)
		if err != nil {
			return err
		}
		b, err := mp.value(n, 1)
		if err != nil {
			return err
		}
		if !slices.Equal(a.shape, b.shape) {
			return unsupportedNode(n, "operands of shapes %v and %v per sample; only an add of equal shapes (no broadcasting) is supported", a.shape, b.shape)
		}
		mp.add(&compile.ANNNode{Name: mp.name(n.Label()), Op: compile.OpAdd, Inputs: []string{a.node, b.node}}, a.shape, n.Outputs[0])
		return nil
	}
	xi, ci := 0, 1
	if c0 {
		xi, ci = 1, 0
	}
	x, err := mp.value(n, xi)
	if err != nil {
		return err
	}
	prev := mp.by[x.node]
	if prev == nil || !x.direct || mp.uses[n.Inputs[xi]] != 1 || (prev.Op != compile.OpDense && prev.Op != compile.OpConv2d) {
		return unsupportedNode(n, "an Add of a constant is supported only as the bias of a Gemm, MatMul or Conv whose output feeds nothing else")
	}
	c, err := mp.weight(n, ci, "bias")
	if err != nil {
		return err
	}
	ch := x.shape[0]
	bias, err := channelBias(n, c, len(x.shape)+1, ch)
	if err != nil {
		return err
	}
	if prev.Bias == nil {
		prev.Bias = make([]float32, ch)
	}
	for i, v := range bias {
		prev.Bias[i] += v
	}
	if i, ok := finite(prev.Bias); !ok {
		return badNode(n, "bias is not finite at %d", i)
	}
	mp.vals[n.Outputs[0]] = annValue{node: prev.Name, shape: x.shape, direct: true}
	mp.notes.folded = append(mp.notes.folded, fmt.Sprintf("node %q (Add): folded into the bias of %q", n.Label(), prev.Name))
	return nil
}

func (mp *mapper) conv(n *Node) error {
	x, extra, err := mp.spatialInput(n)
	if err != nil {
		return err
	}
	if len(x.shape) != 3 {
		return unsupportedNode(n, "input of %d dimensions per sample; only 2-D convolution ([batch, C, H, W]) is supported", len(x.shape))
	}
	w, err := mp.weight(n, 1, "weight")
	if err != nil {
		return err
	}
	if len(w.Shape) != 4 {
		return badNode(n, "weight of shape %v, want 4-D", w.Shape)
	}
	pad, _, err := mp.padding(n, x.shape, w.Shape[2:], extra)
	if err != nil {
		return err
	}
	var bias []float32
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		b, err := mp.weight(n, 2, "bias")
		if err != nil {
			return err
		}
		if len(b.Data) != w.Shape[0] {
			return badNode(n, "bias of %d values for %d output channels", len(b.Data), w.Shape[0])
		}
		bias = slices.Clone(b.Data)
	}
	st, dil := toInts(n.Ints("strides", []int64{1, 1})), toInts(n.Ints("dilations", []int64{1, 1}))
	shape, err := mp.sample(n)
	if err != nil {
		return err
	}
	mp.add(&compile.ANNNode{
		Name: mp.name(n.Label()), Op: compile.OpConv2d, Inputs: []string{x.node},
		Weight: &snn.Tensor{Shape: slices.Clone(w.Shape), Data: slices.Clone(w.Data)}, Bias: bias,
		Stride: [2]int{st[0], st[1]}, Padding: pad, Dilation: [2]int{dil[0], dil[1]}, Groups: int(n.Int("group", 1)),
	}, shape, n.Outputs[0])
	return nil
}

func (mp *mapper) pool(n *Node) error {
	x, extra, err := mp.spatialInput(n)
	if err != nil {
		return err
	}
	if len(x.shape) != 3 {
		return unsupportedNode(n, "input of %d dimensions per sample; only 2-D pooling ([batch, C, H, W]) is supported", len(x.shape))
	}
	k := toInts(n.Ints("kernel_shape", nil))
	if len(k) != 2 {
		return badNode(n, "kernel_shape %v, want 2 values", k)
	}
	for _, d := range n.Ints("dilations", nil) {
		if d != 1 {
			return unsupportedNode(n, "dilations %v; pooling with dilation is not supported", n.Ints("dilations", nil))
		}
	}
	pad, own, err := mp.padding(n, x.shape, k, extra)
	if err != nil {
		return err
	}
	op := compile.OpMaxPool2d
	if n.Op == "AveragePool" {
		op = compile.OpAvgPool2d
		if own && n.Int("count_include_pad", 0) == 0 {
			return unsupportedNode(n, "count_include_pad=0 with padding averages border windows over fewer values; the converted network divides by the whole kernel (export with count_include_pad=True, or pad with a Pad node)")
		}
	}
	st := toInts(n.Ints("strides", []int64{1, 1}))
	shape, err := mp.sample(n)
	if err != nil {
		return err
	}
	// The ANN pools in floor mode; ceil_mode is refused where it adds a
	// partial window.
	for i := 0; i < 2; i++ {
		if floor := (x.shape[i+1]+2*pad[i]-k[i])/st[i] + 1; floor != shape[i+1] {
			return unsupportedNode(n, "ceil_mode=1 adds a partial window (%d outputs, %d in floor mode); only floor mode is supported", shape[i+1], floor)
		}
	}
	name := mp.name(n.Label())
	mp.add(&compile.ANNNode{Name: name, Op: op, Inputs: []string{x.node}, Kernel: [2]int{k[0], k[1]}, Stride: [2]int{st[0], st[1]}, Padding: pad}, shape, n.Outputs[0])
	if op == compile.OpMaxPool2d {
		mp.notes.approximated = append(mp.notes.approximated, fmt.Sprintf("node %q (MaxPool): max pooling approximated by average pooling in the spiking network", n.Label()))
	}
	return nil
}

func (mp *mapper) batchNorm(n *Node) error {
	x, err := mp.value(n, 0)
	if err != nil {
		return err
	}
	ch := x.shape[0]
	var p [4][]float32
	for j, what := range []string{"scale", "B", "mean", "var"} {
		t, err := mp.weight(n, j+1, what)
		if err != nil {
			return err
		}
		if len(t.Data) != ch {
			return badNode(n, "%s has %d values for %d channels", what, len(t.Data), ch)
		}
		p[j] = t.Data
	}
	eps := float64(n.Float("epsilon", 1e-5))
	for c, v := range p[3] {
		if !(float64(v)+eps > 0) {
			return badNode(n, "variance %v plus epsilon %v of channel %d is not positive", v, eps, c)
		}
	}
	scale, shift := compile.BatchNormAffine(p[0], p[1], p[2], p[3], eps)
	if i, ok := finite(scale); !ok {
		return badNode(n, "scale is not finite in channel %d", i)
	}
	if i, ok := finite(shift); !ok {
		return badNode(n, "shift is not finite in channel %d", i)
	}
	mp.add(&compile.ANNNode{Name: mp.name(n.Label()), Op: compile.OpBatchNorm, Inputs: []string{x.node}, Scale: scale, Shift: shift}, x.shape, n.Outputs[0])
	return nil
}

// transpose folds a Transpose of a constant.
func transpose(n *Node, t *Tensor) (*Tensor, error) {
	r := len(t.Shape)
	perm, err := transposePerm(n, r)
	if err != nil {
		return nil, &NodeError{Op: n.Op, Node: n.Label(), Err: err}
	}
	shape := make([]int, r)
	for i, p := range perm {
		shape[i] = t.Shape[p]
	}
	out := &Tensor{DType: t.DType, Shape: shape}
	if t.DType == Float32 {
		out.Data = make([]float32, len(t.Data))
	} else {
		out.Int64s = make([]int64, len(t.Int64s))
	}
	// Strides of the source, read in the order of the output's axes.
	src := make([]int, r)
	s := 1
	for i := r - 1; i >= 0; i-- {
		src[i] = s
		s *= t.Shape[i]
	}
	idx := make([]int, r)
	for o := 0; o < t.Len(); o++ {
		off := 0
		for i, p := range perm {
			off += idx[i] * src[p]
		}
		if t.DType == Float32 {
			out.Data[o] = t.Data[off]
		} else {
			out.Int64s[o] = t.Int64s[off]
		}
		for i := r - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out, nil
}
