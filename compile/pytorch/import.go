package pytorch

import (
	"fmt"
	"io"
	"math"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/compile/pytorch/internal/torchfile"
	"github.com/neuro-go/neuro/snn"
)

// Import is the "pytorch" importer (alias "torchscript"): it reads a file
// that torch.save or torch.jit.save wrote and returns a spiking graph.
//
// What it reads:
//
//   - snnTorch state_dicts of an nn.Sequential, with no description: the
//     layer order comes from the numeric key prefixes ("0.weight",
//     "1.beta", ...) and each layer's kind from the tensors it holds: a 2-D
//     weight is a Linear (Affine with a bias), a 4-D weight a Conv2d; beta
//     alone a Leaky, alpha and beta a Synaptic; recurrent.weight or V makes
//     them RLeaky and RSynaptic, whose recurrence becomes an edge from the
//     neuron back to itself through a Linear (all-to-all) or a Scale (V,
//     one-to-one). Neurons map through snn.SnnTorchLeaky and
//     snn.SnnTorchSynaptic; reset_mechanism_val 0, 1, 2 is subtract, zero,
//     none; graded_spikes_factor other than 1 adds a Scale after the neuron.
//     reset_delay is not in a state_dict: snnTorch's default (true) is
//     assumed and reported; a Layers entry with params {"reset_delay": 0}
//     says otherwise.
//   - state_dicts of a registered Architecture, recognised by their keys
//     (see RegisterArchitecture): the neuro-1 language models' lima
//     architecture, when models/lima is linked in, and any user's.
//   - Norse and SpikingJelly state_dicts, and plain PyTorch ANN state_dicts,
//     described by opts.Layers (their tensors do not say what lies between
//     the weights). Kinds: "linear", "conv2d", "relu", "flatten",
//     "avgpool2d", "maxpool2d", "batchnorm", "dropout", "identity";
//     "norse.lif" (params tau_syn_inv, tau_mem_inv, v_leak, v_th, v_reset,
//     Norse's defaults 200, 100, 0, 1, 0), "norse.lifrecurrent" (the same,
//     with the cell's input_weights and recurrent_weights), "norse.li"
//     (tau_syn_inv, tau_mem_inv, v_leak); "spikingjelly.lif" (tau,
//     v_threshold, v_reset, decay_input, soft_reset) and "spikingjelly.if"
//     (v_threshold, v_reset, soft_reset); "snntorch.leaky",
//     "snntorch.synaptic", "snntorch.rleaky", "snntorch.rsynaptic";
//     "embedding" (below). Norse's dt is taken to be opts.Dt.
//   - Spiking language models described by opts.Layers, as snnTorch
//     language models are written: an "embedding" first (nn.Embedding's
//     weight [V, E], used transposed as a Linear from a one-hot token of
//     V), then neuron layers each fed by a "linear", then a "linear"
//     readout of the last neuron layer's spikes that gives V logits. The
//     graph's one Input is the token and its one Output the logits of the
//     same step, one step per token, its neurons' state carried from
//     token to token: what a causal language model needs. An embedding
//     elsewhere than first, a network with one but no neurons, one that
//     ends with anything but a Linear (a readout of a membrane) or whose
//     readout's size is not V are refused, naming the layer.
//   - Full-module pickles (torch.save(model)) and TorchScript archives of
//     plain nn.Sequential ANNs (Linear, Conv2d, ReLU, Flatten, AvgPool2d,
//     MaxPool2d, BatchNorm1d/2d, Dropout, Identity), converted with
//     compile.ConvertANN(opts.Conversion, with its Dt defaulting to
//     opts.Dt). The input shape is the first
//     layer's Shape in opts.Layers, or the first Linear's in_features.
//
// opts.Layers works in one of two ways. If any entry has a Kind, the list
// is the whole network in order: every layer, including those without
// tensors (ReLU, Flatten, pooling, neurons of Norse and SpikingJelly), and
// each entry claims the keys that start with its Name and a dot; an entry
// with an empty Kind takes the kind its tensors imply. If no entry has a
// Kind, the entries only amend the layers found in the file, matched by
// Name: their Params override hyperparameters and the first layer's Shape
// gives the input shape.
//
// Everything else (unknown module classes, unknown keys, ReLU inside a
// spiking network) is a *compile.UnsupportedError naming the key or module
// path. The report lists what was inferred and assumed (as warnings) and
// what was approximated.
func Import(r io.ReaderAt, size int64, opts *compile.ImportOptions) (g *snn.Graph, rep *compile.ImportReport, err error) {
	defer func() {
		if p := recover(); p != nil {
			g, rep, err = nil, nil, fmt.Errorf("pytorch: import: internal error: %v", p)
		}
	}()
	o := opts.WithDefaults()
	if !(o.Dt > 0) || math.IsInf(o.Dt, 0) {
		return nil, nil, fmt.Errorf("pytorch: import: Dt is %v, must be positive", o.Dt)
	}
	if o.MaxBytes < 0 {
		return nil, nil, fmt.Errorf("pytorch: import: MaxBytes is %d, must not be negative", o.MaxBytes)
	}
	lim := Limits{
		MaxEntryBytes:     max(1, o.MaxBytes),
		MaxInflateBytes:   max(1, min(o.MaxBytes, torchfile.DefaultMaxInflateBytes)),
		MaxTensorElements: max(1, min(o.MaxBytes/4, torchfile.DefaultMaxTensorElements)),
	}
	f, err := Open(r, size, &Options{Limits: lim})
	if err != nil {
		return nil, nil, err // ErrUnsupported matches compile.ErrUnsupported
	}
	im := &importer{o: o, rep: &compile.ImportReport{Format: "pytorch"}, budget: o.MaxBytes}
	var layers []*layer
	switch f.Kind() {
	case KindStateDict:
		sd, err := f.StateDict()
		if err != nil {
			return nil, nil, err
		}
		if g, rep, ok, err := buildArchitecture(sd, &o); ok || err != nil {
			return g, rep, err
		}
		layers, err = im.stateDictLayers(sd)
		if err != nil {
			return nil, nil, err
		}
	case KindModule, KindTorchScript:
		layers, err = im.moduleLayers(f)
		if err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, &compile.UnsupportedError{Reason: fmt.Sprintf("the file holds %s, not a state_dict, an nn.Module or a TorchScript module", torchfile.TypeName(f.Root()))}
	}
	g, err = im.build(layers)
	if err != nil {
		return nil, nil, err
	}
	return g, im.rep, nil
}

type importer struct {
	o      compile.ImportOptions
	rep    *compile.ImportReport
	budget int64 // bytes of tensor data still allowed (ImportOptions.MaxBytes)
}

func (im *importer) warn(format string, args ...any) {
	im.rep.Warnings = append(im.rep.Warnings, fmt.Sprintf(format, args...))
}

func (im *importer) approx(format string, args ...any) {
	im.rep.Approximate = append(im.rep.Approximate, fmt.Sprintf(format, args...))
}
