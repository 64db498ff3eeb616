package loihi

import (
	"fmt"
	"math/bits"
	"sort"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// The fit check before folding. compile.FoldLinear composes every linear
// region in float64 and is most of what Load costs: 14 s and 750 MB for
// neuro-1-heavy, only to learn that the result needs 129 cores. The
// synapses a folded node holds are the non-zero entries of the composed
// map, and where they can be non-zero follows from where the factors are
// non-zero: a boolean composition of the graph's sparsity patterns, which
// needs bits, not floats, and, for dense layers, not even those (a dense
// map applied to a dense pattern is dense). estimatePlacement places
// those counts as compile.Partition places the folded graph's, so Load
// can refuse a program that cannot fit before it folds anything.
//
// The count is structural: an entry is counted unless every path to it
// has a zero weight. A sum of paths that cancels to exactly 0 (or a
// product that underflows float32) is counted though the folded node
// holds no synapse there, so the estimate is an upper bound of what
// Partition counts, equal to it unless such cancellations occur; the
// built-in models' estimates equal their placements (fit_test.go).

// pattern is the sparsity of a map from a source's outputs (cols) to a
// node's outputs (rows): full; diagonal (a source's own outputs, then
// scaled: entry (i, i) where nz is nil or nz[i]); or one bit set per
// possibly non-zero entry.
type pattern struct {
	rows, cols int
	full, diag bool
	nz         []bool
	bits       []uint64 // rows × words(cols), nil when full or diagonal
}

func words(n int) int { return (n + 63) / 64 }

// maxPatternWords bounds one pattern's bits (128 MiB). The fold of the
// same map would hold 64 times as much in float64; a larger pattern, or
// a diagonal one that would have to be spelled out that large, makes the
// estimate give up and Load fold as before.
const maxPatternWords = 1 << 24

// errTooBig is the panic value of newPattern over maxPatternWords;
// estimatePlacement recovers it and gives up.
type errTooBig struct{}

func newPattern(rows, cols int) *pattern {
	if int64(rows)*int64(words(cols)) > maxPatternWords {
		panic(errTooBig{})
	}
	return &pattern{rows: rows, cols: cols, bits: make([]uint64, rows*words(cols))}
}

// has reports whether a diagonal pattern has its entry in row i.
func (p *pattern) has(i int) bool { return p.nz == nil || p.nz[i] }

// spelled returns p as bits (a diagonal one spelled out).
func (p *pattern) spelled() *pattern {
	if !p.diag {
		return p
	}
	out := newPattern(p.rows, p.cols)
	for i := 0; i < p.rows; i++ {
		if p.has(i) {
			out.row(i)[i/64] |= 1 << (i % 64)
		}
	}
	return out
}

func (p *pattern) row(i int) []uint64 {
	w := words(p.cols)
	return p.bits[i*w : (i+1)*w]
}

// count is the number of set entries of row i.
func (p *pattern) count(i int) int {
	if p.full {
		return p.cols
	}
	if p.diag {
		if p.has(i) {
			return 1
		}
		return 0
	}
	n := 0
	for _, x := range p.row(i) {
		n += bits.OnesCount64(x)
	}
	return n
}

// or adds q to p (same shape); p may be nil.
func or(p, q *pattern) *pattern {
	switch {
	case p == nil:
		return q
	case p.full:
		return p
	case q.full:
		return q
	}
	p, q = p.spelled(), q.spelled()
	out := newPattern(p.rows, p.cols)
	for i := range out.bits {
		out.bits[i] = p.bits[i] | q.bits[i]
	}
	return out
}

// identity is the pattern of a source's own outputs.
func identity(n int) *pattern {
	if n == 1 {
		return &pattern{rows: 1, cols: 1, full: true}
	}
	return &pattern{rows: n, cols: n, diag: true}
}

// linear is the pattern of W·x for x of pattern in: row i is the union of
// the rows k of in where W[i, k] ≠ 0.
func linear(w *snn.Tensor, in *pattern) *pattern {
	r, k := w.Shape[0], w.Shape[1]
	if in.full {
		full := true
		nz := make([]bool, r)
		for i := 0; i < r; i++ {
			for _, x := range w.Data[i*k : (i+1)*k] {
				if x != 0 {
					nz[i] = true
					break
				}
			}
			full = full && nz[i]
		}
		if full {
			return &pattern{rows: r, cols: in.cols, full: true}
		}
		out := newPattern(r, in.cols)
		for i, ok := range nz {
			if ok {
				setAll(out.row(i), in.cols)
			}
		}
		return out
	}
	out := newPattern(r, in.cols)
	full := true
	for i := 0; i < r; i++ {
		dst := out.row(i)
		for j, x := range w.Data[i*k : (i+1)*k] {
			switch {
			case x == 0:
			case in.diag:
				if in.has(j) {
					dst[j/64] |= 1 << (j % 64)
				}
			default:
				for n, b := range in.row(j) {
					dst[n] |= b
				}
			}
		}
		full = full && out.count(i) == in.cols
	}
	if full {
		return &pattern{rows: r, cols: in.cols, full: true}
	}
	return out
}

func setAll(row []uint64, cols int) {
	for n := range row {
		row[n] = ^uint64(0)
	}
	if r := cols % 64; r != 0 {
		row[len(row)-1] = 1<<r - 1
	}
}

// scale is the pattern of s ⊙ x for x of pattern in.
func scale(s []float32, in *pattern) *pattern {
	at := func(i int) float32 {
		if len(s) == 1 {
			return s[0]
		}
		return s[i]
	}
	zero := false
	for i := 0; i < in.rows; i++ {
		zero = zero || at(i) == 0
	}
	if !zero {
		return in
	}
	if in.diag {
		nz := make([]bool, in.rows)
		for i := range nz {
			nz[i] = in.has(i) && at(i) != 0
		}
		return &pattern{rows: in.rows, cols: in.cols, diag: true, nz: nz}
	}
	out := newPattern(in.rows, in.cols)
	for i := 0; i < in.rows; i++ {
		if at(i) == 0 {
			continue
		}
		if in.full {
			setAll(out.row(i), in.cols)
		} else {
			copy(out.row(i), in.row(i))
		}
	}
	return out
}

// estimatePlacement places g's neurons as Load would after folding, from
// sparsity patterns alone (see the top of this file). It returns nil and
// no error when it cannot say (a node kind or graph shape Load refuses
// anyway, or a linear region on a cycle with more than one node), and a
// *compile.FitError when the estimate does not fit.
func estimatePlacement(g *snn.Graph, t *compile.Target, name string) (p *compile.Placement, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(errTooBig); !ok {
				panic(r)
			}
			p, err = nil, nil
		}
	}()
	if g, err = oneToOne(g); err != nil {
		return nil, nil
	}
	shapes, err := g.Shapes()
	if err != nil {
		return nil, nil
	}
	kind := func(n string) snn.Kind { return g.Nodes[n].Kind() }
	lin := func(n string) bool {
		k := kind(n)
		return k == snn.KindLinear || k == snn.KindAffine || k == snn.KindScale
	}
	for _, n := range g.Names() {
		if k := kind(n); !lin(n) && !isLayer(k) && k != snn.KindInput && k != snn.KindOutput {
			return nil, nil
		}
	}
	topo := g.Topology()
	size := func(n string) int { return snn.Size(shapes[n].Out) }
	// A linear node on a cycle is folded only alone (fold), so the graph
	// keeps its shape only if no linear neighbour shares the cycle.
	for _, n := range g.Names() {
		if lin(n) && topo.OnCycle(n) {
			for _, x := range append(append([]string(nil), topo.In(n)...), topo.Out(n)...) {
				if lin(x) {
					return nil, nil
				}
			}
		}
	}
	// region names each linear node's region (FoldLinear's: linear nodes
	// joined by edges between them), by its first member in name order.
	region := map[string]string{}
	for _, n := range g.Names() {
		if !lin(n) || region[n] != "" {
			continue
		}
		stack := []string{n}
		region[n] = n
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, y := range append(append([]string(nil), topo.In(x)...), topo.Out(x)...) {
				if lin(y) && region[y] == "" {
					region[y] = n
					stack = append(stack, y)
				}
			}
		}
	}
	// pats[m][s]: the pattern of linear node m's output over source s's.
	pats := map[string]map[string]*pattern{}
	for _, m := range topo.Order {
		if !lin(m) {
			continue
		}
		in := map[string]*pattern{}
		for _, x := range topo.In(m) {
			if lin(x) {
				for s, p := range pats[x] {
					in[s] = or(in[s], p)
				}
			} else {
				in[x] = or(in[x], identity(size(x)))
			}
		}
		out := map[string]*pattern{}
		for s, p := range in {
			switch x := g.Nodes[m].(type) {
			case *snn.Linear:
				out[s] = linear(x.Weight, p)
			case *snn.Affine:
				out[s] = linear(x.Weight, p)
			case *snn.Scale:
				out[s] = scale(x.Scale, p)
			}
		}
		pats[m] = out
	}
	// The compute nodes of the placement graph, with their fan-ins: each
	// neuron node, and a readout in front of each Output that linear
	// nodes feed (placementGraph).
	fan := map[string][]int{}
	for _, n := range g.Names() {
		k := kind(n)
		if !isLayer(k) && k != snn.KindOutput {
			continue
		}
		var feeders []string
		for _, x := range topo.In(n) {
			if lin(x) {
				feeders = append(feeders, x)
			} else if isLayer(kind(n)) {
				return nil, nil // neurons take input through synapses (checkGraph)
			}
		}
		node := n
		if k == snn.KindOutput {
			if len(feeders) == 0 {
				continue
			}
			node = n + "/readout"
		}
		f := make([]int, size(n))
		// One synapse node per region and source: the union of the
		// region's feeders' patterns.
		type key struct{ region, source string }
		bySource := map[key]*pattern{}
		for _, x := range feeders {
			for s, p := range pats[x] {
				k := key{region[x], s}
				bySource[k] = or(bySource[k], p)
			}
		}
		for _, p := range bySource {
			for i := range f {
				f[i] += p.count(i)
			}
		}
		fan[node] = f
	}
	return pack(fan, t, name)
}

// pack places compute nodes, in name order, as compile.Partition does:
// the neurons of a node fill a core until its neurons or synapses run
// out, then the next core. It checks the chip's synapse total as Load
// does.
func pack(fan map[string][]int, t *compile.Target, name string) (*compile.Placement, error) {
	names := make([]string, 0, len(fan))
	for n := range fan {
		names = append(names, n)
	}
	sort.Strings(names)
	p := &compile.Placement{Target: t.Name}
	core := -1
	total := 0
	for _, n := range names {
		f := fan[n]
		from := 0
		for i, fi := range f {
			if t.MaxFanIn > 0 && fi > t.MaxFanIn {
				return nil, &compile.FitError{Target: t.Name, Node: fmt.Sprintf("%s[%d]", n, i), Limit: "fan-in per neuron", Need: fi, Have: t.MaxFanIn}
			}
			if t.SynapsesPerCore > 0 && fi > t.SynapsesPerCore {
				return nil, &compile.FitError{Target: t.Name, Node: fmt.Sprintf("%s[%d]", n, i), Limit: "synapses per core", Need: fi, Have: t.SynapsesPerCore}
			}
			full := core < 0 ||
				(t.NeuronsPerCore > 0 && p.Cores[core].Neurons >= t.NeuronsPerCore) ||
				(t.SynapsesPerCore > 0 && p.Cores[core].Synapses+fi > t.SynapsesPerCore)
			if full {
				if core >= 0 && i > from {
					p.Cores[core].Slices = append(p.Cores[core].Slices, compile.NodeSlice{Node: n, From: from, To: i})
				}
				from = i
				core++
				p.Cores = append(p.Cores, compile.CoreUse{Core: core})
				if t.Cores > 0 && core >= t.Cores {
					return nil, &compile.FitError{Target: t.Name, Node: n, Limit: "cores", Need: core + 1, Have: t.Cores}
				}
			}
			c := &p.Cores[core]
			c.Neurons++
			c.Synapses += fi
			c.MaxFanIn = max(c.MaxFanIn, fi)
			total += fi
		}
		if len(f) > from {
			p.Cores[core].Slices = append(p.Cores[core].Slices, compile.NodeSlice{Node: n, From: from, To: len(f)})
		}
	}
	p.CoresUsed = len(p.Cores)
	if t.NeuronsPerCore > 0 && p.CoresUsed > 0 {
		used := 0
		for _, c := range p.Cores {
			used += c.Neurons
		}
		p.Utilisation = float64(used) / float64(p.CoresUsed*t.NeuronsPerCore)
	}
	if total > MaxSynapsesOnChip {
		return nil, &compile.FitError{Target: t.Name, Node: name, Limit: "synapses per chip", Need: total, Have: MaxSynapsesOnChip}
	}
	return p, nil
}
