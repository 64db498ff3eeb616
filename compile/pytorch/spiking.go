package pytorch

import (
	"fmt"
	"math"
	"slices"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// snnBuilder threads a sequential network through a graph.
type snnBuilder struct {
	im    *importer
	g     *snn.Graph
	prev  string // the node whose output feeds the next layer
	shape []int  // per-sample shape of prev's output
	// synapse is the node the previous layer added when it was a Linear or
	// Affine feeding prev alone: a recurrent bias folds into it.
	synapse string
}

func (b *snnBuilder) name(want string) string {
	for {
		if _, taken := b.g.Nodes[want]; !taken {
			return want
		}
		want += "_"
	}
}

func (im *importer) buildSNN(layers []*layer) (*snn.Graph, error) {
	shape, err := im.inputShape(layers)
	if err != nil {
		return nil, err
	}
	b := &snnBuilder{im: im, g: snn.NewGraph(), prev: "input", shape: shape}
	values := 0
	held := func(node string) error { // before a layer builds anything of its input's size
		n := compile.BoundedSize(b.shape, im.o.MaxValues)
		if values += n; values > im.o.MaxValues {
			return &compile.UnsupportedError{Node: node, Reason: fmt.Sprintf(
				"the network would hold more than %d values per sample (ImportOptions.MaxValues): its layers' outputs add up to more, %v alone holds %d",
				im.o.MaxValues, b.shape, n)}
		}
		return nil
	}
	if err := held("input"); err != nil {
		return nil, err
	}
	b.g.Add("input", &snn.Input{Shape: shape})
	for _, l := range layers {
		if err := b.layer(l); err != nil {
			return nil, err
		}
		if err := held(l.name); err != nil {
			return nil, err
		}
	}
	if layers[0].kind == kindEmbedding {
		if err := b.checkLanguageModel(layers); err != nil {
			return nil, err
		}
	}
	out := b.name("output")
	b.g.Add(out, &snn.Output{})
	b.g.Connect(b.prev, out)
	return b.g, nil
}

func (b *snnBuilder) layer(l *layer) error {
	im := b.im
	size := snn.Size(b.shape)
	synapse := ""
	defer func() { b.synapse = synapse }()
	switch l.kind {
	case kindLinear:
		if err := l.checkParams(); err != nil {
			return err
		}
		w, err := im.weight(l, "weight", 2)
		if err != nil {
			return err
		}
		if w.Shape[1] != size {
			return l.unsupported("Linear takes %d inputs, the layer before gives %v", w.Shape[1], b.shape)
		}
		bias, err := im.bias(l, w.Shape[0])
		if err != nil {
			return err
		}
		name := b.name(l.name)
		if bias != nil {
			b.g.Add(name, &snn.Affine{Weight: w, Bias: bias})
		} else {
			b.g.Add(name, &snn.Linear{Weight: w})
		}
		b.g.Connect(b.prev, name)
		b.prev, b.shape, synapse = name, []int{w.Shape[0]}, name
	case kindEmbedding:
		if err := l.checkParams(); err != nil {
			return err
		}
		w, err := im.weight(l, "weight", 2)
		if err != nil {
			return err
		}
		for _, k := range l.keys {
			if k != "weight" {
				return &compile.UnsupportedError{Node: l.key(k), Reason: "unexpected tensor in an Embedding layer (it holds only weight)"}
			}
		}
		if w.Shape[0] != size || len(b.shape) != 1 {
			return l.unsupported("Embedding of %d tokens, the input is %v", w.Shape[0], b.shape)
		}
		name := b.name(l.name)
		b.g.Add(name, &snn.Linear{Weight: transpose(w)}).Connect(b.prev, name)
		b.prev, b.shape, synapse = name, []int{w.Shape[1]}, name
	case kindConv2d:
		if err := l.checkParams(convParamNames...); err != nil {
			return err
		}
		if len(b.shape) != 3 {
			return l.unsupported("Conv2d needs a (C, H, W) input, the layer before gives %v (give ImportOptions.Layers[0].Shape)", b.shape)
		}
		im.noteConvAssumption(l)
		p, err := l.convParams()
		if err != nil {
			return err
		}
		w, err := im.weight(l, "weight", 4)
		if err != nil {
			return err
		}
		bias, err := im.bias(l, w.Shape[0])
		if err != nil {
			return err
		}
		c := &snn.Conv2d{Weight: w, Bias: bias, Stride: p.stride, Padding: p.padding, Dilation: p.dilation, Groups: p.groups, InputShape: b.shape}
		oh := convOut(b.shape[1], w.Shape[2], p.stride[0], p.padding[0], p.dilation[0])
		ow := convOut(b.shape[2], w.Shape[3], p.stride[1], p.padding[1], p.dilation[1])
		if p.stride[0] < 1 || p.stride[1] < 1 || oh < 1 || ow < 1 {
			return l.unsupported("Conv2d of kernel %v, stride %v, padding %v on input %v has no output", w.Shape[2:], p.stride, p.padding, b.shape)
		}
		name := b.name(l.name)
		b.g.Add(name, c).Connect(b.prev, name)
		b.prev, b.shape = name, []int{w.Shape[0], oh, ow}
	case kindAvgPool2d:
		if err := l.checkParams("kernel_size", "stride", "padding"); err != nil {
			return err
		}
		if len(b.shape) != 3 {
			return l.unsupported("AvgPool2d needs a (C, H, W) input, the layer before gives %v", b.shape)
		}
		p, err := l.poolParams()
		if err != nil {
			return err
		}
		k, s := p.kernel, p.stride
		oh, ow := convOut(b.shape[1], k[0], s[0], p.padding[0], 1), convOut(b.shape[2], k[1], s[1], p.padding[1], 1)
		if s[0] < 1 || s[1] < 1 || oh < 1 || ow < 1 {
			return l.unsupported("AvgPool2d of kernel %v, stride %v on input %v has no output", k, s, b.shape)
		}
		name := b.name(l.name)
		b.g.Add(name, &snn.AvgPool2d{Kernel: k, Stride: s, Padding: p.padding, InputShape: b.shape}).Connect(b.prev, name)
		b.prev, b.shape = name, []int{b.shape[0], oh, ow}
	case kindFlatten:
		b.shape = []int{size}
	case kindDropout, kindIdentity:
	case kindSnnTorchLeaky, kindSnnTorchSynaptic, kindSnnTorchRLeaky, kindSnnTorchRSynaptic:
		return b.snnTorch(l, size)
	case kindNorseLIF, kindNorseLI, kindNorseLIFRecurrent:
		return b.norse(l, size)
	case kindSpikingJellyLIF, kindSpikingJellyIF:
		return b.spikingJelly(l, size)
	default:
		return l.unsupported("layer kind %s in a spiking network", l.kind)
	}
	if l.kind == kindFlatten || l.kind == kindDropout || l.kind == kindIdentity {
		synapse = b.synapse
	}
	return nil
}

// transpose turns an Embedding's [V, E] table into the [E, V] weight of a
// Linear that maps a one-hot token to its row.
func transpose(w *snn.Tensor) *snn.Tensor {
	r, c := w.Shape[0], w.Shape[1]
	t := &snn.Tensor{Shape: []int{c, r}, Data: make([]float32, len(w.Data))}
	for i := range r {
		for j := range c {
			t.Data[j*r+i] = w.Data[i*c+j]
		}
	}
	return t
}

// checkLanguageModel holds a network that starts with an Embedding to the
// form of a language model: one-hot tokens of V in, V logits out at the
// same step, from a Linear readout of the last neuron layer's spikes.
func (b *snnBuilder) checkLanguageModel(layers []*layer) error {
	embed := layers[0]
	vocab := int(embed.tensors["weight"].Shape[0])
	last := layers[len(layers)-1]
	for i := len(layers) - 1; i > 0 && (last.kind == kindDropout || last.kind == kindIdentity); i-- {
		last = layers[i-1]
	}
	if last.kind != kindLinear {
		return last.unsupported("a network that starts with an Embedding is a language model and must end with a Linear readout of the last neuron layer's spikes, which gives the logits; it ends with a %s layer (a readout of a membrane is not supported)", last.kind)
	}
	if n := snn.Size(b.shape); n != vocab {
		return last.unsupported("the readout gives %d logits but Embedding %q has %d tokens: a language model's input and output are the same vocabulary", n, embed.name, vocab)
	}
	b.im.warn("inferred: a language model: layer %q reads one-hot tokens of a vocabulary of %d, layer %q gives their logits at the same step", embed.name, vocab, last.name)
	return nil
}

// neuron adds a neuron node fed by prev and makes it the new prev.
func (b *snnBuilder) neuron(l *layer, node snn.Node) string {
	name := b.name(l.name)
	b.g.Add(name, node).Connect(b.prev, name)
	b.prev = name
	return name
}

func (b *snnBuilder) snnTorch(l *layer, n int) error {
	im := b.im
	synaptic := l.kind == kindSnnTorchSynaptic || l.kind == kindSnnTorchRSynaptic
	recurrent := l.kind == kindSnnTorchRLeaky || l.kind == kindSnnTorchRSynaptic
	p, err := im.snnTorchParams(l, n, synaptic)
	if err != nil {
		return err
	}
	var node snn.Node
	if synaptic {
		node, err = snn.SnnTorchSynaptic(p.SnnTorchParams, n, im.o.Dt)
	} else {
		node, err = snn.SnnTorchLeaky(p.SnnTorchParams, n, im.o.Dt)
		// RLeaky's "zero" reset zeroes the whole new membrane, input
		// included, on the step after a spike (as Synaptic's does): a
		// one-step refractory period. Leaky's keeps the new input.
		if err == nil && recurrent && p.ResetMechanism == "zero" && p.ResetDelay {
			lif, ok := node.(*snn.LIF)
			if !ok {
				return l.unsupported("RLeaky with beta = 1 and the zero reset is not supported")
			}
			lif.Refractory = []float64{im.o.Dt}
		}
	}
	if err != nil {
		return l.unsupported("%v", err)
	}
	neuron := b.neuron(l, node)
	out := neuron
	graded := false
	for _, g := range p.graded {
		graded = graded || g != 1
	}
	if graded {
		out = b.name(l.name + ".graded")
		b.g.Add(out, scaleNode(p.graded, n)).Connect(neuron, out)
		im.warn("inferred: layer %q: graded_spikes_factor %v: a Scale after the neuron", l.name, p.graded)
	}
	if recurrent {
		if err := b.snnTorchRecurrence(l, n, neuron, out); err != nil {
			return err
		}
	}
	b.prev, b.shape = out, []int{n}
	return nil
}

// scaleNode is a Scale of n values by one factor or one each.
func scaleNode(factors []float64, n int) *snn.Scale {
	s := &snn.Scale{Scale: make([]float32, len(factors)), Shape: []int{n}}
	for i, f := range factors {
		s.Scale[i] = float32(f)
	}
	return s
}

// snnTorchRecurrence adds RLeaky's and RSynaptic's recurrent(spk[t−1])
// term: an edge from the neuron's (graded) output back into it, which the
// simulator delays by one step, through a Linear (all_to_all) or a Scale
// (one-to-one V). The recurrent Linear's bias, which snnTorch adds at every
// step including the first, folds into the bias of the layer feeding the
// neuron.
func (b *snnBuilder) snnTorchRecurrence(l *layer, n int, neuron, out string) error {
	im := b.im
	rec := b.name(l.name + ".recurrent")
	switch {
	case l.has("recurrent.weight"):
		w, err := im.weight(l, "recurrent.weight", 2)
		if err != nil {
			return err
		}
		if w.Shape[0] != n || w.Shape[1] != n {
			return &compile.UnsupportedError{Node: l.key("recurrent.weight"), Reason: fmt.Sprintf("shape %v for %d neurons (convolutional recurrence is not supported)", w.Shape, n)}
		}
		b.g.Add(rec, &snn.Linear{Weight: w})
		if l.has("recurrent.bias") {
			bias, err := im.bias(&layer{name: l.name, tensors: map[string]*Tensor{"bias": l.tensors["recurrent.bias"]}, full: map[string]string{"bias": l.key("recurrent.bias")}}, n)
			if err != nil {
				return err
			}
			if err := b.foldBias(l, bias); err != nil {
				return err
			}
		}
		im.warn("inferred: layer %q: all-to-all recurrence from recurrent.weight, an edge %s → %s → %s read one step late", l.name, out, rec, neuron)
	case l.has("V") || l.has("recurrent.V"):
		key := "V"
		if !l.has("V") {
			key = "recurrent.V"
		}
		v, err := im.vector(l, key, n, nil)
		if err != nil {
			return err
		}
		b.g.Add(rec, scaleNode(v, n))
		im.warn("inferred: layer %q: one-to-one recurrence from %s, an edge %s → %s → %s read one step late", l.name, key, out, rec, neuron)
	default:
		return l.unsupported("%s needs recurrent.weight or V", l.kind)
	}
	b.g.Connect(out, rec, neuron)
	return nil
}

func (b *snnBuilder) foldBias(l *layer, bias []float32) error {
	if b.synapse == "" {
		return &compile.UnsupportedError{Node: l.key("recurrent.bias"), Reason: "a recurrent bias needs a Linear layer right before the neuron to fold into"}
	}
	switch s := b.g.Nodes[b.synapse].(type) {
	case *snn.Linear:
		b.g.Nodes[b.synapse] = &snn.Affine{Weight: s.Weight, Bias: slices.Clone(bias)}
	case *snn.Affine:
		sum := slices.Clone(s.Bias)
		for i := range sum {
			sum[i] += bias[i]
		}
		s.Bias = sum
	default:
		return &compile.UnsupportedError{Node: l.key("recurrent.bias"), Reason: "a recurrent bias needs a Linear layer right before the neuron"}
	}
	b.im.warn("inferred: layer %q: recurrent.bias folded into layer %q's bias (snnTorch adds it at every step)", l.name, b.synapse)
	return nil
}

func (b *snnBuilder) norse(l *layer, n int) error {
	im := b.im
	p, err := l.norseParams()
	if err != nil {
		return err
	}
	var in *snn.Tensor
	if l.kind == kindNorseLIFRecurrent {
		if in, err = im.weight(l, "input_weights", 2); err != nil {
			return err
		}
		if in.Shape[1] != n {
			return &compile.UnsupportedError{Node: l.key("input_weights"), Reason: fmt.Sprintf("takes %d inputs, the layer before gives %v", in.Shape[1], b.shape)}
		}
		n = in.Shape[0]
	} else if len(l.keys) > 0 {
		return &compile.UnsupportedError{Node: l.key(l.keys[0]), Reason: fmt.Sprintf("a %s layer holds no tensors", l.kind)}
	}
	cell, err := snn.NorseLIF(p, n, im.o.Dt)
	if err != nil {
		return l.unsupported("%v", err)
	}
	switch l.kind {
	case kindNorseLI:
		// LICell is LIFCell's update without the threshold: the same
		// impulse input, Euler decays and initial v = v_leak.
		b.neuron(l, &snn.CubaLI{TauSyn: cell.TauSyn, TauMem: cell.TauMem, R: cell.R, VLeak: cell.VLeak, WIn: cell.WIn, Shape: []int{n}})
	case kindNorseLIF:
		b.neuron(l, cell)
	case kindNorseLIFRecurrent:
		inName := b.name(l.name + ".input")
		b.g.Add(inName, &snn.Linear{Weight: in}).Connect(b.prev, inName)
		b.prev = inName
		neuron := b.neuron(l, cell)
		rw, err := im.weight(l, "recurrent_weights", 2)
		if err != nil {
			return err
		}
		if rw.Shape[0] != n || rw.Shape[1] != n {
			return &compile.UnsupportedError{Node: l.key("recurrent_weights"), Reason: fmt.Sprintf("shape %v for %d neurons", rw.Shape, n)}
		}
		rec := b.name(l.name + ".recurrent")
		b.g.Add(rec, &snn.Linear{Weight: rw}).Connect(neuron, rec, neuron)
	}
	b.shape = []int{n}
	im.warn("inferred: layer %q: Norse dt taken as the import Dt %g", l.name, im.o.Dt)
	return nil
}

// spikingJelly maps SpikingJelly's LIFNode and IFNode. Their charge, from
// activation_based/functional/neuron.py (lif_charge, if_step) is
//
//	decay_input:  v ← v + (x − (v − v_r))/τ
//	otherwise:    v ← v − (v − v_r)/τ + x
//	IF:           v ← v + x
//
// with v_r = v_reset (0 for the soft reset), then a spike where
// v − v_threshold ≥ 0 and v ← v_reset (hard) or v ← v − v_threshold (soft,
// v_reset None). As an LIF: step decay 1 − 1/τ, v_leak = v_r, and input
// gain 1/τ (R = 1) or 1 (R = τ).
func (b *snnBuilder) spikingJelly(l *layer, n int) error {
	p, err := l.spikingJellyParams()
	if err != nil {
		return err
	}
	dt := b.im.o.Dt
	if l.kind == kindSpikingJellyIF {
		b.neuron(l, &snn.IF{R: []float64{1 / dt}, VThreshold: []float64{p.vThreshold}, VReset: []float64{p.vReset}, Reset: p.reset, Shape: []int{n}})
	} else {
		r := 1.0
		if !p.decayInput {
			r = p.tau
		}
		b.neuron(l, &snn.LIF{Tau: []float64{-dt / math.Log1p(-1/p.tau)}, R: []float64{r}, VLeak: []float64{p.vReset}, VThreshold: []float64{p.vThreshold}, VReset: []float64{p.vReset}, Reset: p.reset, Shape: []int{n}})
	}
	b.shape = []int{n}
	b.im.approx("layer %q: SpikingJelly fires at v ≥ v_threshold, the simulator at v > v_threshold: they differ only when v lands exactly on the threshold", l.name)
	return nil
}
