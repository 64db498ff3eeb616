package nir_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/compile/internal/lmtest"
	"github.com/neuro-go/neuro/compile/nir"
	"github.com/neuro-go/neuro/snn"
)

var updateLM = flag.Bool("update-lm", false, "TestLanguageModel: rewrite testdata/lm/snntorch_lm.nir from the snnTorch state_dict")

// lmDir holds the snnTorch language model the NIR fixture is written from,
// with the logits and greedy continuation snnTorch computed.
var lmDir = filepath.Join("..", "pytorch", "testdata", "snn")

const lmNIR = "testdata/lm/snntorch_lm.nir"

// lmFromStateDict imports the snnTorch language model's state_dict as a
// user describes it.
func lmFromStateDict(t *testing.T) *snn.Graph {
	t.Helper()
	pt, err := os.ReadFile(filepath.Join(lmDir, "snntorch_lm.pt"))
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := compile.Import("pytorch", bytes.NewReader(pt), int64(len(pt)), &compile.ImportOptions{Layers: lmtest.Layers})
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
	ref := lmtest.ReadRef(t, filepath.Join(lmDir, "snntorch_lm.json"))
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

	worst := lmtest.Check(t, g, ref)
	t.Logf("NIR language model: %d prompt logits within %.3g of snnTorch's; %d greedy tokens as snnTorch's", len(ref.Prompt)*ref.Vocab, worst, len(ref.Continuation))
}

func encodeGraph(t *testing.T, g *snn.Graph) []byte {
	t.Helper()
	b, err := snn.EncodeJSON(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
