package tokenizer

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzLoadGPT2: any encoder.json and vocab.bpe give a tokenizer or an
// error, never a panic; a tokenizer that loads round-trips text when
// every byte has a token, and saves to a tokenizer.json that loads.
func FuzzLoadGPT2(f *testing.F) {
	v := fullByteVocab()
	f.Add([]byte("{"+v+`,"ab":256}`), []byte("#version: 0.2\na b\n"))
	f.Add([]byte("{"+v+`,"ab":256,"abb":257,"<|endoftext|>":258}`), []byte("#version: 0.2\r\na b\r\nab b\r\n"))
	f.Add([]byte("{"+v+"}"), []byte(""))
	f.Add([]byte(minimalVocab), []byte("a b\n\nĠ a\n"))
	f.Add([]byte(`{"a":0,"b":0,"ab":-1}`), []byte("a b\nb a\na b\n"))
	f.Add([]byte(`{"<|x|>":1e10}`), []byte("abc\n"))
	f.Add([]byte(`{"a":"b"}`), []byte("a  b\n"))
	f.Fuzz(func(t *testing.T, enc, bpe []byte) {
		tok, err := LoadGPT2(bytes.NewReader(enc), bytes.NewReader(bpe))
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
		for _, s := range []string{"hello <|endoftext|> world", "a b ab", "\xff"} {
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
