package tokenizer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// LoadGPT2 reads the vocabulary files that OpenAI published with GPT-2:
// encoder.json (token -> id) and vocab.bpe (a "#version" line, then one
// merge "a b" per line, by rank). Tokens of the form <|...|> (GPT-2 has
// only <|endoftext|>) become special added tokens.
func LoadGPT2(encoderJSON, vocabBPE io.Reader) (*Tokenizer, error) {
	data, err := io.ReadAll(io.LimitReader(encoderJSON, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: reading encoder.json: %w", err)
	}
	if len(data) > MaxFileSize {
		return nil, fieldErr(ErrTooLarge, "encoder.json", "more than %d bytes", MaxFileSize)
	}
	if err := checkCount(data, "encoder.json"); err != nil {
		return nil, err
	}
	spec := buildSpec{mergesField: "vocab.bpe line"}
	if err := json.Unmarshal(data, &spec.vocab); err != nil {
		return nil, jsonErr("encoder.json", err)
	}
	sc := bufio.NewScanner(io.LimitReader(vocabBPE, MaxFileSize+1))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if s == "" || (line == 1 && strings.HasPrefix(s, "#version")) {
			continue
		}
		a, b, ok := strings.Cut(s, " ")
		if !ok || a == "" || b == "" || strings.Contains(b, " ") {
			return nil, fieldErr(ErrFormat, fmt.Sprintf("vocab.bpe line %d", line), "%q is not two tokens separated by one space", s)
		}
		if len(spec.merges) >= MaxVocabSize {
			return nil, fieldErr(ErrTooLarge, "vocab.bpe", "more than %d merges", MaxVocabSize)
		}
		spec.merges = append(spec.merges, [2]string{a, b})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tokenizer: reading vocab.bpe: %w", err)
	}
	// Merge errors name the line (rank + 1 + the #version line).
	for tok, id := range spec.vocab {
		if strings.HasPrefix(tok, "<|") && strings.HasSuffix(tok, "|>") && len(tok) > 4 {
			spec.added = append(spec.added, AddedToken{ID: id, Content: tok, Special: true})
		}
	}
	return newTokenizer(spec)
}

// LoadGPT2Files reads encoder.json and vocab.bpe from dir; see LoadGPT2.
func LoadGPT2Files(dir string) (*Tokenizer, error) {
	enc, err := os.Open(filepath.Join(dir, "encoder.json"))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer enc.Close()
	bpe, err := os.Open(filepath.Join(dir, "vocab.bpe"))
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	defer bpe.Close()
	return LoadGPT2(enc, bpe)
}
