package client_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/httpapi/client"
	"github.com/neuro-go/neuro/httpapi/client/clienttest"
	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/models/tokenizers"
)

func start(t *testing.T, opts *clienttest.Options) (*clienttest.Server, *client.Client) {
	t.Helper()
	srv, err := clienttest.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, &client.Options{APIKey: srv.Key})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func user(s string) []client.ChatMessage { return []client.ChatMessage{{Role: "user", Content: s}} }

func TestModelsAndDeployments(t *testing.T) {
	for _, mock := range []bool{false, true} {
		t.Run(map[bool]string{false: "real", true: "mock"}[mock], func(t *testing.T) {
			_, c := start(t, &clienttest.Options{Mock: mock})
			ctx := ctxT(t)
			models, err := c.ListModels(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids := map[string]client.Model{}
			for _, m := range models {
				ids[m.ID] = m
			}
			for _, id := range clienttest.Models {
				m, ok := ids[id]
				if !ok || m.Object != "model" || !m.Capabilities.Chat || !m.Capabilities.Streaming || m.Neuromorphic == nil {
					t.Errorf("model %s: %+v (listed: %v)", id, m, ok)
				}
			}
			if _, ok := ids["neuro-1"]; ok {
				t.Error("the alias neuro-1 is listed as a model")
			}
			m, err := c.GetModel(ctx, "neuro-1")
			if err != nil || m.ID != "neuro-1-standard" {
				t.Fatalf("GetModel(neuro-1) = %+v, %v", m, err)
			}
			if !mock && (m.Neuromorphic.Neurons == 0 || m.Neuromorphic.TimestepsPerToken != 4 || len(m.Neuromorphic.Devices) == 0) {
				t.Errorf("neuromorphic %+v", m.Neuromorphic)
			}
			_, err = c.GetModel(ctx, "gpt-4")
			var ae *client.APIError
			if !client.IsNotFound(err) || !errors.As(err, &ae) || ae.Code != "model_not_found" || ae.RequestID == "" {
				t.Fatalf("unknown model: %v", err)
			}

			deps, err := c.ListDeployments(ctx)
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]bool{}
			for _, d := range deps {
				kinds[d.Device.Kind] = true
				if d.Object != "deployment" || d.Status != "ready" || d.MaxBatchSize < 1 {
					t.Errorf("deployment %+v", d)
				}
			}
			if !kinds["cpu"] || !kinds["emulator"] {
				t.Errorf("device kinds %v: want a cpu and a chip emulator", kinds)
			}
			d, err := c.GetDeployment(ctx, "neuro-1-lite-cpu")
			if err != nil || d.Model != "neuro-1-lite" || d.Device.Name != "cpu" {
				t.Fatalf("GetDeployment = %+v, %v", d, err)
			}
			_, err = c.GetDeployment(ctx, "nope")
			if !errors.As(err, &ae) || ae.StatusCode != 404 || ae.Code != "deployment_not_found" {
				t.Fatalf("unknown deployment: %v", err)
			}

			h, err := c.Health(ctx)
			if err != nil || h.Status != "ok" || h.Mock != mock || len(h.Deployments) != len(deps) {
				t.Fatalf("Health = %+v, %v", h, err)
			}
		})
	}
}

// collect streams req and returns the joined text of each choice, the
// finish reasons, the usage chunk and the chunks' count.
type collected struct {
	text   map[int]string
	finish map[int]string
	usage  *client.Usage
	chunks int
	ids    map[string]bool
}

func collect(t *testing.T, seq func(func(*client.ChatCompletionChunk, error) bool)) collected {
	t.Helper()
	col := collected{text: map[int]string{}, finish: map[int]string{}, ids: map[string]bool{}}
	roles := map[int]bool{}
	for ch, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		col.chunks++
		col.ids[ch.ID+"/"+ch.Model] = true
		if ch.Object != "chat.completion.chunk" {
			t.Fatalf("object %q", ch.Object)
		}
		if col.usage != nil {
			t.Fatal("a chunk after the usage chunk")
		}
		if ch.Usage != nil {
			if len(ch.Choices) != 0 {
				t.Fatalf("usage chunk with choices: %+v", ch)
			}
			col.usage = ch.Usage
			continue
		}
		for _, c := range ch.Choices {
			if c.Delta.Role != "" {
				if roles[c.Index] || c.Delta.Role != "assistant" || col.text[c.Index] != "" {
					t.Fatalf("role chunk %+v", c)
				}
				roles[c.Index] = true
			} else if !roles[c.Index] {
				t.Fatalf("choice %d: content before the role chunk", c.Index)
			}
			if col.finish[c.Index] != "" {
				t.Fatalf("choice %d: a chunk after its finish", c.Index)
			}
			col.text[c.Index] += c.Delta.Content
			col.finish[c.Index] = c.FinishReason
		}
	}
	if len(col.ids) != 1 {
		t.Fatalf("chunks carry ids/models %v, want one", col.ids)
	}
	return col
}

func TestChatCompletion(t *testing.T) {
	for _, mock := range []bool{false, true} {
		t.Run(map[bool]string{false: "real", true: "mock"}[mock], func(t *testing.T) {
			_, c := start(t, &clienttest.Options{Mock: mock})
			ctx := ctxT(t)
			req := &client.ChatCompletionRequest{Model: "neuro-1-lite", Messages: user("Tell me a story."),
				MaxTokens: client.Ptr(12), Sampling: client.Sampling{Temperature: client.Ptr(0.0)}}
			a, err := c.ChatCompletion(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := c.ChatCompletion(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if a.Object != "chat.completion" || !strings.HasPrefix(a.ID, "chatcmpl-") || a.Model != "neuro-1-lite" || a.Created == 0 || len(a.Choices) != 1 {
				t.Fatalf("result %+v", a)
			}
			ch := a.Choices[0]
			if ch.Message.Role != "assistant" || ch.Message.Content == "" || ch.Message.Content != b.Choices[0].Message.Content || ch.Logprobs != nil {
				t.Fatalf("greedy choices %+v / %+v", ch, b.Choices[0])
			}
			u := a.Usage
			if u.PromptTokens == 0 || u.CompletionTokens == 0 || u.CompletionTokens > 12 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Fatalf("usage %+v", u)
			}
			if (ch.FinishReason == "length") != (u.CompletionTokens == 12) {
				t.Fatalf("finish %q with %d tokens of 12", ch.FinishReason, u.CompletionTokens)
			}

			// The stream carries the same text and usage.
			sreq := *req
			sreq.StreamOptions = &client.StreamOptions{IncludeUsage: true}
			col := collect(t, c.ChatCompletionStream(ctx, &sreq))
			if col.text[0] != ch.Message.Content || col.finish[0] != ch.FinishReason || col.usage == nil || *col.usage != u {
				t.Fatalf("stream %q %q %+v; want %q %q %+v", col.text[0], col.finish[0], col.usage, ch.Message.Content, ch.FinishReason, u)
			}
			if col.chunks < 3 {
				t.Fatalf("%d chunks", col.chunks)
			}
			// Without include_usage there is no usage chunk.
			if col := collect(t, c.ChatCompletionStream(ctx, req)); col.usage != nil || col.text[0] != ch.Message.Content {
				t.Fatalf("stream without include_usage: %+v", col)
			}

			// Through a deployment: its model answers.
			d, err := c.DeploymentChatCompletion(ctx, "neuro-1-lite-cpu", &client.ChatCompletionRequest{Messages: req.Messages, MaxTokens: req.MaxTokens, Sampling: req.Sampling})
			if err != nil || d.Model != "neuro-1-lite" {
				t.Fatalf("deployment chat: %+v, %v", d, err)
			}
			if !mock && d.Choices[0].Message.Content != ch.Message.Content {
				t.Fatalf("the deployment of the model answered %q, the model %q", d.Choices[0].Message.Content, ch.Message.Content)
			}
			dcol := collect(t, c.DeploymentChatCompletionStream(ctx, "neuro-1-lite-cpu", &client.ChatCompletionRequest{Messages: req.Messages, MaxTokens: req.MaxTokens, Sampling: req.Sampling}))
			if dcol.text[0] != d.Choices[0].Message.Content {
				t.Fatalf("deployment stream %q, want %q", dcol.text[0], d.Choices[0].Message.Content)
			}
			_, err = c.DeploymentChatCompletion(ctx, "neuro-1-lite-cpu", &client.ChatCompletionRequest{Model: "neuro-1-heavy", Messages: req.Messages})
			var ae *client.APIError
			if !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Param != "model" || !client.IsInvalidRequest(err) {
				t.Fatalf("deployment with another model: %v", err)
			}
		})
	}
}

// n choices, seeds, stop sequences and log-probabilities, on the real
// model (mock text is not sampled).
func TestSampling(t *testing.T) {
	_, c := start(t, nil)
	ctx := ctxT(t)
	req := &client.ChatCompletionRequest{Model: "neuro-1-standard", Messages: user("Once upon a time"), MaxTokens: client.Ptr(16),
		Sampling: client.Sampling{Temperature: client.Ptr(1.0), N: client.Ptr(3), Seed: client.Ptr(int64(42))}}
	a, err := c.ChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.ChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Choices) != 3 {
		t.Fatalf("%d choices", len(a.Choices))
	}
	for i := range a.Choices {
		if a.Choices[i].Index != i || a.Choices[i].Message.Content != b.Choices[i].Message.Content {
			t.Fatalf("choice %d: %q / %q with the same seed", i, a.Choices[i].Message.Content, b.Choices[i].Message.Content)
		}
	}
	if a.Choices[0].Message.Content == a.Choices[1].Message.Content && a.Choices[1].Message.Content == a.Choices[2].Message.Content {
		t.Fatal("three sampled choices are identical")
	}
	other := *req
	other.Seed = client.Ptr(int64(43))
	if o, err := c.ChatCompletion(ctx, &other); err != nil || o.Choices[0].Message.Content == a.Choices[0].Message.Content {
		t.Fatalf("another seed gave the same text (%v)", err)
	}
	// The streamed choices equal the non-streamed ones.
	col := collect(t, c.ChatCompletionStream(ctx, req))
	for i := range a.Choices {
		if col.text[i] != a.Choices[i].Message.Content || col.finish[i] != a.Choices[i].FinishReason {
			t.Fatalf("streamed choice %d %q (%s), want %q (%s)", i, col.text[i], col.finish[i], a.Choices[i].Message.Content, a.Choices[i].FinishReason)
		}
	}

	// A stop sequence taken from the greedy text cuts it there.
	greedy := &client.ChatCompletionRequest{Model: "neuro-1-standard", Messages: user("Hello"), MaxTokens: client.Ptr(40), Sampling: client.Sampling{Temperature: client.Ptr(0.0)}}
	full, err := c.ChatCompletion(ctx, greedy)
	if err != nil {
		t.Fatal(err)
	}
	text := full.Choices[0].Message.Content
	if len(text) < 8 {
		t.Fatalf("greedy text too short to cut: %q", text)
	}
	stop := text[len(text)/2 : len(text)/2+2]
	want := text[:strings.Index(text, stop)]
	greedy.Stop = []string{"\x00never", stop}
	cut, err := c.ChatCompletion(ctx, greedy)
	if err != nil || cut.Choices[0].Message.Content != want || cut.Choices[0].FinishReason != "stop" {
		t.Fatalf("stop %q: %+v, %v; want %q", stop, cut, err, want)
	}

	// Log-probabilities: one per token, with the alternatives asked for.
	// The seed makes the streamed answer the same tokens as the whole one.
	lp := &client.ChatCompletionRequest{Model: "neuro-1-lite", Messages: user("Hi"), MaxTokens: client.Ptr(6), Logprobs: true, TopLogprobs: client.Ptr(3),
		Sampling: client.Sampling{Seed: client.Ptr(int64(7))}}
	res, err := c.ChatCompletion(ctx, lp)
	if err != nil {
		t.Fatal(err)
	}
	l := res.Choices[0].Logprobs
	if l == nil || len(l.Content) != res.Usage.CompletionTokens {
		t.Fatalf("logprobs %+v for %d tokens", l, res.Usage.CompletionTokens)
	}
	// A token may be part of a UTF-8 sequence: its bytes, not its text,
	// join to the content.
	var joined []byte
	for _, tl := range l.Content {
		for _, b := range tl.Bytes {
			joined = append(joined, byte(b))
		}
		if tl.Logprob > 0 || len(tl.TopLogprobs) != 3 || len(tl.Bytes) == 0 {
			t.Fatalf("token logprob %+v", tl)
		}
		if tl.TopLogprobs[0].Logprob < tl.TopLogprobs[2].Logprob {
			t.Fatalf("alternatives out of order: %+v", tl.TopLogprobs)
		}
	}
	// The JSON text has U+FFFD for each byte of a broken sequence.
	if string([]rune(string(joined))) != res.Choices[0].Message.Content {
		t.Fatalf("logprob bytes join to %q, text %q", joined, res.Choices[0].Message.Content)
	}
	n := 0
	for ch, err := range c.ChatCompletionStream(ctx, lp) {
		if err != nil {
			t.Fatal(err)
		}
		for _, cc := range ch.Choices {
			if cc.Logprobs != nil {
				n += len(cc.Logprobs.Content)
			}
		}
	}
	if n != len(l.Content) {
		t.Fatalf("stream gave %d token logprobs, want %d", n, len(l.Content))
	}
}

func TestCompletion(t *testing.T) {
	_, c := start(t, nil)
	ctx := ctxT(t)
	req := &client.CompletionRequest{Model: "neuro-1-lite", Prompt: "The fox", MaxTokens: client.Ptr(10), Sampling: client.Sampling{Temperature: client.Ptr(0.0)}}
	res, err := c.Completion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Object != "text_completion" || !strings.HasPrefix(res.ID, "cmpl-") || len(res.Choices) != 1 || res.Choices[0].Text == "" || res.Usage == nil {
		t.Fatalf("completion %+v", res)
	}
	var streamed strings.Builder
	finish := ""
	for ch, err := range c.CompletionStream(ctx, req) {
		if err != nil {
			t.Fatal(err)
		}
		if ch.Object != "text_completion" || ch.ID == res.ID {
			t.Fatalf("chunk %+v", ch)
		}
		for _, cc := range ch.Choices {
			streamed.WriteString(cc.Text)
			if cc.FinishReason != "" {
				finish = cc.FinishReason
			}
		}
	}
	if streamed.String() != res.Choices[0].Text || finish != res.Choices[0].FinishReason {
		t.Fatalf("streamed %q (%s), want %q (%s)", streamed.String(), finish, res.Choices[0].Text, res.Choices[0].FinishReason)
	}

	// Two prompts, two choices each.
	multi, err := c.Completion(ctx, &client.CompletionRequest{Model: "neuro-1-lite", Prompts: []string{"a", "b"}, MaxTokens: client.Ptr(3), Sampling: client.Sampling{N: client.Ptr(2)}})
	if err != nil || len(multi.Choices) != 4 {
		t.Fatalf("two prompts, n 2: %+v, %v", multi, err)
	}
	for i, ch := range multi.Choices {
		if ch.Index != i {
			t.Fatalf("choice %d has index %d", i, ch.Index)
		}
	}

	// Scoring a prompt, as lm-evaluation-harness does.
	score, err := c.Completion(ctx, &client.CompletionRequest{Model: "neuro-1-lite", Prompt: "The quick brown fox", MaxTokens: client.Ptr(0), Echo: true, Logprobs: client.Ptr(0)})
	if err != nil {
		t.Fatal(err)
	}
	sc := score.Choices[0]
	if sc.Text != "The quick brown fox" || sc.Logprobs == nil || len(sc.Logprobs.Tokens) != score.Usage.PromptTokens || score.Usage.CompletionTokens != 0 {
		t.Fatalf("echo: %+v usage %+v", sc, score.Usage)
	}
	if sc.Logprobs.TokenLogprobs[0] != nil || strings.Join(sc.Logprobs.Tokens, "") != sc.Text {
		t.Fatalf("echo logprobs %+v", sc.Logprobs)
	}
	for i, v := range sc.Logprobs.TokenLogprobs[1:] {
		if v == nil || *v > 0 {
			t.Fatalf("token %d logprob %v", i+1, v)
		}
	}

	// The same prompt as token ids (of the test models' tokenizer) scores
	// the same.
	tok, err := tokenizers.Load("neuro-bpe-1k")
	if err != nil {
		t.Fatal(err)
	}
	byIDs, err := c.Completion(ctx, &client.CompletionRequest{Model: "neuro-1-lite", PromptTokens: [][]int{tok.Encode("The quick brown fox")},
		MaxTokens: client.Ptr(0), Echo: true, Logprobs: client.Ptr(0)})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(byIDs.Choices, score.Choices) {
		t.Fatalf("token ids: %+v, the text: %+v", byIDs.Choices, score.Choices)
	}
	if _, err := c.Completion(ctx, &client.CompletionRequest{Model: "neuro-1-lite", Prompt: "a", PromptTokens: [][]int{{1}}}); !errors.Is(err, wire.ErrPrompts) {
		t.Fatalf("Prompt and PromptTokens together: %v", err)
	}

	if _, err := c.Completion(ctx, &client.CompletionRequest{Model: "neuro-1-lite", Prompt: "a", Prompts: []string{"b"}}); err == nil {
		t.Fatal("Prompt and Prompts together were sent")
	}
}

func TestErrors(t *testing.T) {
	srv, c := start(t, &clienttest.Options{Mock: true, API: &httpapi.Options{RequestsPerMinute: 3}})
	ctx := ctxT(t)
	wrong, _ := client.New(srv.URL+"/v1", &client.Options{APIKey: "sk-wrong"})
	_, err := wrong.ListModels(ctx)
	var ae *client.APIError
	if !client.IsUnauthorized(err) || !errors.As(err, &ae) || ae.Type != "authentication_error" || ae.Code != "invalid_api_key" || strings.Contains(err.Error(), "sk-wrong") {
		t.Fatalf("wrong key: %v", err)
	}
	none, _ := client.New(srv.URL, nil)
	if _, err := none.GetDeployment(ctx, "neuro-1-lite-cpu"); !client.IsUnauthorized(err) {
		t.Fatalf("no key: %v", err)
	}
	if h, err := none.Health(ctx); err != nil || h.Status != "ok" {
		t.Fatalf("health needs no key: %+v %v", h, err)
	}

	bad := []struct {
		req   client.ChatCompletionRequest
		param string
	}{
		{client.ChatCompletionRequest{Model: "neuro-1-lite", Messages: user("x"), Sampling: client.Sampling{Temperature: client.Ptr(2.5)}}, "temperature"},
		{client.ChatCompletionRequest{Model: "neuro-1-lite", Messages: user("x"), MaxTokens: client.Ptr(0)}, "max_tokens"},
	}
	for _, b := range bad {
		_, err := c.ChatCompletion(ctx, &b.req)
		if !errors.As(err, &ae) || ae.StatusCode != http.StatusBadRequest || ae.Param != b.param || !client.IsInvalidRequest(err) {
			t.Fatalf("want 400 on %s: %v", b.param, err)
		}
	}
	// The stream's error comes before the stream, as an ordinary error.
	for _, err := range c.CompletionStream(ctx, &client.CompletionRequest{Model: "neuro-1-lite", Prompt: "x"}) {
		if !errors.As(err, &ae) || ae.Code != "stream_not_supported" || ae.MidStream {
			t.Fatalf("mock completion stream: %v", err)
		}
	}
	// The rate limit is 3 a minute; 5 requests were made with the key.
	_, err = c.ListModels(ctx)
	if !client.IsRateLimited(err) || !errors.As(err, &ae) || ae.RetryAfter < time.Second {
		t.Fatalf("want 429 with Retry-After: %v", err)
	}
}

// Breaking out of a stream closes the connection, and the server stops
// generating: the deployment has no active sequence soon after, and the
// request counts as failed (cancelled), not completed.
func TestBreakStopsGeneration(t *testing.T) {
	_, c := start(t, nil)
	ctx := ctxT(t)
	// neuro-1-heavy has no context limit: without max_tokens it would run
	// to the server's 4096 tokens.
	bias, err := clienttest.EndlessBias()
	if err != nil {
		t.Fatal(err)
	}
	chunks := 0
	req := &client.ChatCompletionRequest{Model: "neuro-1-heavy", Messages: user("Go on forever"), Sampling: client.Sampling{LogitBias: bias}}
	for ch, err := range c.ChatCompletionStream(ctx, req) {
		if err != nil {
			t.Fatal(err)
		}
		if ch.Choices[0].FinishReason != "" {
			t.Fatalf("the completion ended (%s) before the client left", ch.Choices[0].FinishReason)
		}
		chunks++
		if chunks == 3 {
			break
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		d, err := c.GetDeployment(ctx, "neuro-1-heavy-cpu")
		if err != nil {
			t.Fatal(err)
		}
		if d.Load.Active == 0 && d.Load.Queued == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployment still busy 5 s after the client left: %+v", d.Load)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The handler records the request when it returns, which can be a
	// moment after the deployment's slot is free: wait for the record.
	var tel *client.Telemetry
	for {
		if tel, err = c.Telemetry(ctx, &client.TelemetryQuery{Model: "neuro-1-heavy"}); err != nil {
			t.Fatal(err)
		}
		if tel.Requests.Total > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("abandoned after %d chunks: %d completion tokens generated", chunks, tel.Tokens.Completion)
	if tel.Requests.Total != 1 || tel.Requests.Errors != 1 || tel.Tokens.Completion >= 1024 {
		t.Fatalf("the abandoned request: %+v, tokens %+v", tel.Requests, tel.Tokens)
	}
}

func TestTelemetry(t *testing.T) {
	srv, c := start(t, &clienttest.Options{Keys: map[string]string{"sk-a": "alice", "sk-b": "bob"}})
	ctx := ctxT(t)
	bob, _ := client.New(srv.URL, &client.Options{APIKey: "sk-b"})
	for i := 0; i < 2; i++ {
		if _, err := c.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "neuro-1-lite", Messages: user("hi"), MaxTokens: client.Ptr(4)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bob.DeploymentChatCompletion(ctx, clienttest.LoihiDeployment, &client.ChatCompletionRequest{Messages: user("hi"), MaxTokens: client.Ptr(4)}); err != nil {
		t.Fatal(err)
	}
	a, err := c.Telemetry(ctx, &client.TelemetryQuery{Window: "5m", Model: "neuro-1-lite"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Object != "telemetry" || a.Requests.Total != 2 || a.Tokens.Completion == 0 || a.LatencyMS.P50 <= 0 || a.Neuromorphic.Timesteps == 0 || a.ByModel["neuro-1-lite"] == nil {
		t.Fatalf("alice's telemetry %+v", a)
	}
	b, err := bob.Telemetry(ctx, &client.TelemetryQuery{Deployment: clienttest.LoihiDeployment})
	if err != nil {
		t.Fatal(err)
	}
	if b.Requests.Total != 1 || b.ByDeployment[clienttest.LoihiDeployment] == nil || b.Neuromorphic.EnergyEstimateUJ <= 0 {
		t.Fatalf("bob's telemetry %+v", b)
	}
	if _, err := c.Telemetry(ctx, &client.TelemetryQuery{Window: "yesterday"}); !client.IsInvalidRequest(err) {
		t.Fatalf("bad window: %v", err)
	}
}
