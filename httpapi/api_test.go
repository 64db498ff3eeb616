package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/runtime"
)

var v1Routes = []struct{ method, path string }{
	{"GET", "/v1/models"},
	{"GET", "/v1/models/neuro-1-lite"},
	{"DELETE", "/v1/models/neuro-1-lite"},
	{"GET", "/v1/deployments"},
	{"POST", "/v1/deployments"},
	{"GET", "/v1/deployments/neuro-1-lite-cpu"},
	{"DELETE", "/v1/deployments/neuro-1-lite-cpu"},
	{"POST", "/v1/deployments/neuro-1-lite-cpu/chat/completions"},
	{"POST", "/v1/deployments/neuro-1-lite-cpu/run"},
	{"POST", "/v1/chat/completions"},
	{"POST", "/v1/completions"},
	{"POST", "/v1/compile"},
	{"GET", "/v1/telemetry"},
}

func TestEveryV1RouteNeedsAKey(t *testing.T) {
	s := newTestServer(t, newMockRuntime(t), &Options{Mock: true})
	for _, rt := range v1Routes {
		for _, key := range []string{"", "sk-wrong", keyAlice + "x"} {
			w := do(s, rt.method, rt.path, key, `{}`)
			checkError(t, w, 401, "authentication_error", "invalid_api_key", "")
		}
		// A key in the query string is refused, even a valid one, even
		// beside a valid header.
		for _, q := range []string{"?api_key=", "?key=", "?access_token="} {
			w := do(s, rt.method, rt.path+q+keyAlice, "", `{}`)
			checkError(t, w, 401, "authentication_error", "invalid_api_key", "")
			w = do(s, rt.method, rt.path+q+keyAlice, keyAlice, `{}`)
			checkError(t, w, 401, "authentication_error", "invalid_api_key", "")
		}
	}
	for _, path := range []string{"/health", "/metrics"} {
		if w := do(s, "GET", path, "", nil); w.Code != 200 {
			t.Errorf("%s without a key: %d", path, w.Code)
		}
	}
}

func TestWrongMethod(t *testing.T) {
	s := newTestServer(t, newMockRuntime(t), &Options{Mock: true})
	routes := append(v1Routes, struct{ method, path string }{"GET", "/health"}, struct{ method, path string }{"GET", "/metrics"})
	allow := map[string][]string{}
	for _, rt := range routes {
		allow[rt.path] = append(allow[rt.path], rt.method)
	}
	for path, methods := range allow {
		for _, m := range []string{"GET", "POST", "PUT", "DELETE", "PATCH"} {
			if slices.Contains(methods, m) {
				continue
			}
			w := do(s, m, path, keyAlice, `{}`)
			checkError(t, w, 405, "invalid_request_error", "method_not_allowed", "")
			if w.Header().Get("Allow") != strings.Join(methods, ", ") {
				t.Errorf("%s %s: Allow %q, want %q", m, path, w.Header().Get("Allow"), strings.Join(methods, ", "))
			}
		}
	}
	checkError(t, do(s, "GET", "/v2/nothing", keyAlice, nil), 404, "not_found_error", "", "")
	checkError(t, do(s, "GET", "/v1/models/", keyAlice, nil), 404, "not_found_error", "", "")
}

// hugeBody yields n bytes without holding them, and counts what was read.
type hugeBody struct{ n, read int64 }

func (h *hugeBody) Read(p []byte) (int, error) {
	if h.read >= h.n {
		return 0, io.EOF
	}
	k := int64(len(p))
	k = min(k, h.n-h.read)
	for i := range p[:k] {
		p[i] = ' '
	}
	h.read += k
	return int(k), nil
}

type panicKeys struct{}

func (panicKeys) Principal(key string) (string, bool) {
	if key == "boom" {
		panic("a bug in the key store")
	}
	return "alice", key == keyAlice
}

func TestErrorTable(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	s := newTestServer(t, rt, &Options{KeyStore: panicKeys{}})
	mock := newTestServer(t, newMockRuntime(t), &Options{Mock: true})
	chat := func(extra string) string {
		return `{"model":"neuro-1-lite","messages":[{"role":"user","content":"hi"}],"max_tokens":2` + extra + `}`
	}
	for _, tc := range []struct {
		name          string
		h             http.Handler
		method, path  string
		body          string
		status        int
		typ, code, pm string
	}{
		{"malformed JSON", s, "POST", "/v1/chat/completions", `{"model":`, 400, typeInvalidRequest, "invalid_json", ""},
		{"not an object", s, "POST", "/v1/chat/completions", `[1,2]`, 400, typeInvalidRequest, "invalid_json", ""},
		{"deeply nested", s, "POST", "/v1/chat/completions", strings.Repeat("[", 20000) + strings.Repeat("]", 20000), 400, typeInvalidRequest, "invalid_json", ""},
		{"deeply nested field", s, "POST", "/v1/chat/completions", `{"model":"neuro-1-lite","messages":[{"role":"user","content":"x"}],"user":` + strings.Repeat(`{"a":`, 20000) + `1` + strings.Repeat("}", 20000) + `}`, 400, typeInvalidRequest, "", ""},
		{"invalid UTF-8", s, "POST", "/v1/chat/completions", "{\"model\":\"neuro-1-lite\",\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}", 400, typeInvalidRequest, "invalid_json", ""},
		{"empty body", s, "POST", "/v1/chat/completions", ``, 400, typeInvalidRequest, "missing_body", ""},
		{"missing messages", s, "POST", "/v1/chat/completions", `{"model":"neuro-1-lite"}`, 400, typeInvalidRequest, "missing_field", "messages"},
		{"empty messages", s, "POST", "/v1/chat/completions", `{"model":"neuro-1-lite","messages":[]}`, 400, typeInvalidRequest, "invalid_value", "messages"},
		{"missing model", s, "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, 400, typeInvalidRequest, "missing_field", "model"},
		{"out of range", s, "POST", "/v1/chat/completions", chat(`,"temperature":2.5`), 400, typeInvalidRequest, "invalid_value", "temperature"},
		{"huge number", s, "POST", "/v1/chat/completions", chat(`,"temperature":1e999`), 400, typeInvalidRequest, "invalid_value", "temperature"},
		{"stream in mock", mock, "POST", "/v1/completions", `{"model":"neuro-1","prompt":"x","stream":true}`, 400, typeInvalidRequest, "stream_not_supported", "stream"},
		{"unknown model", s, "POST", "/v1/chat/completions", `{"model":"gpt-4","messages":[{"role":"user","content":"x"}]}`, 404, typeNotFound, "model_not_found", ""},
		{"unknown model retrieve", s, "GET", "/v1/models/gpt-4", "", 404, typeNotFound, "model_not_found", ""},
		{"unknown deployment", s, "POST", "/v1/deployments/nope/chat/completions", chat(""), 404, typeNotFound, "deployment_not_found", ""},
		{"unknown deployment get", s, "GET", "/v1/deployments/nope", "", 404, typeNotFound, "deployment_not_found", ""},
		{"deployment of another model", s, "POST", "/v1/deployments/neuro-1-heavy-cpu/chat/completions", chat(""), 400, typeInvalidRequest, "", "model"},
		{"unknown route", s, "GET", "/v1/engines", "", 404, typeNotFound, "", ""},
		{"wrong method", s, "DELETE", "/v1/models", "", 405, typeInvalidRequest, "method_not_allowed", ""},
		{"context length", s, "POST", "/v1/completions", `{"model":"neuro-1-lite","prompt":"` + strings.Repeat("word ", 400) + `"}`, 400, typeInvalidRequest, "context_length_exceeded", "prompt"},
		{"suffix", s, "POST", "/v1/completions", `{"model":"neuro-1-lite","prompt":"x","suffix":"y"}`, 400, typeInvalidRequest, "unsupported_parameter", "suffix"},
		{"logit bias outside vocabulary", s, "POST", "/v1/chat/completions", chat(`,"logit_bias":{"999999":1}`), 400, typeInvalidRequest, "invalid_value", "logit_bias"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(tc.h, tc.method, tc.path, keyAlice, tc.body)
			checkError(t, w, tc.status, tc.typ, tc.code, tc.pm)
		})
	}

	t.Run("415", func(t *testing.T) {
		req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chat("")))
		req.Header.Set("Authorization", "Bearer "+keyAlice)
		req.Header.Set("Content-Type", "text/plain")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		checkError(t, w, 415, typeInvalidRequest, "unsupported_media_type", "")
		// A missing Content-Type is tolerated; charset parameters too.
		for _, ct := range []string{"", "application/json; charset=utf-8"} {
			req = httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(chat("")))
			req.Header.Set("Authorization", "Bearer "+keyAlice)
			if ct != "" {
				req.Header.Set("Content-Type", ct)
			}
			w = httptest.NewRecorder()
			s.ServeHTTP(w, req)
			if w.Code != 200 {
				t.Errorf("Content-Type %q: %d %s", ct, w.Code, w.Body)
			}
		}
	})

	t.Run("413 of a 1 GB body", func(t *testing.T) {
		for _, declared := range []bool{true, false} {
			body := &hugeBody{n: 1 << 30}
			req := httptest.NewRequest("POST", "/v1/chat/completions", body)
			req.ContentLength = -1
			if declared {
				req.ContentLength = body.n
			}
			req.Header.Set("Authorization", "Bearer "+keyAlice)
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			checkError(t, w, 413, typeInvalidRequest, "request_too_large", "")
			if body.read > 2*DefaultMaxBodyBytes {
				t.Errorf("declared %v: read %d bytes of the body", declared, body.read)
			}
		}
	})

	t.Run("429 rate limit", func(t *testing.T) {
		now := time.Unix(1000, 0)
		rl := newTestServer(t, rt, &Options{RequestsPerMinute: 2, Now: func() time.Time { return now }})
		for i := 0; i < 2; i++ {
			if w := do(rl, "GET", "/v1/models", keyAlice, nil); w.Code != 200 {
				t.Fatalf("request %d: %d", i, w.Code)
			}
		}
		w := do(rl, "GET", "/v1/models", keyAlice, nil)
		checkError(t, w, 429, typeRateLimit, "rate_limit_exceeded", "")
		if ra := w.Header().Get("Retry-After"); ra != "30" {
			t.Errorf("Retry-After %q, want 30 (one request every 30 s)", ra)
		}
		// Another key has its own bucket.
		if w := do(rl, "GET", "/v1/models", keyBob, nil); w.Code != 200 {
			t.Errorf("bob: %d", w.Code)
		}
		now = now.Add(30 * time.Second)
		if w := do(rl, "GET", "/v1/models", keyAlice, nil); w.Code != 200 {
			t.Errorf("after 30 s: %d", w.Code)
		}
	})

	t.Run("500 panic recovered", func(t *testing.T) {
		w := do(s, "GET", "/v1/models", "boom", nil)
		checkError(t, w, 500, typeServer, "internal_error", "")
		if w := do(s, "GET", "/v1/models", keyAlice, nil); w.Code != 200 {
			t.Fatalf("after the panic: %d", w.Code)
		}
	})

	t.Run("503 overloaded", func(t *testing.T) {
		ort := newTestRuntime(t, &runtime.Options{QueueDepth: 1}, 1, unbounded)
		os := newTestServer(t, ort, &Options{MaxTokens: 1 << 30})
		srv := httptest.NewServer(os)
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		d, _ := ort.Deployment("neuro-1-lite-cpu")
		for i := 0; i < 2; i++ { // one in the slot, one queued
			go func() {
				req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/completions", strings.NewReader(longBody(t)))
				req.Header.Set("Authorization", "Bearer "+keyAlice)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			waitLoad(t, d, 1, i)
		}
		w := do(os, "POST", "/v1/completions", keyAlice, `{"model":"neuro-1-lite","prompt":"x","max_tokens":1}`)
		checkError(t, w, 503, typeServer, "overloaded", "")
		if w.Header().Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
		cancel()
		waitLoad(t, d, 0, 0)
	})

	t.Run("429 concurrency", func(t *testing.T) {
		ort := newTestRuntime(t, nil, 1, unbounded)
		cs := newTestServer(t, ort, &Options{ConcurrentRequests: 1, MaxTokens: 1 << 30})
		srv := httptest.NewServer(cs)
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		d, _ := ort.Deployment("neuro-1-lite-cpu")
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/completions", strings.NewReader(longBody(t)))
			req.Header.Set("Authorization", "Bearer "+keyAlice)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
		waitLoad(t, d, 1, 0)
		w := do(cs, "GET", "/v1/models", keyAlice, nil)
		checkError(t, w, 429, typeRateLimit, "rate_limit_exceeded", "")
		if w.Header().Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
		if w := do(cs, "GET", "/v1/models", keyBob, nil); w.Code != 200 {
			t.Errorf("bob while alice is busy: %d", w.Code)
		}
		cancel()
		waitLoad(t, d, 0, 0)
	})
}

func waitLoad(t testing.TB, d *runtime.Deployment, active, queued int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, q := d.Load()
		if a == active && q == queued {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("load %d/%d, want %d/%d", a, q, active, queued)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestFieldBounds(t *testing.T) {
	s := newTestServer(t, newMockRuntime(t), &Options{Mock: true})
	base := `"model":"neuro-1","messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		body  string
		param string // "" means accepted
	}{
		{`"temperature":0`, ""}, {`"temperature":2`, ""}, {`"temperature":null`, ""},
		{`"temperature":-0.1`, "temperature"}, {`"temperature":2.01`, "temperature"}, {`"temperature":"1"`, "temperature"},
		{`"top_p":0`, ""}, {`"top_p":1`, ""}, {`"top_p":1.5`, "top_p"}, {`"top_p":-1`, "top_p"}, {`"top_p":true`, "top_p"},
		{`"max_tokens":1`, ""}, {`"max_tokens":0`, "max_tokens"}, {`"max_tokens":-3`, "max_tokens"}, {`"max_tokens":1.5`, "max_tokens"},
		{`"max_tokens":99999999999999999999999`, "max_tokens"}, {`"max_tokens":"5"`, "max_tokens"}, {`"max_tokens":4097`, "max_tokens"}, {`"max_tokens":null`, ""},
		{`"max_completion_tokens":5`, ""}, {`"max_completion_tokens":5,"max_tokens":5`, ""}, {`"max_completion_tokens":5,"max_tokens":6`, "max_completion_tokens"},
		{`"max_completion_tokens":0`, "max_completion_tokens"},
		{`"stream":"yes"`, "stream"}, {`"stream":1`, "stream"},
		{`"stream":true,"stream_options":{"include_usage":true}`, ""}, {`"stream_options":{"include_usage":true}`, "stream_options"},
		{`"stream":true,"stream_options":{"include_usage":"yes"}`, "stream_options.include_usage"}, {`"stream":true,"stream_options":[]`, "stream_options"},
		{`"n":1`, ""}, {`"n":8`, ""}, {`"n":0`, "n"}, {`"n":9`, "n"}, {`"n":"2"`, "n"},
		{`"stop":"x"`, ""}, {`"stop":["a","b","c","d"]`, ""}, {`"stop":["a","b","c","d","e"]`, "stop"}, {`"stop":5`, "stop"}, {`"stop":[1]`, "stop"}, {`"stop":""`, "stop"}, {`"stop":null`, ""},
		{`"seed":42`, ""}, {`"seed":-1`, ""}, {`"seed":1.5`, "seed"}, {`"seed":"x"`, "seed"}, {`"seed":1e30`, "seed"},
		{`"presence_penalty":2`, ""}, {`"presence_penalty":-2.1`, "presence_penalty"}, {`"frequency_penalty":2.1`, "frequency_penalty"}, {`"frequency_penalty":[]`, "frequency_penalty"},
		{`"logit_bias":{"5":100}`, ""}, {`"logit_bias":{"5":101}`, "logit_bias"}, {`"logit_bias":{"x":1}`, "logit_bias"}, {`"logit_bias":[]`, "logit_bias"}, {`"logit_bias":{"5":"1"}`, "logit_bias"},
		{`"logprobs":true,"top_logprobs":20`, ""}, {`"logprobs":true,"top_logprobs":21`, "top_logprobs"}, {`"logprobs":true,"top_logprobs":-1`, "top_logprobs"},
		{`"top_logprobs":2`, "top_logprobs"}, {`"logprobs":1`, "logprobs"},
		{`"user":"u1"`, ""}, {`"user":5`, "user"},
		{`"unknown_field":{"deep":[1,2,3]},"tools":[]`, ""},
		{`"model":5`, "model"},
	} {
		body := "{" + base + "," + tc.body + "}"
		w := do(s, "POST", "/v1/chat/completions", keyAlice, body)
		if tc.param == "" {
			if w.Code != 200 {
				t.Errorf("%s: %d %s", tc.body, w.Code, w.Body)
			}
			continue
		}
		if w.Code != 400 {
			t.Errorf("%s: %d, want 400", tc.body, w.Code)
			continue
		}
		var e apiErr
		json.Unmarshal(w.Body.Bytes(), &e)
		if e.Error.Param == nil || *e.Error.Param != tc.param {
			t.Errorf("%s: param %v, want %q (%s)", tc.body, e.Error.Param, tc.param, e.Error.Message)
		}
	}
	// Messages: roles, content forms.
	for _, tc := range []struct {
		msgs  string
		param string
	}{
		{`[{"role":"system","content":"be brief"},{"role":"developer","content":"x"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`, ""},
		{`[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]`, ""},
		{`[{"role":"tool","content":"x"}]`, "messages[0].role"},
		{`[{"role":"user","content":"x"},{"role":"wizard","content":"x"}]`, "messages[1].role"},
		{`[{"content":"x"}]`, "messages[0].role"},
		{`[{"role":"user"}]`, "messages[0].content"},
		{`[{"role":"user","content":5}]`, "messages[0].content"},
		{`[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]`, "messages[0].content[0].type"},
		{`[{"role":"user","content":[{"type":"text","text":7}]}]`, "messages[0].content[0].text"},
		{`["hi"]`, "messages[0]"},
		{`"hi"`, "messages"},
	} {
		w := do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"neuro-1","messages":`+tc.msgs+`}`)
		if tc.param == "" {
			if w.Code != 200 {
				t.Errorf("%s: %d %s", tc.msgs, w.Code, w.Body)
			}
			continue
		}
		var e apiErr
		json.Unmarshal(w.Body.Bytes(), &e)
		if w.Code != 400 || e.Error.Param == nil || *e.Error.Param != tc.param {
			t.Errorf("%s: %d param %v, want 400 %q", tc.msgs, w.Code, e.Error.Param, tc.param)
		}
	}
	// Text completion fields.
	for _, tc := range []struct {
		body  string
		param string
	}{
		{`"prompt":"x","logprobs":0,"echo":true,"max_tokens":0`, ""},
		{`"prompt":["a","b"]`, ""}, {`"prompt":[]`, "prompt"}, {`"prompt":5`, "prompt"},
		{`"prompt":[1,2]`, ""}, {`"prompt":[[1,2],[3]]`, ""}, {`"prompt":[1.5]`, "prompt"}, {`"prompt":[[1],[99999]]`, "prompt"},
		{`"prompt":[[]]`, "prompt"}, {`"prompt":[-1]`, "prompt"}, {`"prompt":["a",1]`, "prompt"}, {`"max_tokens":3`, "prompt"},
		{`"prompt":"x","logprobs":5`, ""}, {`"prompt":"x","logprobs":6`, "logprobs"}, {`"prompt":"x","logprobs":true`, "logprobs"},
		{`"prompt":"x","echo":"yes"`, "echo"}, {`"prompt":"x","suffix":""`, ""}, {`"prompt":"x","suffix":"end"`, "suffix"},
		{`"prompt":"x","max_tokens":-1`, "max_tokens"},
	} {
		w := do(s, "POST", "/v1/completions", keyAlice, `{"model":"neuro-1",`+tc.body+`}`)
		if tc.param == "" {
			if w.Code != 200 {
				t.Errorf("%s: %d %s", tc.body, w.Code, w.Body)
			}
			continue
		}
		var e apiErr
		json.Unmarshal(w.Body.Bytes(), &e)
		if w.Code != 400 || e.Error.Param == nil || *e.Error.Param != tc.param {
			t.Errorf("%s: %d param %v, want 400 %q", tc.body, w.Code, e.Error.Param, tc.param)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []*Options{nil, {}, {Keys: map[string]string{"": "x"}}, {Keys: testKeys, MaxBodyBytes: -1}, {Keys: testKeys, AllowedOrigins: []string{""}}} {
		if _, err := New(runtime.New(nil), o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	if _, err := New(nil, &Options{Keys: testKeys}); err == nil {
		t.Error("nil runtime accepted")
	}
	if _, err := New(runtime.New(nil), &Options{Keys: testKeys}); err != nil {
		t.Error(err)
	}
}
