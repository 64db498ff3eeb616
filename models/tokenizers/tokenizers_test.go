package tokenizers

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/neuro-go/neuro/tokenizer"
)

func TestLoadMatchesFiles(t *testing.T) {
	if got, want := Names(), []string{"gpt2", "neuro-bpe-1k", "neuro-bpe-2k", "neuro-bpe-4k"}; !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	const text = "Once upon a time, a fox met a crow. 123 ünïcödé"
	for _, name := range Names()[1:] {
		emb, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		file, err := tokenizer.LoadFile(filepath.Join(".", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if emb.VocabSize() != file.VocabSize() || !slices.Equal(emb.Encode(text), file.Encode(text)) {
			t.Errorf("%s: embedded tokenizer differs from the file", name)
		}
		if emb.ChatTemplate() == nil {
			t.Errorf("%s: no chat template", name)
		}
	}
	a, _ := Load("neuro-bpe-1k")
	b, _ := Load("neuro-bpe-4k")
	if a.VocabSize() >= b.VocabSize() {
		t.Errorf("1k vocabulary %d not smaller than 4k %d", a.VocabSize(), b.VocabSize())
	}
}

func TestLoadUnknown(t *testing.T) {
	for _, name := range []string{"", "gpt2/encoder.json", "../tokenizers/neuro-bpe-1k", "neuro-bpe-1k.json", "heldout"} {
		if _, err := Load(name); !errors.Is(err, ErrUnknown) {
			t.Errorf("Load(%q): %v, want ErrUnknown", name, err)
		}
	}
}

func TestGPT2(t *testing.T) {
	tok, err := Load("gpt2")
	if err != nil {
		t.Fatal(err)
	}
	if tok.VocabSize() != 50257 || tok.ChatTemplate() != nil {
		t.Fatalf("gpt2: %d tokens, template %v", tok.VocabSize(), tok.ChatTemplate())
	}
	// "Hello world" is 15496 995 in GPT-2's published vocabulary.
	if got := tok.Encode("Hello world"); !slices.Equal(got, []int{15496, 995}) {
		t.Fatalf("gpt2 encodes %v", got)
	}
}
