package snn

import (
	"slices"
	"sort"
)

// Topology is the structure of a graph's edges as the simulator uses it:
// the order it evaluates the nodes in, which edges close a cycle and so
// carry the previous step's value, each node's sources and targets, and
// which nodes lie on a cycle.
//
// It is exported because everything that must agree with the simulator
// needs the same answers: a chip emulator that evaluates its layers in the
// simulator's order (so that the same edges are a step late on both), and
// a compile pass that must not move the step of delay that closes a cycle.
// One definition here means none of them can drift from the simulator.
//
// A Topology describes g as it was when Graph.Topology was called; compute
// a new one after changing g. It is read-only and safe for concurrent use.
type Topology struct {
	// Order is every node of g in the simulator's evaluation order: a
	// depth-first search from the Input nodes, then from any node not yet
	// reached, each in name order, following each node's edges in the order
	// of their targets' names; Order is the reverse post-order. The order
	// depends only on names and edges, never on map iteration, so every
	// run of every program plans the same way.
	Order []string

	in, out map[string][]string
	delayed []bool
	cyclic  map[string]bool
}

// Topology returns g's evaluation order and adjacency. It does not
// validate g; edges that name no node of g are listed by In and Out but
// are not followed.
//
// An edge is delayed when the search meets its target still on the search
// stack: it closes a cycle. Its target then precedes its source in Order,
// so reading the source's output before the source steps gives the
// previous step's value at no cost; that is how the simulator implements
// recurrence, and why a chip that wants the same values must use Order.
func (g *Graph) Topology() *Topology {
	t := &Topology{
		in:      map[string][]string{},
		out:     map[string][]string{},
		delayed: make([]bool, len(g.Edges)),
		cyclic:  map[string]bool{},
	}
	// The search follows edge indices sorted by target name; In and Out
	// keep g.Edges order, which decides the order of summation.
	next := map[string][]int{}
	for i, e := range g.Edges {
		t.in[e.To] = append(t.in[e.To], e.From)
		t.out[e.From] = append(t.out[e.From], e.To)
		if _, ok := g.Nodes[e.To]; ok {
			next[e.From] = append(next[e.From], i)
		}
	}
	for _, idx := range next {
		sort.SliceStable(idx, func(a, b int) bool { return g.Edges[idx[a]].To < g.Edges[idx[b]].To })
	}

	// One iterative depth-first search gives the order, the delayed edges
	// and, by Tarjan's lowlinks, the strongly connected components: a node
	// lies on a cycle when its component has more than one node or it
	// feeds itself.
	const (
		white = iota
		grey  // on the search stack
		black // finished
	)
	color := map[string]int{}
	index, low := map[string]int{}, map[string]int{}
	var scc []string // Tarjan's stack: visited nodes whose component is open
	onSCC := map[string]bool{}
	type frame struct {
		node string
		next int
	}
	var post []string
	enter := func(n string, stack []frame) []frame {
		color[n] = grey
		index[n], low[n] = len(index), len(index)
		scc = append(scc, n)
		onSCC[n] = true
		return append(stack, frame{n, 0})
	}
	visit := func(root string) {
		if color[root] != white {
			return
		}
		stack := enter(root, nil)
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next < len(next[top.node]) {
				ei := next[top.node][top.next]
				top.next++
				to := g.Edges[ei].To
				switch color[to] {
				case white:
					stack = enter(to, stack)
				case grey:
					t.delayed[ei] = true
					if to == top.node {
						t.cyclic[to] = true
					}
					low[top.node] = min(low[top.node], index[to])
				case black:
					if onSCC[to] {
						low[top.node] = min(low[top.node], index[to])
					}
				}
				continue
			}
			n := top.node
			color[n] = black
			post = append(post, n)
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				p := stack[len(stack)-1].node
				low[p] = min(low[p], low[n])
			}
			if low[n] == index[n] {
				i := slices.Index(scc, n)
				if len(scc)-i > 1 {
					for _, m := range scc[i:] {
						t.cyclic[m] = true
					}
				}
				for _, m := range scc[i:] {
					onSCC[m] = false
				}
				scc = scc[:i]
			}
		}
	}
	names := g.Names()
	for _, n := range names {
		if nd := g.Nodes[n]; nd != nil && nd.Kind() == KindInput {
			visit(n)
		}
	}
	for _, n := range names {
		visit(n)
	}
	slices.Reverse(post)
	t.Order = post
	return t
}

// In returns the sources of name's incoming edges in g.Edges order, one
// per edge (a doubled edge appears twice): the order in which the
// simulator sums a node's inputs. The slice is shared; do not modify it.
func (t *Topology) In(name string) []string { return t.in[name] }

// Out returns the targets of name's outgoing edges in g.Edges order, one
// per edge. The slice is shared; do not modify it.
func (t *Topology) Out(name string) []string { return t.out[name] }

// Delayed reports whether g.Edges[i] closes a cycle, so that its target
// reads the value its source had after the previous step.
func (t *Topology) Delayed(i int) bool { return i >= 0 && i < len(t.delayed) && t.delayed[i] }

// OnCycle reports whether name lies on a cycle: some path of one or more
// edges leads from it back to itself. Moving or merging such a node can
// move the step of delay its cycle carries.
func (t *Topology) OnCycle(name string) bool { return t.cyclic[name] }
