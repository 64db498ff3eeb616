package onnx

import (
	"fmt"
	"math"
	"slices"
)

// opSpec describes what Decode accepts of one operator over opsets 9..17.
type opSpec struct {
	minIn, maxIn int // maxIn -1: depends on opset, see arity
	maxOut       int
	attrs        map[string]AttrType
}

var (
	poolAttrs = map[string]AttrType{"auto_pad": AttrString, "ceil_mode": AttrInt, "kernel_shape": AttrInts,
		"pads": AttrInts, "strides": AttrInts}
	convAttrs = map[string]AttrType{"auto_pad": AttrString, "dilations": AttrInts, "group": AttrInt,
		"kernel_shape": AttrInts, "pads": AttrInts, "strides": AttrInts}
)

var opSpecs = map[string]opSpec{
	"Add":                {2, 2, 1, nil},
	"AveragePool":        {1, 1, 1, with(poolAttrs, "count_include_pad", AttrInt)},
	"BatchNormalization": {5, 5, 5, map[string]AttrType{"epsilon": AttrFloat, "momentum": AttrFloat, "training_mode": AttrInt}},
	"Constant": {0, 0, 1, map[string]AttrType{"value": AttrTensor, "value_float": AttrFloat, "value_floats": AttrFloats,
		"value_int": AttrInt, "value_ints": AttrInts}},
	"Conv":              {2, 3, 1, convAttrs},
	"Dropout":           {1, 3, 2, map[string]AttrType{"ratio": AttrFloat, "seed": AttrInt}},
	"Flatten":           {1, 1, 1, map[string]AttrType{"axis": AttrInt}},
	"Gemm":              {2, 3, 1, map[string]AttrType{"alpha": AttrFloat, "beta": AttrFloat, "transA": AttrInt, "transB": AttrInt}},
	"GlobalAveragePool": {1, 1, 1, nil},
	"Identity":          {1, 1, 1, nil},
	"MatMul":            {2, 2, 1, nil},
	"MaxPool":           {1, 1, 2, with(poolAttrs, "dilations", AttrInts, "storage_order", AttrInt)},
	"Pad":               {1, 3, 1, map[string]AttrType{"mode": AttrString, "pads": AttrInts, "value": AttrFloat}},
	"Relu":              {1, 1, 1, nil},
	"Reshape":           {2, 2, 1, map[string]AttrType{"allowzero": AttrInt}},
	"Transpose":         {1, 1, 1, map[string]AttrType{"perm": AttrInts}},
}

func with(base map[string]AttrType, kv ...any) map[string]AttrType {
	m := make(map[string]AttrType, len(base)+len(kv)/2)
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(AttrType)
	}
	return m
}

// checkNodes validates every node's arity and attributes for the model's
// opset, and copies parameters that some opsets pass as constant inputs into
// attributes, so that they read the same whatever the opset (see doc.go).
func (m *Model) checkNodes() error {
	for i := range m.Nodes {
		n := &m.Nodes[i]
		if err := m.checkNode(n); err != nil {
			return &NodeError{Op: n.Op, Node: n.Label(), Err: err}
		}
	}
	return nil
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrUnsupported)...)
}

func malformed(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrMalformed)...)
}

func (m *Model) checkNode(n *Node) error {
	spec := opSpecs[n.Op]
	if len(n.Inputs) < spec.minIn || len(n.Inputs) > spec.maxIn {
		return malformed("has %d inputs, want %d to %d", len(n.Inputs), spec.minIn, spec.maxIn)
	}
	for j := 0; j < spec.minIn; j++ {
		if n.Inputs[j] == "" {
			return malformed("required input %d is empty", j)
		}
	}
	if len(n.Outputs) > spec.maxOut {
		return malformed("has %d outputs, want at most %d", len(n.Outputs), spec.maxOut)
	}
	for j, o := range n.Outputs[1:] {
		if o != "" {
			return unsupported("output %d (%q) is a training-time output", j+1, o)
		}
	}
	for name, a := range n.Attrs {
		want, ok := spec.attrs[name]
		if !ok {
			return unsupported("unknown attribute %q", name)
		}
		if a.Type != want {
			return malformed("attribute %q is a %v, want %v", name, a.Type, want)
		}
	}
	switch n.Op {
	case "Gemm", "Conv":
		if n.Op == "Conv" {
			if err := checkAutoPad(n); err != nil {
				return err
			}
		}
	case "AveragePool", "MaxPool":
		if err := checkAutoPad(n); err != nil {
			return err
		}
		if _, ok := n.Attrs["kernel_shape"]; !ok {
			return malformed("attribute kernel_shape is required")
		}
		if n.Int("storage_order", 0) != 0 {
			return unsupported("storage_order 1 (column-major indices) is not supported")
		}
		if m.Opset < 10 {
			for _, a := range []string{"ceil_mode", "dilations"} {
				if _, ok := n.Attrs[a]; ok {
					return malformed("attribute %q needs opset 10, model has %d", a, m.Opset)
				}
			}
		}
	case "BatchNormalization":
		if m.Opset < 14 {
			if _, ok := n.Attrs["training_mode"]; ok {
				return malformed("attribute training_mode needs opset 14, model has %d", m.Opset)
			}
		}
		if n.Int("training_mode", 0) != 0 {
			return unsupported("training_mode=1 (batch statistics) is not supported; export in eval mode")
		}
	case "Dropout":
		if m.Opset < 12 {
			if len(n.Inputs) > 1 {
				return malformed("ratio and training_mode are inputs from opset 12, model has %d", m.Opset)
			}
		} else {
			if _, ok := n.Attrs["ratio"]; ok {
				return malformed("attribute ratio became an input in opset 12, model has %d", m.Opset)
			}
			if len(n.Inputs) > 2 && n.Inputs[2] != "" {
				return unsupported("training_mode input is not supported (inference only)")
			}
			if len(n.Inputs) > 1 && n.Inputs[1] != "" {
				r, err := m.scalarConst(n.Inputs[1])
				if err != nil {
					return fmt.Errorf("ratio: %w", err)
				}
				n.Attrs["ratio"] = Attr{Type: AttrFloat, Float: r}
			}
		}
		if r := n.Float("ratio", 0.5); !(r >= 0 && r < 1) {
			return malformed("ratio %v is outside [0, 1)", r)
		}
	case "Pad":
		if mode := n.String("mode", "constant"); mode != "constant" {
			return unsupported("mode %q is not supported (only constant)", mode)
		}
		if m.Opset < 11 {
			if len(n.Inputs) != 1 {
				return malformed("pads is an attribute before opset 11, model has %d", m.Opset)
			}
			if _, ok := n.Attrs["pads"]; !ok {
				return malformed("attribute pads is required")
			}
		} else {
			if len(n.Inputs) < 2 || n.Inputs[1] == "" {
				return malformed("input pads is required from opset 11")
			}
			if _, ok := n.Attrs["pads"]; ok {
				return malformed("pads became an input in opset 11, model has %d", m.Opset)
			}
			if _, ok := n.Attrs["value"]; ok {
				return malformed("value became an input in opset 11, model has %d", m.Opset)
			}
			p, err := m.intsConst(n.Inputs[1])
			if err != nil {
				return fmt.Errorf("pads: %w", err)
			}
			n.Attrs["pads"] = Attr{Type: AttrInts, Ints: p}
			if len(n.Inputs) > 2 && n.Inputs[2] != "" {
				v, err := m.scalarConst(n.Inputs[2])
				if err != nil {
					return fmt.Errorf("constant_value: %w", err)
				}
				n.Attrs["value"] = Attr{Type: AttrFloat, Float: v}
			}
		}
	case "Reshape":
		if m.Opset < 14 {
			if _, ok := n.Attrs["allowzero"]; ok {
				return malformed("attribute allowzero needs opset 14, model has %d", m.Opset)
			}
		}
		s, err := m.intsConst(n.Inputs[1])
		if err != nil {
			return fmt.Errorf("shape: %w", err)
		}
		n.Attrs["shape"] = Attr{Type: AttrInts, Ints: s}
	case "Constant":
		if len(n.Attrs) != 1 {
			return malformed("needs exactly one value attribute, has %d (sparse_value and value_string(s) are not supported)", len(n.Attrs))
		}
		if m.Opset < 12 {
			if _, ok := n.Attrs["value"]; !ok {
				return malformed("value_float(s)/value_int(s) need opset 12, model has %d", m.Opset)
			}
		}
		var t *Tensor
		for name, a := range n.Attrs {
			switch name {
			case "value":
				t = a.Tensor
			case "value_float":
				t = &Tensor{DType: Float32, Shape: []int{}, Data: []float32{a.Float}}
			case "value_floats":
				t = &Tensor{DType: Float32, Shape: []int{len(a.Floats)}, Data: a.Floats}
			case "value_int":
				t = &Tensor{DType: Int64, Shape: []int{}, Int64s: []int64{a.Int}}
			case "value_ints":
				t = &Tensor{DType: Int64, Shape: []int{len(a.Ints)}, Int64s: a.Ints}
			}
		}
		if t.Len() == 0 {
			return unsupported("empty constant")
		}
		n.Attrs["value"] = Attr{Type: AttrTensor, Tensor: t}
	}
	return nil
}

func checkAutoPad(n *Node) error {
	switch ap := n.String("auto_pad", "NOTSET"); ap {
	case "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER":
		if ap != "NOTSET" {
			if _, ok := n.Attrs["pads"]; ok {
				return malformed("auto_pad %s and pads are both given", ap)
			}
		}
		return nil
	default:
		return malformed("auto_pad %q is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER", ap)
	}
}

func (m *Model) scalarConst(name string) (float32, error) {
	t, ok := m.Const(name)
	if !ok {
		return 0, unsupported("%q must be a constant (initializer or Constant node)", name)
	}
	if t.DType != Float32 || t.Len() != 1 {
		return 0, malformed("%q must be one FLOAT value, is %v %v", name, t.DType, t.Shape)
	}
	return t.Data[0], nil
}

func (m *Model) intsConst(name string) ([]int64, error) {
	t, ok := m.Const(name)
	if !ok {
		return nil, unsupported("%q must be a constant (initializer or Constant node), not computed at run time", name)
	}
	if t.DType != Int64 || len(t.Shape) != 1 {
		return nil, malformed("%q must be a 1-D INT64 tensor, is %v %v", name, t.DType, t.Shape)
	}
	return slices.Clone(t.Int64s), nil
}

// inferShapes fills m.Shapes from the declared input shapes.
func (m *Model) inferShapes() error {
	m.Shapes = make(map[string][]int, len(m.Initializers)+len(m.Nodes)+len(m.Inputs))
	for name, t := range m.Initializers {
		m.Shapes[name] = t.Shape
	}
	for _, v := range m.Inputs {
		m.Shapes[v.Name] = v.Shape
	}
	for i := range m.Nodes {
		n := &m.Nodes[i]
		in := make([][]int, len(n.Inputs))
		for j, name := range n.Inputs {
			in[j] = m.Shapes[name]
		}
		out, err := m.inferNode(n, in)
		if err != nil {
			return &NodeError{Op: n.Op, Node: n.Label(), Err: err}
		}
		if out != nil {
			if _, err := elements(fmt.Sprintf("output %q", n.Outputs[0]), knownDims(out), m.lim.maxTensor); err != nil {
				return &NodeError{Op: n.Op, Node: n.Label(), Err: err}
			}
		}
		m.Shapes[n.Outputs[0]] = out
	}
	for _, v := range m.Outputs {
		got := m.Shapes[v.Name]
		if v.Shape == nil || got == nil {
			continue
		}
		if !compatible(got, v.Shape) {
			return fmt.Errorf("onnx: graph output %q is declared %v, inferred %v: %w", v.Name, v.Shape, got, ErrMalformed)
		}
	}
	return nil
}

func knownDims(s []int) []int64 {
	k := make([]int64, 0, len(s))
	for _, d := range s {
		if d >= 0 {
			k = append(k, int64(d))
		}
	}
	return k
}

func compatible(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] >= 0 && b[i] >= 0 && a[i] != b[i] {
			return false
		}
	}
	return true
}

// inferNode returns the shape of n's first output from its inputs' shapes,
// where -1 is an unknown dimension and nil an unknown shape. Run calls it
// with concrete shapes.
func (m *Model) inferNode(n *Node, in [][]int) ([]int, error) {
	if n.Op == "Constant" {
		return n.Attrs["value"].Tensor.Shape, nil
	}
	if in[0] == nil {
		return nil, nil
	}
	x := in[0]
	switch n.Op {
	case "Relu", "Identity", "Dropout":
		return x, nil
	case "Add":
		if in[1] == nil {
			return nil, nil
		}
		return broadcast(x, in[1])
	case "Gemm":
		if in[1] == nil {
			return nil, nil
		}
		return gemmShape(n, x, in[1], optional(in, 2))
	case "MatMul":
		if in[1] == nil {
			return nil, nil
		}
		return matmulShape(x, in[1])
	case "Conv":
		if in[1] == nil {
			return nil, nil
		}
		return convShape(n, x, in[1], optional(in, 2))
	case "AveragePool", "MaxPool":
		if len(x) != 3 && len(x) != 4 {
			return nil, unsupported("input rank %d; only 1-D and 2-D pooling ([N,C,W] or [N,C,H,W]) is supported", len(x))
		}
		w, err := newWindow(n, x[2:], toInts(n.Ints("kernel_shape", nil)))
		if err != nil {
			return nil, err
		}
		return append([]int{x[0], x[1]}, w.out...), nil
	case "GlobalAveragePool":
		if len(x) < 3 {
			return nil, malformed("input rank %d, want at least 3", len(x))
		}
		out := []int{x[0], x[1]}
		for range x[2:] {
			out = append(out, 1)
		}
		return out, nil
	case "BatchNormalization":
		if len(x) < 2 {
			return nil, malformed("input rank %d, want at least 2", len(x))
		}
		for j, what := range []string{"scale", "B", "mean", "var"} {
			s := in[j+1]
			if s != nil && (len(s) != 1 || (s[0] >= 0 && x[1] >= 0 && s[0] != x[1])) {
				return nil, malformed("%s has shape %v, want [%d]", what, s, x[1])
			}
		}
		return x, nil
	case "Flatten":
		r := len(x)
		axis := int(n.Int("axis", 1))
		if axis < 0 {
			if m.Opset < 11 {
				return nil, malformed("negative axis needs opset 11, model has %d", m.Opset)
			}
			axis += r
		}
		if axis < 0 || axis > r {
			return nil, malformed("axis %d out of range for rank %d", n.Int("axis", 1), r)
		}
		return []int{dimProduct(x[:axis]), dimProduct(x[axis:])}, nil
	case "Reshape":
		return reshapeShape(x, n.Ints("shape", nil), n.Int("allowzero", 0) != 0)
	case "Transpose":
		perm, err := transposePerm(n, len(x))
		if err != nil {
			return nil, err
		}
		out := make([]int, len(x))
		for i, p := range perm {
			out[i] = x[p]
		}
		return out, nil
	case "Pad":
		pads := n.Ints("pads", nil)
		if len(pads) != 2*len(x) {
			return nil, malformed("%d pads for rank %d, want %d", len(pads), len(x), 2*len(x))
		}
		out := make([]int, len(x))
		for i, d := range x {
			if d < 0 {
				out[i] = -1
				continue
			}
			out[i] = d + int(pads[i]) + int(pads[i+len(x)])
			if out[i] <= 0 || math.Abs(float64(pads[i]))+math.Abs(float64(pads[i+len(x)])) > 1<<30 {
				return nil, malformed("pads %v leave dimension %d with size %d", pads, i, out[i])
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("operator %s has no shape rule: %w", n.Op, ErrUnsupported)
}

func optional(in [][]int, i int) []int {
	if i < len(in) {
		return in[i]
	}
	return nil
}

func toInts(v []int64) []int {
	if v == nil {
		return nil // absent stays absent: Transpose without perm reverses
	}
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

func dimProduct(s []int) int {
	p := 1
	for _, d := range s {
		if d < 0 {
			return -1
		}
		p *= d
	}
	return p
}

// mergeDim unifies two dimensions that must be equal, where -1 is unknown.
func mergeDim(a, b int) (int, bool) {
	switch {
	case a < 0:
		return b, true
	case b < 0:
		return a, true
	}
	return a, a == b
}

// broadcast returns the shape of numpy-style multidirectional broadcasting.
func broadcast(a, b []int) ([]int, error) {
	r := max(len(a), len(b))
	out := make([]int, r)
	for i := 0; i < r; i++ {
		da, db := 1, 1
		if j := i - (r - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (r - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == 1:
			out[i] = db
		case db == 1:
			out[i] = da
		default:
			d, ok := mergeDim(da, db)
			if !ok {
				return nil, malformed("shapes %v and %v do not broadcast", a, b)
			}
			out[i] = d
		}
	}
	return out, nil
}

func gemmShape(n *Node, a, b, c []int) ([]int, error) {
	if len(a) != 2 || len(b) != 2 {
		return nil, malformed("A %v and B %v must both be 2-D", a, b)
	}
	M, K := a[0], a[1]
	if n.Int("transA", 0) != 0 {
		M, K = K, M
	}
	K2, N := b[0], b[1]
	if n.Int("transB", 0) != 0 {
		K2, N = N, K2
	}
	if _, ok := mergeDim(K, K2); !ok {
		return nil, malformed("A %v and B %v disagree on K (transA=%d, transB=%d)", a, b, n.Int("transA", 0), n.Int("transB", 0))
	}
	out := []int{M, N}
	if c != nil {
		bc, err := broadcast(out, c)
		if err != nil || len(c) > 2 || !compatible(bc, out) {
			return nil, malformed("C %v does not broadcast to [M, N] = %v", c, out)
		}
	}
	return out, nil
}

func matmulShape(a, b []int) ([]int, error) {
	if len(a) < 2 || len(b) < 2 {
		return nil, unsupported("1-D MatMul operands (%v, %v) are not supported", a, b)
	}
	if _, ok := mergeDim(a[len(a)-1], b[len(b)-2]); !ok {
		return nil, malformed("A %v and B %v disagree on K", a, b)
	}
	batch, err := broadcast(a[:len(a)-2], b[:len(b)-2])
	if err != nil {
		return nil, err
	}
	return append(batch, a[len(a)-2], b[len(b)-1]), nil
}

func convShape(n *Node, x, w, bias []int) ([]int, error) {
	if len(x) != 3 && len(x) != 4 {
		return nil, unsupported("input rank %d; only 1-D and 2-D convolution ([N,C,W] or [N,C,H,W]) is supported", len(x))
	}
	if len(w) != len(x) {
		return nil, malformed("weight %v has rank %d, input %v has rank %d", w, len(w), x, len(x))
	}
	g := int(n.Int("group", 1))
	if g < 1 {
		return nil, malformed("group %d < 1", g)
	}
	if w[0] >= 0 && w[0]%g != 0 {
		return nil, malformed("%d output channels are not divisible by group %d", w[0], g)
	}
	if x[1] >= 0 && w[1] >= 0 && x[1] != w[1]*g {
		return nil, malformed("input has %d channels, weight %v with group %d expects %d", x[1], w, g, w[1]*g)
	}
	if bias != nil && (len(bias) != 1 || (bias[0] >= 0 && w[0] >= 0 && bias[0] != w[0])) {
		return nil, malformed("bias %v, want [%d]", bias, w[0])
	}
	k := w[2:]
	if ks, ok := n.Attrs["kernel_shape"]; ok && !slices.Equal(toInts(ks.Ints), k) {
		return nil, malformed("kernel_shape %v does not match weight %v", ks.Ints, w)
	}
	for _, d := range k {
		if d < 0 {
			return nil, unsupported("kernel size unknown (weight %v)", w)
		}
	}
	win, err := newWindow(n, x[2:], k)
	if err != nil {
		return nil, err
	}
	return append([]int{x[0], w[0]}, win.out...), nil
}

// window is a resolved sliding window over the spatial dimensions.
type window struct {
	k, s, d, pb, pe, out []int
}

func newWindow(n *Node, in, k []int) (*window, error) {
	r := len(in)
	if len(k) != r {
		return nil, malformed("kernel_shape %v has %d dimensions, input has %d spatial", k, len(k), r)
	}
	get := func(name string, def int) ([]int, error) {
		v := n.Ints(name, nil)
		if v == nil {
			out := make([]int, r)
			for i := range out {
				out[i] = def
			}
			return out, nil
		}
		if len(v) != r {
			return nil, malformed("%s %v has %d values, want %d", name, v, len(v), r)
		}
		return toInts(v), nil
	}
	w := &window{k: k}
	var err error
	if w.s, err = get("strides", 1); err != nil {
		return nil, err
	}
	if w.d, err = get("dilations", 1); err != nil {
		return nil, err
	}
	pads := n.Ints("pads", nil)
	if pads == nil {
		pads = make([]int64, 2*r)
	}
	if len(pads) != 2*r {
		return nil, malformed("pads %v has %d values, want %d", pads, len(pads), 2*r)
	}
	w.pb, w.pe = toInts(pads[:r]), toInts(pads[r:])
	ceil := n.Int("ceil_mode", 0) != 0
	autoPad := n.String("auto_pad", "NOTSET")
	w.out = make([]int, r)
	for i := 0; i < r; i++ {
		if k[i] < 1 || w.s[i] < 1 || w.d[i] < 1 || k[i] > 1<<20 || w.s[i] > 1<<20 || w.d[i] > 1<<20 {
			return nil, malformed("kernel %v, strides %v, dilations %v must be in 1..2^20", k, w.s, w.d)
		}
		if w.pb[i] < 0 || w.pe[i] < 0 || w.pb[i] > 1<<20 || w.pe[i] > 1<<20 {
			return nil, malformed("pads %v must be in 0..2^20", pads)
		}
		if in[i] < 0 {
			w.out[i] = -1
			continue
		}
		ext := (k[i]-1)*w.d[i] + 1
		switch autoPad {
		case "VALID":
			w.pb[i], w.pe[i] = 0, 0
		case "SAME_UPPER", "SAME_LOWER":
			o := (in[i] + w.s[i] - 1) / w.s[i]
			total := max(0, (o-1)*w.s[i]+ext-in[i])
			if autoPad == "SAME_UPPER" {
				w.pb[i], w.pe[i] = total/2, total-total/2
			} else {
				w.pb[i], w.pe[i] = total-total/2, total/2
			}
		}
		span := in[i] + w.pb[i] + w.pe[i] - ext
		if span < 0 {
			return nil, malformed("window of extent %d is larger than padded input %d (dimension %d)", ext, in[i]+w.pb[i]+w.pe[i], i)
		}
		if ceil {
			w.out[i] = (span+w.s[i]-1)/w.s[i] + 1
			if (w.out[i]-1)*w.s[i] >= in[i]+w.pb[i] {
				w.out[i]--
			}
		} else {
			w.out[i] = span/w.s[i] + 1
		}
	}
	return w, nil
}

func reshapeShape(x []int, target []int64, allowZero bool) ([]int, error) {
	out := make([]int, len(target))
	infer := -1
	for i, t := range target {
		switch {
		case t == -1:
			if infer >= 0 {
				return nil, malformed("shape %v has more than one -1", target)
			}
			infer = i
		case t == 0 && !allowZero:
			if i >= len(x) {
				return nil, malformed("shape %v copies dimension %d of a rank-%d input", target, i, len(x))
			}
			out[i] = x[i]
		case t < 0 || t > 1<<40:
			return nil, malformed("shape %v has invalid dimension %d", target, t)
		case t == 0:
			return nil, unsupported("shape %v makes an empty tensor", target)
		default:
			out[i] = int(t)
		}
	}
	total := dimProduct(x)
	if infer >= 0 {
		rest := dimProduct(slices.Delete(slices.Clone(out), infer, infer+1))
		switch {
		case total < 0 || rest < 0:
			out[infer] = -1
		case rest == 0 || total%rest != 0:
			return nil, malformed("cannot reshape %v to %v", x, target)
		default:
			out[infer] = total / rest
		}
	}
	if p := dimProduct(out); total >= 0 && p >= 0 && p != total {
		return nil, malformed("cannot reshape %v (%d elements) to %v", x, total, target)
	}
	return out, nil
}

func transposePerm(n *Node, r int) ([]int, error) {
	perm := toInts(n.Ints("perm", nil))
	if perm == nil {
		for i := r - 1; i >= 0; i-- {
			perm = append(perm, i)
		}
	}
	if len(perm) != r {
		return nil, malformed("perm %v for rank %d", perm, r)
	}
	seen := make([]bool, r)
	for _, p := range perm {
		if p < 0 || p >= r || seen[p] {
			return nil, malformed("perm %v is not a permutation of 0..%d", perm, r-1)
		}
		seen[p] = true
	}
	return perm, nil
}
