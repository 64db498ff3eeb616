package xylo

import (
	"fmt"
	"math"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// Config configures the conversion, and the device, which converts every
// Program it loads. The zero value works; a zero field means its default.
// Through hal.Open the fields are the options "input_quantum" and
// "threshold_target".
type Config struct {
	// InputQuantum is the float value of one input event: Step takes input
	// values that are whole multiples k·InputQuantum, 0 ≤ k ≤ 15, and
	// presents k events. Default 1 (inputs are spike counts).
	InputQuantum float64
	// ThresholdTarget is the integer each neuron's threshold maps to,
	// which sets the membrane scale: larger means finer rounding of decays
	// and weights, smaller means more headroom below the 16-bit ceiling.
	// Lowered per neuron where its largest incoming weight would not fit
	// 8 bits at the largest shift. Default 8192 (4× headroom to 32767).
	// Measured against the float simulator on a small CubaLIF network with
	// the chip's own time constants (agree_test.go): spike-bin agreement
	// 0.86 at 4096, 0.92 at 8192, 0.98 at 16384.
	ThresholdTarget int
}

// ConversionReport says how a float Program was put on the chip and what
// that changed. Nothing is approximated without an entry here.
type ConversionReport struct {
	Dt           float64 `json:"dt"`
	InputQuantum float64 `json:"input_quantum"`
	// Neurons describes each neuron node: where it sits and how its
	// parameters were rounded.
	Neurons []NeuronReport `json:"neurons"`
	// Weights describes each Linear or Affine node's quantisation.
	Weights                     []WeightReport `json:"weights"`
	ShiftIn, ShiftRec, ShiftOut uint8
	// OutputMembrane is true when the output node is non-spiking (LI,
	// CubaLI): Output then returns its membrane, V/OutputScale +
	// OutputLeak; otherwise spike counts.
	OutputMembrane bool      `json:"output_membrane"`
	OutputScale    []float64 `json:"output_scale,omitempty"`
	OutputLeak     []float64 `json:"output_leak,omitempty"`
	// Approximations lists every change of behaviour the chip introduces,
	// in words.
	Approximations []string `json:"approximations"`
}

// NeuronReport is one neuron node on the chip.
type NeuronReport struct {
	Node  string   `json:"node"`
	Kind  snn.Kind `json:"kind"`
	Role  string   `json:"role"` // "hidden" or "output"
	First int      `json:"first"`
	Count int      `json:"count"`
	// Per neuron: the decay bit-shifts, the time constants asked for and
	// those the shifts give, τ_eff = −dt / ln(1 − 2^−dash). TauSyn is 0
	// for LIF and LI, which have no synaptic current; they get dash_syn 1.
	DashMem   []uint8   `json:"dash_mem"`
	DashSyn   []uint8   `json:"dash_syn"`
	TauMem    []float64 `json:"tau_mem"`
	TauMemEff []float64 `json:"tau_mem_eff"`
	TauSyn    []float64 `json:"tau_syn"`
	TauSynEff []float64 `json:"tau_syn_eff"`
	// MaxTauRelErr is the largest |τ_eff − τ| / τ over the neurons' membrane
	// and synaptic time constants.
	MaxTauRelErr float64 `json:"max_tau_rel_err"`
	// Scale is the number of integer units per unit of membrane (v −
	// v_leak); Threshold the integer thresholds; MaxThresholdRelErr their
	// rounding error relative to v_threshold − v_leak.
	Scale              []float64 `json:"scale"`
	Threshold          []int16   `json:"threshold"`
	MaxThresholdRelErr float64   `json:"max_threshold_rel_err"`
	// Bias is the integer bias from Affine biases feeding the node, and
	// MaxBiasRelErr its rounding error relative to the float bias.
	Bias          []int16 `json:"bias,omitempty"`
	MaxBiasRelErr float64 `json:"max_bias_rel_err,omitempty"`
}

// WeightReport is one weight node's quantisation, in the node's own float
// units: the chip's weight is round(W·g / 2^shift)·2^shift / g for a gain
// g per synapse.
type WeightReport struct {
	Node        string  `json:"node"`
	Matrix      string  `json:"matrix"` // "input", "recurrent" or "output"
	Shift       uint8   `json:"shift"`
	MaxAbsError float64 `json:"max_abs_error"`
	RelRMSError float64 `json:"rel_rms_error"`
	Clipped     int     `json:"clipped"` // weights beyond the 8-bit range
}

// neuronNode gathers one neuron node's parameters.
type neuronNode struct {
	name    string
	kind    snn.Kind
	n       int
	first   int
	spiking bool
	// per neuron
	dm, ds            []uint8
	k                 []float64 // integer current per unit input, per unit of scale
	dcGain            []float64 // float membrane per unit of constant input (DC)
	alpha             []float64 // membrane decay factor on the chip
	scale, theta, vlk []float64
	bias              []float64 // summed Affine biases
}

const (
	matIn  = "input"
	matRec = "recurrent"
	matOut = "output"
)

// Convert maps a float Program onto Xylo Audio 2. The graph must be Input
// (≤ 16) → Linear/Affine → hidden neurons (LIF, CubaLIF; any number of
// nodes, ≤ 1000 neurons in all, connected among themselves by Linear or
// Affine nodes, recurrence included) → Linear/Affine → one output node
// (LIF, CubaLIF, LI or CubaLI; ≤ 8 neurons) → Output. Spiking neurons must
// reset by subtraction to v_leak and have no refractory period. Anything
// else is refused with an error wrapping compile.ErrUnsupported that names
// the node and the limit.
func Convert(p *compile.Program, cfg *Config) (*Network, *ConversionReport, error) {
	o, err := cfg.withDefaults()
	if err != nil {
		return nil, nil, err
	}
	if p == nil || p.Graph == nil {
		return nil, nil, fmt.Errorf("xylo: program has no graph")
	}
	dt := p.Dt
	if dt == 0 {
		dt = 1e-3
	}
	g := p.Graph
	shapes, err := g.Shapes()
	if err != nil {
		return nil, nil, fmt.Errorf("xylo: %w", err)
	}
	c := &converter{o: o, g: g, topo: g.Topology(), shapes: shapes, dt: dt}
	if err := c.ports(); err != nil {
		return nil, nil, err
	}
	if err := c.neurons(); err != nil {
		return nil, nil, err
	}
	if err := c.weightNodes(); err != nil {
		return nil, nil, err
	}
	c.rep = &ConversionReport{Dt: dt, InputQuantum: o.InputQuantum}
	c.scales()
	c.net = NewNetwork(snn.Size(shapes[c.input].Out), c.nHidden, c.outNode.n)
	c.quantiseWeights()
	c.setNeurons()
	if err := c.net.Validate(); err != nil {
		return nil, nil, err
	}
	c.approximations()
	return c.net, c.rep, nil
}

// Validate reports whether c is usable: every field zero (the default)
// or in its range. New and Convert run it.
func (c *Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// withDefaults validates o and returns it with its defaults filled in.
func (o *Config) withDefaults() (Config, error) {
	var c Config
	if o != nil {
		c = *o
	}
	if c.InputQuantum == 0 {
		c.InputQuantum = 1
	}
	if !(c.InputQuantum > 0) || math.IsInf(c.InputQuantum, 0) {
		return c, fmt.Errorf("xylo: Config.InputQuantum %v, must be positive", c.InputQuantum)
	}
	if c.ThresholdTarget == 0 {
		c.ThresholdTarget = 8192
	}
	if c.ThresholdTarget < 1 || c.ThresholdTarget > stateMax {
		return c, fmt.Errorf("xylo: Config.ThresholdTarget %d out of [1, %d]", c.ThresholdTarget, stateMax)
	}
	return c, nil
}

// converter carries a Program through Convert's stages, each of which
// reads what the ones before it found: the ports and the output node
// decide which neuron nodes are hidden, the hidden nodes' places decide
// where each weight node lands in the three matrices, the weights decide
// each neuron's scale, and the scales decide the integers.
type converter struct {
	o      Config
	g      *snn.Graph
	topo   *snn.Topology
	shapes map[string]snn.Shape
	dt     float64

	input, output string // the Input and Output nodes
	outName       string // the neuron node that feeds the Output
	hidden        []*neuronNode
	nHidden       int // neurons in all hidden nodes
	outNode       *neuronNode
	byName        map[string]*neuronNode
	wnodes        []wnode

	net *Network
	rep *ConversionReport
}

// wnode is a Linear or Affine node and the matrix it lands in.
type wnode struct {
	name, mat string
	w         *snn.Tensor
	src, dst  string
	srcOff    int // the first hidden neuron of src
}

// unsupported is a refusal that names the node.
func unsupported(node, format string, args ...any) error {
	return &compile.UnsupportedError{Node: node, Reason: "xylo: " + fmt.Sprintf(format, args...)}
}

// fitError is a refusal for a resource limit of the chip.
func fitError(node, limit string, need, have int) error {
	return &compile.FitError{Target: target, Node: node, Limit: limit, Need: need, Have: have}
}

// ports finds the one Input and the one Output, the output neuron node
// that feeds the Output, and checks the node kinds and the edges at both
// ends of the chip.
func (c *converter) ports() error {
	g, topo := c.g, c.topo
	for _, name := range g.Names() {
		switch k := g.Nodes[name].Kind(); k {
		case snn.KindInput:
			if c.input != "" {
				return unsupported(name, "a second Input node; the chip has one input port of %d channels", MaxInputs)
			}
			c.input = name
		case snn.KindOutput:
			if c.output != "" {
				return unsupported(name, "a second Output node; the chip has one output port of %d channels", MaxOutputs)
			}
			c.output = name
		case snn.KindLinear, snn.KindAffine, snn.KindLIF, snn.KindCubaLIF, snn.KindLI, snn.KindCubaLI:
		default:
			return unsupported(name, "the chip runs no %s nodes (only Linear/Affine weights and LIF, CubaLIF, LI, CubaLI neurons)", k)
		}
	}
	if c.input == "" || c.output == "" {
		return unsupported("", "the graph needs one Input and one Output node")
	}
	if n := snn.Size(c.shapes[c.input].Out); n > MaxInputs {
		return fitError(c.input, "input channels", n, MaxInputs)
	}
	if in := topo.In(c.output); len(in) != 1 || !snn.IsNeuron(g.Nodes[in[0]].Kind()) {
		return unsupported(c.output, "the Output must be fed by exactly one neuron node (the chip's output neurons)")
	}
	c.outName = topo.In(c.output)[0]
	if n := snn.Size(c.shapes[c.outName].Out); n > MaxOutputs {
		return fitError(c.outName, "output neurons", n, MaxOutputs)
	}
	for _, to := range topo.Out(c.outName) {
		if to != c.output {
			return unsupported(c.outName, "output neurons feed only the Output (they cannot be recurrent or feed %q)", to)
		}
	}
	for _, to := range topo.Out(c.input) {
		if k := g.Nodes[to].Kind(); k != snn.KindLinear && k != snn.KindAffine {
			return unsupported(to, "the Input must go through weights first (found %s)", k)
		}
	}
	return nil
}

// neurons reads the neuron nodes, hidden in name order, then the output
// node, and places the hidden ones one after another on the chip.
func (c *converter) neurons() error {
	g := c.g
	first := 0
	for _, name := range g.Names() {
		k := g.Nodes[name].Kind()
		if !snn.IsNeuron(k) {
			continue
		}
		for _, from := range c.topo.In(name) {
			if fk := g.Nodes[from].Kind(); fk != snn.KindLinear && fk != snn.KindAffine {
				return unsupported(name, "neurons receive only from Linear or Affine weights (found %s %q)", fk, from)
			}
		}
		nn, err := neuronParams(name, g.Nodes[name], snn.Size(c.shapes[name].Out), c.dt)
		if err != nil {
			return err
		}
		if name == c.outName {
			c.outNode = nn
			continue
		}
		if !nn.spiking {
			return unsupported(name, "hidden neurons must spike (%s is non-spiking; only the output node may be LI or CubaLI)", k)
		}
		for _, to := range c.topo.Out(name) {
			if tk := g.Nodes[to].Kind(); tk != snn.KindLinear && tk != snn.KindAffine {
				return unsupported(name, "hidden neurons connect only through weights (found %s %q)", tk, to)
			}
		}
		nn.first = first
		first += nn.n
		if first > MaxHidden {
			return fitError(name, "hidden neurons", first, MaxHidden)
		}
		c.hidden = append(c.hidden, nn)
	}
	if len(c.hidden) == 0 {
		return unsupported(c.outName, "the chip needs a hidden layer between the Input and the output neurons")
	}
	c.nHidden = first
	c.byName = map[string]*neuronNode{c.outName: c.outNode}
	for _, h := range c.hidden {
		c.byName[h.name] = h
	}
	return nil
}

// weightNodes places every Linear or Affine node in the input, recurrent
// or output matrix, and adds Affine biases to the neurons they feed.
func (c *converter) weightNodes() error {
	g, topo := c.g, c.topo
	for _, name := range g.Names() {
		var w *snn.Tensor
		var b []float32
		switch x := g.Nodes[name].(type) {
		case *snn.Linear:
			w = x.Weight
		case *snn.Affine:
			w, b = x.Weight, x.Bias
		default:
			continue
		}
		ins, outs := topo.In(name), topo.Out(name)
		if len(ins) != 1 || len(outs) != 1 {
			return unsupported(name, "a weight node needs exactly one source and one destination (has %d and %d)", len(ins), len(outs))
		}
		src, dst := ins[0], outs[0]
		d := c.byName[dst]
		if d == nil {
			return unsupported(name, "weights must feed neurons (found %s %q)", g.Nodes[dst].Kind(), dst)
		}
		wn := wnode{name: name, w: w, src: src, dst: dst}
		switch {
		case src == c.input && dst == c.outName:
			return unsupported(name, "the Input cannot reach the output neurons directly; the chip routes input only to hidden neurons")
		case src == c.input:
			wn.mat = matIn
		case src == c.outName:
			return unsupported(name, "output neurons cannot feed weights")
		case c.byName[src] == nil:
			return unsupported(name, "weights carry the Input or spikes of neurons (found %s %q)", g.Nodes[src].Kind(), src)
		case dst == c.outName:
			wn.mat, wn.srcOff = matOut, c.byName[src].first
		default:
			wn.mat, wn.srcOff = matRec, c.byName[src].first
		}
		for i, v := range b {
			d.bias[i] += float64(v)
		}
		c.wnodes = append(c.wnodes, wn)
	}
	return nil
}

// scales sets each neuron's scale, integer units per unit of membrane: its
// threshold onto ThresholdTarget, lowered where the largest contribution
// of one event would not fit 127 << MaxWeightShift.
func (c *converter) scales() {
	T := float64(c.o.ThresholdTarget)
	all := append(c.hidden[:len(c.hidden):len(c.hidden)], c.outNode)
	maxContrib := map[*neuronNode][]float64{}
	for _, nn := range all {
		maxContrib[nn] = make([]float64, nn.n)
	}
	sumAbs := map[*neuronNode][]float64{c.outNode: make([]float64, c.outNode.n)}
	for _, wn := range c.wnodes {
		d := c.byName[wn.dst]
		q := 1.0
		if wn.mat == matIn {
			q = c.o.InputQuantum
		}
		cols := wn.w.Shape[1]
		for r := 0; r < d.n; r++ {
			for col := 0; col < cols; col++ {
				x := math.Abs(float64(wn.w.Data[r*cols+col])) * q * d.k[r]
				maxContrib[d][r] = max(maxContrib[d][r], x)
				if d == c.outNode {
					sumAbs[d][r] += math.Abs(float64(wn.w.Data[r*cols+col])) * q * d.dcGain[r]
				}
			}
		}
	}
	limit := float64(127 << MaxWeightShift)
	for _, nn := range all {
		for i := range nn.n {
			var s float64
			if nn.spiking {
				s = T / nn.theta[i]
			} else {
				// No threshold: put the membrane a constant event on every
				// source would settle at onto T.
				s = T / math.Max(sumAbs[nn][i], 1e-30)
			}
			if m := maxContrib[nn][i]; m*s > limit {
				s = limit / m
			}
			nn.scale[i] = s
		}
	}
}

// cell returns the exact matrix entry that weight (r, col) of wn adds to,
// and the gain from the float weight to that entry's integer units.
func (c *converter) cell(exact map[string][]float64, wn wnode, r, col int) (mat []float64, idx int, gain float64) {
	H, O := c.net.Hidden, c.net.Outputs
	d := c.byName[wn.dst]
	switch wn.mat {
	case matIn:
		return exact[matIn], col*H + d.first + r, d.scale[r] * d.k[r] * c.o.InputQuantum
	case matRec:
		return exact[matRec], (wn.srcOff+col)*H + d.first + r, d.scale[r] * d.k[r]
	}
	return exact[matOut], (wn.srcOff+col)*O + r, d.scale[r] * d.k[r]
}

// quantiseWeights sums each matrix's exact contributions, picks one shift
// per matrix, rounds the weights, and reports each weight node's error.
func (c *converter) quantiseWeights() {
	net := c.net
	I, H, O := net.Inputs, net.Hidden, net.Outputs
	exact := map[string][]float64{matIn: make([]float64, I*H), matRec: make([]float64, H*H), matOut: make([]float64, H*O)}
	for _, wn := range c.wnodes {
		cols := wn.w.Shape[1]
		for r := 0; r < c.byName[wn.dst].n; r++ {
			for col := 0; col < cols; col++ {
				m, idx, gain := c.cell(exact, wn, r, col)
				m[idx] += float64(wn.w.Data[r*cols+col]) * gain
			}
		}
	}
	shifts := map[string]uint8{}
	for mat, dst := range map[string][]int8{matIn: net.WIn[0], matRec: net.WRec[0], matOut: net.WOut} {
		sh := bestShift(exact[mat])
		shifts[mat] = sh
		for i, x := range exact[mat] {
			dst[i] = quant(x, sh)
		}
	}
	net.ShiftIn, net.ShiftRec, net.ShiftOut = shifts[matIn], shifts[matRec], shifts[matOut]
	c.rep.ShiftIn, c.rep.ShiftRec, c.rep.ShiftOut = net.ShiftIn, net.ShiftRec, net.ShiftOut
	for _, wn := range c.wnodes {
		wr := WeightReport{Node: wn.name, Matrix: wn.mat, Shift: shifts[wn.mat]}
		cols := wn.w.Shape[1]
		var e2, w2 float64
		for r := 0; r < c.byName[wn.dst].n; r++ {
			for col := 0; col < cols; col++ {
				m, idx, gain := c.cell(exact, wn, r, col)
				q := float64(quant(m[idx], wr.Shift)) * math.Ldexp(1, int(wr.Shift))
				if math.Abs(m[idx]) > 127.5*math.Ldexp(1, int(wr.Shift)) {
					wr.Clipped++
				}
				d := (q - m[idx]) / gain
				wr.MaxAbsError = max(wr.MaxAbsError, math.Abs(d))
				e2 += d * d
				w := float64(wn.w.Data[r*cols+col])
				w2 += w * w
			}
		}
		if w2 > 0 {
			wr.RelRMSError = math.Sqrt(e2 / w2)
		}
		c.rep.Weights = append(c.rep.Weights, wr)
	}
}

// setNeurons writes the neurons' decays, thresholds and biases into the
// network and reports them.
func (c *converter) setNeurons() {
	net := c.net
	for _, h := range c.hidden {
		sl := func(x []int16) []int16 { return x[h.first : h.first+h.n] }
		slu := func(x []uint8) []uint8 { return x[h.first : h.first+h.n] }
		c.rep.Neurons = append(c.rep.Neurons, c.setNode(h, "hidden", slu(net.DashMem), slu(net.DashSyn), sl(net.Threshold), sl(net.Bias)))
	}
	c.rep.Neurons = append(c.rep.Neurons, c.setNode(c.outNode, "output", net.DashMemOut, net.DashSynOut, net.ThresholdOut, net.BiasOut))
	if !c.outNode.spiking {
		c.rep.OutputMembrane = true
		c.rep.OutputScale = c.outNode.scale
		c.rep.OutputLeak = c.outNode.vlk
	}
}

// setNode writes one neuron node's registers into the given slices.
func (c *converter) setNode(nn *neuronNode, role string, dm, ds []uint8, th, bias []int16) NeuronReport {
	dt := c.dt
	r := NeuronReport{Node: nn.name, Kind: nn.kind, Role: role, First: nn.first, Count: nn.n, DashMem: nn.dm, DashSyn: nn.ds, Scale: nn.scale}
	node := c.g.Nodes[nn.name]
	for i := range nn.n {
		dm[i], ds[i] = nn.dm[i], nn.ds[i]
		tm, ts := taus(node, i)
		r.TauMem, r.TauMemEff = append(r.TauMem, tm), append(r.TauMemEff, tauEff(nn.dm[i], dt))
		r.TauSyn, r.TauSynEff = append(r.TauSyn, ts), append(r.TauSynEff, tauEff(nn.ds[i], dt))
		r.MaxTauRelErr = max(r.MaxTauRelErr, math.Abs(r.TauMemEff[i]-tm)/tm)
		if ts > 0 {
			r.MaxTauRelErr = max(r.MaxTauRelErr, math.Abs(r.TauSynEff[i]-ts)/ts)
		}
		if nn.spiking {
			x := math.Round(nn.scale[i] * nn.theta[i])
			th[i] = int16(min(max(x, 1), stateMax))
			r.MaxThresholdRelErr = max(r.MaxThresholdRelErr, math.Abs(float64(th[i])/nn.scale[i]-nn.theta[i])/nn.theta[i])
		} else {
			th[i] = stateMax
		}
		if b := nn.bias[i]; b != 0 {
			// The chip adds its bias to the membrane, not the current:
			// b_int/(1−α) is the steady membrane, s·G·b in float.
			want := nn.scale[i] * nn.dcGain[i] * b * (1 - nn.alpha[i])
			bias[i] = sat16(int32(math.Round(min(max(want, stateMin), stateMax))))
			r.MaxBiasRelErr = max(r.MaxBiasRelErr, math.Abs(float64(bias[i])-want)/math.Abs(want))
		}
	}
	r.Threshold = append([]int16(nil), th...)
	if len(nn.bias) > 0 && anyNonZero(nn.bias) {
		r.Bias = append([]int16(nil), bias...)
	}
	return r
}

// approximations lists, in words, what behaves differently on the chip.
func (c *converter) approximations() {
	ap := func(format string, args ...any) {
		c.rep.Approximations = append(c.rep.Approximations, fmt.Sprintf(format, args...))
	}
	ap("output neurons receive hidden spikes one step later than in the float simulator (the chip delivers hidden spikes at the start of the next step)")
	for _, wn := range c.wnodes {
		// A weight node on a cycle is recurrent in the float graph too,
		// and so already a step late there.
		if wn.mat == matRec && !c.topo.OnCycle(wn.name) {
			ap("%s: %q reaches %q one step later than in the float simulator (every hidden-to-hidden connection is a recurrent one on the chip)", wn.name, wn.src, wn.dst)
		}
	}
	for _, nn := range append(c.hidden[:len(c.hidden):len(c.hidden)], c.outNode) {
		if nn.kind == snn.KindLIF || nn.kind == snn.KindLI {
			ap("%s: %s has no synaptic current; on the chip its input passes through Isyn with dash_syn 1 (τ_syn %.3g s), which keeps the DC gain but spreads each input over the following steps", nn.name, nn.kind, tauEff(1, c.dt))
		}
		if nn.spiking {
			ap("%s: spikes when v ≥ threshold (the float simulator: v > threshold) and may spike up to %d times in one step", nn.name, map[bool]int{true: MaxOutputSpikes, false: MaxHiddenSpikes}[nn == c.outNode])
		}
		if anyNonZero(nn.bias) {
			ap("%s: the Affine bias enters the membrane directly instead of the synaptic current: same steady state, different transient after a reset", nn.name)
		}
	}
	if c.rep.OutputMembrane {
		ap("%s: the readout membrane saturates at ±32767 integer units (±%.3g in float units for neuron 0)", c.outName, stateMax/c.outNode.scale[0])
	}
	ap("decays are bit shifts: v −= v >> dash rounds towards −∞ and removes at least 1 unit, so small states decay linearly to 0; states saturate at 16 bits")
}

// neuronParams reads one neuron node and refuses what the chip cannot run.
func neuronParams(name string, node snn.Node, n int, dt float64) (*neuronNode, error) {
	nn := &neuronNode{name: name, kind: node.Kind(), n: n}
	var r, vleak, vth, vreset, win, refr []float64
	var reset snn.ResetMode
	cuba := false
	switch x := node.(type) {
	case *snn.LIF:
		nn.spiking, r, vleak, vth, vreset, reset, refr = true, x.R, x.VLeak, x.VThreshold, x.VReset, x.Reset, x.Refractory
	case *snn.CubaLIF:
		nn.spiking, cuba, r, vleak, vth, vreset, win, reset, refr = true, true, x.R, x.VLeak, x.VThreshold, x.VReset, x.WIn, x.Reset, x.Refractory
	case *snn.LI:
		r, vleak = x.R, x.VLeak
	case *snn.CubaLI:
		cuba, r, vleak, win = true, x.R, x.VLeak, x.WIn
	default:
		return nil, unsupported(name, "the chip runs no %s neurons", node.Kind())
	}
	for _, v := range refr {
		if v > 0 {
			return nil, unsupported(name, "refractory periods: the chip has none")
		}
	}
	if nn.spiking && reset != snn.ResetSubtract {
		return nil, unsupported(name, "reset to v_reset: the chip only subtracts the threshold (use Reset: subtract with v_reset = v_leak)")
	}
	at := func(xs []float64, i int, def float64) float64 {
		switch len(xs) {
		case 0:
			return def
		case 1:
			return xs[0]
		}
		return xs[i]
	}
	f := func() []float64 { return make([]float64, n) }
	nn.k, nn.dcGain, nn.alpha, nn.scale, nn.theta, nn.vlk, nn.bias = f(), f(), f(), f(), f(), f(), f()
	nn.dm, nn.ds = make([]uint8, n), make([]uint8, n)
	for i := range n {
		tm, ts := taus(node, i)
		dm, err := dash(name, "tau_mem", tm, dt)
		if err != nil {
			return nil, err
		}
		ds := uint8(1)
		if cuba {
			if ds, err = dash(name, "tau_syn", ts, dt); err != nil {
				return nil, err
			}
		}
		nn.dm[i], nn.ds[i] = dm, ds
		a, b := 1-math.Ldexp(1, -int(dm)), 1-math.Ldexp(1, -int(ds))
		nn.alpha[i] = a
		R := at(r, i, 1)
		nn.vlk[i] = at(vleak, i, 0)
		if cuba {
			// The float CubaLIF with the chip's time constants (snn/neuron.go,
			// newNeuronOp): J = I + wj·x, u' = a·u + p·J, I' = as·J, with
			// as = β, a = α. The chip: J = I + g·x, I' = β·J, V' = α·V + I'.
			// V = s·u holds when g = s·p·wj/β.
			w := at(win, i, 1)
			tsE, tmE := tauEff(ds, dt), tauEff(dm, dt)
			wj := w * (1/b - 1)
			var p float64
			if ds == dm {
				p = R * dt / tmE * a
			} else {
				p = R * tsE / (tsE - tmE) * (b - a)
			}
			nn.k[i] = p * wj / b
			nn.dcGain[i] = p * wj / ((1 - b) * (1 - a))
		} else {
			// LIF through Isyn with dash_syn 1 (β = 1/2): the chip settles
			// at V* = β·g·x / ((1−β)(1−α)); the float LIF at u* = R·x.
			nn.k[i] = R * (1 - a) * (1 - b) / b
			nn.dcGain[i] = R
		}
		if nn.spiking {
			th := at(vth, i, 1) - nn.vlk[i]
			if !(th > 0) {
				return nil, unsupported(name, "neuron %d: v_threshold − v_leak is %g; the chip needs a positive threshold", i, th)
			}
			if vr := at(vreset, i, 0); vr != nn.vlk[i] {
				return nil, unsupported(name, "neuron %d: subtractive reset by v_threshold − v_reset with v_reset %g ≠ v_leak %g: the chip subtracts its threshold, v_threshold − v_leak", i, vr, nn.vlk[i])
			}
			nn.theta[i] = th
		}
	}
	return nn, nil
}

// taus returns neuron i's membrane and synaptic time constants (0 for
// none).
func taus(node snn.Node, i int) (tm, ts float64) {
	pick := func(xs []float64) float64 {
		if len(xs) == 1 {
			return xs[0]
		}
		return xs[i]
	}
	switch x := node.(type) {
	case *snn.LIF:
		return pick(x.Tau), 0
	case *snn.LI:
		return pick(x.Tau), 0
	case *snn.CubaLIF:
		return pick(x.TauMem), pick(x.TauSyn)
	case *snn.CubaLI:
		return pick(x.TauMem), pick(x.TauSyn)
	}
	return 0, 0
}

// dash is Rockpool's rule (xylo_graph_modules.py, XyloNeurons._convert_from;
// rounded in xylo_samna.py, config_from_specification): round(log2(τ/dt)),
// refused for τ ≤ dt.
func dash(node, field string, tau, dt float64) (uint8, error) {
	if !(tau > dt) || math.IsInf(tau, 0) {
		return 0, unsupported(node, "%s %g s ≤ dt %g s: a bit-shift decay needs τ > dt", field, tau, dt)
	}
	d := math.Round(math.Log2(tau / dt))
	if d > MaxDash {
		return 0, fitError(node, field+" decay bit-shift (4 bits)", int(d), MaxDash)
	}
	return uint8(d), nil
}

// tauEff is the time constant of the decay v −= v/2^dash per step dt,
// ignoring the integer rounding: −dt / ln(1 − 2^−dash).
func tauEff(dash uint8, dt float64) float64 {
	if dash == 0 {
		return 0
	}
	return -dt / math.Log1p(-math.Ldexp(1, -int(dash)))
}

// quant rounds x / 2^shift to the nearest 8-bit integer, clipping.
func quant(x float64, shift uint8) int8 {
	q := math.Round(math.Ldexp(x, -int(shift)))
	return int8(min(max(q, -128), 127))
}

// bestShift picks the weight shift with the least squared error over the
// matrix's exact contributions, clipping included; ties go to the smaller
// shift.
func bestShift(xs []float64) uint8 {
	best, bestErr := uint8(0), math.Inf(1)
	for sh := uint8(0); sh <= MaxWeightShift; sh++ {
		var e float64
		for _, x := range xs {
			if x == 0 {
				continue
			}
			d := float64(quant(x, sh))*math.Ldexp(1, int(sh)) - x
			e += d * d
		}
		if e < bestErr {
			best, bestErr = sh, e
		}
	}
	return best
}

func anyNonZero(xs []float64) bool {
	for _, x := range xs {
		if x != 0 {
			return true
		}
	}
	return false
}
