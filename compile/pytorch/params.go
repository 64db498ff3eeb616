package pytorch

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// A layer's params map is the form in which hyperparameters cross the
// importer's boundary: LayerSpec.Params from the caller, moduleHyper's from
// a module tree. Each kind that takes any reads them into its typed form
// below, at the point where its builder starts on the layer, so errors
// come in the order of the layers.

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

func (l *layer) hasParam(k string) bool { _, ok := l.params[k]; return ok }

// convParamNames are the params a Conv2d takes.
var convParamNames = []string{"stride", "padding", "dilation", "groups"}

// convParams is a Conv2d's geometry.
type convParams struct {
	stride, padding, dilation [2]int
	groups                    int
}

// convParams reads a Conv2d's geometry, torch's defaults where the params
// give none. The caller has checked the names (convParamNames).
func (l *layer) convParams() (convParams, error) {
	var p convParams
	var err error
	if p.stride, err = l.pair("stride", 1); err != nil {
		return p, err
	}
	if p.padding, err = l.pair("padding", 0); err != nil {
		return p, err
	}
	if p.dilation, err = l.pair("dilation", 1); err != nil {
		return p, err
	}
	g := l.param("groups", 1)
	p.groups = int(g)
	if float64(p.groups) != g || p.groups < 1 || p.groups > 1<<20 {
		return p, l.unsupported("groups %v", g)
	}
	return p, nil
}

// noteConvAssumption warns of the Conv2d params that neither the file nor
// the caller gave: a state_dict does not hold them.
func (im *importer) noteConvAssumption(l *layer) {
	var miss []string
	for _, n := range convParamNames {
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

// poolParams is an AvgPool2d's or MaxPool2d's geometry.
type poolParams struct {
	kernel, stride, padding [2]int
}

// poolParams reads a pooling layer's geometry: kernel_size is required,
// the stride defaults to the kernel (torch's default) and the padding to
// 0. The caller has checked the names.
func (l *layer) poolParams() (poolParams, error) {
	var p poolParams
	var err error
	if p.kernel, err = l.pair("kernel_size", 0); err != nil {
		return p, err
	}
	if p.kernel[0] < 1 || p.kernel[1] < 1 {
		return p, l.unsupported("%s needs params kernel_size (or kernel_size_h and kernel_size_w)", l.kind)
	}
	if !l.hasParam("stride_h") && !l.hasParam("stride") {
		p.stride = p.kernel
	} else if p.stride, err = l.pair("stride", 1); err != nil {
		return p, err
	}
	p.padding, err = l.pair("padding", 0)
	return p, err
}

// snnTorchParams are an snnTorch neuron's parameters, and the factor its
// graded spikes carry (graded_spikes_factor, 1 for binary spikes).
type snnTorchParams struct {
	snn.SnnTorchParams
	graded []float64
}

// snnTorchParams reads an snnTorch neuron's parameters from its tensors,
// where the layer's params do not override them, with snnTorch's defaults
// where neither has one; alpha only for a synaptic neuron.
func (im *importer) snnTorchParams(l *layer, n int, synaptic bool) (snnTorchParams, error) {
	var p snnTorchParams
	if err := l.checkParams("beta", "alpha", "threshold", "graded_spikes_factor", "reset_mechanism", "reset_delay"); err != nil {
		return p, err
	}
	if !l.has("beta") && !l.hasParam("beta") {
		return p, l.unsupported("an snnTorch neuron needs beta (a tensor %q or a param)", l.key("beta"))
	}
	var err error
	if p.Beta, err = im.vector(l, "beta", n, nil); err != nil {
		return p, err
	}
	if p.Threshold, err = im.vector(l, "threshold", n, []float64{1}); err != nil {
		return p, err
	}
	if p.graded, err = im.vector(l, "graded_spikes_factor", n, []float64{1}); err != nil {
		return p, err
	}
	rm := []float64{0}
	if v, ok := l.params["reset_mechanism"]; ok {
		rm = []float64{v}
	} else if rm, err = im.vector(l, "reset_mechanism_val", 1, rm); err != nil {
		return p, err
	}
	p.ResetMechanism = map[float64]string{0: "subtract", 1: "zero", 2: "none"}[rm[0]]
	if p.ResetMechanism == "" {
		return p, &compile.UnsupportedError{Node: l.key("reset_mechanism_val"), Reason: fmt.Sprintf("reset mechanism %v is not 0 (subtract), 1 (zero) or 2 (none)", rm[0])}
	}
	p.ResetDelay = true
	if v, ok := l.params["reset_delay"]; ok {
		p.ResetDelay = v != 0
	} else {
		im.warn("inferred: layer %q: reset_delay is not in a state_dict; assumed true (snnTorch's default); set params {\"reset_delay\": 0} otherwise", l.name)
	}
	if synaptic {
		if !l.has("alpha") && !l.hasParam("alpha") {
			return p, l.unsupported("a Synaptic neuron needs alpha (a tensor %q or a param)", l.key("alpha"))
		}
		if p.Alpha, err = im.vector(l, "alpha", n, nil); err != nil {
			return p, err
		}
	}
	return p, nil
}

// norseParams reads a Norse cell's parameters from the layer's params,
// Norse's defaults where they give none. LICell has no threshold: it takes
// only the first three, and its threshold and reset are set to LIFCell's
// defaults, which it never reaches.
func (l *layer) norseParams() (snn.NorseLIFParams, error) {
	names := []string{"tau_syn_inv", "tau_mem_inv", "v_leak", "v_th", "v_reset"}
	defs := []float64{200, 100, 0, 1, 0}
	if l.kind == kindNorseLI {
		names, defs = names[:3], defs[:3]
	}
	if err := l.checkParams(names...); err != nil {
		return snn.NorseLIFParams{}, err
	}
	v := make([][]float64, len(names))
	for i, name := range names {
		v[i] = []float64{l.param(name, defs[i])}
	}
	if l.kind == kindNorseLI {
		v = append(v, []float64{1}, []float64{0})
	}
	return snn.NorseLIFParams{TauSynInv: v[0], TauMemInv: v[1], VLeak: v[2], VTh: v[3], VReset: v[4]}, nil
}

// spikingJellyParams are a LIFNode's or IFNode's parameters (see
// snnBuilder.spikingJelly).
type spikingJellyParams struct {
	vThreshold float64
	vReset     float64 // v_r: v_reset, or 0 for the soft reset
	reset      snn.ResetMode
	tau        float64 // LIFNode only
	decayInput bool    // LIFNode only
}

// spikingJellyParams reads a SpikingJelly neuron's parameters from the
// layer's params, SpikingJelly's defaults where they give none. The neuron
// holds no tensors.
func (l *layer) spikingJellyParams() (spikingJellyParams, error) {
	var p spikingJellyParams
	if err := l.checkParams("tau", "v_threshold", "v_reset", "decay_input", "soft_reset"); err != nil {
		return p, err
	}
	if len(l.keys) > 0 {
		return p, &compile.UnsupportedError{Node: l.key(l.keys[0]), Reason: fmt.Sprintf("a %s layer holds no tensors (ParametricLIFNode is not supported)", l.kind)}
	}
	p.vThreshold = l.param("v_threshold", 1)
	p.vReset, p.reset = l.param("v_reset", 0), snn.ResetToValue
	if l.param("soft_reset", 0) != 0 {
		p.vReset, p.reset = 0, snn.ResetSubtract
	}
	if l.kind == kindSpikingJellyIF {
		if l.hasParam("tau") || l.hasParam("decay_input") {
			return p, l.unsupported("spikingjelly.if takes no tau or decay_input")
		}
		return p, nil
	}
	p.tau = l.param("tau", 2)
	if !(p.tau > 1) || math.IsInf(p.tau, 0) {
		return p, l.unsupported("SpikingJelly's LIF needs tau > 1, has %v", p.tau)
	}
	p.decayInput = l.param("decay_input", 1) != 0
	return p, nil
}
