// Package own prepares a user's own text for training a language model
// on it (own.py): it splits off the validation part, trains a byte-level
// BPE tokenizer on the rest with the project's special tokens and chat
// template, and encodes both parts as the built-in models' training data
// is encoded (package split).
//
// The input is plain text, one document, or chat JSONL: one conversation
// a line, {"messages":[{"role":"user","content":"..."},...]}, rendered
// with tokenizer.NeuroChatTemplate. Each document or conversation is
// followed by <|endoftext|>.
//
// The validation part is the end of the input: for text, from the start
// of the first line at or after len−validBytes (from that byte itself,
// moved to a character boundary, when no line starts there); for chat, the
// conversations that start at or after len−validBytes, at least the last.
// The tokenizer learns from the training part only: the whole of it as one
// document for text, each message's content as a document for chat.
package own

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/neuro-go/neuro/tokenizer"
)

// Format is the kind of input.
type Format string

const (
	Text Format = "text" // plain text, one document
	Chat Format = "chat" // JSONL, one {"messages":[...]} conversation a line
)

// MaxVocab is the largest vocabulary the training data holds: ids are
// written as uint16.
const MaxVocab = 1 << 16

// ParseFormat reads a -format flag: "text", "chat", or "auto" (or empty),
// which is chat when the first non-blank line of data is a JSON object
// with a "messages" key, and text otherwise.
func ParseFormat(s string, data []byte) (Format, error) {
	switch s {
	case string(Text), string(Chat):
		return Format(s), nil
	case "", "auto":
		line := data
		for len(line) > 0 {
			var rest []byte
			line, rest, _ = bytes.Cut(line, []byte("\n"))
			if len(bytes.TrimSpace(line)) > 0 {
				break
			}
			line = rest
		}
		var probe struct {
			Messages json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(line, &probe) == nil && probe.Messages != nil {
			return Chat, nil
		}
		return Text, nil
	}
	return "", fmt.Errorf("own: format %q: want text, chat or auto", s)
}

// DefaultValidBytes is the size of the validation part when none is
// given: 5% of the input, at most a megabyte.
func DefaultValidBytes(size int) int { return min(size/20, 1<<20) }

// Split returns the training and validation parts of data. It refuses
// text that is not UTF-8 and a cut that leaves either part empty.
func Split(data []byte, f Format, validBytes int) (train, valid []byte, err error) {
	if !utf8.Valid(data) {
		n := 0
		for n < len(data) {
			r, size := utf8.DecodeRune(data[n:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			n += size
		}
		return nil, nil, fmt.Errorf("own: the input is not UTF-8 text (byte %d)", n)
	}
	if validBytes <= 0 || validBytes >= len(data) {
		return nil, nil, fmt.Errorf("own: a validation part of %d bytes does not fit %d bytes of input with training text left", validBytes, len(data))
	}
	at := len(data) - validBytes
	cut := at
	if i := bytes.IndexByte(data[at-1:], '\n'); i >= 0 && at+i < len(data) {
		cut = at + i // one past the '\n' at or after at-1: the first line start at or after at
	} else if f == Chat {
		cut = bytes.LastIndexByte(data[:at], '\n') + 1 // the start of the last line
	} else {
		for cut < len(data) && !utf8.RuneStart(data[cut]) {
			cut++
		}
	}
	train, valid = data[:cut], data[cut:]
	if len(bytes.TrimSpace(train)) == 0 || len(bytes.TrimSpace(valid)) == 0 {
		return nil, nil, fmt.Errorf("own: splitting %d bytes %d from the end leaves no training or no validation text; give more text or another validation size", len(data), validBytes)
	}
	return train, valid, nil
}

// Conversations parses chat JSONL: one conversation a line, blank lines
// skipped. A line that is not {"messages":[...]} with at least one message
// of a known role is an error naming the line.
func Conversations(data []byte) ([][]tokenizer.Message, error) {
	var out [][]tokenizer.Message
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var c struct {
			Messages []tokenizer.Message `json:"messages"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("own: chat line %d: %w", line, err)
		}
		if len(c.Messages) == 0 {
			return nil, fmt.Errorf("own: chat line %d: no messages (want {\"messages\":[{\"role\":\"user\",\"content\":\"...\"},...]})", line)
		}
		for i, m := range c.Messages {
			switch m.Role {
			case "system", "developer", "user", "assistant":
			default:
				return nil, fmt.Errorf("own: chat line %d: message %d: role %q (want system, developer, user or assistant)", line, i, m.Role)
			}
		}
		out = append(out, c.Messages)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("own: chat line %d: %w", line+1, err)
	}
	return out, nil
}

// TrainTokenizer learns a byte-level BPE of vocab ids from the training
// part, with tokenizer.NeuroSpecialTokens as ids 0 to 4 and
// tokenizer.NeuroChatTemplate attached, as the project's tokenizers are
// made. A small text may give fewer ids than asked for.
func TrainTokenizer(ctx context.Context, train []byte, f Format, vocab int) (*tokenizer.Tokenizer, error) {
	if vocab > MaxVocab {
		return nil, fmt.Errorf("own: vocabulary %d: at most %d ids fit the training data's uint16", vocab, MaxVocab)
	}
	tr, err := tokenizer.NewTrainer(&tokenizer.TrainOptions{VocabSize: vocab, SpecialTokens: tokenizer.NeuroSpecialTokens(), ChatTemplate: tokenizer.NeuroChatTemplate()})
	if err != nil {
		return nil, err
	}
	if f == Chat {
		convs, err := Conversations(train)
		if err != nil {
			return nil, err
		}
		for _, c := range convs {
			for _, m := range c {
				tr.Add(m.Content)
			}
		}
	} else {
		tr.Add(string(train))
	}
	return tr.Train(ctx, 0)
}

// Part is one encoded part.
type Part struct {
	IDs []int
	// TextBytes counts the bytes of text the ids encode: the whole part
	// for text, the messages' contents for chat. It is the denominator of
	// bits per byte; template and <|endoftext|> tokens add none.
	TextBytes int64
	// RenderedBytes counts the bytes of the decoded ids, template and
	// separators included.
	RenderedBytes int64
	Documents     int
}

// Encode encodes one part with tok, which must have <|endoftext|> and, for
// chat, a chat template: the text followed by <|endoftext|>, or each
// conversation rendered by the template and followed by <|endoftext|>.
// Special-token text in the input stays plain text.
func Encode(tok *tokenizer.Tokenizer, part []byte, f Format) (*Part, error) {
	eot, ok := tok.SpecialID(tokenizer.EndOfText)
	if !ok {
		return nil, errors.New("own: the tokenizer has no <|endoftext|>")
	}
	p := &Part{}
	add := func(ids []int) {
		p.IDs = append(append(p.IDs, ids...), eot)
		p.Documents++
	}
	if f == Chat {
		convs, err := Conversations(part)
		if err != nil {
			return nil, err
		}
		for _, c := range convs {
			ids, err := tok.EncodeChat(c, false)
			if err != nil {
				return nil, fmt.Errorf("own: %w", err)
			}
			add(ids)
			for _, m := range c {
				p.TextBytes += int64(len(m.Content))
			}
		}
	} else {
		add(tok.Encode(string(part)))
		p.TextBytes = int64(len(part))
	}
	p.RenderedBytes = int64(len(tok.Decode(p.IDs)))
	return p, nil
}
