package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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
			Architecture string             `json:"architecture"`
			Quality      map[string]float64 `json:"quality"`
		} `json:"card"`
	}
	if code, body := call(t, "GET", srv.URL+"/v1/models/neuro-1-lite", key, "", &rec); code != 200 || !strings.Contains(rec.Card.Architecture, "lima") || rec.Card.Quality["heldout_bits_per_byte"] == 0 {
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

func TestPrecisionFlag(t *testing.T) {
	for _, v := range []string{"int4", ""} {
		if _, err := parse([]string{"-precision", v}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "-precision") {
			t.Fatalf("-precision %q: %v", v, err)
		}
	}
	c, err := parse([]string{"-precision", "float32"}, env(map[string]string{"NEURO_API_KEYS": "k"}), io.Discard)
	if err != nil || c.precision != "float32" {
		t.Fatalf("-precision float32: %v, %+v", err, c)
	}
}

func TestHelpIsNotAnError(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"-h"}, env(nil), &out, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	if !strings.Contains(out.String(), "-cors") {
		t.Errorf("usage %q", out.String())
	}
}

// TestCORSFlag: -cors admits a browser origin; the preflight succeeds.
func TestCORSFlag(t *testing.T) {
	c, err := parse([]string{"-mock", "-cors", "https://app.example, http://localhost:5173"}, env(map[string]string{"NEURO_API_KEYS": "k"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, c, io.Discard)
	req, _ := http.NewRequest("OPTIONS", srv.URL+"/v1/chat/completions", nil)
	req.Header.Set("Origin", "http://localhost:5173")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:5173" {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestDeviceFlagAgrees: with -device xylo, every model the chip cannot
// hold runs on cpu beside it; the start-up message says so, and the
// model list, the deployments and /health agree with what runs.
func TestDeviceFlagAgrees(t *testing.T) {
	var out bytes.Buffer
	c, err := parse([]string{"-mock", "-device", "xylo"}, env(map[string]string{"NEURO_API_KEYS": "k"}), &out)
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, c, &out)
	var deps struct {
		Data []struct {
			ID, Model, Status string
		}
	}
	if code, body := call(t, "GET", srv.URL+"/v1/deployments", "k", "", &deps); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	served := map[string]bool{}
	for _, d := range deps.Data {
		served[d.Model] = true
		if !strings.Contains(out.String(), d.ID) {
			t.Errorf("deployment %s is not in the start-up message %q", d.ID, out.String())
		}
	}
	var models struct{ Data []struct{ ID string } }
	call(t, "GET", srv.URL+"/v1/models", "k", "", &models)
	for _, m := range models.Data {
		if !served[m.ID] {
			t.Errorf("%s is listed but not deployed", m.ID)
		}
		if !strings.Contains(out.String(), m.ID+"-xylo") && !strings.Contains(out.String(), m.ID+" does not fit xylo, so it runs on cpu") {
			t.Errorf("the start-up message does not say where %s runs: %q", m.ID, out.String())
		}
	}
	var health struct{ Status string }
	if code, _ := call(t, "GET", srv.URL+"/health", "", "", &health); code != 200 || health.Status != "ok" {
		t.Errorf("health %d %+v", code, health)
	}
}

// TestDigitsClassifier: the built-in classifier answers on cpu and
// loihi; an 8×8 image of a zero is a zero.
func TestDigitsClassifier(t *testing.T) {
	c, err := parse(nil, env(map[string]string{"NEURO_API_KEYS": "k"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, c, io.Discard)
	// sklearn's first digit, a 0, pixel/16.
	zero := `[0,0,0.3125,0.8125,0.5625,0.0625,0,0,0,0,0.8125,0.9375,0.625,0.9375,0.3125,0,0,0.1875,0.9375,0.125,0,0.6875,0.5,0,0,0.25,0.75,0,0,0.5,0.5,0,0,0.3125,0.5,0,0,0.5625,0.5,0,0,0.25,0.6875,0,0.0625,0.75,0.4375,0,0,0.125,0.875,0.3125,0.625,0.75,0,0,0,0,0.375,0.8125,0.625,0,0,0]`
	for _, dep := range []string{"neuro-1-digits-cpu", "neuro-1-digits-loihi"} {
		var r struct {
			Outputs []struct {
				Prediction  int       `json:"prediction"`
				SpikeCounts []float64 `json:"spike_counts"`
			} `json:"outputs"`
		}
		if code, body := call(t, "POST", srv.URL+"/v1/deployments/"+dep+"/run", "k", `{"inputs":[`+zero+`]}`, &r); code != 200 || r.Outputs[0].Prediction != 0 {
			t.Fatalf("%s: %d %s", dep, code, body)
		}
	}
}

// TestModelDevicesIncludeDeployments: neuro-1-lite's record names every
// device it is deployed on (loihi included).
func TestModelDevicesIncludeDeployments(t *testing.T) {
	c, err := parse([]string{"-mock"}, env(map[string]string{"NEURO_API_KEYS": "k"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, c, io.Discard)
	var rec struct {
		Neuromorphic struct{ Devices []string } `json:"neuromorphic"`
	}
	call(t, "GET", srv.URL+"/v1/models/neuro-1-lite", "k", "", &rec)
	if !slices.Contains(rec.Neuromorphic.Devices, "loihi") || !slices.Contains(rec.Neuromorphic.Devices, "cpu") {
		t.Errorf("devices %v", rec.Neuromorphic.Devices)
	}
}

// On SIGINT a request that finishes within the grace period gets its
// answer; one still running at its end is cancelled and answered 503,
// and the server returns without an error once both have.
func TestShutdownAnswersLateRequests(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var started sync.WaitGroup
	started.Add(2)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Done()
		if r.URL.Path == "/quick" {
			time.Sleep(100 * time.Millisecond)
			io.WriteString(w, "done")
			return
		}
		<-r.Context().Done() // a long run: returns silently when cancelled, as the API's handlers do
	})
	ctx, signal := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, &http.Server{Handler: h}, ln, 300*time.Millisecond, io.Discard) }()
	type answer struct {
		code  int
		retry string
		body  string
	}
	get := func(path string, into chan<- answer) {
		resp, err := http.Get("http://" + ln.Addr().String() + path)
		if err != nil {
			into <- answer{body: err.Error()}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		into <- answer{resp.StatusCode, resp.Header.Get("Retry-After"), string(b)}
	}
	quick, slow := make(chan answer, 1), make(chan answer, 1)
	go get("/quick", quick)
	go get("/slow", slow)
	started.Wait()
	signal()
	if a := <-quick; a.code != 200 || a.body != "done" {
		t.Errorf("a request that finished within the grace period: %+v", a)
	}
	if a := <-slow; a.code != 503 || a.retry == "" || !strings.Contains(a.body, `"code":"shutting_down"`) {
		t.Errorf("a request still running at the end of the grace period: %+v", a)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not return")
	}
}
