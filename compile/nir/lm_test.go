package nir_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/compile/nir"
	"github.com/neuro-go/neuro/snn"
)

var updateLM = flag.Bool("update-lm", false, "TestLanguageModel: rewrite testdata/lm/snntorch_lm.nir from the snnTorch state_dict")

// lmDir holds the snnTorch language model the NIR fixture is written from,
// with the logits and greedy continuation snnTorch computed.
var lmDir = filepath.Join("..", "pytorch", "testdata", "snn")

const lmNIR = "testdata/lm/snntorch_lm.nir"

// lmFromStateDict imports the snnTorch language model's state_dict as a
// user describes it (compile/pytorch's lm_test.go has the same list).
func lmFromStateDict(t *testing.T) *snn.Graph {
	t.Helper()
	pt, err := os.ReadFile(filepath.Join(lmDir, "snntorch_lm.pt"))
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := compile.Import("pytorch", bytes.NewReader(pt), int64(len(pt)), &compile.ImportOptions{Layers: []compile.LayerSpec{
		{Name: "embed", Kind: "embedding"},
		{Name: "fc1", Kind: "linear"},
		{Name: "lif1", Kind: "snntorch.leaky"},
		{Name: "fc2", Kind: "linear"},
		{Name: "lif2", Kind: "snntorch.rleaky", Params: map[string]float64{"reset_delay": 0}},
		{Name: "fc_out", Kind: "linear"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestLanguageModel: testdata/lm/snntorch_lm.nir follows the language-model
// convention of docs/nir.md (one Input of the V one-hot token, one Output
// of V logits at the same step, one step per token) and holds the snnTorch
// language model of compile/pytorch's fixtures: it is what Write makes of
// that state_dict's import. Imported as format "nir" and compiled as a
// causal language model, it gives snnTorch's logits within 1e-4 over the
// 64-token prompt and snnTorch's greedy continuation.
func TestLanguageModel(t *testing.T) {
	if *updateLM {
		if err := nir.WriteFile(lmNIR, lmFromStateDict(t), nil); err != nil {
			t.Fatal(err)
		}
	}
	var ref struct {
		Vocab        int         `json:"vocab"`
		Prompt       []int       `json:"prompt"`
		Logits       [][]float64 `json:"logits"`
		Continuation []int       `json:"continuation"`
	}
	raw, err := os.ReadFile(filepath.Join(lmDir, "snntorch_lm.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(lmNIR)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := compile.Import("nir", bytes.NewReader(file), int64(len(file)), nil)
	if err != nil {
		t.Fatal(err)
	}

	// The file is the state_dict's network: the same graph once both have
	// been through NIR (Write broadcasts scalars to the node's shape).
	var buf bytes.Buffer
	if err := nir.Write(&buf, lmFromStateDict(t), nil); err != nil {
		t.Fatal(err)
	}
	want, err := nir.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := encodeGraph(t, g), encodeGraph(t, want); !bytes.Equal(a, b) {
		t.Fatalf("%s is not the snnTorch state_dict's network (go test -run TestLanguageModel -args -update-lm rewrites it):\n got %s\nwant %s", lmNIR, a, b)
	}

	p, _, err := compile.Compile(g, &compile.Options{Task: compile.TaskCausalLM, Timesteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	ins, outs := p.Graph.NamesOfKind("Input"), p.Graph.NamesOfKind("Output")
	shapes, err := p.Graph.Shapes()
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) != 1 || len(outs) != 1 || !sameShape(shapes[ins[0]].Out, ref.Vocab) || !sameShape(shapes[outs[0]].Out, ref.Vocab) {
		t.Fatalf("inputs %v, outputs %v: want one of shape [%d] each", ins, outs, ref.Vocab)
	}
	sim, err := snn.NewSimulator(p.Graph, &snn.Options{Dt: p.Dt})
	if err != nil {
		t.Fatal(err)
	}
	onehot := make([]float32, ref.Vocab)
	step := func(tok int) []float32 {
		clear(onehot)
		onehot[tok] = 1
		if err := sim.Step(onehot); err != nil {
			t.Fatal(err)
		}
		return sim.Output(0)
	}
	var out []float32
	worst := 0.0
	for s, tok := range ref.Prompt {
		out = step(tok)
		for i, v := range out {
			d := math.Abs(float64(v) - ref.Logits[s][i])
			worst = math.Max(worst, d)
			if d > 1e-4 {
				t.Fatalf("token %d (id %d) logit %d: %v, snnTorch gives %v (diff %g)", s, tok, i, v, ref.Logits[s][i], d)
			}
		}
	}
	for k, want := range ref.Continuation {
		got := 0
		for i, v := range out {
			if v > out[got] {
				got = i
			}
		}
		if got != want {
			t.Fatalf("greedy token %d: %d, snnTorch chose %d", k, got, want)
		}
		out = step(got)
	}
	t.Logf("NIR language model: %d prompt logits within %.3g of snnTorch's; %d greedy tokens as snnTorch's", len(ref.Prompt)*ref.Vocab, worst, len(ref.Continuation))
}

func sameShape(s []int, n int) bool { return len(s) == 1 && s[0] == n }

func encodeGraph(t *testing.T, g *snn.Graph) []byte {
	t.Helper()
	b, err := snn.EncodeJSON(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
