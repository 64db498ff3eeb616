package compile

import (
	"fmt"
	"math"
	"sort"

	"github.com/neuro-go/neuro/snn"
)

// ConversionOptions control ANN-to-SNN conversion. The zero value works.
type ConversionOptions struct {
	// Calibration holds input samples (each one flat input vector) whose
	// activations set each layer's threshold scale. Without them the scales
	// come from the weights alone (a looser bound that needs more steps).
	Calibration [][]float32
	// Percentile of a ReLU layer's calibration activations taken as its
	// largest value (robust to outliers). Default 99.9.
	Percentile float64
	// Timesteps is how many steps a sample is meant to be presented; it is
	// recorded in the report for the program built from the graph.
	// Default 64.
	Timesteps int
	// Dt is the time step the graph is built for: IF neurons get R = 1/Dt,
	// so that each step adds its input once, whatever the step. Default
	// ConvertedDt (1 ms).
	Dt float64
	// MaxValues bounds the values a sample holds, summed over the
	// layers' outputs, checked from their shapes before calibration or
	// conversion builds anything (ImportOptions.MaxValues, which the
	// importers pass on). Default DefaultMaxValues.
	MaxValues int
}

// ConversionReport gives the scale chosen for each spiking layer.
type ConversionReport struct {
	Percentile         float64      `json:"percentile"`
	CalibrationSamples int          `json:"calibration_samples"`
	Timesteps          int          `json:"timesteps"`
	Layers             []LayerScale `json:"layers"`
	Warnings           []string     `json:"warnings,omitempty"`
}

// LayerScale is the activation scale λ of one ReLU layer: the activation
// that the converted IF neurons represent by firing at every step.
type LayerScale struct {
	Layer  string  `json:"layer"`
	Lambda float64 `json:"lambda"`
	Max    float64 `json:"max"` // largest calibration activation, for comparison
}

// sval is how an ANN value is represented in the spiking graph: the sum of
// the outputs of srcs, per step, times scale, approximates it on average.
type sval struct {
	srcs  []string
	scale float64
}

// ConvertANN turns a ReLU network into a spiking one (Rueckauer et al.
// 2017): batch-norm folds into the preceding layer; each ReLU becomes an IF
// neuron with threshold 1 and subtractive reset, whose rate times λ (a high
// percentile of the layer's calibration activations) approximates the
// activation; weights are rescaled by λ_in/λ_out and biases by 1/λ_out;
// average pooling stays; max pooling is approximated by average pooling
// (with a warning); the output layer integrates its input in an I node,
// whose membrane after T steps is T times the logits. Inputs are injected
// as currents at every step.
func ConvertANN(a *ANN, opts *ConversionOptions) (*snn.Graph, *ConversionReport, error) {
	var o ConversionOptions
	if opts != nil {
		o = *opts
	}
	if o.Percentile == 0 {
		o.Percentile = 99.9
	}
	if o.Percentile <= 0 || o.Percentile > 100 {
		return nil, nil, fmt.Errorf("compile: conversion percentile %v out of (0, 100]", o.Percentile)
	}
	if o.Timesteps == 0 {
		o.Timesteps = 64
	}
	if o.Dt == 0 {
		o.Dt = ConvertedDt
	}
	if !(o.Dt > 0) {
		return nil, nil, fmt.Errorf("compile: conversion time step %v must be positive", o.Dt)
	}
	dt := o.Dt
	folded, warnings, err := foldBatchNorm(a)
	if err != nil {
		return nil, nil, err
	}
	by, err := folded.index()
	if err != nil {
		return nil, nil, err
	}
	if o.MaxValues == 0 {
		o.MaxValues = DefaultMaxValues
	}
	values := 0
	for _, n := range folded.Nodes {
		if values += BoundedSize(n.outShape, o.MaxValues); values > o.MaxValues {
			return nil, nil, &UnsupportedError{Node: n.Name, Reason: fmt.Sprintf(
				"the network would hold more than %d values per sample (ImportOptions.MaxValues): its layers' outputs add up to more, %v alone holds %d",
				o.MaxValues, n.outShape, snn.Size(n.outShape))}
		}
	}
	rep := &ConversionReport{Percentile: o.Percentile, CalibrationSamples: len(o.Calibration), Timesteps: o.Timesteps, Warnings: warnings}
	lambda, err := layerScales(folded, by, o, rep)
	if err != nil {
		return nil, nil, err
	}
	consumers := map[string][]*ANNNode{}
	for _, n := range folded.Nodes {
		for _, in := range n.Inputs {
			consumers[in] = append(consumers[in], n)
		}
	}
	// target is the scale a node's output should carry: that of the ReLU it
	// feeds through linear, shape-preserving operations, else 1.
	var target func(n *ANNNode) float64
	target = func(n *ANNNode) float64 {
		cs := consumers[n.Name]
		if len(cs) != 1 || n.Name == folded.outputName() {
			return 1
		}
		switch c := cs[0]; c.Op {
		case OpReLU:
			return lambda[c.Name]
		case OpAvgPool2d, OpMaxPool2d, OpGlobalAvgPool, OpFlatten, OpIdentity, OpAdd:
			return target(c)
		}
		return 1
	}

	g := snn.NewGraph()
	// Names the conversion adds must not collide with the network's own.
	taken := map[string]bool{}
	for _, n := range folded.Nodes {
		taken[n.Name] = true
	}
	fresh := func(base string) string {
		name := base
		for k := 2; taken[name]; k++ {
			name = fmt.Sprintf("%s#%d", base, k)
		}
		taken[name] = true
		return name
	}
	vals := map[string]sval{}
	connect := func(v sval, to string) {
		for _, s := range v.srcs {
			g.Connect(s, to)
		}
	}
	for _, n := range folded.Nodes {
		var in sval
		if len(n.Inputs) > 0 {
			in = vals[n.Inputs[0]]
		}
		switch n.Op {
		case OpInput:
			g.Add(n.Name, &snn.Input{Shape: n.outShape})
			vals[n.Name] = sval{[]string{n.Name}, 1}
		case OpDense, OpConv2d:
			s := target(n)
			w := n.Weight.Clone()
			f := float32(in.scale / s)
			for i := range w.Data {
				w.Data[i] *= f
			}
			var b []float32
			if n.Bias != nil {
				b = make([]float32, len(n.Bias))
				for i, v := range n.Bias {
					b[i] = float32(float64(v) / s)
				}
			}
			if n.Op == OpDense {
				if b != nil {
					g.Add(n.Name, &snn.Affine{Weight: w, Bias: b})
				} else {
					g.Add(n.Name, &snn.Linear{Weight: w})
				}
			} else {
				g.Add(n.Name, &snn.Conv2d{Weight: w, Bias: b, Stride: n.Stride, Padding: n.Padding, Dilation: n.Dilation, Groups: n.Groups, InputShape: by[n.Inputs[0]].outShape})
			}
			connect(in, n.Name)
			vals[n.Name] = sval{[]string{n.Name}, s}
		case OpReLU:
			l := lambda[n.Name]
			if in.scale != l {
				// The input was not scaled for this layer (a ReLU fed by
				// another ReLU, or by spikes through pooling): rescale it.
				name := fresh(n.Name + ".scale")
				g.Add(name, &snn.Scale{Scale: []float32{float32(in.scale / l)}})
				connect(in, name)
				in = sval{[]string{name}, l}
			}
			g.Add(n.Name, &snn.IF{R: []float64{1 / dt}, VThreshold: []float64{1}, VReset: []float64{0}, Reset: snn.ResetSubtract})
			connect(in, n.Name)
			vals[n.Name] = sval{[]string{n.Name}, l}
		case OpAvgPool2d, OpMaxPool2d:
			if n.Op == OpMaxPool2d {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("layer %q: max pooling approximated by average pooling (spike rates have no exact max)", n.Name))
			}
			g.Add(n.Name, &snn.AvgPool2d{Kernel: n.Kernel, Stride: n.Stride, Padding: n.Padding, InputShape: by[n.Inputs[0]].outShape})
			connect(in, n.Name)
			vals[n.Name] = sval{[]string{n.Name}, in.scale}
		case OpGlobalAvgPool:
			sh := by[n.Inputs[0]].outShape
			g.Add(n.Name, &snn.AvgPool2d{Kernel: [2]int{sh[1], sh[2]}, Stride: [2]int{sh[1], sh[2]}, InputShape: sh})
			connect(in, n.Name)
			vals[n.Name] = sval{[]string{n.Name}, in.scale}
		case OpFlatten:
			g.Add(n.Name, &snn.Flatten{StartDim: 0, EndDim: -1, InputShape: by[n.Inputs[0]].outShape})
			connect(in, n.Name)
			vals[n.Name] = sval{[]string{n.Name}, in.scale}
		case OpIdentity:
			vals[n.Name] = in
		case OpAdd:
			s := target(n)
			var srcs []string
			for k, name := range n.Inputs {
				v := vals[name]
				if v.scale != s {
					sn := fresh(fmt.Sprintf("%s.in%d", n.Name, k))
					g.Add(sn, &snn.Scale{Scale: []float32{float32(v.scale / s)}})
					connect(v, sn)
					v = sval{[]string{sn}, s}
				}
				srcs = append(srcs, v.srcs...)
			}
			vals[n.Name] = sval{srcs, s}
		default:
			return nil, nil, &UnsupportedError{Node: n.Name, Reason: fmt.Sprintf("operation %q cannot be converted", n.Op)}
		}
	}
	// The output integrates its value over the steps.
	out := vals[folded.outputName()]
	readout, output := fresh("readout"), fresh("output")
	g.Add(readout, &snn.I{R: []float64{out.scale / dt}})
	connect(out, readout)
	g.Add(output, &snn.Output{})
	g.Connect(readout, output)
	if err := g.Validate(); err != nil {
		return nil, nil, fmt.Errorf("compile: conversion produced an invalid graph: %w", err)
	}
	return g, rep, nil
}

// ConvertedDt is the time step ConvertANN builds graphs for by default.
const ConvertedDt = 1e-3

// layerScales sets λ for every ReLU from calibration activations, or from
// the weights when there are none.
func layerScales(a *ANN, by map[string]*ANNNode, o ConversionOptions, rep *ConversionReport) (map[string]float64, error) {
	lambda := map[string]float64{}
	if len(o.Calibration) > 0 {
		acts := map[string][]float64{}
		for i, x := range o.Calibration {
			vals, err := a.Forward(x)
			if err != nil {
				return nil, fmt.Errorf("compile: calibration sample %d: %w", i, err)
			}
			for _, n := range a.Nodes {
				if n.Op == OpReLU {
					acts[n.Name] = append(acts[n.Name], vals[n.Name]...)
				}
			}
		}
		for _, n := range a.Nodes {
			if n.Op != OpReLU {
				continue
			}
			v := acts[n.Name]
			sort.Float64s(v)
			p := v[min(len(v)-1, int(math.Ceil(o.Percentile/100*float64(len(v))))-1)]
			mx := v[len(v)-1]
			if p <= 0 {
				rep.Warnings = append(rep.Warnings, fmt.Sprintf("layer %q never activates on the calibration data; its scale is set to 1", n.Name))
				p = 1
			}
			lambda[n.Name] = p
			rep.Layers = append(rep.Layers, LayerScale{Layer: n.Name, Lambda: p, Max: mx})
		}
		return lambda, nil
	}
	// Without data: bound each layer's activation by its weights, assuming
	// inputs in [0, 1] (Diehl et al. 2015, model-based normalisation).
	rep.Warnings = append(rep.Warnings, "no calibration data: layer scales bound from the weights, which needs more timesteps for the same accuracy")
	bound := map[string]float64{}
	for _, n := range a.Nodes {
		var in float64
		if len(n.Inputs) > 0 {
			in = bound[n.Inputs[0]]
		}
		switch n.Op {
		case OpInput:
			bound[n.Name] = 1
		case OpDense, OpConv2d:
			rows := n.Weight.Shape[0]
			per := len(n.Weight.Data) / rows
			m := 0.0
			for r := 0; r < rows; r++ {
				s := 0.0
				for _, w := range n.Weight.Data[r*per : (r+1)*per] {
					s += math.Max(0, float64(w))
				}
				s *= in
				if n.Bias != nil {
					s += math.Max(0, float64(n.Bias[r]))
				}
				m = math.Max(m, s)
			}
			bound[n.Name] = m
		case OpAdd:
			bound[n.Name] = in + bound[n.Inputs[1]]
		case OpReLU:
			if in <= 0 {
				in = 1
			}
			bound[n.Name] = in
			lambda[n.Name] = in
			rep.Layers = append(rep.Layers, LayerScale{Layer: n.Name, Lambda: in, Max: in})
		default:
			bound[n.Name] = in
		}
	}
	return lambda, nil
}

// foldBatchNorm returns a copy of a with every batch-norm folded into the
// dense or convolution layer before it.
func foldBatchNorm(a *ANN) (*ANN, []string, error) {
	if _, err := a.index(); err != nil {
		return nil, nil, err
	}
	uses := map[string]int{}
	for _, n := range a.Nodes {
		for _, in := range n.Inputs {
			uses[in]++
		}
	}
	out := &ANN{Output: a.Output}
	by := map[string]*ANNNode{}
	rename := map[string]string{}
	var warnings []string
	for _, n := range a.Nodes {
		c := *n
		c.Inputs = append([]string(nil), n.Inputs...)
		for i, in := range c.Inputs {
			if r, ok := rename[in]; ok {
				c.Inputs[i] = r
			}
		}
		if n.Op == OpBatchNorm {
			prev := by[c.Inputs[0]]
			if prev == nil || (prev.Op != OpDense && prev.Op != OpConv2d) || uses[n.Inputs[0]] != 1 {
				return nil, nil, &UnsupportedError{Node: n.Name, Reason: "batch norm must directly follow a dense or convolution layer that feeds nothing else"}
			}
			w := prev.Weight.Clone()
			per := len(w.Data) / w.Shape[0]
			bias := make([]float32, w.Shape[0])
			for o := 0; o < w.Shape[0]; o++ {
				for i := range w.Data[o*per : (o+1)*per] {
					w.Data[o*per+i] *= n.Scale[o]
				}
				b := float32(0)
				if prev.Bias != nil {
					b = prev.Bias[o]
				}
				bias[o] = n.Scale[o]*b + n.Shift[o]
			}
			prev.Weight, prev.Bias = w, bias
			rename[n.Name] = prev.Name
			if out.Output == n.Name {
				out.Output = prev.Name
			}
			warnings = append(warnings, fmt.Sprintf("layer %q: batch norm folded into %q", n.Name, prev.Name))
			continue
		}
		cp := &c
		out.Nodes = append(out.Nodes, cp)
		by[cp.Name] = cp
	}
	return out, warnings, nil
}
