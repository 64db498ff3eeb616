package nir

import (
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/scigolib/hdf5"

	"github.com/neuro-go/neuro/snn"
)

// Options control Read. The zero value reads NIR's continuous-time
// parameters as they are.
type Options struct {
	// Euler converts the time constants of LI, LIF, CubaLI and CubaLIF so
	// that snn's exact integration with step Dt reproduces the forward-Euler
	// update that NIR's reference importers (Norse, snnTorch, nirtorch)
	// apply with that step: a per-step decay of 1 − Dt/τ becomes
	// τ' = −Dt/ln(1 − Dt/τ). See docs/nir.md for CubaLIF's R. Default off.
	Euler bool
	// Dt is the simulation step Euler converts for, in seconds. Required
	// (> 0) when Euler is set, ignored otherwise.
	Dt float64
	// MaxBytes bounds the file size and every decoded dataset. Default
	// 1 GiB.
	MaxBytes int64
	// Logger receives warnings (ignored metadata, converted conventions).
	// Default: silent.
	Logger *slog.Logger
}

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	if o.Euler && !(o.Dt > 0 && !math.IsInf(o.Dt, 0)) {
		return fmt.Errorf("nir: Options.Euler needs a positive Dt, have %v", o.Dt)
	}
	if o.MaxBytes < 0 {
		return fmt.Errorf("nir: Options.MaxBytes is negative (%d)", o.MaxBytes)
	}
	return nil
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = 1 << 30
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// ReadFile reads the NIR file at path.
func ReadFile(path string, opts *Options) (*snn.Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("nir: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("nir: %w", err)
	}
	return Read(f, st.Size(), opts)
}

// Read decodes a NIR file of size bytes into a validated graph. Nested
// NIRGraph nodes are flattened: their nodes get qualified names ("lif1.lif")
// and their Input and Output nodes are removed, the edges through them
// joined.
func Read(r io.ReaderAt, size int64, opts *Options) (*snn.Graph, error) {
	g, warns, err := read(r, size, opts)
	if err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	for _, w := range warns {
		o.Logger.Warn(w)
	}
	return g, nil
}

// read is Read returning its warnings, for the compile registration.
func read(r io.ReaderAt, size int64, opts *Options) (g *snn.Graph, warns []string, err error) {
	if err := opts.Validate(); err != nil {
		return nil, nil, err
	}
	o := opts.withDefaults()
	defer guard(&err)
	h, err := openH5(r, size, o.MaxBytes)
	if err != nil {
		return nil, nil, err
	}
	defer h.Close()
	d := &decoder{h: h, opts: o, g: snn.NewGraph()}
	root := children(h.f.Root())
	if v, ok := root["version"].(*hdf5.Dataset); ok {
		if s, err := d.str("", "version", v); err == nil {
			d.version = s
		}
	}
	if d.version == "" {
		d.warn("file has no version dataset")
	}
	top, ok := root["node"].(*hdf5.Group)
	if !ok {
		return nil, nil, invalidf("", "node", "the file has no group named node")
	}
	in, _, err := d.graph("", top, 0)
	if err != nil {
		return nil, nil, err
	}
	_ = in
	if err := d.g.Validate(); err != nil {
		return nil, nil, fmt.Errorf("nir: the graph read does not validate: %w", err)
	}
	return d.g, d.warns, nil
}

type decoder struct {
	h       *h5file
	opts    Options
	g       *snn.Graph
	version string
	warns   []string
}

func (d *decoder) warn(format string, args ...any) {
	d.warns = append(d.warns, "nir: "+fmt.Sprintf(format, args...))
}

const maxNesting = 32

// graph adds the nodes of a NIRGraph group under prefix and returns, for
// the graph as a node of its parent, the qualified names of the nodes its
// incoming edges lead to (its Input nodes) and leave from (its Output
// nodes).
func (d *decoder) graph(prefix string, grp *hdf5.Group, depth int) (ins, outs []string, err error) {
	gname := strings.TrimSuffix(prefix, ".")
	if depth > maxNesting {
		return nil, nil, invalidf(gname, "", "NIRGraph nested more than %d deep", maxNesting)
	}
	m := children(grp)
	nodesG, ok := m["nodes"].(*hdf5.Group)
	if !ok {
		return nil, nil, invalidf(gname, "nodes", "missing NIRGraph group nodes")
	}
	members := children(nodesG)
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	sort.Strings(names)

	// Per child: the names an edge into it / out of it resolves to.
	into := map[string][]string{}
	from := map[string][]string{}
	sub := map[string]bool{}
	var myIns, myOuts []string
	for _, name := range names {
		q := prefix + name
		if strings.ContainsAny(name, "/") || name == "" {
			return nil, nil, invalidf(q, "", "bad node name")
		}
		ng, ok := members[name].(*hdf5.Group)
		if !ok {
			return nil, nil, invalidf(q, "", "not an HDF5 group")
		}
		nm := children(ng)
		td, ok := nm["type"].(*hdf5.Dataset)
		if !ok {
			return nil, nil, invalidf(q, "type", "missing")
		}
		typ, err := d.str(q, "type", td)
		if err != nil {
			return nil, nil, err
		}
		if typ == "NIRGraph" {
			i, o, err := d.graph(q+".", ng, depth+1)
			if err != nil {
				return nil, nil, err
			}
			into[name], from[name], sub[name] = i, o, true
			continue
		}
		if _, dup := d.g.Nodes[q]; dup {
			return nil, nil, invalidf(q, "", "two nodes have this qualified name")
		}
		n, err := d.node(q, typ, nm)
		if err != nil {
			return nil, nil, err
		}
		d.g.Add(q, n)
		into[name], from[name] = []string{q}, []string{q}
		switch {
		case typ == "Input" && prefix != "":
			myIns = append(myIns, q)
		case typ == "Output" && prefix != "":
			myOuts = append(myOuts, q)
		}
	}

	// Edges.
	var edges [][2]string
	if ed, ok := m["edges"].(*hdf5.Dataset); ok {
		v, err := d.h.read(gname, "edges", ed)
		if err != nil {
			return nil, nil, err
		}
		if len(v.strs) > 0 || len(v.nums) > 0 {
			if len(v.dims) != 2 || v.dims[1] != 2 || v.strs == nil {
				return nil, nil, invalidf(gname, "edges", "want an N x 2 array of strings, have shape %v", v.dims)
			}
			for i := 0; i < len(v.strs); i += 2 {
				edges = append(edges, [2]string{v.strs[i], v.strs[i+1]})
			}
		}
	} else {
		return nil, nil, invalidf(gname, "edges", "missing")
	}
	resolve := func(end string, m map[string][]string, i int, which string) ([]string, error) {
		if r, ok := m[end]; ok {
			return r, nil
		}
		// An edge may name a node inside a nested graph: "sub.input".
		if head, _, ok := strings.Cut(end, "."); ok && sub[head] {
			q := prefix + end
			if _, ok := d.g.Nodes[q]; ok {
				return []string{q}, nil
			}
		}
		return nil, invalidf(gname, "edges", "edge %d (%q -> %q): no node %q", i, edges[i][0], edges[i][1], end)
	}
	for i, e := range edges {
		srcs, err := resolve(e[0], from, i, "source")
		if err != nil {
			return nil, nil, err
		}
		dsts, err := resolve(e[1], into, i, "target")
		if err != nil {
			return nil, nil, err
		}
		for _, s := range srcs {
			for _, t := range dsts {
				d.g.Connect(s, t)
			}
		}
	}
	if prefix == "" {
		d.removeNestedIO()
	}
	return myIns, myOuts, nil
}

// removeNestedIO deletes the Input and Output nodes of nested graphs (those
// with a dotted name), joining every edge into one with every edge out.
func (d *decoder) removeNestedIO() {
	for _, name := range d.g.Names() {
		k := d.g.Nodes[name].Kind()
		if !strings.Contains(name, ".") || (k != snn.KindInput && k != snn.KindOutput) {
			continue
		}
		var preds, succs []string
		var keep []snn.Edge
		for _, e := range d.g.Edges {
			switch {
			case e.To == name && e.From == name:
			case e.To == name:
				preds = append(preds, e.From)
			case e.From == name:
				succs = append(succs, e.To)
			default:
				keep = append(keep, e)
			}
		}
		for _, p := range preds {
			for _, s := range succs {
				keep = append(keep, snn.Edge{From: p, To: s})
			}
		}
		d.g.Edges = keep
		delete(d.g.Nodes, name)
	}
	// Deduplicate edges that joining produced twice, keeping the order.
	seen := map[snn.Edge]bool{}
	out := d.g.Edges[:0]
	for _, e := range d.g.Edges {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	d.g.Edges = out
}

func (d *decoder) str(node, field string, ds *hdf5.Dataset) (string, error) {
	v, err := d.h.read(node, field, ds)
	if err != nil {
		return "", err
	}
	if len(v.strs) != 1 {
		return "", invalidf(node, field, "want one string, have shape %v", v.dims)
	}
	return v.strs[0], nil
}

// fields reads the datasets of a node group on demand.
type fields struct {
	d    *decoder
	node string
	m    map[string]hdf5.Object
}

func (f fields) has(name string) bool { _, ok := f.m[name].(*hdf5.Dataset); return ok }

func (f fields) get(name string) (value, error) {
	ds, ok := f.m[name].(*hdf5.Dataset)
	if !ok {
		if _, isGroup := f.m[name].(*hdf5.Group); isGroup {
			return value{}, invalidf(f.node, name, "a group where a dataset was expected")
		}
		return value{}, invalidf(f.node, name, "missing")
	}
	v, err := f.d.h.read(f.node, name, ds)
	if err != nil {
		return value{}, err
	}
	if v.strs != nil {
		return value{}, invalidf(f.node, name, "strings where numbers were expected")
	}
	for i, x := range v.nums {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return value{}, invalidf(f.node, name, "element %d is %v", i, x)
		}
	}
	return v, nil
}

// floats returns a parameter array and its shape (nil for a scalar).
func (f fields) floats(name string) ([]float64, []int, error) {
	v, err := f.get(name)
	if err != nil {
		return nil, nil, err
	}
	if len(v.nums) == 0 {
		return nil, nil, invalidf(f.node, name, "empty array")
	}
	return v.nums, v.dims, nil
}

func (f fields) float32s(name string) ([]float32, []int, error) {
	xs, dims, err := f.floats(name)
	if err != nil {
		return nil, nil, err
	}
	out := make([]float32, len(xs))
	for i, x := range xs {
		if math.Abs(x) > math.MaxFloat32 {
			return nil, nil, invalidf(f.node, name, "element %d (%v) overflows float32", i, x)
		}
		out[i] = float32(x)
	}
	return out, dims, nil
}

func (f fields) tensor(name string) (*snn.Tensor, error) {
	xs, dims, err := f.float32s(name)
	if err != nil {
		return nil, err
	}
	return &snn.Tensor{Shape: slices.Clone(dims), Data: xs}, nil
}

// ints reads an integer field; n is the number of values wanted (a scalar
// is repeated), or 0 for "as many as stored".
func (f fields) ints(name string, n int) ([]int, error) {
	v, err := f.get(name)
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(v.nums))
	for i, x := range v.nums {
		if x != math.Trunc(x) || math.Abs(x) > 1<<40 {
			return nil, invalidf(f.node, name, "element %d is %v, want an integer", i, x)
		}
		out = append(out, int(x))
	}
	if len(v.dims) > 1 {
		return nil, invalidf(f.node, name, "rank %d, want a scalar or a vector", len(v.dims))
	}
	switch {
	case n == 0:
	case len(out) == 1 && n > 1:
		for len(out) < n {
			out = append(out, out[0])
		}
	case len(out) != n:
		return nil, invalidf(f.node, name, "%d values, want 1 or %d", len(out), n)
	}
	return out, nil
}

func (f fields) int1(name string) (int, error) {
	v, err := f.ints(name, 1)
	if err != nil {
		return 0, err
	}
	return v[0], nil
}

// padding reads a convolution's padding: integers, or NIR's strings
// "valid" (none) and "same" (output as large as the input at stride 1).
func (f fields) padding(n int, kernel, dilation, stride []int) ([]int, error) {
	ds, ok := f.m["padding"].(*hdf5.Dataset)
	if !ok {
		return nil, invalidf(f.node, "padding", "missing")
	}
	v, err := f.d.h.read(f.node, "padding", ds)
	if err != nil {
		return nil, err
	}
	if v.strs == nil {
		return f.ints("padding", n)
	}
	if len(v.strs) != 1 {
		return nil, invalidf(f.node, "padding", "want one string, have %d", len(v.strs))
	}
	pad := make([]int, n)
	switch v.strs[0] {
	case "valid":
		return pad, nil
	case "same":
		for i := range pad {
			if stride[i] != 1 {
				return nil, unsupportedf(f.node, "padding", `"same" with stride %v (PyTorch allows it only at stride 1)`, stride)
			}
			t := dilation[i] * (kernel[i] - 1)
			if t%2 != 0 {
				return nil, unsupportedf(f.node, "padding", `"same" with kernel %v and dilation %v needs asymmetric padding, which snn does not have`, kernel, dilation)
			}
			pad[i] = t / 2
		}
		return pad, nil
	}
	return nil, invalidf(f.node, "padding", "string %q, want \"same\" or \"valid\"", v.strs[0])
}

// params reads the parameter arrays of an element-wise node. They must
// share one shape (scalars broadcast); it becomes the node's Shape, and
// the arrays are stored flat.
type params struct {
	f     fields
	shape []int
	err   error
}

func (p *params) get(name string, def *float64) []float64 {
	if p.err != nil {
		return nil
	}
	if def != nil && !p.f.has(name) {
		return []float64{*def}
	}
	xs, dims, err := p.f.floats(name)
	if err != nil {
		p.err = err
		return nil
	}
	if len(xs) > 1 {
		switch {
		case p.shape == nil:
			p.shape = slices.Clone(dims)
		case !slices.Equal(p.shape, dims):
			p.err = invalidf(p.f.node, name, "shape %v, other parameters have shape %v", dims, p.shape)
		}
	}
	return xs
}

var zero, one = 0.0, 1.0

func (d *decoder) node(q, typ string, m map[string]hdf5.Object) (snn.Node, error) {
	f := fields{d: d, node: q, m: m}
	if _, ok := m["metadata"]; ok {
		d.warn("node %q: metadata ignored", q)
	}
	switch typ {
	case "Input", "Output":
		shape, err := f.ints("shape", 0)
		if err != nil {
			return nil, err
		}
		if typ == "Input" {
			return &snn.Input{Shape: shape}, nil
		}
		return &snn.Output{Shape: shape}, nil
	case "Affine":
		w, err := f.tensor("weight")
		if err != nil {
			return nil, err
		}
		b, _, err := f.float32s("bias")
		if err != nil {
			return nil, err
		}
		if len(w.Shape) != 2 {
			return nil, unsupportedf(q, "weight", "rank %d; snn's Affine takes a matrix", len(w.Shape))
		}
		return &snn.Affine{Weight: w, Bias: b}, nil
	case "Linear":
		w, err := f.tensor("weight")
		if err != nil {
			return nil, err
		}
		if len(w.Shape) != 2 {
			return nil, unsupportedf(q, "weight", "rank %d; snn's Linear takes a matrix", len(w.Shape))
		}
		return &snn.Linear{Weight: w}, nil
	case "Scale":
		s, dims, err := f.float32s("scale")
		if err != nil {
			return nil, err
		}
		n := &snn.Scale{Scale: s}
		if len(dims) > 1 {
			n.Shape = dims
		}
		return n, nil
	case "Conv1d", "Conv2d":
		return d.conv(f, typ == "Conv2d")
	case "Flatten":
		s, err := f.int1("start_dim")
		if err != nil {
			return nil, err
		}
		e, err := f.int1("end_dim")
		if err != nil {
			return nil, err
		}
		n := &snn.Flatten{StartDim: s, EndDim: e}
		if f.has("input_type") {
			if n.InputShape, err = f.ints("input_type", 0); err != nil {
				return nil, err
			}
		}
		return n, nil
	case "SumPool2d", "AvgPool2d":
		var k, s, p [2]int
		for _, fld := range []struct {
			name string
			dst  *[2]int
		}{{"kernel_size", &k}, {"stride", &s}, {"padding", &p}} {
			v, err := f.ints(fld.name, 2)
			if err != nil {
				return nil, err
			}
			*fld.dst = [2]int{v[0], v[1]}
		}
		if typ == "SumPool2d" {
			return &snn.SumPool2d{Kernel: k, Stride: s, Padding: p}, nil
		}
		return &snn.AvgPool2d{Kernel: k, Stride: s, Padding: p}, nil
	}

	p := &params{f: f}
	var n snn.Node
	switch typ {
	case "Delay":
		n = &snn.Delay{Delay: p.get("delay", nil)}
	case "Threshold":
		n = &snn.Threshold{Threshold: p.get("threshold", nil)}
	case "I":
		n = &snn.I{R: p.get("r", nil)}
	case "IF":
		n = &snn.IF{R: p.get("r", nil), VThreshold: p.get("v_threshold", nil), VReset: p.get("v_reset", &zero)}
	case "LI":
		n = &snn.LI{Tau: p.get("tau", nil), R: p.get("r", nil), VLeak: p.get("v_leak", nil)}
	case "LIF":
		n = &snn.LIF{Tau: p.get("tau", nil), R: p.get("r", nil), VLeak: p.get("v_leak", nil),
			VThreshold: p.get("v_threshold", nil), VReset: p.get("v_reset", &zero)}
	case "CubaLI":
		n = &snn.CubaLI{TauSyn: p.get("tau_syn", nil), TauMem: p.get("tau_mem", nil), R: p.get("r", nil),
			VLeak: p.get("v_leak", nil), WIn: p.get("w_in", &one)}
	case "CubaLIF":
		n = &snn.CubaLIF{TauSyn: p.get("tau_syn", nil), TauMem: p.get("tau_mem", nil), R: p.get("r", nil),
			VLeak: p.get("v_leak", nil), VThreshold: p.get("v_threshold", nil), VReset: p.get("v_reset", &zero),
			WIn: p.get("w_in", &one)}
	default:
		return nil, unsupportedf(q, "type", "unknown NIR node type %q", typ)
	}
	if p.err != nil {
		return nil, p.err
	}
	setShape(n, p.shape)
	if d.opts.Euler {
		if err := toExact(q, n, d.opts.Dt); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func setShape(n snn.Node, shape []int) {
	switch n := n.(type) {
	case *snn.Delay:
		n.Shape = shape
	case *snn.Threshold:
		n.Shape = shape
	case *snn.I:
		n.Shape = shape
	case *snn.IF:
		n.Shape = shape
	case *snn.LI:
		n.Shape = shape
	case *snn.LIF:
		n.Shape = shape
	case *snn.CubaLI:
		n.Shape = shape
	case *snn.CubaLIF:
		n.Shape = shape
	}
}

func (d *decoder) conv(f fields, twoD bool) (snn.Node, error) {
	q := f.node
	w, err := f.tensor("weight")
	if err != nil {
		return nil, err
	}
	nd := 1
	if twoD {
		nd = 2
	}
	if len(w.Shape) != nd+2 {
		return nil, invalidf(q, "weight", "rank %d, want %d", len(w.Shape), nd+2)
	}
	stride, err := f.ints("stride", nd)
	if err != nil {
		return nil, err
	}
	dil, err := f.ints("dilation", nd)
	if err != nil {
		return nil, err
	}
	groups, err := f.int1("groups")
	if err != nil {
		return nil, err
	}
	pad, err := f.padding(nd, w.Shape[2:], dil, stride)
	if err != nil {
		return nil, err
	}
	var bias []float32
	if f.has("bias") {
		if bias, _, err = f.float32s("bias"); err != nil {
			return nil, err
		}
	}
	if !f.has("input_shape") {
		return nil, unsupportedf(q, "input_shape", "missing; snn needs the spatial input shape of a convolution")
	}
	spatial, err := f.ints("input_shape", nd)
	if err != nil {
		return nil, err
	}
	if groups < 1 || groups > 1<<20 {
		return nil, invalidf(q, "groups", "%d", groups)
	}
	// NIR's input_shape is spatial only; snn's InputShape leads with the
	// channels, which the weight gives: in_channels/groups × groups.
	in := append([]int{w.Shape[1] * groups}, spatial...)
	if !twoD {
		return &snn.Conv1d{Weight: w, Bias: bias, Stride: stride[0], Padding: pad[0], Dilation: dil[0],
			Groups: groups, InputShape: in}, nil
	}
	return &snn.Conv2d{Weight: w, Bias: bias, Stride: [2]int{stride[0], stride[1]},
		Padding: [2]int{pad[0], pad[1]}, Dilation: [2]int{dil[0], dil[1]}, Groups: groups, InputShape: in}, nil
}
