package loihi

import (
	"fmt"
	"math"
	"sort"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// Network is a Program as the chip holds it: integer weights, decays,
// thresholds and biases, in the order the layers are evaluated.
type Network struct {
	Name   string
	Inputs []*InputPort
	// Denses and Layers are the synapse and neuron groups; Order lists the
	// evaluation order, the same as the float simulator's plan.
	Denses  []*Dense
	Layers  []*Layer
	Outputs []*OutputPort
	Order   []Op
}

// Op is one entry of the evaluation order: a Dense or a Layer by index.
type Op struct {
	Dense bool
	Index int
}

// InputPort is a graph Input: float values are quantised to graded spikes
// x_int = clamp(round(x·2^FracBits), -2^(Bits-1), 2^(Bits-1) - 1).
type InputPort struct {
	Name     string
	Shape    []int
	Size     int
	Bits     int
	FracBits int
}

// Dense is a Linear or Affine node: Lava's Dense process with
// num_weight_bits 8 and a weight exponent. Weights are row-major
// (Rows × Cols), already in Lava's integer form (LavaWeights leaves them
// unchanged).
type Dense struct {
	Name       string
	Rows, Cols int
	Weights    []int32
	WeightExp  int
	Sign       SignMode
	// FromInput says the source is Inputs[From] (graded spikes); otherwise
	// it is Layers[From] (binary spikes).
	FromInput bool
	From      int
	To        int // index of the Layer it feeds
}

// Layer is a neuron node: per-neuron integer parameters (length N).
type Layer struct {
	Name     string
	Kind     snn.Kind
	N        int
	Shape    []int
	Spiking  bool
	Subtract bool // the subtractive-reset microcode variant
	Du, Dv   []int32
	Vth      []int32 // threshold mantissa; the test is v > Vth·2^6
	BiasMant []int32
	BiasExp  []int32
	// Scale is the float value of one unit of v, per neuron: a non-spiking
	// layer's output is v·Scale.
	Scale []float64
	// V0 is the voltage at rest (v_leak in units of v), where Reset puts
	// v; u starts at 0.
	V0 []int32
	// Sources are the Dense indices that feed the layer.
	Sources []int
}

// OutputPort is a graph Output: it reads one Layer.
type OutputPort struct {
	Name  string
	Shape []int
	Layer int
}

// Options configure the conversion and the device. The zero value works.
type Options struct {
	// InputBits is the width of the graded spikes that carry the graph's
	// input values, 2 to 24. Lava's graded networks use up to 24-bit
	// payloads (src/lava/networks/gradedvecnetwork.py, num_message_bits =
	// 24). Default 8.
	InputBits int
	// InputFracBits is the number of fractional bits of the input values:
	// x is sent as round(x·2^InputFracBits). Default 6, so with 8 bits the
	// inputs cover [-2, 2) in steps of 1/64.
	InputFracBits int
	// Timesteps sizes the range of non-spiking readouts: the conversion
	// keeps the worst case of that many steps of input (or of the leak's
	// settling, if shorter) inside 24 bits. Default: the Program's
	// Timesteps, else 64.
	Timesteps int
	// Headroom sizes the negative range of spiking neurons, in thresholds:
	// v may go down to −Headroom·v_threshold before it saturates (the
	// positive side always holds the threshold plus the worst case of one
	// step of input). Saturations are counted. Default 16.
	Headroom float64
}

func (o *Options) withDefaults(p *compile.Program) (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	if c.InputBits == 0 {
		c.InputBits = 8
	}
	if c.InputFracBits == 0 {
		c.InputFracBits = 6
	}
	if c.Timesteps == 0 && p != nil {
		c.Timesteps = p.Timesteps
	}
	if c.Timesteps <= 0 {
		c.Timesteps = 64
	}
	if c.Headroom == 0 {
		c.Headroom = 16
	}
	if !(c.Headroom > 0) || math.IsInf(c.Headroom, 0) {
		return c, fmt.Errorf("loihi: Options.Headroom %v must be positive", c.Headroom)
	}
	if c.InputBits < 2 || c.InputBits > 24 {
		return c, fmt.Errorf("loihi: Options.InputBits %d out of [2, 24]", c.InputBits)
	}
	if c.InputFracBits < 0 || c.InputFracBits > 30 {
		return c, fmt.Errorf("loihi: Options.InputFracBits %d out of [0, 30]", c.InputFracBits)
	}
	return c, nil
}

// ConversionReport says what the conversion did to every node and how far
// the integers are from the float parameters.
type ConversionReport struct {
	InputBits     int          `json:"input_bits"`
	InputFracBits int          `json:"input_frac_bits"`
	Timesteps     int          `json:"timesteps"`
	Nodes         []NodeReport `json:"nodes"`
}

// NodeReport is the conversion of one Dense or Layer node.
type NodeReport struct {
	Node string   `json:"node"`
	Kind snn.Kind `json:"kind"`

	// Dense nodes.
	WeightExp  int     `json:"weight_exp,omitempty"`
	SignMode   string  `json:"sign_mode,omitempty"`
	WeightStep float64 `json:"weight_step,omitempty"` // float weight per Lava integer unit
	// WeightError is max|w − w_int·WeightStep| / max|w|.
	WeightError float64 `json:"weight_error"`

	// Layer nodes: the largest absolute errors of the decay factors
	// (e.g. |(4096 − dv)/4096 − e^(−dt/τ)|), the largest relative error of
	// the threshold, the largest absolute error of the bias (in units of
	// v, per step), and the float value of one unit of v (first neuron).
	DecayUError    float64 `json:"decay_u_error"`
	DecayVError    float64 `json:"decay_v_error"`
	ThresholdError float64 `json:"threshold_error"`
	BiasError      float64 `json:"bias_error"`
	StateScale     float64 `json:"state_scale,omitempty"`
	// Notes records approximations beyond rounding.
	Notes []string `json:"notes,omitempty"`
}

// Node returns the report of the named node, or nil.
func (r *ConversionReport) Node(name string) *NodeReport {
	for i := range r.Nodes {
		if r.Nodes[i].Node == name {
			return &r.Nodes[i]
		}
	}
	return nil
}

func unsupported(node, format string, args ...any) error {
	return &compile.UnsupportedError{Node: node, Reason: "loihi: " + fmt.Sprintf(format, args...)}
}

// neuronParams are the float parameters of one neuron in the form the
// integer model needs: v ← am·v + u + bias, u ← as·u + c·x.
type neuronParams struct {
	am, as, c, bias, vth, vleak float64
}

// Convert maps a float Program onto the chip's integers. Supported graphs
// are Input → (Linear | Affine) → neuron → (Linear | Affine) → neuron … →
// Output, recurrent Linear edges included, with neurons LIF, CubaLIF, IF,
// LI, CubaLI and I; anything else is refused with an error wrapping
// compile.ErrUnsupported that names the node.
func Convert(p *compile.Program, opts *Options) (*Network, *ConversionReport, error) {
	if p == nil || p.Graph == nil {
		return nil, nil, fmt.Errorf("loihi: program has no graph")
	}
	o, err := opts.withDefaults(p)
	if err != nil {
		return nil, nil, err
	}
	g := p.Graph
	shapes, err := g.Shapes()
	if err != nil {
		return nil, nil, err
	}
	dt := p.Dt
	if dt == 0 {
		dt = 1e-3
	}
	in := map[string][]string{}
	out := map[string][]string{}
	for _, e := range g.Edges {
		in[e.To] = append(in[e.To], e.From)
		out[e.From] = append(out[e.From], e.To)
	}
	kind := func(name string) snn.Kind { return g.Nodes[name].Kind() }
	for _, name := range g.Names() {
		switch k := kind(name); k {
		case snn.KindInput, snn.KindOutput, snn.KindLinear, snn.KindAffine,
			snn.KindLIF, snn.KindCubaLIF, snn.KindIF, snn.KindLI, snn.KindCubaLI, snn.KindI:
		default:
			return nil, nil, unsupported(name, "node kind %s is not supported (Input, Linear, Affine, LIF, CubaLIF, IF, LI, CubaLI, I, Output)", k)
		}
	}
	// Structure.
	for _, name := range g.Names() {
		k := kind(name)
		switch {
		case k == snn.KindInput:
			for _, t := range out[name] {
				if tk := kind(t); tk != snn.KindLinear && tk != snn.KindAffine {
					return nil, nil, unsupported(name, "an Input may only feed Linear or Affine nodes, not %s %q", tk, t)
				}
			}
		case k == snn.KindLinear || k == snn.KindAffine:
			if len(in[name]) != 1 {
				return nil, nil, unsupported(name, "a synapse node needs exactly one source, has %d", len(in[name]))
			}
			src := in[name][0]
			if sk := kind(src); sk != snn.KindInput && !(snn.IsNeuron(sk) && snn.IsSpiking(sk)) {
				return nil, nil, unsupported(name, "source %q is %s: synapses carry graph inputs or spikes only", src, sk)
			}
			if len(out[name]) != 1 || !snn.IsNeuron(kind(out[name][0])) {
				return nil, nil, unsupported(name, "a synapse node must feed exactly one neuron node (it feeds %v)", out[name])
			}
		case snn.IsNeuron(k):
			if len(in[name]) == 0 {
				return nil, nil, unsupported(name, "neuron node has no input")
			}
			for _, s := range in[name] {
				if sk := kind(s); sk != snn.KindLinear && sk != snn.KindAffine {
					return nil, nil, unsupported(name, "neurons take their input through Linear or Affine nodes, not from %s %q", sk, s)
				}
			}
			if !snn.IsSpiking(k) {
				for _, t := range out[name] {
					if kind(t) != snn.KindOutput {
						return nil, nil, unsupported(name, "a non-spiking %s layer may only feed Outputs (it feeds %q)", k, t)
					}
				}
			}
		case k == snn.KindOutput:
			if len(in[name]) != 1 || !snn.IsNeuron(kind(in[name][0])) {
				return nil, nil, unsupported(name, "an Output must read exactly one neuron node (it reads %v)", in[name])
			}
		}
	}

	net := &Network{Name: p.Name}
	rep := &ConversionReport{InputBits: o.InputBits, InputFracBits: o.InputFracBits, Timesteps: o.Timesteps}
	inputIdx, layerIdx, denseIdx := map[string]int{}, map[string]int{}, map[string]int{}
	for _, name := range g.NamesOfKind(snn.KindInput) {
		inputIdx[name] = len(net.Inputs)
		sh := shapes[name].Out
		net.Inputs = append(net.Inputs, &InputPort{Name: name, Shape: sh, Size: snn.Size(sh), Bits: o.InputBits, FracBits: o.InputFracBits})
	}
	order := planOrder(g)
	for _, name := range order {
		if snn.IsNeuron(kind(name)) {
			layerIdx[name] = len(net.Layers)
			net.Layers = append(net.Layers, &Layer{Name: name, Kind: kind(name), Shape: shapes[name].Out, N: snn.Size(shapes[name].Out)})
		}
	}
	for _, name := range order {
		if k := kind(name); k == snn.KindLinear || k == snn.KindAffine {
			denseIdx[name] = len(net.Denses)
			src := in[name][0]
			d := &Dense{Name: name, To: layerIdx[out[name][0]]}
			if kind(src) == snn.KindInput {
				d.FromInput, d.From = true, inputIdx[src]
			} else {
				d.From = layerIdx[src]
			}
			net.Denses = append(net.Denses, d)
			l := net.Layers[d.To]
			l.Sources = append(l.Sources, len(net.Denses)-1)
		}
	}
	for _, name := range order {
		switch k := kind(name); {
		case k == snn.KindLinear || k == snn.KindAffine:
			net.Order = append(net.Order, Op{Dense: true, Index: denseIdx[name]})
		case snn.IsNeuron(k):
			net.Order = append(net.Order, Op{Index: layerIdx[name]})
		}
	}
	for _, name := range g.NamesOfKind(snn.KindOutput) {
		net.Outputs = append(net.Outputs, &OutputPort{Name: name, Shape: shapes[name].Out, Layer: layerIdx[in[name][0]]})
	}

	for _, l := range net.Layers {
		reports, err := convertLayer(net, l, g, dt, o)
		if err != nil {
			return nil, nil, err
		}
		rep.Nodes = append(rep.Nodes, reports...)
	}
	sort.Slice(rep.Nodes, func(i, j int) bool { return rep.Nodes[i].Node < rep.Nodes[j].Node })
	return net, rep, nil
}

// params returns the float parameters of neuron i of a neuron node, and
// whether it spikes and resets by subtraction.
func params(name string, node snn.Node, i int, dt float64) (neuronParams, error) {
	at := func(xs []float64) float64 {
		if len(xs) == 1 {
			return xs[0]
		}
		return xs[i]
	}
	var np neuronParams
	var r, vleak, vreset float64
	var refr []float64
	switch x := node.(type) {
	case *snn.LIF:
		np.am = math.Exp(-dt / at(x.Tau))
		r, vleak, np.vth, vreset, refr = at(x.R), at(x.VLeak), at(x.VThreshold), at(x.VReset), x.Refractory
		np.c = (1 - np.am) * r
	case *snn.LI:
		np.am = math.Exp(-dt / at(x.Tau))
		r, vleak = at(x.R), at(x.VLeak)
		np.c = (1 - np.am) * r
	case *snn.IF:
		np.am = 1
		r, np.vth, vreset = at(x.R), at(x.VThreshold), at(x.VReset)
		np.c = dt * r
	case *snn.I:
		np.am = 1
		r = at(x.R)
		np.c = dt * r
	case *snn.CubaLIF, *snn.CubaLI:
		var ts, tm, win float64
		if c, ok := x.(*snn.CubaLIF); ok {
			ts, tm, r, vleak, win = at(c.TauSyn), at(c.TauMem), at(c.R), at(c.VLeak), at(c.WIn)
			np.vth, vreset, refr = at(c.VThreshold), at(c.VReset), c.Refractory
		} else {
			c := x.(*snn.CubaLI)
			ts, tm, r, vleak, win = at(c.TauSyn), at(c.TauMem), at(c.R), at(c.VLeak), at(c.WIn)
		}
		np.as, np.am = math.Exp(-dt/ts), math.Exp(-dt/tm)
		// The float simulator's impulse form (snn/neuron.go, newNeuronOp):
		// J ← I + w_in·(e^(dt/τs) − 1)·x; v ← am·v + p·J; I ← as·J, so J
		// follows J ← as·J + wj·x, which is Lava's u recursion with
		// u = p·J: the input gain is p·wj.
		wj := win * math.Expm1(dt/ts)
		var pp float64
		if math.Abs(ts-tm) <= 1e-12*math.Max(ts, tm) {
			pp = r * dt / tm * np.am
		} else {
			pp = r * ts / (ts - tm) * (np.as - np.am)
		}
		np.c = pp * wj
	}
	np.bias = (1 - np.am) * vleak
	np.vleak = vleak
	if !(np.c > 0) {
		return np, unsupported(name, "neuron %d has input gain %g: the chip needs a positive input scale (r and w_in > 0)", i, np.c)
	}
	if snn.IsSpiking(node.Kind()) {
		if vreset != 0 {
			return np, unsupported(name, "v_reset is %g at neuron %d: Lava's LIF resets to 0 (and the subtractive variant subtracts the threshold)", vreset, i)
		}
		if !(np.vth > 0) {
			return np, unsupported(name, "v_threshold is %g at neuron %d: the threshold mantissa is unsigned and must be positive here", np.vth, i)
		}
	}
	for _, rf := range refr {
		if rf > 0 {
			return np, unsupported(name, "refractory periods are not in Lava's bit-accurate LIF (PyLifModelBitAcc)")
		}
	}
	return np, nil
}

type denseSrc struct {
	d      *Dense
	w      []float32 // row-major float weights
	bias   []float32 // Affine bias, nil for Linear
	sx     float64   // float value of one input unit
	xmax   float64   // largest float input magnitude
	q      float64   // float weight per Lava integer unit
	qBest  float64
	maxAbs float64
	mode   SignMode
}

func convertLayer(net *Network, l *Layer, g *snn.Graph, dt float64, o Options) ([]NodeReport, error) {
	node := g.Nodes[l.Name]
	n := l.N
	l.Spiking = snn.IsSpiking(l.Kind)
	switch x := node.(type) {
	case *snn.LIF:
		l.Subtract = x.Reset == snn.ResetSubtract
	case *snn.IF:
		l.Subtract = x.Reset == snn.ResetSubtract
	case *snn.CubaLIF:
		l.Subtract = x.Reset == snn.ResetSubtract
	}
	ps := make([]neuronParams, n)
	for i := range ps {
		p, err := params(l.Name, node, i, dt)
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	nr := NodeReport{Node: l.Name, Kind: l.Kind}
	// Integer decays. u: 4096 − (du + 1) = round(4096·as); v: 4096 − dv =
	// round(4096·am). as = 0 (single-state neurons) gives du = 4095, a
	// decay factor of exactly 0, so u is this step's input alone.
	l.Du, l.Dv = make([]int32, n), make([]int32, n)
	asL, amL := make([]float64, n), make([]float64, n)
	for i, p := range ps {
		du := MaxDecay - int64(math.Round(DecayScale*p.as))
		dv := DecayScale - int64(math.Round(DecayScale*p.am))
		if du < 0 || dv > MaxDecay {
			nr.Notes = appendOnce(nr.Notes, "a decay beyond the 12-bit range was clamped")
		}
		du, dv = min(max(du, 0), MaxDecay), min(max(dv, 0), MaxDecay)
		l.Du[i], l.Dv[i] = int32(du), int32(dv)
		asL[i] = float64(DecayScale-(du+1)) / DecayScale
		amL[i] = float64(DecayScale-dv) / DecayScale
		nr.DecayUError = math.Max(nr.DecayUError, math.Abs(asL[i]-p.as))
		nr.DecayVError = math.Max(nr.DecayVError, math.Abs(amL[i]-p.am))
	}
	// Sources.
	var srcs []*denseSrc
	var reports []NodeReport
	biasF := make([]float64, n)
	for i, p := range ps {
		biasF[i] = p.bias
	}
	for _, di := range l.Sources {
		d := net.Denses[di]
		s := &denseSrc{d: d, sx: 1, xmax: 1}
		switch x := g.Nodes[d.Name].(type) {
		case *snn.Linear:
			s.w = x.Weight.Data
			d.Rows, d.Cols = x.Weight.Shape[0], x.Weight.Shape[1]
		case *snn.Affine:
			s.w, s.bias = x.Weight.Data, x.Bias
			d.Rows, d.Cols = x.Weight.Shape[0], x.Weight.Shape[1]
		}
		if d.FromInput {
			ip := net.Inputs[d.From]
			s.sx = math.Ldexp(1, -ip.FracBits)
			s.xmax = math.Ldexp(1, ip.Bits-1) * s.sx
		}
		s.mode, s.qBest, s.maxAbs = bestStep(s.w)
		srcs = append(srcs, s)
		if s.bias != nil {
			for i := range biasF {
				b := ps[i].c * float64(s.bias[i])
				if ps[i].as > 0 {
					// Lava adds its bias to v, not u: a constant input to
					// u settles at c·b/(1 − as) per step in v, which is
					// what the bias gives; the first ~τs steps differ.
					b /= 1 - asL[i]
					nr.Notes = appendOnce(nr.Notes, fmt.Sprintf("bias of %q added to v at its steady-state value c·b/(1−a_s): exact after the synaptic transient, not during it", d.Name))
				}
				biasF[i] += b
			}
		}
	}
	// The state range each neuron needs, in float units of v.
	T := float64(o.Timesteps)
	umin := 0.0
	for i, p := range ps {
		in := 0.0
		for _, s := range srcs {
			row := s.w[i*s.d.Cols : (i+1)*s.d.Cols]
			sum := 0.0
			for _, w := range row {
				sum += math.Abs(float64(w))
			}
			in += sum * s.xmax
		}
		uF := p.c * in / (1 - asL[i])
		steps := T
		if amL[i] < 1 {
			steps = math.Min(T, 1/(1-amL[i]))
		}
		bv := (uF+math.Abs(biasF[i]))*steps + math.Abs(p.vleak)
		if l.Spiking {
			bv = math.Max(o.Headroom*p.vth, p.vth+uF+math.Abs(biasF[i]))
		}
		dmin := math.Max(bv, uF) / (maxUV - 1)
		if l.Spiking {
			dmin = math.Max(dmin, p.vth/(float64(MaxVth)*(1<<VthShift)))
		}
		// δ_i = c_i·U/64: the float input unit U per dendritic unit.
		umin = math.Max(umin, dmin*(1<<ActShift)/p.c)
	}
	if umin == 0 {
		umin = math.SmallestNonzeroFloat64
	}
	// Each source's best exponent: the finest U ≥ umin its weight step
	// allows. Several sources must share U, so the coarsest wins and the
	// others re-derive their weight step from it.
	U := 0.0
	for _, s := range srcs {
		e := math.Floor(math.Log2(s.qBest * s.sx / umin))
		e = math.Min(math.Max(e, MinWeightExp), MaxWeightExp)
		s.d.WeightExp = int(e)
		U = math.Max(U, math.Ldexp(s.qBest*s.sx, -int(e)))
	}
	if U < umin {
		// Even the smallest exponent leaves the range short: coarsen the
		// weights instead (the report shows the cost).
		U = umin
		nr.Notes = appendOnce(nr.Notes, "state range needs a weight step coarser than the weights' own: weights lose resolution")
	}
	for _, s := range srcs {
		dr := NodeReport{Node: s.d.Name, Kind: g.Nodes[s.d.Name].Kind(), SignMode: s.mode.String()}
		q := math.Ldexp(U, s.d.WeightExp) / s.sx
		if q != s.qBest {
			// Pick the exponent whose step is closest above the best one.
			e := math.Ceil(math.Log2(s.qBest * s.sx / U))
			e = math.Min(math.Max(e, MinWeightExp), MaxWeightExp)
			s.d.WeightExp = int(e)
			q = math.Ldexp(U, int(e)) / s.sx
		}
		s.q = q
		s.d.Sign = s.mode
		s.d.Weights, dr.WeightError = quantise(s.w, q, s.mode, s.maxAbs)
		dr.WeightExp, dr.WeightStep = s.d.WeightExp, q
		reports = append(reports, dr)
	}
	// A negative weight exponent floors the dendritic sum: on average it
	// loses (2^k − 1)/2^(k+1) of a unit, which is 64 times that in u. A
	// constant bias gives it back (divided by 1 − a_s where u keeps it).
	floorLoss := 0.0
	for _, s := range srcs {
		if k := -s.d.WeightExp; k > 0 {
			floorLoss += (1 << ActShift) * (0.5 - math.Ldexp(0.5, -k))
			nr.Notes = appendOnce(nr.Notes, fmt.Sprintf("%q has weight exponent %d: the mean loss of its floor is returned as bias", s.d.Name, s.d.WeightExp))
		}
	}
	// Thresholds, biases, scales.
	l.Vth, l.BiasMant, l.BiasExp, l.Scale, l.V0 = make([]int32, n), make([]int32, n), make([]int32, n), make([]float64, n), make([]int32, n)
	for i, p := range ps {
		delta := p.c * U / (1 << ActShift)
		l.Scale[i] = delta
		biasF[i] += floorLoss / (1 - asL[i]) * delta
		v0, _ := clipV(int64(math.Round(p.vleak / delta)))
		l.V0[i] = int32(v0)
		if l.Spiking {
			m := math.Round(p.vth / (delta * (1 << VthShift)))
			if m > MaxVth {
				m = MaxVth
				nr.Notes = appendOnce(nr.Notes, "threshold clamped to the 17-bit mantissa")
			}
			l.Vth[i] = int32(m)
			nr.ThresholdError = math.Max(nr.ThresholdError, math.Abs(m*delta*(1<<VthShift)-p.vth)/p.vth)
		} else {
			l.Vth[i] = MaxVth
		}
		b := biasF[i] / delta
		e := int32(0)
		for e < MaxBiasExp && math.Abs(math.Round(math.Ldexp(b, -int(e)))) > MaxBiasMant {
			e++
		}
		m := math.Round(math.Ldexp(b, -int(e)))
		if m > MaxBiasMant || m < MinBiasMant {
			m = math.Min(math.Max(m, MinBiasMant), MaxBiasMant)
			nr.Notes = appendOnce(nr.Notes, "bias clamped to the 13-bit mantissa at exponent 7")
		}
		l.BiasMant[i], l.BiasExp[i] = int32(m), e
		nr.BiasError = math.Max(nr.BiasError, math.Abs(math.Ldexp(m, int(e))*delta-biasF[i]))
	}
	nr.StateScale = l.Scale[0]
	return append(reports, nr), nil
}

func appendOnce(xs []string, s string) []string {
	for _, x := range xs {
		if x == s {
			return xs
		}
	}
	return append(xs, s)
}

// levels returns the integer range of a sign mode's weight mantissa and the
// factor between mantissa and Lava integer (2 for mixed weights).
func levels(m SignMode) (lo, hi, g float64) {
	switch m {
	case Excitatory:
		return 0, 255, 1
	case Inhibitory:
		return -255, 0, 1
	}
	return -128, 127, 2
}

// bestStep picks the float weight per Lava integer unit that represents w
// with the least largest error: the largest magnitude is mapped onto each
// mantissa k in the upper half of the range (every grid of at most 8 bits
// has a multiple there), and the k with the least error wins (the largest
// k on ties). Weights already on an 8-bit grid come out exact.
func bestStep(w []float32) (SignMode, float64, float64) {
	lo32, hi32 := float32(0), float32(0)
	for _, x := range w {
		lo32, hi32 = min(lo32, x), max(hi32, x)
	}
	mode := Mixed
	switch {
	case lo32 >= 0:
		mode = Excitatory
	case hi32 <= 0:
		mode = Inhibitory
	}
	m := math.Max(-float64(lo32), float64(hi32))
	if m == 0 {
		return mode, 1, 0
	}
	lo, hi, g := levels(mode)
	kmax := math.Max(-lo, hi)
	best, bestErr := 0.0, math.Inf(1)
	for k := kmax; k >= math.Ceil(kmax/2); k-- {
		qm := m / k
		worst := 0.0
		ok := true
		for _, x := range w {
			r := math.Round(float64(x) / qm)
			if r < lo || r > hi {
				ok = false
				break
			}
			worst = math.Max(worst, math.Abs(float64(x)-r*qm))
			if worst >= bestErr {
				break
			}
		}
		if ok && worst < bestErr {
			best, bestErr = qm, worst
			if worst == 0 {
				break
			}
		}
	}
	return mode, best / g, m
}

// quantise rounds w onto Lava integers with step q (float per integer),
// clipping to the sign mode's range, and returns them with the relative
// error max|w − w_int·q| / max|w|.
func quantise(w []float32, q float64, mode SignMode, maxAbs float64) ([]int32, float64) {
	lo, hi, g := levels(mode)
	out := make([]int32, len(w))
	worst := 0.0
	for i, x := range w {
		m := math.Min(math.Max(math.Round(float64(x)/(q*g)), lo), hi)
		out[i] = int32(m * g)
		worst = math.Max(worst, math.Abs(float64(x)-float64(out[i])*q))
	}
	if maxAbs == 0 {
		return out, 0
	}
	return out, worst / maxAbs
}

// planOrder is the float simulator's evaluation order (snn.Graph's plan,
// described in docs/ARCHITECTURE.md): a depth-first search from the Input
// nodes, then from every other node, in name order, children in name
// order; the order is the reverse post-order. Using the same order makes
// every edge that closes a cycle read the previous step's value, as the
// float simulator does.
func planOrder(g *snn.Graph) []string {
	outs := map[string][]string{}
	for _, e := range g.Edges {
		outs[e.From] = append(outs[e.From], e.To)
	}
	for k := range outs {
		sort.SliceStable(outs[k], func(a, b int) bool { return outs[k][a] < outs[k][b] })
	}
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var post []string
	type frame struct {
		node string
		next int
	}
	visit := func(root string) {
		if color[root] != white {
			return
		}
		color[root] = grey
		stack := []frame{{root, 0}}
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next < len(outs[top.node]) {
				to := outs[top.node][top.next]
				top.next++
				if color[to] == white {
					color[to] = grey
					stack = append(stack, frame{to, 0})
				}
				continue
			}
			color[top.node] = black
			post = append(post, top.node)
			stack = stack[:len(stack)-1]
		}
	}
	for _, n := range g.NamesOfKind(snn.KindInput) {
		visit(n)
	}
	for _, n := range g.Names() {
		visit(n)
	}
	for i, j := 0, len(post)-1; i < j; i, j = i+1, j-1 {
		post[i], post[j] = post[j], post[i]
	}
	return post
}
