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
	rt, h, err := setup(context.Background(), c, slog.New(slog.DiscardHandler), &out)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if !strings.Contains(out.String(), "no built-in model weights") {
		t.Errorf("start message %q does not say there are no weights", out.String())
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"neuro-1","messages":[{"role":"user","content":"Hello"}]}`))
	req.Header.Set("Authorization", "Bearer k2")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(body, &r); err != nil || resp.StatusCode != 200 || r.Model != "neuro-1-standard" || r.Choices[0].Message.Content == "" || r.Usage.CompletionTokens == 0 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

func TestNoModelsWithoutMock(t *testing.T) {
	var out bytes.Buffer
	c, err := parse(nil, env(nil), &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.keys) != 1 || !strings.Contains(out.String(), "sk-neuro-") {
		t.Fatalf("no key generated and printed: %q", out.String())
	}
	if _, _, err := setup(context.Background(), c, slog.New(slog.DiscardHandler), &out); err == nil || !strings.Contains(err.Error(), "-mock") {
		t.Fatalf("setup without models or -mock: %v", err)
	}
	if _, err := parse([]string{"-device", "tpu"}, env(nil), &out); err == nil {
		t.Fatal("unknown device accepted")
	}
}
