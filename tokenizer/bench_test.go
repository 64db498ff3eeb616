package tokenizer

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/pkoukk/tiktoken-go"
)

func benchText(tb testing.TB) string {
	f, err := os.Open(filepath.Join("testdata", "alice.txt.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// newTiktoken builds tiktoken-go's r50k_base (GPT-2's vocabulary) from the
// local GPT-2 files through its exported constructors, without the network
// and without its global loader.
func newTiktoken(tb testing.TB, tok *Tokenizer) *tiktoken.Tiktoken {
	ranks := make(map[string]int, tok.VocabSize())
	for id := 0; id < tok.VocabSize(); id++ {
		if tok.IsSpecial(id) {
			continue
		}
		b, _ := tok.TokenBytes(id)
		ranks[string(b)] = id
	}
	special := map[string]int{"<|endoftext|>": 50256}
	core, err := tiktoken.NewCoreBPE(ranks, special, GPT2Pattern)
	if err != nil {
		tb.Fatal(err)
	}
	enc := &tiktoken.Encoding{Name: "r50k_base", PatStr: GPT2Pattern, MergeableRanks: ranks, SpecialTokens: special, ExplicitNVocab: 50257}
	return tiktoken.NewTiktoken(core, enc, map[string]any{"<|endoftext|>": true})
}

// TestTiktokenAgrees: tiktoken-go's r50k_base is a second reference for
// GPT-2 (its regexp2 engine treats a few rare spaces differently, so the
// check runs on the benchmark text and the ASCII-whitespace fixtures).
func TestTiktokenAgrees(t *testing.T) {
	tok := loadGPT2(t)
	tk := newTiktoken(t, tok)
	text := benchText(t)
	if got, want := tok.Encode(text), tk.EncodeOrdinary(text); !slices.Equal(got, want) {
		t.Errorf("Alice: %d ids, tiktoken-go %d ids", len(got), len(want))
	}
	for _, s := range loadTexts(t) {
		if bytes.ContainsAny([]byte(s), "\u3000\u00a0\u2009") {
			continue
		}
		if got, want := tok.Encode(s), tk.EncodeOrdinary(s); !slices.Equal(got, want) {
			t.Errorf("%.40q: got %v, tiktoken-go %v", s, got, want)
		}
	}
}

// BenchmarkEncode compares encode throughput on the same text (Alice in
// Wonderland, 150 kB) with tiktoken-go's r50k_base, which is GPT-2.
func BenchmarkEncode(b *testing.B) {
	tok := loadGPT2(b)
	text := benchText(b)
	report := func(b *testing.B, tokens int) {
		b.ReportMetric(float64(tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
	}
	b.Run("neuro", func(b *testing.B) {
		dst := make([]int, 0, len(text))
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			dst = tok.AppendEncode(dst[:0], text)
		}
		report(b, len(dst))
	})
	b.Run("neuro-coldcache", func(b *testing.B) {
		// A new word cache every time: the cost of text never seen before.
		var dst []int
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			dst = tok.appendEncodeWith(newEncodeState(), dst[:0], text, tok.matchPlain)
		}
		report(b, len(dst))
	})
	b.Run("tiktoken-go", func(b *testing.B) {
		tk := newTiktoken(b, tok)
		var ids []int
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for b.Loop() {
			ids = tk.EncodeOrdinary(text)
		}
		report(b, len(ids))
	})
}

func BenchmarkDecode(b *testing.B) {
	tok := loadGPT2(b)
	text := benchText(b)
	ids := tok.Encode(text)
	buf := make([]byte, 0, len(text))
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		buf = tok.AppendDecode(buf[:0], ids)
	}
}

func BenchmarkTrain(b *testing.B) {
	text := benchText(b)
	tr, err := NewTrainer(&TrainOptions{VocabSize: 2048})
	if err != nil {
		b.Fatal(err)
	}
	tr.Add(text)
	b.ResetTimer()
	for b.Loop() {
		if _, err := tr.Train(b.Context(), 0); err != nil {
			b.Fatal(err)
		}
	}
}
