// Command calibrate measures the ranges of the built-in models' graded
// neurons (compile.Calibrate) on training text and writes them to the
// training run's runs/<run>/ranges.json and to the model's package
// (models/lite, models/standard, models/heavy), which embeds it and sets
// it as the Program's Ranges. Fixed-point targets size their graded
// values from them instead of from the worst case (runtime/hal/loihi).
//
// The text is the training split, never the held-out one: windows of 128
// tokens from rest, spread evenly over each source's training tokens, as
// models/train/tokenize writes them. Usage, from models/train:
//
//	go run ./tokenize -tokenizer neuro-bpe-1k
//	go run ./calibrate [-windows 8] [-models neuro-1-lite,...]
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all"
)

const window = 128

func main() {
	data := flag.String("data", "data", "folder of tokenize's outputs, one subfolder per tokenizer (bpe-1k, bpe-2k)")
	windows := flag.Int("windows", 8, "windows of 128 tokens per source")
	only := flag.String("models", strings.Join(models.Names(), ","), "comma-separated model ids")
	flag.Parse()
	for _, id := range strings.Split(*only, ",") {
		if err := calibrate(id, *data, *windows); err != nil {
			fmt.Fprintln(os.Stderr, "calibrate:", err)
			os.Exit(1)
		}
	}
}

func calibrate(id, data string, windows int) error {
	m, err := models.Load(id)
	if err != nil {
		return err
	}
	tok := strings.TrimPrefix(m.Program.Metadata["tokenizer"], "neuro-")
	dir := filepath.Join(data, tok)
	files, err := filepath.Glob(filepath.Join(dir, "*.train.u16"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("%s: no training tokens in %s (run models/train/tokenize first)", id, dir)
	}
	sort.Strings(files)
	vocab := m.Program.Input.Size
	var seqs [][][]float32
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		n := len(b) / 2
		if n < window*windows {
			return fmt.Errorf("%s: %s has %d tokens, fewer than %d windows of %d", id, f, n, windows, window)
		}
		for w := range windows {
			start := w * (n - window) / windows
			seq := make([][]float32, window)
			for i := range seq {
				t := int(binary.LittleEndian.Uint16(b[2*(start+i):]))
				if t >= vocab {
					return fmt.Errorf("%s: %s has token %d, outside the model's vocabulary of %d", id, f, t, vocab)
				}
				seq[i] = make([]float32, vocab)
				seq[i][t] = 1
			}
			seqs = append(seqs, seq)
		}
	}
	if err := compile.Calibrate(m.Program, seqs); err != nil {
		return fmt.Errorf("%s: %w", id, err)
	}
	out, err := json.Marshal(m.Program.Ranges)
	if err != nil {
		return err
	}
	paths := []string{
		filepath.Join("runs", m.Card.Extra["training_run"].(string), "ranges.json"),
		filepath.Join("..", strings.TrimPrefix(id, "neuro-1-"), "ranges.json"),
	}
	for _, path := range paths {
		if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%s: %d windows of %d tokens, ranges of %d nodes -> %s\n", id, len(seqs), window, len(m.Program.Ranges), strings.Join(paths, ", "))
	return nil
}
