package onnx

import (
	"container/heap"
	"fmt"
	"io"
	"reflect"
	"slices"

	onnxgo "github.com/owulveryck/onnx-go"
	"gorgonia.org/tensor"
)

// Decode reads an ONNX model from r, which must hold the whole file
// (io.ReadAll is used, up to Options.MaxBytes). opts may be nil.
func Decode(r io.Reader, opts *Options) (*Model, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	lim := opts.limits()
	b, err := io.ReadAll(io.LimitReader(r, lim.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("onnx: reading model: %w", err)
	}
	if int64(len(b)) > lim.maxBytes {
		return nil, &LimitError{What: "file size", Value: int64(len(b)), Limit: lim.maxBytes}
	}
	return DecodeBytes(b, opts)
}

// DecodeBytes reads an ONNX model from b. opts may be nil. b is not retained.
//
// Decoding goes in three steps: a bounds-checked scan of the protobuf bytes
// that validates sizes, names, operators and graph structure before anything
// large is allocated; onnx-go's decoder, driven through a Backend that records
// the graph it builds (operators, attributes, initializer tensors, edges); and
// a cross-check of the two, then per-operator validation and shape inference.
func DecodeBytes(b []byte, opts *Options) (*Model, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	lim := opts.limits()
	if int64(len(b)) > lim.maxBytes {
		return nil, &LimitError{What: "file size", Value: int64(len(b)), Limit: lim.maxBytes}
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("onnx: empty input: %w", ErrMalformed)
	}
	h, err := scanModel(b, lim)
	if err != nil {
		return nil, err
	}
	order, err := checkHeader(h, lim)
	if err != nil {
		return nil, err
	}
	c, om, err := decodeWithOnnxGo(b)
	if err != nil {
		return nil, err
	}
	m, err := assemble(h, order, c, om)
	if err != nil {
		return nil, err
	}
	m.lim = lim
	if err := m.checkNodes(); err != nil {
		return nil, err
	}
	if err := m.inferShapes(); err != nil {
		return nil, err
	}
	return m, nil
}

// decodeWithOnnxGo runs onnx-go's decoder into a capture backend. onnx-go
// and gorgonia panic on some inputs (tensors whose data does not match their
// dims, among others); the panic becomes an error here.
func decodeWithOnnxGo(b []byte) (c *capture, om *onnxgo.Model, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, om = nil, nil
			err = fmt.Errorf("onnx: onnx-go panicked decoding the model: %v: %w", r, ErrMalformed)
		}
	}()
	c = newCapture()
	om = onnxgo.NewModel(c)
	if err := om.UnmarshalBinary(b); err != nil {
		return nil, nil, fmt.Errorf("onnx: onnx-go could not decode the model: %v: %w", err, ErrMalformed)
	}
	return c, om, nil
}

func isDefaultDomain(d string) bool { return d == "" || d == "ai.onnx" }

// checkHeader validates the scanned structure and returns the nodes'
// topological order (indices into h.graph.nodes).
func checkHeader(h *hModel, lim limits) ([]int, error) {
	opset := int64(0)
	for _, o := range h.opsets {
		if isDefaultDomain(o.domain) {
			opset = o.version
		}
	}
	if opset == 0 {
		return nil, &OpsetError{}
	}
	if opset < MinOpset || opset > MaxOpset {
		return nil, &OpsetError{Version: opset}
	}
	g := h.graph
	if g == nil {
		return nil, fmt.Errorf("onnx: model has no graph: %w", ErrMalformed)
	}
	if g.sparseInits > 0 {
		return nil, fmt.Errorf("onnx: graph has %d sparse initializers, which are not supported: %w", g.sparseInits, ErrUnsupported)
	}
	if len(g.nodes) == 0 {
		// Valid ONNX (outputs wired straight to inputs), but onnx-go refuses it.
		return nil, fmt.Errorf("onnx: graph has no nodes: %w", ErrUnsupported)
	}
	if len(g.outputs) == 0 {
		return nil, fmt.Errorf("onnx: graph declares no outputs: %w", ErrMalformed)
	}

	var total int64
	avail := map[string]bool{} // values available before any node runs
	for i := range g.inits {
		t := &g.inits[i]
		if t.name == "" {
			return nil, &TensorError{Name: "", Reason: fmt.Sprintf("initializer #%d has no name", i), Err: ErrMalformed}
		}
		if avail[t.name] {
			return nil, &TensorError{Name: t.name, Reason: "initializer defined twice", Err: ErrMalformed}
		}
		avail[t.name] = true
		if err := checkTensorHeader(t.name, t, lim, &total); err != nil {
			return nil, err
		}
	}
	for _, set := range []struct {
		what string
		vs   []hValue
	}{{"graph input", g.inputs}, {"graph output", g.outputs}, {"value_info", g.valueInf}} {
		for _, v := range set.vs {
			if err := checkValueHeader(set.what, &v, avail[v.name], lim); err != nil {
				return nil, err
			}
		}
	}
	for _, v := range g.inputs {
		avail[v.name] = true
	}

	producer := map[string]int{}
	for i := range g.nodes {
		n := &g.nodes[i]
		label := nodeLabel(n.name, n.outputs)
		if !isDefaultDomain(n.domain) || !supportedOps[n.op] {
			return nil, &UnsupportedOpError{Op: n.op, Domain: n.domain, Node: label}
		}
		if len(n.outputs) == 0 || n.outputs[0] == "" {
			return nil, &NodeError{Op: n.op, Node: label, Err: fmt.Errorf("node has no (first) output: %w", ErrMalformed)}
		}
		seen := map[string]bool{}
		for _, a := range n.attrs {
			if seen[a.name] {
				return nil, &NodeError{Op: n.op, Node: label, Err: fmt.Errorf("attribute %q given twice: %w", a.name, ErrMalformed)}
			}
			seen[a.name] = true
			if a.graphs > 0 {
				return nil, &NodeError{Op: n.op, Node: label, Err: fmt.Errorf("attribute %q holds a subgraph: %w", a.name, ErrUnsupported)}
			}
			if a.tensor != nil {
				if err := checkTensorHeader(n.outputs[0], a.tensor, lim, &total); err != nil {
					return nil, &NodeError{Op: n.op, Node: label, Err: err}
				}
			}
		}
		for _, o := range n.outputs {
			if o == "" {
				continue
			}
			if avail[o] {
				return nil, &NodeError{Op: n.op, Node: label, Err: fmt.Errorf("output %q is also a graph input or initializer: %w", o, ErrMalformed)}
			}
			if j, dup := producer[o]; dup {
				return nil, &NodeError{Op: n.op, Node: label, Err: fmt.Errorf("output %q is also produced by node %q: %w", o, nodeLabel(g.nodes[j].name, g.nodes[j].outputs), ErrMalformed)}
			}
			producer[o] = i
		}
	}
	// Dangling inputs and the dependency graph.
	deps := make([][]int, len(g.nodes)) // deps[j]: nodes that consume an output of j
	indeg := make([]int, len(g.nodes))
	for i := range g.nodes {
		n := &g.nodes[i]
		for _, in := range n.inputs {
			if in == "" || avail[in] {
				continue
			}
			j, ok := producer[in]
			if !ok {
				return nil, &DanglingInputError{Node: nodeLabel(n.name, n.outputs), Input: in}
			}
			deps[j] = append(deps[j], i)
			indeg[i]++
		}
	}
	for _, v := range g.outputs {
		if _, ok := producer[v.name]; !ok && !avail[v.name] {
			return nil, &DanglingInputError{Input: v.name}
		}
	}
	// Kahn's algorithm, taking the ready node earliest in the file first, so
	// that a file already in order keeps its order.
	ready := &intHeap{}
	for i, d := range indeg {
		if d == 0 {
			heap.Push(ready, i)
		}
	}
	order := make([]int, 0, len(g.nodes))
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		order = append(order, i)
		for _, k := range deps[i] {
			if indeg[k]--; indeg[k] == 0 {
				heap.Push(ready, k)
			}
		}
	}
	if len(order) < len(g.nodes) {
		var left []string
		for i, d := range indeg {
			if d > 0 {
				left = append(left, nodeLabel(g.nodes[i].name, g.nodes[i].outputs))
			}
		}
		return nil, &CycleError{Nodes: left}
	}
	return order, nil
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// checkTensorHeader validates a tensor's declaration against its data before
// onnx-go decodes it.
func checkTensorHeader(name string, t *hTensor, lim limits, total *int64) error {
	bad := func(err error, format string, args ...any) error {
		return &TensorError{Name: name, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	if t.external {
		return bad(ErrUnsupported, "data is stored outside the file (external data)")
	}
	if t.segmented {
		return bad(ErrUnsupported, "segmented tensors are not supported")
	}
	n, err := elements(fmt.Sprintf("tensor %q", name), t.dims, lim.maxTensor)
	if err != nil {
		return err
	}
	if n == 0 {
		return bad(ErrUnsupported, "has no elements (dims %v)", t.dims)
	}
	if *total += n; *total > lim.maxTotal {
		return &LimitError{What: "elements of all constant tensors", Value: *total, Limit: lim.maxTotal}
	}
	var size int64
	var typed int
	switch t.dtype {
	case dtFloat:
		size, typed = 4, t.nFloat
	case dtInt64:
		size, typed = 8, t.nInt64
	default:
		// onnx-go v0.5.0 reads BOOL raw data as 8 bytes per value where ONNX
		// stores 1, and does not read FLOAT16 at all; only FLOAT and INT64
		// are needed by the supported operators.
		return bad(ErrUnsupported, "data type %s is not supported (need FLOAT or INT64)", dtypeName(t.dtype))
	}
	others := t.nFloat + t.nInt32 + t.nInt64 + t.nDouble + t.nStr + t.nUint64 - typed
	switch {
	case others > 0:
		return bad(ErrMalformed, "%s tensor carries data in fields of another type", dtypeName(t.dtype))
	case t.hasRaw && typed > 0:
		return bad(ErrMalformed, "has both raw_data and typed data")
	case t.hasRaw && int64(t.rawLen) != n*size:
		return bad(ErrMalformed, "dims %v need %d bytes of raw_data, file has %d", t.dims, n*size, t.rawLen)
	case !t.hasRaw && int64(typed) != n:
		return bad(ErrMalformed, "dims %v need %d values, file has %d", t.dims, n, typed)
	}
	return nil
}

// checkValueHeader validates a declared graph value. onnx-go allocates a
// tensor of the declared shape for each one, so sizes are bounded here.
func checkValueHeader(what string, v *hValue, isInit bool, lim limits) error {
	bad := func(err error, format string, args ...any) error {
		return &TensorError{Name: v.name, Reason: what + ": " + fmt.Sprintf(format, args...), Err: err}
	}
	if v.name == "" {
		return bad(ErrMalformed, "has no name")
	}
	if !v.hasType {
		return nil
	}
	if !v.isTensor {
		return bad(ErrUnsupported, "is not a tensor (sequence, map or optional types are not supported)")
	}
	switch {
	case v.elemType == dtFloat:
	case (what == "value_info" || isInit) && v.elemType != 0 && v.elemType != 10 && v.elemType <= 15:
	default:
		return bad(ErrUnsupported, "element type %s is not supported", dtypeName(v.elemType))
	}
	var known []int64
	for _, d := range v.dims {
		if !d.known {
			continue
		}
		if d.value <= 0 {
			return bad(ErrMalformed, "declares dimension %d", d.value)
		}
		known = append(known, d.value)
	}
	_, err := elements(fmt.Sprintf("%s %q", what, v.name), known, lim.maxTensor)
	return err
}

// assemble builds the Model from what onnx-go handed the capture backend, and
// checks it against the scan: any disagreement is an error, never a guess.
func assemble(h *hModel, order []int, c *capture, om *onnxgo.Model) (*Model, error) {
	g := h.graph
	if len(c.ops) != len(g.nodes) {
		return nil, fmt.Errorf("onnx: onnx-go applied %d operations for %d nodes: %w", len(c.ops), len(g.nodes), ErrMalformed)
	}
	m := &Model{
		IRVersion:    h.irVersion,
		GraphName:    g.name,
		Producer:     h.producer,
		Initializers: make(map[string]*Tensor, len(g.inits)),
		Nodes:        make([]Node, 0, len(g.nodes)),
	}
	if h.producerVersion != "" {
		m.Producer += " " + h.producerVersion
	}
	for _, o := range h.opsets {
		if isDefaultDomain(o.domain) {
			m.Opset = int(o.version)
		}
	}
	for i := range g.inits {
		t := &g.inits[i]
		n, ok := om.GetNodeByName(t.name)
		v, _ := n.(*value)
		if !ok || v == nil || v.t == nil {
			return nil, &TensorError{Name: t.name, Reason: "onnx-go did not decode this initializer", Err: ErrMalformed}
		}
		x, err := fromGorgonia(t.name, v.t, t)
		if err != nil {
			return nil, err
		}
		m.Initializers[t.name] = x
	}
	for _, v := range g.inputs {
		if _, ok := m.Initializers[v.name]; ok {
			continue // older exporters list initializers as inputs too
		}
		m.Inputs = append(m.Inputs, valueInfo(v))
	}
	for _, v := range g.outputs {
		m.Outputs = append(m.Outputs, valueInfo(v))
	}
	for _, i := range order {
		hn := &g.nodes[i]
		op := c.ops[i]
		label := nodeLabel(hn.name, hn.outputs)
		mismatch := func(what string, got, want any) error {
			return &NodeError{Op: hn.op, Node: label, Err: fmt.Errorf("onnx-go decoded the %s as %q, the file says %q: %w", what, got, want, ErrMalformed)}
		}
		if op.op.Name != hn.op {
			return nil, mismatch("operator", op.op.Name, hn.op)
		}
		outs := make([]string, len(op.outputs))
		for j, o := range op.outputs {
			if v, ok := o.(*value); ok {
				outs[j] = v.name
			}
		}
		if !slices.Equal(outs, hn.outputs) {
			return nil, mismatch("outputs", outs, hn.outputs)
		}
		ins := c.inputsOf(op.outputs[0].ID())
		want := hn.inputs
		if len(want) == 0 {
			// onnx-go gives an input-less node (Constant) a made-up input.
			want = []string{hn.name + "/input"}
		}
		if !slices.Equal(ins, want) {
			return nil, mismatch("inputs", ins, want)
		}
		attrs, err := convertAttrs(hn, op.op.Attributes)
		if err != nil {
			return nil, &NodeError{Op: hn.op, Node: label, Err: err}
		}
		m.Nodes = append(m.Nodes, Node{
			Name:    hn.name,
			Op:      hn.op,
			Inputs:  slices.Clone(hn.inputs),
			Outputs: slices.Clone(hn.outputs),
			Attrs:   attrs,
		})
	}
	return m, nil
}

func valueInfo(v hValue) ValueInfo {
	vi := ValueInfo{Name: v.name}
	if !v.hasShape {
		return vi
	}
	vi.Shape = make([]int, len(v.dims))
	for i, d := range v.dims {
		vi.Shape[i] = -1
		if d.known {
			vi.Shape[i] = int(d.value)
		}
		if d.param != "" {
			if vi.DimParams == nil {
				vi.DimParams = make([]string, len(v.dims))
			}
			vi.DimParams[i] = d.param
		}
	}
	return vi
}

// fromGorgonia copies a tensor onnx-go decoded, checking it against the
// scanned header (which checkTensorHeader validated).
func fromGorgonia(name string, t tensor.Tensor, h *hTensor) (*Tensor, error) {
	n, _ := product(h.dims)
	shape := make([]int, len(h.dims))
	for i, d := range h.dims {
		shape[i] = int(d)
	}
	bad := func(format string, args ...any) error {
		return &TensorError{Name: name, Reason: "onnx-go decoded " + fmt.Sprintf(format, args...), Err: ErrMalformed}
	}
	switch h.dtype {
	case dtFloat:
		var data []float32
		switch d := t.Data().(type) {
		case []float32:
			data = slices.Clone(d)
		case float32:
			data = []float32{d}
		default:
			return nil, bad("%T values for a FLOAT tensor", d)
		}
		if int64(len(data)) != n {
			return nil, bad("%d values for dims %v", len(data), h.dims)
		}
		return &Tensor{DType: Float32, Shape: shape, Data: data}, nil
	case dtInt64:
		var data []int64
		switch d := t.Data().(type) {
		case []int64:
			data = slices.Clone(d)
		case int64:
			data = []int64{d}
		default:
			return nil, bad("%T values for an INT64 tensor", d)
		}
		if int64(len(data)) != n {
			return nil, bad("%d values for dims %v", len(data), h.dims)
		}
		return &Tensor{DType: Int64, Shape: shape, Int64s: data}, nil
	}
	return nil, &TensorError{Name: name, Reason: "data type " + dtypeName(h.dtype) + " is not supported", Err: ErrUnsupported}
}

// convertAttrs turns onnx-go's attribute values into Attrs, checking each
// against the type the file declares.
func convertAttrs(hn *hNode, in map[string]any) (map[string]Attr, error) {
	if len(in) != len(hn.attrs) {
		return nil, fmt.Errorf("onnx-go decoded %d attributes, the file has %d: %w", len(in), len(hn.attrs), ErrMalformed)
	}
	out := make(map[string]Attr, len(in))
	for _, ha := range hn.attrs {
		v, ok := in[ha.name]
		if !ok {
			return nil, fmt.Errorf("onnx-go lost attribute %q: %w", ha.name, ErrMalformed)
		}
		var a Attr
		var got AttrType
		switch x := v.(type) {
		case float32:
			a, got = Attr{Float: x}, AttrFloat
		case int64:
			a, got = Attr{Int: x}, AttrInt
		case string:
			a, got = Attr{String: x}, AttrString
		case []float32:
			a, got = Attr{Floats: slices.Clone(x)}, AttrFloats
		case []int64:
			a, got = Attr{Ints: slices.Clone(x)}, AttrInts
		case []string:
			a, got = Attr{Strings: slices.Clone(x)}, AttrStrings
		case tensor.Tensor:
			if ha.tensor == nil {
				return nil, fmt.Errorf("attribute %q: onnx-go decoded a tensor the file does not hold: %w", ha.name, ErrMalformed)
			}
			t, err := fromGorgonia(hn.outputs[0], x, ha.tensor)
			if err != nil {
				return nil, err
			}
			a, got = Attr{Tensor: t}, AttrTensor
		default:
			if ha.typ == 0 {
				return nil, fmt.Errorf("attribute %q has no type (AttributeProto.type is UNDEFINED): %w", ha.name, ErrMalformed)
			}
			return nil, fmt.Errorf("attribute %q: onnx-go returned a %s: %w", ha.name, reflect.TypeOf(v), ErrUnsupported)
		}
		if int64(got) != ha.typ {
			return nil, fmt.Errorf("attribute %q: onnx-go decoded a %v, the file declares type %d: %w", ha.name, got, ha.typ, ErrMalformed)
		}
		a.Type = got
		out[ha.name] = a
	}
	return out, nil
}
