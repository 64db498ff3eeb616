package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxFileSize bounds the bytes Load reads. The largest published
// tokenizer.json files are a few tens of megabytes.
const MaxFileSize = 256 << 20

// chatTemplateKey is the top-level key of tokenizer.json that holds the
// chat template. Hugging Face libraries ignore unknown top-level keys.
const chatTemplateKey = "neuro_chat_template"

type fileJSON struct {
	AddedTokens   json.RawMessage `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         json.RawMessage `json:"model"`
	Chat          json.RawMessage `json:"neuro_chat_template"`
}

type modelJSON struct {
	Type                    *string         `json:"type"`
	Dropout                 *float64        `json:"dropout"`
	UnkToken                *string         `json:"unk_token"`
	ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string         `json:"end_of_word_suffix"`
	ByteFallback            bool            `json:"byte_fallback"`
	IgnoreMerges            bool            `json:"ignore_merges"`
	Vocab                   json.RawMessage `json:"vocab"`
	Merges                  json.RawMessage `json:"merges"`
}

type componentJSON struct {
	Type           string            `json:"type"`
	AddPrefixSpace *bool             `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
	Pretokenizers  []json.RawMessage `json:"pretokenizers"`
	Pattern        *struct {
		Regex  *string `json:"Regex"`
		String *string `json:"String"`
	} `json:"pattern"`
	Behavior string `json:"behavior"`
	Invert   bool   `json:"invert"`
}

// LoadFile reads a tokenizer from a file; see Load.
func LoadFile(path string) (*Tokenizer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer f.Close()
	t, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	return t, nil
}

// Load reads a Hugging Face tokenizer.json that describes a byte-level BPE:
// model type BPE (merges in the "a b" string form or the ["a","b"] pair
// form), a ByteLevel pre-tokenizer (or a Sequence of the GPT-2 Split and a
// ByteLevel), no normalizer, a ByteLevel or no decoder and post-processor,
// and added_tokens. A chat template stored under "neuro_chat_template" is
// loaded too. Anything else is refused with a *FieldError naming the field,
// wrapping ErrFormat, ErrUnsupported or ErrTooLarge.
func Load(r io.Reader) (*Tokenizer, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: reading tokenizer.json: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, fieldErr(ErrTooLarge, "(file)", "more than %d bytes", MaxFileSize)
	}
	return parseJSON(data)
}

func jsonErr(field string, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		f := field
		if te.Field != "" {
			f = field + "." + te.Field
		}
		return &FieldError{Field: f, Msg: fmt.Sprintf("wrong type: JSON %s where %s was expected", te.Value, goTypeName(te.Type.String())), Err: ErrFormat}
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &FieldError{Field: field, Msg: fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, err), Err: ErrFormat}
	}
	return &FieldError{Field: field, Msg: err.Error(), Err: ErrFormat}
}

func goTypeName(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string", t == "*string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "[]"), strings.HasPrefix(t, "[2]"):
		return "an array"
	case strings.HasPrefix(t, "map"), strings.HasPrefix(t, "tokenizer."), strings.HasPrefix(t, "struct"):
		return "an object"
	}
	return t
}

func isNull(m json.RawMessage) bool {
	m = bytes.TrimSpace(m)
	return len(m) == 0 || string(m) == "null"
}

func parseJSON(data []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, jsonErr("(top level)", err)
	}
	if isNull(f.Model) {
		return nil, fieldErr(ErrFormat, "model", "missing")
	}
	var m modelJSON
	if err := json.Unmarshal(f.Model, &m); err != nil {
		return nil, jsonErr("model", err)
	}
	if m.Type != nil && *m.Type != "BPE" {
		return nil, fieldErr(ErrUnsupported, "model.type", "%q: only BPE models are supported", *m.Type)
	}
	if m.Dropout != nil && *m.Dropout != 0 {
		return nil, fieldErr(ErrUnsupported, "model.dropout", "BPE dropout %v is not supported", *m.Dropout)
	}
	if m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "" {
		return nil, fieldErr(ErrUnsupported, "model.continuing_subword_prefix", "%q: not a byte-level BPE", *m.ContinuingSubwordPrefix)
	}
	if m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "" {
		return nil, fieldErr(ErrUnsupported, "model.end_of_word_suffix", "%q: not a byte-level BPE", *m.EndOfWordSuffix)
	}
	if m.ByteFallback {
		return nil, fieldErr(ErrUnsupported, "model.byte_fallback", "byte fallback is for non-byte-level BPE")
	}
	spec := buildSpec{ignoreMerges: m.IgnoreMerges, mergesField: "model.merges"}
	if m.UnkToken != nil {
		spec.unkToken = *m.UnkToken
	}
	if isNull(m.Vocab) {
		return nil, fieldErr(ErrFormat, "model.vocab", "missing")
	}
	if err := checkCount(m.Vocab, "model.vocab"); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(m.Vocab, &spec.vocab); err != nil {
		return nil, jsonErr("model.vocab", err)
	}
	if !isNull(m.Merges) {
		if err := checkCount(m.Merges, "model.merges"); err != nil {
			return nil, err
		}
		merges, err := parseMerges(m.Merges)
		if err != nil {
			return nil, err
		}
		spec.merges = merges
	}
	if !isNull(f.AddedTokens) {
		if err := checkCount(f.AddedTokens, "added_tokens"); err != nil {
			return nil, err
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(f.AddedTokens, &raw); err != nil {
			return nil, jsonErr("added_tokens", err)
		}
		for i, r := range raw {
			var a struct {
				ID      *int    `json:"id"`
				Content *string `json:"content"`
				AddedToken
			}
			field := fmt.Sprintf("added_tokens[%d]", i)
			if err := json.Unmarshal(r, &a); err != nil {
				return nil, jsonErr(field, err)
			}
			if a.ID == nil {
				return nil, fieldErr(ErrFormat, field+".id", "missing")
			}
			if a.Content == nil {
				return nil, fieldErr(ErrFormat, field+".content", "missing")
			}
			a.AddedToken.ID, a.AddedToken.Content = *a.ID, *a.Content
			spec.added = append(spec.added, a.AddedToken)
		}
	}
	if !isNull(f.Normalizer) {
		var c componentJSON
		_ = json.Unmarshal(f.Normalizer, &c)
		return nil, fieldErr(ErrUnsupported, "normalizer", "type %q: normalizers are not supported", c.Type)
	}
	aps, err := parsePreTokenizer(f.PreTokenizer)
	if err != nil {
		return nil, err
	}
	spec.addPrefixSpace = aps
	for _, part := range []struct {
		field string
		raw   json.RawMessage
	}{{"post_processor", f.PostProcessor}, {"decoder", f.Decoder}} {
		if isNull(part.raw) {
			continue
		}
		var c componentJSON
		if err := json.Unmarshal(part.raw, &c); err != nil {
			return nil, jsonErr(part.field, err)
		}
		if c.Type != "ByteLevel" {
			return nil, fieldErr(ErrUnsupported, part.field+".type", "%q: only ByteLevel is supported", c.Type)
		}
	}
	if !isNull(f.Chat) {
		var c ChatTemplate
		if err := json.Unmarshal(f.Chat, &c); err != nil {
			return nil, jsonErr(chatTemplateKey, err)
		}
		spec.chat = &c
	}
	t, err := newTokenizer(spec)
	if err != nil {
		return nil, err
	}
	if t.chat != nil {
		if err := t.checkChatTemplate(t.chat); err != nil {
			return nil, &FieldError{Field: chatTemplateKey, Msg: err.Error(), Err: ErrFormat}
		}
	}
	return t, nil
}

// checkCount refuses a JSON array or object with more than MaxVocabSize
// elements before it is decoded, counting top-level commas.
func checkCount(raw json.RawMessage, field string) error {
	depth, n := 0, 0
	inStr, esc := false, false
	for _, c := range raw {
		switch {
		case inStr:
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		case c == ',' && depth == 1:
			n++
			if n >= MaxVocabSize {
				return fieldErr(ErrTooLarge, field, "more than %d entries", MaxVocabSize)
			}
		}
	}
	return nil
}

func parseMerges(raw json.RawMessage) ([][2]string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, jsonErr("model.merges", err)
	}
	out := make([][2]string, 0, len(items))
	for i, it := range items {
		it = bytes.TrimSpace(it)
		field := fmt.Sprintf("model.merges[%d]", i)
		switch {
		case len(it) > 0 && it[0] == '"':
			var s string
			if err := json.Unmarshal(it, &s); err != nil {
				return nil, jsonErr(field, err)
			}
			a, b, ok := strings.Cut(s, " ")
			if !ok || a == "" || b == "" || strings.Contains(b, " ") {
				return nil, fieldErr(ErrFormat, field, "%q is not two tokens separated by one space", s)
			}
			out = append(out, [2]string{a, b})
		case len(it) > 0 && it[0] == '[':
			var p []string
			if err := json.Unmarshal(it, &p); err != nil {
				return nil, jsonErr(field, err)
			}
			if len(p) != 2 {
				return nil, fieldErr(ErrFormat, field, "a pair has 2 tokens, not %d", len(p))
			}
			out = append(out, [2]string{p[0], p[1]})
		default:
			return nil, fieldErr(ErrFormat, field, "wrong type: want a string \"a b\" or a pair [\"a\", \"b\"]")
		}
	}
	return out, nil
}

// parsePreTokenizer accepts the pre-tokenizers that mean "GPT-2 split, then
// byte-level" and returns add_prefix_space.
func parsePreTokenizer(raw json.RawMessage) (bool, error) {
	if isNull(raw) {
		return false, fieldErr(ErrUnsupported, "pre_tokenizer", "missing: a byte-level BPE needs the ByteLevel pre-tokenizer")
	}
	var c componentJSON
	if err := json.Unmarshal(raw, &c); err != nil {
		return false, jsonErr("pre_tokenizer", err)
	}
	switch c.Type {
	case "ByteLevel":
		if c.UseRegex != nil && !*c.UseRegex {
			return false, fieldErr(ErrUnsupported, "pre_tokenizer.use_regex", "false: a ByteLevel pre-tokenizer without the GPT-2 split must follow a Split")
		}
		return c.AddPrefixSpace != nil && *c.AddPrefixSpace, nil
	case "Sequence":
		// [Split(GPT-2 pattern, Isolated), ByteLevel(use_regex: false)] or [ByteLevel].
		var parts []componentJSON
		for i, p := range c.Pretokenizers {
			var pc componentJSON
			if err := json.Unmarshal(p, &pc); err != nil {
				return false, jsonErr(fmt.Sprintf("pre_tokenizer.pretokenizers[%d]", i), err)
			}
			parts = append(parts, pc)
		}
		if len(parts) == 1 && parts[0].Type == "ByteLevel" && (parts[0].UseRegex == nil || *parts[0].UseRegex) {
			return parts[0].AddPrefixSpace != nil && *parts[0].AddPrefixSpace, nil
		}
		if len(parts) == 2 && parts[0].Type == "Split" && parts[1].Type == "ByteLevel" &&
			parts[0].Pattern != nil && parts[0].Pattern.Regex != nil && *parts[0].Pattern.Regex == GPT2Pattern &&
			parts[0].Behavior == "Isolated" && !parts[0].Invert && parts[1].UseRegex != nil && !*parts[1].UseRegex {
			return parts[1].AddPrefixSpace != nil && *parts[1].AddPrefixSpace, nil
		}
		return false, fieldErr(ErrUnsupported, "pre_tokenizer.pretokenizers", "only the GPT-2 split followed by ByteLevel is supported")
	}
	return false, fieldErr(ErrUnsupported, "pre_tokenizer.type", "%q: only ByteLevel is supported", c.Type)
}

// Save writes the tokenizer to path in the tokenizer.json format.
func (t *Tokenizer) Save(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	if err := t.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	return nil
}

// WriteJSON writes the tokenizer in the Hugging Face tokenizer.json format
// (merges in the pair form that tokenizers 0.20 and later write, vocabulary
// in id order) with the chat template, if any, under
// "neuro_chat_template". Load reads it back to an identical tokenizer.
func (t *Tokenizer) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	q := func(v any) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(v) // strings and AddedToken always encode
		return strings.TrimSuffix(b.String(), "\n")
	}
	bw.WriteString("{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  \"added_tokens\": [")
	for i, a := range t.added {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.WriteString("\n    ")
		bw.WriteString(q(a))
	}
	if len(t.added) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("],\n  \"normalizer\": null,\n")
	aps := "false"
	if t.addPrefixSpace {
		aps = "true"
	}
	fmt.Fprintf(bw, "  \"pre_tokenizer\": {\"type\": \"ByteLevel\", \"add_prefix_space\": %s, \"trim_offsets\": true, \"use_regex\": true},\n", aps)
	fmt.Fprintf(bw, "  \"post_processor\": {\"type\": \"ByteLevel\", \"add_prefix_space\": %s, \"trim_offsets\": false, \"use_regex\": true},\n", aps)
	fmt.Fprintf(bw, "  \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": true, \"trim_offsets\": true, \"use_regex\": true},\n")
	unk := "null"
	if t.unkID >= 0 {
		unk = q(t.tokens[t.unkID])
	}
	fmt.Fprintf(bw, "  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n    \"unk_token\": %s,\n    \"continuing_subword_prefix\": null,\n    \"end_of_word_suffix\": null,\n    \"fuse_unk\": false,\n    \"byte_fallback\": false,\n    \"ignore_merges\": %v,\n    \"vocab\": {", unk, t.ignoreMerges)
	ids := make([]int, 0, t.modelSize)
	for id := range t.tokens {
		if t.inModel[id] {
			ids = append(ids, id)
		}
	}
	for i, id := range ids {
		if i > 0 {
			bw.WriteString(",")
		}
		fmt.Fprintf(bw, "\n      %s: %d", q(t.tokens[id]), id)
	}
	bw.WriteString("\n    },\n    \"merges\": [")
	for i, m := range t.mergeList {
		if i > 0 {
			bw.WriteString(",")
		}
		fmt.Fprintf(bw, "\n      [%s, %s]", q(t.tokens[m[0]]), q(t.tokens[m[1]]))
	}
	bw.WriteString("\n    ]\n  }")
	if t.chat != nil {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.SetIndent("  ", "  ")
		if err := enc.Encode(t.chat); err != nil {
			return fmt.Errorf("tokenizer: chat template: %w", err)
		}
		fmt.Fprintf(bw, ",\n  %q: %s", chatTemplateKey, bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	}
	bw.WriteString("\n}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("tokenizer: writing tokenizer.json: %w", err)
	}
	return nil
}
