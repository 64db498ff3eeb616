package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
)

//go:embed static
var static embed.FS

// Options configure a Handler. The zero value serves a console that calls
// the API on its own origin.
type Options struct {
	// APIBase is where the page sends API requests, without the /v1:
	// "" (the default) is the page's own origin; a path such as "/api"
	// or an http(s) URL, whose server must then allow the console's
	// origin through CORS (httpapi.Options).
	APIBase string
}

// Validate reports whether the options can be used.
func (o *Options) Validate() error {
	if o == nil || o.APIBase == "" {
		return nil
	}
	if strings.HasPrefix(o.APIBase, "/") && !strings.HasPrefix(o.APIBase, "//") {
		return nil
	}
	u, err := url.Parse(o.APIBase)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("console: APIBase %q is not a path starting with / or an http(s) URL", o.APIBase)
	}
	return nil
}

// Handler serves the console. It holds every asset in memory, compressed
// once at New; it is safe for concurrent use.
type Handler struct {
	assets map[string]*asset // by URL path: "/" and "/assets/..."
}

type asset struct {
	body, gz []byte // gz is nil where compression does not pay
	ctype    string
	etag     string
	csp      string // set on the page only
}

// New returns a Handler; nil opts means the zero Options.
func New(opts *Options) (*Handler, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{assets: map[string]*asset{}}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "static/")
		switch {
		case rel == "index.html":
			body = bytes.Replace(body, []byte(`name="neuro-api-base" content=""`),
				[]byte(`name="neuro-api-base" content="`+html.EscapeString(strings.TrimSuffix(o.APIBase, "/"))+`"`), 1)
			h.assets["/"] = newAsset(body, "text/html; charset=utf-8", csp(o.APIBase))
		case strings.HasPrefix(rel, "assets/"):
			h.assets["/"+rel] = newAsset(body, contentType(rel), "")
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("console: reading the embedded assets: %w", err)
	}
	if h.assets["/"] == nil {
		return nil, errors.New("console: index.html is missing from the embedded assets")
	}
	return h, nil
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case "", ".txt":
		return "text/plain; charset=utf-8"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// csp allows the page its own origin and the API's, nothing else.
func csp(apiBase string) string {
	connect := "'self'"
	if u, err := url.Parse(apiBase); err == nil && u.Host != "" {
		connect += " " + u.Scheme + "://" + u.Host
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src " + connect +
		"; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

func newAsset(body []byte, ctype, policy string) *asset {
	sum := sha256.Sum256(body)
	a := &asset{body: body, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, csp: policy}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(body)
	zw.Close()
	if buf.Len() < len(body)*9/10 {
		a.gz = buf.Bytes()
	}
	return a
}

// Owns reports whether r is a request for the console: a GET or HEAD of
// "/" or of one of its assets.
func (h *Handler) Owns(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	_, ok := h.assets[r.URL.Path]
	return ok
}

// Beside returns a handler that serves the console's requests (see Owns)
// and passes every other request, the API's, to api unchanged.
func (h *Handler) Beside(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.Owns(r) {
			h.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := h.assets[r.URL.Path]
	if a == nil {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.ctype)
	hd.Set("ETag", a.etag)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Add("Vary", "Accept-Encoding")
	if a.csp != "" {
		hd.Set("Content-Security-Policy", a.csp)
		hd.Set("X-Frame-Options", "DENY")
	}
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if a.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body = a.gz
		hd.Set("Content-Encoding", "gzip")
	}
	hd.Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}

func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			return strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0"
		}
	}
	return false
}
