package runtime

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestPromptsAreOneBatch: a request of several prompts gives, for each,
// the choices the prompt gives alone (the same seeds), in the order
// prompt × N + choice, with usage summed and each prompt's own tokens.
func TestPromptsAreOneBatch(t *testing.T) {
	rt := newTestRuntime(t, 8, nil)
	prompts := []string{"Once upon a time", "The", "A dragon"}
	req := &Request{Model: "test-lm", Prompts: prompts, N: 2, MaxTokens: 6, Sampling: Sampling{Temperature: 1, Seed: seed(11)}, Echo: true, Logprobs: true}
	var events []Event
	res, err := rt.Generate(context.Background(), req, func(ev Event) error {
		events = append(events, ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Choices) != 6 || len(res.Prompts) != 3 {
		t.Fatalf("%d choices and %d prompts, want 6 and 3", len(res.Choices), len(res.Prompts))
	}
	streamed := make([]string, 6)
	for _, ev := range events {
		streamed[ev.Choice] += ev.Text
	}
	var usage Usage
	for p, prompt := range prompts {
		alone := gen(t, rt, &Request{Model: "test-lm", Prompt: prompt, N: 2, MaxTokens: 6, Sampling: Sampling{Temperature: 1, Seed: seed(11)}, Echo: true, Logprobs: true})
		for k := range 2 {
			got, want := res.Choices[p*2+k], alone.Choices[k]
			if got.Index != p*2+k || got.Text != want.Text || !reflect.DeepEqual(got.Tokens, want.Tokens) || got.FinishReason != want.FinishReason {
				t.Errorf("prompt %d choice %d: %+v, alone %+v", p, k, got, want)
			}
			if streamed[p*2+k] != got.Text {
				t.Errorf("prompt %d choice %d streamed %q, result %q", p, k, streamed[p*2+k], got.Text)
			}
		}
		if !reflect.DeepEqual(res.Prompts[p].Tokens, alone.PromptTokens) || len(res.Prompts[p].Logprobs) != len(alone.PromptLogprobs) {
			t.Errorf("prompt %d: %+v, alone %v %v", p, res.Prompts[p], alone.PromptTokens, alone.PromptLogprobs)
		}
		usage.PromptTokens += alone.Usage.PromptTokens
		usage.CompletionTokens += alone.Usage.CompletionTokens
		usage.TotalTokens += alone.Usage.TotalTokens
	}
	if res.Usage != usage || !reflect.DeepEqual(res.PromptTokens, res.Prompts[0].Tokens) {
		t.Errorf("usage %+v, the prompts' alone %+v", res.Usage, usage)
	}
}

// TestPromptsBeyondTheQueue: prompts whose sequences do not fit the
// queue at once wait for the request's own to finish; they are not
// refused.
func TestPromptsBeyondTheQueue(t *testing.T) {
	rt := newTestRuntime(t, 1, &Options{QueueDepth: 2})
	prompts := make([]string, 7)
	for i := range prompts {
		prompts[i] = fmt.Sprint("prompt ", i)
	}
	res, err := rt.Generate(context.Background(), &Request{Model: "test-lm", Prompts: prompts, N: 2, MaxTokens: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range res.Choices {
		if c.Index != i || len(c.Tokens) == 0 {
			t.Fatalf("choice %d: %+v", i, c)
		}
	}
	// A prompt's choices that cannot ever fit are the caller's mistake.
	var pe *ParamError
	if _, err := rt.Generate(context.Background(), &Request{Model: "test-lm", Prompts: prompts, N: 3, MaxTokens: 3}, nil); !errors.As(err, &pe) || pe.Param != "n" {
		t.Fatalf("3 choices a prompt, a queue of 2: %v, want a ParamError naming n", err)
	}
}

// TestStoppedStreamOfPrompts: a callback that stops a request of more
// prompts than the queue holds ends it, prompts not yet queued included.
func TestStoppedStreamOfPrompts(t *testing.T) {
	rt := newTestRuntime(t, 1, &Options{QueueDepth: 1})
	stop := errors.New("enough")
	_, err := rt.Generate(context.Background(), &Request{Model: "test-lm", Prompts: []string{"a", "b", "c"}, MaxTokens: 50}, func(Event) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("%v, want the callback's error", err)
	}
	d, _ := rt.Deployment("test-cpu")
	deadline := time.Now().Add(5 * time.Second)
	for a, q := d.Load(); a != 0 || q != 0; a, q = d.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("load %d/%d after the request ended", a, q)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPromptLimits(t *testing.T) {
	rt := newTestRuntime(t, 2, nil)
	ctx := context.Background()
	long := strings.Repeat("word ", 20)
	var ple *PromptLengthError
	_, err := rt.Generate(ctx, &Request{Model: "test-lm", Prompts: []string{"x", long}, MaxPromptTokens: 10}, nil)
	if !errors.As(err, &ple) || !errors.Is(err, ErrContextLength) || ple.Limit != 10 || ple.Tokens != len(testTok.Encode(long)) {
		t.Fatalf("%v, want a PromptLengthError of the second prompt", err)
	}
	if want := fmt.Sprintf("runtime: the prompt has %d tokens, the limit is 10", ple.Tokens); err.Error() != want {
		t.Errorf("%q, want %q", err, want)
	}
	if _, err := rt.Generate(ctx, &Request{Model: "test-lm", Prompt: "x", MaxTokens: 1, MaxPromptTokens: 10}, nil); err != nil {
		t.Fatal(err)
	}
	var pe *ParamError
	for _, req := range []*Request{
		{Model: "test-lm", Prompt: "x", Prompts: []string{"y"}},
		{Model: "test-lm", Prompts: []string{}},
	} {
		if _, err := rt.Generate(ctx, req, nil); !errors.As(err, &pe) || pe.Param != "prompt" {
			t.Errorf("%+v: %v, want a ParamError naming prompt", req, err)
		}
	}
}

// TestLimits: each bound of a request is accepted at its edge and
// refused past it, naming the field.
func TestLimits(t *testing.T) {
	rt := newTestRuntime(t, 8, nil)
	for _, tc := range []struct {
		param string
		edge  func(*Request)
		past  func(*Request)
	}{
		{"temperature", func(r *Request) { r.Sampling.Temperature = MaxTemperature }, func(r *Request) { r.Sampling.Temperature = MaxTemperature + 0.01 }},
		{"top_p", func(r *Request) { r.Sampling.TopP = MaxTopP }, func(r *Request) { r.Sampling.TopP = MaxTopP + 0.01 }},
		{"presence_penalty", func(r *Request) { r.Sampling.PresencePenalty = -MaxPenalty }, func(r *Request) { r.Sampling.PresencePenalty = -MaxPenalty - 0.01 }},
		{"frequency_penalty", func(r *Request) { r.Sampling.FrequencyPenalty = MaxPenalty }, func(r *Request) { r.Sampling.FrequencyPenalty = MaxPenalty + 0.01 }},
		{"logit_bias", func(r *Request) { r.Sampling.LogitBias = map[int]float64{1: -MaxLogitBias} }, func(r *Request) { r.Sampling.LogitBias = map[int]float64{1: MaxLogitBias + 1} }},
		{"n", func(r *Request) { r.N = MaxChoices }, func(r *Request) { r.N = MaxChoices + 1 }},
		{"stop", func(r *Request) { r.Stop = make([]string, MaxStops); fill(r.Stop) }, func(r *Request) { r.Stop = make([]string, MaxStops+1); fill(r.Stop) }},
		{"top_logprobs", func(r *Request) { r.Logprobs, r.TopLogprobs = true, MaxTopLogprobs }, func(r *Request) { r.Logprobs, r.TopLogprobs = true, MaxTopLogprobs+1 }},
	} {
		req := &Request{Model: "test-lm", Prompt: "x", MaxTokens: 1}
		tc.edge(req)
		if _, err := rt.Generate(context.Background(), req, nil); err != nil {
			t.Errorf("%s at its bound: %v", tc.param, err)
		}
		req = &Request{Model: "test-lm", Prompt: "x", MaxTokens: 1}
		tc.past(req)
		var pe *ParamError
		if _, err := rt.Generate(context.Background(), req, nil); !errors.As(err, &pe) || pe.Param != tc.param {
			t.Errorf("%s past its bound: %v", tc.param, err)
		}
	}
}

func fill(stops []string) {
	for i := range stops {
		stops[i] = fmt.Sprint("stop", i)
	}
}
