package runtime

import (
	"context"
	"fmt"
	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/snn"
	"sync"
	"testing"
	"time"
)

// BenchmarkThroughput runs c concurrent generations of 32 tokens on one
// deployment (batch 64) and reports the total tokens per second: with
// continuous batching, c sequences share each step of the network.
func BenchmarkThroughput(b *testing.B) {
	for _, c := range []int{1, 4, 8, 16, 64} {
		b.Run(fmt.Sprintf("concurrent=%d", c), func(b *testing.B) {
			rt := newTestRuntime(b, 64, &Options{QueueDepth: 256})
			tokens := 0
			var mu sync.Mutex
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				for k := 0; k < c; k++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res, err := rt.Generate(context.Background(), &Request{Model: "test-lm", Prompt: "Once", MaxTokens: 32, Sampling: Sampling{Temperature: 1, Seed: seed(int64(k))}}, nil)
						if err != nil {
							b.Error(err)
							return
						}
						mu.Lock()
						tokens += res.Usage.CompletionTokens
						mu.Unlock()
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}

// BenchmarkTokenOverhead measures what the runtime adds per token
// (scheduling, events, telemetry) over the model's own work: stepping the
// network for each token and sampling from its logits, done by a bare loop
// with the same simulator and sampler.
func BenchmarkTokenOverhead(b *testing.B) {
	rt := newTestRuntime(b, 1, nil)
	d, _ := rt.Deployment("test-cpu")
	req := &Request{Model: "test-lm", Prompt: "Once", MaxTokens: 64, Sampling: Sampling{Temperature: 1, Seed: seed(1)}}
	res, err := rt.Generate(context.Background(), req, nil)
	if err != nil {
		b.Fatal(err)
	}
	ticks := len(res.PromptTokens) + len(res.Choices[0].Tokens) - 1
	p := d.Model.Program
	sim := newBareInstance(b, p)
	sm := newSampler(req.Sampling, testTok.VocabSize(), 1)
	in := make([]float32, testTok.VocabSize())
	bare := func() {
		sim.ResetAll()
		tok := res.PromptTokens[0]
		for t := 0; t < ticks; t++ {
			in[tok] = 1
			for s := 0; s < p.Timesteps; s++ {
				sim.Step(in)
			}
			in[tok] = 0
			tok = sm.next(sim.Output(0))
		}
	}
	const reps = 50
	start := time.Now()
	for r := 0; r < reps; r++ {
		bare()
	}
	model := time.Since(start) / reps
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := rt.Generate(context.Background(), req, nil); err != nil {
			b.Fatal(err)
		}
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(model.Nanoseconds())/float64(ticks), "model-ns/token")
	b.ReportMetric(float64((per-model).Nanoseconds())/float64(ticks), "overhead-ns/token")
	b.ReportMetric(100*float64(per-model)/float64(model), "overhead-%")
}

// BenchmarkTelemetryRecord is the cost of recording one request.
func BenchmarkTelemetryRecord(b *testing.B) {
	tel := newTelemetry(100_000, time.Now)
	req := &Request{Principal: "k", Endpoint: "chat.completions", Model: "m"}
	res := &Result{Model: "m", Deployment: "d", Usage: Usage{PromptTokens: 10, CompletionTokens: 20}}
	now := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tel.record(req, res, nil, now, now)
	}
}

func newBareInstance(b *testing.B, p *compile.Program) *snn.Simulator {
	sim, err := snn.NewSimulator(p.Graph, &snn.Options{Dt: p.Dt})
	if err != nil {
		b.Fatal(err)
	}
	return sim
}
