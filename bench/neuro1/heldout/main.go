// Command heldout measures what a weight precision of the cpu device costs
// in quality: held-out bits per byte of the built-in neuro-1 models, run
// through the Go simulator at each precision on the same tokens.
//
//	(cd models/train && go run ./tokenize -tokenizer neuro-bpe-1k)
//	(cd models/train && go run ./tokenize -tokenizer neuro-bpe-2k)
//	go run ./bench/neuro1/heldout [-data models/train/data] [-max-tokens 0] [-models ...]
//
// Each model reads the tokens of its own tokenizer: <data>/bpe-1k for
// neuro-bpe-1k, <data>/bpe-2k for neuro-bpe-2k.
//
// It evaluates as models/train/train.py does: every held-out token of every
// source, in windows of 128 tokens from rest; bits per byte = cross-entropy
// in bits / held-out text bytes, overall weighted by bytes. With
// -max-tokens N only the first N+1 tokens of each source count, and its
// bytes are scaled by the share of tokens evaluated, as train.py does.
// It prints one JSON line per model with the bits per byte at float32,
// bfloat16 and int8 and the relative cost of each against float32.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sort"
	"strings"

	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all" // the neuro-1 language models
	"github.com/neuro-go/neuro/snn"
)

const window = 128

type index struct {
	Sources map[string]struct {
		Val struct {
			File      string `json:"file"`
			Tokens    int    `json:"tokens"`
			TextBytes int64  `json:"text_bytes"`
		} `json:"val"`
	} `json:"sources"`
}

type result struct {
	Model    string             `json:"model"`
	Tokens   int                `json:"tokens"`
	BPB      map[string]float64 `json:"bits_per_byte"`
	Cost     map[string]float64 `json:"relative_cost"`
	KernelIS string             `json:"kernels"`
}

func main() {
	data := flag.String("data", "models/train/data", "folder of models/train/tokenize's outputs, one subfolder per tokenizer (bpe-1k, bpe-2k)")
	maxTokens := flag.Int("max-tokens", 0, "evaluate only the first N tokens of each source (0: all)")
	batch := flag.Int("batch", 32, "windows evaluated together")
	only := flag.String("models", strings.Join(models.Names(), ","), "comma-separated model ids")
	flag.Parse()
	if err := run(*data, *maxTokens, *batch, strings.Split(*only, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "heldout:", err)
		os.Exit(1)
	}
}

func run(data string, maxTokens, batch int, ids []string) error {
	for _, id := range ids {
		m, err := models.Load(id)
		if err != nil {
			return err
		}
		idx, names, val, err := heldOut(filepath.Join(data, strings.TrimPrefix(m.Program.Metadata["tokenizer"], "neuro-")), maxTokens)
		if err != nil {
			return fmt.Errorf("%s: %w", id, err)
		}
		r := &result{Model: id, BPB: map[string]float64{}, Cost: map[string]float64{}, KernelIS: snn.KernelISA()}
		for _, p := range []snn.Precision{snn.Float32, snn.BFloat16, snn.Int8} {
			var bits, bytes float64
			ntok := 0
			for _, n := range names {
				sb, st, err := sourceBits(m.Program.Graph, m.Program.Dt, p, val[n], batch)
				if err != nil {
					return err
				}
				nb := float64(idx.Sources[n].Val.TextBytes)
				if maxTokens > 0 {
					nb *= float64(st) / float64(max(1, idx.Sources[n].Val.Tokens-1))
				}
				bits += sb
				bytes += nb
				ntok += st
			}
			r.BPB[p.String()] = bits / bytes
			r.Tokens = ntok
		}
		for _, p := range []snn.Precision{snn.BFloat16, snn.Int8} {
			r.Cost[p.String()] = r.BPB[p.String()]/r.BPB["float32"] - 1
		}
		out, _ := json.Marshal(r)
		fmt.Println(string(out))
	}
	return nil
}

// heldOut reads the held-out tokens of every source in one tokenizer's
// folder, at most maxTokens+1 of each when maxTokens > 0.
func heldOut(dir string, maxTokens int) (*index, []string, map[string][]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return nil, nil, nil, err
	}
	var idx index
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, nil, nil, fmt.Errorf("index.json: %w", err)
	}
	names := make([]string, 0, len(idx.Sources))
	for n := range idx.Sources {
		names = append(names, n)
	}
	sort.Strings(names)
	val := map[string][]int{}
	for _, n := range names {
		raw, err := os.ReadFile(filepath.Join(dir, idx.Sources[n].Val.File))
		if err != nil {
			return nil, nil, nil, err
		}
		toks := make([]int, len(raw)/2)
		for i := range toks {
			toks[i] = int(binary.LittleEndian.Uint16(raw[2*i:]))
		}
		if maxTokens > 0 && len(toks) > maxTokens+1 {
			toks = toks[:maxTokens+1]
		}
		val[n] = toks
	}
	return &idx, names, val, nil
}

// sourceBits is the cross-entropy in bits of predicting every token of a
// after the first, in windows of 128 from rest, and how many were
// predicted.
func sourceBits(g *snn.Graph, dt float64, p snn.Precision, a []int, batch int) (float64, int, error) {
	sim, err := snn.NewSimulator(g, &snn.Options{Dt: dt, Batch: batch, Weights: p, Workers: goruntime.GOMAXPROCS(0)})
	if err != nil {
		return 0, 0, err
	}
	defer sim.Close()
	vocab := sim.Inputs()[0].Size
	in := make([]float32, batch*vocab)
	nwin := (len(a) - 1 + window - 1) / window
	var bits float64
	ntok := 0
	for w0 := 0; w0 < nwin; w0 += batch {
		sim.ResetAll()
		for t := 0; t < window; t++ {
			clear(in)
			any := false
			for s := 0; s < batch; s++ {
				if pos := (w0+s)*window + t; w0+s < nwin && pos+1 < len(a) {
					in[s*vocab+a[pos]] = 1
					any = true
				}
			}
			if !any {
				break
			}
			if err := sim.Step(in); err != nil {
				return 0, 0, err
			}
			logits := sim.Output(0)
			for s := 0; s < batch; s++ {
				pos := (w0+s)*window + t
				if w0+s >= nwin || pos+1 >= len(a) {
					continue
				}
				bits += crossEntropyBits(logits[s*vocab:(s+1)*vocab], a[pos+1])
				ntok++
			}
		}
	}
	return bits, ntok, nil
}

// crossEntropyBits is −log2 softmax(z)[target], in float64.
func crossEntropyBits(z []float32, target int) float64 {
	mx := math.Inf(-1)
	for _, v := range z {
		mx = math.Max(mx, float64(v))
	}
	var sum float64
	for _, v := range z {
		sum += math.Exp(float64(v) - mx)
	}
	return (math.Log(sum) + mx - float64(z[target])) / math.Ln2
}
