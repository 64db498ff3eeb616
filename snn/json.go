package snn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// GraphFormatVersion is the version of the JSON form that EncodeJSON writes.
// DecodeJSON refuses newer versions.
const GraphFormatVersion = 1

// JSONOptions control where weight tensors live in the JSON form. The zero
// value writes them inline.
type JSONOptions struct {
	// External, when set, is called for every weight tensor on encoding; the
	// tensor is written as {"shape":[...],"ref":REF} with the returned
	// reference instead of inline data.
	External func(node, field string, t *Tensor) (ref string, err error)
	// Resolve, when set, is called on decoding for every tensor written by
	// reference. The shape has already been checked against MaxElements.
	Resolve func(ref string, shape []int) (*Tensor, error)
}

type graphJSON struct {
	Format  string                     `json:"format"`
	Version int                        `json:"version"`
	Nodes   map[string]json.RawMessage `json:"nodes"`
	Edges   [][2]string                `json:"edges"`
}

const graphFormatName = "neuro.snn.graph"

// tensorJSON is the wire form of a Tensor.
type tensorJSON struct {
	Shape []int     `json:"shape"`
	Data  []float32 `json:"data,omitempty"`
	Ref   string    `json:"ref,omitempty"`
}

// MarshalJSON writes the graph with inline weights. Node and edge order is
// deterministic, so the output suits golden files.
func (g *Graph) MarshalJSON() ([]byte, error) { return EncodeJSON(g, nil) }

// UnmarshalJSON reads a graph with inline weights.
func (g *Graph) UnmarshalJSON(b []byte) error {
	d, err := DecodeJSON(b, nil)
	if err != nil {
		return err
	}
	*g = *d
	return nil
}

// EncodeJSON writes the JSON form of g.
func EncodeJSON(g *Graph, opts *JSONOptions) ([]byte, error) {
	if opts == nil {
		opts = &JSONOptions{}
	}
	out := graphJSON{Format: graphFormatName, Version: GraphFormatVersion, Nodes: map[string]json.RawMessage{}, Edges: [][2]string{}}
	for _, name := range g.Names() {
		n := g.Nodes[name]
		if n == nil {
			return nil, fmt.Errorf("snn: node %q is nil", name)
		}
		enc := wireNode(n)
		var ferr error
		enc.tensors(func(field string, t **Tensor) {
			if ferr != nil || *t == nil {
				return
			}
			w := &tensorJSON{Shape: (*t).Shape, Data: (*t).Data}
			if opts.External != nil {
				ref, err := opts.External(name, field, *t)
				if err != nil {
					ferr = fmt.Errorf("snn: node %q field %s: %w", name, field, err)
					return
				}
				w = &tensorJSON{Shape: (*t).Shape, Ref: ref}
			}
			*t = &Tensor{wire: w}
		})
		if ferr != nil {
			return nil, ferr
		}
		b, err := json.Marshal(withKind(enc))
		if err != nil {
			return nil, fmt.Errorf("snn: encoding node %q: %w", name, err)
		}
		out.Nodes[name] = b
	}
	for _, e := range g.Edges {
		out.Edges = append(out.Edges, [2]string{e.From, e.To})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("snn: encoding graph: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeJSON reads the JSON form of a graph. It checks the structure
// (known kinds and fields, tensor sizes) but does not validate the graph:
// call Validate, or let NewSimulator do it.
func DecodeJSON(data []byte, opts *JSONOptions) (*Graph, error) {
	if opts == nil {
		opts = &JSONOptions{}
	}
	var in graphJSON
	if err := strictUnmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("snn: decoding graph: %w", err)
	}
	if in.Format != graphFormatName {
		return nil, fmt.Errorf("snn: decoding graph: format %q, want %q", in.Format, graphFormatName)
	}
	if in.Version < 1 || in.Version > GraphFormatVersion {
		return nil, fmt.Errorf("snn: decoding graph: version %d not supported (this build reads up to %d)", in.Version, GraphFormatVersion)
	}
	g := NewGraph()
	for name, raw := range in.Nodes {
		var k struct {
			Kind Kind `json:"kind"`
		}
		if err := json.Unmarshal(raw, &k); err != nil {
			return nil, fmt.Errorf("snn: node %q: %w", name, err)
		}
		n, ok := newNode(k.Kind)
		if !ok {
			return nil, &FieldError{Node: name, Field: "kind", Msg: fmt.Sprintf("unknown node kind %q", k.Kind)}
		}
		w := withKind(n)
		if err := strictUnmarshal(raw, w); err != nil {
			return nil, fmt.Errorf("snn: node %q: %w", name, err)
		}
		var ferr error
		n.tensors(func(field string, t **Tensor) {
			if ferr != nil || *t == nil {
				return
			}
			r, err := resolveTensor((*t).wire, opts)
			if err != nil {
				ferr = &FieldError{Node: name, Field: field, Msg: err.Error()}
				return
			}
			*t = r
		})
		if ferr != nil {
			return nil, ferr
		}
		g.Nodes[name] = n
	}
	for _, e := range in.Edges {
		g.Edges = append(g.Edges, Edge{e[0], e[1]})
	}
	return g, nil
}

func resolveTensor(w *tensorJSON, opts *JSONOptions) (*Tensor, error) {
	if w == nil {
		return nil, errors.New("missing tensor")
	}
	n, err := numElements(w.Shape)
	if err != nil {
		return nil, err
	}
	if w.Ref != "" {
		if w.Data != nil {
			return nil, errors.New("tensor has both data and ref")
		}
		if opts.Resolve == nil {
			return nil, fmt.Errorf("tensor refers to %q but no tensor source was given", w.Ref)
		}
		t, err := opts.Resolve(w.Ref, w.Shape)
		if err != nil {
			return nil, fmt.Errorf("resolving %q: %w", w.Ref, err)
		}
		if t == nil || Size(t.Shape) != n || len(t.Data) != n {
			return nil, fmt.Errorf("resolving %q: got a tensor that does not match shape %v", w.Ref, w.Shape)
		}
		return t, nil
	}
	if len(w.Data) != n {
		return nil, fmt.Errorf("shape %v needs %d values, have %d", w.Shape, n, len(w.Data))
	}
	return &Tensor{Shape: w.Shape, Data: w.Data}, nil
}

// MarshalJSON writes a tensor inline, or in the wire form set by EncodeJSON.
func (t *Tensor) MarshalJSON() ([]byte, error) {
	if t.wire != nil {
		return json.Marshal(t.wire)
	}
	return json.Marshal(tensorJSON{Shape: t.Shape, Data: t.Data})
}

// UnmarshalJSON reads the wire form; DecodeJSON resolves it.
func (t *Tensor) UnmarshalJSON(b []byte) error {
	var w tensorJSON
	if err := strictUnmarshal(b, &w); err != nil {
		return err
	}
	if w.Data == nil && w.Ref == "" {
		w.Data = []float32{}
	}
	t.wire = &w
	return nil
}

func strictUnmarshal(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

// wireNode returns a shallow copy of n whose tensor fields may be replaced
// without touching n.
func wireNode(n Node) Node {
	v := reflect.ValueOf(n).Elem()
	c := reflect.New(v.Type())
	c.Elem().Set(v)
	return c.Interface().(Node)
}

// withKind wraps a node so that its JSON object carries a "kind" field
// beside the node's own fields, for encoding and strict decoding.
func withKind(n Node) any {
	return &kindWrapper{Kind: n.Kind(), Node: n}
}

type kindWrapper struct {
	Kind Kind
	Node Node
}

func (w *kindWrapper) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(w.Node)
	if err != nil {
		return nil, err
	}
	kind, _ := json.Marshal(w.Kind)
	if len(b) < 2 || b[0] != '{' {
		return nil, errors.New("node did not encode as an object")
	}
	out := append([]byte(`{"kind":`), kind...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

func (w *kindWrapper) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	delete(fields, "kind")
	rest, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	return strictUnmarshal(rest, w.Node)
}
