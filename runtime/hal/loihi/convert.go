package loihi

import (
	"fmt"
	"math"
	"sort"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// Config configures the conversion, and the device, which converts every
// Program it loads. The zero value works; a zero field means its default.
// Through hal.Open the fields are the options "input_bits",
// "input_frac_bits", "timesteps", "payload_bits" and "headroom".
type Config struct {
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
	// Timesteps, else 64; for a "causal-lm" Program, whose state carries
	// from token to token, the leak's settling. Graded layers (whose
	// state is never read out at a fixed step) always use the settling.
	Timesteps int
	// PayloadBits is the width of the graded spikes that non-spiking
	// neurons send into synapses (an LI feeding a Linear), 2 to 24:
	// Loihi 2's graded spikes carry up to 24-bit payloads in Lava
	// (GradedVec's s_out has precision 24). Default 12: with 8-bit
	// weights and fan-ins of a few hundred, a 12-bit payload keeps the
	// dendritic sum inside the weight exponent's range [−8, 7]; wider
	// payloads need a coarser input unit and lose more than they gain
	// (bench/RESULTS.md, "neuro-1-lite on Loihi").
	PayloadBits int
	// Headroom sizes the negative range of spiking neurons, in thresholds:
	// v may go down to −Headroom·v_threshold before it saturates (the
	// positive side always holds the threshold plus the worst case of one
	// step of input). Saturations are counted. Default 16.
	Headroom float64
	// Ranges says what sizes the payloads of graded spikes: RangesCalibrated
	// (the default) sizes each neuron's for RangeMargin times the range the
	// Program's calibration recorded (compile.Calibrate), where that is
	// less than the worst case its weights allow; RangesWorstCase ignores
	// the calibration. A graded neuron without a calibrated range (or
	// whose range is 0) keeps the worst case. Past its range a payload
	// saturates, and Instance.Saturations counts it.
	Ranges string
	// RangeMargin is the factor on a calibrated range, at least 1.
	// Default 4, twice what the lites' held-out text needs: calibrated on
	// 7,168 training tokens, a margin of 2 saturates nothing there, but a
	// lite calibrated on 200 tokens saturated 67 values (bench/RESULTS.md,
	// "neuro-1-lite on Loihi").
	RangeMargin float64
}

// The values of Config.Ranges.
const (
	RangesCalibrated = "calibrated"
	RangesWorstCase  = "worst-case"
)

// settleSteps stands for "as long as it takes": the range of a state that
// is never reset is its leak's settling, 1/(1 − decay) steps, or this
// many for a neuron without leak.
const settleSteps = 1 << 20

// Validate reports whether c is usable: every field zero (the default)
// or in its range. New and Convert run it.
func (c *Config) Validate() error {
	_, err := c.withDefaults(nil)
	return err
}

// withDefaults validates o and returns it with its defaults filled in, the
// Program's where it has them.
func (o *Config) withDefaults(p *compile.Program) (Config, error) {
	var c Config
	if o != nil {
		c = *o
	}
	if c.Timesteps < 0 {
		return c, fmt.Errorf("loihi: Config.Timesteps %d is negative", c.Timesteps)
	}
	if c.InputBits == 0 {
		c.InputBits = 8
	}
	if c.InputFracBits == 0 {
		c.InputFracBits = 6
	}
	if c.Timesteps == 0 && p != nil {
		c.Timesteps = p.Timesteps
		if p.Task == "causal-lm" {
			// A language model's state lives from token to token: size
			// readouts for the leak's settling, not for one token.
			c.Timesteps = settleSteps
		}
	}
	if c.Timesteps <= 0 {
		c.Timesteps = 64
	}
	if c.Headroom == 0 {
		c.Headroom = 16
	}
	if c.PayloadBits == 0 {
		c.PayloadBits = 12
	}
	if c.Ranges == "" {
		c.Ranges = RangesCalibrated
	}
	if c.Ranges != RangesCalibrated && c.Ranges != RangesWorstCase {
		return c, fmt.Errorf("loihi: Config.Ranges %q: want %q or %q", c.Ranges, RangesCalibrated, RangesWorstCase)
	}
	if c.RangeMargin == 0 {
		c.RangeMargin = 4
	}
	if !(c.RangeMargin >= 1) || math.IsInf(c.RangeMargin, 0) {
		return c, fmt.Errorf("loihi: Config.RangeMargin %v must be a finite factor of at least 1", c.RangeMargin)
	}
	if c.PayloadBits < 2 || c.PayloadBits > 24 {
		return c, fmt.Errorf("loihi: Config.PayloadBits %d out of [2, 24]", c.PayloadBits)
	}
	if !(c.Headroom > 0) || math.IsInf(c.Headroom, 0) {
		return c, fmt.Errorf("loihi: Config.Headroom %v must be positive", c.Headroom)
	}
	if c.InputBits < 2 || c.InputBits > 24 {
		return c, fmt.Errorf("loihi: Config.InputBits %d out of [2, 24]", c.InputBits)
	}
	if c.InputFracBits < 0 || c.InputFracBits > 30 {
		return c, fmt.Errorf("loihi: Config.InputFracBits %d out of [0, 30]", c.InputFracBits)
	}
	return c, nil
}

// ConversionReport says what the conversion did to every node and how far
// the integers are from the float parameters.
type ConversionReport struct {
	InputBits     int `json:"input_bits"`
	InputFracBits int `json:"input_frac_bits"`
	PayloadBits   int `json:"payload_bits"`
	Timesteps     int `json:"timesteps"`
	// Depth is Network.Depth: the chip's latency in steps.
	Depth int `json:"depth"`
	// Fold is what compile.FoldLinear did to the graph before conversion.
	Fold  *compile.FoldReport `json:"fold,omitempty"`
	Nodes []NodeReport        `json:"nodes"`
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
	// ResetError is the largest error of v_reset, relative to the
	// neuron's threshold (reported where some v_reset is not 0).
	ResetError float64 `json:"reset_error,omitempty"`
	BiasError  float64 `json:"bias_error"`
	StateScale float64 `json:"state_scale,omitempty"`
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

// Convert maps a float Program onto the chip's integers. It first folds
// the graph's linear regions (compile.FoldLinear), so that residual
// junctions (Scale nodes) and chains of Linear and Affine nodes become one
// synapse node per source and target. Supported graphs are then Input →
// (Linear | Affine) → layer → (Linear | Affine) → layer … → Output,
// recurrent Linear edges included, with layers LIF, CubaLIF, IF, LI,
// CubaLI, I and Threshold; a non-spiking layer that feeds synapses sends
// graded spikes, and synapse nodes that feed an Output directly end in a
// GradedVec readout. Anything else is refused with an error wrapping
// compile.ErrUnsupported that names the node.
func Convert(p *compile.Program, cfg *Config) (*Network, *ConversionReport, error) {
	if p == nil || p.Graph == nil {
		return nil, nil, fmt.Errorf("loihi: program has no graph")
	}
	g, err := relayChains(p.Graph, p.Dt)
	if err != nil {
		return nil, nil, err
	}
	g, frep, err := fold(g)
	if err != nil {
		return nil, nil, err
	}
	return convert(p, g, frep, cfg)
}

// isLayer reports whether nodes of kind k become a neuron group.
// A one-step Delay is one: a relay (ModelDelay).
func isLayer(k snn.Kind) bool { return snn.IsNeuron(k) || k == snn.KindThreshold || k == snn.KindDelay }

func isSynapse(k snn.Kind) bool { return k == snn.KindLinear || k == snn.KindAffine }

// convert converts the folded graph g of p.
func convert(p *compile.Program, g *snn.Graph, frep *compile.FoldReport, cfg *Config) (*Network, *ConversionReport, error) {
	o, err := cfg.withDefaults(p)
	if err != nil {
		return nil, nil, err
	}
	if err := p.CheckRanges(); err != nil {
		return nil, nil, fmt.Errorf("loihi: program %q: %w", p.Name, err)
	}
	shapes, err := g.Shapes()
	if err != nil {
		return nil, nil, err
	}
	dt := p.Dt
	if dt == 0 {
		dt = 1e-3
	}
	topo := g.Topology()
	if err := checkGraph(g, topo); err != nil {
		return nil, nil, err
	}
	net := buildNetwork(p.Name, g, topo, shapes, o)
	net.pipeline()
	rep := &ConversionReport{InputBits: o.InputBits, InputFracBits: o.InputFracBits, Timesteps: o.Timesteps, PayloadBits: o.PayloadBits, Depth: net.Depth, Fold: frep}
	// The Inputs that the Program says carry one-hot vectors (Encoding.Kind
	// "one-hot"): one input of 1 at a time.
	var oneHot map[string]bool
	if p.Input.Kind == "one-hot" {
		oneHot = map[string]bool{p.Input.Node: true}
	}
	// A layer's weights need the payload scale of each graded layer that
	// feeds it, so such a source is converted first, even when it comes
	// later in the order because it closes a cycle (an integrator of the
	// layer's own spikes). A cycle of graded layers alone stays refused.
	done, busy := make([]bool, len(net.Layers)), make([]bool, len(net.Layers))
	var convert func(i int) error
	convert = func(i int) error {
		if done[i] || busy[i] {
			return nil
		}
		busy[i] = true
		for _, di := range net.Layers[i].Sources {
			if d := net.Denses[di]; !d.FromInput && net.Layers[d.From].Graded {
				if err := convert(d.From); err != nil {
					return err
				}
			}
		}
		var calibrated []float32
		if o.Ranges == RangesCalibrated {
			calibrated = p.Ranges[net.Layers[i].Name]
		}
		reports, err := convertLayer(net, net.Layers[i], g, dt, o, oneHot, calibrated)
		if err != nil {
			return err
		}
		rep.Nodes = append(rep.Nodes, reports...)
		done[i] = true
		return nil
	}
	for i := range net.Layers {
		if err := convert(i); err != nil {
			return nil, nil, err
		}
	}
	sort.Slice(rep.Nodes, func(i, j int) bool { return rep.Nodes[i].Node < rep.Nodes[j].Node })
	return net, rep, nil
}

// checkGraph refuses what the chip cannot run: node kinds it has no
// program for, and edges other than Input → synapse → layer → synapse →
// … → Output. Everything after it may assume that shape.
func checkGraph(g *snn.Graph, topo *snn.Topology) error {
	kind := func(name string) snn.Kind { return g.Nodes[name].Kind() }
	for _, name := range g.Names() {
		switch k := kind(name); k {
		case snn.KindInput, snn.KindOutput, snn.KindLinear, snn.KindAffine, snn.KindThreshold,
			snn.KindLIF, snn.KindCubaLIF, snn.KindIF, snn.KindLI, snn.KindCubaLI, snn.KindI, snn.KindDelay:
		default:
			return unsupported(name, "node kind %s is not supported (Input, Linear, Affine, LIF, CubaLIF, IF, LI, CubaLI, I, Threshold, Delay of one step, Output; Scale junctions off cycles are folded away)", k)
		}
	}
	for _, name := range g.Names() {
		in, out := topo.In(name), topo.Out(name)
		k := kind(name)
		switch {
		case k == snn.KindInput:
			for _, t := range out {
				if !isSynapse(kind(t)) {
					return unsupported(name, "an Input may only feed Linear or Affine nodes, not %s %q", kind(t), t)
				}
			}
		case isSynapse(k):
			if len(in) != 1 {
				return unsupported(name, "a synapse node needs exactly one source, has %d", len(in))
			}
			src := in[0]
			if sk := kind(src); sk != snn.KindInput && !isLayer(sk) {
				return unsupported(name, "source %q is %s: synapses carry graph inputs, spikes or graded spikes of neurons", src, sk)
			}
			if len(out) != 1 || !isLayer(kind(out[0])) && kind(out[0]) != snn.KindOutput {
				return unsupported(name, "a synapse node must feed exactly one neuron node or Output (it feeds %v)", out)
			}
		case isLayer(k):
			if len(in) == 0 {
				return unsupported(name, "neuron node has no input")
			}
			for _, s := range in {
				if !isSynapse(kind(s)) {
					return unsupported(name, "neurons take their input through Linear or Affine nodes, not from %s %q", kind(s), s)
				}
			}
		case k == snn.KindOutput:
			if len(in) == 0 {
				return unsupported(name, "an Output must read a neuron node or synapse nodes (it reads nothing)")
			}
			layers := 0
			for _, s := range in {
				switch sk := kind(s); {
				case isLayer(sk):
					layers++
				case isSynapse(sk):
				default:
					return unsupported(name, "an Output reads a neuron node or synapse nodes, not %s %q", sk, s)
				}
			}
			if layers > 0 && len(in) != 1 {
				return unsupported(name, "an Output must read exactly one neuron node, or only synapse nodes (it reads %v)", in)
			}
		}
	}
	return nil
}

// buildNetwork lays out a checked graph as ports, Layers and Denses, in
// the simulator's evaluation order (snn.Topology): the chip then reads
// every edge that closes a cycle one step late, as the simulator does. The
// integer parameters are left for convertLayer.
func buildNetwork(name string, g *snn.Graph, topo *snn.Topology, shapes map[string]snn.Shape, o Config) *Network {
	kind := func(name string) snn.Kind { return g.Nodes[name].Kind() }
	net := &Network{Name: name}
	inputIdx, layerIdx, denseIdx := map[string]int{}, map[string]int{}, map[string]int{}
	for _, name := range g.NamesOfKind(snn.KindInput) {
		inputIdx[name] = len(net.Inputs)
		sh := shapes[name].Out
		net.Inputs = append(net.Inputs, &InputPort{Name: name, Shape: sh, Size: snn.Size(sh), Bits: o.InputBits, FracBits: o.InputFracBits})
	}
	// readout reports whether Output name is fed by synapse nodes: it then
	// gets a GradedVec layer of its own name.
	readout := func(name string) bool { return kind(name) == snn.KindOutput && isSynapse(kind(topo.In(name)[0])) }
	for _, name := range topo.Order {
		switch k := kind(name); {
		case isLayer(k):
			l := &Layer{Name: name, Kind: k, Shape: shapes[name].Out, N: snn.Size(shapes[name].Out)}
			switch k {
			case snn.KindThreshold:
				l.Model = ModelHeaviside
			case snn.KindDelay:
				l.Model = ModelDelay
			}
			for _, t := range topo.Out(name) {
				if !snn.IsSpiking(k) && isSynapse(kind(t)) {
					l.Graded, l.PayloadBits = true, o.PayloadBits
				}
			}
			layerIdx[name] = len(net.Layers)
			net.Layers = append(net.Layers, l)
		case readout(name):
			layerIdx[name] = len(net.Layers)
			net.Layers = append(net.Layers, &Layer{Name: name, Kind: k, Model: ModelGradedVec, Shape: shapes[name].Out, N: snn.Size(shapes[name].Out)})
		}
	}
	for _, name := range topo.Order {
		if isSynapse(kind(name)) {
			denseIdx[name] = len(net.Denses)
			src := topo.In(name)[0]
			d := &Dense{Name: name, To: layerIdx[topo.Out(name)[0]]}
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
	for _, name := range topo.Order {
		switch k := kind(name); {
		case isSynapse(k):
			net.Order = append(net.Order, Op{Dense: true, Index: denseIdx[name]})
		case isLayer(k) || readout(name):
			net.Order = append(net.Order, Op{Index: layerIdx[name]})
		}
	}
	for _, name := range g.NamesOfKind(snn.KindOutput) {
		src := name
		if !readout(name) {
			src = topo.In(name)[0]
		}
		net.Outputs = append(net.Outputs, &OutputPort{Name: name, Shape: shapes[name].Out, Layer: layerIdx[src]})
	}
	return net
}

// pipeline sets the chip's schedule: Lava's Dense buffers its output one
// step, so a layer fed through a chain of k Dense hops sees its input k
// steps after the graph input. Each layer's stage is one more than the
// latest of its sources (inputs are stage 0; an edge that closes a cycle
// is left out, it is delayed a step on both schedules); each Dense gets
// the synaptic delay that makes all of a layer's inputs arrive together,
// and Depth is the latest Output's stage: the steps from a token entering
// to its output leaving, on the chip.
func (net *Network) pipeline() {
	// Layers are numbered in plan order, so a Dense from a layer at or
	// after its target closes a cycle.
	back := func(d *Dense) bool { return !d.FromInput && d.From >= d.To }
	stage := make([]int, len(net.Layers))
	for li, l := range net.Layers {
		s := 0
		for _, di := range l.Sources {
			switch d := net.Denses[di]; {
			case d.FromInput:
				s = max(s, 1)
			case !back(d):
				s = max(s, stage[d.From]+1)
			}
		}
		stage[li] = s
	}
	for _, d := range net.Denses {
		if back(d) {
			continue
		}
		from := 0
		if !d.FromInput {
			from = stage[d.From]
		}
		if del := stage[d.To] - 1 - from; del > 0 {
			d.Delay = del
		}
	}
	net.Depth = 0
	for _, op := range net.Outputs {
		net.Depth = max(net.Depth, stage[op.Layer])
	}
}
