package pytorch

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
)

// lima is the architecture of the neuro-1 language models
// (models/train/arch.py): a tied token embedding, blocks of leaky-integrator
// token mixing and a spiking MLP that both add to a residual current, and a
// tied readout. Its state_dict names every tensor it needs, so it imports
// with no description:
//
//	embed.weight             (V, d)  the embedding; the readout's weight too
//	head_bias                (V)
//	head_scale               ()      optional: the readout's weight is head_scale × embed.weight
//	blocks.{i}.mix_in.weight (k, d)
//	blocks.{i}.mix_p         (k)     σ(mix_p) is the LI's decay per step
//	blocks.{i}.mix_out.weight (d, k)
//	blocks.{i}.fc1.weight    (h, d), blocks.{i}.fc1.bias (h)
//	blocks.{i}.fc2.weight    (d, h)
//
// One timestep per token; the graph is feed-forward, so the token's logits
// leave in the step it enters.
const limaKind = "neuro.lima"

var limaBlockKeys = []string{"mix_in.weight", "mix_p", "mix_out.weight", "fc1.weight", "fc1.bias", "fc2.weight"}

// isLima reports whether a state_dict has lima's keys.
func isLima(sd []NamedTensor) bool {
	var embed, head, block bool
	for _, nt := range sd {
		switch {
		case nt.Name == "embed.weight":
			embed = true
		case nt.Name == "head_bias":
			head = true
		case nt.Name == "blocks.0.mix_p":
			block = true
		}
	}
	return embed && head && block
}

// limaGraph builds the graph of a lima state_dict: per block i
//
//	u → b{i}.mix_in (Linear) → b{i}.mix (LI) → b{i}.mix_out (Linear) → b{i}.sum
//	u → b{i}.sum (Scale 1, a junction)
//	b{i}.sum → b{i}.fc1 (Affine) → b{i}.spk (Threshold 0) → b{i}.fc2 (Linear) → b{i}.out
//	b{i}.sum → b{i}.out (Scale 1)
//
// with u the embedding's output for block 0 and the previous block's out
// after it; then head (Affine: the embedding's weight, times head_scale
// where the state_dict has one, and head_bias) and
// logits (Output).
func (im *importer) limaGraph(sd []NamedTensor) (*snn.Graph, error) {
	if len(im.o.Layers) > 1 || len(im.o.Layers) == 1 && im.o.Layers[0].Kind != limaKind {
		return nil, &compile.UnsupportedError{Reason: "a neuro lima state_dict describes itself; ImportOptions.Layers must be empty or the single entry {kind: \"neuro.lima\"}"}
	}
	top := &layer{}
	blocks := map[int]*layer{}
	for _, nt := range sd {
		rest, ok := strings.CutPrefix(nt.Name, "blocks.")
		if !ok {
			if nt.Name != "embed.weight" && nt.Name != "head_bias" && nt.Name != "head_scale" {
				return nil, &compile.UnsupportedError{Node: nt.Name, Reason: "not a tensor of the neuro lima architecture (embed.weight, head_bias, head_scale, blocks.N.*)"}
			}
			top.add(nt.Name, nt.Name, nt.Tensor)
			continue
		}
		pre, local, _ := strings.Cut(rest, ".")
		i, err := strconv.Atoi(pre)
		if err != nil || i < 0 || i >= len(sd) || !slices.Contains(limaBlockKeys, local) {
			return nil, &compile.UnsupportedError{Node: nt.Name, Reason: "not a tensor of a lima block (blocks.N." + strings.Join(limaBlockKeys, ", ") + ")"}
		}
		b := blocks[i]
		if b == nil {
			b = &layer{name: "blocks." + pre}
			blocks[i] = b
		}
		b.add(local, nt.Name, nt.Tensor)
	}
	embed, err := im.weight(top, "embed.weight", 2)
	if err != nil {
		return nil, err
	}
	vocab, d := embed.Shape[0], embed.Shape[1]
	headBias, err := im.floats(top, "head_bias")
	if err != nil {
		return nil, err
	}
	if len(headBias) != vocab {
		return nil, &compile.UnsupportedError{Node: "head_bias", Reason: fmt.Sprintf("%d values for a vocabulary of %d", len(headBias), vocab)}
	}
	head := embed
	if top.has("head_scale") {
		if head, err = im.limaHead(top, embed); err != nil {
			return nil, err
		}
	}
	g := snn.NewGraph().
		Add("token", &snn.Input{Shape: []int{vocab}}).
		Add("embed", &snn.Linear{Weight: transpose(embed)})
	g.Connect("token", "embed")
	u := "embed"
	for i := range len(blocks) {
		b := blocks[i]
		if b == nil {
			return nil, &compile.UnsupportedError{Node: fmt.Sprintf("blocks.%d", i), Reason: fmt.Sprintf("missing: the state_dict has %d blocks but not this one", len(blocks))}
		}
		if err := im.limaBlock(g, b, fmt.Sprintf("b%d.", i), u, d); err != nil {
			return nil, err
		}
		u = fmt.Sprintf("b%d.out", i)
	}
	g.Add("head", &snn.Affine{Weight: head, Bias: headBias}).
		Add("logits", &snn.Output{}).
		Connect(u, "head", "logits")
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("pytorch: import: lima: %w", err)
	}
	im.rep.Kind = "neuro lima state_dict"
	im.warn("inferred: neuro lima language model from its keys: vocabulary %d, width %d, %d blocks; one timestep per token, dt %g s", vocab, d, len(blocks), im.o.Dt)
	return g, nil
}

// limaHead returns the readout's weight, head_scale × embed, rounded to
// float32 as PyTorch's product is.
func (im *importer) limaHead(top *layer, embed *snn.Tensor) (*snn.Tensor, error) {
	s, err := im.floats(top, "head_scale")
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

// limaBlock adds block b's nodes, named with prefix p, fed by node u.
func (im *importer) limaBlock(g *snn.Graph, b *layer, p, u string, d int) error {
	for _, k := range limaBlockKeys {
		if !b.has(k) {
			return b.unsupported("missing tensor %q", b.key(k))
		}
	}
	mixIn, err := im.weight(b, "mix_in.weight", 2)
	if err != nil {
		return err
	}
	mixOut, err := im.weight(b, "mix_out.weight", 2)
	if err != nil {
		return err
	}
	fc1, err := im.weight(b, "fc1.weight", 2)
	if err != nil {
		return err
	}
	fc2, err := im.weight(b, "fc2.weight", 2)
	if err != nil {
		return err
	}
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
			return &compile.UnsupportedError{Node: b.key(c.key), Reason: fmt.Sprintf("shape %v, want %v (width %d, %d mixing channels, %d hidden)", c.t.Shape, c.want, d, k, h)}
		}
	}
	bias, err := im.floats(b, "fc1.bias")
	if err != nil {
		return err
	}
	if len(bias) != h {
		return &compile.UnsupportedError{Node: b.key("fc1.bias"), Reason: fmt.Sprintf("%d values for %d hidden neurons", len(bias), h)}
	}
	p32, err := im.floats(b, "mix_p")
	if err != nil {
		return err
	}
	if len(p32) != k {
		return &compile.UnsupportedError{Node: b.key("mix_p"), Reason: fmt.Sprintf("%d values for %d mixing channels", len(p32), k)}
	}
	// σ(p) = a = exp(−dt/τ): τ = −dt / ln σ(p) = dt / softplus(−p).
	tau := make([]float64, k)
	for i, x := range p32 {
		sp := softplus(-float64(x))
		if !(sp > 0) {
			return &compile.UnsupportedError{Node: b.key("mix_p"), Reason: fmt.Sprintf("element %d is %v: the decay σ(p) rounds to 1, an infinite time constant", i, x)}
		}
		tau[i] = im.o.Dt / sp
	}
	g.Add(p+"mix_in", &snn.Linear{Weight: mixIn}).
		Add(p+"mix", &snn.LI{Tau: tau, R: []float64{1}, VLeak: []float64{0}}).
		Add(p+"mix_out", &snn.Linear{Weight: mixOut}).
		Add(p+"sum", &snn.Scale{Scale: []float32{1}, Shape: []int{d}}).
		Add(p+"fc1", &snn.Affine{Weight: fc1, Bias: bias}).
		Add(p+"spk", &snn.Threshold{Threshold: []float64{0}, Shape: []int{h}}).
		Add(p+"fc2", &snn.Linear{Weight: fc2}).
		Add(p+"out", &snn.Scale{Scale: []float32{1}, Shape: []int{d}}).
		Connect(u, p+"mix_in", p+"mix", p+"mix_out", p+"sum").
		Connect(u, p+"sum", p+"fc1", p+"spk", p+"fc2", p+"out").
		Connect(p+"sum", p+"out")
	return nil
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
