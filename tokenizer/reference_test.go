package tokenizer

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestGPT2Reference checks our encoding of GPT-2's vocabulary against the
// ids that the npm package gpt-3-encoder gives (testdata/gen/gen.mjs).
func TestGPT2Reference(t *testing.T) {
	tok := loadGPT2(t)
	var ref struct {
		Cases []struct {
			Text string `json:"text"`
			IDs  []int  `json:"ids"`
		} `json:"cases"`
	}
	readJSON(t, filepath.Join("testdata", "gpt2_reference.json"), &ref)
	if len(ref.Cases) < 20 {
		t.Fatalf("only %d reference cases", len(ref.Cases))
	}
	for _, c := range ref.Cases {
		got := tok.Encode(c.Text)
		if !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%.60q):\n got %v\nwant %v", c.Text, got, c.IDs)
		}
		if d := tok.Decode(got); d != c.Text {
			t.Errorf("Decode(Encode(%.60q)) = %.60q", c.Text, d)
		}
	}
}

// TestHFReference checks that tokenizer.json files saved by this package
// load in the reference JavaScript implementation of Hugging Face
// tokenizers and encode the same (testdata/gen/gen.mjs).
func TestHFReference(t *testing.T) {
	var ref struct {
		Tokenizers map[string][]struct {
			Text    string `json:"text"`
			IDs     []int  `json:"ids"`
			Decoded string `json:"decoded"`
		} `json:"tokenizers"`
	}
	readJSON(t, filepath.Join("testdata", "hf_reference.json"), &ref)
	if len(ref.Tokenizers) == 0 {
		t.Fatal("no reference tokenizers in testdata/hf_reference.json")
	}
	for file, cases := range ref.Tokenizers {
		tok, err := LoadFile(filepath.Join("..", filepath.FromSlash(file)))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			got := tok.EncodeSpecial(c.Text)
			if !slices.Equal(got, c.IDs) {
				t.Errorf("%s: EncodeSpecial(%.60q):\n got %v\nwant %v", file, c.Text, got, c.IDs)
			}
			if d := tok.Decode(c.IDs); d != c.Decoded {
				t.Errorf("%s: Decode(%.60q) = %.60q, reference %.60q", file, c.Text, d, c.Decoded)
			}
		}
	}
}
