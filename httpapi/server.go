package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// Server serves API.md over a runtime. It is an http.Handler; mount it on
// any mux, under a prefix with http.StripPrefix.
type Server struct {
	be      Backend
	opts    Options
	log     *slog.Logger
	handler http.Handler
	lim     *limiter
	// compiles and compileBytes bound compiles server-wide: how many run,
	// and the bytes their requests hold.
	compiles, compileBytes *semaphore.Weighted
	// compileHeld is the bytes of compile requests each key has in
	// flight (Options.CompileMemoryPerKey).
	compileMu   sync.Mutex
	compileHeld map[string]int64
	// runBytes bounds the bytes runs hold server-wide (Options.RunMemory).
	runBytes *semaphore.Weighted
}

// New returns a Server over be, usually a *runtime.Runtime.
func New(be Backend, opts *Options) (*Server, error) {
	if be == nil {
		return nil, fmt.Errorf("httpapi: New: nil backend")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	s := &Server{be: be, opts: o, log: o.Logger, lim: newLimiter(o.RequestsPerMinute, o.ConcurrentRequests, o.Now),
		compiles: semaphore.NewWeighted(int64(o.CompileConcurrency)), compileBytes: semaphore.NewWeighted(o.CompileMemory),
		runBytes: semaphore.NewWeighted(o.RunMemory), compileHeld: map[string]int64{}}
	if o.RateShare != nil {
		s.lim.admitted = o.RateShare.Admitted
	}
	s.handler = s.routes()
	return s, nil
}

// SpentElsewhere counts n requests that principal made on another server
// against its rate limit here (Options.RateShare).
func (s *Server) SpentElsewhere(principal string, n int) { s.lim.spent(principal, n) }

// endpoint names, as they appear in telemetry's by_endpoint and in the
// metrics' endpoint label.
const (
	epHealth         = "/health"
	epMetrics        = "/metrics"
	epModels         = "/v1/models"
	epModel          = "/v1/models/{model_id}"
	epDeployments    = "/v1/deployments"
	epDeployment     = "/v1/deployments/{deployment_id}"
	epDeploymentChat = "/v1/deployments/{deployment_id}/chat/completions"
	epDeploymentRun  = "/v1/deployments/{deployment_id}/run"
	epChat           = "/v1/chat/completions"
	epCompletions    = "/v1/completions"
	epCompile        = "/v1/compile"
	epTelemetry      = "/v1/telemetry"
	epResponses      = "/v1/responses"
	epResponse       = "/v1/responses/{response_id}"
	epUnknown        = "unknown"
)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	// route serves path for each method; any other method gets 405 in
	// OpenAI's shape (the mux's own 405 is plain text).
	route := func(path string, auth bool, methods ...any) {
		var allow []string
		for k := 0; k < len(methods); k += 2 {
			method, h := methods[k].(string), methods[k+1].(func(http.ResponseWriter, *http.Request))
			var hh http.Handler = http.HandlerFunc(h)
			if auth {
				hh = s.authenticate(hh)
			}
			mux.Handle(method+" "+patternPath(path), s.endpoint(path, hh))
			allow = append(allow, method)
		}
		mux.Handle(patternPath(path), s.endpoint(path, http.HandlerFunc(methodNotAllowed(strings.Join(allow, ", ")))))
	}
	route(epHealth, false, "GET", s.handleHealth)
	if s.opts.Metrics != nil {
		route(epMetrics, false, "GET", s.opts.Metrics.Handler().ServeHTTP)
	}
	route(epModels, true, "GET", s.handleModels)
	route(epModel, true, "GET", s.handleModel, "DELETE", s.handleDeleteModel)
	route(epDeployments, true, "GET", s.handleDeployments, "POST", s.handleCreateDeployment)
	route(epDeployment, true, "GET", s.handleDeployment, "DELETE", s.handleDeleteDeployment)
	route(epDeploymentChat, true, "POST", s.handleDeploymentChat)
	route(epDeploymentRun, true, "POST", s.handleRun)
	route(epChat, true, "POST", s.handleChat)
	route(epCompletions, true, "POST", s.handleCompletions)
	route(epCompile, true, "POST", s.handleCompile)
	route(epTelemetry, true, "GET", s.handleTelemetry)
	route(epResponses, true, "POST", s.handleCreateResponse)
	route(epResponse, true, "GET", s.handleGetResponse, "DELETE", s.handleDeleteResponse)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, notFound("not_found", "no route %s %s", r.Method, r.URL.Path))
	})
	return chain(mux, s.requestID, s.recoverPanics, s.cors, uncleanPaths)
}

// uncleanPaths answers 404 in the API's shape for a path that is not
// clean (/v1//models, /v1/./models): the mux would redirect it with an
// HTML body, which no API client expects.
func uncleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.Contains(p, "//") || strings.Contains(p, "/./") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/.") || strings.HasSuffix(p, "/..") {
			writeError(w, notFound("not_found", "no route %s %s (the path is not clean)", r.Method, p))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// patternPath turns the endpoint names' {model_id} into mux wildcards.
func patternPath(p string) string {
	p = strings.ReplaceAll(p, "{model_id}", "{id}")
	return strings.ReplaceAll(p, "{deployment_id}", "{id}")
}

func methodNotAllowed(allow string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		e := *errMethod
		e.Message = "method " + r.Method + " is not allowed on " + r.URL.Path + "; use " + allow
		writeError(w, &e)
	}
}

// chain applies middleware so that the first listed runs first.
func chain(h http.Handler, mw ...func(http.Handler) http.Handler) http.Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Close waits for nothing and releases nothing today; it exists so that
// embedding programs can treat the server like the runtime. The runtime
// is the embedding program's to close.
func (s *Server) Close() error { return nil }

// reqInfo is what the middleware learns about a request, carried in its
// context (one allocation per request).
type reqInfo struct {
	id        string
	start     time.Time
	endpoint  string
	principal string
	recorded  bool // telemetry already has this request (a generation)
	sw        *statusWriter
}

type ctxKey struct{}

func info(r *http.Request) *reqInfo {
	ri, _ := r.Context().Value(ctxKey{}).(*reqInfo)
	if ri == nil {
		ri = &reqInfo{start: time.Now()}
	}
	return ri
}

// statusWriter remembers the status. It unwraps for
// http.ResponseController, so flushing and deadlines reach the connection.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// requestID gives every response an x-request-id (the client's own when it
// sent a sensible one), and counts the request in the metrics.
func (s *Server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newID("req_")
		}
		w.Header().Set("X-Request-Id", id)
		sw := &statusWriter{ResponseWriter: w}
		ri := &reqInfo{id: id, start: s.opts.Now(), endpoint: epUnknown, sw: sw}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), ctxKey{}, ri)))
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		if s.opts.Metrics != nil {
			s.opts.Metrics.Request(ri.endpoint, sw.status, s.opts.Now().Sub(ri.start))
		}
	})
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// recoverPanics turns a panic into a 500 internal_error (when nothing was
// written yet) and keeps the server serving.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			ri := info(r)
			s.log.Error("panic serving request", "request_id", ri.id, "endpoint", ri.endpoint, "panic", fmt.Sprint(v))
			if ri.principal != "" && !ri.recorded {
				ri.recorded = true
				s.be.Telemetry().RecordRequest(ri.principal, ri.endpoint, true, s.opts.Now().Sub(ri.start))
			}
			switch {
			case ri.sw != nil && ri.sw.status == 0:
				writeError(w, errInternal)
			case strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream"):
				// The stream has started: end it with an error event.
				w.Write(appendErrorEvent(nil, errInternal))
			default:
				// A JSON body has started: cut the connection, so that the
				// client sees a truncated response rather than a corrupt one.
				panic(http.ErrAbortHandler)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// cors answers preflights and marks responses for the allowed origins.
func (s *Server) cors(next http.Handler) http.Handler {
	if len(s.opts.AllowedOrigins) == 0 {
		return next
	}
	any := false
	allowed := map[string]bool{}
	for _, o := range s.opts.AllowedOrigins {
		if o == "*" {
			any = true
		}
		allowed[strings.TrimSuffix(o, "/")] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		ok := origin != "" && (any || allowed[origin])
		h := w.Header()
		if origin != "" {
			h.Add("Vary", "Origin")
		}
		if ok {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", "X-Request-Id, Retry-After")
		}
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if ok {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
				h.Set("Access-Control-Max-Age", "600")
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// endpoint names the request's endpoint and, for an authenticated
// request that no generation recorded, counts it in the caller's
// telemetry.
func (s *Server) endpoint(name string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri := info(r)
		ri.endpoint = name
		next.ServeHTTP(w, r)
		if ri.principal != "" && !ri.recorded {
			ri.recorded = true
			status := http.StatusOK
			if ri.sw != nil && ri.sw.status != 0 {
				status = ri.sw.status
			}
			s.be.Telemetry().RecordRequest(ri.principal, name, status >= 400, s.opts.Now().Sub(ri.start))
		}
	})
}

// authenticate checks the bearer key (one Authorization header, no key
// in the query string), then the caller's rate and
// concurrency limits and the request's Content-Type.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hasQueryKey(r) {
			refuse(w, r, errQueryKey)
			return
		}
		if len(r.Header.Values("Authorization")) > 1 {
			refuse(w, r, errAuthTwice) // which one is meant? Not the first by default
			return
		}
		key, ok := bearer(r)
		if !ok {
			refuse(w, r, errAuth)
			return
		}
		principal, ok := s.opts.KeyStore.Principal(key)
		if !ok {
			refuse(w, r, errAuth)
			return
		}
		ri := info(r)
		ri.principal = principal
		if e := s.lim.acquire(principal); e != nil {
			writeError(w, e)
			return
		}
		defer s.lim.release(principal)
		if r.Method == http.MethodPost {
			if e := checkContentType(r); e != nil {
				writeError(w, e)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// refuse answers a request that failed authentication. Its body is never
// read: the response asks for the connection to close, so that the
// server does not drain what an unauthenticated client sends (or
// trickles).
func refuse(w http.ResponseWriter, r *http.Request, e *Error) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="neuro"`)
	if r.ContentLength != 0 {
		abandonBody(w)
	}
	writeError(w, e)
}

// abandonBody makes the server close the connection after the response
// instead of reading the rest of the request body to reuse it: net/http
// drains up to 256 KiB of an unread body, which a client that trickles it
// could stretch without end.
func abandonBody(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	http.NewResponseController(w).SetReadDeadline(time.Now())
}

func checkContentType(r *http.Request) *Error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return &Error{Status: http.StatusUnsupportedMediaType, Type: typeInvalidRequest, Code: "unsupported_media_type",
		Message: "Content-Type " + strconv.Quote(ct) + " is not supported; send application/json"}
}

// newID returns prefix and 24 random characters, for response and request
// ids.
func newID(prefix string) string {
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	b := make([]byte, len(prefix)+24)
	copy(b, prefix)
	var x uint64
	for i := len(prefix); i < len(b); i++ {
		if (i-len(prefix))%10 == 0 { // 62^10 < 2^64: ten characters per draw
			x = rand.Uint64()
		}
		b[i] = alphabet[x%62]
		x /= 62
	}
	return string(b)
}

func itoa(n int) string { return strconv.Itoa(n) }
