package snn_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neuro-go/neuro/snn"
)

// topoGraph builds a graph of the named nodes (Input for names starting
// with "in", Output for "out", Linear otherwise) and the edges "a>b".
// Topology does not validate, so shapes do not matter here.
func topoGraph(names []string, edges ...string) *snn.Graph {
	g := snn.NewGraph()
	for _, n := range names {
		switch {
		case len(n) >= 2 && n[:2] == "in":
			g.Add(n, &snn.Input{Shape: []int{1}})
		case len(n) >= 3 && n[:3] == "out":
			g.Add(n, &snn.Output{})
		default:
			g.Add(n, &snn.Linear{Weight: snn.NewTensor(1, 1)})
		}
	}
	for _, e := range edges {
		for i := 0; i < len(e); i++ {
			if e[i] == '>' {
				g.Connect(e[:i], e[i+1:])
			}
		}
	}
	return g
}

func TestTopology(t *testing.T) {
	for _, tc := range []struct {
		name    string
		nodes   []string
		edges   []string
		order   []string
		delayed []int    // indices into the edges
		cyclic  []string // nodes on a cycle
	}{
		{
			name:  "chain",
			nodes: []string{"in", "a", "b", "out"},
			edges: []string{"in>a", "a>b", "b>out"},
			order: []string{"in", "a", "b", "out"},
		},
		{
			// Names sort against the data flow: the order must still
			// follow the edges.
			name:  "chain against name order",
			nodes: []string{"in", "z", "y", "x", "out"},
			edges: []string{"in>z", "z>y", "y>x", "x>out"},
			order: []string{"in", "z", "y", "x", "out"},
		},
		{
			// Two paths that meet: the join comes after both.
			name:  "diamond",
			nodes: []string{"in", "a", "b", "c", "out"},
			edges: []string{"in>b", "in>a", "a>c", "b>c", "c>out"},
			order: []string{"in", "b", "a", "c", "out"},
		},
		{
			// b feeds a back: the edge reached with a still on the
			// search stack closes the cycle and is read a step late.
			name:    "cycle",
			nodes:   []string{"in", "a", "b", "out"},
			edges:   []string{"in>a", "a>b", "b>a", "b>out"},
			order:   []string{"in", "a", "b", "out"},
			delayed: []int{2},
			cyclic:  []string{"a", "b"},
		},
		{
			name:    "self-loop",
			nodes:   []string{"in", "a", "out"},
			edges:   []string{"in>a", "a>a", "a>out"},
			order:   []string{"in", "a", "out"},
			delayed: []int{1},
			cyclic:  []string{"a"},
		},
		{
			// A cycle reached through a node that is not on it: only the
			// cycle's nodes are cyclic.
			name:    "cycle downstream",
			nodes:   []string{"in", "a", "b", "c", "d", "out"},
			edges:   []string{"in>a", "a>b", "b>c", "c>d", "d>b", "d>out"},
			order:   []string{"in", "a", "b", "c", "d", "out"},
			delayed: []int{4},
			cyclic:  []string{"b", "c", "d"},
		},
		{
			// A node no Input reaches is still ordered, after them.
			name:  "unreached",
			nodes: []string{"in", "a", "b", "out"},
			edges: []string{"in>b", "b>out", "a>out"},
			order: []string{"a", "in", "b", "out"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := topoGraph(tc.nodes, tc.edges...)
			topo := g.Topology()
			if !slices.Equal(topo.Order, tc.order) {
				t.Errorf("Order %v, want %v", topo.Order, tc.order)
			}
			for i := range g.Edges {
				if got, want := topo.Delayed(i), slices.Contains(tc.delayed, i); got != want {
					t.Errorf("Delayed(%d) (%s) = %v, want %v", i, tc.edges[i], got, want)
				}
			}
			for _, n := range tc.nodes {
				if got, want := topo.OnCycle(n), slices.Contains(tc.cyclic, n); got != want {
					t.Errorf("OnCycle(%s) = %v, want %v", n, got, want)
				}
			}
		})
	}
}

// In and Out list one entry per edge, in g.Edges order: the order in
// which a node's inputs are summed.
func TestTopologyInOut(t *testing.T) {
	g := topoGraph([]string{"in", "a", "b", "c", "out"}, "in>c", "in>a", "a>c", "b>c", "in>c", "c>out", "in>b")
	topo := g.Topology()
	if got, want := topo.In("c"), []string{"in", "a", "b", "in"}; !slices.Equal(got, want) {
		t.Errorf("In(c) = %v, want %v", got, want)
	}
	if got, want := topo.Out("in"), []string{"c", "a", "c", "b"}; !slices.Equal(got, want) {
		t.Errorf("Out(in) = %v, want %v", got, want)
	}
	if got := topo.In("in"); len(got) != 0 {
		t.Errorf("In(in) = %v, want none", got)
	}
	if topo.Delayed(-1) || topo.Delayed(len(g.Edges)) {
		t.Error("Delayed is true for an edge index out of range")
	}
}

// On random graphs: every edge that is not delayed goes forward in Order,
// every delayed edge goes backward (or is a self-loop), and a node is on a
// cycle exactly when it can reach itself.
func TestTopologyRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		n := 2 + rng.IntN(10)
		names := []string{"in0"}
		for i := 1; i < n; i++ {
			names = append(names, fmt.Sprintf("n%02d", rng.IntN(100)))
		}
		names = slices.Compact(slices.Sorted(slices.Values(names)))
		var edges []string
		for range rng.IntN(3 * n) {
			a, b := names[rng.IntN(len(names))], names[1+rng.IntN(len(names)-1)]
			edges = append(edges, a+">"+b)
		}
		g := topoGraph(names, edges...)
		topo := g.Topology()
		if got := slices.Sorted(slices.Values(topo.Order)); !slices.Equal(got, g.Names()) {
			t.Fatalf("graph %v: Order %v is not a permutation of the nodes", edges, topo.Order)
		}
		if again := g.Topology(); !slices.Equal(again.Order, topo.Order) {
			t.Fatalf("graph %v: Order differs between calls", edges)
		}
		pos := map[string]int{}
		for i, name := range topo.Order {
			pos[name] = i
		}
		for i, e := range g.Edges {
			forward := pos[e.From] < pos[e.To]
			if forward == topo.Delayed(i) {
				t.Errorf("graph %v: edge %s>%s goes forward %v, delayed %v", edges, e.From, e.To, forward, topo.Delayed(i))
			}
		}
		for _, name := range names {
			if got, want := topo.OnCycle(name), reachesItself(g, name); got != want {
				t.Errorf("graph %v: OnCycle(%s) = %v, want %v", edges, name, got, want)
			}
		}
	}
}

func reachesItself(g *snn.Graph, start string) bool {
	seen := map[string]bool{}
	stack := []string{start}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, e := range g.Edges {
			if e.From != x {
				continue
			}
			if e.To == start {
				return true
			}
			if !seen[e.To] {
				seen[e.To] = true
				stack = append(stack, e.To)
			}
		}
	}
	return false
}

// A recurrent layer: rec feeds lif back, so that edge is delayed and lif
// reads rec's output of the previous step. The simulator, the chip
// emulators and compile all take this order from Topology.
func ExampleGraph_Topology() {
	lif := &snn.LIF{Tau: []float64{0.02}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}}
	g := snn.NewGraph().
		Add("in", &snn.Input{Shape: []int{2}}).
		Add("fc", &snn.Linear{Weight: snn.NewTensor(2, 2)}).
		Add("lif", lif).
		Add("rec", &snn.Linear{Weight: snn.NewTensor(2, 2)}).
		Add("out", &snn.Output{}).
		Connect("in", "fc", "lif", "out").
		Connect("lif", "rec", "lif")
	topo := g.Topology()
	fmt.Println("order:", topo.Order)
	fmt.Println("lif reads:", topo.In("lif"))
	for i, e := range g.Edges {
		if topo.Delayed(i) {
			fmt.Printf("delayed: %s -> %s\n", e.From, e.To)
		}
	}
	fmt.Println("on a cycle:", topo.OnCycle("rec"), topo.OnCycle("fc"))
	// Output:
	// order: [in fc lif rec out]
	// lif reads: [fc rec]
	// delayed: rec -> lif
	// on a cycle: true false
}
