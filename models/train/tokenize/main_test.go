package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/tokenizer"
)

// TestRunText: -text writes what own.py and train.py read: tokenizer.json
// that package tokenizer loads, valid.txt, and one source whose token files
// decode to the two parts of the input, each followed by <|endoftext|>,
// with index.json counting them.
func TestRunText(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("The cat sat on the mat.\nThe dog ran to the log.\n", 40) + "A fish swam in the sea.\n"
	in := filepath.Join(dir, "mine.txt")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "data")
	if err := runText(in, "auto", 300, 30, out); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.LoadFile(filepath.Join(out, "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx index
	if err := json.Unmarshal(raw, &idx); err != nil {
		t.Fatal(err)
	}
	s := idx.Sources["text"]
	if s == nil || len(idx.Sources) != 1 || idx.VocabSize != tok.VocabSize() || tok.NumMerges() == 0 {
		t.Fatalf("index %s", raw)
	}
	valid, err := os.ReadFile(filepath.Join(out, "valid.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(valid) != "A fish swam in the sea.\n" {
		t.Fatalf("valid.txt %q", valid)
	}
	for _, c := range []struct {
		e    splitIndex
		want string
	}{{s.Train, text[:len(text)-len(valid)]}, {s.Val, string(valid)}} {
		b, err := os.ReadFile(filepath.Join(out, c.e.File))
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int, len(b)/2)
		for i := range ids {
			ids[i] = int(binary.LittleEndian.Uint16(b[2*i:]))
		}
		if got := tok.Decode(ids); got != c.want+tokenizer.EndOfText {
			t.Errorf("%s decodes to %q", c.e.File, got)
		}
		if c.e.Tokens != len(ids) || c.e.TextBytes != int64(len(c.want)) || c.e.Documents != 1 {
			t.Errorf("%s: index %+v, want %d tokens and %d text bytes", c.e.File, c.e, len(ids), len(c.want))
		}
	}
	if err := runText(in, "chat", 300, 30, out); err == nil || !strings.Contains(err.Error(), "chat line 1") {
		t.Errorf("text read as chat: %v", err)
	}
}
