package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/runtime"
)

// discardWriter is a ResponseWriter that keeps nothing, so that the
// benchmarks measure the handler and not a recorder's buffer.
type discardWriter struct {
	h http.Header
	n int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Flush()                      {}

func benchRequest(b *testing.B, s http.Handler, body string) {
	req := httptest.NewRequest("POST", "/v1/chat/completions", nil)
	req.Header.Set("Authorization", "Bearer "+keyAlice)
	req.Header.Set("Content-Type", "application/json")
	w := &discardWriter{h: http.Header{}}
	rd := strings.NewReader(body)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rd.Reset(body)
		req.Body = readCloser{rd}
		req.ContentLength = int64(len(body))
		clear(w.h)
		s.ServeHTTP(w, req)
	}
}

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }

// BenchmarkMockChat is the handler's whole cost for one small
// non-streamed chat completion in mock mode: auth, limits, decoding and
// validation, tokenizing the prompt and the answer, telemetry, metrics
// and the JSON response.
func BenchmarkMockChat(b *testing.B) {
	s := newTestServer(b, newMockRuntime(b), &Options{Mock: true})
	benchRequest(b, s, `{"model":"neuro-1","messages":[{"role":"user","content":"Tell me a short story"}],"max_tokens":1}`)
}

// BenchmarkMockStreamTokens streams 256 tokens per request; the per-token
// figure is the request's time over its tokens after subtracting nothing,
// so it is an upper bound on the cost of one streamed token.
func BenchmarkMockStreamTokens(b *testing.B) {
	s := newTestServer(b, newMockRuntime(b), &Options{Mock: true})
	// n=8 choices of 32 tokens, the end of the turn banned: 256 tokens.
	stops, _ := testTokenizer(b).StopIDs()
	bias := ""
	for _, id := range stops {
		bias += fmt.Sprintf(`,"%d":-100`, id)
	}
	body := `{"model":"neuro-1","messages":[{"role":"user","content":"Tell me a story"}],"n":8,"max_tokens":32,"stream":true,"logit_bias":{` + bias[1:] + `}}`
	w := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+keyAlice)
	s.ServeHTTP(w, req)
	tokens := bytes.Count(w.Body.Bytes(), []byte(`"delta":{"content":`))
	if tokens < 100 {
		b.Fatalf("%d tokens streamed", tokens)
	}
	benchRequest(b, s, body)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(tokens), "ns/token")
	b.ReportMetric(float64(tokens), "tokens/op")
}

// BenchmarkSSEEvent is the stream writer's cost per content chunk alone.
func BenchmarkSSEEvent(b *testing.B) {
	s := newTestServer(b, newMockRuntime(b), &Options{Mock: true})
	g := &genRequest{chat: true, n: 1}
	w := &discardWriter{h: http.Header{}}
	st := newSSE(w, s, g, "chatcmpl-0123456789abcdefghijklmn", 1700000000, "neuro-1-standard")
	st.start()
	ev := runtime.Event{Text: " neuron"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st.event(ev)
	}
}
