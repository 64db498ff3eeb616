package tokenizer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// gpt2Regexp is the pattern compiled by regexp2, which has lookahead: the
// scanner must split exactly as it does.
var gpt2Regexp = regexp2.MustCompile(GPT2Pattern, regexp2.Unicode)

func regexpPieces(tb testing.TB, s string) []string {
	var out []string
	m, err := gpt2Regexp.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = gpt2Regexp.FindNextMatch(m) {
		out = append(out, m.String())
	}
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func scannerPieces(s string) []string {
	var out []string
	pieces(s, func(p string) { out = append(out, p) })
	return out
}

func TestPretokenizeMatchesRegexp(t *testing.T) {
	cases := append(loadTexts(t),
		"a\n\nb", "  \n  x", "x  ", "'s's'S 'll'LL", " 'd", "\t\tx", " \u3000x", "\u00a0a", "1 2  3",
		"?? !!", "  ?", " \u00e9t\u00e9", "x\u0301y", "\u3000\u3000",
	)
	for _, s := range cases {
		if !utf8.ValidString(s) {
			continue
		}
		want := regexpPieces(t, s)
		got := scannerPieces(s)
		if !slices.Equal(got, want) {
			t.Errorf("pieces(%q)\n got %q\nwant %q", s, got, want)
		}
	}
}

// FuzzPretokenize compares the scanner with regexp2 on valid UTF-8.
func FuzzPretokenize(f *testing.F) {
	for _, s := range []string{"Hello world", "  a  b\n\n c", "I'm 42!", "日本 語", "x\t \ty", "'''s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := scannerPieces(s)
		if strings.Join(got, "") != s {
			t.Fatalf("pieces of %q do not concatenate back: %q", s, got)
		}
		if !utf8.ValidString(s) || strings.ContainsRune(s, 0x85) || strings.ContainsRune(s, 0xFEFF) || strings.ContainsRune(s, 0x180E) {
			return // regexp2's \s differs from White_Space there
		}
		if want := regexpPieces(t, s); !slices.Equal(got, want) {
			t.Fatalf("pieces(%q)\n got %q\nwant %q", s, got, want)
		}
	})
}

// FuzzRoundTrip: Decode(Encode(s)) == s for every string, valid UTF-8 or
// not, with and without special-token recognition.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range loadTexts(f) {
		f.Add(s)
	}
	f.Add("\xff\xfe invalid \xc3")
	f.Add("<|endoftext|><|user|>")
	tok := loadGPT2(f)
	own, err := LoadFile(filepath.Join("..", "models", "tokenizers", "neuro-bpe-1k.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tk := range []*Tokenizer{tok, own} {
			if d := tk.Decode(tk.Encode(s)); d != s {
				t.Fatalf("Decode(Encode(%q)) = %q", s, d)
			}
			if d := tk.Decode(tk.EncodeSpecial(s)); d != s {
				t.Fatalf("Decode(EncodeSpecial(%q)) = %q", s, d)
			}
			dec := tk.NewDecoder()
			var b strings.Builder
			for _, id := range tk.Encode(s) {
				out, err := dec.Next(id)
				if err != nil {
					t.Fatal(err)
				}
				if utf8.ValidString(s) && !utf8.ValidString(out) {
					t.Fatalf("streamed %q: invalid UTF-8 piece %q", s, out)
				}
				b.WriteString(out)
			}
			b.WriteString(dec.Flush())
			if b.String() != s {
				t.Fatalf("streamed %q, got %q", s, b.String())
			}
		}
	})
}

func TestEncodeSpecialTokens(t *testing.T) {
	tok := loadGPT2(t)
	eot, ok := tok.SpecialID("<|endoftext|>")
	if !ok || eot != 50256 {
		t.Fatalf("SpecialID(<|endoftext|>) = %d, %v", eot, ok)
	}
	plain := tok.Encode("a<|endoftext|>b")
	if slices.Contains(plain, eot) {
		t.Errorf("Encode recognised a special token in plain text: %v", plain)
	}
	sp := tok.EncodeSpecial("a<|endoftext|>b")
	if !slices.Equal(sp, []int{tok.Encode("a")[0], eot, tok.Encode("b")[0]}) {
		t.Errorf("EncodeSpecial = %v", sp)
	}
	if tok.VocabSize() != 50257 {
		t.Errorf("VocabSize = %d", tok.VocabSize())
	}
	if id, ok := tok.TokenToID("Ġthe"); !ok || id != 262 {
		t.Errorf("TokenToID(Ġthe) = %d, %v", id, ok)
	}
	if s, ok := tok.IDToToken(262); !ok || s != "Ġthe" {
		t.Errorf("IDToToken(262) = %q, %v", s, ok)
	}
	if _, ok := tok.IDToToken(-1); ok {
		t.Error("IDToToken(-1) ok")
	}
	if _, ok := tok.IDToToken(50257); ok {
		t.Error("IDToToken(50257) ok")
	}
	if d := tok.Decode([]int{-5, 262, 1 << 30}); d != " the" {
		t.Errorf("Decode skips unknown ids: got %q", d)
	}
}

func TestDecoderHoldsPartialCharacters(t *testing.T) {
	tok := loadGPT2(t)
	dec := tok.NewDecoder()
	// "😀" is 4 bytes; GPT-2 encodes it as several byte tokens.
	ids := tok.Encode("a😀b")
	var outs []string
	for _, id := range ids {
		s, err := dec.Next(id)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, s)
	}
	if strings.Join(outs, "") != "a😀b" {
		t.Fatalf("joined %q", outs)
	}
	for _, s := range outs {
		if !utf8.ValidString(s) {
			t.Errorf("piece %q is not valid UTF-8", s)
		}
	}
	if _, err := dec.Next(1 << 30); !errors.Is(err, ErrUnknownID) {
		t.Errorf("Next(huge) error = %v, want ErrUnknownID", err)
	}
	// An invalid byte is not held forever.
	ff, _ := tok.TokenToID(byteRuneStrings[0xff])
	if s, _ := dec.Next(ff); s != "\xff" {
		t.Errorf("Next(0xff byte) = %q", s)
	}
	// A valid prefix is held until Flush.
	e2, _ := tok.TokenToID(byteRuneStrings[0xe2])
	if s, _ := dec.Next(e2); s != "" {
		t.Errorf("Next(0xe2) = %q, want held", s)
	}
	if s := dec.Flush(); s != "\xe2" {
		t.Errorf("Flush = %q", s)
	}
	dec.SkipSpecial = true
	if s, _ := dec.Next(50256); s != "" {
		t.Errorf("SkipSpecial: %q", s)
	}
}

// TestLongInputsAreLinear: four times the text takes four times the
// encoder's steps (encodeState.work: pre-tokens cut, merge candidates
// looked at), for runs of one character that make megabyte-long words.
// Counted rather than timed, so a busy machine cannot fail it.
func TestLongInputsAreLinear(t *testing.T) {
	tok := loadGPT2(t)
	work := func(s string) int {
		st := newEncodeState()
		ids := tok.appendEncodeWith(st, nil, s, tok.matchPlain)
		if tok.Decode(ids) != s {
			t.Fatalf("round trip of %d bytes failed", len(s))
		}
		return st.work
	}
	for _, unit := range []string{" ", "a", "!", "\n", "ab ", "😀", "1"} {
		small := work(strings.Repeat(unit, (256<<10)/len(unit)))
		big := work(strings.Repeat(unit, (1<<20)/len(unit)))
		// Linear code takes 4 times the steps for 4 times the text;
		// quadratic code 16 times (the merge scan on a 1 MiB word, say).
		if big > 5*small {
			t.Errorf("%q: %d steps for 256 KiB, %d for 1 MiB: not linear", unit, small, big)
		}
	}
}

func TestHeapAndScanAgree(t *testing.T) {
	tok := loadGPT2(t)
	st := newEncodeState()
	r := rand.New(rand.NewPCG(1, 2))
	letters := "aeiou rstlnmTH'"
	for i := 0; i < 2000; i++ {
		n := 2 + r.IntN(150)
		b := make([]byte, n)
		for j := range b {
			b[j] = letters[r.IntN(len(letters))]
		}
		w := string(b)
		a := tok.mergeScan(st, nil, w)
		h := tok.mergeHeap(st, nil, w)
		if !slices.Equal(a, h) {
			t.Fatalf("word %q: scan %v, heap %v", w, a, h)
		}
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	tok := loadGPT2(t)
	var buf bytes.Buffer
	if err := tok.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if back.VocabSize() != tok.VocabSize() || back.NumMerges() != tok.NumMerges() {
		t.Fatalf("sizes %d/%d, want %d/%d", back.VocabSize(), back.NumMerges(), tok.VocabSize(), tok.NumMerges())
	}
	for _, s := range loadTexts(t) {
		if !slices.Equal(back.EncodeSpecial(s), tok.EncodeSpecial(s)) {
			t.Errorf("reloaded tokenizer encodes %.40q differently", s)
		}
	}
	// Save to a file and LoadFile.
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := back.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(filepath.Join(t.TempDir(), "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile(missing) = %v", err)
	}
}

func TestLegacyStringMerges(t *testing.T) {
	// The same tokenizer with merges as "a b" strings must load the same.
	data, err := os.ReadFile(filepath.Join("testdata", "saved", "added_tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := Load(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	model := m["model"].(map[string]any)
	var merges []string
	for _, mg := range model["merges"].([]any) {
		p := mg.([]any)
		merges = append(merges, p[0].(string)+" "+p[1].(string))
	}
	model["merges"] = merges
	legacyJSON, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(legacyJSON, []byte(`"merges":["`)) {
		t.Fatal("merges not rewritten to the string form")
	}
	legacy, err := Load(bytes.NewReader(legacyJSON))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range loadTexts(t) {
		if !slices.Equal(legacy.Encode(s), pairs.Encode(s)) {
			t.Errorf("string-form merges encode %.40q differently", s)
		}
	}
}

func TestTrain(t *testing.T) {
	text := strings.Repeat("the cat sat on the mat. the dog sat on the log.\n", 200)
	tok, err := Train(context.Background(), &TrainOptions{VocabSize: 300, SpecialTokens: []string{"<s>", "</s>"}},
		strings.NewReader(text+"<s>"))
	if err != nil {
		t.Fatal(err)
	}
	if tok.VocabSize() > 300 || tok.NumMerges() == 0 {
		t.Fatalf("VocabSize %d, merges %d", tok.VocabSize(), tok.NumMerges())
	}
	if id, ok := tok.SpecialID("<s>"); !ok || id != 0 {
		t.Errorf("<s> = %d, %v", id, ok)
	}
	// Frequent words become single tokens.
	if ids := tok.Encode(" the"); len(ids) != 1 {
		t.Errorf("' the' = %v, want one token", ids)
	}
	if got := tok.Decode(tok.Encode(text)); got != text {
		t.Error("round trip failed")
	}
	// Streaming reads split exactly as one string: same result from a
	// reader that returns one byte at a time.
	tok2, err := Train(context.Background(), &TrainOptions{VocabSize: 300, SpecialTokens: []string{"<s>", "</s>"}},
		&oneByteReader{s: text + "<s>"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tok2.mergeList, tok.mergeList) {
		t.Error("training from a one-byte reader learned other merges")
	}
	if _, err := Train(context.Background(), &TrainOptions{VocabSize: 100}); err == nil {
		t.Error("VocabSize 100 accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, &TrainOptions{VocabSize: 300}, strings.NewReader(text)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled training: %v", err)
	}
}

// TestTrainChunked feeds more than one read chunk so that ReadFrom's carry
// is exercised.
func TestTrainChunked(t *testing.T) {
	if testing.Short() {
		t.Skip("3 MB of text")
	}
	var b strings.Builder
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"alpha", "beta", " ", "  ", "\n\n", "gamma's", "42", "δέλτα", "!!", "<|end|>"}
	for b.Len() < 3<<20 {
		b.WriteString(words[r.IntN(len(words))])
	}
	s := b.String()
	opts := &TrainOptions{VocabSize: 400, SpecialTokens: []string{"<|end|>"}}
	a, err := NewTrainer(opts)
	if err != nil {
		t.Fatal(err)
	}
	a.Add(s)
	c, _ := NewTrainer(opts)
	if _, err := c.ReadFrom(strings.NewReader(s)); err != nil {
		t.Fatal(err)
	}
	if len(a.words) != len(c.words) {
		t.Fatalf("distinct words: Add %d, ReadFrom %d", len(a.words), len(c.words))
	}
	for w, n := range a.words {
		if c.words[w] != n {
			t.Fatalf("word %q: Add %d, ReadFrom %d", w, n, c.words[w])
		}
	}
}

type oneByteReader struct {
	s string
	i int
}

func (r *oneByteReader) Read(p []byte) (int, error) {
	if r.i >= len(r.s) {
		return 0, ioEOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = r.s[r.i]
	r.i++
	return 1, nil
}
