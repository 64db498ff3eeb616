// Command neuro1 measures the built-in neuro-1 models in the Go runtime
// and prints one JSON object per model:
//
//	go run ./bench/neuro1 [-tokens 256] [-repeat 3] [-models neuro-1-lite,...] [-precision float32|bfloat16|int8]
//
// For each model:
//
//   - load_seconds: import plus compile of the embedded .pt (models.Load);
//
//   - tokens_per_second: greedy generation through the runtime (a cpu
//     deployment with continuous batching, two replicas of four slots, so
//     at most two cores as PyTorch's two threads) of -tokens tokens per
//     sequence, for 1 and for 8 concurrent sequences, after a warm-up,
//     the median of -repeat runs (3; pytorch_gen.py's --repeat likewise);
//     the chat template's stop tokens are banned with logit_bias so
//     that every sequence runs to -tokens, as the PyTorch side does;
//
//   - state_bytes_per_sequence: the heap the simulator holds per batch
//     slot (a 9-slot simulator minus a 1-slot one, divided by 8);
//
//   - heap_bytes_at_context: live heap while one sequence is at 128, 512
//     and 2048 tokens of context: constant but for the token ids the
//     runtime keeps (8 bytes a token) for echo, logprobs and penalties.
//
//   - per_token: what one token at batch 1 touches (a simulator stepped
//     over a fixed English text): synaptic_ops (weight accumulations),
//     weight_bytes (synaptic_ops at the weight precision's bytes: the
//     weights read, streamed from memory when they do not stay in cache),
//     dense_weight_bytes (every dense weight once), propagated_fraction
//     (synaptic ops over all weights: how much of the dense work the event
//     path leaves) and flops (2 per accumulation, 3 per state update);
//
//   - limits: this machine's measured roofs on 2 threads (bench/roofline:
//     a Go STREAM triad, the dense kernel in L1), and the fractions of
//     each that generation reached at batch 1 and 8.
//
// -precision is the cpu device's weight precision (cpu.Config.Precision).
//
// bench/neuro1/compare.sh runs this beside pytorch_gen.py and writes
// models/speed.json, which the model cards read.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/neuro-go/neuro/bench/roofline"
	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all" // the neuro-1 language models
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/snn"
)

type result struct {
	Model           string             `json:"model"`
	Run             string             `json:"run"` // the training run of the weights (the card's training_run)
	LoadSeconds     float64            `json:"load_seconds"`
	TokensPerSecond map[string]float64 `json:"tokens_per_second"`
	StateBytes      int64              `json:"state_bytes_per_sequence"`
	HeapAtContext   map[string]int64   `json:"heap_bytes_at_context"`
	GOMAXPROCS      int                `json:"gomaxprocs"`
	Precision       string             `json:"precision"`
	Kernels         string             `json:"kernels"`
	PerToken        perToken           `json:"per_token"`
	Limits          *roofline.Limits   `json:"limits,omitempty"`
	FracFLOPS       map[string]float64 `json:"fraction_of_peak_flops,omitempty"`
	FracTriad       map[string]float64 `json:"fraction_of_triad_bandwidth,omitempty"`
}

type perToken struct {
	SynapticOps      float64 `json:"synaptic_ops"`
	WeightBytes      float64 `json:"weight_bytes"`
	DenseWeightBytes int64   `json:"dense_weight_bytes"`
	Propagated       float64 `json:"propagated_fraction"`
	FLOPs            float64 `json:"flops"`
}

func main() {
	n := flag.Int("tokens", 256, "tokens generated per sequence")
	only := flag.String("models", strings.Join(models.Names(), ","), "comma-separated model ids")
	precision := flag.String("precision", "float32", "weight precision of the cpu device: float32 or bfloat16")
	roof := flag.Bool("roofline", true, "measure this machine's bandwidth and FLOP rate and print the fractions reached")
	repeat := flag.Int("repeat", 3, "runs of each batch size; the median rate is reported")
	flag.Parse()
	prec, err := snn.ParsePrecision(*precision)
	if err != nil {
		fmt.Fprintln(os.Stderr, "neuro1:", err)
		os.Exit(1)
	}
	var limits *roofline.Limits
	if *roof {
		l := roofline.Measure(2)
		limits = &l
	}
	for _, id := range strings.Split(*only, ",") {
		r, err := measure(id, *n, *repeat, prec)
		if err != nil {
			fmt.Fprintln(os.Stderr, "neuro1:", err)
			os.Exit(1)
		}
		if limits != nil {
			r.Limits, r.FracFLOPS, r.FracTriad = limits, map[string]float64{}, map[string]float64{}
			for k, tps := range r.TokensPerSecond {
				r.FracFLOPS[k] = r.PerToken.FLOPs * tps / limits.PeakFLOPS
				r.FracTriad[k] = r.PerToken.WeightBytes * tps / limits.TriadBytesPerS
			}
		}
		b, _ := json.Marshal(r)
		fmt.Println(string(b))
	}
}

func measure(id string, n, repeat int, prec snn.Precision) (*result, error) {
	r := &result{Model: id, TokensPerSecond: map[string]float64{}, HeapAtContext: map[string]int64{}, GOMAXPROCS: goruntime.GOMAXPROCS(0),
		Precision: prec.String(), Kernels: snn.KernelISA()}
	start := time.Now()
	m, err := models.Load(id)
	if err != nil {
		return nil, err
	}
	r.LoadSeconds = time.Since(start).Seconds()
	r.Run, _ = m.Card.Extra["training_run"].(string)
	if r.StateBytes, err = stateBytes(m); err != nil {
		return nil, err
	}
	if r.PerToken, err = touched(m, prec); err != nil {
		return nil, err
	}
	dev, err := cpu.New(&cpu.Config{Precision: prec})
	if err != nil {
		return nil, err
	}
	rt := runtime.New(nil)
	defer rt.Close()
	if err := rt.RegisterModel(m); err != nil {
		return nil, err
	}
	ctx := context.Background()
	// Two replicas of four slots: batch 1 runs on one core, batch 8 on two,
	// as PyTorch gets two threads.
	if _, err := rt.Deploy(ctx, runtime.DeploymentSpec{ID: "bench", Model: id, MaxBatch: 4, Replicas: 2, Dev: dev}); err != nil {
		return nil, err
	}
	stops, err := m.Tokenizer.StopIDs()
	if err != nil {
		return nil, err
	}
	req := func(tokens int) *runtime.Request {
		bias := map[int]float64{}
		for _, t := range stops {
			bias[t] = -100
		}
		return &runtime.Request{Model: id, Prompt: "Once upon a time", MaxTokens: tokens, Sampling: runtime.Sampling{LogitBias: bias}}
	}
	if _, err := rt.Generate(ctx, req(32), nil); err != nil { // warm-up
		return nil, err
	}
	for _, batch := range []int{1, 8} {
		rates := make([]float64, max(repeat, 1))
		for k := range rates {
			var wg sync.WaitGroup
			errs := make([]error, batch)
			start := time.Now()
			for i := range batch {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := rt.Generate(ctx, req(n), nil)
					if err == nil && res.Usage.CompletionTokens != n {
						err = fmt.Errorf("%s: %d tokens generated, want %d", id, res.Usage.CompletionTokens, n)
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					return nil, err
				}
			}
			rates[k] = float64(batch*n) / time.Since(start).Seconds()
		}
		slices.Sort(rates)
		r.TokensPerSecond[fmt.Sprintf("batch%d", batch)] = rates[len(rates)/2]
	}
	// Live heap while one sequence holds its context, taken as the last
	// token is delivered, for three lengths.
	prompt := len(m.Tokenizer.Encode("Once upon a time"))
	for _, total := range []int{128, 512, 2048} {
		var heap int64
		_, err := rt.Generate(ctx, req(total-prompt), func(ev runtime.Event) error {
			if ev.FinishReason != "" {
				heap = liveHeap()
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		r.HeapAtContext[fmt.Sprint(total)] = heap
	}
	return r, nil
}

// touched steps a batch-1 simulator of the model over a fixed text and
// returns what one token touched on average.
func touched(m *runtime.Model, prec snn.Precision) (perToken, error) {
	var pt perToken
	g := m.Program.Graph
	var weights int64
	for _, name := range g.Names() {
		switch x := g.Nodes[name].(type) {
		case *snn.Linear:
			weights += int64(len(x.Weight.Data))
		case *snn.Affine:
			weights += int64(len(x.Weight.Data))
		}
	}
	sim, err := snn.NewSimulator(g, &snn.Options{Dt: m.Program.Dt, Weights: prec})
	if err != nil {
		return pt, err
	}
	defer sim.Close()
	const text = "Once upon a time there was a little girl who lived in a village near the forest. " +
		"Whenever she went out, the little girl wore a red riding cloak, so everyone in the village called her Little Red Riding Hood."
	toks := m.Tokenizer.Encode(text)
	in := make([]float32, sim.Inputs()[0].Size)
	for _, t := range toks {
		in[t] = 1
		for range m.Program.Timesteps {
			if err := sim.Step(in); err != nil {
				return pt, err
			}
		}
		in[t] = 0
	}
	c, k := sim.Counters(), float64(len(toks))
	pt.SynapticOps = float64(c.SynapticOps) / k
	pt.WeightBytes = pt.SynapticOps * float64(prec.WeightBytes())
	pt.DenseWeightBytes = weights * int64(prec.WeightBytes())
	pt.Propagated = float64(c.SynapticOps) / (k * float64(weights))
	pt.FLOPs = 2*pt.SynapticOps + 3*float64(c.NeuronUpdates)/k
	return pt, nil
}

// stateBytes is the heap a simulator of the model's graph holds per slot.
func stateBytes(m *runtime.Model) (int64, error) {
	at := func(batch int) (int64, *snn.Simulator, error) {
		before := liveHeap()
		s, err := snn.NewSimulator(m.Program.Graph, &snn.Options{Dt: m.Program.Dt, Batch: batch})
		return liveHeap() - before, s, err
	}
	one, s1, err := at(1)
	if err != nil {
		return 0, err
	}
	nine, s9, err := at(9)
	if err != nil {
		return 0, err
	}
	goruntime.KeepAlive(s1)
	goruntime.KeepAlive(s9)
	return (nine - one) / 8, nil
}

func liveHeap() int64 {
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
