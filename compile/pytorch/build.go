package pytorch

import (
	"fmt"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// build turns the layers into a graph: a network with neurons is built
// node by node (buildSNN), one without is an ANN that compile.ConvertANN
// converts (buildANN). ReLU, BatchNorm and MaxPool2d exist only in the
// latter.
func (im *importer) build(layers []*layer) (*snn.Graph, error) {
	spiking, ann := false, false
	for _, l := range layers {
		switch {
		case l.kind.spiking():
			spiking = true
		case l.kind.annOnly():
			ann = true
		}
	}
	for i, l := range layers {
		if l.kind != kindEmbedding {
			continue
		}
		if i > 0 {
			return nil, l.unsupported("an Embedding must be the first layer (it reads the one-hot token); here it follows layer %q", layers[i-1].name)
		}
		if !spiking {
			return nil, l.unsupported("an Embedding starts a spiking language model, and this network has no neuron layer (snnTorch, Norse, SpikingJelly)")
		}
	}
	if spiking && ann {
		for _, l := range layers {
			if l.kind.annOnly() {
				return nil, l.unsupported("%s inside a spiking network is not supported", l.kind)
			}
		}
	}
	if !spiking {
		return im.buildANN(layers)
	}
	return im.buildSNN(layers)
}

// inputShape is the first layer's Shape, or what its weights imply.
func (im *importer) inputShape(layers []*layer) ([]int, error) {
	if s := layers[0].shape; s != nil {
		for _, d := range s {
			if d <= 0 || d > snn.MaxElements {
				return nil, layers[0].unsupported("input shape %v", s)
			}
		}
		if _, err := checkedSize(s); err != nil {
			return nil, layers[0].unsupported("input shape %v: %v", s, err)
		}
		return s, nil
	}
	for _, l := range layers {
		switch l.kind {
		case kindLinear:
			w, ok := l.tensors["weight"]
			if !ok || len(w.Shape) != 2 {
				return nil, l.unsupported("a Linear layer needs a 2-D tensor %q", l.key("weight"))
			}
			in := int(w.Shape[1])
			im.warn("inferred: input shape [%d] from layer %q's in_features", in, l.name)
			return []int{in}, nil
		case kindEmbedding:
			w, ok := l.tensors["weight"]
			if !ok || len(w.Shape) != 2 {
				return nil, l.unsupported("an Embedding layer needs a 2-D tensor %q (tokens × features)", l.key("weight"))
			}
			im.warn("inferred: input shape [%d], one-hot tokens, from layer %q's num_embeddings", w.Shape[0], l.name)
			return []int{int(w.Shape[0])}, nil
		case kindNorseLIFRecurrent:
			t, ok := l.tensors["input_weights"]
			if !ok || len(t.Shape) != 2 {
				return nil, &compile.UnsupportedError{Node: l.key("input_weights"), Reason: fmt.Sprintf("shape %v, want 2 dimensions", t.Shape)}
			}
			im.warn("inferred: input shape [%d] from layer %q's input_weights", t.Shape[1], l.name)
			return []int{int(t.Shape[1])}, nil
		case kindConv2d:
			return nil, l.unsupported("the first weight layer is a Conv2d: its input's height and width are not in the file; give ImportOptions.Layers[0].Shape as (C, H, W)")
		case kindFlatten, kindDropout, kindIdentity, kindReLU:
			continue
		}
		break
	}
	return nil, layers[0].unsupported("the input shape cannot be inferred from the first layer (%s); give ImportOptions.Layers[0].Shape", layers[0].kind)
}

func checkedSize(s []int) (int, error) {
	n := 1
	for _, d := range s {
		if d <= 0 || n > snn.MaxElements/d {
			return 0, fmt.Errorf("shape %v has more than %d elements", s, snn.MaxElements)
		}
		n *= d
	}
	return n, nil
}

func convOut(in, k, s, p, d int) int { return (in+2*p-d*(k-1)-1)/s + 1 }
