package pytorch

import (
	"fmt"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// buildANN describes the layers as a compile.ANN and converts it to a
// spiking graph for the import's time step.
func (im *importer) buildANN(layers []*layer) (*snn.Graph, error) {
	shape, err := im.inputShape(layers)
	if err != nil {
		return nil, err
	}
	a := &compile.ANN{Nodes: []*compile.ANNNode{{Name: "input", Op: compile.OpInput, Shape: shape}}}
	prev := "input"
	names := map[string]bool{"input": true}
	for _, l := range layers {
		name := l.name
		for names[name] {
			name += "_"
		}
		names[name] = true
		n := &compile.ANNNode{Name: name, Inputs: []string{prev}}
		switch l.kind {
		case kindLinear:
			if err := l.checkParams(); err != nil {
				return nil, err
			}
			if n.Weight, err = im.weight(l, "weight", 2); err != nil {
				return nil, err
			}
			if n.Bias, err = im.bias(l, n.Weight.Shape[0]); err != nil {
				return nil, err
			}
			n.Op = compile.OpDense
		case kindConv2d:
			if err := l.checkParams(convParamNames...); err != nil {
				return nil, err
			}
			if !l.module {
				im.noteConvAssumption(l)
			}
			p, err := l.convParams()
			if err != nil {
				return nil, err
			}
			n.Stride, n.Padding, n.Dilation, n.Groups = p.stride, p.padding, p.dilation, p.groups
			if n.Weight, err = im.weight(l, "weight", 4); err != nil {
				return nil, err
			}
			if n.Bias, err = im.bias(l, n.Weight.Shape[0]); err != nil {
				return nil, err
			}
			n.Op = compile.OpConv2d
		case kindReLU:
			n.Op = compile.OpReLU
		case kindFlatten:
			n.Op = compile.OpFlatten
		case kindDropout, kindIdentity:
			n.Op = compile.OpIdentity
		case kindAvgPool2d, kindMaxPool2d:
			if err := l.checkParams("kernel_size", "stride", "padding", "dilation"); err != nil {
				return nil, err
			}
			p, err := l.poolParams()
			if err != nil {
				return nil, err
			}
			n.Kernel, n.Stride, n.Padding = p.kernel, p.stride, p.padding
			n.Op = compile.OpAvgPool2d
			if l.kind == kindMaxPool2d {
				n.Op = compile.OpMaxPool2d
			}
		case kindBatchNorm:
			if err := l.checkParams("eps"); err != nil {
				return nil, err
			}
			if n.Scale, n.Shift, err = im.batchNorm(l); err != nil {
				return nil, err
			}
			n.Op = compile.OpBatchNorm
		default:
			return nil, l.unsupported("layer kind %s in an artificial network", l.kind)
		}
		a.Nodes = append(a.Nodes, n)
		prev = name
	}
	conv := im.o.Conversion
	if conv.Dt == 0 {
		conv.Dt = im.o.Dt // the graph is built for the import's time step
	}
	if conv.MaxValues == 0 {
		conv.MaxValues = im.o.MaxValues
	}
	g, crep, err := compile.ConvertANN(a, &conv)
	if err != nil {
		return nil, err
	}
	im.rep.Converted = true
	im.rep.Conversion = crep
	im.rep.Approximate = append(im.rep.Approximate, crep.Warnings...)
	return g, nil
}

func (im *importer) batchNorm(l *layer) (scale, shift []float32, err error) {
	mean, err := im.floats(l, "running_mean")
	if err != nil {
		return nil, nil, err
	}
	variance, err := im.floats(l, "running_var")
	if err != nil {
		return nil, nil, err
	}
	c := len(mean)
	if len(variance) != c {
		return nil, nil, &compile.UnsupportedError{Node: l.key("running_var"), Reason: fmt.Sprintf("%d values for %d channels", len(variance), c)}
	}
	gamma, beta := make([]float32, c), make([]float32, c)
	for i := range gamma {
		gamma[i] = 1
	}
	for _, p := range []struct {
		name string
		dst  []float32
	}{{"weight", gamma}, {"bias", beta}} {
		if !l.has(p.name) {
			continue
		}
		xs, err := im.floats(l, p.name)
		if err != nil {
			return nil, nil, err
		}
		if len(xs) != c {
			return nil, nil, &compile.UnsupportedError{Node: l.key(p.name), Reason: fmt.Sprintf("%d values for %d channels", len(xs), c)}
		}
		copy(p.dst, xs)
	}
	eps, ok := l.params["eps"]
	if !ok {
		eps = 1e-5
		im.warn("inferred: layer %q: BatchNorm eps is not in the file; assumed torch's default 1e-5", l.name)
	}
	for i, v := range variance {
		if !(float64(v)+eps > 0) {
			return nil, nil, &compile.UnsupportedError{Node: l.key("running_var"), Reason: fmt.Sprintf("variance[%d] + eps = %v is not positive", i, float64(v)+eps)}
		}
	}
	scale, shift = compile.BatchNormAffine(gamma, beta, mean, variance, eps)
	return scale, shift, nil
}
