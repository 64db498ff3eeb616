package snn

import "fmt"

// Kind names a node type. The names are NIR's.
type Kind string

// The node kinds: every primitive of the Neuromorphic Intermediate
// Representation.
const (
	KindInput     Kind = "Input"
	KindOutput    Kind = "Output"
	KindAffine    Kind = "Affine"
	KindLinear    Kind = "Linear"
	KindScale     Kind = "Scale"
	KindConv1d    Kind = "Conv1d"
	KindConv2d    Kind = "Conv2d"
	KindFlatten   Kind = "Flatten"
	KindSumPool2d Kind = "SumPool2d"
	KindAvgPool2d Kind = "AvgPool2d"
	KindDelay     Kind = "Delay"
	KindThreshold Kind = "Threshold"
	KindI         Kind = "I"
	KindIF        Kind = "IF"
	KindLI        Kind = "LI"
	KindLIF       Kind = "LIF"
	KindCubaLI    Kind = "CubaLI"
	KindCubaLIF   Kind = "CubaLIF"
)

// Kinds lists every node kind in a fixed order.
var Kinds = []Kind{
	KindInput, KindOutput, KindAffine, KindLinear, KindScale, KindConv1d,
	KindConv2d, KindFlatten, KindSumPool2d, KindAvgPool2d, KindDelay,
	KindThreshold, KindI, KindIF, KindLI, KindLIF, KindCubaLI, KindCubaLIF,
}

// Node is one vertex of a Graph. The set of implementations is closed: the
// concrete types in this package, one per Kind.
type Node interface {
	Kind() Kind
	// check validates the node's own fields, independent of the graph.
	check() error
	// shapes returns the per-sample input and output shapes the node
	// determines by itself; nil where it takes the shape from its inputs.
	shapes() (in, out []int, err error)
	// tensors calls f for every weight tensor field, by JSON field name.
	tensors(f func(field string, t **Tensor))
}

// ResetMode says what happens to the membrane after a spike.
type ResetMode string

const (
	// ResetToValue sets v to v_reset (NIR's semantics). The zero value.
	ResetToValue ResetMode = ""
	// ResetSubtract lowers v by v_threshold - v_reset, keeping the charge
	// above threshold; ANN-to-SNN conversion needs it.
	ResetSubtract ResetMode = "subtract"
)

// FieldError names the node and field at fault.
type FieldError struct {
	Node  string // empty when the node is not yet in a graph
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Node == "" {
		return fmt.Sprintf("snn: field %s: %s", e.Field, e.Msg)
	}
	return fmt.Sprintf("snn: node %q field %s: %s", e.Node, e.Field, e.Msg)
}

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Input is where values enter the graph: Shape per sample.
type Input struct {
	Shape []int `json:"shape"`
}

// Output is where values leave the graph. Shape may be nil: it is then taken
// from the node's inputs.
type Output struct {
	Shape []int `json:"shape,omitempty"`
}

// Affine is y = W x + b with W of shape (out, in).
type Affine struct {
	Weight *Tensor   `json:"weight"`
	Bias   []float32 `json:"bias"`
}

// Linear is y = W x with W of shape (out, in).
type Linear struct {
	Weight *Tensor `json:"weight"`
}

// Scale is y = s ⊙ x, element by element.
type Scale struct {
	Scale []float32 `json:"scale"`
	Shape []int     `json:"shape,omitempty"`
}

// Conv1d is a 1-D convolution over (C, L) inputs. Weight has shape
// (out_channels, in_channels/groups, kernel). InputShape is (C, L).
type Conv1d struct {
	Weight     *Tensor   `json:"weight"`
	Bias       []float32 `json:"bias,omitempty"`
	Stride     int       `json:"stride"`
	Padding    int       `json:"padding"`
	Dilation   int       `json:"dilation"`
	Groups     int       `json:"groups"`
	InputShape []int     `json:"input_shape"`
}

// Conv2d is a 2-D convolution over (C, H, W) inputs. Weight has shape
// (out_channels, in_channels/groups, kh, kw). InputShape is (C, H, W).
type Conv2d struct {
	Weight     *Tensor   `json:"weight"`
	Bias       []float32 `json:"bias,omitempty"`
	Stride     [2]int    `json:"stride"`
	Padding    [2]int    `json:"padding"`
	Dilation   [2]int    `json:"dilation"`
	Groups     int       `json:"groups"`
	InputShape []int     `json:"input_shape"`
}

// Flatten merges dimensions StartDim..EndDim (inclusive, per-sample
// indices; negative counts from the end) of its input. Data is unchanged:
// values are always stored flat, row-major.
type Flatten struct {
	StartDim   int   `json:"start_dim"`
	EndDim     int   `json:"end_dim"`
	InputShape []int `json:"input_shape,omitempty"`
}

// SumPool2d sums (C, H, W) inputs over Kernel windows.
type SumPool2d struct {
	Kernel     [2]int `json:"kernel_size"`
	Stride     [2]int `json:"stride"`
	Padding    [2]int `json:"padding"`
	InputShape []int  `json:"input_shape,omitempty"`
}

// AvgPool2d averages (C, H, W) inputs over Kernel windows; padded cells
// count towards the divisor (PyTorch's count_include_pad default).
type AvgPool2d struct {
	Kernel     [2]int `json:"kernel_size"`
	Stride     [2]int `json:"stride"`
	Padding    [2]int `json:"padding"`
	InputShape []int  `json:"input_shape,omitempty"`
}

// Delay outputs its input Delay seconds later, per element; the simulator
// rounds to whole steps.
type Delay struct {
	Delay []float64 `json:"delay"`
	Shape []int     `json:"shape,omitempty"`
}

// Threshold outputs 1 where its input exceeds Threshold, else 0.
type Threshold struct {
	Threshold []float64 `json:"threshold"`
	Shape     []int     `json:"shape,omitempty"`
}

// I is a perfect integrator: dv/dt = R·x.
type I struct {
	R     []float64 `json:"r"`
	Shape []int     `json:"shape,omitempty"`
}

// IF is an integrate-and-fire neuron: dv/dt = R·x, spike when
// v > VThreshold, then reset.
type IF struct {
	R          []float64 `json:"r"`
	VThreshold []float64 `json:"v_threshold"`
	VReset     []float64 `json:"v_reset"`
	Reset      ResetMode `json:"reset,omitempty"`
	Shape      []int     `json:"shape,omitempty"`
}

// LI is a leaky integrator: τ dv/dt = (v_leak − v) + R·x.
type LI struct {
	Tau   []float64 `json:"tau"`
	R     []float64 `json:"r"`
	VLeak []float64 `json:"v_leak"`
	Shape []int     `json:"shape,omitempty"`
}

// LIF is a leaky integrate-and-fire neuron: τ dv/dt = (v_leak − v) + R·x,
// spike when v > VThreshold, then reset.
//
// Refractory is an extension of NIR (absent in NIR files): after a spike the
// membrane is held at v_reset for that many seconds (rounded up to whole
// steps). Nil means no refractory period.
type LIF struct {
	Tau        []float64 `json:"tau"`
	R          []float64 `json:"r"`
	VLeak      []float64 `json:"v_leak"`
	VThreshold []float64 `json:"v_threshold"`
	VReset     []float64 `json:"v_reset"`
	Reset      ResetMode `json:"reset,omitempty"`
	Refractory []float64 `json:"refractory,omitempty"`
	Shape      []int     `json:"shape,omitempty"`
}

// CubaLI is a current-based leaky integrator: a synaptic current
// τ_syn dI/dt = −I + w_in·x feeding τ_mem dv/dt = (v_leak − v) + R·I.
type CubaLI struct {
	TauSyn []float64 `json:"tau_syn"`
	TauMem []float64 `json:"tau_mem"`
	R      []float64 `json:"r"`
	VLeak  []float64 `json:"v_leak"`
	WIn    []float64 `json:"w_in"`
	Shape  []int     `json:"shape,omitempty"`
}

// CubaLIF is a current-based LIF neuron: CubaLI's dynamics with a threshold
// and reset as in LIF, including the Refractory extension.
type CubaLIF struct {
	TauSyn     []float64 `json:"tau_syn"`
	TauMem     []float64 `json:"tau_mem"`
	R          []float64 `json:"r"`
	VLeak      []float64 `json:"v_leak"`
	VThreshold []float64 `json:"v_threshold"`
	VReset     []float64 `json:"v_reset"`
	WIn        []float64 `json:"w_in"`
	Reset      ResetMode `json:"reset,omitempty"`
	Refractory []float64 `json:"refractory,omitempty"`
	Shape      []int     `json:"shape,omitempty"`
}

func (*Input) Kind() Kind     { return KindInput }
func (*Output) Kind() Kind    { return KindOutput }
func (*Affine) Kind() Kind    { return KindAffine }
func (*Linear) Kind() Kind    { return KindLinear }
func (*Scale) Kind() Kind     { return KindScale }
func (*Conv1d) Kind() Kind    { return KindConv1d }
func (*Conv2d) Kind() Kind    { return KindConv2d }
func (*Flatten) Kind() Kind   { return KindFlatten }
func (*SumPool2d) Kind() Kind { return KindSumPool2d }
func (*AvgPool2d) Kind() Kind { return KindAvgPool2d }
func (*Delay) Kind() Kind     { return KindDelay }
func (*Threshold) Kind() Kind { return KindThreshold }
func (*I) Kind() Kind         { return KindI }
func (*IF) Kind() Kind        { return KindIF }
func (*LI) Kind() Kind        { return KindLI }
func (*LIF) Kind() Kind       { return KindLIF }
func (*CubaLI) Kind() Kind    { return KindCubaLI }
func (*CubaLIF) Kind() Kind   { return KindCubaLIF }

// newNode returns a zero node of the kind, for decoding.
func newNode(k Kind) (Node, bool) {
	switch k {
	case KindInput:
		return &Input{}, true
	case KindOutput:
		return &Output{}, true
	case KindAffine:
		return &Affine{}, true
	case KindLinear:
		return &Linear{}, true
	case KindScale:
		return &Scale{}, true
	case KindConv1d:
		return &Conv1d{}, true
	case KindConv2d:
		return &Conv2d{}, true
	case KindFlatten:
		return &Flatten{}, true
	case KindSumPool2d:
		return &SumPool2d{}, true
	case KindAvgPool2d:
		return &AvgPool2d{}, true
	case KindDelay:
		return &Delay{}, true
	case KindThreshold:
		return &Threshold{}, true
	case KindI:
		return &I{}, true
	case KindIF:
		return &IF{}, true
	case KindLI:
		return &LI{}, true
	case KindLIF:
		return &LIF{}, true
	case KindCubaLI:
		return &CubaLI{}, true
	case KindCubaLIF:
		return &CubaLIF{}, true
	}
	return nil, false
}

// IsSpiking reports whether a node kind emits spikes (0 or 1) rather than
// graded values.
func IsSpiking(k Kind) bool {
	switch k {
	case KindIF, KindLIF, KindCubaLIF, KindThreshold:
		return true
	}
	return false
}

// IsNeuron reports whether a node kind holds per-neuron state that the
// simulator integrates (the kinds counted as neuron updates).
func IsNeuron(k Kind) bool {
	switch k {
	case KindI, KindIF, KindLI, KindLIF, KindCubaLI, KindCubaLIF:
		return true
	}
	return false
}

// ---- field checks ----

type param struct {
	name     string
	vals     []float64
	positive bool // must be > 0 (time constants)
	nonNeg   bool // must be >= 0
	optional bool // may be nil
}

// checkElementwise checks the parameter arrays of an element-wise node: each
// finite, of length 1 (broadcast) or n, and the shape consistent with them.
// It returns the node's per-sample shape, or nil if it is to be inferred.
func checkElementwise(shape []int, ps ...param) ([]int, error) {
	n := -1
	if shape != nil {
		m, err := numElements(shape)
		if err != nil {
			return nil, fieldErr("shape", "%v", err)
		}
		if m == 0 {
			return nil, fieldErr("shape", "shape %v has no elements", shape)
		}
		n = m
	}
	longest := 1
	for _, p := range ps {
		if p.vals == nil {
			if p.optional {
				continue
			}
			return nil, fieldErr(p.name, "missing")
		}
		if len(p.vals) == 0 {
			return nil, fieldErr(p.name, "empty array")
		}
		if i, ok := checkFinite64(p.vals); !ok {
			return nil, fieldErr(p.name, "element %d is %v", i, p.vals[i])
		}
		for i, v := range p.vals {
			if p.positive && !(v > 0) {
				return nil, fieldErr(p.name, "element %d is %v, must be > 0", i, v)
			}
			if p.nonNeg && v < 0 {
				return nil, fieldErr(p.name, "element %d is %v, must be >= 0", i, v)
			}
		}
		if len(p.vals) > 1 {
			if longest > 1 && len(p.vals) != longest {
				return nil, fieldErr(p.name, "length %d, other parameters have length %d", len(p.vals), longest)
			}
			longest = len(p.vals)
		}
	}
	if n >= 0 {
		if longest > 1 && longest != n {
			return nil, fieldErr("shape", "shape %v has %d elements but parameters have %d", shape, n, longest)
		}
		return shape, nil
	}
	if longest > 1 {
		return []int{longest}, nil
	}
	return nil, nil
}

func checkReset(m ResetMode) error {
	switch m {
	case ResetToValue, ResetSubtract:
		return nil
	}
	return fieldErr("reset", "unknown reset mode %q (want \"\" or \"subtract\")", string(m))
}

func checkWeight(field string, t *Tensor, rank int) error {
	if t == nil {
		return fieldErr(field, "missing")
	}
	if len(t.Shape) != rank {
		return fieldErr(field, "rank %d, want %d (shape %v)", len(t.Shape), rank, t.Shape)
	}
	n, err := numElements(t.Shape)
	if err != nil {
		return fieldErr(field, "%v", err)
	}
	if n == 0 {
		return fieldErr(field, "shape %v has no elements", t.Shape)
	}
	if len(t.Data) != n {
		return fieldErr(field, "shape %v needs %d values, have %d", t.Shape, n, len(t.Data))
	}
	if i, ok := checkFinite32(t.Data); !ok {
		return fieldErr(field, "element %d is %v", i, t.Data[i])
	}
	return nil
}

func checkVec32(field string, xs []float32, n int, optional bool) error {
	if xs == nil && optional {
		return nil
	}
	if len(xs) != n {
		return fieldErr(field, "length %d, want %d", len(xs), n)
	}
	if i, ok := checkFinite32(xs); !ok {
		return fieldErr(field, "element %d is %v", i, xs[i])
	}
	return nil
}

func checkShape(field string, shape []int, rank int) error {
	if rank > 0 && len(shape) != rank {
		return fieldErr(field, "rank %d, want %d (shape %v)", len(shape), rank, shape)
	}
	n, err := numElements(shape)
	if err != nil {
		return fieldErr(field, "%v", err)
	}
	if n == 0 {
		return fieldErr(field, "shape %v has no elements", shape)
	}
	return nil
}

func (n *Input) check() error { return checkShape("shape", n.Shape, 0) }
func (n *Input) shapes() ([]int, []int, error) {
	return n.Shape, n.Shape, nil
}
func (n *Input) tensors(func(string, **Tensor)) {}

func (n *Output) check() error {
	if n.Shape == nil {
		return nil
	}
	return checkShape("shape", n.Shape, 0)
}
func (n *Output) shapes() ([]int, []int, error)  { return n.Shape, n.Shape, nil }
func (n *Output) tensors(func(string, **Tensor)) {}

func (n *Affine) check() error {
	if err := checkWeight("weight", n.Weight, 2); err != nil {
		return err
	}
	return checkVec32("bias", n.Bias, n.Weight.Shape[0], false)
}
func (n *Affine) shapes() ([]int, []int, error) {
	return []int{n.Weight.Shape[1]}, []int{n.Weight.Shape[0]}, nil
}
func (n *Affine) tensors(f func(string, **Tensor)) { f("weight", &n.Weight) }

func (n *Linear) check() error { return checkWeight("weight", n.Weight, 2) }
func (n *Linear) shapes() ([]int, []int, error) {
	return []int{n.Weight.Shape[1]}, []int{n.Weight.Shape[0]}, nil
}
func (n *Linear) tensors(f func(string, **Tensor)) { f("weight", &n.Weight) }

func (n *Scale) check() error {
	if len(n.Scale) == 0 {
		return fieldErr("scale", "missing")
	}
	if i, ok := checkFinite32(n.Scale); !ok {
		return fieldErr("scale", "element %d is %v", i, n.Scale[i])
	}
	if n.Shape != nil {
		m, err := numElements(n.Shape)
		if err != nil || m == 0 {
			return fieldErr("shape", "bad shape %v", n.Shape)
		}
		if len(n.Scale) != 1 && len(n.Scale) != m {
			return fieldErr("scale", "length %d, shape %v has %d elements", len(n.Scale), n.Shape, m)
		}
	}
	return nil
}
func (n *Scale) shapes() ([]int, []int, error) {
	if n.Shape != nil {
		return n.Shape, n.Shape, nil
	}
	if len(n.Scale) > 1 {
		s := []int{len(n.Scale)}
		return s, s, nil
	}
	return nil, nil, nil
}
func (n *Scale) tensors(func(string, **Tensor)) {}

// convOut is the output length of a convolution or pooling along one axis.
func convOut(in, k, stride, pad, dil int) int {
	return (in+2*pad-dil*(k-1)-1)/stride + 1
}

func (n *Conv1d) check() error {
	if err := checkWeight("weight", n.Weight, 3); err != nil {
		return err
	}
	if err := checkShape("input_shape", n.InputShape, 2); err != nil {
		return err
	}
	if n.Stride < 1 {
		return fieldErr("stride", "%d, must be >= 1", n.Stride)
	}
	if n.Padding < 0 {
		return fieldErr("padding", "%d, must be >= 0", n.Padding)
	}
	if n.Dilation < 1 {
		return fieldErr("dilation", "%d, must be >= 1", n.Dilation)
	}
	if err := checkGroups(n.Groups, n.Weight.Shape[0], n.Weight.Shape[1], n.InputShape[0]); err != nil {
		return err
	}
	if convOut(n.InputShape[1], n.Weight.Shape[2], n.Stride, n.Padding, n.Dilation) < 1 {
		return fieldErr("input_shape", "%v too small for kernel %d", n.InputShape, n.Weight.Shape[2])
	}
	return checkVec32("bias", n.Bias, n.Weight.Shape[0], true)
}
func (n *Conv1d) shapes() ([]int, []int, error) {
	l := convOut(n.InputShape[1], n.Weight.Shape[2], n.Stride, n.Padding, n.Dilation)
	return n.InputShape, []int{n.Weight.Shape[0], l}, nil
}
func (n *Conv1d) tensors(f func(string, **Tensor)) { f("weight", &n.Weight) }

func checkGroups(groups, outC, inPerGroup, inC int) error {
	if groups < 1 {
		return fieldErr("groups", "%d, must be >= 1", groups)
	}
	if outC%groups != 0 {
		return fieldErr("groups", "%d does not divide %d output channels", groups, outC)
	}
	if inPerGroup*groups != inC {
		return fieldErr("weight", "%d input channels per group × %d groups != %d input channels", inPerGroup, groups, inC)
	}
	return nil
}

func (n *Conv2d) check() error {
	if err := checkWeight("weight", n.Weight, 4); err != nil {
		return err
	}
	if err := checkShape("input_shape", n.InputShape, 3); err != nil {
		return err
	}
	for i := 0; i < 2; i++ {
		if n.Stride[i] < 1 {
			return fieldErr("stride", "%v, must be >= 1", n.Stride)
		}
		if n.Padding[i] < 0 {
			return fieldErr("padding", "%v, must be >= 0", n.Padding)
		}
		if n.Dilation[i] < 1 {
			return fieldErr("dilation", "%v, must be >= 1", n.Dilation)
		}
	}
	if err := checkGroups(n.Groups, n.Weight.Shape[0], n.Weight.Shape[1], n.InputShape[0]); err != nil {
		return err
	}
	_, out, _ := n.shapes()
	if out[1] < 1 || out[2] < 1 {
		return fieldErr("input_shape", "%v too small for kernel %v", n.InputShape, n.Weight.Shape[2:])
	}
	return checkVec32("bias", n.Bias, n.Weight.Shape[0], true)
}
func (n *Conv2d) shapes() ([]int, []int, error) {
	h := convOut(n.InputShape[1], n.Weight.Shape[2], n.Stride[0], n.Padding[0], n.Dilation[0])
	w := convOut(n.InputShape[2], n.Weight.Shape[3], n.Stride[1], n.Padding[1], n.Dilation[1])
	return n.InputShape, []int{n.Weight.Shape[0], h, w}, nil
}
func (n *Conv2d) tensors(f func(string, **Tensor)) { f("weight", &n.Weight) }

func (n *Flatten) check() error {
	if n.InputShape != nil {
		if err := checkShape("input_shape", n.InputShape, 0); err != nil {
			return err
		}
		_, _, err := n.flatten(n.InputShape)
		return err
	}
	return nil
}

func (n *Flatten) flatten(in []int) ([]int, []int, error) {
	r := len(in)
	s, e := n.StartDim, n.EndDim
	if s < 0 {
		s += r
	}
	if e < 0 {
		e += r
	}
	if s < 0 || s >= r {
		return nil, nil, fieldErr("start_dim", "%d out of range for input shape %v", n.StartDim, in)
	}
	if e < s || e >= r {
		return nil, nil, fieldErr("end_dim", "%d out of range for input shape %v and start_dim %d", n.EndDim, in, n.StartDim)
	}
	out := append([]int(nil), in[:s]...)
	m := 1
	for _, d := range in[s : e+1] {
		m *= d
	}
	out = append(out, m)
	out = append(out, in[e+1:]...)
	return in, out, nil
}
func (n *Flatten) shapes() ([]int, []int, error) {
	if n.InputShape == nil {
		return nil, nil, nil
	}
	return n.flatten(n.InputShape)
}
func (n *Flatten) tensors(func(string, **Tensor)) {}

func checkPool(kernel, stride, padding [2]int, in []int) error {
	for i := 0; i < 2; i++ {
		if kernel[i] < 1 {
			return fieldErr("kernel_size", "%v, must be >= 1", kernel)
		}
		if stride[i] < 1 {
			return fieldErr("stride", "%v, must be >= 1", stride)
		}
		if padding[i] < 0 || 2*padding[i] > kernel[i] {
			return fieldErr("padding", "%v, must be between 0 and half the kernel %v", padding, kernel)
		}
	}
	if in != nil {
		if err := checkShape("input_shape", in, 3); err != nil {
			return err
		}
		if convOut(in[1], kernel[0], stride[0], padding[0], 1) < 1 || convOut(in[2], kernel[1], stride[1], padding[1], 1) < 1 {
			return fieldErr("input_shape", "%v too small for kernel %v", in, kernel)
		}
	}
	return nil
}

func poolShapes(kernel, stride, padding [2]int, in []int) ([]int, []int, error) {
	if in == nil {
		return nil, nil, nil
	}
	if err := checkPool(kernel, stride, padding, in); err != nil {
		return nil, nil, err
	}
	h := convOut(in[1], kernel[0], stride[0], padding[0], 1)
	w := convOut(in[2], kernel[1], stride[1], padding[1], 1)
	return in, []int{in[0], h, w}, nil
}

func (n *SumPool2d) check() error { return checkPool(n.Kernel, n.Stride, n.Padding, n.InputShape) }
func (n *SumPool2d) shapes() ([]int, []int, error) {
	return poolShapes(n.Kernel, n.Stride, n.Padding, n.InputShape)
}
func (n *SumPool2d) tensors(func(string, **Tensor)) {}

func (n *AvgPool2d) check() error { return checkPool(n.Kernel, n.Stride, n.Padding, n.InputShape) }
func (n *AvgPool2d) shapes() ([]int, []int, error) {
	return poolShapes(n.Kernel, n.Stride, n.Padding, n.InputShape)
}
func (n *AvgPool2d) tensors(func(string, **Tensor)) {}

// elementwise nodes: same shape in and out.
func ewShapes(shape []int, ps ...param) ([]int, []int, error) {
	s, err := checkElementwise(shape, ps...)
	return s, s, err
}

func (n *Delay) params() []param {
	return []param{{name: "delay", vals: n.Delay, nonNeg: true}}
}
func (n *Delay) check() error                   { _, err := checkElementwise(n.Shape, n.params()...); return err }
func (n *Delay) shapes() ([]int, []int, error)  { return ewShapes(n.Shape, n.params()...) }
func (n *Delay) tensors(func(string, **Tensor)) {}

func (n *Threshold) params() []param {
	return []param{{name: "threshold", vals: n.Threshold}}
}
func (n *Threshold) check() error                   { _, err := checkElementwise(n.Shape, n.params()...); return err }
func (n *Threshold) shapes() ([]int, []int, error)  { return ewShapes(n.Shape, n.params()...) }
func (n *Threshold) tensors(func(string, **Tensor)) {}

func (n *I) params() []param                { return []param{{name: "r", vals: n.R}} }
func (n *I) check() error                   { _, err := checkElementwise(n.Shape, n.params()...); return err }
func (n *I) shapes() ([]int, []int, error)  { return ewShapes(n.Shape, n.params()...) }
func (n *I) tensors(func(string, **Tensor)) {}

func (n *IF) params() []param {
	return []param{{name: "r", vals: n.R}, {name: "v_threshold", vals: n.VThreshold}, {name: "v_reset", vals: n.VReset}}
}
func (n *IF) check() error {
	if err := checkReset(n.Reset); err != nil {
		return err
	}
	_, err := checkElementwise(n.Shape, n.params()...)
	return err
}
func (n *IF) shapes() ([]int, []int, error)  { return ewShapes(n.Shape, n.params()...) }
func (n *IF) tensors(func(string, **Tensor)) {}

func (n *LI) params() []param {
	return []param{{name: "tau", vals: n.Tau, positive: true}, {name: "r", vals: n.R}, {name: "v_leak", vals: n.VLeak}}
}
func (n *LI) check() error                   { _, err := checkElementwise(n.Shape, n.params()...); return err }
func (n *LI) shapes() ([]int, []int, error)  { return ewShapes(n.Shape, n.params()...) }
func (n *LI) tensors(func(string, **Tensor)) {}

func (n *LIF) params() []param {
	return []param{
		{name: "tau", vals: n.Tau, positive: true}, {name: "r", vals: n.R}, {name: "v_leak", vals: n.VLeak},
		{name: "v_threshold", vals: n.VThreshold}, {name: "v_reset", vals: n.VReset},
		{name: "refractory", vals: n.Refractory, nonNeg: true, optional: true},
	}
}
func (n *LIF) check() error {
	if err := checkReset(n.Reset); err != nil {
		return err
	}
	_, err := checkElementwise(n.Shape, n.params()...)
	return err
}
func (n *LIF) shapes() ([]int, []int, error)  { return ewShapes(n.Shape, n.params()...) }
func (n *LIF) tensors(func(string, **Tensor)) {}

func (n *CubaLI) params() []param {
	return []param{
		{name: "tau_syn", vals: n.TauSyn, positive: true}, {name: "tau_mem", vals: n.TauMem, positive: true},
		{name: "r", vals: n.R}, {name: "v_leak", vals: n.VLeak}, {name: "w_in", vals: n.WIn},
	}
}
func (n *CubaLI) check() error                   { _, err := checkElementwise(n.Shape, n.params()...); return err }
func (n *CubaLI) shapes() ([]int, []int, error)  { return ewShapes(n.Shape, n.params()...) }
func (n *CubaLI) tensors(func(string, **Tensor)) {}

func (n *CubaLIF) params() []param {
	return []param{
		{name: "tau_syn", vals: n.TauSyn, positive: true}, {name: "tau_mem", vals: n.TauMem, positive: true},
		{name: "r", vals: n.R}, {name: "v_leak", vals: n.VLeak},
		{name: "v_threshold", vals: n.VThreshold}, {name: "v_reset", vals: n.VReset}, {name: "w_in", vals: n.WIn},
		{name: "refractory", vals: n.Refractory, nonNeg: true, optional: true},
	}
}
func (n *CubaLIF) check() error {
	if err := checkReset(n.Reset); err != nil {
		return err
	}
	_, err := checkElementwise(n.Shape, n.params()...)
	return err
}
func (n *CubaLIF) shapes() ([]int, []int, error)  { return ewShapes(n.Shape, n.params()...) }
func (n *CubaLIF) tensors(func(string, **Tensor)) {}

// at returns element i of a broadcastable parameter array.
func at(xs []float64, i int) float64 {
	if len(xs) == 1 {
		return xs[0]
	}
	return xs[i]
}

// atOr is at with a default for an optional (nil) array.
func atOr(xs []float64, i int, def float64) float64 {
	if xs == nil {
		return def
	}
	return at(xs, i)
}
