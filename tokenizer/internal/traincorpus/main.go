// Command traincorpus trains the project's tokenizers (models/tokenizers)
// on the project corpus, holding out the end of every source, and prints
// bytes per token on the held-out text.
//
//	go run ./tokenizer/internal/traincorpus [-corpus models/train/corpus] [-out models/tokenizers]
//
// The held-out split: for every file, let cut be the index of the first
// '\n' at or after floor(size*95/100); bytes [0, cut] are trained on and
// bytes [cut+1, size) are held out. A .jsonl file is thus split between
// whole conversations. The split is written to heldout.json next to the
// tokenizers so that other training reuses it.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/neuro-go/neuro/tokenizer"
)

type source struct {
	Name       string `json:"file"` // relative to the corpus directory
	Size       int    `json:"size"`
	TrainBytes int    `json:"train_bytes"` // bytes [0, TrainBytes) are trained on
	SHA256     string `json:"sha256"`
	group      string
	data       []byte
}

func main() {
	corpus := flag.String("corpus", "models/train/corpus", "corpus directory")
	out := flag.String("out", "models/tokenizers", "output directory")
	gpt2 := flag.String("gpt2", "models/tokenizers/gpt2", "GPT-2 vocabulary (encoder.json.gz, vocab.bpe.gz) to compare with; empty to skip")
	flag.Parse()
	if err := run(*corpus, *out, *gpt2); err != nil {
		log.Fatal(err)
	}
}

// splitPoint returns the number of bytes trained on.
func splitPoint(data []byte) int {
	at := len(data) * 95 / 100
	i := bytes.IndexByte(data[at:], '\n')
	if i < 0 {
		return len(data)
	}
	return at + i + 1
}

func groupOf(name string) string {
	switch {
	case strings.HasPrefix(name, "extra/") && strings.HasSuffix(name, ".txt"):
		return "extra books (58 .txt)"
	default:
		return name
	}
}

// documents returns the training documents of a part of a file: the whole
// text, or for .jsonl the turn texts.
func documents(name string, part []byte) ([]string, error) {
	if !strings.HasSuffix(name, ".jsonl") {
		return []string{string(part)}, nil
	}
	var docs []string
	for n, line := range bytes.Split(part, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var c struct {
			Turns []struct {
				Text string `json:"text"`
			} `json:"turns"`
		}
		if err := json.Unmarshal(line, &c); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, n+1, err)
		}
		for _, t := range c.Turns {
			docs = append(docs, t.Text)
		}
	}
	return docs, nil
}

func run(corpus, out, gpt2Dir string) error {
	var names []string
	for _, pat := range []string{"*.txt", "*.jsonl", "extra/*.txt", "extra/*.jsonl"} {
		m, err := filepath.Glob(filepath.Join(corpus, pat))
		if err != nil {
			return err
		}
		for _, p := range m {
			rel, _ := filepath.Rel(corpus, p)
			rel = filepath.ToSlash(rel)
			if strings.HasPrefix(rel, "LICENSE") {
				continue
			}
			names = append(names, rel)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return fmt.Errorf("no corpus files in %s", corpus)
	}
	start := time.Now()
	tr, err := tokenizer.NewTrainer(&tokenizer.TrainOptions{SpecialTokens: tokenizer.NeuroSpecialTokens(), ChatTemplate: tokenizer.NeuroChatTemplate()})
	if err != nil {
		return err
	}
	var sources []*source
	var trainBytes int
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(corpus, filepath.FromSlash(name)))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		s := &source{Name: name, Size: len(data), TrainBytes: splitPoint(data), SHA256: hex.EncodeToString(sum[:]), group: groupOf(name), data: data}
		sources = append(sources, s)
		docs, err := documents(name, data[:s.TrainBytes])
		if err != nil {
			return err
		}
		for _, d := range docs {
			tr.Add(d)
		}
		trainBytes += s.TrainBytes
	}
	countTime := time.Since(start)
	fmt.Fprintf(os.Stderr, "counted %d files, %d bytes, %d distinct pre-tokens in %v\n", len(sources), trainBytes, tr.Words(), countTime.Round(time.Millisecond))

	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	type named struct {
		name string
		tok  *tokenizer.Tokenizer
	}
	var toks []named
	for _, k := range []int{1, 2, 4} {
		t0 := time.Now()
		tok, err := tr.Train(context.Background(), k*1024)
		if err != nil {
			return err
		}
		path := filepath.Join(out, fmt.Sprintf("neuro-bpe-%dk.json", k))
		if err := tok.Save(path); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s: %d ids, %d merges, trained in %v\n", path, tok.VocabSize(), tok.NumMerges(), time.Since(t0).Round(time.Millisecond))
		toks = append(toks, named{fmt.Sprintf("neuro-bpe-%dk", k), tok})
	}
	if gpt2Dir != "" {
		g, err := loadGPT2(gpt2Dir)
		if err != nil {
			return err
		}
		toks = append(toks, named{"GPT-2 (50k)", g})
	}

	// Held-out bytes per token, by source group.
	type agg struct{ bytes, tokens []int }
	groups := map[string]*agg{}
	var order []string
	for _, s := range sources {
		a, ok := groups[s.group]
		if !ok {
			a = &agg{tokens: make([]int, len(toks))}
			groups[s.group] = a
			order = append(order, s.group)
		}
		docs, err := documents(s.Name, s.data[s.TrainBytes:])
		if err != nil {
			return err
		}
		for _, d := range docs {
			if len(a.bytes) == 0 {
				a.bytes = []int{0}
			}
			a.bytes[0] += len(d)
			for i, t := range toks {
				a.tokens[i] += len(t.tok.Encode(d))
			}
		}
	}
	fmt.Printf("| held-out text | bytes |")
	for _, t := range toks {
		fmt.Printf(" %s |", t.name)
	}
	fmt.Printf("\n|---|---:|")
	for range toks {
		fmt.Printf("---:|")
	}
	fmt.Println()
	total := agg{bytes: []int{0}, tokens: make([]int, len(toks))}
	for _, g := range order {
		a := groups[g]
		fmt.Printf("| %s | %d |", g, a.bytes[0])
		total.bytes[0] += a.bytes[0]
		for i := range toks {
			fmt.Printf(" %.2f |", float64(a.bytes[0])/float64(a.tokens[i]))
			total.tokens[i] += a.tokens[i]
		}
		fmt.Println()
	}
	fmt.Printf("| **all** | %d |", total.bytes[0])
	for i := range toks {
		fmt.Printf(" **%.2f** |", float64(total.bytes[0])/float64(total.tokens[i]))
	}
	fmt.Println()

	manifest := struct {
		Rule    string    `json:"rule"`
		Sources []*source `json:"sources"`
	}{
		Rule:    "for each file, bytes [0, train_bytes) are for training and [train_bytes, size) are held out; train_bytes is one past the first '\\n' at or after floor(size*95/100); .jsonl files are split between whole lines (conversations)",
		Sources: sources,
	}
	b, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "heldout.json"), append(b, '\n'), 0o644)
}

func loadGPT2(dir string) (*tokenizer.Tokenizer, error) {
	open := func(name string) (io.Reader, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		return gzip.NewReader(bytes.NewReader(b))
	}
	enc, err := open("encoder.json.gz")
	if err != nil {
		return nil, err
	}
	bpe, err := open("vocab.bpe.gz")
	if err != nil {
		return nil, err
	}
	return tokenizer.LoadGPT2(enc, bpe)
}
