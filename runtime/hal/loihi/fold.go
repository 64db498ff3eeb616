package loihi

import (
	"fmt"
	"math"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// relayChains returns g with every Delay of n > 1 steps of dt (the same n
// for all its elements) replaced by n one-step Delays in series, named
// "<name>/1" … "<name>/<n−1>" and then name itself, so that the last
// relay is the node the graph's edges and probes name. A relay holds one
// step; oneToOne (in fold) joins them. Delays that are not a whole,
// uniform number of steps are left for params to refuse by name. g
// itself is not changed.
func relayChains(g *snn.Graph, dt float64) (*snn.Graph, error) {
	if dt == 0 {
		dt = 1e-3
	}
	chains := map[string]int{}
	for name, n := range g.Nodes {
		d, ok := n.(*snn.Delay)
		if !ok || len(d.Delay) == 0 {
			continue
		}
		steps := math.Round(d.Delay[0] / dt)
		uniform := steps > 1 && steps <= maxRelayChain
		for _, x := range d.Delay[1:] {
			uniform = uniform && math.Round(x/dt) == steps
		}
		if uniform {
			chains[name] = int(steps)
		}
	}
	if len(chains) == 0 {
		return g, nil
	}
	shapes, err := g.Shapes()
	if err != nil {
		return nil, err
	}
	out := &snn.Graph{Nodes: make(map[string]snn.Node, len(g.Nodes)), Edges: make([]snn.Edge, 0, len(g.Edges))}
	for name, n := range g.Nodes {
		out.Nodes[name] = n
	}
	for name, steps := range chains {
		relay := func(i int) string {
			if i == steps {
				return name
			}
			return fmt.Sprintf("%s/%d", name, i)
		}
		for i := 1; i <= steps; i++ {
			if _, ok := g.Nodes[relay(i)]; ok && i < steps {
				return nil, unsupported(relay(i), "the name of relay %d of Delay %q (%d steps) is already a node's", i, name, steps)
			}
			out.Nodes[relay(i)] = &snn.Delay{Delay: []float64{dt}, Shape: shapes[name].Out}
			if i > 1 {
				out.Edges = append(out.Edges, snn.Edge{From: relay(i - 1), To: relay(i)})
			}
		}
	}
	for _, e := range g.Edges {
		if _, ok := chains[e.To]; ok {
			e.To = e.To + "/1"
		}
		out.Edges = append(out.Edges, e)
	}
	return out, nil
}

// maxRelayChain bounds the relays one Delay becomes: a neuron group each,
// so a longer delay would spend the chip's cores on holding a value.
const maxRelayChain = 64

// fold runs compile.FoldLinear, then turns each Scale node it left (a
// region on a cycle, such as snnTorch's one-to-one recurrence, RSynaptic
// with all_to_all=False) into the Linear node with its scales on the
// diagonal, where it has one source and one target: the same map at the
// same place in the graph, so the cycle keeps its step of delay, and a
// synapse node the chip has. It costs n² synapses for n neurons, most of
// them zero; the counters count only the non-zero ones.
func fold(g *snn.Graph) (*snn.Graph, *compile.FoldReport, error) {
	g, err := oneToOne(g)
	if err != nil {
		return nil, nil, err
	}
	g, frep, err := compile.FoldLinear(g)
	if err != nil {
		return nil, nil, err
	}
	var scales []string
	names := g.NamesOfKind(snn.KindScale)
	if len(names) == 0 {
		return g, frep, nil
	}
	topo := g.Topology()
	for _, name := range names {
		if len(topo.In(name)) == 1 && len(topo.Out(name)) == 1 {
			scales = append(scales, name)
		}
	}
	if len(scales) == 0 {
		return g, frep, nil
	}
	shapes, err := g.Shapes()
	if err != nil {
		return nil, nil, err
	}
	out := &snn.Graph{Nodes: make(map[string]snn.Node, len(g.Nodes)), Edges: g.Edges}
	for name, n := range g.Nodes {
		out.Nodes[name] = n
	}
	for _, name := range scales {
		sc := g.Nodes[name].(*snn.Scale)
		n := snn.Size(shapes[name].Out)
		w := snn.NewTensor(n, n)
		for i := 0; i < n; i++ {
			f := sc.Scale[0]
			if len(sc.Scale) > 1 {
				f = sc.Scale[i]
			}
			w.Data[i*n+i] = f
		}
		out.Nodes[name] = &snn.Linear{Weight: w}
	}
	return out, frep, nil
}

// oneToOne returns g with a Scale node of 1, named "<from>/to/<to>", on
// every edge from one Delay straight into another (a chain of one-step
// Delays, as relayChains makes of a longer one or a user may build): a
// neuron group reaches another only through synapses,
// so each relay passes its value on through one-to-one synapses of
// weight 1, which fold then turns into a Linear node like any residual
// junction. g itself is not changed.
func oneToOne(g *snn.Graph) (*snn.Graph, error) {
	relay := func(name string) bool { return g.Nodes[name].Kind() == snn.KindDelay }
	chained := 0
	for _, e := range g.Edges {
		if relay(e.From) && relay(e.To) {
			chained++
		}
	}
	if chained == 0 {
		return g, nil
	}
	shapes, err := g.Shapes()
	if err != nil {
		return nil, err
	}
	out := &snn.Graph{Nodes: make(map[string]snn.Node, len(g.Nodes)+chained), Edges: make([]snn.Edge, 0, len(g.Edges)+chained)}
	for name, n := range g.Nodes {
		out.Nodes[name] = n
	}
	for _, e := range g.Edges {
		if !relay(e.From) || !relay(e.To) {
			out.Edges = append(out.Edges, e)
			continue
		}
		mid := e.From + "/to/" + e.To
		if _, ok := out.Nodes[mid]; ok {
			return nil, unsupported(mid, "the name of the synapses from Delay %q to Delay %q is already a node's", e.From, e.To)
		}
		out.Nodes[mid] = &snn.Scale{Scale: []float32{1}, Shape: shapes[e.From].Out}
		out.Edges = append(out.Edges, snn.Edge{From: e.From, To: mid}, snn.Edge{From: mid, To: e.To})
	}
	return out, nil
}
