package pytorch

import (
	"fmt"
	"strings"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/compile/pytorch/internal/torchfile"
)

var moduleKinds = map[string]layerKind{
	"Linear": kindLinear, "Conv2d": kindConv2d, "ReLU": kindReLU, "Flatten": kindFlatten,
	"AvgPool2d": kindAvgPool2d, "MaxPool2d": kindMaxPool2d, "BatchNorm1d": kindBatchNorm,
	"BatchNorm2d": kindBatchNorm, "Dropout": kindDropout, "Dropout1d": kindDropout,
	"Dropout2d": kindDropout, "Identity": kindIdentity,
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
	case kindConv2d:
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
	case kindAvgPool2d, kindMaxPool2d:
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
	case kindBatchNorm:
		if e, ok := num("eps"); ok {
			l.params["eps"] = e
		}
	case kindFlatten:
		s, ok1 := num("start_dim")
		e, ok2 := num("end_dim")
		if (ok1 && s != 1) || (ok2 && e != -1) {
			return l.unsupported("Flatten(start_dim=%v, end_dim=%v): only the default (1, -1) is supported", s, e)
		}
	}
	return nil
}
