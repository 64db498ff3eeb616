package pytorch

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/neuro-go/neuro/compile"
)

// stateDictLayers groups a state_dict's keys into layers, described by
// opts.Layers or inferred from an nn.Sequential's numeric prefixes.
func (im *importer) stateDictLayers(sd []NamedTensor) ([]*layer, error) {
	if len(sd) == 0 {
		return nil, &compile.UnsupportedError{Reason: "the state_dict is empty"}
	}
	described := false
	for _, s := range im.o.Layers {
		described = described || s.Kind != ""
	}
	if described {
		return im.describedLayers(sd)
	}
	layers, err := im.sequentialLayers(sd)
	if err != nil {
		return nil, err
	}
	// Entries without a Kind amend the inferred layers by name.
	for i, s := range im.o.Layers {
		var hit *layer
		for _, l := range layers {
			if l.name == s.Name {
				hit = l
			}
		}
		if hit == nil {
			if i == 0 && s.Name == "" && len(s.Params) == 0 {
				layers[0].shape = s.Shape
				continue
			}
			return nil, &compile.UnsupportedError{Node: s.Name, Reason: fmt.Sprintf("layer description %d (ImportOptions.Layers, options.layers over REST) names no layer of the state_dict (layers: %s)", i, layerNames(layers))}
		}
		if hit.params == nil {
			hit.params = map[string]float64{}
		}
		for k, v := range s.Params {
			hit.params[k] = v
		}
		if s.Shape != nil {
			hit.shape = s.Shape
		}
	}
	return layers, nil
}

func layerNames(ls []*layer) string {
	var ns []string
	for _, l := range ls {
		ns = append(ns, strconv.Quote(l.name))
	}
	return strings.Join(ns, ", ")
}

// sequentialLayers infers the layers of an nn.Sequential state_dict.
func (im *importer) sequentialLayers(sd []NamedTensor) ([]*layer, error) {
	byIdx := map[int]*layer{}
	for _, nt := range sd {
		pre, local, ok := strings.Cut(nt.Name, ".")
		idx, err := strconv.Atoi(pre)
		if !ok || err != nil || idx < 0 || local == "" {
			return nil, &compile.UnsupportedError{Node: nt.Name, Reason: "key is not <layer index>.<tensor>: not an nn.Sequential state_dict; describe its layers with ImportOptions.Layers (options.layers over REST), or link the package of its architecture (registered: " + architectureList() + ")"}
		}
		l := byIdx[idx]
		if l == nil {
			l = &layer{name: pre}
			byIdx[idx] = l
		}
		l.add(local, nt.Name, nt.Tensor)
	}
	idxs := make([]int, 0, len(byIdx))
	for i := range byIdx {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	var layers []*layer
	spiking := false
	for j, i := range idxs {
		l := byIdx[i]
		k, err := inferKind(l)
		if err != nil {
			return nil, err
		}
		l.kind = k
		spiking = spiking || k.spiking()
		if j > 0 && i != idxs[j-1]+1 {
			im.warn("inferred: layers %d..%d hold no tensors; taken as shape-preserving (Flatten, Dropout, Identity); describe activations or pooling with ImportOptions.Layers (options.layers over REST)", idxs[j-1]+1, i-1)
		}
		layers = append(layers, l)
	}
	if !spiking {
		return nil, &compile.UnsupportedError{Node: layers[0].key(layers[0].keys[0]), Reason: "the state_dict holds weight layers but no neuron it can recognise (snnTorch's beta/threshold buffers): a Norse, SpikingJelly or plain ANN network needs ImportOptions.Layers (options.layers over REST) to say what lies between the weights"}
	}
	im.rep.Kind = "snntorch state_dict"
	var kinds []string
	for _, l := range layers {
		kinds = append(kinds, l.name+":"+string(l.kind))
	}
	im.warn("inferred: layers from key prefixes and tensors: %s", strings.Join(kinds, ", "))
	return layers, nil
}

// describedLayers assigns keys to the layers opts.Layers lists.
func (im *importer) describedLayers(sd []NamedTensor) ([]*layer, error) {
	layers := make([]*layer, len(im.o.Layers))
	seen := map[string]bool{}
	for i, s := range im.o.Layers {
		if s.Name != "" && seen[s.Name] {
			return nil, &compile.UnsupportedError{Node: s.Name, Reason: fmt.Sprintf("ImportOptions.Layers[%d] repeats the name", i)}
		}
		seen[s.Name] = true
		layers[i] = &layer{name: s.Name, params: s.Params, shape: s.Shape}
		if layers[i].name == "" {
			layers[i].name = strconv.Itoa(i)
			if s.Kind == "" {
				return nil, &compile.UnsupportedError{Node: layers[i].name, Reason: fmt.Sprintf("ImportOptions.Layers[%d] has neither a name nor a kind", i)}
			}
		}
	}
	for _, nt := range sd {
		best := -1
		for i, s := range im.o.Layers {
			if s.Name != "" && strings.HasPrefix(nt.Name, s.Name+".") && (best < 0 || len(s.Name) > len(im.o.Layers[best].Name)) {
				best = i
			}
		}
		if best < 0 {
			return nil, &compile.UnsupportedError{Node: nt.Name, Reason: "no entry of ImportOptions.Layers claims this key (an entry named N claims the keys N.*)"}
		}
		layers[best].add(strings.TrimPrefix(nt.Name, im.o.Layers[best].Name+"."), nt.Name, nt.Tensor)
	}
	var families []string
	for i, s := range im.o.Layers {
		l := layers[i]
		if s.Kind == "" {
			if len(l.keys) == 0 {
				return nil, l.unsupported("ImportOptions.Layers[%d] has no kind and no tensors to infer one from", i)
			}
			k, err := inferKind(l)
			if err != nil {
				return nil, err
			}
			l.kind = k
			continue
		}
		k, ok := kindAliases[strings.ToLower(s.Kind)]
		if !ok {
			return nil, l.unsupported("layer kind %q is not supported (kinds: %s)", s.Kind, strings.Join(knownKinds(), ", "))
		}
		l.kind = k
		if fam := k.family(); fam != "" && !slices.Contains(families, fam) {
			families = append(families, fam)
		}
	}
	im.rep.Kind = "state_dict with layers"
	if len(families) > 0 {
		im.rep.Kind = strings.Join(families, "+") + " state_dict with layers"
	}
	return layers, nil
}

var snnTorchKeys = map[string]bool{
	"beta": true, "alpha": true, "threshold": true, "graded_spikes_factor": true,
	"reset_mechanism_val": true, "V": true, "recurrent.weight": true, "recurrent.bias": true,
	"recurrent.V": true,
}

// inferKind says what a layer is from the tensors it holds.
func inferKind(l *layer) (layerKind, error) {
	unknown := func(allowed map[string]bool, what string) error {
		for _, k := range l.keys {
			if !allowed[k] {
				return &compile.UnsupportedError{Node: l.key(k), Reason: fmt.Sprintf("unexpected tensor in a layer taken as %s", what)}
			}
		}
		return nil
	}
	switch {
	case l.has("beta"):
		for _, k := range []string{"R", "C", "time_step"} {
			if l.has(k) {
				return "", &compile.UnsupportedError{Node: l.key(k), Reason: "snnTorch Lapicque neurons are not supported"}
			}
		}
		if err := unknown(snnTorchKeys, "an snnTorch neuron"); err != nil {
			return "", err
		}
		rec := l.has("recurrent.weight") || l.has("V") || l.has("recurrent.V")
		switch {
		case l.has("alpha") && rec:
			return kindSnnTorchRSynaptic, nil
		case l.has("alpha"):
			return kindSnnTorchSynaptic, nil
		case rec:
			return kindSnnTorchRLeaky, nil
		}
		return kindSnnTorchLeaky, nil
	case l.has("input_weights") && l.has("recurrent_weights"):
		return kindNorseLIFRecurrent, unknown(map[string]bool{"input_weights": true, "recurrent_weights": true}, "a Norse LIFRecurrentCell")
	case l.has("running_mean") && l.has("running_var"):
		return kindBatchNorm, unknown(map[string]bool{"weight": true, "bias": true, "running_mean": true, "running_var": true, "num_batches_tracked": true}, "a BatchNorm")
	case l.has("weight"):
		if err := unknown(map[string]bool{"weight": true, "bias": true}, "a Linear or Conv2d"); err != nil {
			return "", err
		}
		switch len(l.tensors["weight"].Shape) {
		case 2:
			return kindLinear, nil
		case 4:
			return kindConv2d, nil
		}
		return "", &compile.UnsupportedError{Node: l.key("weight"), Reason: fmt.Sprintf("a weight of shape %v is neither a Linear (2-D) nor a Conv2d (4-D)", l.tensors["weight"].Shape)}
	}
	return "", &compile.UnsupportedError{Node: l.key(l.keys[0]), Reason: fmt.Sprintf("tensors %v match no supported layer (Linear, Conv2d, BatchNorm, snnTorch neurons, Norse LIFRecurrentCell); describe the layer with ImportOptions.Layers", l.keys)}
}
