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
	// Depth is the latency on the chip, in steps, of the latest Output:
	// Lava's Dense delivers its sum one step after the spikes it sums, so
	// a graph of k layers in series answers k steps after its input
	// (pipelined: a new input may enter every step). The emulator computes
	// the same values within the step, in plan order.
	Depth int
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
	// Delay is the synaptic delay, in steps, that a pipelined chip needs
	// on this Dense so that every input of its Layer arrives in the same
	// step (see Network.Depth). The emulator needs none and ignores it.
	Delay int
}

// NeuronModel is the program a Layer's neurons run.
type NeuronModel string

const (
	// ModelLIF is Lava's PyLifModelBitAcc (the zero value means it too);
	// Layer.Subtract selects the subtractive-reset microcode variant, and
	// a non-nil Layer.VReset the reset to (or subtraction towards) a
	// value other than 0, another one.
	ModelLIF NeuronModel = "lif"
	// ModelHeaviside is a stateless threshold, a microcode program:
	// u ← wrap24(a·2^6) (Lava's u with du = 4095), v ← clip24(u + bias),
	// spike when v > vth·2^6. It is Lava's LIF with a v decay of exactly
	// 0, which the 12-bit dv cannot express (its largest, 4095, keeps
	// 1/4096 of v). Used for snn.Threshold.
	ModelHeaviside NeuronModel = "heaviside"
	// ModelGradedVec is Lava's GradedVec (lava.proc.graded, fixed point):
	// v ← a, the summed synaptic input without the 2^6 shift, sent as a
	// graded spike; clip24 here. It reads out synapse nodes that feed an
	// Output directly (logits): the output is v·Scale + Offset.
	ModelGradedVec NeuronModel = "graded-vec"
	// ModelDelay is a relay that holds its input one step, a microcode
	// program for snn.Delay of one step: u ← v (the value held since the
	// last step, sent as this step's graded spike), then v ← clip24(a +
	// bias), the summed synaptic input without the 2^6 shift. On a
	// pipelined chip it is one stage like any layer; the value it sends
	// is the previous token's, so no synaptic delay changes.
	ModelDelay NeuronModel = "delay"
)

// Layer is a neuron node: per-neuron integer parameters (length N).
type Layer struct {
	Name     string
	Kind     snn.Kind
	Model    NeuronModel
	N        int
	Shape    []int
	Spiking  bool
	Subtract bool // the subtractive-reset microcode variant
	// Graded layers (non-spiking neurons that feed synapses) send v as a
	// graded spike each step, a microcode variant of the LIF's spike
	// stage: payload = clamp((v + 2^(s−1)) >> s, ±(2^(PayloadBits−1) − 1))
	// with s = PayloadShift[i] (no rounding term for s = 0), sent when
	// non-zero; it is worth Scale[i]·2^s per unit.
	//
	// A graded layer's program also adds its synaptic input to u without
	// Lava's 2^6 shift (u ← a, with du = 4095): u has no memory, so the
	// shift's six fractional bits buy nothing, while v, which must hold
	// the input summed over the leak's time constant (up to 4096 steps),
	// gains six bits of range. The decay's truncation then costs up to a
	// unit of a per time constant instead of 1/64 of one.
	Graded       bool
	PayloadBits  int
	PayloadShift []int32
	// Offset is added by the host to a GradedVec readout's v·Scale: the
	// Affine biases of the readout's synapses (GradedVec has no bias).
	Offset []float64
	Du, Dv []int32
	Vth    []int32 // threshold mantissa; the test is v > Vth·2^6
	// VReset is the reset mantissa on the threshold's grid (Neuron.VReset):
	// a spike sets v to VReset·2^6, or with Subtract lowers it by
	// (Vth − VReset)·2^6. nil means 0 everywhere, Lava's LIF.
	VReset   []int32
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

// neuronParams are the float parameters of one neuron in the form the
// integer model needs: v ← am·v + u + bias, u ← as·u + c·x; a spike
// resets v to vreset (or subtracts vth − vreset).
type neuronParams struct {
	am, as, c, bias, vth, vleak, vreset float64
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

// relayChains returns g with every Delay of n > 1 steps of dt (the same n
// for all its elements) replaced by n one-step Delays in series, named
// "<name>/1" … "<name>/<n−1>" and then name itself, so that the last
// relay is the node the graph's edges and probes name. A relay holds one
// step; oneToOne (in fold) joins them. Delays that are not a whole,
// uniform number of steps are left for params to refuse by name. g
// itself is not changed.
func relayChains(g *snn.Graph, dt float64) (*snn.Graph, error) {
	if dt == 0 {
		dt = 1e-3
	}
	chains := map[string]int{}
	for name, n := range g.Nodes {
		d, ok := n.(*snn.Delay)
		if !ok || len(d.Delay) == 0 {
			continue
		}
		steps := math.Round(d.Delay[0] / dt)
		uniform := steps > 1 && steps <= maxRelayChain
		for _, x := range d.Delay[1:] {
			uniform = uniform && math.Round(x/dt) == steps
		}
		if uniform {
			chains[name] = int(steps)
		}
	}
	if len(chains) == 0 {
		return g, nil
	}
	shapes, err := g.Shapes()
	if err != nil {
		return nil, err
	}
	out := &snn.Graph{Nodes: make(map[string]snn.Node, len(g.Nodes)), Edges: make([]snn.Edge, 0, len(g.Edges))}
	for name, n := range g.Nodes {
		out.Nodes[name] = n
	}
	for name, steps := range chains {
		relay := func(i int) string {
			if i == steps {
				return name
			}
			return fmt.Sprintf("%s/%d", name, i)
		}
		for i := 1; i <= steps; i++ {
			if _, ok := g.Nodes[relay(i)]; ok && i < steps {
				return nil, unsupported(relay(i), "the name of relay %d of Delay %q (%d steps) is already a node's", i, name, steps)
			}
			out.Nodes[relay(i)] = &snn.Delay{Delay: []float64{dt}, Shape: shapes[name].Out}
			if i > 1 {
				out.Edges = append(out.Edges, snn.Edge{From: relay(i - 1), To: relay(i)})
			}
		}
	}
	for _, e := range g.Edges {
		if _, ok := chains[e.To]; ok {
			e.To = e.To + "/1"
		}
		out.Edges = append(out.Edges, e)
	}
	return out, nil
}

// maxRelayChain bounds the relays one Delay becomes: a neuron group each,
// so a longer delay would spend the chip's cores on holding a value.
const maxRelayChain = 64

// fold runs compile.FoldLinear, then turns each Scale node it left (a
// region on a cycle, such as snnTorch's one-to-one recurrence, RSynaptic
// with all_to_all=False) into the Linear node with its scales on the
// diagonal, where it has one source and one target: the same map at the
// same place in the graph, so the cycle keeps its step of delay, and a
// synapse node the chip has. It costs n² synapses for n neurons, most of
// them zero; the counters count only the non-zero ones.
func fold(g *snn.Graph) (*snn.Graph, *compile.FoldReport, error) {
	g, err := oneToOne(g)
	if err != nil {
		return nil, nil, err
	}
	g, frep, err := compile.FoldLinear(g)
	if err != nil {
		return nil, nil, err
	}
	var scales []string
	names := g.NamesOfKind(snn.KindScale)
	if len(names) == 0 {
		return g, frep, nil
	}
	topo := g.Topology()
	for _, name := range names {
		if len(topo.In(name)) == 1 && len(topo.Out(name)) == 1 {
			scales = append(scales, name)
		}
	}
	if len(scales) == 0 {
		return g, frep, nil
	}
	shapes, err := g.Shapes()
	if err != nil {
		return nil, nil, err
	}
	out := &snn.Graph{Nodes: make(map[string]snn.Node, len(g.Nodes)), Edges: g.Edges}
	for name, n := range g.Nodes {
		out.Nodes[name] = n
	}
	for _, name := range scales {
		sc := g.Nodes[name].(*snn.Scale)
		n := snn.Size(shapes[name].Out)
		w := snn.NewTensor(n, n)
		for i := 0; i < n; i++ {
			f := sc.Scale[0]
			if len(sc.Scale) > 1 {
				f = sc.Scale[i]
			}
			w.Data[i*n+i] = f
		}
		out.Nodes[name] = &snn.Linear{Weight: w}
	}
	return out, frep, nil
}

// oneToOne returns g with a Scale node of 1, named "<from>/to/<to>", on
// every edge from one Delay straight into another (a chain of one-step
// Delays, as relayChains makes of a longer one or a user may build): a
// neuron group reaches another only through synapses,
// so each relay passes its value on through one-to-one synapses of
// weight 1, which fold then turns into a Linear node like any residual
// junction. g itself is not changed.
func oneToOne(g *snn.Graph) (*snn.Graph, error) {
	relay := func(name string) bool { return g.Nodes[name].Kind() == snn.KindDelay }
	chained := 0
	for _, e := range g.Edges {
		if relay(e.From) && relay(e.To) {
			chained++
		}
	}
	if chained == 0 {
		return g, nil
	}
	shapes, err := g.Shapes()
	if err != nil {
		return nil, err
	}
	out := &snn.Graph{Nodes: make(map[string]snn.Node, len(g.Nodes)+chained), Edges: make([]snn.Edge, 0, len(g.Edges)+chained)}
	for name, n := range g.Nodes {
		out.Nodes[name] = n
	}
	for _, e := range g.Edges {
		if !relay(e.From) || !relay(e.To) {
			out.Edges = append(out.Edges, e)
			continue
		}
		mid := e.From + "/to/" + e.To
		if _, ok := out.Nodes[mid]; ok {
			return nil, unsupported(mid, "the name of the synapses from Delay %q to Delay %q is already a node's", e.From, e.To)
		}
		out.Nodes[mid] = &snn.Scale{Scale: []float32{1}, Shape: shapes[e.From].Out}
		out.Edges = append(out.Edges, snn.Edge{From: e.From, To: mid}, snn.Edge{From: mid, To: e.To})
	}
	return out, nil
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
	case *snn.Threshold:
		// The Heaviside program: v = x − threshold, no memory, spike
		// when v > 0 (vth 0).
		np.c, np.bias = 1, -at(x.Threshold)
		return np, nil
	case *snn.Delay:
		// The relay program: v = x, no memory, sent a step later.
		if steps := math.Round(at(x.Delay) / dt); steps != 1 {
			return np, unsupported(name, "delay %g s at element %d is %g steps of %g s: the chip holds a delay as a chain of one-step relays, 1 to %d steps, the same for every element", at(x.Delay), i, steps, dt, maxRelayChain)
		}
		np.c = 1
		return np, nil
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
		// A v_reset other than 0 runs as the reset microcode variant
		// (Neuron.VReset); 0 is Lava's LIF.
		np.vreset = vreset
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
	oneHot bool      // at most one input, of 1, is non-zero at a time
	q      float64   // float weight per Lava integer unit
	qBest  float64
	maxAbs float64
	mode   SignMode
}

// layerConversion is one Layer on its way from float parameters to
// integers. Each stage reads what the ones before it decided: the decays
// fix the range a bias settles at, the sources' weights and the decays fix
// the state range, that range fixes the input unit U shared by the
// sources' weight exponents, and U fixes the thresholds, biases and
// payload shifts.
type layerConversion struct {
	net *Network
	l   *Layer
	g   *snn.Graph
	o   Config
	// oneHot names the Inputs that carry one-hot vectors.
	oneHot map[string]bool
	nr     NodeReport
	// readout: a GradedVec readout, which has no float neuron behind it;
	// stateless: a readout, a Heaviside program or a relay, none keeping
	// state in u or a decaying v.
	readout, stateless bool
	ps                 []neuronParams
	asL, amL           []float64 // the decays the 12-bit du and dv give
	srcs               []*denseSrc
	biasF              []float64 // float bias per neuron, in v per step
	bvs                []float64 // the bound on |v| per neuron, in float units
	// calibrated is the Program's calibrated range of each neuron's
	// output (compile.Ranges), or nil.
	calibrated []float32
}

func convertLayer(net *Network, l *Layer, g *snn.Graph, dt float64, o Config, oneHot map[string]bool, calibrated []float32) ([]NodeReport, error) {
	c := &layerConversion{net: net, l: l, g: g, o: o, oneHot: oneHot, calibrated: calibrated}
	if err := c.params(dt); err != nil {
		return nil, err
	}
	c.decays()
	if err := c.sources(); err != nil {
		return nil, err
	}
	U, reports := c.weights(c.minUnit())
	c.thresholds(U, c.floorLoss())
	if l.Graded {
		c.payloads()
	}
	c.nr.StateScale = l.Scale[0]
	return append(reports, c.nr), nil
}

// params reads the float parameters of every neuron.
func (c *layerConversion) params(dt float64) error {
	l := c.l
	node := c.g.Nodes[l.Name]
	l.Spiking = snn.IsSpiking(l.Kind)
	switch x := node.(type) {
	case *snn.LIF:
		l.Subtract = x.Reset == snn.ResetSubtract
	case *snn.IF:
		l.Subtract = x.Reset == snn.ResetSubtract
	case *snn.CubaLIF:
		l.Subtract = x.Reset == snn.ResetSubtract
	}
	c.readout = l.Model == ModelGradedVec
	c.stateless = c.readout || l.Model == ModelHeaviside || l.Model == ModelDelay
	c.ps = make([]neuronParams, l.N)
	for i := range c.ps {
		if c.readout {
			c.ps[i] = neuronParams{c: 1}
			continue
		}
		p, err := params(l.Name, node, i, dt)
		if err != nil {
			return err
		}
		c.ps[i] = p
	}
	c.nr = NodeReport{Node: l.Name, Kind: l.Kind}
	if l.Model != "" {
		c.nr.Notes = append(c.nr.Notes, "neuron program: "+string(l.Model))
	}
	return nil
}

// decays sets the integer decays. u: 4096 − (du + 1) = round(4096·as); v:
// 4096 − dv = round(4096·am). as = 0 (single-state neurons) gives du =
// 4095, a decay factor of exactly 0, so u is this step's input alone.
func (c *layerConversion) decays() {
	l, n := c.l, c.l.N
	l.Du, l.Dv = make([]int32, n), make([]int32, n)
	c.asL, c.amL = make([]float64, n), make([]float64, n)
	for i, p := range c.ps {
		du := MaxDecay - int64(math.Round(DecayScale*p.as))
		dv := DecayScale - int64(math.Round(DecayScale*p.am))
		if c.stateless {
			// No state: u is this step's input (du = 4095), and v
			// keeps nothing (the program, not dv, says so).
			du, dv = MaxDecay, DecayScale
		} else if du < 0 || dv > MaxDecay {
			c.nr.Notes = appendOnce(c.nr.Notes, "a decay beyond the 12-bit range was clamped")
			du, dv = min(max(du, 0), MaxDecay), min(max(dv, 0), MaxDecay)
		}
		l.Du[i], l.Dv[i] = int32(du), int32(min(dv, MaxDecay))
		c.asL[i] = float64(DecayScale-(du+1)) / DecayScale
		c.amL[i] = float64(DecayScale-dv) / DecayScale
		c.nr.DecayUError = math.Max(c.nr.DecayUError, math.Abs(c.asL[i]-p.as))
		c.nr.DecayVError = math.Max(c.nr.DecayVError, math.Abs(c.amL[i]-p.am))
	}
}

// sources gathers the float weights of the Denses that feed the layer, in
// the units the Dense will see, and sums their biases into biasF.
func (c *layerConversion) sources() error {
	l, n, net := c.l, c.l.N, c.net
	c.biasF = make([]float64, n)
	for i, p := range c.ps {
		c.biasF[i] = p.bias
	}
	for _, di := range l.Sources {
		d := net.Denses[di]
		s := &denseSrc{d: d, sx: 1, xmax: 1}
		switch x := c.g.Nodes[d.Name].(type) {
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
			s.oneHot = c.oneHot[ip.Name] || c.oneHot[""] && len(net.Inputs) == 1
		} else if sl := net.Layers[d.From]; sl.Graded {
			if sl.PayloadShift == nil {
				return unsupported(d.Name, "graded spikes of %q close a cycle: their scale is not known yet (not supported)", sl.Name)
			}
			// One payload unit of source neuron j is worth
			// Scale[j]·2^shift[j]: fold that into the weight columns, so
			// the Dense sees integer payloads of one unit each.
			w := make([]float32, len(s.w))
			for k, x := range s.w {
				j := k % d.Cols
				w[k] = float32(float64(x) * sl.Scale[j] * math.Ldexp(1, int(sl.PayloadShift[j])))
			}
			s.w = w
			s.xmax = math.Ldexp(1, sl.PayloadBits-1) - 1
		}
		s.mode, s.qBest, s.maxAbs = bestStep(s.w)
		c.srcs = append(c.srcs, s)
		if s.bias != nil && c.readout {
			// GradedVec has no bias: the host adds it to the readout.
			if l.Offset == nil {
				l.Offset = make([]float64, n)
			}
			for i := range l.Offset {
				l.Offset[i] += float64(s.bias[i])
			}
			c.nr.Notes = appendOnce(c.nr.Notes, fmt.Sprintf("bias of %q added by the host to the readout (GradedVec has none)", d.Name))
		} else if s.bias != nil {
			for i := range c.biasF {
				b := c.ps[i].c * float64(s.bias[i])
				if c.ps[i].as > 0 {
					// Lava adds its bias to v, not u: a constant input to
					// u settles at c·b/(1 − as) per step in v, which is
					// what the bias gives; the first ~τs steps differ.
					b /= 1 - c.asL[i]
					c.nr.Notes = appendOnce(c.nr.Notes, fmt.Sprintf("bias of %q added to v at its steady-state value c·b/(1−a_s): exact after the synaptic transient, not during it", d.Name))
				}
				c.biasF[i] += b
			}
		}
	}
	return nil
}

// minUnit returns the smallest float input unit U that keeps the state
// range each neuron needs inside the chip's 24 bits, and records that
// range, in float units of v, in bvs.
func (c *layerConversion) minUnit() float64 {
	l, o := c.l, c.o
	T := float64(o.Timesteps)
	if l.Graded {
		T = settleSteps
	}
	umin := 0.0
	c.bvs = make([]float64, l.N)
	for i, p := range c.ps {
		in := 0.0
		for _, s := range c.srcs {
			row := s.w[i*s.d.Cols : (i+1)*s.d.Cols]
			sum := 0.0
			for _, w := range row {
				if s.oneHot {
					sum = math.Max(sum, math.Abs(float64(w)))
				} else {
					sum += math.Abs(float64(w)) * s.xmax
				}
			}
			in += sum
		}
		uF := p.c * in / (1 - c.asL[i])
		steps := T
		if c.amL[i] < 1 {
			steps = math.Min(T, 1/(1-c.amL[i]))
		}
		bv := (uF+math.Abs(c.biasF[i]))*steps + math.Abs(p.vleak)
		if l.Spiking {
			bv = math.Max(o.Headroom*p.vth, p.vth+uF+math.Abs(c.biasF[i]))
			// After a reset v sits at (or, subtracting, above) v_reset.
			bv = math.Max(bv, math.Abs(p.vreset))
		}
		c.bvs[i] = bv
		if c.readout {
			// v = a, one unit of v per dendritic unit U.
			umin = math.Max(umin, in/(maxUV-1))
			continue
		}
		dmin := math.Max(bv, uF) / (maxUV - 1)
		if l.Spiking {
			// The threshold and the reset mantissas fit 17 bits.
			dmin = math.Max(dmin, math.Max(p.vth, math.Abs(p.vreset))/(float64(MaxVth)*(1<<VthShift)))
		}
		// δ_i = c_i·U/64: the float input unit U per dendritic unit.
		umin = math.Max(umin, dmin*float64(l.actUnit())/p.c)
	}
	if umin == 0 {
		umin = math.SmallestNonzeroFloat64
	}
	return umin
}

// weights picks the input unit U, at least umin, and each source's weight
// exponent, and quantises the weights; it returns U and the Denses'
// reports.
func (c *layerConversion) weights(umin float64) (float64, []NodeReport) {
	// Each source's best exponent: the finest U ≥ umin its weight step
	// allows. Several sources must share U, so the coarsest wins and the
	// others re-derive their weight step from it.
	U := 0.0
	for _, s := range c.srcs {
		e := math.Floor(math.Log2(s.qBest * s.sx / umin))
		e = math.Min(math.Max(e, MinWeightExp), MaxWeightExp)
		s.d.WeightExp = int(e)
		U = math.Max(U, math.Ldexp(s.qBest*s.sx, -int(e)))
	}
	if U < umin {
		// Even the smallest exponent leaves the range short: coarsen the
		// weights instead (the report shows the cost).
		U = umin
		c.nr.Notes = appendOnce(c.nr.Notes, "state range needs a weight step coarser than the weights' own: weights lose resolution")
	}
	var reports []NodeReport
	for _, s := range c.srcs {
		dr := NodeReport{Node: s.d.Name, Kind: c.g.Nodes[s.d.Name].Kind(), SignMode: s.mode.String()}
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
	return U, reports
}

// floorLoss returns what the negative weight exponents lose, on average,
// per step in units of u: a negative exponent k floors the dendritic sum,
// losing (2^k − 1)/2^(k+1) of a unit, 64 times that in u. thresholds gives
// it back as bias (divided by 1 − a_s where u keeps it).
func (c *layerConversion) floorLoss() float64 {
	loss := 0.0
	for _, s := range c.srcs {
		if k := -s.d.WeightExp; k > 0 {
			loss += float64(c.l.actUnit()) * (0.5 - math.Ldexp(0.5, -k))
			c.nr.Notes = appendOnce(c.nr.Notes, fmt.Sprintf("%q has weight exponent %d: the mean loss of its floor is returned as bias", s.d.Name, s.d.WeightExp))
		}
	}
	return loss
}

// thresholds sets the thresholds, biases and scales of v, now that the
// input unit U is known.
func (c *layerConversion) thresholds(U, floorLoss float64) {
	l, n, nr := c.l, c.l.N, &c.nr
	l.Vth, l.BiasMant, l.BiasExp, l.Scale, l.V0 = make([]int32, n), make([]int32, n), make([]int32, n), make([]float64, n), make([]int32, n)
	for i, p := range c.ps {
		if c.readout {
			l.Scale[i] = U
			l.Vth[i] = MaxVth
			if floorLoss > 0 {
				if l.Offset == nil {
					l.Offset = make([]float64, n)
				}
				l.Offset[i] += floorLoss / float64(l.actUnit()) * U
			}
			continue
		}
		delta := p.c * U / float64(l.actUnit())
		l.Scale[i] = delta
		c.biasF[i] += floorLoss / (1 - c.asL[i]) * delta
		v0, _ := clipV(int64(math.Round(p.vleak / delta)))
		l.V0[i] = int32(v0)
		if l.Model == ModelHeaviside {
			// The threshold is in the bias (v = x − threshold > 0).
			l.Vth[i] = 0
		} else if l.Spiking {
			m := math.Round(p.vth / (delta * (1 << VthShift)))
			if m > MaxVth {
				m = MaxVth
				nr.Notes = appendOnce(nr.Notes, "threshold clamped to the 17-bit mantissa")
			}
			l.Vth[i] = int32(m)
			nr.ThresholdError = math.Max(nr.ThresholdError, math.Abs(m*delta*(1<<VthShift)-p.vth)/p.vth)
			c.resetMant(i, delta, p)
		} else {
			l.Vth[i] = MaxVth
		}
		b := c.biasF[i] / delta
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
		nr.BiasError = math.Max(nr.BiasError, math.Abs(math.Ldexp(m, int(e))*delta-c.biasF[i]))
	}
	if nr.ThresholdError > coarseThreshold { // only spiking, non-Heaviside neurons have one
		worst := 0.0
		for i, p := range c.ps {
			worst = math.Max(worst, c.bvs[i]/p.vth)
		}
		nr.Notes = appendOnce(nr.Notes, fmt.Sprintf("thresholds are off by up to %.0f%%: v's 24 bits must hold a worst-case step of input of %.3g thresholds, which leaves the threshold few units of 2^6; spikes will differ from the float network's (smaller input weights or fewer sources give it back)", 100*nr.ThresholdError, worst))
	}
}

// coarseThreshold is the relative threshold error above which the report
// says why. A threshold with a mantissa of 10 or more is within 5%, so
// past that the grid, not rounding, is what moved it.
const coarseThreshold = 0.05

// resetMant sets neuron i's reset mantissa: v_reset rounded to the
// threshold's grid, round(v_reset/(δ·2^6)) half away from zero (as the
// threshold), so a subtractive reset lowers v by exactly the grid value of
// v_threshold − v_reset when both are on the grid, and by nothing when
// they are equal (snnTorch's "none"). VReset stays nil while every
// mantissa is 0, as Lava's LIF has it.
func (c *layerConversion) resetMant(i int, delta float64, p neuronParams) {
	l, nr := c.l, &c.nr
	if p.vreset == 0 {
		return
	}
	m := math.Round(p.vreset / (delta * (1 << VthShift)))
	if math.Abs(m) > MaxVth {
		m = math.Copysign(MaxVth, m)
		nr.Notes = appendOnce(nr.Notes, "v_reset clamped to the 17-bit magnitude of the threshold's mantissa")
	}
	if l.VReset == nil {
		l.VReset = make([]int32, l.N)
		if l.Subtract {
			nr.Notes = append(nr.Notes, "neuron program: subtractive reset by v_threshold − v_reset (a microcode variant beyond Lava's LIF)")
		} else {
			nr.Notes = append(nr.Notes, "neuron program: reset to v_reset (a microcode variant beyond Lava's LIF)")
		}
	}
	l.VReset[i] = int32(m)
	nr.ResetError = math.Max(nr.ResetError, math.Abs(m*delta*(1<<VthShift)-p.vreset)/p.vth)
}

// payloads sizes a graded layer's payload shifts so that each neuron's
// payload covers the worst case of its v, or RangeMargin times its
// calibrated range where that is less.
func (c *layerConversion) payloads() {
	l := c.l
	pmax := math.Ldexp(1, l.PayloadBits-1) - 1
	l.PayloadShift = make([]int32, l.N)
	lo, hi := int32(StateBits), int32(0)
	if len(c.calibrated) != l.N {
		c.calibrated = nil
	}
	narrowed := 0
	for i := range l.PayloadShift {
		bv := c.bvs[i]
		if c.calibrated != nil && c.calibrated[i] > 0 {
			if r := c.o.RangeMargin * float64(c.calibrated[i]); r < bv {
				bv = r
				narrowed++
			}
		}
		vb := math.Min(bv/l.Scale[i], maxUV-1)
		sh := int32(0)
		for math.Ceil(math.Ldexp(vb, -int(sh))) > pmax {
			sh++
		}
		l.PayloadShift[i] = sh
		lo, hi = min(lo, sh), max(hi, sh)
	}
	c.nr.Notes = append(c.nr.Notes, fmt.Sprintf("sends graded spikes of %d bits: v rounded to units of 2^s, s from %d to %d", l.PayloadBits, lo, hi))
	if narrowed > 0 {
		c.nr.Notes = append(c.nr.Notes, fmt.Sprintf("payloads of %d of %d neurons sized for %g times their calibrated range, not the worst case: beyond it they saturate", narrowed, l.N, c.o.RangeMargin))
	}
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

// actUnit is the factor between a unit of the summed synaptic input and a
// unit of u: Lava's 2^6, or 1 for a graded layer's program and a
// GradedVec readout (the readout's floor loss is computed in units of a
// with it).
func (l *Layer) actUnit() int64 {
	if l.Graded || l.Model == ModelGradedVec {
		return 1
	}
	return 1 << ActShift
}
