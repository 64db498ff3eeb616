package console

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, hdr ...string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		base string
		ok   bool
	}{
		{"", true}, {"/api", true}, {"/", true}, {"http://localhost:8080", true}, {"https://neuro.example/base", true},
		{"api", false}, {"//evil.example", false}, {"ftp://x", false}, {"http://", false}, {"javascript:alert(1)", false},
	} {
		err := (&Options{APIBase: c.base}).Validate()
		if (err == nil) != c.ok {
			t.Errorf("APIBase %q: err = %v, want ok %v", c.base, err, c.ok)
		}
		if _, err := New(&Options{APIBase: c.base}); (err == nil) != c.ok {
			t.Errorf("New with APIBase %q: err = %v", c.base, err)
		}
	}
}

func TestPage(t *testing.T) {
	h, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	res := get(t, h, "GET", "/")
	page := body(t, res)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self';", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if !strings.Contains(page, `name="neuro-api-base" content=""`) {
		t.Error("the page has no API base")
	}
	// The stable hooks of API.md, "The console".
	for _, id := range []string{"api-key", "chat-input", "chat-send", "chat-output", "model-select", "activity-raster",
		"telemetry-chart", "digit-canvas", "digit-run", "digit-prediction"} {
		if !strings.Contains(page, `data-testid="`+id+`"`) {
			t.Errorf("no data-testid %q on the page", id)
		}
	}
}

func TestAPIBase(t *testing.T) {
	h, err := New(&Options{APIBase: "https://api.example/neuro/"})
	if err != nil {
		t.Fatal(err)
	}
	res := get(t, h, "GET", "/")
	if page := body(t, res); !strings.Contains(page, `content="https://api.example/neuro"`) {
		t.Error("APIBase is not on the page, without its trailing slash")
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'self' https://api.example;") {
		t.Errorf("CSP %q does not allow the API's origin", csp)
	}
	h, _ = New(&Options{APIBase: `/a"><script>`})
	if page := body(t, get(t, h, "GET", "/")); strings.Contains(page, `"><script>`) {
		t.Error("APIBase is not escaped")
	}
}

// Every file the page and the modules name is served, and nothing names
// a place outside the server.
func TestAssetsSelfContained(t *testing.T) {
	h, _ := New(nil)
	page := body(t, get(t, h, "GET", "/"))
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(page, -1)
	imports := regexp.MustCompile(`from '\./([^']+)'`)
	external := regexp.MustCompile(`(?i)https?://|//[a-z0-9.-]+\.[a-z]{2,}/|@import|url\(\s*['"]?(?:https?:)?//`)
	seen := 0
	for _, m := range refs {
		ref := m[1]
		if strings.HasPrefix(ref, "#") || strings.HasPrefix(ref, "data:") {
			continue
		}
		res := get(t, h, "GET", "/"+ref)
		if res.StatusCode != 200 {
			t.Errorf("the page names %s: %d", ref, res.StatusCode)
		}
		seen++
	}
	if seen < 4 {
		t.Errorf("only %d assets named on the page", seen)
	}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := static.ReadFile(p)
		text := string(b)
		if strings.HasSuffix(p, ".js") && !strings.Contains(p, "/vendor/") {
			for _, m := range imports.FindAllStringSubmatch(text, -1) {
				dir := p[len("static"):strings.LastIndex(p, "/")]
				if res := get(t, h, "GET", dir+"/"+m[1]); res.StatusCode != 200 {
					t.Errorf("%s imports %s: %d", p, m[1], res.StatusCode)
				}
			}
		}
		if strings.HasSuffix(p, "LICENSE") || strings.HasSuffix(p, "VERSION") {
			return nil
		}
		if strings.Contains(p, "/vendor/") {
			// The library's own header comment names its home page; its
			// code must not load anything.
			text = regexp.MustCompile(`/\*![^*]*\*/`).ReplaceAllString(text, "")
		}
		if loc := external.FindStringIndex(text); loc != nil {
			t.Errorf("%s names something outside the server: %q", p, text[max(0, loc[0]-20):min(len(text), loc[1]+40)])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCaching(t *testing.T) {
	h, _ := New(nil)
	res := get(t, h, "GET", "/assets/js/app.js")
	plain := body(t, res)
	etag := res.Header.Get("ETag")
	if res.StatusCode != 200 || etag == "" || res.Header.Get("Cache-Control") != "no-cache" ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") || res.Header.Get("Content-Encoding") != "" {
		t.Fatalf("app.js: %d %v", res.StatusCode, res.Header)
	}
	res = get(t, h, "GET", "/assets/js/app.js", "Accept-Encoding", "br, gzip;q=0.8")
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("no gzip for Accept-Encoding gzip: %v", res.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader([]byte(body(t, res))))
	if err != nil {
		t.Fatal(err)
	}
	if unz, _ := io.ReadAll(zr); string(unz) != plain {
		t.Error("the gzip body is not the file")
	}
	if res := get(t, h, "GET", "/assets/js/app.js", "Accept-Encoding", "gzip;q=0"); res.Header.Get("Content-Encoding") != "" {
		t.Error("gzip sent to a client that refuses it")
	}
	if res := get(t, h, "GET", "/assets/js/app.js", "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", res.StatusCode)
	}
	if res := get(t, h, "HEAD", "/"); res.StatusCode != 200 || body(t, res) != "" || res.Header.Get("Content-Length") == "" {
		t.Errorf("HEAD /: %d", res.StatusCode)
	}
}

func TestRoutes(t *testing.T) {
	h, _ := New(nil)
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) })
	both := h.Beside(api)
	for _, c := range []struct {
		method, path string
		want         int
	}{
		{"GET", "/", 200},
		{"HEAD", "/assets/console.css", 200},
		{"GET", "/assets/vendor/uplot/LICENSE", 200},
		{"GET", "/v1/models", 299},
		{"POST", "/", 299}, // not the console's: the API answers (its 404 or 405)
		{"GET", "/health", 299},
		{"GET", "/assets/nope.js", 299},
		{"GET", "/index.html", 299},
	} {
		if res := get(t, both, c.method, c.path); res.StatusCode != c.want {
			t.Errorf("Beside: %s %s = %d, want %d", c.method, c.path, res.StatusCode, c.want)
		}
	}
	if res := get(t, h, "GET", "/nope"); res.StatusCode != 404 {
		t.Errorf("GET /nope: %d", res.StatusCode)
	}
	if res := get(t, h, "POST", "/"); res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /: %d %q", res.StatusCode, res.Header.Get("Allow"))
	}
}

// The console's weight: what a first visit transfers, gzip-compressed.
func TestWeight(t *testing.T) {
	h, _ := New(nil)
	var raw, gz int
	for _, a := range h.assets {
		raw += len(a.body)
		if a.gz != nil {
			gz += len(a.gz)
		} else {
			gz += len(a.body)
		}
	}
	t.Logf("%d assets: %d bytes, %d gzip-compressed", len(h.assets), raw, gz)
	if gz > 150<<10 {
		t.Errorf("the console weighs %d bytes compressed; keep it under 150 KiB", gz)
	}
}
