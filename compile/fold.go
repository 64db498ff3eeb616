package compile

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/neuro-go/neuro/snn"
)

// FoldReport says what FoldLinear did.
type FoldReport struct {
	// Removed lists the linear nodes that were composed away, Added the
	// synapse nodes that replace them, both in name order.
	Removed []string `json:"removed,omitempty"`
	Added   []string `json:"added,omitempty"`
	// WeightsBefore and WeightsAfter count the weight entries of every
	// Linear and Affine node and the elements of every Scale node, before
	// and after: composing maps usually multiplies them.
	WeightsBefore int `json:"weights_before"`
	WeightsAfter  int `json:"weights_after"`
	// Skipped lists linear nodes left as they were because they lie on a
	// cycle (folding could move the step of delay that closes it).
	Skipped []string `json:"skipped,omitempty"`
}

// isLinearKind reports whether FoldLinear composes nodes of kind k.
func isLinearKind(k snn.Kind) bool {
	return k == snn.KindLinear || k == snn.KindAffine || k == snn.KindScale
}

// FoldLinear returns a copy of g in which the linear nodes (Linear, Affine
// and Scale) between any two other nodes are composed, so that every
// synapse node has exactly one source and one target, both of them not
// linear: an Input, a neuron, a Threshold, an Output or any other kind.
//
// A region is a set of linear nodes joined by edges between them. Each
// region not on a cycle is replaced, for each node t it feeds and each
// node s that feeds it, by one Linear node holding the composed map from
// s's output to t's input (an Affine carries the region's constant
// input to t, if any, on the first source in name order). The new nodes
// are named "<feeders>/<source>", with feeders the region nodes with an
// edge into t joined by "+", so "head/b0.mix" is the part of the head's
// input that comes from b0.mix; ">"+t follows when a feeder feeds more
// than one target. A region that is already one Linear or
// Affine node with one source and one target is left alone.
//
// The result computes the same function as g in the float simulator: a
// region off every cycle carries this step's values, before and after.
// Maps are composed in float64 and rounded to float32 once, so outputs
// differ from g's by float rounding only. Regions on a cycle are left as
// they were and listed in the report's Skipped. g is not modified.
func FoldLinear(g *snn.Graph) (*snn.Graph, *FoldReport, error) {
	if g == nil {
		return nil, nil, fmt.Errorf("compile: FoldLinear: nil graph")
	}
	shapes, err := g.Shapes()
	if err != nil {
		return nil, nil, err
	}
	names := g.Names()
	kind := func(n string) snn.Kind { return g.Nodes[n].Kind() }
	topo := g.Topology()
	rep := &FoldReport{}
	for _, n := range names {
		rep.WeightsBefore += weightCount(g.Nodes[n], shapes[n])
	}

	// Regions: connected components of linear nodes over linear-linear
	// edges, in either direction.
	region := map[string]int{}
	var regions [][]string
	for _, n := range names {
		if !isLinearKind(kind(n)) {
			continue
		}
		if _, seen := region[n]; seen {
			continue
		}
		id := len(regions)
		region[n] = id
		members := []string{}
		stack := []string{n}
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			members = append(members, x)
			for _, y := range append(slices.Clone(topo.In(x)), topo.Out(x)...) {
				if _, seen := region[y]; !seen && isLinearKind(kind(y)) {
					region[y] = id
					stack = append(stack, y)
				}
			}
		}
		sort.Strings(members)
		regions = append(regions, members)
	}

	out := snn.NewGraph()
	removed := map[string]bool{}
	type newEdge struct{ from, to string }
	var added []newEdge
	for _, members := range regions {
		if canonical(members, g, topo) {
			continue
		}
		skip := false
		for _, m := range members {
			if topo.OnCycle(m) {
				skip = true
			}
		}
		if skip {
			rep.Skipped = append(rep.Skipped, members...)
			continue
		}
		in := map[string]bool{}
		for _, m := range members {
			in[m] = true
		}
		// The region is off every cycle, so the simulator's order has
		// each member after the members that feed it.
		maps := map[string]*affineMap{}
		for _, m := range topo.Order {
			if !in[m] {
				continue
			}
			am, err := composeNode(m, g.Nodes[m], shapes, topo.In(m), in, maps)
			if err != nil {
				return nil, nil, err
			}
			maps[m] = am
		}
		// The targets of the region and, for each, the sum of the maps of
		// the region nodes that feed it.
		targets := map[string][]string{}
		for _, m := range members {
			for _, t := range topo.Out(m) {
				if !in[t] {
					targets[t] = append(targets[t], m)
				}
			}
		}
		fanOut := map[string]int{}
		for _, fs := range targets {
			for _, f := range uniqueSorted(fs) {
				fanOut[f]++
			}
		}
		tnames := make([]string, 0, len(targets))
		for t := range targets {
			tnames = append(tnames, t)
		}
		sort.Strings(tnames)
		for _, t := range tnames {
			feeders := targets[t]
			sum := &affineMap{rows: snn.Size(shapes[t].In), w: map[string][]float64{}}
			for _, f := range feeders {
				sum.add(maps[f])
			}
			srcs := sum.sources()
			if len(srcs) == 0 {
				return nil, nil, &UnsupportedError{Node: t, Reason: "compile: FoldLinear: its linear input depends on no node (a constant), which no synapse can carry"}
			}
			uniq := uniqueSorted(feeders)
			prefix := strings.Join(uniq, "+") + "/"
			suffix := ""
			for _, f := range uniq {
				if fanOut[f] > 1 {
					suffix = ">" + t
				}
			}
			hasBias := sum.hasBias()
			for i, s := range srcs {
				cols := snn.Size(shapes[s].Out)
				w := sum.w[s]
				if w == nil && !(hasBias && i == 0) {
					continue
				}
				name := unusedName(g, out, prefix+s+suffix)
				wt := snn.NewTensor(sum.rows, cols)
				for k, x := range w {
					wt.Data[k] = float32(x)
				}
				if hasBias && i == 0 {
					b := make([]float32, sum.rows)
					for k, x := range sum.b {
						b[k] = float32(x)
					}
					out.Add(name, &snn.Affine{Weight: wt, Bias: b})
				} else {
					out.Add(name, &snn.Linear{Weight: wt})
				}
				added = append(added, newEdge{s, name}, newEdge{name, t})
				rep.Added = append(rep.Added, name)
			}
		}
		for _, m := range members {
			removed[m] = true
			rep.Removed = append(rep.Removed, m)
		}
	}
	g2 := g.Clone()
	g2.Edges = nil
	for _, n := range names {
		if removed[n] {
			delete(g2.Nodes, n)
		}
	}
	for n, nd := range out.Nodes {
		g2.Add(n, nd)
	}
	for _, e := range g.Edges {
		if !removed[e.From] && !removed[e.To] {
			g2.Edges = append(g2.Edges, e)
		}
	}
	for _, e := range added {
		g2.Edges = append(g2.Edges, snn.Edge{From: e.from, To: e.to})
	}
	sort.Strings(rep.Removed)
	sort.Strings(rep.Added)
	sort.Strings(rep.Skipped)
	shapes2, err := g2.Shapes()
	if err != nil {
		return nil, nil, fmt.Errorf("compile: FoldLinear: the folded graph does not validate (a bug): %w", err)
	}
	for _, n := range g2.Names() {
		rep.WeightsAfter += weightCount(g2.Nodes[n], shapes2[n])
	}
	return g2, rep, nil
}

// canonical reports whether a region is a single Linear or Affine node
// with one source and one target, neither linear: nothing to fold.
func canonical(members []string, g *snn.Graph, topo *snn.Topology) bool {
	if len(members) != 1 {
		return false
	}
	m := members[0]
	k := g.Nodes[m].Kind()
	return (k == snn.KindLinear || k == snn.KindAffine) && len(topo.In(m)) == 1 && len(topo.Out(m)) == 1
}

// affineMap is a node's output as an affine function of the region's
// sources: y = Σ_s W_s·x_s + b, W_s row-major (rows × size of s).
type affineMap struct {
	rows int
	w    map[string][]float64
	b    []float64 // nil: zero
}

func (a *affineMap) add(o *affineMap) {
	for s, w := range o.w {
		if a.w[s] == nil {
			a.w[s] = make([]float64, len(w))
		}
		for i, x := range w {
			a.w[s][i] += x
		}
	}
	if o.b != nil {
		if a.b == nil {
			a.b = make([]float64, a.rows)
		}
		for i, x := range o.b {
			a.b[i] += x
		}
	}
}

func (a *affineMap) sources() []string {
	var s []string
	for k, w := range a.w {
		for _, x := range w {
			if x != 0 {
				s = append(s, k)
				break
			}
		}
	}
	for k := range a.w {
		if !contains(s, k) {
			delete(a.w, k)
		}
	}
	sort.Strings(s)
	return s
}

func (a *affineMap) hasBias() bool {
	for _, x := range a.b {
		if x != 0 {
			return true
		}
	}
	return false
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// composeNode returns the map of region node name: the sum of its inputs'
// maps (a source outside the region is the identity on its output), then
// the node's own operation.
func composeNode(name string, n snn.Node, shapes map[string]snn.Shape, srcs []string, in map[string]bool, maps map[string]*affineMap) (*affineMap, error) {
	x := &affineMap{rows: snn.Size(shapes[name].In), w: map[string][]float64{}}
	for _, s := range srcs {
		if in[s] {
			x.add(maps[s])
			continue
		}
		size := snn.Size(shapes[s].Out)
		if size != x.rows {
			return nil, fmt.Errorf("compile: FoldLinear: edge %s -> %s joins %d outputs to %d inputs", s, name, size, x.rows)
		}
		id := make([]float64, size*size)
		for i := 0; i < size; i++ {
			id[i*size+i] = 1
		}
		x.add(&affineMap{rows: size, w: map[string][]float64{s: id}})
	}
	switch nd := n.(type) {
	case *snn.Linear:
		return matMap(nd.Weight, nil, x), nil
	case *snn.Affine:
		return matMap(nd.Weight, nd.Bias, x), nil
	case *snn.Scale:
		y := &affineMap{rows: x.rows, w: map[string][]float64{}}
		sc := func(i int) float64 {
			if len(nd.Scale) == 1 {
				return float64(nd.Scale[0])
			}
			return float64(nd.Scale[i])
		}
		for s, w := range x.w {
			cols := len(w) / x.rows
			r := make([]float64, len(w))
			for i := 0; i < x.rows; i++ {
				f := sc(i)
				for j := 0; j < cols; j++ {
					r[i*cols+j] = f * w[i*cols+j]
				}
			}
			y.w[s] = r
		}
		if x.b != nil {
			y.b = make([]float64, x.rows)
			for i, v := range x.b {
				y.b[i] = sc(i) * v
			}
		}
		return y, nil
	}
	return nil, fmt.Errorf("compile: FoldLinear: node %q is %s, not a linear node", name, n.Kind())
}

// matMap returns W·x + bias for the (out × in) weight W.
func matMap(wt *snn.Tensor, bias []float32, x *affineMap) *affineMap {
	rows, inner := wt.Shape[0], wt.Shape[1]
	y := &affineMap{rows: rows, w: map[string][]float64{}}
	for s, xw := range x.w {
		cols := len(xw) / inner
		r := make([]float64, rows*cols)
		for i := 0; i < rows; i++ {
			ri := r[i*cols : (i+1)*cols]
			for k := 0; k < inner; k++ {
				a := float64(wt.Data[i*inner+k])
				if a == 0 {
					continue
				}
				for j, v := range xw[k*cols : (k+1)*cols] {
					ri[j] += a * v
				}
			}
		}
		y.w[s] = r
	}
	if x.b != nil || bias != nil {
		y.b = make([]float64, rows)
		for i := 0; i < rows; i++ {
			acc := 0.0
			if bias != nil {
				acc = float64(bias[i])
			}
			for k, v := range x.b {
				acc += float64(wt.Data[i*inner+k]) * v
			}
			y.b[i] = acc
		}
	}
	return y
}

func uniqueSorted(xs []string) []string {
	ys := append([]string(nil), xs...)
	sort.Strings(ys)
	out := ys[:0]
	for i, y := range ys {
		if i == 0 || y != ys[i-1] {
			out = append(out, y)
		}
	}
	return out
}

// unusedName returns base, or base with a "#k" suffix if either graph
// already has that name.
func unusedName(g, out *snn.Graph, base string) string {
	name := base
	for k := 2; ; k++ {
		_, a := g.Nodes[name]
		_, b := out.Nodes[name]
		if !a && !b {
			return name
		}
		name = fmt.Sprintf("%s#%d", base, k)
	}
}

// weightCount is the number of weight entries of a synapse node (the
// elements of a Scale), 0 for other kinds.
func weightCount(n snn.Node, sh snn.Shape) int {
	switch x := n.(type) {
	case *snn.Linear:
		return len(x.Weight.Data)
	case *snn.Affine:
		return len(x.Weight.Data)
	case *snn.Scale:
		return snn.Size(sh.Out)
	}
	return 0
}
