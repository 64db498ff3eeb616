// Command tokenize turns the project corpus into uint16 token arrays for
// training the neuro-1 language models.
//
// It encodes the corpus with package split (which says how the files are
// checked, split, rendered and grouped into sources) and writes, for each
// source and split, <out>/<source>.<split>.u16 (little-endian uint16 ids)
// and, for all of them, <out>/index.json with the token counts and byte
// counts: text_bytes counts the bytes of corpus text the tokens encode
// (the document, or the turns' texts; the denominator of bits per byte),
// rendered_bytes the bytes of the decoded tokens, template and separators
// included.
//
// Usage, from models/train (the corpus is models/train/corpus):
//
//	go run ./tokenize -tokenizer neuro-bpe-1k    # -> data/bpe-1k
//
// With -text it prepares a user's own text instead (package own, which
// own.py runs): it splits off the validation part, trains a tokenizer of
// -vocab ids on the rest and writes, into -out, tokenizer.json, the
// validation text as valid.txt (valid.jsonl for chat), and one source,
// "text" or "chat", in the same token files and index.json:
//
//	go run ./tokenize -text mytext.txt -vocab 2048 -out mymodel/data
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/neuro-go/neuro/models/tokenizers"
	"github.com/neuro-go/neuro/models/train/own"
	"github.com/neuro-go/neuro/models/train/split"
)

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
	text := flag.String("text", "", "a text or chat JSONL file of one's own: train a tokenizer on it and tokenize it (needs -out)")
	format := flag.String("format", "auto", "with -text: text, chat (JSONL of {\"messages\":[...]}) or auto")
	vocab := flag.Int("vocab", 2048, "with -text: the tokenizer's vocabulary size")
	validBytes := flag.Int("valid-bytes", 0, "with -text: bytes held out for validation at the end (0: 5% of the file, at most 1 MiB)")
	flag.Parse()
	if *text != "" {
		if *out == "" {
			log.Fatal("tokenize: -text needs -out")
		}
		if err := runText(*text, *format, *vocab, *validBytes, *out); err != nil {
			log.Fatalf("tokenize: %v", err)
		}
		return
	}
	if *out == "" {
		*out = filepath.Join("data", strings.TrimPrefix(*tokName, "neuro-"))
	}
	if err := run(*corpus, *heldoutPath, *tokName, *out); err != nil {
		log.Fatalf("tokenize: %v", err)
	}
}

func run(corpus, heldoutPath, tokName, out string) error {
	start := time.Now()
	rec, err := split.ReadRecord(heldoutPath)
	if err != nil {
		return err
	}
	sources, err := split.Encode(corpus, rec, tokName, nil)
	if err != nil {
		return err
	}
	tok, err := tokenizers.Load(tokName)
	if err != nil {
		return err
	}
	idx := &index{Tokenizer: tokName, VocabSize: tok.VocabSize(), Corpus: corpus, Rule: rec.Rule, Sources: map[string]*sourceIndex{}}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, s := range sources {
		si := &sourceIndex{Files: s.Files}
		idx.Sources[s.Name] = si
		for i, p := range []*split.Part{&s.Train, &s.Val} {
			name := []string{"train", "val"}[i]
			file := s.Name + "." + name + ".u16"
			if err := writeU16(filepath.Join(out, file), p.IDs); err != nil {
				return err
			}
			e := splitIndex{File: file, Tokens: len(p.IDs), TextBytes: p.TextBytes, RenderedBytes: p.RenderedBytes, Documents: p.Documents}
			if i == 0 {
				si.Train = e
			} else {
				si.Val = e
			}
			log.Printf("%-24s %-5s %9d tokens %10d text bytes %6d documents", s.Name, name, e.Tokens, e.TextBytes, e.Documents)
		}
	}
	return writeIndex(out, idx, start)
}

// runText prepares the text file path for own.py (package own).
func runText(path, format string, vocab, validBytes int, out string) error {
	start := time.Now()
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := own.ParseFormat(format, data)
	if err != nil {
		return err
	}
	if validBytes == 0 {
		validBytes = own.DefaultValidBytes(len(data))
	}
	train, valid, err := own.Split(data, f, validBytes)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	log.Printf("%s: %s, %d bytes: %d for training, %d for validation", path, f, len(data), len(train), len(valid))
	tok, err := own.TrainTokenizer(context.Background(), train, f, vocab)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	log.Printf("tokenizer: %d ids (%d merges) in %.1fs", tok.VocabSize(), tok.NumMerges(), time.Since(start).Seconds())
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := tok.Save(filepath.Join(out, "tokenizer.json")); err != nil {
		return err
	}
	validName := map[own.Format]string{own.Text: "valid.txt", own.Chat: "valid.jsonl"}[f]
	if err := os.WriteFile(filepath.Join(out, validName), valid, 0o644); err != nil {
		return err
	}
	name := string(f)
	idx := &index{Tokenizer: "tokenizer.json", VocabSize: tok.VocabSize(), Corpus: path,
		Rule:    fmt.Sprintf("the last %d bytes of the file, from the first line start in them, are held out (%s); the tokenizer learnt from the rest", validBytes, validName),
		Sources: map[string]*sourceIndex{name: {Files: []string{filepath.Base(path)}}}}
	for i, part := range [][]byte{train, valid} {
		p, err := own.Encode(tok, part, f)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		split := []string{"train", "val"}[i]
		file := name + "." + split + ".u16"
		if err := writeU16(filepath.Join(out, file), p.IDs); err != nil {
			return err
		}
		e := splitIndex{File: file, Tokens: len(p.IDs), TextBytes: p.TextBytes, RenderedBytes: p.RenderedBytes, Documents: p.Documents}
		if i == 0 {
			idx.Sources[name].Train = e
		} else {
			idx.Sources[name].Val = e
		}
		log.Printf("%-5s %9d tokens %10d text bytes %6d documents", split, e.Tokens, e.TextBytes, e.Documents)
	}
	return writeIndex(out, idx, start)
}

// writeIndex writes out's index.json, the record of what was written
// there since start.
func writeIndex(out string, idx any, start time.Time) error {
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

func writeU16(path string, ids []int) error {
	buf := make([]byte, 2*len(ids))
	for i, id := range ids {
		binary.LittleEndian.PutUint16(buf[2*i:], uint16(id))
	}
	return os.WriteFile(path, buf, 0o644)
}
