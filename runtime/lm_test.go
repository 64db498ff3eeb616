package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neuro-go/neuro/runtime/runtimetest"

	"github.com/neuro-go/neuro/compile"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/tokenizer"
)

var testTok *tokenizer.Tokenizer

func TestMain(m *testing.M) {
	tok, err := tokenizer.LoadFile(filepath.Join("..", "models", "tokenizers", "neuro-bpe-1k.json"))
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	testTok = tok
	os.Exit(m.Run())
}

// testProgram is the shared test language model (runtimetest.Program).
func testProgram(vocab, hidden int, seed uint64) *compile.Program {
	return runtimetest.Program("test-lm", vocab, hidden, seed, 256)
}

func newTestRuntime(t testing.TB, batch int, opts *Options) *Runtime {
	t.Helper()
	rt := New(opts)
	m := &Model{ID: "test-lm", Aliases: []string{"test"}, Program: testProgram(testTok.VocabSize(), 48, 1), Tokenizer: testTok}
	if err := rt.RegisterModel(m); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Deploy(context.Background(), DeploymentSpec{ID: "test-cpu", Model: "test-lm", MaxBatch: batch}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func seed(v int64) *int64 { return &v }

func gen(t testing.TB, rt *Runtime, req *Request) *Result {
	t.Helper()
	res, err := rt.Generate(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestGreedyIsDeterministic(t *testing.T) {
	rt := newTestRuntime(t, 4, nil)
	req := &Request{Model: "test-lm", Prompt: "Once upon a time", MaxTokens: 20}
	a, b := gen(t, rt, req), gen(t, rt, req)
	if a.Choices[0].Text != b.Choices[0].Text || len(a.Choices[0].Tokens) != 20 {
		t.Fatalf("greedy outputs differ or are short: %q / %q", a.Choices[0].Text, b.Choices[0].Text)
	}
	if a.Choices[0].FinishReason != "length" || a.Usage.CompletionTokens != 20 || a.Usage.PromptTokens != len(testTok.Encode("Once upon a time")) {
		t.Fatalf("result %+v", a.Usage)
	}
	// One tick of 4 steps per prompt token, then one per generated token
	// but the last, which is sampled and not presented.
	if a.Stats.Timesteps != int64(4*(a.Usage.PromptTokens+19)) || a.Stats.Spikes <= 0 || a.Stats.EnergyMicrojoule <= 0 {
		t.Fatalf("stats %+v", a.Stats)
	}
}

func TestSeededSamplingIsReproducible(t *testing.T) {
	rt := newTestRuntime(t, 4, nil)
	req := &Request{Model: "test", Prompt: "The cat", MaxTokens: 30, Sampling: Sampling{Temperature: 1.2, TopP: 0.9, Seed: seed(7)}}
	a, b := gen(t, rt, req), gen(t, rt, req)
	if a.Choices[0].Text != b.Choices[0].Text {
		t.Fatalf("same seed, different text: %q / %q", a.Choices[0].Text, b.Choices[0].Text)
	}
	req.Sampling.Seed = seed(8)
	c := gen(t, rt, req)
	if fmt.Sprint(c.Choices[0].Tokens) == fmt.Sprint(a.Choices[0].Tokens) {
		t.Fatal("different seeds gave the same tokens")
	}
	req.N = 3
	req.Sampling.Seed = seed(7)
	d := gen(t, rt, req)
	if len(d.Choices) != 3 || d.Choices[0].Text != a.Choices[0].Text || d.Choices[1].Text == d.Choices[0].Text {
		t.Fatalf("n=3: choice 0 must equal the n=1 run and differ from choice 1: %q %q", d.Choices[0].Text, d.Choices[1].Text)
	}
}

// 32 concurrent generations, 8 of them cancelled midway: the survivors
// equal their runs alone, and no goroutine outlives the test.
func TestConcurrentWithCancellation(t *testing.T) {
	base := goruntime.NumGoroutine()
	// With at most 2 events waiting per sequence, a request that cancels at
	// its third event is certainly cancelled midway.
	rt := newTestRuntime(t, 8, &Options{QueueDepth: 64, MaxPendingEvents: 2})
	prompts := make([]string, 32)
	for i := range prompts {
		prompts[i] = fmt.Sprintf("Story %d: the fox", i)
	}
	alone := make([]string, 32)
	for i, p := range prompts {
		alone[i] = gen(t, rt, &Request{Model: "test-lm", Prompt: p, MaxTokens: 16, Sampling: Sampling{Temperature: 0.8, Seed: seed(int64(i))}}).Choices[0].Text
	}
	var wg sync.WaitGroup
	got := make([]string, 32)
	errs := make([]error, 32)
	for i, p := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tokens := 0
			res, err := rt.Generate(ctx, &Request{Model: "test-lm", Prompt: p, MaxTokens: 16, Sampling: Sampling{Temperature: 0.8, Seed: seed(int64(i))}},
				func(ev Event) error {
					tokens++
					if i%4 == 0 && tokens == 3 {
						cancel()
					}
					return nil
				})
			errs[i] = err
			if res != nil && len(res.Choices) > 0 {
				got[i] = res.Choices[0].Text
			}
		}()
	}
	wg.Wait()
	for i := range prompts {
		if i%4 == 0 {
			if !errors.Is(errs[i], context.Canceled) {
				t.Errorf("request %d: %v, want context.Canceled", i, errs[i])
			}
			continue
		}
		if errs[i] != nil || got[i] != alone[i] {
			t.Errorf("request %d: %q (%v), alone %q", i, got[i], errs[i], alone[i])
		}
	}
	rt.Close()
	deadline := time.Now().Add(2 * time.Second)
	for goruntime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := goruntime.NumGoroutine(); n > base {
		t.Fatalf("%d goroutines after, %d before", n, base)
	}
}

func TestStopSequencesAndLogprobs(t *testing.T) {
	rt := newTestRuntime(t, 2, nil)
	full := gen(t, rt, &Request{Model: "test-lm", Prompt: "Hello", MaxTokens: 40}).Choices[0].Text
	if len(full) < 10 {
		t.Skipf("model text too short to pick a stop sequence: %q", full)
	}
	stop := full[len(full)/2 : len(full)/2+3]
	cut := strings.Index(full, stop)
	var streamed strings.Builder
	res, err := rt.Generate(context.Background(), &Request{Model: "test-lm", Prompt: "Hello", MaxTokens: 40, Stop: []string{"zzzz", stop}, Logprobs: true, TopLogprobs: 3},
		func(ev Event) error {
			streamed.WriteString(ev.Text)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Choices[0]
	if c.Text != full[:cut] || c.FinishReason != "stop" || streamed.String() != c.Text {
		t.Fatalf("stop %q: text %q (streamed %q), want %q", stop, c.Text, streamed.String(), full[:cut])
	}
	if len(c.Logprobs) != len(c.Tokens) {
		t.Fatalf("%d logprobs for %d tokens", len(c.Logprobs), len(c.Tokens))
	}
	for _, lp := range c.Logprobs {
		if lp.Logprob > 0 || len(lp.Top) != 3 || lp.Top[0].Logprob < lp.Logprob || lp.Top[0].Logprob < lp.Top[1].Logprob {
			t.Fatalf("logprob %+v", lp)
		}
	}
}

func TestEchoScoresThePrompt(t *testing.T) {
	rt := newTestRuntime(t, 2, nil)
	res := gen(t, rt, &Request{Model: "test-lm", Prompt: "The quick brown fox jumps", Echo: true, Logprobs: true, EchoOnly: true})
	if res.Usage.CompletionTokens != 0 || len(res.PromptLogprobs) != res.Usage.PromptTokens-1 {
		t.Fatalf("%d prompt logprobs for %d prompt tokens, %d completion tokens", len(res.PromptLogprobs), res.Usage.PromptTokens, res.Usage.CompletionTokens)
	}
	for i, lp := range res.PromptLogprobs {
		if lp.Token != res.PromptTokens[i+1] || lp.Logprob > 0 {
			t.Fatalf("prompt logprob %d: %+v", i, lp)
		}
	}
}

func TestErrors(t *testing.T) {
	rt := newTestRuntime(t, 1, &Options{QueueDepth: 1, MaxPendingEvents: 2})
	ctx := context.Background()
	var pe *ParamError
	for _, tc := range []struct {
		req  *Request
		want error
	}{
		{&Request{Model: "nope", Prompt: "x"}, ErrModelNotFound},
		{&Request{Deployment: "nope", Prompt: "x"}, ErrDeploymentNotFound},
		{&Request{Model: "test-lm", Prompt: "x", Sampling: Sampling{Temperature: 3}}, ErrInvalidRequest},
		{&Request{Model: "test-lm", Prompt: "x", N: 9}, ErrInvalidRequest},
		{&Request{Model: "test-lm", Messages: []tokenizer.Message{}}, ErrInvalidRequest},
		{&Request{Model: "test-lm", Messages: []tokenizer.Message{{Role: "wizard", Content: "x"}}}, ErrInvalidRequest},
		{&Request{Model: "test-lm", Prompt: strings.Repeat("word ", 300)}, ErrContextLength},
		{&Request{Model: "test-lm", Prompt: "x", Sampling: Sampling{LogitBias: map[int]float64{99999: 1}}}, ErrInvalidRequest},
	} {
		_, err := rt.Generate(ctx, tc.req, nil)
		if !errors.Is(err, tc.want) {
			t.Errorf("%+v: %v, want %v", tc.req, err, tc.want)
		}
	}
	_, err := rt.Generate(ctx, &Request{Model: "test-lm", Prompt: "x", TopLogprobs: 50}, nil)
	if !errors.As(err, &pe) || pe.Param != "top_logprobs" {
		t.Errorf("%v, want a ParamError naming top_logprobs", err)
	}
	// Overload: one slot held by a request whose caller does not read (the
	// sequence pauses), the queue of one full, the next request refused.
	long := &Request{Model: "test-lm", Prompt: "x"} // until the context is full
	hold := make(chan struct{})
	slow := func(Event) error { <-hold; return nil }
	d, _ := rt.Deployment("test-cpu")
	waitLoad := func(active, queued int) {
		deadline := time.Now().Add(5 * time.Second)
		for {
			a, q := d.Load()
			if a == active && q == queued {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("load %d/%d, want %d/%d", a, q, active, queued)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	lctx, cancel := context.WithCancel(ctx)
	finished := []chan struct{}{make(chan struct{}), make(chan struct{})}
	for i := 0; i < 2; i++ {
		go func() {
			defer close(finished[i])
			rt.Generate(lctx, long, slow)
		}()
		waitLoad(1, i)
	}
	if _, err := rt.Generate(ctx, &Request{Model: "test-lm", Prompt: "x", MaxTokens: 1}, nil); !errors.Is(err, ErrOverloaded) {
		t.Errorf("third request: %v, want ErrOverloaded", err)
	}
	// A queued request whose context ends returns at once, though no slot
	// has come free.
	cancel()
	select {
	case <-finished[1]:
	case <-time.After(2 * time.Second):
		t.Fatal("the cancelled queued request did not return while the slot stayed held")
	}
	close(hold)
	<-finished[0]
	waitLoad(0, 0)
}

func TestStreamIterator(t *testing.T) {
	rt := newTestRuntime(t, 2, nil)
	var text strings.Builder
	n := 0
	for ev, err := range rt.Stream(context.Background(), &Request{Model: "test-lm", Prompt: "Hi", MaxTokens: 10}) {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(ev.Text)
		n++
		if n == 3 {
			break // breaking off cancels the request
		}
	}
	if n != 3 {
		t.Fatalf("%d events", n)
	}
	// The runtime still serves.
	gen(t, rt, &Request{Model: "test-lm", Prompt: "Hi", MaxTokens: 3})
}

func TestTelemetryScopesByPrincipal(t *testing.T) {
	rt := newTestRuntime(t, 2, nil)
	gen(t, rt, &Request{Model: "test-lm", Prompt: "a", MaxTokens: 3, Principal: "alice", Endpoint: "completions"})
	gen(t, rt, &Request{Model: "test-lm", Prompt: "b", MaxTokens: 5, Principal: "bob", Endpoint: "completions"})
	rt.Generate(context.Background(), &Request{Model: "nope", Principal: "bob", Endpoint: "completions"}, nil)
	a, err := rt.Telemetry().Summarize(Filter{Principal: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := rt.Telemetry().Summarize(Filter{Principal: "bob"})
	if a.Requests.Total != 1 || a.Tokens.Completion != 3 || b.Requests.Total != 2 || b.Requests.Errors != 1 || b.Tokens.Completion != 5 {
		t.Fatalf("alice %+v, bob %+v", a.Requests, b.Requests)
	}
	if a.Neuro.Spikes <= 0 || a.Neuro.Timesteps == 0 || a.ByModel["test-lm"] == nil || a.ByDeploy["test-cpu"] == nil {
		t.Fatalf("alice neuro %+v", a.Neuro)
	}
	if _, err := rt.Telemetry().Summarize(Filter{Window: -time.Second}); err == nil {
		t.Fatal("negative window accepted")
	}
}

// TestSpecialTokensAreNotText: a completion that samples a special token
// (here forced by logit_bias) counts it, but its text never appears.
func TestSpecialTokensAreNotText(t *testing.T) {
	rt := newTestRuntime(t, 2, nil)
	user, ok := testTok.SpecialID("<|user|>")
	if !ok {
		t.Skip("the tokenizer has no <|user|>")
	}
	res := gen(t, rt, &Request{Model: "test-lm", Prompt: "Once", MaxTokens: 3,
		Sampling: Sampling{LogitBias: map[int]float64{user: 100}}})
	c := res.Choices[0]
	if len(c.Tokens) != 3 || c.Tokens[0] != user || strings.Contains(c.Text, "<|") {
		t.Fatalf("tokens %v text %q", c.Tokens, c.Text)
	}
}
