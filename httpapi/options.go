package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/neuro-go/neuro/runtime"
)

// MetricsNetworkLabel is the model that Metrics are told of for a run of
// a network a caller compiled, and for a generation of a language model
// a caller compiled: /metrics answers without a key, so it must not name
// a caller's network, and a series per network would let callers grow it
// without bound.
const MetricsNetworkLabel = "network"

// Options configure a Server. A nil *Options is not enough on its own: the
// server needs API keys (Keys or KeyStore). Every other zero field takes
// the default written beside it.
type Options struct {
	// KeyStore authenticates bearer keys. Default: StaticKeys(Keys).
	KeyStore KeyStore
	// Keys maps API keys to the principal (caller identity) they stand
	// for; used when KeyStore is nil. A principal scopes telemetry and
	// owns the networks it compiles.
	Keys map[string]string

	// Mock says the backend runs no model (its deployments sit on mock
	// devices, package runtime/hal/mock). The server then refuses
	// streamed text completions, as API.md's mock mode does, and marks
	// /health. Everything else is the backend's.
	Mock bool

	// AllowedOrigins lists the browser origins CORS admits ("*" admits
	// any). Default none: no CORS headers are sent.
	AllowedOrigins []string

	// Metrics, when set, observes every request and generation and
	// serves GET /metrics (httpapi/prom is the Prometheus exporter).
	// Runs of networks, and generations of language models, that callers
	// compiled are counted under the model MetricsNetworkLabel. Default
	// none: /metrics answers 404.
	Metrics Metrics

	// MaxBodyBytes bounds a JSON request body. Default 1 MiB.
	MaxBodyBytes int64
	// MaxCompileBytes bounds the decoded file of a /v1/compile upload; the
	// base64 text may be 4/3 of it. Default 32 MiB.
	MaxCompileBytes int64
	// MaxPromptTokens bounds a prompt, each of a completion's prompts
	// (after the chat template): the backend refuses a longer one
	// (runtime.Request.MaxPromptTokens). Default 8192.
	MaxPromptTokens int
	// MaxTokens bounds max_tokens. Default 4096. A request without
	// max_tokens generates until the model stops, the context ends, or
	// this many tokens.
	MaxTokens int

	// CompileConcurrency is how many compiles (import, conversion,
	// compile) run at once, server-wide; CompileMemory bounds the bytes
	// of compile requests in flight (bodies as declared, or their limit
	// when undeclared). A compile waits up to CompileWait for both, then
	// gets 503 with Retry-After. Defaults 2, 256 MiB and 10 s: with the
	// importers' own bound (4 × MaxCompileBytes of tensor data each), a
	// flood of hostile uploads holds well under 1 GiB.
	CompileConcurrency int
	CompileMemory      int64
	CompileWait        time.Duration
	// CompileMemoryPerKey bounds the bytes of compile requests one key
	// may have in flight, out of CompileMemory, so that one key's slow
	// uploads cannot hold all of it: over it, 429 with Retry-After at
	// once. Default a quarter of CompileMemory.
	CompileMemoryPerKey int64

	// MaxRunBodyBytes bounds the body of a run (POST
	// /v1/deployments/{id}/run), whose inputs may be larger than other
	// JSON requests. Default 16 MiB.
	MaxRunBodyBytes int64
	// RunMemory bounds the bytes runs hold at once, server-wide: each
	// reserves its body (as declared, or MaxRunBodyBytes when
	// undeclared) before reading it, then, once parsed, what its inputs
	// and its answer will take (runBytesPerInput and runBytesPerOutput
	// bytes a value). A run waits up to CompileWait for its reservation,
	// then gets 503 with Retry-After. Default 512 MiB.
	RunMemory int64

	// MaxRunSamples bounds the samples of one run. Default 256, what a
	// network deployment's queue holds at least (runtime.MinRunQueue).
	MaxRunSamples int
	// MaxRunTimesteps bounds one sample's timesteps. Default 10,000.
	MaxRunTimesteps int
	// MaxRunValues bounds the input values of one run (a matrix's, or a
	// vector's times its timesteps, or events). Default 4,194,304.
	MaxRunValues int
	// MaxRecordedValues bounds what a run may record (spikes and
	// membrane values over all its samples). Default 1,048,576.
	MaxRecordedValues int
	// MaxRunOutputValues bounds the numbers a run's answer may hold: each
	// sample's spike_counts and final_state (one per output neuron each)
	// plus what it records, counted before anything runs. Default
	// 2,097,152 (an answer of at most about 32 MB of JSON).
	MaxRunOutputValues int
	// MaxReplicas and MaxBatchSize bound a created deployment. Defaults
	// 4 and 256.
	MaxReplicas, MaxBatchSize int
	// DeployWait is how long POST /v1/deployments waits for the load
	// before answering 201 with status "loading". Default 10 s.
	DeployWait time.Duration

	// RequestsPerMinute is each key's rate limit, as a token bucket that
	// holds a minute's worth. Default 600; negative disables it.
	RequestsPerMinute int
	// RateShare, when set, makes RequestsPerMinute hold across several
	// servers (the nodes of a cluster): the server tells it of each
	// request it admits, and it reports, through Server.SpentElsewhere,
	// the requests each key made on the others. The limit then holds
	// within what the other servers admit between two of its reports.
	RateShare RateShare
	// ConcurrentRequests is how many requests one key may have in flight.
	// Default 16; negative disables it.
	ConcurrentRequests int

	// BodyReadTimeout is how long a request body's first bytes may take,
	// and MinBodyRate the average rate in bytes per second the rest must
	// keep: a body read falls behind that pace is cut off with 408 and the
	// connection closed. Defaults 10 s and 16 KiB/s (a 32 MiB upload may
	// take half an hour).
	BodyReadTimeout time.Duration
	MinBodyRate     int

	// StreamWriteTimeout is how long one write of a stream may wait for a
	// slow reader before the stream is ended and its generation
	// cancelled. Default 30 s.
	StreamWriteTimeout time.Duration
	// RequestTimeout bounds a non-streamed generation. Default 10 min.
	RequestTimeout time.Duration

	// Logger receives operational events (never keys). Default silent.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Defaults of Options.
const (
	DefaultMaxBodyBytes       = 1 << 20
	DefaultMaxCompileBytes    = 32 << 20
	DefaultMaxPromptTokens    = 8192
	DefaultMaxTokens          = 4096
	DefaultRequestsPerMinute  = 600
	DefaultConcurrentRequests = 16
	DefaultStreamWriteTimeout = 30 * time.Second
	DefaultRequestTimeout     = 10 * time.Minute
	DefaultMaxRunBodyBytes    = 16 << 20
	DefaultRunMemory          = 512 << 20
	DefaultMaxRunSamples      = runtime.MinRunQueue
	DefaultMaxRunTimesteps    = 10_000
	DefaultMaxRunValues       = 1 << 22
	DefaultMaxRecordedValues  = 1 << 20
	DefaultMaxRunOutputValues = 1 << 21
	DefaultMaxReplicas        = 4
	DefaultMaxBatchSize       = 256
	DefaultDeployWait         = 10 * time.Second
	DefaultBodyReadTimeout    = 10 * time.Second
	DefaultCompileConcurrency = 2
	DefaultCompileMemory      = 256 << 20
	DefaultCompileWait        = 10 * time.Second
	DefaultMinBodyRate        = 16 << 10
)

// Validate reports an option that cannot work.
func (o *Options) Validate() error {
	var errs []error
	if o.KeyStore == nil && len(o.Keys) == 0 {
		errs = append(errs, errors.New("httpapi: no API keys: set Options.Keys or Options.KeyStore"))
	}
	for k, p := range o.Keys {
		if k == "" || p == "" {
			errs = append(errs, errors.New("httpapi: Options.Keys holds an empty key or principal"))
			break
		}
	}
	for name, v := range map[string]int64{
		"MaxBodyBytes": o.MaxBodyBytes, "MaxCompileBytes": o.MaxCompileBytes, "MaxRunBodyBytes": o.MaxRunBodyBytes, "RunMemory": o.RunMemory,
		"MaxPromptTokens": int64(o.MaxPromptTokens), "MaxTokens": int64(o.MaxTokens),
		"StreamWriteTimeout": int64(o.StreamWriteTimeout), "RequestTimeout": int64(o.RequestTimeout),
		"MaxRunSamples": int64(o.MaxRunSamples), "MaxRunTimesteps": int64(o.MaxRunTimesteps), "MaxRunValues": int64(o.MaxRunValues),
		"MaxRecordedValues": int64(o.MaxRecordedValues), "MaxRunOutputValues": int64(o.MaxRunOutputValues), "MaxReplicas": int64(o.MaxReplicas), "MaxBatchSize": int64(o.MaxBatchSize),
		"DeployWait": int64(o.DeployWait), "CompileConcurrency": int64(o.CompileConcurrency), "CompileMemory": o.CompileMemory, "CompileMemoryPerKey": o.CompileMemoryPerKey, "CompileWait": int64(o.CompileWait), "BodyReadTimeout": int64(o.BodyReadTimeout), "MinBodyRate": int64(o.MinBodyRate),
	} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("httpapi: Options.%s is negative", name))
		}
	}
	for _, origin := range o.AllowedOrigins {
		if origin == "" {
			errs = append(errs, errors.New("httpapi: Options.AllowedOrigins holds an empty origin"))
			break
		}
	}
	return errors.Join(errs...)
}

func (o Options) withDefaults() Options {
	if o.KeyStore == nil {
		o.KeyStore = StaticKeys(o.Keys)
	}
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.MaxBodyBytes, DefaultMaxBodyBytes)
	def(&o.MaxCompileBytes, DefaultMaxCompileBytes)
	def(&o.MaxRunBodyBytes, DefaultMaxRunBodyBytes)
	def(&o.RunMemory, DefaultRunMemory)
	if o.MaxPromptTokens == 0 {
		o.MaxPromptTokens = DefaultMaxPromptTokens
	}
	if o.MaxTokens == 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.RequestsPerMinute == 0 {
		o.RequestsPerMinute = DefaultRequestsPerMinute
	}
	if o.ConcurrentRequests == 0 {
		o.ConcurrentRequests = DefaultConcurrentRequests
	}
	if o.StreamWriteTimeout == 0 {
		o.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	for _, f := range []struct {
		v *int
		d int
	}{{&o.MaxRunSamples, DefaultMaxRunSamples}, {&o.MaxRunTimesteps, DefaultMaxRunTimesteps}, {&o.MaxRunValues, DefaultMaxRunValues},
		{&o.MaxRecordedValues, DefaultMaxRecordedValues}, {&o.MaxRunOutputValues, DefaultMaxRunOutputValues}, {&o.MaxReplicas, DefaultMaxReplicas}, {&o.MaxBatchSize, DefaultMaxBatchSize}} {
		if *f.v == 0 {
			*f.v = f.d
		}
	}
	if o.DeployWait == 0 {
		o.DeployWait = DefaultDeployWait
	}
	if o.CompileConcurrency == 0 {
		o.CompileConcurrency = DefaultCompileConcurrency
	}
	def(&o.CompileMemory, DefaultCompileMemory)
	if o.CompileMemoryPerKey == 0 {
		o.CompileMemoryPerKey = max(1, o.CompileMemory/4)
	}
	if o.CompileWait == 0 {
		o.CompileWait = DefaultCompileWait
	}
	if o.BodyReadTimeout == 0 {
		o.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if o.MinBodyRate == 0 {
		o.MinBodyRate = DefaultMinBodyRate
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
