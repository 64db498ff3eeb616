// Command load is a bounded load test of the REST server: many concurrent
// clients stream chat completions for a fixed time, some of them breaking
// off midway, and it prints latency percentiles, tokens per second,
// errors, and the process's goroutines and heap before and after.
//
//	go run ./bench/load -clients 64 -duration 60s -disconnect 0.1
//
// By default it starts the server in-process, in mock mode, on
// 127.0.0.1 (with -mock=false, over the small random-weight models of
// package clienttest), with per-key limits off so that the test measures
// the server and not its rate limiter. With -url it loads a running
// server instead (then the goroutine and heap figures are the client's
// alone). Every client stops at the deadline or after -requests requests,
// whichever comes first.
//
// It exits 1 when a request failed unexpectedly (breaking off is
// expected, not a failure) or when goroutines or heap did not come back
// to their baseline.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/httpapi/client"
	"github.com/neuro-go/neuro/httpapi/client/clienttest"
)

// Config is one load test.
type Config struct {
	Clients    int
	Duration   time.Duration
	Disconnect float64 // fraction of requests that break off midway
	MaxTokens  int
	Requests   int // per client
	Model      string
	URL, Key   string // empty URL: in-process server
	Mock       bool
	Seed       uint64
}

func main() {
	var c Config
	flag.IntVar(&c.Clients, "clients", 64, "concurrent streaming clients")
	flag.DurationVar(&c.Duration, "duration", 60*time.Second, "how long the clients keep sending")
	flag.Float64Var(&c.Disconnect, "disconnect", 0.1, "fraction of requests whose client disconnects midway")
	flag.IntVar(&c.MaxTokens, "max-tokens", 64, "max_tokens of each request")
	flag.IntVar(&c.Requests, "requests", 1_000_000, "at most this many requests per client")
	flag.StringVar(&c.Model, "model", "neuro-1-lite", "model to ask")
	flag.StringVar(&c.URL, "url", "", "load this server instead of an in-process one")
	flag.StringVar(&c.Key, "key", os.Getenv("NEURO_API_KEY"), "API key for -url (default $NEURO_API_KEY)")
	flag.BoolVar(&c.Mock, "mock", true, "in-process server in mock mode (false: the small test models)")
	flag.Uint64Var(&c.Seed, "seed", 1, "seed of the clients' choices")
	flag.Parse()
	rep, err := Run(context.Background(), c, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(2)
	}
	if !rep.OK() {
		os.Exit(1)
	}
}

// Report is what a run measured.
type Report struct {
	Completed, Disconnected, Errors   int
	ErrorKinds                        map[string]int
	Latency, TTFT                     *Histogram
	Tokens                            int64
	Elapsed                           time.Duration
	GoroutinesBefore, GoroutinesAfter int
	HeapBefore, HeapAfter             uint64
	InProcess                         bool
}

// OK reports whether the run had no unexpected error and came back to
// its baseline: the same goroutines, and a heap within 25% + 4 MiB of the
// one before (the collector's slack; a leak of per-request state over a
// run of many thousands of requests is far larger).
func (r *Report) OK() bool {
	return r.Errors == 0 && r.Completed > 0 && r.GoroutinesAfter <= r.GoroutinesBefore && r.heapBack()
}

func (r *Report) heapBack() bool {
	return float64(r.HeapAfter) <= float64(r.HeapBefore)*1.25+4<<20
}

// Run runs one load test and prints its report to w.
func Run(ctx context.Context, c Config, w io.Writer) (*Report, error) {
	if c.Clients < 1 || c.Duration <= 0 || c.Disconnect < 0 || c.Disconnect > 1 || c.MaxTokens < 2 || c.Requests < 1 {
		return nil, errors.New("need clients >= 1, duration > 0, disconnect in 0..1, max-tokens >= 2, requests >= 1")
	}
	rep := &Report{ErrorKinds: map[string]int{}, Latency: NewHistogram(), TTFT: NewHistogram(), InProcess: c.URL == ""}
	base, key := c.URL, c.Key
	if base == "" {
		keys := map[string]string{"sk-load": "load"}
		srv, err := clienttest.Start(ctx, &clienttest.Options{Mock: c.Mock, Keys: keys, NoLoihi: true, MaxBatch: 16,
			API: &httpapi.Options{RequestsPerMinute: -1, ConcurrentRequests: -1}})
		if err != nil {
			return nil, err
		}
		defer srv.Close()
		base, key = srv.URL, srv.Key
	}
	tr := &http.Transport{MaxIdleConns: c.Clients, MaxIdleConnsPerHost: c.Clients, IdleConnTimeout: 30 * time.Second}
	cl, err := client.New(base, &client.Options{APIKey: key, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		return nil, err
	}
	// Warm up (first-use caches, the connection pool's first connection),
	// then take the baseline.
	if _, err := cl.ChatCompletion(ctx, request(c, "warm up")); err != nil {
		return nil, fmt.Errorf("warm-up request: %w", err)
	}
	tr.CloseIdleConnections()
	rep.GoroutinesBefore, rep.HeapBefore = settle(0)

	fmt.Fprintf(w, "load: %d clients for %s, %.0f%% disconnecting midway, model %s, max_tokens %d, %s\n",
		c.Clients, c.Duration, 100*c.Disconnect, c.Model, c.MaxTokens, target(c))
	start := time.Now()
	deadline := start.Add(c.Duration)
	runCtx, cancel := context.WithDeadline(ctx, deadline.Add(30*time.Second)) // a stuck request cannot hold the run
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < c.Clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := worker(runCtx, cl, c, i, deadline)
			mu.Lock()
			rep.merge(st)
			mu.Unlock()
		}()
	}
	wg.Wait()
	rep.Elapsed = time.Since(start)
	tr.CloseIdleConnections()
	rep.GoroutinesAfter, rep.HeapAfter = settle(rep.GoroutinesBefore)
	rep.print(w)
	return rep, nil
}

func target(c Config) string {
	if c.URL != "" {
		return "server " + c.URL
	}
	if c.Mock {
		return "in-process server, mock mode"
	}
	return "in-process server, random-weight test models"
}

func request(c Config, prompt string) *client.ChatCompletionRequest {
	return &client.ChatCompletionRequest{Model: c.Model, Messages: []client.ChatMessage{{Role: "user", Content: prompt}},
		MaxTokens: client.Ptr(c.MaxTokens), StreamOptions: &client.StreamOptions{IncludeUsage: true}}
}

type stats struct {
	completed, disconnected, errors int
	kinds                           map[string]int
	latency, ttft                   *Histogram
	tokens                          int64
}

func (r *Report) merge(s *stats) {
	r.Completed += s.completed
	r.Disconnected += s.disconnected
	r.Errors += s.errors
	for k, n := range s.kinds {
		r.ErrorKinds[k] += n
	}
	r.Latency.Merge(s.latency)
	r.TTFT.Merge(s.ttft)
	r.Tokens += s.tokens
}

var prompts = [...]string{"Tell me a story.", "What is a spiking neuron?", "Write a haiku about rivers.", "Explain leaky integration.",
	"Describe a quiet morning.", "Why do neurons fire?", "List three colours.", "Say hello."}

// worker is one client: stream, read to the end (or break off midway),
// repeat until the deadline.
func worker(ctx context.Context, cl *client.Client, c Config, id int, deadline time.Time) *stats {
	rng := rand.New(rand.NewPCG(c.Seed, uint64(id)))
	st := &stats{kinds: map[string]int{}, latency: NewHistogram(), ttft: NewHistogram()}
	for n := 0; n < c.Requests && time.Now().Before(deadline); n++ {
		req := request(c, fmt.Sprintf("%s (%d/%d)", prompts[rng.IntN(len(prompts))], id, n))
		leaveAt := -1
		if rng.Float64() < c.Disconnect {
			leaveAt = 1 + rng.IntN(c.MaxTokens/2) // content chunks to read before leaving: midway
		}
		t0 := time.Now()
		var first time.Duration
		chunks := 0
		var usage *client.Usage
		var err error
		for ch, e := range cl.ChatCompletionStream(ctx, req) {
			if e != nil {
				err = e
				break
			}
			if ch.Usage != nil {
				usage = ch.Usage
				continue
			}
			if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
				if chunks == 0 {
					first = time.Since(t0)
				}
				chunks++
			}
			if chunks == leaveAt {
				break
			}
		}
		switch {
		case err != nil:
			st.errors++
			st.kinds[errorKind(err)]++
		case leaveAt > 0 && chunks == leaveAt:
			st.disconnected++
			st.tokens += int64(chunks)
		case usage == nil:
			st.errors++
			st.kinds["stream without usage chunk"]++
		default:
			st.completed++
			st.tokens += int64(usage.CompletionTokens)
			st.latency.Add(time.Since(t0))
			if first > 0 {
				st.ttft.Add(first)
			}
		}
	}
	return st
}

func errorKind(err error) string {
	var ae *client.APIError
	if errors.As(err, &ae) {
		return fmt.Sprintf("%d %s", ae.StatusCode, ae.Code)
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return s
}

// settle waits (up to 10 s) for goroutines to come down to want (0: take
// the count once), collects garbage, and returns the goroutines and the
// heap in use.
func settle(want int) (int, uint64) {
	deadline := time.Now().Add(10 * time.Second)
	for want > 0 && goruntime.NumGoroutine() > want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	goruntime.GC()
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return goruntime.NumGoroutine(), ms.HeapInuse
}

func (r *Report) print(w io.Writer) {
	secs := r.Elapsed.Seconds()
	fmt.Fprintf(w, "requests:   %d completed (%.0f/s), %d disconnected midway (expected), %d unexpected errors\n",
		r.Completed, float64(r.Completed)/secs, r.Disconnected, r.Errors)
	for k, n := range r.ErrorKinds {
		fmt.Fprintf(w, "            %d × %s\n", n, k)
	}
	fmt.Fprintf(w, "latency:    whole stream p50 %s, p99 %s, max %s (completed requests)\n",
		fmtDur(r.Latency.Quantile(0.5)), fmtDur(r.Latency.Quantile(0.99)), fmtDur(r.Latency.Max()))
	fmt.Fprintf(w, "first token: p50 %s, p99 %s\n", fmtDur(r.TTFT.Quantile(0.5)), fmtDur(r.TTFT.Quantile(0.99)))
	fmt.Fprintf(w, "tokens:     %d streamed, %.0f tokens/s\n", r.Tokens, float64(r.Tokens)/secs)
	who := "process (client and server)"
	if !r.InProcess {
		who = "client process"
	}
	fmt.Fprintf(w, "goroutines: %d before, %d after (%s)\n", r.GoroutinesBefore, r.GoroutinesAfter, who)
	fmt.Fprintf(w, "heap:       %.1f MiB in use before, %.1f MiB after\n", float64(r.HeapBefore)/(1<<20), float64(r.HeapAfter)/(1<<20))
	verdict := "PASS: no unexpected error; goroutines and heap back to baseline"
	if !r.OK() {
		verdict = "FAIL"
		if r.Errors > 0 || r.Completed == 0 {
			verdict += ": unexpected errors or nothing completed"
		}
		if r.GoroutinesAfter > r.GoroutinesBefore {
			verdict += ": goroutines not back to baseline"
		}
		if !r.heapBack() {
			verdict += ": heap not back to baseline"
		}
	}
	fmt.Fprintln(w, verdict)
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.0fµs", float64(d)/1e3)
}

// Histogram records durations in logarithmic buckets 2% wide, from 1 µs
// to about 3 hours: fixed memory however long the run, quantiles within
// 2%.
type Histogram struct {
	counts []int64
	n      int64
	max    time.Duration
}

const (
	histGrowth  = 1.02
	histBuckets = 1200
)

func NewHistogram() *Histogram { return &Histogram{counts: make([]int64, histBuckets)} }

func (h *Histogram) Add(d time.Duration) {
	i := 0
	if us := float64(d) / 1e3; us > 1 {
		i = min(int(math.Log(us)/math.Log(histGrowth))+1, histBuckets-1)
	}
	h.counts[i]++
	h.n++
	h.max = max(h.max, d)
}

func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

func (h *Histogram) Max() time.Duration { return h.max }

// Quantile returns the upper edge of the bucket holding quantile q.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.n)))
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank && c > 0 {
			return min(time.Duration(math.Pow(histGrowth, float64(i))*1e3), h.max)
		}
	}
	return h.max
}
