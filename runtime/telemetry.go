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
	// forward, when set, takes the records made here instead of the
	// store (Add still keeps its records).
	forward func(Record)
}

// ring is one caller's most recent records, and the totals of all its
// records since the start, which the ring's bound never truncates.
type ring struct {
	recs     []requestRecord
	next     int
	full     bool
	total    tally
	byModel  map[string]*tally
	byDeploy map[string]*tally
}

func (r *ring) add(rec requestRecord, size int) {
	r.total.add(&rec)
	for _, g := range []struct {
		key string
		m   *map[string]*tally
	}{{rec.model, &r.byModel}, {rec.deployment, &r.byDeploy}} {
		if g.key == "" {
			continue
		}
		if *g.m == nil {
			*g.m = map[string]*tally{}
		}
		t := (*g.m)[g.key]
		if t == nil {
			t = &tally{}
			(*g.m)[g.key] = t
		}
		t.add(&rec)
	}
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
	cached                       int // prompt tokens resumed from a state
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
		rec.promptTokens, rec.completion, rec.cached = res.Usage.PromptTokens, res.Usage.CompletionTokens, res.Usage.CachedTokens
		rec.stats = res.Stats
	}
	t.add(rec)
}

func (t *Telemetry) add(rec requestRecord) {
	t.mu.Lock()
	if fn := t.forward; fn != nil {
		t.mu.Unlock()
		fn(Record{At: rec.at, Principal: rec.principal, Model: rec.model, Deployment: rec.deployment, Endpoint: rec.endpoint,
			Err: rec.err, Latency: rec.latency, TTFT: rec.ttft, PromptTokens: rec.promptTokens, CompletionTokens: rec.completion, CachedTokens: rec.cached, Stats: rec.stats})
		return
	}
	r := t.rings[rec.principal]
	if r == nil {
		r = &ring{}
		t.rings[rec.principal] = r
	}
	r.add(rec, t.size)
	t.mu.Unlock()
}

// Record is one request as telemetry keeps it: what a program that
// keeps telemetry elsewhere as well (a cluster sums its nodes') copies.
type Record struct {
	At                                     time.Time
	Principal, Model, Deployment, Endpoint string
	Err                                    bool
	Latency, TTFT                          time.Duration
	PromptTokens, CompletionTokens         int
	CachedTokens                           int
	Stats                                  Stats
}

// NewTelemetry returns an empty store that keeps up to records records
// per caller (0: 20,000), for a program that assembles telemetry from
// records made elsewhere (Add). now is the clock; nil is time.Now.
func NewTelemetry(records int, now func() time.Time) *Telemetry {
	if records <= 0 {
		records = 20_000
	}
	if now == nil {
		now = time.Now
	}
	return newTelemetry(records, now)
}

// Add keeps a record made elsewhere. One older than the store reaches
// back its summaries' start, so that stores given the same records
// report the same totals whenever each was made.
func (t *Telemetry) Add(rec Record) {
	t.mu.Lock()
	if rec.At.Before(t.start) {
		t.start = rec.At
	}
	r := t.rings[rec.Principal]
	if r == nil {
		r = &ring{}
		t.rings[rec.Principal] = r
	}
	r.add(requestRecord{at: rec.At, principal: rec.Principal, model: rec.Model, deployment: rec.Deployment, endpoint: rec.Endpoint,
		err: rec.Err, latency: rec.Latency, ttft: rec.TTFT, promptTokens: rec.PromptTokens, completion: rec.CompletionTokens, cached: rec.CachedTokens, stats: rec.Stats}, t.size)
	t.mu.Unlock()
}

// Forward sends the records made here from now on (by the runtime and
// by Record* calls) to fn instead of keeping them; nil keeps them again.
// A cluster forwards its nodes' records to one log that every node's
// store reads back through Add. fn runs on the recording goroutine and
// must not block.
func (t *Telemetry) Forward(fn func(Record)) {
	t.mu.Lock()
	t.forward = fn
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
	// Cached are the prompt tokens resumed from a saved state (the
	// prefix-state cache or a stored response) instead of read;
	// CacheHits the requests that resumed any.
	Cached    int `json:"cached"`
	CacheHits int `json:"cache_hits"`
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
	t.mu.Lock()
	from := t.start // Add moves it back for an older record
	if f.Window > 0 && now.Add(-f.Window).After(from) {
		from = now.Add(-f.Window) // a window longer than the runtime has run starts at its start
	}
	var recs []requestRecord
	truncated := false
	// Since the start, the counts come from the running totals, exact
	// however many records the rings have dropped; percentiles always
	// come from the records.
	exact := from.Equal(t.start) && (f.Model == "" || f.Deployment == "")
	var total tally
	byModel, byDeploy := map[string]*tally{}, map[string]*tally{}
	for principal, rg := range t.rings {
		if f.Principal != "" && principal != f.Principal {
			continue
		}
		if exact {
			switch {
			case f.Model != "":
				total.merge(rg.byModel[f.Model])
			case f.Deployment != "":
				total.merge(rg.byDeploy[f.Deployment])
			default:
				total.merge(&rg.total)
			}
			for _, g := range []struct{ from, into map[string]*tally }{{rg.byModel, byModel}, {rg.byDeploy, byDeploy}} {
				for k, v := range g.from {
					if into := g.into[k]; into != nil {
						into.merge(v)
					} else {
						c := &tally{}
						c.merge(v)
						g.into[k] = c
					}
				}
			}
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
	if exact {
		s.Requests, s.Tokens, s.Neuro = total.counts()
		// The groups the filter selects: with a model filter, only that
		// model's deployments; with a deployment filter, only its model.
		for _, g := range []struct {
			from map[string]*tally
			into map[string]*GroupSummary
		}{{byModel, s.ByModel}, {byDeploy, s.ByDeploy}} {
			for k, v := range g.from {
				gs := g.into[k]
				if gs == nil {
					if f.Model != "" || f.Deployment != "" {
						continue // no record of it passes the filter
					}
					gs = &GroupSummary{}
					g.into[k] = gs
				}
				gs.Requests, gs.Tokens, gs.Neuro = v.counts()
			}
		}
	}
	return s, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// tally sums records: the counts of a summary, without percentiles.
type tally struct {
	rc         RequestCounts
	tc         TokenCounts
	nc         NeuroCounts
	generating time.Duration // time after the first token, for per_second
}

func (t *tally) add(r *requestRecord) {
	if t.rc.ByEndpoint == nil {
		t.rc.ByEndpoint = map[string]int{}
	}
	t.rc.Total++
	if r.err {
		t.rc.Errors++
	}
	if r.endpoint != "" {
		t.rc.ByEndpoint[r.endpoint]++
	}
	t.tc.Prompt += r.promptTokens
	t.tc.Completion += r.completion
	t.tc.Cached += r.cached
	if r.cached > 0 {
		t.tc.CacheHits++
	}
	if r.completion > 0 && r.latency > r.ttft {
		t.generating += r.latency - r.ttft
	}
	t.nc.Timesteps += r.stats.Timesteps
	t.nc.Spikes += r.stats.Spikes
	t.nc.SynapticOps += r.stats.SynapticOps
	t.nc.spikingUpdates += r.stats.SpikingUpdates
	t.nc.EnergyMicrojoule += r.stats.EnergyMicrojoule
}

func (t *tally) merge(o *tally) {
	if o == nil {
		return
	}
	if t.rc.ByEndpoint == nil {
		t.rc.ByEndpoint = map[string]int{}
	}
	t.rc.Total += o.rc.Total
	t.rc.Errors += o.rc.Errors
	for k, v := range o.rc.ByEndpoint {
		t.rc.ByEndpoint[k] += v
	}
	t.tc.Prompt += o.tc.Prompt
	t.tc.Completion += o.tc.Completion
	t.tc.Cached += o.tc.Cached
	t.tc.CacheHits += o.tc.CacheHits
	t.generating += o.generating
	t.nc.Timesteps += o.nc.Timesteps
	t.nc.Spikes += o.nc.Spikes
	t.nc.SynapticOps += o.nc.SynapticOps
	t.nc.spikingUpdates += o.nc.spikingUpdates
	t.nc.EnergyMicrojoule += o.nc.EnergyMicrojoule
}

// counts finishes the rates.
func (t *tally) counts() (RequestCounts, TokenCounts, NeuroCounts) {
	rc, tc, nc := t.rc, t.tc, t.nc
	if rc.ByEndpoint == nil {
		rc.ByEndpoint = map[string]int{}
	}
	if t.generating > 0 {
		tc.PerSecond = float64(tc.Completion) / t.generating.Seconds()
	}
	if nc.spikingUpdates > 0 {
		nc.SpikeRate = nc.Spikes / nc.spikingUpdates
	}
	return rc, tc, nc
}

func summarize(recs []requestRecord) (RequestCounts, Percentiles, TokenCounts, NeuroCounts) {
	var t tally
	lat := make([]float64, 0, len(recs))
	for i := range recs {
		t.add(&recs[i])
		lat = append(lat, ms(recs[i].latency))
	}
	rc, tc, nc := t.counts()
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
