package tokenizer

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

const minimalVocab = `{"Ġ":0,"a":1,"b":2,"ab":3}`

// tokJSON builds a tokenizer.json around a model object.
func tokJSON(model string, extra string) string {
	return `{"added_tokens":[],"normalizer":null,"pre_tokenizer":{"type":"ByteLevel"},"decoder":{"type":"ByteLevel"},"model":` + model + extra + `}`
}

// fullByteVocab returns the 256 byte symbols as a JSON object body.
func fullByteVocab() string {
	var b strings.Builder
	for i := 0; i < 256; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(q(byteRuneStrings[i]) + ":" + itoa(i))
	}
	return b.String()
}

func TestLoadRefusesBadInput(t *testing.T) {
	v := fullByteVocab()
	good := tokJSON(`{"type":"BPE","vocab":{`+v+`,"ab":256},"merges":["a b"]}`, "")
	if _, err := Load(strings.NewReader(good)); err != nil {
		t.Fatalf("good file refused: %v", err)
	}
	cases := []struct {
		name, json, field string
		kind              error
	}{
		{"not json", `{"model":`, "(top level)", ErrFormat},
		{"model missing", `{"pre_tokenizer":{"type":"ByteLevel"}}`, "model", ErrFormat},
		{"vocab wrong type", tokJSON(`{"type":"BPE","vocab":[1,2],"merges":[]}`, ""), "model.vocab", ErrFormat},
		{"vocab id string", tokJSON(`{"type":"BPE","vocab":{"a":"x"},"merges":[]}`, ""), "model.vocab", ErrFormat},
		{"vocab id float", tokJSON(`{"type":"BPE","vocab":{"a":1.5},"merges":[]}`, ""), "model.vocab", ErrFormat},
		{"merges wrong type", tokJSON(`{"type":"BPE","vocab":{`+v+`},"merges":{"a":1}}`, ""), "model.merges", ErrFormat},
		{"merge item number", tokJSON(`{"type":"BPE","vocab":{`+v+`},"merges":[7]}`, ""), "model.merges[0]", ErrFormat},
		{"merge one part", tokJSON(`{"type":"BPE","vocab":{`+v+`},"merges":["ab"]}`, ""), "model.merges[0]", ErrFormat},
		{"merge triple", tokJSON(`{"type":"BPE","vocab":{`+v+`},"merges":[["a","b","c"]]}`, ""), "model.merges[0]", ErrFormat},
		{"merge unknown token", tokJSON(`{"type":"BPE","vocab":{`+v+`,"ab":256},"merges":["a b","a zz"]}`, ""), "model.merges[1]", ErrFormat},
		{"merge result unknown", tokJSON(`{"type":"BPE","vocab":{`+v+`},"merges":["a b"]}`, ""), "model.merges[0]", ErrFormat},
		{"duplicate ids", tokJSON(`{"type":"BPE","vocab":{`+v+`,"ab":5},"merges":[]}`, ""), "model.vocab", ErrFormat},
		{"negative id", tokJSON(`{"type":"BPE","vocab":{`+v+`,"ab":-1},"merges":[]}`, ""), "model.vocab", ErrTooLarge},
		{"huge id", tokJSON(`{"type":"BPE","vocab":{`+v+`,"ab":2000000000},"merges":[]}`, ""), "model.vocab", ErrTooLarge},
		{"sparse ids", tokJSON(`{"type":"BPE","vocab":{`+v+`,"ab":900000},"merges":[]}`, ""), "model.vocab", ErrTooLarge},
		{"missing bytes", tokJSON(`{"type":"BPE","vocab":`+minimalVocab+`,"merges":[]}`, ""), "model.vocab", ErrFormat},
		{"wordpiece", tokJSON(`{"type":"WordPiece","vocab":{`+v+`}}`, ""), "model.type", ErrUnsupported},
		{"dropout", tokJSON(`{"type":"BPE","dropout":0.1,"vocab":{`+v+`},"merges":[]}`, ""), "model.dropout", ErrUnsupported},
		{"byte fallback", tokJSON(`{"type":"BPE","byte_fallback":true,"vocab":{`+v+`},"merges":[]}`, ""), "model.byte_fallback", ErrUnsupported},
		{"normalizer", `{"normalizer":{"type":"NFC"},"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{` + v + `},"merges":[]}}`, "normalizer", ErrUnsupported},
		{"no pre-tokenizer", `{"model":{"type":"BPE","vocab":{` + v + `},"merges":[]}}`, "pre_tokenizer", ErrUnsupported},
		{"metaspace", `{"pre_tokenizer":{"type":"Metaspace"},"model":{"type":"BPE","vocab":{` + v + `},"merges":[]}}`, "pre_tokenizer.type", ErrUnsupported},
		{"decoder", `{"pre_tokenizer":{"type":"ByteLevel"},"decoder":{"type":"WordPiece"},"model":{"type":"BPE","vocab":{` + v + `},"merges":[]}}`, "decoder.type", ErrUnsupported},
		{"added wrong type", `{"added_tokens":[{"id":"x","content":"<s>"}],"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{` + v + `},"merges":[]}}`, "added_tokens[0].id", ErrFormat},
		{"added no content", `{"added_tokens":[{"id":300}],"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{` + v + `},"merges":[]}}`, "added_tokens[0].content", ErrFormat},
		{"added dup id", `{"added_tokens":[{"id":300,"content":"<s>"},{"id":300,"content":"</s>"}],"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{` + v + `},"merges":[]}}`, "added_tokens", ErrFormat},
		{"added clashes", `{"added_tokens":[{"id":3,"content":"<s>"}],"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{` + v + `},"merges":[]}}`, "added_tokens", ErrFormat},
		{"chat stop unknown", tokJSON(`{"type":"BPE","vocab":{`+v+`},"merges":[]}`, `,"neuro_chat_template":{"stop":["<|nope|>"]}`), "neuro_chat_template", ErrFormat},
		{"chat wrong type", tokJSON(`{"type":"BPE","vocab":{`+v+`},"merges":[]}`, `,"neuro_chat_template":{"stop":"x"}`), "neuro_chat_template.stop", ErrFormat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(c.json))
			if err == nil {
				t.Fatal("accepted")
			}
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FieldError", err)
			}
			if fe.Field != c.field {
				t.Errorf("field %q, want %q (error: %v)", fe.Field, c.field, err)
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("error %v does not wrap %v", err, c.kind)
			}
			if !strings.HasPrefix(err.Error(), "tokenizer: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestLoadRefusesHugeVocabularyCheaply(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"pre_tokenizer":{"type":"ByteLevel"},"model":{"type":"BPE","vocab":{`)
	for i := 0; i <= MaxVocabSize; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"t`)
		b.WriteString(itoa(i))
		b.WriteString(`":`)
		b.WriteString(itoa(i))
	}
	b.WriteString(`},"merges":[]}}`)
	_, err := Load(&b)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error %v, want ErrTooLarge", err)
	}
}

func TestLoadGPT2BadInput(t *testing.T) {
	v := "{" + fullByteVocab() + `,"ab":256}`
	if _, err := LoadGPT2(strings.NewReader(v), strings.NewReader("#version: 0.2\na b\n")); err != nil {
		t.Fatal(err)
	}
	_, err := LoadGPT2(strings.NewReader(v), strings.NewReader("#version: 0.2\na b\nabc\n"))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "vocab.bpe line 3" {
		t.Errorf("bad merge line: %v", err)
	}
	_, err = LoadGPT2(strings.NewReader(`{"a":"b"}`), strings.NewReader(""))
	if !errors.As(err, &fe) || fe.Field != "encoder.json" {
		t.Errorf("bad encoder.json: %v", err)
	}
}

// FuzzLoad: any bytes give a tokenizer or an error, never a panic; a
// tokenizer that loads round-trips text and saves to a file that loads.
func FuzzLoad(f *testing.F) {
	v := fullByteVocab()
	f.Add([]byte(tokJSON(`{"type":"BPE","vocab":{`+v+`,"ab":256},"merges":["a b"]}`, "")))
	f.Add([]byte(tokJSON(`{"type":"BPE","vocab":{`+v+`,"ab":256},"merges":[["a","b"]]}`, `,"neuro_chat_template":{"stop":["a"]}`)))
	f.Add([]byte(`{"added_tokens":[{"id":257,"content":"<s>","special":true,"lstrip":true}],"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":true},"model":{"vocab":{` + v + `},"merges":[]}}`))
	// Small seeds only: the fuzzer minimises each new input it finds, which
	// takes minutes for a file of many kilobytes.
	f.Add([]byte(`{"added_tokens":[{"id":258,"content":"x y","rstrip":true}],"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"ByteLevel"}]},"model":{"type":"BPE","ignore_merges":true,"vocab":{` + v + `,"ab":256,"abb":257},"merges":["a b","ab b"]}}`))
	f.Add([]byte(`{"model":{"vocab":{"a":1e9}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := Load(bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "tokenizer: ") {
				t.Fatalf("error without prefix: %v", err)
			}
			return
		}
		exact := tok.unkID < 0 && !tok.addPrefixSpace
		for _, a := range tok.added {
			exact = exact && !a.LStrip && !a.RStrip
		}
		for _, s := range []string{"hello <s> world", "a b ab", "\xff"} {
			if d := tok.Decode(tok.EncodeSpecial(s)); d != s && exact {
				t.Fatalf("round trip %q -> %q", s, d)
			}
		}
		var buf bytes.Buffer
		if err := tok.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(&buf); err != nil {
			t.Fatalf("saved tokenizer does not load: %v\n%s", err, buf.Bytes())
		}
	})
}
