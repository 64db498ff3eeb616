// Command tokenize turns the project corpus into uint16 token arrays for
// training the neuro-1 language models.
//
// It reads every file that models/tokenizers/heldout.json lists, checks its
// size and SHA-256, and splits it where that file says: bytes [0,
// train_bytes) are the training part, the rest is held out (val). Plain
// text files are one document each, followed by <|endoftext|>. Dialogue
// .jsonl files are rendered conversation by conversation with the project
// chat template (tokenizer.NeuroChatTemplate): the first speaker of a
// conversation is the user, the other the assistant (Taskmaster's "user"
// and "assistant" keep their roles); each conversation is followed by
// <|endoftext|>.
//
// Sources group the files: the 58 books under extra/*.txt are one source,
// "books"; every other file is its own source, named after the file. For
// each source and split it writes <out>/<source>.<split>.u16 (little-endian
// uint16 ids) and, for all of them, <out>/index.json with the token counts
// and byte counts: text_bytes counts the bytes of corpus text the tokens
// encode (the document, or the turns' texts; the denominator of bits per
// byte), rendered_bytes the bytes of the decoded tokens, template and
// separators included.
//
// Usage, from models/train (the corpus is models/train/corpus):
//
//	go run ./tokenize -tokenizer neuro-bpe-1k    # -> data/bpe-1k
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/neuro-go/neuro/models/tokenizers"
	"github.com/neuro-go/neuro/tokenizer"
)

type heldout struct {
	Sources []struct {
		File       string `json:"file"`
		Size       int64  `json:"size"`
		TrainBytes int64  `json:"train_bytes"`
		SHA256     string `json:"sha256"`
	} `json:"sources"`
}

// part is one source's split: the ids and what they encode.
type part struct {
	ids           []int
	textBytes     int64
	renderedBytes int64
	documents     int
}

// splitIndex is one split of a source in index.json.
type splitIndex struct {
	File          string `json:"file"`
	Tokens        int    `json:"tokens"`
	TextBytes     int64  `json:"text_bytes"`
	RenderedBytes int64  `json:"rendered_bytes"`
	Documents     int    `json:"documents"`
}

type sourceIndex struct {
	Files []string   `json:"files"`
	Train splitIndex `json:"train"`
	Val   splitIndex `json:"val"`
}

type index struct {
	Tokenizer string                  `json:"tokenizer"`
	VocabSize int                     `json:"vocab_size"`
	Corpus    string                  `json:"corpus"`
	Rule      string                  `json:"rule"`
	Sources   map[string]*sourceIndex `json:"sources"`
}

func main() {
	corpus := flag.String("corpus", "corpus", "corpus directory")
	heldoutPath := flag.String("heldout", "../tokenizers/heldout.json", "held-out split record")
	tokName := flag.String("tokenizer", "neuro-bpe-1k", "tokenizer: neuro-bpe-1k, neuro-bpe-2k or neuro-bpe-4k")
	out := flag.String("out", "", "output directory (default data/<tokenizer>)")
	flag.Parse()
	if *out == "" {
		*out = filepath.Join("data", strings.TrimPrefix(*tokName, "neuro-"))
	}
	if err := run(*corpus, *heldoutPath, *tokName, *out); err != nil {
		log.Fatalf("tokenize: %v", err)
	}
}

func run(corpus, heldoutPath, tokName, out string) error {
	start := time.Now()
	tok, err := tokenizers.Load(tokName)
	if err != nil {
		return err
	}
	if tok.VocabSize() > 1<<16 {
		return fmt.Errorf("vocabulary of %d does not fit uint16", tok.VocabSize())
	}
	if err := tok.SetChatTemplate(tokenizer.NeuroChatTemplate()); err != nil {
		return err
	}
	eot, ok := tok.SpecialID(tokenizer.EndOfText)
	if !ok {
		return errors.New("tokenizer has no <|endoftext|>")
	}
	raw, err := os.ReadFile(heldoutPath)
	if err != nil {
		return err
	}
	var ho heldout
	if err := json.Unmarshal(raw, &ho); err != nil {
		return fmt.Errorf("%s: %w", heldoutPath, err)
	}
	var rule struct {
		Rule string `json:"rule"`
	}
	_ = json.Unmarshal(raw, &rule)
	idx := &index{Tokenizer: tokName, VocabSize: tok.VocabSize(), Corpus: corpus, Rule: rule.Rule, Sources: map[string]*sourceIndex{}}
	parts := map[string]*[2]part{}
	for _, s := range ho.Sources {
		data, err := os.ReadFile(filepath.Join(corpus, s.File))
		if err != nil {
			return err
		}
		if int64(len(data)) != s.Size {
			return fmt.Errorf("%s: size %d, heldout.json says %d", s.File, len(data), s.Size)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != s.SHA256 {
			return fmt.Errorf("%s: SHA-256 differs from heldout.json", s.File)
		}
		name := sourceName(s.File)
		p := parts[name]
		if p == nil {
			p = &[2]part{}
			parts[name] = p
			idx.Sources[name] = &sourceIndex{}
		}
		idx.Sources[name].Files = append(idx.Sources[name].Files, s.File)
		for i, text := range [2][]byte{data[:s.TrainBytes], data[s.TrainBytes:]} {
			if strings.HasSuffix(s.File, ".jsonl") {
				err = addDialogues(tok, eot, &p[i], text)
			} else {
				addDocument(tok, eot, &p[i], text)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", s.File, err)
			}
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(parts))
	for n := range parts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for i, split := range []string{"train", "val"} {
			p := &parts[n][i]
			file := n + "." + split + ".u16"
			if err := writeU16(filepath.Join(out, file), p.ids); err != nil {
				return err
			}
			si := splitIndex{File: file, Tokens: len(p.ids), TextBytes: p.textBytes, RenderedBytes: p.renderedBytes, Documents: p.documents}
			if i == 0 {
				idx.Sources[n].Train = si
			} else {
				idx.Sources[n].Val = si
			}
			log.Printf("%-24s %-5s %9d tokens %10d text bytes %6d documents", n, split, si.Tokens, si.TextBytes, si.Documents)
		}
	}
	js, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "index.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	log.Printf("wrote %s in %.1fs", out, time.Since(start).Seconds())
	return nil
}

// sourceName groups the books under extra/*.txt as "books"; any other file
// is its own source.
func sourceName(file string) string {
	base := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	if strings.HasPrefix(file, "extra/") && strings.HasSuffix(file, ".txt") {
		return "books"
	}
	return base
}

func addDocument(tok *tokenizer.Tokenizer, eot int, p *part, text []byte) {
	if len(text) == 0 {
		return
	}
	n0 := len(p.ids)
	p.ids = tok.AppendEncode(p.ids, string(text))
	p.ids = append(p.ids, eot)
	p.textBytes += int64(len(text))
	p.renderedBytes += int64(len(tok.Decode(p.ids[n0:])))
	p.documents++
}

type conversation struct {
	Turns []struct {
		Speaker string `json:"speaker"`
		Text    string `json:"text"`
	} `json:"turns"`
}

// addDialogues renders each line of text, one conversation, as a chat.
func addDialogues(tok *tokenizer.Tokenizer, eot int, p *part, text []byte) error {
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
			p.textBytes += int64(len(t.Text))
		}
		ids, err := tok.EncodeChat(msgs, false)
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		n0 := len(p.ids)
		p.ids = append(append(p.ids, ids...), eot)
		p.renderedBytes += int64(len(tok.Decode(p.ids[n0:])))
		p.documents++
	}
	return sc.Err()
}

func writeU16(path string, ids []int) error {
	buf := make([]byte, 2*len(ids))
	for i, id := range ids {
		binary.LittleEndian.PutUint16(buf[2*i:], uint16(id))
	}
	return os.WriteFile(path, buf, 0o644)
}
