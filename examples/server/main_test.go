package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestMockServerChat(t *testing.T) {
	var out bytes.Buffer
	c, err := parse([]string{"-mock", "-data", t.TempDir()}, env(map[string]string{"NEURO_API_KEYS": "k1, k2"}), &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.keys) != 2 || c.keys["k1"] != principal("k1") {
		t.Fatalf("keys %v", c.keys)
	}
	srv := start(t, c, &out)
	if !strings.Contains(out.String(), "Mock mode") {
		t.Errorf("start message %q does not say it is in mock mode", out.String())
	}
	var r chatResponse
	if code, body := call(t, "POST", srv.URL+"/v1/chat/completions", "k2", `{"model":"neuro-1","messages":[{"role":"user","content":"Hello"}]}`, &r); code != 200 || r.Model != "neuro-1-standard" || r.Choices[0].Message.Content == "" || r.Usage.CompletionTokens == 0 {
		t.Fatalf("%d %s", code, body)
	}
}

// TestServesBuiltinModels: with no flags the server loads the built-in
// models and answers a chat with one of them, through HTTP.
func TestServesBuiltinModels(t *testing.T) {
	var out bytes.Buffer
	c, err := parse(nil, env(nil), &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.keys) != 1 || !strings.Contains(out.String(), "sk-neuro-") {
		t.Fatalf("no key generated and printed: %q", out.String())
	}
	var key string
	for k := range c.keys {
		key = k
	}
	srv := start(t, c, &out)
	if !strings.Contains(out.String(), "neuro-1-lite-cpu") {
		t.Fatalf("start message %q lists no neuro-1-lite-cpu deployment", out.String())
	}
	var r chatResponse
	if code, body := call(t, "POST", srv.URL+"/v1/chat/completions", key, `{"model":"neuro-1-lite","messages":[{"role":"user","content":"Do you like music?"}],"temperature":0,"max_tokens":40}`, &r); code != 200 || r.Model != "neuro-1-lite" || strings.TrimSpace(r.Choices[0].Message.Content) == "" {
		t.Fatalf("%d %s", code, body)
	}
	t.Logf("neuro-1-lite: %q", r.Choices[0].Message.Content)

	// neuro-1 is neuro-1-standard; the model record carries the card.
	if code, body := call(t, "POST", srv.URL+"/v1/chat/completions", key, `{"model":"neuro-1","messages":[{"role":"user","content":"Hi"}],"max_tokens":5}`, &r); code != 200 || r.Model != "neuro-1-standard" {
		t.Fatalf("neuro-1: %d %s", code, body)
	}
	var rec struct {
		Card struct {
			Architecture string            `json:"architecture"`
			Quality      map[string]string `json:"quality"`
		} `json:"card"`
	}
	if code, body := call(t, "GET", srv.URL+"/v1/models/neuro-1-lite", key, "", &rec); code != 200 || !strings.Contains(rec.Card.Architecture, "lima") || rec.Card.Quality["heldout_bits_per_byte"] == "" {
		t.Fatalf("model record without its card: %d %s", code, body)
	}
}

// chatResponse is the part of a chat completion the tests read.
type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct{ Content string } `json:"message"`
	} `json:"choices"`
	Usage struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// start builds the runtime and handler as run does and serves them on a
// test server, closed with the test; the start-up message goes to out.
func start(t *testing.T, c *config, out io.Writer) *httptest.Server {
	t.Helper()
	rt, h, err := setup(context.Background(), c, slog.New(slog.DiscardHandler), out)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		rt.Close()
	})
	return srv
}

// call sends one request with the key and decodes the JSON answer into v.
func call(t *testing.T, method, url, key, body string, v any) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s %s: %v: %s", method, url, err, b)
	}
	return resp.StatusCode, b
}

func TestUnknownDevice(t *testing.T) {
	if _, err := parse([]string{"-device", "tpu"}, env(nil), io.Discard); err == nil {
		t.Fatal("unknown device accepted")
	}
}
