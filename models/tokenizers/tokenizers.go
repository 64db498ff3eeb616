// Package tokenizers embeds the tokenizers the project ships, so that a
// program can load one by name without reading files:
//
//   - "neuro-bpe-1k", "neuro-bpe-2k" and "neuro-bpe-4k": the project's own
//     byte-level BPE tokenizers (trained by go run
//     ./tokenizer/internal/traincorpus on the project corpus), vocabularies
//     of about 1,000, 2,000 and 4,000 tokens with the project's special
//     tokens and chat template;
//   - "gpt2": GPT-2's vocabulary of 50,257 tokens (gpt2/README.md), with
//     no chat template.
//
// Load parses the embedded files each time it is called; callers that need
// one tokenizer many times keep the result (a Tokenizer is immutable and
// safe for concurrent use).
package tokenizers

import (
	"compress/gzip"
	"embed"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/neuro-go/neuro/tokenizer"
)

//go:embed neuro-bpe-1k.json neuro-bpe-2k.json neuro-bpe-4k.json gpt2/encoder.json.gz gpt2/vocab.bpe.gz
var files embed.FS

// gpt2 is the name of GPT-2's vocabulary, which is stored as OpenAI
// published it, not as a tokenizer.json.
const gpt2 = "gpt2"

// ErrUnknown is returned by Load for a name that is not embedded.
var ErrUnknown = errors.New("tokenizers: unknown tokenizer")

// Names lists the embedded tokenizers, sorted.
func Names() []string {
	ents, _ := files.ReadDir(".")
	out := []string{gpt2}
	for _, e := range ents {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Load parses the embedded tokenizer with the given name.
func Load(name string) (*tokenizer.Tokenizer, error) {
	if name == gpt2 {
		return loadGPT2()
	}
	if strings.ContainsAny(name, "/\\.") {
		return nil, fmt.Errorf("%w: %q", ErrUnknown, name)
	}
	f, err := files.Open(name + ".json")
	if err != nil {
		return nil, fmt.Errorf("%w: %q (have %s)", ErrUnknown, name, strings.Join(Names(), ", "))
	}
	defer f.Close()
	t, err := tokenizer.Load(f)
	if err != nil {
		return nil, fmt.Errorf("tokenizers: %s: %w", name, err)
	}
	return t, nil
}

func loadGPT2() (*tokenizer.Tokenizer, error) {
	open := func(name string) (io.Reader, error) {
		f, err := files.Open("gpt2/" + name + ".gz")
		if err != nil {
			return nil, err
		}
		return gzip.NewReader(f)
	}
	enc, err := open("encoder.json")
	if err != nil {
		return nil, fmt.Errorf("tokenizers: gpt2: %w", err)
	}
	bpe, err := open("vocab.bpe")
	if err != nil {
		return nil, fmt.Errorf("tokenizers: gpt2: %w", err)
	}
	t, err := tokenizer.LoadGPT2(enc, bpe)
	if err != nil {
		return nil, fmt.Errorf("tokenizers: gpt2: %w", err)
	}
	return t, nil
}
