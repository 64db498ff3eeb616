package own

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/tokenizer"
)

const story = "Once upon a time there was a little cat.\nThe cat liked milk and the cat liked fish.\n" +
	"One day the cat saw a fish in the river.\nThe cat jumped in, and the fish swam away.\n"

func TestParseFormat(t *testing.T) {
	for _, c := range []struct {
		flag, data string
		want       Format
	}{
		{"auto", "\n\n" + `{"messages":[{"role":"user","content":"hi"}]}` + "\n", Chat},
		{"auto", `{"text":"hi"}`, Text},
		{"", story, Text},
		{"text", `{"messages":[]}`, Text},
		{"chat", story, Chat},
	} {
		got, err := ParseFormat(c.flag, []byte(c.data))
		if err != nil || got != c.want {
			t.Errorf("ParseFormat(%q, %.20q) = %q, %v; want %q", c.flag, c.data, got, err, c.want)
		}
	}
	if _, err := ParseFormat("csv", nil); err == nil || !strings.Contains(err.Error(), `"csv"`) {
		t.Errorf("ParseFormat(csv): %v", err)
	}
}

func TestSplit(t *testing.T) {
	data := []byte(story)
	last := "The cat jumped in, and the fish swam away.\n"
	for _, c := range []struct {
		valid     int
		wantValid string
	}{
		{40, story[len(story)-40:]}, // no line starts in the last 40 bytes: from the byte 40 from the end
		{50, last},                  // from the line that starts in them
		{len(data) - 1, story[len("Once upon a time there was a little cat.\n"):]},
	} {
		train, valid, err := Split(data, Text, c.valid)
		if err != nil {
			t.Fatal(err)
		}
		if string(valid) != c.wantValid || string(train)+string(valid) != story {
			t.Errorf("Split(%d): %q + %q, want validation %q", c.valid, train, valid, c.wantValid)
		}
	}
	// A character is never cut.
	train, valid, err := Split([]byte("ab\u00e9\u00e9\u00e9"), Text, 3)
	if err != nil || string(valid) != "\u00e9" || string(train) != "ab\u00e9\u00e9" {
		t.Errorf("Split on characters: %q, %q, %v", train, valid, err)
	}
	for _, c := range []struct {
		data  string
		valid int
		want  string
	}{
		{"abc\xffdef", 3, "byte 3"},
		{story, 0, "does not fit"},
		{story, len(story), "does not fit"},
		{"   \nxyz", 3, "no training"},
	} {
		if _, _, err := Split([]byte(c.data), Text, c.valid); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Split(%.20q, %d): %v, want an error saying %q", c.data, c.valid, err, c.want)
		}
	}
}

func TestSplitChat(t *testing.T) {
	a := `{"messages":[{"role":"user","content":"Hello there"},{"role":"assistant","content":"Hi!"}]}` + "\n"
	b := `{"messages":[{"role":"user","content":"Bye"},{"role":"assistant","content":"See you."}]}` + "\n"
	data := []byte(a + a + b)
	// The last conversation starts 10 bytes from the end: it is held out whole.
	train, valid, err := Split(data, Chat, 10)
	if err != nil || string(valid) != b || string(train) != a+a {
		t.Fatalf("Split(chat, 10): %q, %q, %v", train, valid, err)
	}
	train, valid, err = Split(data, Chat, len(b)+1)
	if err != nil || string(valid) != b || string(train) != a+a {
		t.Fatalf("Split(chat, %d): %q, %q, %v", len(b)+1, train, valid, err)
	}
	if _, _, err := Split([]byte(b), Chat, 10); err == nil {
		t.Fatal("one conversation split into training and validation")
	}
}

// TestTokenizerRoundTrip: the trained tokenizer saves as tokenizer.json,
// loads back through package tokenizer with the project's special tokens
// and chat template, encodes as before and decodes every text exactly.
func TestTokenizerRoundTrip(t *testing.T) {
	train := []byte(strings.Repeat(story, 20) + "<|endoftext|> is plain text here.\n")
	tok, err := TrainTokenizer(context.Background(), train, Text, 300)
	if err != nil {
		t.Fatal(err)
	}
	if tok.VocabSize() != 300 {
		t.Fatalf("%d ids, want 300", tok.VocabSize())
	}
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := tok.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := tokenizer.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.VocabSize() != tok.VocabSize() || back.NumMerges() != tok.NumMerges() {
		t.Fatalf("loaded %d ids, %d merges; trained %d, %d", back.VocabSize(), back.NumMerges(), tok.VocabSize(), tok.NumMerges())
	}
	for i, s := range tokenizer.NeuroSpecialTokens() {
		if id, ok := back.SpecialID(s); !ok || id != i {
			t.Errorf("special token %s: id %d, %v; want %d", s, id, ok, i)
		}
	}
	if back.ChatTemplate() == nil || back.ChatTemplate().User != tokenizer.NeuroChatTemplate().User {
		t.Errorf("chat template %+v", back.ChatTemplate())
	}
	for _, text := range []string{story, "A fish, a cat: the river! \u00e9t\u00e9 \U0001F41F", "<|end|> typed by a user"} {
		ids := tok.Encode(text)
		if got := back.Encode(text); !slices.Equal(got, ids) {
			t.Errorf("%q: loaded tokenizer encodes %v, trained one %v", text, got, ids)
		}
		if got := back.Decode(ids); got != text {
			t.Errorf("%q decodes to %q", text, got)
		}
	}
	if n := len(tok.Encode(story)); n >= len(story)/2 {
		t.Errorf("%d tokens for %d bytes of training text: the merges were not learnt", n, len(story))
	}
}

func TestEncodeText(t *testing.T) {
	tok, err := TrainTokenizer(context.Background(), []byte(story), Text, 280)
	if err != nil {
		t.Fatal(err)
	}
	part := []byte("The cat saw <|endoftext|>.\n")
	p, err := Encode(tok, part, Text)
	if err != nil {
		t.Fatal(err)
	}
	want := append(tok.Encode(string(part)), 0)
	if !slices.Equal(p.IDs, want) || p.TextBytes != int64(len(part)) || p.Documents != 1 {
		t.Fatalf("Encode: %+v, want ids %v and %d text bytes", p, want, len(part))
	}
	if p.RenderedBytes != int64(len(part)+len(tokenizer.EndOfText)) {
		t.Errorf("rendered bytes %d", p.RenderedBytes)
	}
	if slices.Contains(p.IDs[:len(p.IDs)-1], 0) {
		t.Error("<|endoftext|> typed in the text became the special token")
	}
}

func TestEncodeChat(t *testing.T) {
	data := []byte(`{"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Is the cat here?"},{"role":"assistant","content":"Yes."}]}` + "\n\n" +
		`{"messages":[{"role":"user","content":"And the fish?"},{"role":"assistant","content":"It swam away."}]}` + "\n")
	tok, err := TrainTokenizer(context.Background(), data, Chat, 280)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Encode(tok, data, Chat)
	if err != nil {
		t.Fatal(err)
	}
	if p.Documents != 2 || p.TextBytes != int64(len("Be brief.Is the cat here?Yes.And the fish?It swam away.")) {
		t.Fatalf("%d conversations, %d text bytes", p.Documents, p.TextBytes)
	}
	want := "<|system|>\nBe brief.<|end|>\n<|user|>\nIs the cat here?<|end|>\n<|assistant|>\nYes.<|end|>\n<|endoftext|>" +
		"<|user|>\nAnd the fish?<|end|>\n<|assistant|>\nIt swam away.<|end|>\n<|endoftext|>"
	if got := tok.Decode(p.IDs); got != want {
		t.Fatalf("rendered\n%q\nwant\n%q", got, want)
	}
	if p.RenderedBytes != int64(len(want)) {
		t.Errorf("rendered bytes %d, want %d", p.RenderedBytes, len(want))
	}
	// The template's markers are single special tokens.
	end, _ := tok.SpecialID(tokenizer.End)
	if n := len(slices.DeleteFunc(slices.Clone(p.IDs), func(id int) bool { return id != end })); n != 5 {
		t.Errorf("%d <|end|> tokens, want 5: %v", n, p.IDs)
	}
}

func TestConversationsErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\nnot json\n", "chat line 2"},
		{`{"messages":[]}`, "line 1: no messages"},
		{`{"turns":[{"speaker":"a","text":"hi"}]}`, "line 1: no messages"},
		{`{"messages":[{"role":"user","content":"hi"},{"role":"bot","content":"x"}]}`, `message 1: role "bot"`},
		{`{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, "chat line 1"},
	} {
		if _, err := Conversations([]byte(c.data)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Conversations(%.30q): %v, want an error saying %q", c.data, err, c.want)
		}
	}
	if _, err := TrainTokenizer(context.Background(), []byte("x"), Text, MaxVocab+1); err == nil || !strings.Contains(err.Error(), "uint16") {
		t.Errorf("vocabulary over uint16: %v", err)
	}
}

// FuzzPrepare: any input either is refused with an error or splits,
// trains a tokenizer and encodes both parts, the text parts decoding back
// to the input.
func FuzzPrepare(f *testing.F) {
	f.Add([]byte(story), 30, false)
	f.Add([]byte(`{"messages":[{"role":"user","content":"a"}]}`+"\n"+`{"messages":[{"role":"assistant","content":"b"}]}`), 5, true)
	f.Add([]byte("\xff\n\n"), 1, false)
	f.Add([]byte("{\"messages\":[{\"role\":\"user\",\"content\":\"<|end|>\"}]}\n{}\n"), 3, true)
	f.Fuzz(func(t *testing.T, data []byte, validBytes int, chat bool) {
		if len(data) > 4096 {
			return
		}
		format := Text
		if chat {
			format = Chat
		}
		train, valid, err := Split(data, format, validBytes)
		if err != nil {
			return
		}
		tok, err := TrainTokenizer(context.Background(), train, format, 300)
		if err != nil {
			return
		}
		for _, part := range [][]byte{train, valid} {
			p, err := Encode(tok, part, format)
			if err != nil {
				continue
			}
			if format == Text && tok.Decode(p.IDs) != string(part)+tokenizer.EndOfText {
				t.Fatalf("%q does not decode back", part)
			}
		}
	})
}
