package client_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/httpapi/client"
)

// The edge cases of parsing, replayed from recorded or hand-written
// responses: what a real server rarely or never sends.

func replay(t *testing.T, h http.HandlerFunc) *client.Client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL+"/v1/", &client.Options{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sse(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Request-Id", "req_1")
		io.WriteString(w, body)
	}
}

const chunk = `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"logprobs":null,"finish_reason":null}]}`

func chunkOf(s string) string {
	b, _ := json.Marshal(s)
	return strings.Replace(chunk, "%q", string(b), 1)
}

func TestStreamParsing(t *testing.T) {
	req := &client.ChatCompletionRequest{Model: "m", Messages: user("x")}
	cases := []struct {
		name string
		body string
		text string
		err  func(error) bool
	}{
		{"plain", "data: " + chunkOf("a") + "\n\ndata: " + chunkOf("b") + "\n\ndata: [DONE]\n\n", "ab", nil},
		{"crlf, comments, other fields, no space after the colon",
			": keep-alive\r\nevent: message\r\nid: 7\r\ndata:" + chunkOf("a") + "\r\n\r\n: ping\n\ndata: [DONE]\r\n\r\n", "a", nil},
		{"data split over lines", "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":\"z\"}}]}\n\ndata: [DONE]\n\n", "z", nil},
		{"a long event", "data: " + chunkOf(strings.Repeat("x", 100_000)) + "\n\ndata: [DONE]\n\n", strings.Repeat("x", 100_000), nil},
		{"mid-stream error", "data: " + chunkOf("a") + "\n\ndata: {\"error\":{\"message\":\"device lost\",\"type\":\"server_error\",\"param\":null,\"code\":\"overloaded\"}}\n\n", "a",
			func(err error) bool {
				var ae *client.APIError
				return errors.As(err, &ae) && ae.MidStream && ae.Code == "overloaded" && ae.Message == "device lost" && ae.RequestID == "req_1" &&
					client.IsOverloaded(err) && errors.Is(err, client.ErrServer) && strings.Contains(err.Error(), "stream error")
			}},
		{"content that mentions error is a chunk", "data: " + chunkOf(`"error"`) + "\n\ndata: [DONE]\n\n", `"error"`, nil},
		{"no [DONE]", "data: " + chunkOf("a") + "\n\n", "a", func(err error) bool { return errors.Is(err, client.ErrStreamTruncated) }},
		{"cut inside an event", "data: " + chunkOf("a") + "\n\ndata: {\"id\"", "a", func(err error) bool { return errors.Is(err, client.ErrStreamTruncated) }},
		{"not JSON", "data: {oops\n\n", "", func(err error) bool {
			var re *client.ResponseError
			return errors.As(err, &re) && re.StatusCode == 200 && strings.Contains(re.Body, "oops")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := replay(t, sse(tc.body))
			var text strings.Builder
			var last error
			n := 0
			for ch, err := range c.ChatCompletionStream(context.Background(), req) {
				n++
				if err != nil {
					last = err
					continue
				}
				if last != nil {
					t.Fatal("a chunk after an error")
				}
				text.WriteString(ch.Choices[0].Delta.Content)
			}
			if text.String() != tc.text {
				t.Errorf("text %.40q, want %.40q", text.String(), tc.text)
			}
			switch {
			case tc.err == nil && last != nil:
				t.Errorf("error %v", last)
			case tc.err != nil && (last == nil || !tc.err(last)):
				t.Errorf("error %v is not the one expected", last)
			}
		})
	}
}

func TestErrorResponses(t *testing.T) {
	cases := []struct {
		name  string
		h     http.HandlerFunc
		check func(error) bool
	}{
		{"OpenAI error body with Retry-After", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.Header().Set("X-Request-Id", "req_9")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`)
		}, func(err error) bool {
			var ae *client.APIError
			return errors.As(err, &ae) && ae.RetryAfter == 7*time.Second && ae.RequestID == "req_9" && client.IsRateLimited(err) && !client.IsNotFound(err)
		}},
		{"Retry-After as a date in the past", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT")
			w.WriteHeader(503)
			io.WriteString(w, `{"error":{"message":"busy","type":"server_error","param":null,"code":"overloaded"}}`)
		}, func(err error) bool {
			var ae *client.APIError
			return errors.As(err, &ae) && ae.RetryAfter == 0 && client.IsOverloaded(err)
		}},
		{"a proxy's HTML page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, "<html>Bad Gateway</html>")
		}, func(err error) bool {
			var re *client.ResponseError
			return errors.As(err, &re) && re.StatusCode == 502 && strings.Contains(re.Body, "Bad Gateway")
		}},
		{"200 that is not JSON", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "hello")
		}, func(err error) bool {
			var re *client.ResponseError
			return errors.As(err, &re) && re.StatusCode == 200 && re.Err != nil
		}},
		{"200 with JSON instead of a stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x"}`)
		}, func(err error) bool {
			var re *client.ResponseError
			return errors.As(err, &re) && re.ContentType == "application/json"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := replay(t, tc.h)
			var err error
			if strings.Contains(tc.name, "stream") {
				for _, e := range c.ChatCompletionStream(context.Background(), &client.ChatCompletionRequest{}) {
					err = e
				}
			} else {
				_, err = c.ListModels(context.Background())
			}
			if err == nil || !tc.check(err) {
				t.Fatalf("error %v (%T)", err, err)
			}
		})
	}
}

// What goes on the wire: paths, headers, and the compile upload in
// base64.
func TestRequests(t *testing.T) {
	var got *http.Request
	var body []byte
	c := replay(t, func(w http.ResponseWriter, r *http.Request) {
		got = r
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"net_1","object":"compiled_network","status":"succeeded","source":{"format":"onnx","bytes":3,"sha256":"ab"}}`)
	})
	ctx := context.Background()
	file := []byte{0xff, 0x00, 0x10}
	res, err := c.Compile(ctx, &client.CompileRequest{Format: "onnx", File: file, Target: "loihi", Options: map[string]any{"timesteps": 8}})
	if err != nil || res.ID != "net_1" || res.Source.Bytes != 3 {
		t.Fatalf("Compile = %+v, %v", res, err)
	}
	var sent map[string]any
	if err := json.Unmarshal(body, &sent); err != nil {
		t.Fatal(err)
	}
	dec, _ := base64.StdEncoding.DecodeString(sent["model_file"].(string))
	if got.Method != "POST" || got.URL.Path != "/v1/compile" || sent["model_format"] != "onnx" || string(dec) != string(file) || sent["target"] != "loihi" ||
		got.Header.Get("Authorization") != "Bearer k" || got.Header.Get("Content-Type") != "application/json" || got.Header.Get("User-Agent") != client.DefaultUserAgent {
		t.Fatalf("sent %s %s %v %s", got.Method, got.URL, got.Header, body)
	}

	c.Telemetry(ctx, &client.TelemetryQuery{Window: "5m", Model: "neuro-1", Deployment: "a/b"})
	if got.URL.Path != "/v1/telemetry" || got.URL.Query().Get("window") != "5m" || got.URL.Query().Get("deployment") != "a/b" {
		t.Fatalf("telemetry query %s", got.URL)
	}
	c.GetDeployment(ctx, "a/b")
	if got.URL.EscapedPath() != "/v1/deployments/a%2Fb" {
		t.Fatalf("deployment path %s", got.URL.EscapedPath())
	}
	c.Completion(ctx, &client.CompletionRequest{Model: "m", Prompts: []string{"a", "b"}, MaxTokens: client.Ptr(0), Logprobs: client.Ptr(0)})
	if !strings.Contains(string(body), `"prompt":["a","b"]`) || !strings.Contains(string(body), `"max_tokens":0`) || !strings.Contains(string(body), `"logprobs":0`) || strings.Contains(string(body), `"stream"`) {
		t.Fatalf("completion body %s", body)
	}
	c.ChatCompletion(ctx, &client.ChatCompletionRequest{Model: "m", Messages: user("x"), StreamOptions: &client.StreamOptions{IncludeUsage: true}})
	if strings.Contains(string(body), "stream") || strings.Contains(string(body), "temperature") {
		t.Fatalf("non-streamed chat body %s", body)
	}
}

func TestNew(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080":         "http://127.0.0.1:8080",
		"http://127.0.0.1:8080/":        "http://127.0.0.1:8080",
		"http://127.0.0.1:8080/v1":      "http://127.0.0.1:8080",
		"https://example.com/neuro/v1/": "https://example.com/neuro",
		"https://example.com/neuro/":    "https://example.com/neuro",
	} {
		c, err := client.New(in, nil)
		if err != nil || c.BaseURL() != want {
			t.Errorf("New(%q).BaseURL() = %v, %v; want %q", in, c, err, want)
		}
	}
	for _, bad := range []string{"", "127.0.0.1:8080", "ftp://x", "http://x/?api_key=1", "http://u:p@x"} {
		if _, err := client.New(bad, nil); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
}
