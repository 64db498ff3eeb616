package runtime

import (
	"testing"
	"time"
)

// TestTelemetryKeepsEachCallersWindow: a busy caller fills its own ring,
// not another's; a window longer than the runtime has run starts at its
// start; the generation rate counts time spent generating, not the
// window.
func TestTelemetryKeepsEachCallersWindow(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	tel := newTelemetry(10, clock)
	now = now.Add(time.Minute)
	tel.add(requestRecord{at: now, principal: "quiet", completion: 10, latency: 2 * time.Second, ttft: time.Second, endpoint: "/v1/completions"})
	for i := 0; i < 1000; i++ {
		tel.add(requestRecord{at: now, principal: "busy", endpoint: "/v1/models"})
	}
	now = now.Add(time.Hour)
	s, err := tel.Summarize(Filter{Principal: "quiet", Window: 100000 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests.Total != 1 || s.Truncated {
		t.Errorf("the quiet caller's history: %+v", s.Requests)
	}
	if !s.WindowStart.Equal(tel.start) {
		t.Errorf("window starts %v, the runtime started %v", s.WindowStart, tel.start)
	}
	if s.Tokens.PerSecond != 10 {
		t.Errorf("per_second %v: 10 tokens in the 1 s after the first token", s.Tokens.PerSecond)
	}
	// Since the start, counts are exact however many records were
	// dropped; a window counts the records it still has, and says so.
	b, _ := tel.Summarize(Filter{Principal: "busy"})
	if b.Requests.Total != 1000 || !b.Truncated {
		t.Errorf("the busy caller since the start: %+v truncated %v", b.Requests, b.Truncated)
	}
	w, _ := tel.Summarize(Filter{Principal: "busy", Window: time.Hour + 30*time.Second})
	if w.Requests.Total != 10 || !w.Truncated {
		t.Errorf("the busy caller in a window: %+v truncated %v", w.Requests, w.Truncated)
	}
}
