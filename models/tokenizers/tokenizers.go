// Package tokenizers embeds the project's own byte-level BPE tokenizers
// (trained by go run ./tokenizer/internal/traincorpus on the project corpus)
// so that a program can load one by name without reading files.
//
// The names are "neuro-bpe-1k", "neuro-bpe-2k" and "neuro-bpe-4k": vocabularies
// of about 1,000, 2,000 and 4,000 tokens with the project's special tokens and
// chat template. Load parses the embedded JSON each time it is called; callers
// that need one tokenizer many times keep the result (a Tokenizer is
// immutable and safe for concurrent use).
package tokenizers

import (
	"embed"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/neuro-go/neuro/tokenizer"
)

//go:embed neuro-bpe-1k.json neuro-bpe-2k.json neuro-bpe-4k.json
var files embed.FS

// ErrUnknown is returned by Load for a name that is not embedded.
var ErrUnknown = errors.New("tokenizers: unknown tokenizer")

// Names lists the embedded tokenizers, sorted.
func Names() []string {
	ents, _ := files.ReadDir(".")
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".json"))
	}
	sort.Strings(out)
	return out
}

// Load parses the embedded tokenizer with the given name.
func Load(name string) (*tokenizer.Tokenizer, error) {
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
