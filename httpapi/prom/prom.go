// Package prom exports an httpapi server's metrics in the Prometheus text
// format, through client_golang. It is a package of its own so that a
// program mounting httpapi without it links no Prometheus code:
//
//	srv, err := httpapi.New(rt, &httpapi.Options{Keys: keys, Metrics: prom.New()})
//
// Each Metrics has a registry of its own (with the Go and process
// collectors): two servers in one process never share or collide.
package prom

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/neuro-go/neuro/runtime"
)

// Metrics are a server's Prometheus series. It implements
// httpapi.Metrics.
type Metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	ttft      *prometheus.HistogramVec
	tokens    *prometheus.CounterVec
	spikes    *prometheus.CounterVec
	synops    *prometheus.CounterVec
	timesteps *prometheus.CounterVec
	energy    *prometheus.CounterVec
	samples   *prometheus.CounterVec
	codes     [600]string
}

// New returns the series in a new registry.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neuro_http_requests_total",
		Help: "HTTP requests by endpoint and status code."}, []string{"endpoint", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "neuro_http_request_duration_seconds",
		Help: "Time to answer a request (to the end of its stream), by endpoint.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 14)}, []string{"endpoint"})
	m.ttft = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "neuro_time_to_first_token_seconds",
		Help: "Time from the request to its first generated token, by model.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 14)}, []string{"model"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neuro_tokens_total",
		Help: "Tokens processed, by model and kind: prompt, completion, and cached (prompt tokens resumed from a saved state instead of read)."}, []string{"model", "kind"})
	m.spikes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neuro_spikes_total",
		Help: "Spikes fired while generating or running, by model."}, []string{"model"})
	m.synops = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neuro_synaptic_ops_total",
		Help: "Synaptic operations while generating or running, by model."}, []string{"model"})
	m.timesteps = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neuro_timesteps_total",
		Help: "Network timesteps run while generating or running, by model."}, []string{"model"})
	m.energy = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neuro_energy_microjoules_total",
		Help: "Estimated device energy spent generating or running, in microjoules, by model."}, []string{"model"})
	m.samples = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "neuro_samples_total",
		Help: "Samples run through networks, by model."}, []string{"model"})
	m.reg.MustRegister(m.samples, m.requests, m.latency, m.ttft, m.tokens, m.spikes, m.synops, m.timesteps, m.energy,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for i := range m.codes {
		m.codes[i] = strconv.Itoa(i)
	}
	return m
}

// Handler serves the registry.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Request counts a finished request.
func (m *Metrics) Request(endpoint string, status int, d time.Duration) {
	code := "other"
	if status >= 0 && status < len(m.codes) {
		code = m.codes[status]
	}
	m.requests.WithLabelValues(endpoint, code).Inc()
	m.latency.WithLabelValues(endpoint).Observe(d.Seconds())
}

// Run counts a finished run of a network.
func (m *Metrics) Run(res *runtime.RunResult) {
	model, u := res.Model, res.Usage
	m.samples.WithLabelValues(model).Add(float64(u.Samples))
	m.spikes.WithLabelValues(model).Add(u.Spikes)
	m.synops.WithLabelValues(model).Add(u.SynapticOps)
	m.timesteps.WithLabelValues(model).Add(float64(u.Timesteps))
	m.energy.WithLabelValues(model).Add(u.EnergyMicrojoule)
}

// Generation counts a finished generation.
func (m *Metrics) Generation(res *runtime.Result) {
	model := res.Model
	if res.Stats.TimeToFirstToken > 0 {
		m.ttft.WithLabelValues(model).Observe(res.Stats.TimeToFirstToken.Seconds())
	}
	m.tokens.WithLabelValues(model, "prompt").Add(float64(res.Usage.PromptTokens))
	m.tokens.WithLabelValues(model, "completion").Add(float64(res.Usage.CompletionTokens))
	m.tokens.WithLabelValues(model, "cached").Add(float64(res.Usage.CachedTokens))
	m.spikes.WithLabelValues(model).Add(res.Stats.Spikes)
	m.synops.WithLabelValues(model).Add(res.Stats.SynapticOps)
	m.timesteps.WithLabelValues(model).Add(float64(res.Stats.Timesteps))
	m.energy.WithLabelValues(model).Add(res.Stats.EnergyMicrojoule)
}

// StateSource reports what a runtime keeps of conversations:
// *runtime.Runtime and a cluster node are ones.
type StateSource interface {
	// CacheStats reports the prefix-state cache.
	CacheStats() runtime.CacheStats
	// ResponseStats reports the stored responses: how many, and their
	// bytes.
	ResponseStats() (count int, bytes int64)
}

// WatchStates exports src's prefix-state cache (lookups that hit or
// missed, tokens resumed, bytes and entries held) and stored responses
// (count and bytes), read at each scrape.
func (m *Metrics) WatchStates(src StateSource) {
	cache := func(f func(runtime.CacheStats) float64) func() float64 {
		return func() float64 { return f(src.CacheStats()) }
	}
	lookups := func(hit bool) prometheus.Collector {
		result := "miss"
		if hit {
			result = "hit"
		}
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "neuro_prefix_cache_lookups_total",
			Help: "Prompts looked up in the prefix-state cache, by result.", ConstLabels: prometheus.Labels{"result": result}},
			cache(func(s runtime.CacheStats) float64 {
				if hit {
					return float64(s.Hits)
				}
				return float64(s.Misses)
			}))
	}
	m.reg.MustRegister(lookups(true), lookups(false),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "neuro_prefix_cache_resumed_tokens_total",
			Help: "Prompt tokens resumed from the prefix-state cache instead of read."}, cache(func(s runtime.CacheStats) float64 { return float64(s.ResumedTokens) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "neuro_prefix_cache_bytes",
			Help: "Bytes of states the prefix-state cache holds."}, cache(func(s runtime.CacheStats) float64 { return float64(s.Bytes) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "neuro_prefix_cache_entries",
			Help: "States the prefix-state cache holds."}, cache(func(s runtime.CacheStats) float64 { return float64(s.Entries) })),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "neuro_stored_responses",
			Help: "Responses stored for later turns (/v1/responses)."}, func() float64 { n, _ := src.ResponseStats(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "neuro_stored_response_bytes",
			Help: "Bytes of stored responses, their states included."}, func() float64 { _, b := src.ResponseStats(); return float64(b) }),
	)
}
