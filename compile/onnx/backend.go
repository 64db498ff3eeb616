package onnx

import (
	"fmt"
	"sort"

	onnxgo "github.com/owulveryck/onnx-go"
	"gonum.org/v1/gonum/graph"
	"gonum.org/v1/gonum/graph/iterator"
	"gorgonia.org/tensor"
)

// capture is an onnx-go Backend that records the graph onnx-go builds instead
// of computing anything: one graph node per named value, one weighted edge
// from each node output to each of its inputs (the weight is the input's
// position), and the operations applied, in file order.
//
// It is a multigraph on purpose: onnx-go adds one edge per (output, input)
// position, and a node such as Add(x, x) has two edges between the same pair
// of graph nodes; gonum's simple graphs would keep only the last. It also
// accepts self-loops (a node reading its own output), which gonum's simple
// graphs panic on, so that Decode can report the cycle instead.
type capture struct {
	nodes map[int64]*value
	order []int64 // node ids in creation order
	edges map[int64][]wedge
	ops   []capturedOp
}

type capturedOp struct {
	op      onnxgo.Operation
	outputs []graph.Node
}

var (
	_ onnxgo.Backend     = (*capture)(nil)
	_ onnxgo.Namer       = (*value)(nil)
	_ onnxgo.DataCarrier = (*value)(nil)
)

func newCapture() *capture {
	return &capture{nodes: map[int64]*value{}, edges: map[int64][]wedge{}}
}

// value is a graph node: a named value carrying the tensor onnx-go gives it.
type value struct {
	id   int64
	name string
	t    tensor.Tensor
}

func (v *value) ID() int64                       { return v.id }
func (v *value) SetName(s string)                { v.name = s }
func (v *value) GetName() string                 { return v.name }
func (v *value) SetTensor(t tensor.Tensor) error { v.t = t; return nil }
func (v *value) GetTensor() tensor.Tensor        { return v.t }

type wedge struct {
	from, to graph.Node
	w        float64
}

func (e wedge) From() graph.Node         { return e.from }
func (e wedge) To() graph.Node           { return e.to }
func (e wedge) ReversedEdge() graph.Edge { return wedge{e.to, e.from, e.w} }
func (e wedge) Weight() float64          { return e.w }

// NewNode returns a fresh value node; onnx-go names it through SetName.
func (c *capture) NewNode() graph.Node {
	return &value{id: int64(len(c.order))}
}

// AddNode records n. onnx-go only adds nodes made by NewNode; anything else
// is a bug in onnx-go, which panics here and decodeWithOnnxGo recovers.
func (c *capture) AddNode(n graph.Node) {
	v, ok := n.(*value)
	if !ok {
		panic(fmt.Sprintf("onnx: capture backend given a foreign node %T", n))
	}
	if _, dup := c.nodes[v.id]; dup {
		panic(fmt.Sprintf("onnx: capture backend given node id %d twice", v.id))
	}
	c.nodes[v.id] = v
	c.order = append(c.order, v.id)
}

func (c *capture) NewWeightedEdge(from, to graph.Node, w float64) graph.WeightedEdge {
	return wedge{from, to, w}
}

func (c *capture) SetWeightedEdge(e graph.WeightedEdge) {
	c.edges[e.From().ID()] = append(c.edges[e.From().ID()], wedge{e.From(), e.To(), e.Weight()})
}

// ApplyOperation records op; onnx-go calls it once per node, in file order.
func (c *capture) ApplyOperation(op onnxgo.Operation, outputs ...graph.Node) error {
	c.ops = append(c.ops, capturedOp{op: op, outputs: outputs})
	return nil
}

// inputsOf returns the names of the inputs recorded for output node id, in
// position order.
func (c *capture) inputsOf(id int64) []string {
	es := append([]wedge(nil), c.edges[id]...)
	sort.SliceStable(es, func(i, j int) bool { return es[i].w < es[j].w })
	names := make([]string, len(es))
	for i, e := range es {
		if v, ok := c.nodes[e.to.ID()]; ok {
			names[i] = v.name
		}
	}
	return names
}

// graph.Directed, which onnx-go's Backend requires; onnx-go itself only calls
// Node (in Model.SetInput, which Decode does not use).

func (c *capture) Node(id int64) graph.Node {
	if v, ok := c.nodes[id]; ok {
		return v
	}
	return nil
}

func (c *capture) Nodes() graph.Nodes {
	ns := make([]graph.Node, len(c.order))
	for i, id := range c.order {
		ns[i] = c.nodes[id]
	}
	return iterator.NewOrderedNodes(ns)
}

func (c *capture) From(id int64) graph.Nodes {
	var ns []graph.Node
	seen := map[int64]bool{}
	for _, e := range c.edges[id] {
		if !seen[e.to.ID()] {
			seen[e.to.ID()] = true
			ns = append(ns, e.to)
		}
	}
	return iterator.NewOrderedNodes(ns)
}

func (c *capture) To(id int64) graph.Nodes {
	var ns []graph.Node
	seen := map[int64]bool{}
	for _, from := range c.order {
		for _, e := range c.edges[from] {
			if e.to.ID() == id && !seen[from] {
				seen[from] = true
				ns = append(ns, e.from)
			}
		}
	}
	return iterator.NewOrderedNodes(ns)
}

func (c *capture) HasEdgeBetween(x, y int64) bool {
	return c.HasEdgeFromTo(x, y) || c.HasEdgeFromTo(y, x)
}

func (c *capture) HasEdgeFromTo(u, v int64) bool {
	for _, e := range c.edges[u] {
		if e.to.ID() == v {
			return true
		}
	}
	return false
}

func (c *capture) Edge(u, v int64) graph.Edge {
	for _, e := range c.edges[u] {
		if e.to.ID() == v {
			return e
		}
	}
	return nil
}
