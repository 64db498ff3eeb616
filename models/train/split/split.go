package split

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/neuro-go/neuro/models/tokenizers"
	"github.com/neuro-go/neuro/tokenizer"
)

// Record is heldout.json: where each file of the corpus is split.
type Record struct {
	Rule    string `json:"rule"`
	Sources []File `json:"sources"`
}

// File is one corpus file in the record.
type File struct {
	File       string `json:"file"` // relative to the corpus directory
	Size       int64  `json:"size"`
	TrainBytes int64  `json:"train_bytes"`
	SHA256     string `json:"sha256"`
}

// ReadRecord reads a heldout.json.
func ReadRecord(path string) (*Record, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("split: %s: %w", path, err)
	}
	for _, f := range r.Sources {
		if f.TrainBytes < 0 || f.TrainBytes > f.Size {
			return nil, fmt.Errorf("split: %s: %s: train_bytes %d outside [0, %d]", path, f.File, f.TrainBytes, f.Size)
		}
	}
	return &r, nil
}

// Part is one split of a source: the token ids and what they encode.
type Part struct {
	IDs []int
	// TextBytes counts the bytes of corpus text the ids encode (the
	// documents, or the turns' texts): the denominator of bits per byte.
	TextBytes int64
	// RenderedBytes counts the bytes of the decoded ids, template and
	// separators included.
	RenderedBytes int64
	Documents     int
}

// Source is one source's files, in the record's order, and its parts.
type Source struct {
	Name       string
	Files      []string
	Train, Val Part
}

// Options say what Encode encodes. The zero value encodes both parts.
type Options struct {
	// HeldOutOnly leaves every Train part empty (the files are still
	// read and checked whole).
	HeldOutOnly bool
}

// Encode encodes the corpus in dir as rec splits it, with the named
// tokenizer (tokenizers.Load) and the project chat template. The
// sources are sorted by name.
func Encode(dir string, rec *Record, tokName string, opts *Options) ([]*Source, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	tok, err := tokenizers.Load(tokName)
	if err != nil {
		return nil, err
	}
	if tok.VocabSize() > 1<<16 {
		return nil, fmt.Errorf("split: vocabulary of %d does not fit uint16", tok.VocabSize())
	}
	if err := tok.SetChatTemplate(tokenizer.NeuroChatTemplate()); err != nil {
		return nil, err
	}
	eot, ok := tok.SpecialID(tokenizer.EndOfText)
	if !ok {
		return nil, errors.New("split: the tokenizer has no <|endoftext|>")
	}
	byName := map[string]*Source{}
	for _, f := range rec.Sources {
		data, err := os.ReadFile(filepath.Join(dir, f.File))
		if err != nil {
			return nil, err
		}
		if int64(len(data)) != f.Size {
			return nil, fmt.Errorf("split: %s: size %d, heldout.json says %d", f.File, len(data), f.Size)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.SHA256 {
			return nil, fmt.Errorf("split: %s: SHA-256 differs from heldout.json", f.File)
		}
		name := SourceName(f.File)
		s := byName[name]
		if s == nil {
			s = &Source{Name: name}
			byName[name] = s
		}
		s.Files = append(s.Files, f.File)
		for i, p := range []*Part{&s.Train, &s.Val} {
			if i == 0 && o.HeldOutOnly {
				continue
			}
			text := data[:f.TrainBytes]
			if i == 1 {
				text = data[f.TrainBytes:]
			}
			if strings.HasSuffix(f.File, ".jsonl") {
				err = addDialogues(tok, eot, p, text)
			} else {
				addDocument(tok, eot, p, text)
			}
			if err != nil {
				return nil, fmt.Errorf("split: %s: %w", f.File, err)
			}
		}
	}
	out := make([]*Source, 0, len(byName))
	for _, s := range byName {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// SourceName groups the books under extra/*.txt as "books"; any other file
// is its own source.
func SourceName(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	if strings.HasPrefix(file, "extra/") && strings.HasSuffix(file, ".txt") {
		return "books"
	}
	return base
}

func addDocument(tok *tokenizer.Tokenizer, eot int, p *Part, text []byte) {
	if len(text) == 0 {
		return
	}
	n0 := len(p.IDs)
	p.IDs = tok.AppendEncode(p.IDs, string(text))
	p.IDs = append(p.IDs, eot)
	p.TextBytes += int64(len(text))
	p.RenderedBytes += int64(len(tok.Decode(p.IDs[n0:])))
	p.Documents++
}

type conversation struct {
	Turns []struct {
		Speaker string `json:"speaker"`
		Text    string `json:"text"`
	} `json:"turns"`
}

// addDialogues renders each line of text, one conversation, as a chat.
func addDialogues(tok *tokenizer.Tokenizer, eot int, p *Part, text []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var c conversation
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if len(c.Turns) == 0 {
			continue
		}
		msgs := make([]tokenizer.Message, 0, len(c.Turns))
		first := c.Turns[0].Speaker
		for _, t := range c.Turns {
			role := "assistant"
			switch {
			case t.Speaker == "user" || t.Speaker == "assistant":
				role = t.Speaker
			case t.Speaker == first:
				role = "user"
			}
			msgs = append(msgs, tokenizer.Message{Role: role, Content: t.Text})
			p.TextBytes += int64(len(t.Text))
		}
		ids, err := tok.EncodeChat(msgs, false)
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		n0 := len(p.IDs)
		p.IDs = append(append(p.IDs, ids...), eot)
		p.RenderedBytes += int64(len(tok.Decode(p.IDs[n0:])))
		p.Documents++
	}
	return sc.Err()
}
