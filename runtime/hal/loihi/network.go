package loihi

import (
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
