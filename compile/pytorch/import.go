package pytorch

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

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
//     "snntorch.synaptic", "snntorch.rleaky", "snntorch.rsynaptic".
//     Norse's dt is taken to be opts.Dt.
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

// layer is one layer of the network as the importer sees it: a key prefix,
// a kind, its tensors and its hyperparameters.
type layer struct {
	name    string
	kind    string
	params  map[string]float64
	shape   []int
	tensors map[string]*Tensor // by local name: "weight", "recurrent.weight"
	keys    []string           // local names in file order
	full    map[string]string  // local name → full state_dict key, for errors
	module  bool               // read from a module tree (hyperparameters known)
	script  bool               // from a TorchScript archive
}

func (l *layer) has(k string) bool { _, ok := l.tensors[k]; return ok }

func (l *layer) key(local string) string {
	if k, ok := l.full[local]; ok {
		return k
	}
	if l.name == "" {
		return local
	}
	return l.name + "." + local
}

func (l *layer) add(local, full string, t *Tensor) {
	if l.tensors == nil {
		l.tensors, l.full = map[string]*Tensor{}, map[string]string{}
	}
	l.tensors[local] = t
	l.full[local] = full
	l.keys = append(l.keys, local)
}

func (l *layer) unsupported(format string, args ...any) error {
	return &compile.UnsupportedError{Node: l.name, Reason: fmt.Sprintf(format, args...)}
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

// canonical kinds, with the spellings accepted in LayerSpec.Kind.
var kindAliases = map[string]string{
	"linear": "linear", "dense": "linear", "affine": "linear",
	"conv2d":    "conv2d",
	"relu":      "relu",
	"flatten":   "flatten",
	"avgpool2d": "avgpool2d", "maxpool2d": "maxpool2d",
	"batchnorm": "batchnorm", "batchnorm1d": "batchnorm", "batchnorm2d": "batchnorm",
	"dropout": "dropout", "identity": "identity",
	"snntorch.leaky": "snntorch.leaky", "snntorch.synaptic": "snntorch.synaptic",
	"snntorch.rleaky": "snntorch.rleaky", "snntorch.rsynaptic": "snntorch.rsynaptic",
	"norse.lif": "norse.lif", "norse.lifcell": "norse.lif",
	"norse.lifrecurrent": "norse.lifrecurrent", "norse.lifrecurrentcell": "norse.lifrecurrent",
	"norse.li": "norse.li", "norse.licell": "norse.li",
	"spikingjelly.lif": "spikingjelly.lif", "spikingjelly.lifnode": "spikingjelly.lif",
	"spikingjelly.if": "spikingjelly.if", "spikingjelly.ifnode": "spikingjelly.if",
}

func isSpikingKind(k string) bool {
	return strings.HasPrefix(k, "snntorch.") || strings.HasPrefix(k, "norse.") || strings.HasPrefix(k, "spikingjelly.")
}

// ---- state_dicts ----

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
		spiking = spiking || isSpikingKind(k)
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
		kinds = append(kinds, l.name+":"+l.kind)
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
		if fam, _, ok := strings.Cut(k, "."); ok && !slices.Contains(families, fam) {
			families = append(families, fam)
		}
	}
	im.rep.Kind = "state_dict with layers"
	if len(families) > 0 {
		im.rep.Kind = strings.Join(families, "+") + " state_dict with layers"
	}
	return layers, nil
}

func knownKinds() []string {
	var ks []string
	for k, v := range kindAliases {
		if k == v {
			ks = append(ks, k)
		}
	}
	sort.Strings(ks)
	return ks
}

var snnTorchKeys = map[string]bool{
	"beta": true, "alpha": true, "threshold": true, "graded_spikes_factor": true,
	"reset_mechanism_val": true, "V": true, "recurrent.weight": true, "recurrent.bias": true,
	"recurrent.V": true,
}

// inferKind says what a layer is from the tensors it holds.
func inferKind(l *layer) (string, error) {
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
			return "snntorch.rsynaptic", nil
		case l.has("alpha"):
			return "snntorch.synaptic", nil
		case rec:
			return "snntorch.rleaky", nil
		}
		return "snntorch.leaky", nil
	case l.has("input_weights") && l.has("recurrent_weights"):
		return "norse.lifrecurrent", unknown(map[string]bool{"input_weights": true, "recurrent_weights": true}, "a Norse LIFRecurrentCell")
	case l.has("running_mean") && l.has("running_var"):
		return "batchnorm", unknown(map[string]bool{"weight": true, "bias": true, "running_mean": true, "running_var": true, "num_batches_tracked": true}, "a BatchNorm")
	case l.has("weight"):
		if err := unknown(map[string]bool{"weight": true, "bias": true}, "a Linear or Conv2d"); err != nil {
			return "", err
		}
		switch len(l.tensors["weight"].Shape) {
		case 2:
			return "linear", nil
		case 4:
			return "conv2d", nil
		}
		return "", &compile.UnsupportedError{Node: l.key("weight"), Reason: fmt.Sprintf("a weight of shape %v is neither a Linear (2-D) nor a Conv2d (4-D)", l.tensors["weight"].Shape)}
	}
	return "", &compile.UnsupportedError{Node: l.key(l.keys[0]), Reason: fmt.Sprintf("tensors %v match no supported layer (Linear, Conv2d, BatchNorm, snnTorch neurons, Norse LIFRecurrentCell); describe the layer with ImportOptions.Layers", l.keys)}
}

// ---- module trees ----

var moduleKinds = map[string]string{
	"Linear": "linear", "Conv2d": "conv2d", "ReLU": "relu", "Flatten": "flatten",
	"AvgPool2d": "avgpool2d", "MaxPool2d": "maxpool2d", "BatchNorm1d": "batchnorm",
	"BatchNorm2d": "batchnorm", "Dropout": "dropout", "Dropout1d": "dropout",
	"Dropout2d": "dropout", "Identity": "identity",
}

// shortClass strips TorchScript's "__torch__." and "___torch_mangle_N"
// parts: "__torch__.torch.nn.modules.linear.___torch_mangle_0.Linear" is
// torch.nn.modules.linear.Linear.
func shortClass(c string) (full, short string) {
	c = strings.TrimPrefix(c, "__torch__.")
	var parts []string
	for _, p := range strings.Split(c, ".") {
		if !strings.HasPrefix(p, "___torch_mangle_") {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "."), parts[len(parts)-1]
}

func (im *importer) moduleLayers(f *File) ([]*layer, error) {
	mods, err := f.Modules()
	if err != nil {
		return nil, err
	}
	script := f.Kind() == KindTorchScript
	im.rep.Kind = "module ann"
	if script {
		im.rep.Kind = "torchscript ann"
	}
	if len(mods) == 0 {
		return nil, &compile.UnsupportedError{Reason: "no module in the file"}
	}
	root, short := shortClass(mods[0].Class)
	if !strings.HasPrefix(root, "torch.nn.") || (short != "Sequential" && len(mods) > 1) {
		return nil, &compile.UnsupportedError{Node: "(root)", Reason: fmt.Sprintf("module class %s: only nn.Sequential networks (or a single supported layer) are read; save the state_dict and describe it with ImportOptions.Layers", root)}
	}
	var layers []*layer
	for i := range mods {
		m := &mods[i]
		if i == 0 && len(mods) > 1 {
			continue // the root Sequential
		}
		leaf := i+1 >= len(mods) || !strings.HasPrefix(mods[i+1].Path, m.Path+".")
		full, cls := shortClass(m.Class)
		if !leaf {
			if strings.HasPrefix(full, "torch.nn.") && (cls == "Sequential" || cls == "ModuleList") {
				continue // nested containers: their leaves follow in order
			}
			return nil, &compile.UnsupportedError{Node: m.Path, Reason: fmt.Sprintf("module class %s with submodules is not supported", full)}
		}
		kind, ok := moduleKinds[cls]
		if !ok || !strings.HasPrefix(full, "torch.nn.") {
			if cls == "Sequential" || cls == "ModuleList" {
				continue // empty container
			}
			reason := fmt.Sprintf("module class %s is not supported (ANN modules: Linear, Conv2d, ReLU, Flatten, AvgPool2d, MaxPool2d, BatchNorm1d/2d, Dropout, Identity)", full)
			if strings.HasPrefix(full, "snntorch.") || strings.HasPrefix(full, "norse.") || strings.HasPrefix(full, "spikingjelly.") {
				reason += "; save a spiking network's state_dict instead (snnTorch's is read as it is; Norse's and SpikingJelly's with ImportOptions.Layers)"
			}
			return nil, &compile.UnsupportedError{Node: m.Path, Reason: reason}
		}
		l := &layer{name: m.Path, kind: kind, module: true, script: script, params: map[string]float64{}}
		if l.name == "" {
			l.name = "0"
		}
		for _, p := range m.Params {
			l.add(p.Name, prefixed(m.Path, p.Name), p.Tensor)
		}
		for _, b := range m.Buffers {
			l.add(b.Name, prefixed(m.Path, b.Name), b.Tensor)
		}
		if err := moduleHyper(l, m, cls); err != nil {
			return nil, err
		}
		layers = append(layers, l)
	}
	if len(layers) == 0 {
		return nil, &compile.UnsupportedError{Reason: "the module has no layers"}
	}
	// Layers entries amend module layers by name (a Shape for the input).
	for i, s := range im.o.Layers {
		var hit *layer
		for _, l := range layers {
			if l.name == s.Name {
				hit = l
			}
		}
		if hit == nil && i == 0 {
			hit = layers[0]
		}
		if hit == nil {
			return nil, &compile.UnsupportedError{Node: s.Name, Reason: fmt.Sprintf("layer description %d (ImportOptions.Layers, options.layers over REST) names no layer of the module (layers: %s)", i, layerNames(layers))}
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

func prefixed(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// moduleHyper turns a module's hyperparameters into params, refusing the
// settings the graph cannot represent.
func moduleHyper(l *layer, m *ModuleInfo, cls string) error {
	pair := func(name string) (bool, error) {
		v, ok := m.Hyperparameter(name)
		if !ok || v == nil {
			return false, nil
		}
		switch x := v.(type) {
		case int64:
			l.params[name+"_h"], l.params[name+"_w"] = float64(x), float64(x)
		case Tuple:
			if len(x) != 2 {
				return false, l.unsupported("%s %s has %d values, want 2", cls, name, len(x))
			}
			for i, s := range []string{"_h", "_w"} {
				n, ok := x[i].(int64)
				if !ok {
					return false, l.unsupported("%s %s is %v", cls, name, v)
				}
				l.params[name+s] = float64(n)
			}
		case string:
			return false, l.unsupported("%s %s=%q is not supported; give explicit numbers", cls, name, x)
		default:
			return false, l.unsupported("%s %s is a %s", cls, name, torchfile.TypeName(v))
		}
		return true, nil
	}
	flag := func(name string) bool {
		v, _ := m.Hyperparameter(name)
		b, _ := v.(bool)
		return b
	}
	num := func(name string) (float64, bool) {
		v, ok := m.Hyperparameter(name)
		switch x := v.(type) {
		case int64:
			return float64(x), ok
		case float64:
			return x, ok
		}
		return 0, false
	}
	switch l.kind {
	case "conv2d":
		for _, n := range []string{"stride", "padding", "dilation"} {
			ok, err := pair(n)
			if err != nil {
				return err
			}
			if !ok && l.script {
				return l.unsupported("TorchScript keeps Conv2d's %s in its code, which is not read; save the module with torch.save, or its state_dict with ImportOptions.Layers", n)
			}
		}
		if g, ok := num("groups"); ok {
			l.params["groups"] = g
		}
		if flag("transposed") {
			return l.unsupported("transposed convolutions are not supported")
		}
		if v, ok := m.Hyperparameter("padding_mode"); ok && v != "zeros" {
			return l.unsupported("Conv2d padding_mode %v is not supported (only zeros)", v)
		}
	case "avgpool2d", "maxpool2d":
		for _, n := range []string{"kernel_size", "stride", "padding"} {
			ok, err := pair(n)
			if err != nil {
				return err
			}
			if !ok && n == "kernel_size" {
				return l.unsupported("%s has no kernel_size in the file (TorchScript keeps it in its code); save the module with torch.save", cls)
			}
		}
		if flag("ceil_mode") {
			return l.unsupported("%s ceil_mode=True is not supported", cls)
		}
		if v, ok := m.Hyperparameter("count_include_pad"); ok && v == false && l.params["padding_h"]+l.params["padding_w"] > 0 {
			return l.unsupported("AvgPool2d count_include_pad=False with padding is not supported")
		}
		if v, ok := m.Hyperparameter("divisor_override"); ok && v != nil {
			return l.unsupported("AvgPool2d divisor_override is not supported")
		}
		if ok, err := pair("dilation"); err != nil {
			return err
		} else if ok && (l.params["dilation_h"] != 1 || l.params["dilation_w"] != 1) {
			return l.unsupported("MaxPool2d dilation other than 1 is not supported")
		}
	case "batchnorm":
		if e, ok := num("eps"); ok {
			l.params["eps"] = e
		}
	case "flatten":
		s, ok1 := num("start_dim")
		e, ok2 := num("end_dim")
		if (ok1 && s != 1) || (ok2 && e != -1) {
			return l.unsupported("Flatten(start_dim=%v, end_dim=%v): only the default (1, -1) is supported", s, e)
		}
	}
	return nil
}

// ---- reading tensors ----

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

func (l *layer) param(name string, def float64) float64 {
	if v, ok := l.params[name]; ok {
		return v
	}
	return def
}

// pair reads a geometry parameter: name_h and name_w, or name for both.
func (l *layer) pair(name string, def int) ([2]int, error) {
	v := l.param(name, float64(def))
	h, w := l.param(name+"_h", v), l.param(name+"_w", v)
	out := [2]int{int(h), int(w)}
	if float64(out[0]) != h || float64(out[1]) != w || out[0] < 0 || out[1] < 0 || h > 1<<20 || w > 1<<20 {
		return out, l.unsupported("%s (%v, %v) is not a small non-negative integer", name, h, w)
	}
	return out, nil
}

func (l *layer) checkParams(allowed ...string) error {
	for k := range l.params {
		base := strings.TrimSuffix(strings.TrimSuffix(k, "_h"), "_w")
		if !slices.Contains(allowed, k) && !slices.Contains(allowed, base) {
			return l.unsupported("parameter %q is not one of %s's (%s)", k, l.kind, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// ---- building ----

func (im *importer) build(layers []*layer) (*snn.Graph, error) {
	spiking, ann := false, false
	for _, l := range layers {
		switch {
		case isSpikingKind(l.kind):
			spiking = true
		case l.kind == "relu" || l.kind == "batchnorm" || l.kind == "maxpool2d":
			ann = true
		}
	}
	if spiking && ann {
		for _, l := range layers {
			if l.kind == "relu" || l.kind == "batchnorm" || l.kind == "maxpool2d" {
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
		case "linear":
			w, ok := l.tensors["weight"]
			if !ok || len(w.Shape) != 2 {
				return nil, l.unsupported("a Linear layer needs a 2-D tensor %q", l.key("weight"))
			}
			in := int(w.Shape[1])
			im.warn("inferred: input shape [%d] from layer %q's in_features", in, l.name)
			return []int{in}, nil
		case "norse.lifrecurrent":
			t, ok := l.tensors["input_weights"]
			if !ok || len(t.Shape) != 2 {
				return nil, &compile.UnsupportedError{Node: l.key("input_weights"), Reason: fmt.Sprintf("shape %v, want 2 dimensions", t.Shape)}
			}
			im.warn("inferred: input shape [%d] from layer %q's input_weights", t.Shape[1], l.name)
			return []int{int(t.Shape[1])}, nil
		case "conv2d":
			return nil, l.unsupported("the first weight layer is a Conv2d: its input's height and width are not in the file; give ImportOptions.Layers[0].Shape as (C, H, W)")
		case "flatten", "dropout", "identity", "relu":
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

// geometry of Conv2d and pooling layers.
func convGeometry(l *layer) (stride, pad, dil [2]int, groups int, err error) {
	if stride, err = l.pair("stride", 1); err != nil {
		return
	}
	if pad, err = l.pair("padding", 0); err != nil {
		return
	}
	if dil, err = l.pair("dilation", 1); err != nil {
		return
	}
	g := l.param("groups", 1)
	groups = int(g)
	if float64(groups) != g || groups < 1 || groups > 1<<20 {
		err = l.unsupported("groups %v", g)
	}
	return
}

func poolGeometry(l *layer) (kernel, stride, pad [2]int, err error) {
	if kernel, err = l.pair("kernel_size", 0); err != nil {
		return
	}
	if kernel[0] < 1 || kernel[1] < 1 {
		err = l.unsupported("%s needs params kernel_size (or kernel_size_h and kernel_size_w)", l.kind)
		return
	}
	if _, ok := l.params["stride_h"]; !ok {
		if _, ok := l.params["stride"]; !ok {
			l.params["stride_h"], l.params["stride_w"] = float64(kernel[0]), float64(kernel[1])
		}
	}
	if stride, err = l.pair("stride", 1); err != nil {
		return
	}
	pad, err = l.pair("padding", 0)
	return
}

func convOut(in, k, s, p, d int) int { return (in+2*p-d*(k-1)-1)/s + 1 }

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
		case "linear":
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
		case "conv2d":
			if err := l.checkParams("stride", "padding", "dilation", "groups"); err != nil {
				return nil, err
			}
			if !l.module {
				im.noteConvAssumption(l)
			}
			if n.Stride, n.Padding, n.Dilation, n.Groups, err = convGeometry(l); err != nil {
				return nil, err
			}
			if n.Weight, err = im.weight(l, "weight", 4); err != nil {
				return nil, err
			}
			if n.Bias, err = im.bias(l, n.Weight.Shape[0]); err != nil {
				return nil, err
			}
			n.Op = compile.OpConv2d
		case "relu":
			n.Op = compile.OpReLU
		case "flatten":
			n.Op = compile.OpFlatten
		case "dropout", "identity":
			n.Op = compile.OpIdentity
		case "avgpool2d", "maxpool2d":
			if err := l.checkParams("kernel_size", "stride", "padding", "dilation"); err != nil {
				return nil, err
			}
			if n.Kernel, n.Stride, n.Padding, err = poolGeometry(l); err != nil {
				return nil, err
			}
			n.Op = compile.OpAvgPool2d
			if l.kind == "maxpool2d" {
				n.Op = compile.OpMaxPool2d
			}
		case "batchnorm":
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
	g, crep, err := compile.ConvertANN(a, &conv)
	if err != nil {
		return nil, err
	}
	im.rep.Converted = true
	im.rep.Conversion = crep
	im.rep.Approximate = append(im.rep.Approximate, crep.Warnings...)
	return g, nil
}

func (im *importer) noteConvAssumption(l *layer) {
	var miss []string
	for _, n := range []string{"stride", "padding", "dilation", "groups"} {
		_, a := l.params[n]
		_, b := l.params[n+"_h"]
		if !a && !b {
			miss = append(miss, n)
		}
	}
	if len(miss) > 0 {
		im.warn("inferred: layer %q: Conv2d %s not in a state_dict; assumed torch's defaults (stride 1, padding 0, dilation 1, groups 1); set them in ImportOptions.Layers params", l.name, strings.Join(miss, ", "))
	}
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
	b.g.Add("input", &snn.Input{Shape: shape})
	for _, l := range layers {
		if err := b.layer(l); err != nil {
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
	case "linear":
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
	case "conv2d":
		if err := l.checkParams("stride", "padding", "dilation", "groups"); err != nil {
			return err
		}
		if len(b.shape) != 3 {
			return l.unsupported("Conv2d needs a (C, H, W) input, the layer before gives %v (give ImportOptions.Layers[0].Shape)", b.shape)
		}
		im.noteConvAssumption(l)
		stride, pad, dil, groups, err := convGeometry(l)
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
		c := &snn.Conv2d{Weight: w, Bias: bias, Stride: stride, Padding: pad, Dilation: dil, Groups: groups, InputShape: b.shape}
		oh := convOut(b.shape[1], w.Shape[2], stride[0], pad[0], dil[0])
		ow := convOut(b.shape[2], w.Shape[3], stride[1], pad[1], dil[1])
		if stride[0] < 1 || stride[1] < 1 || oh < 1 || ow < 1 {
			return l.unsupported("Conv2d of kernel %v, stride %v, padding %v on input %v has no output", w.Shape[2:], stride, pad, b.shape)
		}
		name := b.name(l.name)
		b.g.Add(name, c).Connect(b.prev, name)
		b.prev, b.shape = name, []int{w.Shape[0], oh, ow}
	case "avgpool2d":
		if err := l.checkParams("kernel_size", "stride", "padding"); err != nil {
			return err
		}
		if len(b.shape) != 3 {
			return l.unsupported("AvgPool2d needs a (C, H, W) input, the layer before gives %v", b.shape)
		}
		k, s, p, err := poolGeometry(l)
		if err != nil {
			return err
		}
		oh, ow := convOut(b.shape[1], k[0], s[0], p[0], 1), convOut(b.shape[2], k[1], s[1], p[1], 1)
		if s[0] < 1 || s[1] < 1 || oh < 1 || ow < 1 {
			return l.unsupported("AvgPool2d of kernel %v, stride %v on input %v has no output", k, s, b.shape)
		}
		name := b.name(l.name)
		b.g.Add(name, &snn.AvgPool2d{Kernel: k, Stride: s, Padding: p, InputShape: b.shape}).Connect(b.prev, name)
		b.prev, b.shape = name, []int{b.shape[0], oh, ow}
	case "flatten":
		b.shape = []int{size}
	case "dropout", "identity":
	case "snntorch.leaky", "snntorch.synaptic", "snntorch.rleaky", "snntorch.rsynaptic":
		return b.snnTorch(l, size)
	case "norse.lif", "norse.li", "norse.lifrecurrent":
		return b.norse(l, size)
	case "spikingjelly.lif", "spikingjelly.if":
		return b.spikingJelly(l, size)
	default:
		return l.unsupported("layer kind %s in a spiking network", l.kind)
	}
	if l.kind == "flatten" || l.kind == "dropout" || l.kind == "identity" {
		synapse = b.synapse
	}
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
	if err := l.checkParams("beta", "alpha", "threshold", "graded_spikes_factor", "reset_mechanism", "reset_delay"); err != nil {
		return err
	}
	if !l.has("beta") && !l.hasParam("beta") {
		return l.unsupported("an snnTorch neuron needs beta (a tensor %q or a param)", l.key("beta"))
	}
	beta, err := im.vector(l, "beta", n, nil)
	if err != nil {
		return err
	}
	th, err := im.vector(l, "threshold", n, []float64{1})
	if err != nil {
		return err
	}
	gsf, err := im.vector(l, "graded_spikes_factor", n, []float64{1})
	if err != nil {
		return err
	}
	rm := []float64{0}
	if v, ok := l.params["reset_mechanism"]; ok {
		rm = []float64{v}
	} else if rm, err = im.vector(l, "reset_mechanism_val", 1, rm); err != nil {
		return err
	}
	mech := map[float64]string{0: "subtract", 1: "zero", 2: "none"}[rm[0]]
	if mech == "" {
		return &compile.UnsupportedError{Node: l.key("reset_mechanism_val"), Reason: fmt.Sprintf("reset mechanism %v is not 0 (subtract), 1 (zero) or 2 (none)", rm[0])}
	}
	delay := true
	if v, ok := l.params["reset_delay"]; ok {
		delay = v != 0
	} else {
		im.warn("inferred: layer %q: reset_delay is not in a state_dict; assumed true (snnTorch's default); set params {\"reset_delay\": 0} otherwise", l.name)
	}
	p := snn.SnnTorchParams{Beta: beta, Threshold: th, ResetMechanism: mech, ResetDelay: delay}
	synaptic := l.kind == "snntorch.synaptic" || l.kind == "snntorch.rsynaptic"
	recurrent := l.kind == "snntorch.rleaky" || l.kind == "snntorch.rsynaptic"
	var node snn.Node
	if synaptic {
		if !l.has("alpha") && !l.hasParam("alpha") {
			return l.unsupported("a Synaptic neuron needs alpha (a tensor %q or a param)", l.key("alpha"))
		}
		if p.Alpha, err = im.vector(l, "alpha", n, nil); err != nil {
			return err
		}
		node, err = snn.SnnTorchSynaptic(p, n, im.o.Dt)
	} else {
		node, err = snn.SnnTorchLeaky(p, n, im.o.Dt)
		// RLeaky's "zero" reset zeroes the whole new membrane, input
		// included, on the step after a spike (as Synaptic's does): a
		// one-step refractory period. Leaky's keeps the new input.
		if err == nil && recurrent && mech == "zero" && delay {
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
	for _, g := range gsf {
		graded = graded || g != 1
	}
	if graded {
		s := &snn.Scale{Scale: make([]float32, len(gsf)), Shape: []int{n}}
		for i, g := range gsf {
			s.Scale[i] = float32(g)
		}
		out = b.name(l.name + ".graded")
		b.g.Add(out, s).Connect(neuron, out)
		im.warn("inferred: layer %q: graded_spikes_factor %v: a Scale after the neuron", l.name, gsf)
	}
	if recurrent {
		if err := b.snnTorchRecurrence(l, n, neuron, out); err != nil {
			return err
		}
	}
	b.prev, b.shape = out, []int{n}
	return nil
}

func (l *layer) hasParam(k string) bool { _, ok := l.params[k]; return ok }

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
		s := &snn.Scale{Scale: make([]float32, len(v)), Shape: []int{n}}
		for i, x := range v {
			s.Scale[i] = float32(x)
		}
		b.g.Add(rec, s)
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
	names := []string{"tau_syn_inv", "tau_mem_inv", "v_leak", "v_th", "v_reset"}
	defs := []float64{200, 100, 0, 1, 0}
	if l.kind == "norse.li" {
		names, defs = names[:3], defs[:3]
	}
	if err := l.checkParams(names...); err != nil {
		return err
	}
	v := make([][]float64, len(names))
	for i, name := range names {
		v[i] = []float64{l.param(name, defs[i])}
	}
	if l.kind == "norse.li" {
		v = append(v, []float64{1}, []float64{0})
	}
	p := snn.NorseLIFParams{TauSynInv: v[0], TauMemInv: v[1], VLeak: v[2], VTh: v[3], VReset: v[4]}
	var in *snn.Tensor
	if l.kind == "norse.lifrecurrent" {
		var err error
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
	case "norse.li":
		// LICell is LIFCell's update without the threshold: the same
		// impulse input, Euler decays and initial v = v_leak.
		b.neuron(l, &snn.CubaLI{TauSyn: cell.TauSyn, TauMem: cell.TauMem, R: cell.R, VLeak: cell.VLeak, WIn: cell.WIn, Shape: []int{n}})
	case "norse.lif":
		b.neuron(l, cell)
	case "norse.lifrecurrent":
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
	im := b.im
	if err := l.checkParams("tau", "v_threshold", "v_reset", "decay_input", "soft_reset"); err != nil {
		return err
	}
	if len(l.keys) > 0 {
		return &compile.UnsupportedError{Node: l.key(l.keys[0]), Reason: fmt.Sprintf("a %s layer holds no tensors (ParametricLIFNode is not supported)", l.kind)}
	}
	th := l.param("v_threshold", 1)
	soft := l.param("soft_reset", 0) != 0
	vr := l.param("v_reset", 0)
	if soft {
		vr = 0
	}
	mode := snn.ResetToValue
	if soft {
		mode = snn.ResetSubtract
	}
	dt := im.o.Dt
	if l.kind == "spikingjelly.if" {
		if l.hasParam("tau") || l.hasParam("decay_input") {
			return l.unsupported("spikingjelly.if takes no tau or decay_input")
		}
		b.neuron(l, &snn.IF{R: []float64{1 / dt}, VThreshold: []float64{th}, VReset: []float64{vr}, Reset: mode, Shape: []int{n}})
	} else {
		tau := l.param("tau", 2)
		if !(tau > 1) || math.IsInf(tau, 0) {
			return l.unsupported("SpikingJelly's LIF needs tau > 1, has %v", tau)
		}
		r := 1.0
		if l.param("decay_input", 1) == 0 {
			r = tau
		}
		b.neuron(l, &snn.LIF{Tau: []float64{-dt / math.Log1p(-1/tau)}, R: []float64{r}, VLeak: []float64{vr}, VThreshold: []float64{th}, VReset: []float64{vr}, Reset: mode, Shape: []int{n}})
	}
	b.shape = []int{n}
	im.approx("layer %q: SpikingJelly fires at v ≥ v_threshold, the simulator at v > v_threshold: they differ only when v lands exactly on the threshold", l.name)
	return nil
}
