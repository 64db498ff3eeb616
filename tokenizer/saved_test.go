package tokenizer

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// addedTokensFixture builds a small tokenizer with special and non-special
// added tokens (with lstrip and rstrip), through Train, WriteJSON, an edit
// of the JSON and Load, so that the saved file exercises every part of the
// format.
func addedTokensFixture(t *testing.T) []byte {
	t.Helper()
	texts := loadTexts(t)
	tok, err := Train(context.Background(), &TrainOptions{VocabSize: 400, SpecialTokens: []string{EndOfText, User, End}},
		strings.NewReader(strings.Join(texts, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tok.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	added := m["added_tokens"].([]any)
	for i, a := range []AddedToken{
		{ID: 400, Content: "<mask>", LStrip: true},
		{ID: 401, Content: "[SEP]", RStrip: true},
		{ID: 402, Content: "hello world"},
	} {
		_ = i
		added = append(added, a)
	}
	m["added_tokens"] = added
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	tok2, err := Load(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	if err := tok2.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestSavedFixture(t *testing.T) {
	got := addedTokensFixture(t)
	path := filepath.Join("testdata", "saved", "added_tokens.json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what Train+WriteJSON+Load+WriteJSON gives now; run go test -run TestSavedFixture -update and regenerate the reference with testdata/gen", path)
	}
}
