package snn

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
)

// Edge carries the output of node From to the input of node To. A node's
// input is the sum of all its incoming edges.
type Edge struct {
	From, To string
}

// Graph is a spiking network: named nodes and directed edges. Cycles are
// allowed (recurrence); the simulator delays every edge that closes one by a
// step. Topology says which edges those are, and in what order the nodes
// are evaluated.
type Graph struct {
	Nodes map[string]Node
	Edges []Edge
}

// NewGraph returns an empty graph.
func NewGraph() *Graph { return &Graph{Nodes: map[string]Node{}} }

// Add inserts a node, replacing any of the same name, and returns g.
func (g *Graph) Add(name string, n Node) *Graph {
	if g.Nodes == nil {
		g.Nodes = map[string]Node{}
	}
	g.Nodes[name] = n
	return g
}

// Connect appends edges along the path names[0] -> names[1] -> ... and
// returns g.
func (g *Graph) Connect(names ...string) *Graph {
	for i := 1; i < len(names); i++ {
		g.Edges = append(g.Edges, Edge{names[i-1], names[i]})
	}
	return g
}

// Names returns the node names in sorted order.
func (g *Graph) Names() []string {
	names := make([]string, 0, len(g.Nodes))
	for n := range g.Nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NamesOfKind returns the sorted names of the nodes of kind k.
func (g *Graph) NamesOfKind(k Kind) []string {
	var names []string
	for _, n := range g.Names() {
		if g.Nodes[n].Kind() == k {
			names = append(names, n)
		}
	}
	return names
}

// Shape is the resolved per-sample input and output shape of a node.
type Shape struct {
	In, Out []int
}

// Size is the number of elements of a shape.
func Size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// ErrInvalidGraph is wrapped by every validation failure.
var ErrInvalidGraph = errors.New("snn: invalid graph")

func invalid(err error) error {
	return fmt.Errorf("%w: %w", ErrInvalidGraph, err)
}

// Validate checks every node's fields, that every edge joins existing nodes,
// and that the shapes chain: the output size of an edge's source equals the
// input size of its target. Errors name the node and field at fault and
// wrap ErrInvalidGraph.
func (g *Graph) Validate() error {
	_, err := g.Shapes()
	return err
}

// Shapes validates the graph and returns every node's resolved shapes.
// Nodes that take their shape from their inputs (pooling without an input
// shape, Output without a shape, element-wise nodes whose parameters are
// all scalars) get it from their predecessors.
func (g *Graph) Shapes() (map[string]Shape, error) {
	if len(g.Nodes) == 0 {
		return nil, invalid(errors.New("snn: graph has no nodes"))
	}
	names := g.Names()
	for _, name := range names {
		n := g.Nodes[name]
		if name == "" {
			return nil, invalid(errors.New("snn: node with an empty name"))
		}
		if n == nil {
			return nil, invalid(&FieldError{Node: name, Field: "kind", Msg: "nil node"})
		}
		if err := n.check(); err != nil {
			return nil, invalid(withNode(name, err))
		}
	}
	hasIn := map[string]bool{}
	for i, e := range g.Edges {
		if _, ok := g.Nodes[e.From]; !ok {
			return nil, invalid(fmt.Errorf("snn: edge %d (%q -> %q): no node %q", i, e.From, e.To, e.From))
		}
		if _, ok := g.Nodes[e.To]; !ok {
			return nil, invalid(fmt.Errorf("snn: edge %d (%q -> %q): no node %q", i, e.From, e.To, e.To))
		}
		if g.Nodes[e.To].Kind() == KindInput {
			return nil, invalid(fmt.Errorf("snn: edge %d (%q -> %q): an Input node takes no edges", i, e.From, e.To))
		}
		if g.Nodes[e.From].Kind() == KindOutput {
			return nil, invalid(fmt.Errorf("snn: edge %d (%q -> %q): an Output node has no outgoing edges", i, e.From, e.To))
		}
		hasIn[e.To] = true
	}

	shapes := make(map[string]Shape, len(g.Nodes))
	for _, name := range names {
		in, out, err := g.Nodes[name].shapes()
		if err != nil {
			return nil, invalid(withNode(name, err))
		}
		shapes[name] = Shape{In: in, Out: out}
	}
	// Propagate shapes to the nodes that take them from their inputs, until
	// nothing changes.
	for changed := true; changed; {
		changed = false
		for _, e := range g.Edges {
			src, dst := shapes[e.From], shapes[e.To]
			if src.Out == nil || dst.In != nil {
				continue
			}
			in, out, err := inferFrom(g.Nodes[e.To], src.Out)
			if err != nil {
				return nil, invalid(withNode(e.To, err))
			}
			shapes[e.To] = Shape{In: in, Out: out}
			changed = true
		}
	}
	for _, name := range names {
		s := shapes[name]
		if s.In == nil || s.Out == nil {
			return nil, invalid(&FieldError{Node: name, Field: "shape", Msg: "cannot be determined: give it a shape or connect an input whose shape is known"})
		}
		if !hasIn[name] && g.Nodes[name].Kind() != KindInput {
			return nil, invalid(&FieldError{Node: name, Field: "edges", Msg: "node has no incoming edge"})
		}
	}
	for i, e := range g.Edges {
		from, to := shapes[e.From].Out, shapes[e.To].In
		if Size(from) != Size(to) {
			return nil, invalid(fmt.Errorf("snn: edge %d (%q -> %q): shapes do not chain: %q outputs %v (%d values), %q takes %v (%d values)",
				i, e.From, e.To, e.From, from, Size(from), e.To, to, Size(to)))
		}
	}
	return shapes, nil
}

// inferFrom gives a node whose shape depends on its input the shapes that
// follow from an input of shape in.
func inferFrom(n Node, in []int) ([]int, []int, error) {
	in = slices.Clone(in)
	switch n := n.(type) {
	case *SumPool2d:
		return poolShapes(n.Kernel, n.Stride, n.Padding, in)
	case *AvgPool2d:
		return poolShapes(n.Kernel, n.Stride, n.Padding, in)
	case *Flatten:
		return n.flatten(in)
	}
	return in, in, nil
}

func withNode(name string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) && fe.Node == "" {
		c := *fe
		c.Node = name
		return &c
	}
	return fmt.Errorf("snn: node %q: %w", name, err)
}

// Clone returns a deep copy of the graph.
func (g *Graph) Clone() *Graph {
	c := &Graph{Nodes: make(map[string]Node, len(g.Nodes)), Edges: slices.Clone(g.Edges)}
	for name, n := range g.Nodes {
		c.Nodes[name] = cloneNode(n)
	}
	return c
}

// cloneNode deep-copies a node: its slices and weight tensors.
func cloneNode(n Node) Node {
	v := reflect.ValueOf(n).Elem()
	c := reflect.New(v.Type())
	c.Elem().Set(v)
	e := c.Elem()
	for i := 0; i < e.NumField(); i++ {
		f := e.Field(i)
		switch f.Kind() {
		case reflect.Slice:
			if !f.IsNil() {
				s := reflect.MakeSlice(f.Type(), f.Len(), f.Len())
				reflect.Copy(s, f)
				f.Set(s)
			}
		case reflect.Pointer:
			if t, ok := f.Interface().(*Tensor); ok {
				f.Set(reflect.ValueOf(t.Clone()))
			}
		}
	}
	return c.Interface().(Node)
}
