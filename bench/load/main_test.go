package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A short run of the load test against both kinds of in-process server,
// so that the program keeps working; the 60 s run is bench/RESULTS.md's.
func TestShortRun(t *testing.T) {
	for _, mock := range []bool{true, false} {
		var out strings.Builder
		rep, err := Run(context.Background(), Config{Clients: 4, Duration: 300 * time.Millisecond, Disconnect: 0.5, MaxTokens: 16,
			Requests: 1000, Model: "neuro-1-lite", Mock: mock, Seed: 1}, &out)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(out.String())
		if rep.Errors != 0 || rep.Completed == 0 || rep.Disconnected == 0 || rep.Tokens == 0 || rep.Latency.Quantile(0.5) <= 0 {
			t.Fatalf("mock %v: %+v", mock, rep)
		}
		if rep.GoroutinesAfter > rep.GoroutinesBefore {
			t.Fatalf("mock %v: %d goroutines after, %d before", mock, rep.GoroutinesAfter, rep.GoroutinesBefore)
		}
	}
}

func TestHistogram(t *testing.T) {
	h := NewHistogram()
	for i := 1; i <= 1000; i++ {
		h.Add(time.Duration(i) * time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.99, 990 * time.Millisecond}, {1, time.Second}} {
		got := h.Quantile(c.q)
		if d := float64(got-c.want) / float64(c.want); d < -0.001 || d > 0.021 {
			t.Errorf("q%.2f = %s, want %s within 2%%", c.q, got, c.want)
		}
	}
	if NewHistogram().Quantile(0.5) != 0 {
		t.Error("empty histogram")
	}
}
