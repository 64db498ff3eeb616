package httpapi

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/neuro-go/neuro/runtime"
)

// countingBackend records the generation requests a server makes.
type countingBackend struct {
	*runtime.Runtime
	mu   sync.Mutex
	reqs []*runtime.Request
}

func (b *countingBackend) Generate(ctx context.Context, req *runtime.Request, fn func(runtime.Event) error) (*runtime.Result, error) {
	b.mu.Lock()
	b.reqs = append(b.reqs, req)
	b.mu.Unlock()
	return b.Runtime.Generate(ctx, req, fn)
}

func (b *countingBackend) take() []*runtime.Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.reqs
	b.reqs = nil
	return r
}

// TestOneRequestPerCompletion: the prompts of a completion, however many,
// are one request to the backend, which also enforces the prompt-token
// limit (the server does not encode the prompt itself).
func TestOneRequestPerCompletion(t *testing.T) {
	be := &countingBackend{Runtime: newTestRuntime(t, nil, 8)}
	s, err := New(be, &Options{Keys: testKeys, MaxPromptTokens: 20})
	if err != nil {
		t.Fatal(err)
	}
	body := `{"model":"neuro-1-lite","prompt":["a","b","c"],"n":2,"max_tokens":3,"seed":5}`
	w := do(s, "POST", "/v1/completions", keyAlice, body)
	var res struct {
		Choices []struct {
			Index int    `json:"index"`
			Text  string `json:"text"`
		} `json:"choices"`
		Usage runtime.Usage `json:"usage"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || w.Code != 200 || len(res.Choices) != 6 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	reqs := be.take()
	if len(reqs) != 1 || len(reqs[0].Prompts) != 3 || reqs[0].N != 2 || reqs[0].MaxPromptTokens != 20 {
		t.Fatalf("%d backend requests: %+v", len(reqs), reqs)
	}
	for i, c := range res.Choices {
		if c.Index != i {
			t.Fatalf("choice %d has index %d", i, c.Index)
		}
	}
	// The same, streamed.
	chunks := stream(t, s, "/v1/completions", strings.Replace(body, `}`, `,"stream":true,"stream_options":{"include_usage":true}}`, 1))
	texts := map[int]string{}
	for _, c := range chunks {
		for _, ch := range c.Choices {
			texts[ch.Index] += *ch.Text
		}
	}
	if reqs := be.take(); len(reqs) != 1 || len(texts) != 6 || *chunks[len(chunks)-1].Usage != res.Usage {
		t.Fatalf("%d backend requests, texts %v, usage %+v, want %+v", len(reqs), texts, chunks[len(chunks)-1].Usage, res.Usage)
	}
	for i, c := range res.Choices {
		if texts[i] != c.Text {
			t.Errorf("choice %d streamed %q, answered %q", i, texts[i], c.Text)
		}
	}
	// A prompt over the limit: the backend's refusal, before any event,
	// is an HTTP error naming the endpoint's field, streamed (and
	// echoed) or not.
	long := strings.Repeat("word ", 30)
	for _, tc := range []struct{ path, body, param string }{
		{"/v1/completions", `{"model":"neuro-1-lite","prompt":["a","` + long + `"]}`, "prompt"},
		{"/v1/completions", `{"model":"neuro-1-lite","prompt":"` + long + `","stream":true,"echo":true}`, "prompt"},
		{"/v1/chat/completions", `{"model":"neuro-1-lite","messages":[{"role":"user","content":"` + long + `"}],"stream":true}`, "messages"},
	} {
		w := do(s, "POST", tc.path, keyAlice, tc.body)
		checkError(t, w, 400, typeInvalidRequest, "context_length_exceeded", tc.param)
		if !strings.Contains(w.Body.String(), "tokens, the limit is 20") {
			t.Errorf("%s: %s", tc.body, w.Body)
		}
		if reqs := be.take(); len(reqs) != 1 {
			t.Errorf("%s: %d backend requests", tc.body, len(reqs))
		}
	}
}
