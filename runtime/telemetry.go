package runtime

import (
	"errors"
	"math"
	"sort"
	"sync"
	"time"
)

// Telemetry keeps a record of every request in a bounded ring per
// caller, so that a busy caller never pushes out another's history, and
// answers windowed, filtered summaries. Recording is O(1) under one
// mutex; summaries sort the selected records.
type Telemetry struct {
	mu    sync.Mutex
	now   func() time.Time
	start time.Time
	size  int // records kept per caller
	rings map[string]*ring
}

// ring is one caller's most recent records.
type ring struct {
	recs []requestRecord
	next int
	full bool
}

func (r *ring) add(rec requestRecord, size int) {
	if len(r.recs) < size && !r.full {
		r.recs = append(r.recs, rec) // grows with use: idle callers cost little
		return
	}
	r.full = true
	r.recs[r.next] = rec
	r.next = (r.next + 1) % len(r.recs)
}

type requestRecord struct {
	at                           time.Time
	principal, model, deployment string
	endpoint                     string
	err                          bool
	latency, ttft                time.Duration
	promptTokens, completion     int
	stats                        Stats
}

func newTelemetry(n int, now func() time.Time) *Telemetry {
	return &Telemetry{now: now, start: now(), size: n, rings: map[string]*ring{}}
}

func (t *Telemetry) record(req *Request, res *Result, err error, start, end time.Time) {
	rec := requestRecord{
		at: end, principal: req.Principal, model: req.Model, deployment: req.Deployment,
		endpoint: req.Endpoint, err: err != nil, latency: end.Sub(start),
	}
	if res != nil {
		rec.model, rec.deployment = res.Model, res.Deployment
		rec.ttft = res.Stats.TimeToFirstToken
		rec.promptTokens, rec.completion = res.Usage.PromptTokens, res.Usage.CompletionTokens
		rec.stats = res.Stats
	}
	t.add(rec)
}

func (t *Telemetry) add(rec requestRecord) {
	t.mu.Lock()
	r := t.rings[rec.principal]
	if r == nil {
		r = &ring{}
		t.rings[rec.principal] = r
	}
	r.add(rec, t.size)
	t.mu.Unlock()
}

// RecordError counts a request that failed before generation.
func (t *Telemetry) RecordError(principal, endpoint, model string, latency time.Duration) {
	t.add(requestRecord{at: t.now(), principal: principal, endpoint: endpoint, model: model, err: true, latency: latency})
}

// RecordRequest counts a request that did not generate (a model listing,
// a compile): only its outcome and latency.
func (t *Telemetry) RecordRequest(principal, endpoint string, failed bool, latency time.Duration) {
	t.add(requestRecord{at: t.now(), principal: principal, endpoint: endpoint, err: failed, latency: latency})
}

// recordRun counts a run: its samples' timesteps, spikes and energy.
func (t *Telemetry) recordRun(req *RunRequest, res *RunResult, err error, start, end time.Time) {
	rec := requestRecord{
		at: end, principal: req.Principal, model: req.Model, deployment: req.Deployment,
		endpoint: req.Endpoint, err: err != nil, latency: end.Sub(start),
	}
	if res != nil {
		u := res.Usage
		rec.model, rec.deployment = res.Model, res.Deployment
		rec.stats = Stats{Timesteps: u.Timesteps, Spikes: u.Spikes, SynapticOps: u.SynapticOps,
			NeuronUpdates: u.NeuronUpdates, SpikingUpdates: u.SpikingUpdates, EnergyMicrojoule: u.EnergyMicrojoule}
	}
	t.add(rec)
}

// Filter selects records for a summary; zero fields select everything.
type Filter struct {
	Principal  string
	Model      string
	Deployment string
	// Window keeps the records of the last Window; 0 keeps all.
	Window time.Duration
}

// ErrBadWindow is returned for a negative window.
var ErrBadWindow = errors.New("runtime: telemetry window must not be negative")

// Summary is a telemetry report (the shape of API.md's /v1/telemetry).
type Summary struct {
	WindowStart time.Time                `json:"-"`
	WindowEnd   time.Time                `json:"-"`
	Requests    RequestCounts            `json:"requests"`
	LatencyMS   Percentiles              `json:"latency_ms"`
	TTFTMS      Percentiles              `json:"time_to_first_token_ms"`
	Tokens      TokenCounts              `json:"tokens"`
	Neuro       NeuroCounts              `json:"neuromorphic"`
	ByModel     map[string]*GroupSummary `json:"by_model"`
	ByDeploy    map[string]*GroupSummary `json:"by_deployment"`
	// Truncated is set when the window reaches past the oldest record
	// still held.
	Truncated bool `json:"truncated,omitempty"`
}

// GroupSummary is the part of a summary for one model or deployment.
type GroupSummary struct {
	Requests  RequestCounts `json:"requests"`
	LatencyMS Percentiles   `json:"latency_ms"`
	Tokens    TokenCounts   `json:"tokens"`
	Neuro     NeuroCounts   `json:"neuromorphic"`
}

type RequestCounts struct {
	Total      int            `json:"total"`
	Errors     int            `json:"errors"`
	ByEndpoint map[string]int `json:"by_endpoint"`
}

type Percentiles struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
}

type TokenCounts struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	// PerSecond is a generation rate: completion tokens per second spent
	// generating them (each request's time after its first token),
	// over the requests in the window. Not tokens per second of the
	// window, which would fall whenever the caller is idle.
	PerSecond float64 `json:"per_second"`
}

type NeuroCounts struct {
	Timesteps   int64   `json:"timesteps"`
	Spikes      float64 `json:"spikes"`
	SynapticOps float64 `json:"synaptic_ops"`
	// SpikeRate is the fraction of spiking neurons that fired per
	// timestep: spikes per update of a neuron that can fire (leaky
	// integrators, which never do, are not counted).
	SpikeRate        float64 `json:"spike_rate"`
	EnergyMicrojoule float64 `json:"energy_estimate_uj"`
	spikingUpdates   float64
}

// Summarize reports the records that f selects.
func (t *Telemetry) Summarize(f Filter) (*Summary, error) {
	if f.Window < 0 {
		return nil, ErrBadWindow
	}
	now := t.now()
	from := t.start
	if f.Window > 0 && now.Add(-f.Window).After(from) {
		from = now.Add(-f.Window) // a window longer than the runtime has run starts at its start
	}
	t.mu.Lock()
	var recs []requestRecord
	truncated := false
	for principal, rg := range t.rings {
		if f.Principal != "" && principal != f.Principal {
			continue
		}
		oldest := now
		for _, r := range rg.recs {
			if r.at.Before(oldest) {
				oldest = r.at
			}
			if r.at.Before(from) || (f.Model != "" && r.model != f.Model) || (f.Deployment != "" && r.deployment != f.Deployment) {
				continue
			}
			recs = append(recs, r)
		}
		truncated = truncated || rg.full && oldest.After(from)
	}
	t.mu.Unlock()
	s := &Summary{WindowStart: from, WindowEnd: now, ByModel: map[string]*GroupSummary{}, ByDeploy: map[string]*GroupSummary{}, Truncated: truncated}
	s.Requests, s.LatencyMS, s.Tokens, s.Neuro = summarize(recs)
	var ttft []float64
	for _, r := range recs {
		if r.ttft > 0 {
			ttft = append(ttft, ms(r.ttft))
		}
	}
	s.TTFTMS = percentiles(ttft)
	group := func(key func(requestRecord) string, into map[string]*GroupSummary) {
		parts := map[string][]requestRecord{}
		for _, r := range recs {
			if k := key(r); k != "" {
				parts[k] = append(parts[k], r)
			}
		}
		for k, rs := range parts {
			g := &GroupSummary{}
			g.Requests, g.LatencyMS, g.Tokens, g.Neuro = summarize(rs)
			into[k] = g
		}
	}
	group(func(r requestRecord) string { return r.model }, s.ByModel)
	group(func(r requestRecord) string { return r.deployment }, s.ByDeploy)
	return s, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func summarize(recs []requestRecord) (RequestCounts, Percentiles, TokenCounts, NeuroCounts) {
	rc := RequestCounts{ByEndpoint: map[string]int{}}
	var tc TokenCounts
	var nc NeuroCounts
	lat := make([]float64, 0, len(recs))
	var generating time.Duration
	for _, r := range recs {
		rc.Total++
		if r.err {
			rc.Errors++
		}
		if r.endpoint != "" {
			rc.ByEndpoint[r.endpoint]++
		}
		lat = append(lat, ms(r.latency))
		tc.Prompt += r.promptTokens
		tc.Completion += r.completion
		if r.completion > 0 && r.latency > r.ttft {
			generating += r.latency - r.ttft
		}
		nc.Timesteps += r.stats.Timesteps
		nc.Spikes += r.stats.Spikes
		nc.SynapticOps += r.stats.SynapticOps
		nc.spikingUpdates += r.stats.SpikingUpdates
		nc.EnergyMicrojoule += r.stats.EnergyMicrojoule
	}
	if generating > 0 {
		tc.PerSecond = float64(tc.Completion) / generating.Seconds()
	}
	if nc.spikingUpdates > 0 {
		nc.SpikeRate = nc.Spikes / nc.spikingUpdates
	}
	return rc, percentiles(lat), tc, nc
}

func percentiles(xs []float64) Percentiles {
	if len(xs) == 0 {
		return Percentiles{}
	}
	sort.Float64s(xs)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(xs)))) - 1
		return xs[max(0, min(i, len(xs)-1))]
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return Percentiles{P50: at(0.50), P95: at(0.95), P99: at(0.99), Mean: sum / float64(len(xs))}
}
