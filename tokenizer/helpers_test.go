package tokenizer

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

var (
	gpt2Once sync.Once
	gpt2Tok  *Tokenizer
	gpt2Err  error
)

// loadGPT2 loads models/tokenizers/gpt2 once per test binary.
func loadGPT2(tb testing.TB) *Tokenizer {
	tb.Helper()
	gpt2Once.Do(func() {
		enc, err := os.Open(filepath.Join("..", "models", "tokenizers", "gpt2", "encoder.json.gz"))
		if err != nil {
			gpt2Err = err
			return
		}
		defer enc.Close()
		bpe, err := os.Open(filepath.Join("..", "models", "tokenizers", "gpt2", "vocab.bpe.gz"))
		if err != nil {
			gpt2Err = err
			return
		}
		defer bpe.Close()
		ez, err := gzip.NewReader(enc)
		if err != nil {
			gpt2Err = err
			return
		}
		bz, err := gzip.NewReader(bpe)
		if err != nil {
			gpt2Err = err
			return
		}
		gpt2Tok, gpt2Err = LoadGPT2(ez, bz)
	})
	if gpt2Err != nil {
		tb.Fatalf("loading GPT-2 vocabulary: %v", gpt2Err)
	}
	return gpt2Tok
}

func readJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}

func loadTexts(tb testing.TB) []string {
	var f struct {
		Texts []string `json:"texts"`
	}
	readJSON(tb, filepath.Join("testdata", "texts.json"), &f)
	return f.Texts
}

var ioEOF = io.EOF

func q(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func itoa(i int) string { return strconv.Itoa(i) }
