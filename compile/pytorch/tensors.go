package pytorch

import (
	"fmt"
	"math"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

func (im *importer) floats(l *layer, local string) ([]float32, error) {
	t := l.tensors[local]
	n := t.NumElements()
	if n*4 > im.budget {
		return nil, &LimitError{Limit: "ImportOptions.MaxBytes (at " + l.key(local) + ")", Value: im.o.MaxBytes - im.budget + n*4, Max: im.o.MaxBytes}
	}
	im.budget -= n * 4
	xs, err := t.Float32s()
	if err != nil {
		return nil, fmt.Errorf("pytorch: import: tensor %q: %w", l.key(local), err)
	}
	for i, x := range xs {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, &compile.UnsupportedError{Node: l.key(local), Reason: fmt.Sprintf("element %d is %v", i, x)}
		}
	}
	return xs, nil
}

// weight reads a tensor as an snn.Tensor of the given rank.
func (im *importer) weight(l *layer, local string, rank int) (*snn.Tensor, error) {
	t, ok := l.tensors[local]
	if !ok {
		return nil, l.unsupported("missing tensor %q", l.key(local))
	}
	if len(t.Shape) != rank {
		return nil, &compile.UnsupportedError{Node: l.key(local), Reason: fmt.Sprintf("shape %v, want %d dimensions", t.Shape, rank)}
	}
	shape := make([]int, rank)
	for i, d := range t.Shape {
		if d <= 0 {
			return nil, &compile.UnsupportedError{Node: l.key(local), Reason: fmt.Sprintf("shape %v has an empty dimension", t.Shape)}
		}
		shape[i] = int(d)
	}
	xs, err := im.floats(l, local)
	if err != nil {
		return nil, err
	}
	return &snn.Tensor{Shape: shape, Data: xs}, nil
}

// vector reads an optional per-neuron tensor (a scalar or n values) as
// float64s; a params entry of the same name overrides it, and def is used
// when neither exists.
func (im *importer) vector(l *layer, local string, n int, def []float64) ([]float64, error) {
	if v, ok := l.params[local]; ok {
		return []float64{v}, nil
	}
	if !l.has(local) {
		return def, nil
	}
	xs, err := im.floats(l, local)
	if err != nil {
		return nil, err
	}
	if len(xs) != 1 && len(xs) != n {
		return nil, &compile.UnsupportedError{Node: l.key(local), Reason: fmt.Sprintf("%d values for a layer of %d neurons", len(xs), n)}
	}
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out, nil
}

func (im *importer) bias(l *layer, n int) ([]float32, error) {
	if !l.has("bias") {
		return nil, nil
	}
	b, err := im.floats(l, "bias")
	if err != nil {
		return nil, err
	}
	if len(b) != n || len(l.tensors["bias"].Shape) != 1 {
		return nil, &compile.UnsupportedError{Node: l.key("bias"), Reason: fmt.Sprintf("shape %v for %d outputs", l.tensors["bias"].Shape, n)}
	}
	return b, nil
}
