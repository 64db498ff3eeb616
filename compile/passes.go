package compile

import (
	"fmt"
	"math"
	"sort"

	"github.com/neuro-go/neuro/snn"
)

// QuantizationInfo records a weight quantisation.
type QuantizationInfo struct {
	WeightBits int          `json:"weight_bits"`
	PerChannel bool         `json:"per_channel"`
	Layers     []QuantLayer `json:"layers"`
}

// QuantLayer is the quantisation of one node's weights: the step between
// representable values (one per layer, or per output channel) and the error
// the rounding introduced.
type QuantLayer struct {
	Node        string    `json:"node"`
	Scales      []float32 `json:"scales"`
	MaxAbsError float64   `json:"max_abs_error"`
	// RelRMSError is the RMS of the rounding error over the RMS of the
	// weights.
	RelRMSError float64 `json:"rel_rms_error"`
}

// weightNodes calls f for every node with a weight tensor, in name order.
func weightNodes(g *snn.Graph, f func(name string, w *snn.Tensor)) {
	for _, name := range g.Names() {
		switch n := g.Nodes[name].(type) {
		case *snn.Linear:
			f(name, n.Weight)
		case *snn.Affine:
			f(name, n.Weight)
		case *snn.Conv1d:
			f(name, n.Weight)
		case *snn.Conv2d:
			f(name, n.Weight)
		}
	}
}

// Quantize rounds every weight of g in place to a signed bits-bit grid:
// w ← s·round(w/s) with s = max|w| / (2^(bits−1) − 1), per node or per
// output channel. Values stay float32, each exactly a multiple of its
// scale, so a device with integer weights can take the integers back
// exactly. It reports the scales and the error introduced.
func Quantize(g *snn.Graph, bits int, perChannel bool) (*QuantizationInfo, error) {
	if bits < 2 || bits > 16 {
		return nil, fmt.Errorf("compile: weight bits %d out of [2, 16]", bits)
	}
	levels := float64(int(1)<<(bits-1) - 1)
	info := &QuantizationInfo{WeightBits: bits, PerChannel: perChannel}
	weightNodes(g, func(name string, w *snn.Tensor) {
		rows := 1
		if perChannel {
			rows = w.Shape[0]
		}
		per := len(w.Data) / rows
		q := QuantLayer{Node: name}
		var errSq, sq float64
		for r := 0; r < rows; r++ {
			row := w.Data[r*per : (r+1)*per]
			m := 0.0
			for _, v := range row {
				m = math.Max(m, math.Abs(float64(v)))
			}
			s := m / levels
			if s == 0 {
				s = 1
			}
			q.Scales = append(q.Scales, float32(s))
			for i, v := range row {
				nv := float32(s * math.Round(float64(v)/s))
				d := float64(nv) - float64(v)
				q.MaxAbsError = math.Max(q.MaxAbsError, math.Abs(d))
				errSq += d * d
				sq += float64(v) * float64(v)
				row[i] = nv
			}
		}
		if sq > 0 {
			q.RelRMSError = math.Sqrt(errSq / sq)
		}
		info.Layers = append(info.Layers, q)
	})
	return info, nil
}

// Prune zeroes in place every weight whose magnitude is below threshold and
// returns how many it zeroed.
func Prune(g *snn.Graph, threshold float64) int {
	n := 0
	weightNodes(g, func(_ string, w *snn.Tensor) {
		for i, v := range w.Data {
			if v != 0 && math.Abs(float64(v)) < threshold {
				w.Data[i] = 0
				n++
			}
		}
	})
	return n
}

// Placement is where a graph's neurons sit on a target's cores.
type Placement struct {
	Target      string    `json:"target"`
	CoresUsed   int       `json:"cores_used"`
	Utilisation float64   `json:"utilisation"` // neurons used / neuron capacity of the cores used
	Cores       []CoreUse `json:"cores"`
}

// CoreUse is what one core holds.
type CoreUse struct {
	Core     int         `json:"core"`
	Slices   []NodeSlice `json:"slices"`
	Neurons  int         `json:"neurons"`
	Synapses int         `json:"synapses"`
	MaxFanIn int         `json:"max_fan_in"`
}

// NodeSlice is neurons [From, To) of a node.
type NodeSlice struct {
	Node     string `json:"node"`
	From, To int
}

// FitError says which node does not fit and which limit it hits; it wraps
// ErrUnsupported.
type FitError struct {
	Target, Node, Limit string
	Need, Have          int
}

func (e *FitError) Error() string {
	return fmt.Sprintf("compile: node %q does not fit %s: %s: needs %d, the device has %d", e.Node, e.Target, e.Limit, e.Need, e.Have)
}

func (e *FitError) Unwrap() error { return ErrUnsupported }

// isCompute reports whether a node kind occupies neurons on a core.
func isCompute(k snn.Kind) bool { return snn.IsNeuron(k) || k == snn.KindThreshold }

// fanIns returns, for every node, the number of synapses into each of its
// outputs: the (source neuron, weight) pairs that reach it through chains
// of synapse nodes. An Input or compute node counts as one source per
// element; a Linear or convolution output sums the fan-in of the inputs its
// non-zero weights read (taps that fall in the padding read nothing);
// pooling sums its window; element-wise nodes pass fan-in through.
func fanIns(g *snn.Graph, shapes map[string]snn.Shape) map[string][]int {
	memo := map[string][]int{}
	visiting := map[string]bool{}
	var of func(name string) []int
	// in is the fan-in arriving at node name's input, summed over edges.
	in := func(name string) []int {
		f := make([]int, snn.Size(shapes[name].In))
		for _, e := range g.Edges {
			if e.To != name {
				continue
			}
			src := g.Nodes[e.From]
			if src.Kind() == snn.KindInput || isCompute(src.Kind()) {
				for i := range f {
					f[i]++
				}
				continue
			}
			sf := of(e.From)
			for i := range f {
				f[i] += sf[i%len(sf)]
			}
		}
		return f
	}
	of = func(name string) []int {
		if f, ok := memo[name]; ok {
			return f
		}
		n := snn.Size(shapes[name].Out)
		f := make([]int, n)
		if visiting[name] {
			// A cycle of synapse nodes without neurons: count one synapse
			// per element rather than recurse forever.
			for i := range f {
				f[i] = 1
			}
			return f
		}
		visiting[name] = true
		defer delete(visiting, name)
		x := in(name)
		switch nd := g.Nodes[name].(type) {
		case *snn.Linear:
			linearFanIn(nd.Weight, x, f)
		case *snn.Affine:
			linearFanIn(nd.Weight, x, f)
		case *snn.Conv2d:
			convFanIn(nd.Weight, nd.InputShape, nd.Stride, nd.Padding, nd.Dilation, nd.Groups, x, f)
		case *snn.Conv1d:
			w := &snn.Tensor{Shape: []int{nd.Weight.Shape[0], nd.Weight.Shape[1], 1, nd.Weight.Shape[2]}, Data: nd.Weight.Data}
			convFanIn(w, []int{nd.InputShape[0], 1, nd.InputShape[1]}, [2]int{1, nd.Stride}, [2]int{0, nd.Padding}, [2]int{1, nd.Dilation}, nd.Groups, x, f)
		case *snn.SumPool2d:
			poolFanIn(shapes[name].In, nd.Kernel, nd.Stride, nd.Padding, x, f)
		case *snn.AvgPool2d:
			poolFanIn(shapes[name].In, nd.Kernel, nd.Stride, nd.Padding, x, f)
		default:
			for i := range f {
				f[i] = x[i%max(1, len(x))]
			}
		}
		memo[name] = f
		return f
	}
	for _, name := range g.Names() {
		of(name)
	}
	return memo
}

func linearFanIn(w *snn.Tensor, in, f []int) {
	cols := w.Shape[1]
	for r := range f {
		for j, v := range w.Data[r*cols : (r+1)*cols] {
			if v != 0 {
				f[r] += in[j]
			}
		}
	}
}

func convFanIn(w *snn.Tensor, inShape []int, stride, pad, dil [2]int, groups int, in, f []int) {
	oc, icPer, kh, kw := w.Shape[0], w.Shape[1], w.Shape[2], w.Shape[3]
	ih, iw := inShape[1], inShape[2]
	sp := len(f) / oc
	ow := convOutLen(iw, kw, stride[1], pad[1], dil[1])
	ocPer := oc / groups
	for o := 0; o < oc; o++ {
		g := o / ocPer
		for p := 0; p < sp; p++ {
			y, x := p/ow, p%ow
			total := 0
			for ci := 0; ci < icPer; ci++ {
				c := g*icPer + ci
				for ky := 0; ky < kh; ky++ {
					iy := y*stride[0] - pad[0] + ky*dil[0]
					if iy < 0 || iy >= ih {
						continue
					}
					for kx := 0; kx < kw; kx++ {
						ix := x*stride[1] - pad[1] + kx*dil[1]
						if ix < 0 || ix >= iw || w.Data[((o*icPer+ci)*kh+ky)*kw+kx] == 0 {
							continue
						}
						total += in[(c*ih+iy)*iw+ix]
					}
				}
			}
			f[o*sp+p] = total
		}
	}
}

func poolFanIn(inShape []int, k, stride, pad [2]int, in, f []int) {
	c, ih, iw := inShape[0], inShape[1], inShape[2]
	sp := len(f) / c
	ow := convOutLen(iw, k[1], stride[1], pad[1], 1)
	for ch := 0; ch < c; ch++ {
		for p := 0; p < sp; p++ {
			y, x := p/ow, p%ow
			total := 0
			for ky := 0; ky < k[0]; ky++ {
				iy := y*stride[0] - pad[0] + ky
				for kx := 0; kx < k[1]; kx++ {
					ix := x*stride[1] - pad[1] + kx
					if iy >= 0 && ix >= 0 && iy < ih && ix < iw {
						total += in[(ch*ih+iy)*iw+ix]
					}
				}
			}
			f[ch*sp+p] = total
		}
	}
}

func convOutLen(in, k, stride, pad, dil int) int { return (in+2*pad-dil*(k-1)-1)/stride + 1 }

// Partition places the compute nodes of g (neurons and thresholds) onto the
// target's cores, first fit in name order, splitting a node across cores
// where it must, and counts each neuron's incoming synapses on its core.
// A network that does not fit gets a *FitError naming the node and limit.
func Partition(g *snn.Graph, t *Target) (*Placement, error) {
	shapes, err := g.Shapes()
	if err != nil {
		return nil, err
	}
	for _, name := range g.Names() {
		k := g.Nodes[name].Kind()
		if !t.Supports(k) {
			return nil, &UnsupportedError{Node: name, Reason: fmt.Sprintf("%s does not run %s nodes", t.Name, k)}
		}
		if k == snn.KindInput && t.InputChannels > 0 && snn.Size(shapes[name].Out) > t.InputChannels {
			return nil, &FitError{t.Name, name, "input channels", snn.Size(shapes[name].Out), t.InputChannels}
		}
		if k == snn.KindOutput && t.OutputChannels > 0 && snn.Size(shapes[name].Out) > t.OutputChannels {
			return nil, &FitError{t.Name, name, "output channels", snn.Size(shapes[name].Out), t.OutputChannels}
		}
	}
	fan := fanIns(g, shapes)
	p := &Placement{Target: t.Name}
	core := -1
	newCore := func() {
		core++
		p.Cores = append(p.Cores, CoreUse{Core: core})
	}
	for _, name := range g.Names() {
		if !isCompute(g.Nodes[name].Kind()) {
			continue
		}
		f := fan[name]
		from := 0
		for i, fi := range f {
			if t.MaxFanIn > 0 && fi > t.MaxFanIn {
				return nil, &FitError{t.Name, fmt.Sprintf("%s[%d]", name, i), "fan-in per neuron", fi, t.MaxFanIn}
			}
			if t.SynapsesPerCore > 0 && fi > t.SynapsesPerCore {
				return nil, &FitError{t.Name, fmt.Sprintf("%s[%d]", name, i), "synapses per core", fi, t.SynapsesPerCore}
			}
			full := core < 0 ||
				(t.NeuronsPerCore > 0 && p.Cores[core].Neurons >= t.NeuronsPerCore) ||
				(t.SynapsesPerCore > 0 && p.Cores[core].Synapses+fi > t.SynapsesPerCore)
			if full {
				if core >= 0 && i > from {
					p.Cores[core].Slices = append(p.Cores[core].Slices, NodeSlice{name, from, i})
				}
				from = i
				newCore()
				if t.Cores > 0 && core >= t.Cores {
					return nil, &FitError{t.Name, name, "cores", core + 1, t.Cores}
				}
			}
			c := &p.Cores[core]
			c.Neurons++
			c.Synapses += fi
			c.MaxFanIn = max(c.MaxFanIn, fi)
		}
		if len(f) > from {
			p.Cores[core].Slices = append(p.Cores[core].Slices, NodeSlice{name, from, len(f)})
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
	sort.Slice(p.Cores, func(i, j int) bool { return p.Cores[i].Core < p.Cores[j].Core })
	return p, nil
}
