package train_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/models/lima"
	"github.com/neuro-go/neuro/snn"
	"github.com/neuro-go/neuro/tokenizer"
)

// ownDir holds what own.py wrote for a small model trained on a few
// megabytes of the corpus's books (its README says how).
const ownDir = "testdata/own"

// ownResults is the part of own.py's results.json the test reads.
type ownResults struct {
	BPB        float64 `json:"bpb"`
	Valid      string  `json:"valid"`
	ValidBytes float64 `json:"valid_bytes"`
	VocabSize  int     `json:"vocab_size"`
	Params     int     `json:"params"`
}

// TestOwnModel: the model.pt that own.py writes imports through
// compile.Import("pytorch") as a lima state_dict and compiles as a causal
// language model whose one-hot input and logits have exactly the ids of
// the tokenizer.json written with it; served on the cpu device at float32,
// it predicts valid.txt at the bits per byte results.json records (the
// text encoded with that tokenizer and followed by <|endoftext|>, windows
// of 128 tokens from rest, as train.py evaluates).
func TestOwnModel(t *testing.T) {
	w, err := os.ReadFile(filepath.Join(ownDir, "model.pt"))
	if err != nil {
		t.Fatal(err)
	}
	g, rep, err := compile.Import("pytorch", bytes.NewReader(w), int64(len(w)), &compile.ImportOptions{Dt: 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Kind != lima.ReportKind {
		t.Fatalf("imported as %q, want %q", rep.Kind, lima.ReportKind)
	}
	p, _, err := compile.Compile(g, &compile.Options{Name: "own", Task: compile.TaskCausalLM, Dt: 1e-3, Timesteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.LoadFile(filepath.Join(ownDir, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res ownResults
	raw, err := os.ReadFile(filepath.Join(ownDir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	V := tok.VocabSize()
	if p.Task != compile.TaskCausalLM || p.Input.Size != V || p.Output.Size != V || res.VocabSize != V {
		t.Fatalf("task %q, input %d, output %d, results.json vocabulary %d; the tokenizer has %d ids", p.Task, p.Input.Size, p.Output.Size, res.VocabSize, V)
	}
	if _, ok := tok.SpecialID(tokenizer.EndOfText); !ok || tok.ChatTemplate() == nil {
		t.Fatal("tokenizer.json lacks <|endoftext|> or the chat template")
	}
	p.Input = compile.Encoding{Kind: compile.InputOneHot, Node: "token", Size: V}
	p.Output = compile.Decoding{Kind: compile.OutputLogits, Node: "logits", Size: V}

	text, err := os.ReadFile(filepath.Join(ownDir, res.Valid))
	if err != nil {
		t.Fatal(err)
	}
	if float64(len(text)) != res.ValidBytes {
		t.Fatalf("%s has %d bytes, results.json says %g", res.Valid, len(text), res.ValidBytes)
	}
	eot, _ := tok.SpecialID(tokenizer.EndOfText)
	ids := append(tok.Encode(string(text)), eot)
	bpb := sourceBits(t, p, snn.Float32, ids) / float64(len(text))
	if math.Abs(bpb-res.BPB) > fullTolerance {
		t.Fatalf("%.6f bits per byte on %s through the cpu device, results.json has %.6f", bpb, res.Valid, res.BPB)
	}
	t.Logf("%d parameters, %d ids; %.5f bits per byte on %d bytes (%d tokens), %.1e from results.json", res.Params, V, bpb, len(text), len(ids), math.Abs(bpb-res.BPB))
}
