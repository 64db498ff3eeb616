package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/neuro-go/neuro/runtime/runtimetest"

	"github.com/neuro-go/neuro/compile"
	_ "github.com/neuro-go/neuro/compile/nir" // the formats the compile tests send
	_ "github.com/neuro-go/neuro/compile/onnx"
	_ "github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/httpapi/prom"
	"github.com/neuro-go/neuro/models/tokenizers"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	_ "github.com/neuro-go/neuro/runtime/hal/loihi"
	"github.com/neuro-go/neuro/runtime/hal/mock"
	"github.com/neuro-go/neuro/tokenizer"
)

const (
	keyAlice = "sk-alice-0123456789"
	keyBob   = "sk-bob-9876543210"
)

var testKeys = map[string]string{keyAlice: "alice", keyBob: "bob"}

var (
	tokOnce sync.Once
	testTok *tokenizer.Tokenizer
)

func testTokenizer(t testing.TB) *tokenizer.Tokenizer {
	tokOnce.Do(func() {
		tok, err := tokenizers.Load("neuro-bpe-1k")
		if err != nil {
			panic(err)
		}
		testTok = tok
	})
	return testTok
}

// testProgram is the shared test language model (runtimetest.Program).
func testProgram(vocab, hidden int, seed uint64) *compile.Program {
	return runtimetest.Program("test-lm", vocab, hidden, seed, 256)
}

// testModels registers the test model in rt as the three neuro-1
// models (neuro-1-standard also as neuro-1) and returns their ids.
func testModels(t testing.TB, rt *runtime.Runtime, edit ...func(*compile.Program)) []string {
	t.Helper()
	tok := testTokenizer(t)
	ids := []string{"neuro-1-lite", "neuro-1-standard", "neuro-1-heavy"}
	for i, id := range ids {
		m := &runtime.Model{ID: id, Program: testProgram(tok.VocabSize(), 32, uint64(i+1)), Tokenizer: tok,
			Card: runtime.Card{Description: "test model"}}
		if id == "neuro-1-standard" {
			m.Aliases = []string{"neuro-1"}
		}
		for _, e := range edit {
			e(m.Program)
		}
		if err := rt.RegisterModel(m); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { rt.Close() })
	return ids
}

// newTestRuntime deploys the test models on the CPU simulator as
// <id>-cpu.
func newTestRuntime(t testing.TB, rtOpts *runtime.Options, batch int, edit ...func(*compile.Program)) *runtime.Runtime {
	t.Helper()
	rt := runtime.New(rtOpts)
	for _, id := range testModels(t, rt, edit...) {
		if _, err := rt.Deploy(context.Background(), runtime.DeploymentSpec{ID: id + "-cpu", Model: id, MaxBatch: batch}); err != nil {
			t.Fatal(err)
		}
	}
	return rt
}

// newMockRuntime deploys the test models on mock devices standing in for
// the CPU simulator, as <id>-cpu, and neuro-1-lite also on a mock of the
// Loihi emulator: a runtime in mock mode.
func newMockRuntime(t testing.TB) *runtime.Runtime {
	t.Helper()
	rt := runtime.New(nil)
	for _, id := range testModels(t, rt) {
		for _, dev := range []string{"cpu", "loihi"} {
			if dev == "loihi" && id != "neuro-1-lite" {
				continue
			}
			base, err := hal.Open(dev, hal.Config{})
			if err != nil {
				t.Fatal(err)
			}
			spec := runtime.DeploymentSpec{ID: id + "-" + dev, Model: id, Dev: mock.New(base, &mock.Options{Tokens: runtime.MockTokens(testTokenizer(t))})}
			if _, err := rt.Deploy(context.Background(), spec); err != nil {
				t.Fatal(err)
			}
		}
	}
	return rt
}

// newTestServer serves rt with Prometheus metrics and the test keys,
// without rate limits, unless opts say otherwise.
func newTestServer(t testing.TB, rt *runtime.Runtime, opts *Options) *Server {
	t.Helper()
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Keys == nil && o.KeyStore == nil {
		o.Keys = testKeys
	}
	if o.RequestsPerMinute == 0 {
		o.RequestsPerMinute = -1
	}
	if o.Metrics == nil {
		o.Metrics = prom.New()
	}
	s, err := New(rt, &o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// do sends a request through h and returns the recorder.
func do(h http.Handler, method, path, key string, body any) *httptest.ResponseRecorder {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req := httptest.NewRequest(method, path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

type apiErr struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// checkError asserts an OpenAI-shaped error with all four keys.
func checkError(t *testing.T, w *httptest.ResponseRecorder, status int, typ, code, param string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body)
	}
	var raw map[string]map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil {
		t.Fatalf("error body %q: %v", w.Body, err)
	}
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := raw["error"][k]; !ok {
			t.Fatalf("error body lacks %q: %s", k, w.Body)
		}
	}
	var e apiErr
	json.Unmarshal(w.Body.Bytes(), &e)
	if e.Error.Type != typ || e.Error.Message == "" {
		t.Errorf("type %q, want %q (%s)", e.Error.Type, typ, w.Body)
	}
	if code != "" && (e.Error.Code == nil || *e.Error.Code != code) {
		t.Errorf("code %v, want %q (%s)", e.Error.Code, code, w.Body)
	}
	if param != "" && (e.Error.Param == nil || *e.Error.Param != param) {
		t.Errorf("param %v, want %q (%s)", e.Error.Param, param, w.Body)
	}
	if w.Header().Get("X-Request-Id") == "" {
		t.Error("no x-request-id")
	}
}

// sseEvents splits a stream into its data payloads.
func sseEvents(t testing.TB, body io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	blank := true
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			blank = true
			continue
		}
		if !blank {
			t.Fatalf("two lines in one event: %q", line)
		}
		blank = false
		if !strings.HasPrefix(line, "data: ") {
			t.Fatalf("line %q is not a data line", line)
		}
		out = append(out, strings.TrimPrefix(line, "data: "))
	}
	return out
}

type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Text         *string         `json:"text"`
		Logprobs     json.RawMessage `json:"logprobs"`
		FinishReason *string         `json:"finish_reason"`
	} `json:"choices"`
	Usage *runtime.Usage  `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// unbounded removes the context limit, so that a request without
// max_tokens runs until it is cancelled (with a server MaxTokens to match).
func unbounded(p *compile.Program) { delete(p.Metadata, "context_length") }

// longBody is a streamed completion that never ends by itself: every
// token that could stop it is biased away.
func longBody(t testing.TB) string {
	tok := testTokenizer(t)
	ids, _ := tok.StopIDs()
	if id, ok := tok.SpecialID(tokenizer.EndOfText); ok {
		ids = append(ids, id)
	}
	bias := map[string]int{}
	for _, id := range ids {
		bias[strconv.Itoa(id)] = -100
	}
	b, _ := json.Marshal(map[string]any{"model": "neuro-1-lite", "prompt": "x", "stream": true, "logit_bias": bias})
	return string(b)
}
