package pytorch

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/compile/internal/lmtest"
	"github.com/neuro-go/neuro/snn"
)

// lmLayers is the options.layers a user sends with snntorch_lm.pt.
var lmLayers = lmtest.Layers

// TestSnnTorchLanguageModel imports the snnTorch language model's
// state_dict as a user describes it, compiles it as a causal language
// model (one step per token), checks that the graph is one Input of V
// one-hot tokens and one Output of V logits, and runs it on snnTorch's
// prompt one token a step: the logits of every step must be snnTorch's
// within 1e-4, and feeding back the argmax must continue the prompt with
// the tokens snnTorch's own greedy decoding chose.
func TestSnnTorchLanguageModel(t *testing.T) {
	ref := lmtest.ReadRef(t, filepath.Join("testdata", "snn", "snntorch_lm.json"))
	g, rep := importFile(t, filepath.Join("testdata", "snn", "snntorch_lm.pt"), &compile.ImportOptions{Layers: lmLayers})
	// Only the embedding needs its kind: the others' tensors say theirs.
	brief := make([]compile.LayerSpec, len(lmLayers))
	for i, l := range lmLayers {
		brief[i] = compile.LayerSpec{Name: l.Name, Params: l.Params}
	}
	brief[0].Kind = "embedding"
	g2, _ := importFile(t, filepath.Join("testdata", "snn", "snntorch_lm.pt"), &compile.ImportOptions{Layers: brief})
	a, err := snn.EncodeJSON(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := snn.EncodeJSON(g2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("with kinds left to the tensors the graph differs:\n got %s\nwant %s", b, a)
	}
	worst := lmtest.Check(t, g, ref)
	t.Logf("%d prompt tokens: logits within %.3g of snnTorch's; greedy continuation %v; report kind %q",
		len(ref.Prompt), worst, ref.Continuation, rep.Kind)
}

// TestLanguageModelErrors: a network with an Embedding that does not fit
// a language model is refused, naming the layer and the problem.
func TestLanguageModelErrors(t *testing.T) {
	emb := func(p string, v, e int64) []sdTensor {
		return []sdTensor{{p + ".weight", []int64{v, e}, filled(int(v*e), 0.1)}}
	}
	lin := func(p string, out, in int64) []sdTensor {
		return []sdTensor{{p + ".weight", []int64{out, in}, filled(int(out*in), 0.1)}, {p + ".bias", []int64{out}, filled(int(out), 0)}}
	}
	cat := func(xs ...[]sdTensor) []sdTensor {
		var out []sdTensor
		for _, x := range xs {
			out = append(out, x...)
		}
		return out
	}
	specs := func(kinds ...string) *compile.ImportOptions {
		o := &compile.ImportOptions{}
		for i, k := range kinds {
			o.Layers = append(o.Layers, compile.LayerSpec{Name: string(rune('a' + i)), Kind: k})
		}
		return o
	}
	good := cat(emb("a", 10, 4), lin("b", 6, 4), leakyTensors("c", 0.9), lin("d", 10, 6))
	cases := []struct {
		name string
		file []sdTensor
		opts *compile.ImportOptions
		want []string
	}{
		{"embedding not first", cat(lin("a", 4, 10), emb("b", 10, 4), leakyTensors("c", 0.9), lin("d", 10, 4)),
			specs("linear", "embedding", "snntorch.leaky", "linear"), []string{`node "b"`, "first layer", `"a"`}},
		{"vocabulary mismatch", cat(emb("a", 10, 4), lin("b", 6, 4), leakyTensors("c", 0.9), lin("d", 12, 6)),
			specs("embedding", "linear", "snntorch.leaky", "linear"), []string{`node "d"`, "12 logits", "10 tokens"}},
		{"ends with a neuron", cat(emb("a", 10, 4), lin("b", 10, 4), leakyTensors("c", 0.9)),
			specs("embedding", "linear", "snntorch.leaky"), []string{`node "c"`, "Linear readout", "membrane"}},
		{"no neurons", cat(emb("a", 10, 4), lin("b", 10, 4)),
			specs("embedding", "linear"), []string{`node "a"`, "no neuron layer"}},
		{"1-D table", cat([]sdTensor{{"a.weight", []int64{10}, filled(10, 0.1)}}, lin("b", 6, 10), leakyTensors("c", 0.9), lin("d", 10, 6)),
			specs("embedding", "linear", "snntorch.leaky", "linear"), []string{`"a.weight"`, "2-D"}},
		{"extra tensor", cat(emb("a", 10, 4), []sdTensor{{"a.bias", []int64{4}, filled(4, 0)}}, lin("b", 6, 4), leakyTensors("c", 0.9), lin("d", 10, 6)),
			specs("embedding", "linear", "snntorch.leaky", "linear"), []string{`"a.bias"`, "only weight"}},
		{"param", good, &compile.ImportOptions{Layers: []compile.LayerSpec{{Name: "a", Kind: "embedding", Params: map[string]float64{"max_norm": 1}}, {Name: "b", Kind: "linear"}, {Name: "c", Kind: "snntorch.leaky"}, {Name: "d", Kind: "linear"}}},
			[]string{`"max_norm"`}},
		{"input shape", good, &compile.ImportOptions{Layers: []compile.LayerSpec{{Name: "a", Kind: "embedding", Shape: []int{12}}, {Name: "b", Kind: "linear"}, {Name: "c", Kind: "snntorch.leaky"}, {Name: "d", Kind: "linear"}}},
			[]string{`node "a"`, "10 tokens", "[12]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := buildStateDict(t, c.file...)
			_, _, err := compile.Import("pytorch", bytes.NewReader(file), int64(len(file)), c.opts)
			if !errors.Is(err, compile.ErrUnsupported) {
				t.Fatalf("got %v, want an unsupported-model error", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	// The same layers, well formed, import as a language model.
	file := buildStateDict(t, good...)
	g, _, err := compile.Import("pytorch", bytes.NewReader(file), int64(len(file)), specs("embedding", "linear", "snntorch.leaky", "linear"))
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Nodes["a"].(*snn.Linear).Weight.Shape; got[0] != 4 || got[1] != 10 {
		t.Errorf("embedding weight %v, want [4 10]", got)
	}
	// So does FuzzImport's seed with lmLayers.
	file = tinyLanguageModel(t)
	if _, _, err := compile.Import("pytorch", bytes.NewReader(file), int64(len(file)), &compile.ImportOptions{Layers: lmLayers}); err != nil {
		t.Errorf("FuzzImport's language-model seed: %v", err)
	}
}
