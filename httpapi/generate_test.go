package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

func TestChatCompletion(t *testing.T) {
	rt := newTestRuntime(t, nil, 4)
	for _, mock := range []bool{false, true} {
		s := newTestServer(t, rt, &Options{Mock: mock})
		w := do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"neuro-1","messages":[{"role":"user","content":"Hello"}],"max_tokens":5,"n":2,"seed":7}`)
		if w.Code != 200 {
			t.Fatalf("mock %v: %d %s", mock, w.Code, w.Body)
		}
		var c wire.ChatCompletion
		if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(c.ID, "chatcmpl-") || c.Object != "chat.completion" || c.Model != "neuro-1-standard" || c.Created == 0 || len(c.Choices) != 2 {
			t.Fatalf("mock %v: %s", mock, w.Body)
		}
		for i, ch := range c.Choices {
			if ch.Index != i || ch.Message.Role != "assistant" || ch.Logprobs != nil || (ch.FinishReason != "length" && ch.FinishReason != "stop") {
				t.Errorf("mock %v choice %d: %+v", mock, i, ch)
			}
		}
		u := c.Usage
		if u.PromptTokens == 0 || u.CompletionTokens == 0 || u.CompletionTokens > 10 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
			t.Errorf("mock %v usage %+v", mock, u)
		}
		// Same seed, same request: same text.
		w2 := do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"neuro-1","messages":[{"role":"user","content":"Hello"}],"max_tokens":5,"n":2,"seed":7}`)
		var c2 wire.ChatCompletion
		json.Unmarshal(w2.Body.Bytes(), &c2)
		if c2.Choices[0].Message.Content != c.Choices[0].Message.Content || c2.Choices[1].Message.Content != c.Choices[1].Message.Content {
			t.Errorf("mock %v: seed 7 twice gave %q and %q", mock, c.Choices[0].Message.Content, c2.Choices[0].Message.Content)
		}
		// The deployment route gives the deployment's model.
		w = do(s, "POST", "/v1/deployments/neuro-1-heavy-cpu/chat/completions", keyAlice, `{"messages":[{"role":"user","content":"Hello"}],"max_tokens":3}`)
		json.Unmarshal(w.Body.Bytes(), &c)
		if w.Code != 200 || c.Model != "neuro-1-heavy" {
			t.Errorf("mock %v deployment: %d %s", mock, w.Code, w.Body)
		}
	}
}

func TestMockIsDeterministicAndCountsTokens(t *testing.T) {
	s := newTestServer(t, newMockRuntime(t), &Options{Mock: true})
	body := `{"model":"neuro-1-lite","messages":[{"role":"user","content":"Tell me a story"}]}`
	a, b := do(s, "POST", "/v1/chat/completions", keyAlice, body), do(s, "POST", "/v1/chat/completions", keyAlice, body)
	other := do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"neuro-1-lite","messages":[{"role":"user","content":"Another story"}]}`)
	var ca, cb, co wire.ChatCompletion
	json.Unmarshal(a.Body.Bytes(), &ca)
	json.Unmarshal(b.Body.Bytes(), &cb)
	json.Unmarshal(other.Body.Bytes(), &co)
	text := ca.Choices[0].Message.Content
	if text == "" || text != cb.Choices[0].Message.Content || text == co.Choices[0].Message.Content {
		t.Fatalf("mock texts %q %q %q", text, cb.Choices[0].Message.Content, co.Choices[0].Message.Content)
	}
	tok := testTokenizer(t)
	// The mock emits whole words, which the tokenizer may merge when it
	// encodes them again: at least as many tokens as the text's encoding.
	if got := len(tok.Encode(text)); ca.Usage.CompletionTokens < got || got == 0 {
		t.Errorf("completion_tokens %d, the model's tokenizer counts %d", ca.Usage.CompletionTokens, got)
	}
	if ca.Usage.PromptTokens <= len(tok.Encode("Tell me a story")) {
		t.Errorf("prompt_tokens %d do not include the chat template", ca.Usage.PromptTokens)
	}
	// A compiled (non-language) network cannot chat: 400 saying so.
	// Models list: the three, the alias not listed.
	w := do(s, "GET", "/v1/models", keyAlice, nil)
	var list struct {
		Object string        `json:"object"`
		Data   []*wire.Model `json:"data"`
	}
	json.Unmarshal(w.Body.Bytes(), &list)
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
		if !m.Capabilities.Chat || m.Neuromorphic == nil || m.Object != "model" {
			t.Errorf("record %+v", m)
		}
	}
	if list.Object != "list" || strings.Join(ids, ",") != "neuro-1-heavy,neuro-1-lite,neuro-1-standard" {
		t.Errorf("models %v", ids)
	}
	w = do(s, "GET", "/v1/models/neuro-1", keyAlice, nil)
	var m wire.Model
	json.Unmarshal(w.Body.Bytes(), &m)
	if w.Code != 200 || m.ID != "neuro-1-standard" {
		t.Errorf("neuro-1: %d %s", w.Code, w.Body)
	}
}

func TestModelRecordsFromTheRuntime(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	s := newTestServer(t, rt, nil)
	w := do(s, "GET", "/v1/models/neuro-1-lite", keyAlice, nil)
	var m wire.Model
	json.Unmarshal(w.Body.Bytes(), &m)
	ni := m.Neuromorphic
	if w.Code != 200 || ni == nil || ni.Neurons != 32+testTokenizer(t).VocabSize() || ni.Synapses == 0 || ni.Parameters == 0 || ni.Layers == 0 ||
		ni.TimestepsPerToken != 4 || ni.Context.Length != 256 || len(ni.Devices) == 0 || ni.Devices[0] != "cpu" {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	w = do(s, "GET", "/v1/deployments", keyAlice, nil)
	var deps struct {
		Data []wire.Deployment `json:"data"`
	}
	json.Unmarshal(w.Body.Bytes(), &deps)
	if len(deps.Data) != 3 || deps.Data[0].Object != "deployment" || deps.Data[0].Device.Kind != "cpu" || deps.Data[0].Status != "ready" || deps.Data[0].MaxBatchSize != 2 {
		t.Fatalf("%s", w.Body)
	}
	if w := do(s, "GET", "/health", "", nil); w.Code != 200 {
		t.Errorf("health %d %s", w.Code, w.Body)
	}
	empty := newTestServer(t, runtime.New(nil), nil)
	if w := do(empty, "GET", "/health", "", nil); w.Code != 503 || !strings.Contains(w.Body.String(), "no model") {
		t.Errorf("health without deployments: %d %s", w.Code, w.Body)
	}
}

func stream(t *testing.T, h http.Handler, path, body string) []chunk {
	t.Helper()
	w := do(h, "POST", path, keyAlice, body)
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %q %s", w.Code, w.Header().Get("Content-Type"), w.Body)
	}
	evs := sseEvents(t, w.Body)
	if len(evs) < 2 || evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %q", evs)
	}
	var out []chunk
	for _, e := range evs[:len(evs)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("chunk %q: %v", e, err)
		}
		if c.Error != nil {
			t.Fatalf("error key in a normal chunk: %s", e)
		}
		out = append(out, c)
	}
	return out
}

func TestChatStreaming(t *testing.T) {
	rt := newTestRuntime(t, nil, 4)
	for _, mock := range []bool{false, true} {
		s := newTestServer(t, rt, &Options{Mock: mock})
		body := `{"model":"neuro-1-lite","messages":[{"role":"user","content":"Hi"}],"max_tokens":6,"seed":3,"stream":true,"stream_options":{"include_usage":true}}`
		chunks := stream(t, s, "/v1/chat/completions", body)
		first, last := chunks[0], chunks[len(chunks)-1]
		if d := first.Choices[0].Delta; d == nil || d.Role == nil || *d.Role != "assistant" || d.Content == nil || *d.Content != "" {
			t.Fatalf("mock %v: first chunk %+v", mock, first)
		}
		if len(last.Choices) != 0 || last.Usage == nil || last.Usage.CompletionTokens != 6 && !mock {
			t.Fatalf("mock %v: usage chunk %+v", mock, last)
		}
		fin := chunks[len(chunks)-2]
		if fin.Choices[0].FinishReason == nil || fin.Choices[0].Delta == nil || fin.Choices[0].Delta.Content != nil || fin.Choices[0].Delta.Role != nil {
			t.Fatalf("mock %v: finish chunk %+v", mock, fin)
		}
		var text strings.Builder
		for _, c := range chunks {
			if c.ID != first.ID || c.Created != first.Created || c.Object != "chat.completion.chunk" || c.Model != "neuro-1-lite" {
				t.Fatalf("mock %v: chunk %+v differs from the first %+v", mock, c, first)
			}
			for _, ch := range c.Choices[:min(1, len(c.Choices))] {
				if ch.Delta != nil && ch.Delta.Content != nil {
					text.WriteString(*ch.Delta.Content)
				}
			}
		}
		// The stream says what the non-streamed answer says.
		w := do(s, "POST", "/v1/chat/completions", keyAlice, strings.Replace(body, `"stream":true,"stream_options":{"include_usage":true}`, `"stream":false`, 1))
		var c wire.ChatCompletion
		json.Unmarshal(w.Body.Bytes(), &c)
		if c.Choices[0].Message.Content != text.String() || last.Usage.CompletionTokens != c.Usage.CompletionTokens {
			t.Errorf("mock %v: streamed %q (%d tokens), whole %q (%d)", mock, text.String(), last.Usage.CompletionTokens, c.Choices[0].Message.Content, c.Usage.CompletionTokens)
		}
		// Without include_usage there is no usage chunk; n=2 streams two
		// choices, each with its role chunk and finish chunk.
		chunks = stream(t, s, "/v1/chat/completions", `{"model":"neuro-1-lite","messages":[{"role":"user","content":"Hi"}],"max_tokens":3,"n":2,"stream":true}`)
		roles, finishes := map[int]bool{}, map[int]bool{}
		for _, c := range chunks {
			if c.Usage != nil || len(c.Choices) != 1 {
				t.Fatalf("mock %v: chunk %+v", mock, c)
			}
			ch := c.Choices[0]
			if ch.Delta.Role != nil {
				roles[ch.Index] = true
			}
			if ch.FinishReason != nil {
				finishes[ch.Index] = true
			}
		}
		if len(roles) != 2 || len(finishes) != 2 {
			t.Errorf("mock %v: roles %v finishes %v", mock, roles, finishes)
		}
	}
}

func TestStopAndLogprobs(t *testing.T) {
	rt := newTestRuntime(t, nil, 4)
	for _, mock := range []bool{false, true} {
		s := newTestServer(t, rt, &Options{Mock: mock})
		full := do(s, "POST", "/v1/completions", keyAlice, `{"model":"neuro-1-lite","prompt":"Once","max_tokens":30,"temperature":0}`)
		var fc wire.Completion
		json.Unmarshal(full.Body.Bytes(), &fc)
		text := fc.Choices[0].Text
		if len(text) < 8 {
			t.Fatalf("mock %v: text %q too short", mock, text)
		}
		stop := text[len(text)/2 : len(text)/2+2]
		cut := text[:strings.Index(text, stop)]
		b, _ := json.Marshal(map[string]any{"model": "neuro-1-lite", "prompt": "Once", "max_tokens": 30, "temperature": 0, "stop": []string{stop}, "logprobs": 2})
		w := do(s, "POST", "/v1/completions", keyAlice, string(b))
		var c wire.Completion
		json.Unmarshal(w.Body.Bytes(), &c)
		ch := c.Choices[0]
		if ch.Text != cut || ch.FinishReason != "stop" {
			t.Fatalf("mock %v: stop %q: %q (%s), want %q", mock, stop, ch.Text, ch.FinishReason, cut)
		}
		lp := ch.Logprobs
		if lp == nil || len(lp.Tokens) != c.Usage.CompletionTokens || len(lp.TokenLogprobs) != len(lp.Tokens) || len(lp.TopLogprobs) != len(lp.Tokens) || len(lp.TextOffset) != len(lp.Tokens) {
			t.Fatalf("mock %v: logprobs %s", mock, w.Body)
		}
		for i := range lp.Tokens {
			if *lp.TokenLogprobs[i] > 0 || len(lp.TopLogprobs[i]) == 0 || len(lp.TopLogprobs[i]) > 2 || i > 0 && !strings.ContainsRune(lp.Tokens[i-1], '\uFFFD') && lp.TextOffset[i] != lp.TextOffset[i-1]+len(lp.Tokens[i-1]) {
				t.Fatalf("mock %v: logprob %d: %s", mock, i, w.Body)
			}
		}
		// Chat logprobs in the chat format, streamed and not.
		w = do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"neuro-1-lite","messages":[{"role":"user","content":"x"}],"max_tokens":4,"logprobs":true,"top_logprobs":3}`)
		var cc wire.ChatCompletion
		json.Unmarshal(w.Body.Bytes(), &cc)
		cl := cc.Choices[0].Logprobs
		if cl == nil || len(cl.Content) != cc.Usage.CompletionTokens || len(cl.Content[0].TopLogprobs) != 3 || len(cl.Content[0].Bytes) == 0 {
			t.Fatalf("mock %v: chat logprobs %s", mock, w.Body)
		}
		chunks := stream(t, s, "/v1/chat/completions", `{"model":"neuro-1-lite","messages":[{"role":"user","content":"x"}],"max_tokens":4,"logprobs":true,"top_logprobs":3,"stream":true,"stream_options":{"include_usage":true}}`)
		// The model is sampled, so it may end before max_tokens: every
		// token it generated carries its logprobs.
		n, want := 0, -1
		for _, c := range chunks {
			if c.Usage != nil {
				want = c.Usage.CompletionTokens
			}
			if len(c.Choices) == 1 && c.Choices[0].Delta.Content != nil && len(c.Choices[0].Logprobs) > 0 && string(c.Choices[0].Logprobs) != "null" {
				var l wire.ChatLogprobs
				if err := json.Unmarshal(c.Choices[0].Logprobs, &l); err != nil || len(l.Content) == 0 || len(l.Content[0].TopLogprobs) != 3 {
					t.Fatalf("mock %v: chunk logprobs %s", mock, c.Choices[0].Logprobs)
				}
				n += len(l.Content)
			}
		}
		if n != want || n == 0 {
			t.Errorf("mock %v: %d streamed logprobs, want %d", mock, n, want)
		}
	}
}

func TestEchoScoresThePrompt(t *testing.T) {
	rt := newTestRuntime(t, nil, 4)
	for _, mock := range []bool{false, true} {
		s := newTestServer(t, rt, &Options{Mock: mock})
		prompt := "The quick brown fox jumps"
		w := do(s, "POST", "/v1/completions", keyAlice, `{"model":"neuro-1-lite","prompt":"`+prompt+`","echo":true,"logprobs":0,"max_tokens":0}`)
		if w.Code != 200 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		var raw struct {
			Choices []struct {
				Text     string `json:"text"`
				Logprobs struct {
					Tokens        []string   `json:"tokens"`
					TokenLogprobs []*float64 `json:"token_logprobs"`
					TopLogprobs   []any      `json:"top_logprobs"`
					TextOffset    []int      `json:"text_offset"`
				} `json:"logprobs"`
			} `json:"choices"`
			Usage runtime.Usage `json:"usage"`
		}
		json.Unmarshal(w.Body.Bytes(), &raw)
		ch := raw.Choices[0]
		lp := ch.Logprobs
		if ch.Text != prompt || raw.Usage.CompletionTokens != 0 || len(lp.Tokens) != raw.Usage.PromptTokens || strings.Join(lp.Tokens, "") != prompt {
			t.Fatalf("mock %v: %s", mock, w.Body)
		}
		if lp.TokenLogprobs[0] != nil || lp.TopLogprobs[0] != nil {
			t.Errorf("mock %v: first prompt token has a logprob: %s", mock, w.Body)
		}
		for i := 1; i < len(lp.Tokens); i++ {
			if lp.TokenLogprobs[i] == nil || *lp.TokenLogprobs[i] > 0 || lp.TextOffset[i] != lp.TextOffset[i-1]+len(lp.Tokens[i-1]) {
				t.Errorf("mock %v: token %d: %s", mock, i, w.Body)
			}
		}
	}
}

// The seed keeps the sampled test model from ending a prompt early.
func TestTextCompletionStreaming(t *testing.T) {
	rt := newTestRuntime(t, nil, 4)
	s := newTestServer(t, rt, nil)
	chunks := stream(t, s, "/v1/completions", `{"model":"neuro-1-lite","prompt":["a","b"],"max_tokens":3,"seed":5,"stream":true,"stream_options":{"include_usage":true}}`)
	texts := map[int]string{}
	var fin int
	for _, c := range chunks {
		if c.Object != "text_completion" || c.ID != chunks[0].ID {
			t.Fatalf("chunk %+v", c)
		}
		for _, ch := range c.Choices {
			texts[ch.Index] += *ch.Text
			if ch.FinishReason != nil {
				fin++
			}
		}
	}
	if len(texts) != 2 || fin != 2 || chunks[len(chunks)-1].Usage.CompletionTokens != 6 {
		t.Fatalf("texts %v, %d finishes, last %+v", texts, fin, chunks[len(chunks)-1])
	}
}

// A client that goes away stops its generation at once: the deployment's
// slots are free again.
func TestClientDisconnectCancels(t *testing.T) {
	rt := newTestRuntime(t, nil, 2, unbounded)
	s := newTestServer(t, rt, &Options{MaxTokens: 1 << 30})
	srv := httptest.NewServer(s)
	defer srv.Close()
	d, _ := rt.Deployment("neuro-1-lite-cpu")
	for _, path := range []string{"/v1/completions", "/v1/chat/completions"} {
		body := longBody(t)
		if strings.Contains(path, "chat") {
			body = strings.Replace(body, `"prompt":"x"`, `"messages":[{"role":"user","content":"x"}]`, 1)
		}
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyAlice)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		if _, err := resp.Body.Read(buf); err != nil {
			t.Fatal(err)
		}
		if a, _ := d.Load(); a != 1 {
			t.Fatalf("%s: %d active while streaming", path, a)
		}
		cancel()
		resp.Body.Close()
		start := time.Now()
		waitLoad(t, d, 0, 0)
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("%s: slot freed %v after the disconnect", path, el)
		}
	}
}

// A reader that stops reading is cut off after StreamWriteTimeout.
func TestSlowReaderIsCutOff(t *testing.T) {
	rt := newTestRuntime(t, nil, 2, unbounded)
	s := newTestServer(t, rt, &Options{MaxTokens: 1 << 30, StreamWriteTimeout: 200 * time.Millisecond})
	srv := httptest.NewServer(s)
	defer srv.Close()
	d, _ := rt.Deployment("neuro-1-lite-cpu")
	req, _ := http.NewRequest("POST", srv.URL+"/v1/completions", strings.NewReader(longBody(t)))
	req.Header.Set("Authorization", "Bearer "+keyAlice)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Read nothing more: the socket buffers fill, a write blocks past its
	// deadline, and the server ends the stream and frees the slot.
	waitLoad(t, d, 0, 0)
}

func TestTelemetryIsScopedToTheCaller(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	for _, mock := range []bool{false, true} {
		s := newTestServer(t, rt, &Options{Mock: mock})
		before := telemetry(t, s, keyAlice, "")
		do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"neuro-1","messages":[{"role":"user","content":"x"}],"max_tokens":3}`)
		do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"neuro-1","messages":[]}`)
		do(s, "POST", "/v1/chat/completions", keyBob, `{"model":"neuro-1-lite","messages":[{"role":"user","content":"x"}],"max_tokens":2}`)
		a := telemetry(t, s, keyAlice, "")
		if a.Requests.Total-before.Requests.Total != 3 || a.Requests.Errors-before.Requests.Errors != 1 || a.Tokens.Completion-before.Tokens.Completion > 3 || a.Tokens.Completion == before.Tokens.Completion {
			t.Errorf("mock %v: alice before %+v after %+v", mock, before.Requests, a.Requests) // 3: telemetry itself, then the two
		}
		if a.ByModel["neuro-1-standard"] == nil || a.ByModel["neuro-1-lite"] != nil && a.ByModel["neuro-1-lite"].Tokens.Completion > before.ByModel["neuro-1-lite"].Tokens.Completion {
			t.Errorf("mock %v: alice sees %v", mock, a.ByModel)
		}
		if !mock && a.Neuro.Spikes <= before.Neuro.Spikes {
			t.Errorf("no spikes counted: %+v", a.Neuro)
		}
		f := telemetry(t, s, keyAlice, "?model=neuro-1-heavy&window=1h")
		if f.Requests.Total != 0 {
			t.Errorf("mock %v: filter by model: %+v", mock, f.Requests)
		}
		checkError(t, do(s, "GET", "/v1/telemetry?window=forever", keyAlice, nil), 400, typeInvalidRequest, "invalid_value", "window")
	}
}

func telemetry(t *testing.T, s http.Handler, key, q string) *runtime.Summary {
	t.Helper()
	w := do(s, "GET", "/v1/telemetry"+q, key, nil)
	var out struct {
		Object string `json:"object"`
		Window struct{ Start, End int64 }
		runtime.Summary
	}
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || w.Code != 200 || out.Object != "telemetry" || out.Window.End == 0 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if out.ByModel == nil {
		out.ByModel = map[string]*runtime.GroupSummary{}
	}
	return &out.Summary
}

func TestCORSMountingMetricsRequestID(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	s := newTestServer(t, rt, &Options{AllowedOrigins: []string{"https://app.example"}})
	mux := http.NewServeMux()
	mux.Handle("/api/", http.StripPrefix("/api", s))
	req := httptest.NewRequest("OPTIONS", "/api/v1/chat/completions", nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	h := w.Header()
	if w.Code != 204 || h.Get("Access-Control-Allow-Origin") != "https://app.example" || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("preflight %d %v", w.Code, h)
	}
	req.Header.Set("Origin", "https://evil.example")
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	if w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("a foreign origin was allowed")
	}
	// No origins by default.
	plain := newTestServer(t, rt, nil)
	req.Header.Set("Origin", "https://app.example")
	w = httptest.NewRecorder()
	plain.ServeHTTP(w, req)
	if w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatal("CORS on by default")
	}
	// Under the prefix, the API works and ids come back.
	w = do(mux, "POST", "/api/v1/chat/completions", keyAlice, `{"model":"neuro-1","messages":[{"role":"user","content":"x"}],"max_tokens":2,"seed":1}`) // seeded, so a first token comes
	if w.Code != 200 || w.Header().Get("X-Request-Id") == "" {
		t.Fatalf("under a prefix: %d %s", w.Code, w.Body)
	}
	r := httptest.NewRequest("GET", "/api/v1/models", nil)
	r.Header.Set("Authorization", "Bearer "+keyAlice)
	r.Header.Set("X-Request-Id", "my-trace-1")
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	if w.Header().Get("X-Request-Id") != "my-trace-1" {
		t.Errorf("request id %q", w.Header().Get("X-Request-Id"))
	}
	w = do(mux, "GET", "/api/metrics", "", nil)
	for _, series := range []string{"neuro_http_requests_total", "neuro_http_request_duration_seconds", "neuro_time_to_first_token_seconds",
		"neuro_tokens_total", "neuro_spikes_total", "neuro_energy_microjoules_total", `endpoint="/v1/chat/completions"`} {
		if !strings.Contains(w.Body.String(), series) {
			t.Errorf("metrics lack %s", series)
		}
	}
	off, err := New(rt, &Options{Keys: testKeys})
	if err != nil {
		t.Fatal(err)
	}
	if w := do(off, "GET", "/metrics", "", nil); w.Code != 404 {
		t.Errorf("disabled metrics: %d", w.Code)
	}
}
