// Command server serves Neuro's REST API (the OpenAI-compatible chat and
// text completions, plus deployments, compile, telemetry, health and
// Prometheus metrics) on 127.0.0.1:8080, with the built-in neuro-1 models:
//
//	go run ./examples/server
//
// Flags:
//
//	-addr HOST:PORT  where to listen (default 127.0.0.1:8080)
//	-mock            answer without running any model (deterministic text,
//	                 real token counts), for client development and CI
//	-data DIR        keep compiled networks in DIR across restarts
//	-device NAME     the device the built-in models are deployed on
//	                 (cpu, loihi or xylo; default cpu)
//	-precision P     the neuro-1 models' weights on cpu: int8 (default),
//	                 bfloat16 or float32 (exact, as trained)
//	-console         serve the web console (package httpapi/console) at /
//	                 beside the API (default true; -console=false turns it off)
//	-cluster URLS    join a Neuro cluster on NATS JetStream (comma-separated
//	                 nats:// URLs; package cluster, docs/deploy.md)
//	-node NAME       this node's name in the cluster (default: the host name)
//
// API keys come from NEURO_API_KEYS (comma-separated). When it is unset,
// one random key is generated and printed at start. Each key's principal
// (which scopes telemetry and owns compiled networks) is "key-" and the
// first 12 hex digits of the key's SHA-256, stable across restarts.
//
// # Built-in models
//
// The neuro-1 models embedded in package models are imported, compiled
// and registered at start (registerBuiltins), each deployed on the cpu
// device as "<model>-cpu" and neuro-1-lite also on the neuromorphic
// emulators that hold it ("neuro-1-lite-loihi"). With -device loihi or
// xylo, every model that device holds is deployed there instead, and the
// others on cpu, as the start-up message says. In mock mode the same
// deployments sit on mock devices (runtime/hal/mock): nothing runs.
//
// SIGINT or SIGTERM shut the server down gracefully: it stops accepting
// connections, lets running requests and streams finish for up to -grace
// (30 s), then cancels those still running, answering each that has not
// begun its answer with 503 and Retry-After, and exits 0 once they have
// returned; then it closes the runtime.
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/neuro-go/neuro/cluster"
	_ "github.com/neuro-go/neuro/compile/nir" // the formats /v1/compile takes
	_ "github.com/neuro-go/neuro/compile/onnx"
	_ "github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/httpapi/console"
	"github.com/neuro-go/neuro/httpapi/prom"
	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all" // the neuro-1 language models
	neuro "github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	_ "github.com/neuro-go/neuro/runtime/hal/loihi"
	_ "github.com/neuro-go/neuro/runtime/hal/xylo"
	"github.com/neuro-go/neuro/snn"
)

type config struct {
	addr, data, device string
	precision          string
	mock, console      bool
	keys               map[string]string
	origins            []string
	cluster, node      string
	grace              time.Duration
	prefixCacheMiB     int64
	responses          int
	responseMiB        int64
	responseTTL        time.Duration
	exits              []func() // run calls them once the HTTP server has stopped
}

func main() {
	err := run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return // -h printed the usage: not a failure
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

func parse(args []string, getenv func(string) string, stdout io.Writer) (*config, error) {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	c := &config{}
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on")
	fs.DurationVar(&c.grace, "grace", 30*time.Second, "on SIGINT or SIGTERM, how long running requests may finish before they are cancelled (503)")
	fs.BoolVar(&c.mock, "mock", false, "answer without running models (deterministic text, real token counts)")
	fs.StringVar(&c.data, "data", "", "directory that keeps compiled networks and stored responses across restarts")
	fs.Int64Var(&c.prefixCacheMiB, "prefix-cache", neuro.DefaultPrefixCacheBytes>>20, "MiB of language-model states kept so that a prompt extending an earlier one of the same key resumes from it; 0 turns the cache off")
	fs.IntVar(&c.responses, "responses", neuro.DefaultQuotaResponses, "stored responses (/v1/responses) each key may keep")
	fs.Int64Var(&c.responseMiB, "response-mib", neuro.DefaultQuotaResponseBytes>>20, "MiB of stored responses, states included, each key may keep")
	fs.DurationVar(&c.responseTTL, "response-ttl", neuro.DefaultResponseTTL, "how long a stored response is kept")
	fs.StringVar(&c.device, "device", "cpu", "device for the built-in models: "+strings.Join(hal.Devices(), ", "))
	fs.StringVar(&c.precision, "precision", models.DefaultPrecision, "weight precision of the neuro-1 models on cpu: int8, bfloat16 or float32 (exact)")
	fs.BoolVar(&c.console, "console", true, "serve the web console at / beside the API")
	fs.StringVar(&c.cluster, "cluster", "", "join a cluster: comma-separated NATS URLs (nats://h1:4222,nats://h2:4222)")
	fs.StringVar(&c.node, "node", hostname(), "this node's name in the cluster")
	cors := fs.String("cors", getenv("NEURO_CORS_ORIGINS"), "comma-separated browser origins allowed to call the API (\"*\" for any; default NEURO_CORS_ORIGINS, else none)")
	fs.SetOutput(stdout)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	for _, o := range strings.Split(*cors, ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.origins = append(c.origins, o)
		}
	}
	if c.prefixCacheMiB < 0 || c.responses < 1 || c.responseMiB < 1 || c.responseTTL <= 0 {
		return nil, errors.New("-prefix-cache must be 0 or more; -responses, -response-mib and -response-ttl must be positive")
	}
	if _, err := snn.ParsePrecision(c.precision); err != nil || c.precision == "" {
		return nil, fmt.Errorf("-precision %q: want int8, bfloat16 or float32", c.precision)
	}
	if !slices.Contains(hal.Devices(), c.device) {
		return nil, fmt.Errorf("-device %q: not one of %s", c.device, strings.Join(hal.Devices(), ", "))
	}
	c.keys = map[string]string{}
	for _, k := range strings.Split(getenv("NEURO_API_KEYS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			c.keys[k] = principal(k)
		}
	}
	if len(c.keys) == 0 {
		b := make([]byte, 24)
		rand.Read(b)
		k := "sk-neuro-" + hex.EncodeToString(b)
		c.keys[k] = principal(k)
		fmt.Fprintf(stdout, "NEURO_API_KEYS is not set; this run's API key is:\n\n    %s\n\n", k)
	}
	return c, nil
}

func principal(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "key-" + hex.EncodeToString(sum[:6])
}

// registerBuiltins registers the built-in neuro-1 models and deploys
// them (models.Deploy): on cpu, each model on the simulator at -precision
// (int8 weights by default) and neuro-1-lite also on every neuromorphic
// emulator that holds it; on
// another device, every model that device holds, the others on cpu
// beside it. In mock mode the same deployments sit on mock devices.
func registerBuiltins(ctx context.Context, rt *neuro.Runtime, c *config) (*models.Placement, error) {
	if err := models.Register(rt); err != nil {
		return nil, err
	}
	return models.Deploy(ctx, rt, &models.DeployOptions{Device: c.device, Mock: c.mock, Precision: c.precision})
}

// setup builds the runtime and the handler.
func setup(ctx context.Context, c *config, log *slog.Logger, stdout io.Writer) (*neuro.Runtime, *httpapi.Server, error) {
	cache := c.prefixCacheMiB << 20
	if cache == 0 {
		cache = -1 // off
	}
	rt := neuro.New(&neuro.Options{Logger: log, DataDir: c.data, PrefixCacheBytes: cache,
		Quota: neuro.Quota{Responses: c.responses, ResponseBytes: c.responseMiB << 20, ResponseTTL: c.responseTTL}})
	start := time.Now()
	pl, err := registerBuiltins(ctx, rt, c)
	if err != nil {
		rt.Close()
		return nil, nil, err
	}
	if c.mock {
		fmt.Fprintln(stdout, "Mock mode: no model runs; answers are deterministic text with real token counts.")
	}
	fmt.Fprintf(stdout, "Loaded %s in %v; deployments:", strings.Join(append(models.Names(), models.Digits), ", "), time.Since(start).Round(time.Millisecond))
	for _, d := range pl.Deployments {
		fmt.Fprintf(stdout, " %s", d.ID)
	}
	fmt.Fprintln(stdout)
	for _, id := range slices.Sorted(maps.Keys(pl.Fallbacks)) {
		fmt.Fprintf(stdout, "%s does not fit %s, so it runs on cpu: %v\n", id, c.device, pl.Fallbacks[id])
	}
	var be httpapi.Backend = rt
	var keys httpapi.KeyStore // nil: c.keys
	var share *cluster.RateShare
	if c.cluster != "" {
		// In a cluster, callers' deployments are the cluster's, and so
		// are their rate limits.
		if be, keys, share, err = joinCluster(ctx, c, rt, log, stdout); err != nil {
			rt.Close()
			return nil, nil, err
		}
	} else if err := rt.RestoreDeployments(ctx); err != nil { // those created before a restart (with -data)
		rt.Close()
		return nil, nil, err
	}
	metrics := prom.New()
	if src, ok := be.(prom.StateSource); ok {
		metrics.WatchStates(src)
	}
	opts := &httpapi.Options{Keys: c.keys, KeyStore: keys, Mock: c.mock, Logger: log, Metrics: metrics, AllowedOrigins: c.origins}
	if share != nil {
		opts.RateShare = share
	}
	srv, err := httpapi.New(be, opts)
	if err != nil {
		rt.Close()
		return nil, nil, err
	}
	if share != nil {
		share.Attach(srv)
	}
	return rt, srv, nil
}

func run(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := parse(args, getenv, stdout)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rt, handler, err := setup(ctx, c, log, stdout)
	if err != nil {
		return err
	}
	defer rt.Close() // after Shutdown: requests finish before the runtime stops
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return err
	}
	hs := &http.Server{
		Handler:           withConsole(handler, c.console),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		// No ReadTimeout or WriteTimeout: uploads and streams are long.
		// Bodies have a deadline that moves with a minimum rate
		// (httpapi.Options.BodyReadTimeout, MinBodyRate), and each stream
		// write its own (StreamWriteTimeout).
	}
	fmt.Fprintf(stdout, "Serving on http://%s (OpenAI base URL http://%s/v1)\n", ln.Addr(), ln.Addr())
	err = serve(ctx, hs, ln, c.grace, stdout)
	for _, exit := range c.exits {
		exit()
	}
	return err
}

// errShuttingDown cancels the requests still running when the grace
// period of a shutdown ends.
var errShuttingDown = errors.New("the server is shutting down")

// serve serves on ln until ctx ends, then shuts down: running requests
// get grace to finish, then their contexts are cancelled, and a request
// whose handler returns without having answered gets 503. It returns nil
// once every request has returned.
func serve(ctx context.Context, hs *http.Server, ln net.Listener, grace time.Duration, stdout io.Writer) error {
	base, cancelRequests := context.WithCancelCause(context.Background())
	defer cancelRequests(nil)
	hs.BaseContext = func(net.Listener) context.Context { return base }
	hs.Handler = answerOnShutdown(hs.Handler, base)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintf(stdout, "Shutting down: waiting for running requests (up to %v)\n", grace)
	cancelLate := time.AfterFunc(grace, func() { cancelRequests(errShuttingDown) })
	defer cancelLate.Stop()
	// Cancelled handlers return at once; the extra time is theirs to do so.
	sctx, cancel := context.WithTimeout(context.Background(), grace+10*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// answerOnShutdown answers 503 for a request that a shutdown cancelled
// before its handler wrote anything (the API's handlers return silently
// when their context ends, as they do for a client that has gone).
func answerOnShutdown(h http.Handler, base context.Context) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &tracked{ResponseWriter: w}
		h.ServeHTTP(tw, r)
		if !tw.wrote && context.Cause(base) == errShuttingDown {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "5")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"the server is shutting down and cancelled this request; send it again","type":"server_error","param":null,"code":"shutting_down"}}`+"\n")
		}
	})
}

// tracked notes whether a handler has begun its answer.
type tracked struct {
	http.ResponseWriter
	wrote bool
}

func (t *tracked) WriteHeader(code int) {
	t.wrote = true
	t.ResponseWriter.WriteHeader(code)
}

func (t *tracked) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines).
func (t *tracked) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// withConsole serves the web console at / beside api when on; the API's
// own paths, and every non-GET request, still go to api.
func withConsole(api http.Handler, on bool) http.Handler {
	if !on {
		return api
	}
	ui, err := console.New(nil)
	if err != nil { // only if the embedded assets are broken: a build bug
		panic(err)
	}
	return ui.Beside(api)
}
