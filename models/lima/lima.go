package lima

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/snn"
)

// Name is the architecture's registered name, and the one LayerSpec.Kind
// that ImportOptions.Layers may hold for a lima state_dict.
const Name = "neuro.lima"

// ReportKind is the Kind of the compile.ImportReport of a lima import.
const ReportKind = "neuro lima state_dict"

func init() { pytorch.RegisterArchitecture(Name, Architecture{}) }

// Architecture is lima as a pytorch.Architecture. The zero value is ready
// to use; the package's init registers one.
type Architecture struct{}

var blockKeys = []string{"mix_in.weight", "mix_p", "mix_out.weight", "fc1.weight", "fc1.bias", "fc2.weight"}

// lifKey is the optional block tensor that makes the hidden neurons LIF:
// σ(spk_p) is each one's decay per step.
const lifKey = "spk_p"

// adaptKeys are the optional tensors, both or neither, that feed each LIF
// hidden neuron's spikes back to itself through a leaky integrator of its
// own: σ(adapt_p) is the integrator's decay per step, adapt_w the weight
// of its value in the neuron's input one step later.
var adaptKeys = []string{"adapt_p", "adapt_w"}

// shifts are the optional shift channels of a block: the residual current
// of the token steps back, projected, delayed and projected back. Each
// has two tensors, both or neither, named name_in.weight and
// name_out.weight.
var shifts = []struct {
	name  string
	steps int
}{{"shift", 1}, {"shift2", 2}}

// shiftKeys are the tensors of every entry of shifts, in order.
var shiftKeys = func() []string {
	var keys []string
	for _, s := range shifts {
		keys = append(keys, s.name+"_in.weight", s.name+"_out.weight")
	}
	return keys
}()

// recKeys are the optional rec channels of a block: its hidden neurons'
// spikes, projected to r channels and back into the residual current one
// step late (a cycle), both tensors or neither.
var recKeys = []string{"rec_in.weight", "rec_out.weight"}

// ternKey is the optional block tensor, a scalar 1, that makes each hidden
// unit a pair of mirrored neurons: one on fc1's current, one on its
// negation, whose spikes enter fc2 with opposite signs.
const ternKey = "tern"

// optional reports whether local is one of a block's optional tensors.
func optional(local string) bool {
	return local == lifKey || local == ternKey || slices.Contains(adaptKeys, local) || slices.Contains(shiftKeys, local) || slices.Contains(recKeys, local)
}

// Match reports whether sd has lima's keys.
func (Architecture) Match(sd *pytorch.StateDict) bool {
	return sd.Has("embed.weight") && sd.Has("head_bias") && sd.Has("blocks.0.mix_p")
}

// Build builds the graph of a lima state_dict: per block i
//
//	u → b{i}.mix_in (Linear) → b{i}.mix (LI) → b{i}.mix_out (Linear) → b{i}.sum
//	u → b{i}.sum (Scale 1, a junction)
//	b{i}.sum → b{i}.fc1 (Affine) → b{i}.spk (Threshold 0) → b{i}.fc2 (Linear) → b{i}.out
//	b{i}.sum → b{i}.out (Scale 1)
//
// where a block with spk_p has LIF neurons for b{i}.spk instead (threshold
// 1, subtractive reset, rest 0, R 1, time constants from spk_p as mix's
// are from mix_p), a block with shift_in and shift_out adds
//
//	u → b{i}.shift_in (Linear) → b{i}.shift (Delay, one step) → b{i}.shift_out (Linear) → b{i}.sum
//
// and one with shift2_in and shift2_out, two tokens back,
//
//	u → b{i}.shift2_in (Linear) → b{i}.shift2 (Delay, two steps) → b{i}.shift2_out (Linear) → b{i}.sum,
//
// and one with rec_in and rec_out adds its spikes of the previous token to
// the residual current, which in PyTorch is one path into b{i}.sum. Here it
// is two, so that no linear node shares a cycle with the residual (which
// would keep a chip from folding it into synapses):
//
//	b{i}.spk → b{i}.rec_in (Linear) → b{i}.rec (Delay, one step) → b{i}.rec_out (Linear) → b{i}.out
//	b{i}.spk → b{i}.rec_loop (Linear: fc1 · rec_out · rec_in) → b{i}.spk
//
// the first for the blocks after it, the second, a cycle whose edge back
// into b{i}.spk the simulator delays by a step, for its own neurons; and
// one with tern (the scalar 1) has a mirror of its hidden neurons, the
// same kind and time constants, on the negated current:
//
//	b{i}.fc1 → b{i}.neg (Scale −1) → b{i}.spk_neg → b{i}.neg_out (Scale −1) → b{i}.fc2;
//
// with u the embedding's output for block 0 and the previous block's out
// after it; then head (Affine: the embedding's weight, times head_scale
// where the state_dict has one, and head_bias) and logits (Output). The
// token enters as a one-hot vector on the Input node "token".
func (Architecture) Build(sd *pytorch.StateDict, opts *compile.ImportOptions) (*snn.Graph, *compile.ImportReport, error) {
	o := opts.WithDefaults()
	if len(o.Layers) > 1 || len(o.Layers) == 1 && o.Layers[0].Kind != Name {
		return nil, nil, &compile.UnsupportedError{Reason: "a neuro lima state_dict describes itself; ImportOptions.Layers must be empty or the single entry {kind: \"" + Name + "\"}"}
	}
	blocks := map[int]bool{}
	for _, key := range sd.Keys() {
		rest, ok := strings.CutPrefix(key, "blocks.")
		if !ok {
			if key != "embed.weight" && key != "head_bias" && key != "head_scale" {
				return nil, nil, &compile.UnsupportedError{Node: key, Reason: "not a tensor of the neuro lima architecture (embed.weight, head_bias, head_scale, blocks.N.*)"}
			}
			continue
		}
		pre, local, _ := strings.Cut(rest, ".")
		i, err := strconv.Atoi(pre)
		if err != nil || i < 0 || i >= sd.Len() || strconv.Itoa(i) != pre || !slices.Contains(blockKeys, local) && !optional(local) {
			return nil, nil, &compile.UnsupportedError{Node: key, Reason: "not a tensor of a lima block (blocks.N." + strings.Join(slices.Concat(blockKeys, []string{lifKey, ternKey}, adaptKeys, shiftKeys, recKeys), ", ") + ")"}
		}
		blocks[i] = true
	}
	embed, err := sd.Tensor("embed.weight", 2)
	if err != nil {
		return nil, nil, err
	}
	vocab, d := embed.Shape[0], embed.Shape[1]
	headBias, err := sd.Float32s("head_bias")
	if err != nil {
		return nil, nil, err
	}
	if len(headBias) != vocab {
		return nil, nil, &compile.UnsupportedError{Node: "head_bias", Reason: fmt.Sprintf("%d values for a vocabulary of %d", len(headBias), vocab)}
	}
	head := embed
	if sd.Has("head_scale") {
		if head, err = scaledHead(sd, embed); err != nil {
			return nil, nil, err
		}
	}
	g := snn.NewGraph().
		Add("token", &snn.Input{Shape: []int{vocab}}).
		Add("embed", &snn.Linear{Weight: transpose(embed)})
	g.Connect("token", "embed")
	u := "embed"
	for i := range len(blocks) {
		if !blocks[i] {
			return nil, nil, &compile.UnsupportedError{Node: fmt.Sprintf("blocks.%d", i), Reason: fmt.Sprintf("missing: the state_dict has %d blocks but not this one", len(blocks))}
		}
		if err := addBlock(g, sd, i, u, d, o.Dt); err != nil {
			return nil, nil, err
		}
		u = fmt.Sprintf("b%d.out", i)
	}
	g.Add("head", &snn.Affine{Weight: head, Bias: headBias}).
		Add("logits", &snn.Output{}).
		Connect(u, "head", "logits")
	if err := g.Validate(); err != nil {
		return nil, nil, fmt.Errorf("lima: %w", err)
	}
	rep := &compile.ImportReport{Kind: ReportKind, Warnings: []string{
		fmt.Sprintf("inferred: neuro lima language model from its keys: vocabulary %d, width %d, %d blocks; one timestep per token, dt %g s", vocab, d, len(blocks), o.Dt),
	}}
	return g, rep, nil
}

// scaledHead returns the readout's weight, head_scale × embed, rounded to
// float32 as PyTorch's product is.
func scaledHead(sd *pytorch.StateDict, embed *snn.Tensor) (*snn.Tensor, error) {
	s, err := sd.Float32s("head_scale")
	if err != nil {
		return nil, err
	}
	if len(s) != 1 {
		return nil, &compile.UnsupportedError{Node: "head_scale", Reason: fmt.Sprintf("%d values, want one scalar", len(s))}
	}
	out := snn.NewTensor(embed.Shape...)
	for i, w := range embed.Data {
		out.Data[i] = s[0] * w
	}
	return out, nil
}

// addBlock adds block i's nodes, named b{i}.*, fed by node u.
func addBlock(g *snn.Graph, sd *pytorch.StateDict, i int, u string, d int, dt float64) error {
	key := func(local string) string { return fmt.Sprintf("blocks.%d.%s", i, local) }
	for _, k := range blockKeys {
		if !sd.Has(key(k)) {
			return &compile.UnsupportedError{Node: fmt.Sprintf("blocks.%d", i), Reason: fmt.Sprintf("missing tensor %q", key(k))}
		}
	}
	var w [4]*snn.Tensor
	for j, k := range []string{"mix_in.weight", "mix_out.weight", "fc1.weight", "fc2.weight"} {
		var err error
		if w[j], err = sd.Tensor(key(k), 2); err != nil {
			return err
		}
	}
	mixIn, mixOut, fc1, fc2 := w[0], w[1], w[2], w[3]
	k, h := mixIn.Shape[0], fc1.Shape[0]
	for _, c := range []struct {
		key  string
		t    *snn.Tensor
		want [2]int
	}{
		{"mix_in.weight", mixIn, [2]int{k, d}},
		{"mix_out.weight", mixOut, [2]int{d, k}},
		{"fc1.weight", fc1, [2]int{h, d}},
		{"fc2.weight", fc2, [2]int{d, h}},
	} {
		if c.t.Shape[0] != c.want[0] || c.t.Shape[1] != c.want[1] {
			return &compile.UnsupportedError{Node: key(c.key), Reason: fmt.Sprintf("shape %v, want %v (width %d, %d mixing channels, %d hidden)", c.t.Shape, c.want, d, k, h)}
		}
	}
	bias, err := sd.Float32s(key("fc1.bias"))
	if err != nil {
		return err
	}
	if len(bias) != h {
		return &compile.UnsupportedError{Node: key("fc1.bias"), Reason: fmt.Sprintf("%d values for %d hidden neurons", len(bias), h)}
	}
	p32, err := sd.Float32s(key("mix_p"))
	if err != nil {
		return err
	}
	if len(p32) != k {
		return &compile.UnsupportedError{Node: key("mix_p"), Reason: fmt.Sprintf("%d values for %d mixing channels", len(p32), k)}
	}
	tau, err := timeConstants(key("mix_p"), p32, dt)
	if err != nil {
		return err
	}
	hidden := func() snn.Node { return &snn.Threshold{Threshold: []float64{0}, Shape: []int{h}} }
	if sd.Has(key(lifKey)) {
		q32, err := sd.Float32s(key(lifKey))
		if err != nil {
			return err
		}
		if len(q32) != h {
			return &compile.UnsupportedError{Node: key(lifKey), Reason: fmt.Sprintf("%d values for %d hidden neurons", len(q32), h)}
		}
		lifTau, err := timeConstants(key(lifKey), q32, dt)
		if err != nil {
			return err
		}
		hidden = func() snn.Node {
			return &snn.LIF{Tau: slices.Clone(lifTau), R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}, Reset: snn.ResetSubtract, Shape: []int{h}}
		}
	}
	p := fmt.Sprintf("b%d.", i)
	for _, s := range shifts {
		in, out, err := channels(sd, key, s.name, d, fmt.Sprintf("width %d", d), d)
		if err != nil {
			return err
		}
		if in != nil {
			g.Add(p+s.name+"_in", &snn.Linear{Weight: in}).
				Add(p+s.name, &snn.Delay{Delay: []float64{float64(s.steps) * dt}, Shape: []int{in.Shape[0]}}).
				Add(p+s.name+"_out", &snn.Linear{Weight: out}).
				Connect(u, p+s.name+"_in", p+s.name, p+s.name+"_out", p+"sum")
		}
	}
	if err := addAdapt(g, sd, key, p, h, dt); err != nil {
		return err
	}
	if err := addMirror(g, sd, key, p, h, hidden); err != nil {
		return err
	}
	recIn, recOut, err := channels(sd, key, "rec", h, fmt.Sprintf("%d hidden neurons", h), d)
	if err != nil {
		return err
	}
	if recIn != nil {
		g.Add(p+"rec_in", &snn.Linear{Weight: recIn}).
			Add(p+"rec", &snn.Delay{Delay: []float64{dt}, Shape: []int{recIn.Shape[0]}}).
			Add(p+"rec_out", &snn.Linear{Weight: recOut}).
			Add(p+"rec_loop", &snn.Linear{Weight: product(fc1, recOut, recIn)}).
			Connect(p+"spk", p+"rec_in", p+"rec", p+"rec_out", p+"out").
			Connect(p+"spk", p+"rec_loop", p+"spk")
	}
	g.Add(p+"mix_in", &snn.Linear{Weight: mixIn}).
		Add(p+"mix", &snn.LI{Tau: tau, R: []float64{1}, VLeak: []float64{0}}).
		Add(p+"mix_out", &snn.Linear{Weight: mixOut}).
		Add(p+"sum", &snn.Scale{Scale: []float32{1}, Shape: []int{d}}).
		Add(p+"fc1", &snn.Affine{Weight: fc1, Bias: bias}).
		Add(p+"spk", hidden()).
		Add(p+"fc2", &snn.Linear{Weight: fc2}).
		Add(p+"out", &snn.Scale{Scale: []float32{1}, Shape: []int{d}}).
		Connect(u, p+"mix_in", p+"mix", p+"mix_out", p+"sum").
		Connect(u, p+"sum", p+"fc1", p+"spk", p+"fc2", p+"out").
		Connect(p+"sum", p+"out")
	return nil
}

// addAdapt adds a block's spike-driven integrators, p+"adapt*", if the
// state_dict has adapt_p and adapt_w: a cycle
//
//	spk → adapt_in (Scale 1) → adapt (LI, h) → adapt_out (Scale adapt_w) → spk
//
// whose edge back into spk the simulator delays by a step.
func addAdapt(g *snn.Graph, sd *pytorch.StateDict, key func(string) string, p string, h int, dt float64) error {
	if ok, err := pair(sd, key("adapt_p"), key("adapt_w"), "a block's adaptation needs both adapt_p and adapt_w"); !ok {
		return err
	}
	if !sd.Has(key(lifKey)) {
		return &compile.UnsupportedError{Node: key("adapt_p"), Reason: "adaptation needs LIF hidden neurons (" + key(lifKey) + ")"}
	}
	var v [2][]float32
	for j, k := range adaptKeys {
		var err error
		if v[j], err = sd.Float32s(key(k)); err != nil {
			return err
		}
		if len(v[j]) != h {
			return &compile.UnsupportedError{Node: key(k), Reason: fmt.Sprintf("%d values for %d hidden neurons", len(v[j]), h)}
		}
	}
	tau, err := timeConstants(key("adapt_p"), v[0], dt)
	if err != nil {
		return err
	}
	g.Add(p+"adapt_in", &snn.Scale{Scale: []float32{1}, Shape: []int{h}}).
		Add(p+"adapt", &snn.LI{Tau: tau, R: []float64{1}, VLeak: []float64{0}}).
		Add(p+"adapt_out", &snn.Scale{Scale: v[1], Shape: []int{h}}).
		Connect(p+"spk", p+"adapt_in", p+"adapt", p+"adapt_out", p+"spk")
	return nil
}

// addMirror adds a block's mirrored hidden neurons, p+"neg", p+"spk_neg"
// and p+"neg_out", if the state_dict has tern: hidden() on the negation of
// fc1's current, their spikes subtracted in fc2's input. A mirror keeps
// its own membranes, so it does not combine with the cycles of adaptation
// or rec channels, which feed the neurons' spikes back into themselves.
func addMirror(g *snn.Graph, sd *pytorch.StateDict, key func(string) string, p string, h int, hidden func() snn.Node) error {
	if !sd.Has(key(ternKey)) {
		return nil
	}
	v, err := sd.Float32s(key(ternKey))
	if err != nil {
		return err
	}
	if len(v) != 1 || v[0] != 1 {
		return &compile.UnsupportedError{Node: key(ternKey), Reason: fmt.Sprintf("%v, want the scalar 1 (a block of mirrored hidden neurons)", v)}
	}
	for _, k := range []string{adaptKeys[0], recKeys[0]} {
		if sd.Has(key(k)) {
			return &compile.UnsupportedError{Node: key(ternKey), Reason: "mirrored hidden neurons do not combine with " + key(k)}
		}
	}
	g.Add(p+"neg", &snn.Scale{Scale: []float32{-1}, Shape: []int{h}}).
		Add(p+"spk_neg", hidden()).
		Add(p+"neg_out", &snn.Scale{Scale: []float32{-1}, Shape: []int{h}}).
		Connect(p+"fc1", p+"neg", p+"spk_neg", p+"neg_out", p+"fc2")
	return nil
}

// channels returns a block's channels called name, the tensors
// name_in.weight (j, src) and name_out.weight (d, j), or nil and nil if
// the state_dict has neither. They read a node of width src, which
// srcDesc describes in errors.
func channels(sd *pytorch.StateDict, key func(string) string, name string, src int, srcDesc string, d int) (in, out *snn.Tensor, err error) {
	inKey, outKey := key(name+"_in.weight"), key(name+"_out.weight")
	if ok, err := pair(sd, inKey, outKey, fmt.Sprintf("a block's %s channels need both %s_in.weight and %s_out.weight", name, name, name)); !ok {
		return nil, nil, err
	}
	if in, err = sd.Tensor(inKey, 2); err != nil {
		return nil, nil, err
	}
	if out, err = sd.Tensor(outKey, 2); err != nil {
		return nil, nil, err
	}
	j := in.Shape[0]
	if in.Shape[1] != src {
		return nil, nil, &compile.UnsupportedError{Node: inKey, Reason: fmt.Sprintf("shape %v, want [%d %d] (%s)", in.Shape, j, src, srcDesc)}
	}
	if out.Shape[0] != d || out.Shape[1] != j {
		return nil, nil, &compile.UnsupportedError{Node: outKey, Reason: fmt.Sprintf("shape %v, want [%d %d] (width %d, %d %s channels)", out.Shape, d, j, d, j, name)}
	}
	return in, out, nil
}

// pair reports whether the state_dict has both tensors a and b, and
// refuses one without the other, naming the missing one and why both
// are needed.
func pair(sd *pytorch.StateDict, a, b, why string) (bool, error) {
	hasA, hasB := sd.Has(a), sd.Has(b)
	switch {
	case hasA && hasB:
		return true, nil
	case hasA:
		return false, &compile.UnsupportedError{Node: b, Reason: "missing: " + why}
	case hasB:
		return false, &compile.UnsupportedError{Node: a, Reason: "missing: " + why}
	}
	return false, nil
}

// product returns the matrix product a · b · c, computed in float64 and
// rounded to float32 once.
func product(a, b, c *snn.Tensor) *snn.Tensor {
	r, n, m, k := a.Shape[0], a.Shape[1], b.Shape[1], c.Shape[1]
	ab := make([]float64, r*m)
	for i := range r {
		for j := range n {
			x := float64(a.Data[i*n+j])
			for l := range m {
				ab[i*m+l] += x * float64(b.Data[j*m+l])
			}
		}
	}
	abc := make([]float64, k)
	out := snn.NewTensor(r, k)
	for i := range r {
		clear(abc)
		for l := range m {
			x := ab[i*m+l]
			for j := range k {
				abc[j] += x * float64(c.Data[l*k+j])
			}
		}
		for j, x := range abc {
			out.Data[i*k+j] = float32(x)
		}
	}
	return out
}

// timeConstants turns the decay parameters p of the tensor named key into
// time constants: σ(p) = a = exp(−dt/τ), so τ = −dt / ln σ(p) = dt / softplus(−p).
func timeConstants(key string, p []float32, dt float64) ([]float64, error) {
	tau := make([]float64, len(p))
	for j, x := range p {
		sp := softplus(-float64(x))
		if !(sp > 0) {
			return nil, &compile.UnsupportedError{Node: key, Reason: fmt.Sprintf("element %d is %v: the decay σ(p) rounds to 1, an infinite time constant", j, x)}
		}
		tau[j] = dt / sp
	}
	return tau, nil
}

// softplus is ln(1 + eˣ) without overflow: −ln σ(p) = softplus(−p).
func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

// transpose returns the (c, r) transpose of an (r, c) tensor.
func transpose(t *snn.Tensor) *snn.Tensor {
	r, c := t.Shape[0], t.Shape[1]
	out := snn.NewTensor(c, r)
	for i := range r {
		for j := range c {
			out.Data[j*r+i] = t.Data[i*c+j]
		}
	}
	return out
}
