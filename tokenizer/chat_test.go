package tokenizer

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
)

func TestChatTemplate(t *testing.T) {
	ct := NeuroChatTemplate()
	got, err := ct.Render([]Message{{"developer", "D"}, {"user", "U"}, {"assistant", "A"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := "<|system|>\nD<|end|>\n<|user|>\nU<|end|>\n<|assistant|>\nA<|end|>\n"
	if got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
	if _, err := ct.Render([]Message{{"tool", "x"}}, true); !errors.Is(err, ErrUnknownRole) {
		t.Errorf("role tool: %v, want ErrUnknownRole", err)
	}
	ct.DefaultSystem = "S"
	if got, _ := ct.Render(nil, true); got != "<|system|>\nS<|end|>\n<|assistant|>\n" {
		t.Errorf("default system: %q", got)
	}
	var zero ChatTemplate
	if got, _ := zero.Render([]Message{{"user", "a"}, {"assistant", "b"}}, true); got != "ab" {
		t.Errorf("zero template: %q", got)
	}

	tok, err := LoadFile(filepath.Join("..", "models", "tokenizers", "neuro-bpe-2k.json"))
	if err != nil {
		t.Fatal(err)
	}
	msgs := []Message{{"user", "Hello there"}, {"assistant", "Hi!"}}
	ids, err := tok.EncodeChat(msgs, true)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := tok.ChatTemplate().Render(msgs, true)
	if !slices.Equal(ids, tok.EncodeSpecial(text)) {
		t.Errorf("EncodeChat differs from EncodeSpecial(Render) for plain contents")
	}
	if err := tok.SetChatTemplate(&ChatTemplate{Stop: []string{"<|nope|>"}}); err == nil {
		t.Error("stop token outside the vocabulary accepted")
	}
	if err := tok.SetChatTemplate(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tok.EncodeChat(msgs, true); !errors.Is(err, ErrNoChatTemplate) {
		t.Errorf("no template: %v", err)
	}
}
