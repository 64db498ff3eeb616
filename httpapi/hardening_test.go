package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/runtime"
)

// rawRequest writes head and then body (slowly, when trickle is set) on a
// fresh connection to srv, and returns the response and how long it took.
func rawRequest(t *testing.T, srv *httptest.Server, head, body string, trickle time.Duration) (*http.Response, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	start := time.Now()
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	go func() {
		for i := 0; i < len(body); i++ {
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
			time.Sleep(trickle)
		}
	}()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	resp.Body.Close()
	return resp, time.Since(start)
}

// A body trickled a byte at a time is cut off once it falls behind the
// minimum rate: 408 and a closed connection, after about
// BodyReadTimeout, not after the client gives up.
func TestSlowBodyIsCutOff(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), &Options{BodyReadTimeout: 200 * time.Millisecond, MinBodyRate: 1000})
	srv := httptest.NewServer(s)
	defer srv.Close()
	head := "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + keyAlice +
		"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
	resp, took := rawRequest(t, srv, head, strings.Repeat(" ", 100000), 50*time.Millisecond)
	if resp.StatusCode != 408 || !resp.Close {
		t.Fatalf("status %d, close %v", resp.StatusCode, resp.Close)
	}
	if took > 2*time.Second {
		t.Fatalf("held for %v", took)
	}
	t.Logf("a body trickled at 20 bytes/s was cut off after %v", took.Round(time.Millisecond))
}

// An unauthenticated request is answered without reading its body, and
// its connection is closed rather than drained.
func TestUnauthenticatedBodyIsNotRead(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), nil)
	srv := httptest.NewServer(s)
	defer srv.Close()
	head := "POST /v1/compile HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer wrong\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n"
	resp, took := rawRequest(t, srv, head, "{", time.Second)
	if resp.StatusCode != 401 || !resp.Close || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("status %d, close %v, WWW-Authenticate %q", resp.StatusCode, resp.Close, resp.Header.Get("WWW-Authenticate"))
	}
	if took > time.Second {
		t.Fatalf("answered after %v", took)
	}
	w := do(s, "GET", "/v1/models", "", nil)
	if w.Header().Get("WWW-Authenticate") == "" {
		t.Error("a 401 without WWW-Authenticate")
	}
}

func TestUncleanPathsAnswerJSON(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), nil)
	for _, p := range []string{"/v1//models", "/v1/./models", "/v1/x/../models", "//health"} {
		w := do(s, "GET", p, keyAlice, nil)
		if w.Code != 404 || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%s: %d %s %s", p, w.Code, w.Header().Get("Content-Type"), w.Body)
		}
	}
}

// A hundred slow connections are all cut off, and no goroutine is left
// behind holding one.
func TestManySlowBodies(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), &Options{BodyReadTimeout: 100 * time.Millisecond, MinBodyRate: 1000, ConcurrentRequests: -1})
	srv := httptest.NewServer(s)
	defer srv.Close()
	before := goroutines()
	done := make(chan int, 100)
	for i := 0; i < 100; i++ {
		go func() {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				done <- 0
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: 1000\r\n\r\n{", keyAlice)
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				done <- 0
				return
			}
			done <- resp.StatusCode
		}()
	}
	for i := 0; i < 100; i++ {
		if code := <-done; code != 408 {
			t.Fatalf("connection %d: status %d", i, code)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for goroutines() > before+5 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := goroutines(); after > before+5 {
		t.Errorf("goroutines %d before, %d after", before, after)
	}
}

func goroutines() int { return goruntime.NumGoroutine() }

// Compiles beyond the server-wide budget wait, then get 503 with
// Retry-After rather than piling up.
func TestCompileBudgetRefusesWithRetryAfter(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), &Options{CompileConcurrency: 1, CompileWait: 50 * time.Millisecond})
	if !s.compiles.TryAcquire(1) {
		t.Fatal("no slot")
	}
	w := do(s, "POST", "/v1/compile", keyAlice, compileBody("onnx", readFixture(t, "compile/testdata/digits/mlp.onnx"), ""))
	checkError(t, w, 503, typeServer, "overloaded", "")
	if w.Header().Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	s.compiles.Release(1)
	if w := do(s, "POST", "/v1/compile", keyAlice, compileBody("onnx", readFixture(t, "compile/testdata/digits/mlp.onnx"), "")); w.Code != 200 {
		t.Fatalf("after the slot is free: %d %s", w.Code, w.Body)
	}
}

// Sixteen concurrent compiles of a deflated bomb (a small upload whose
// entries declare 64 MiB each) are refused from the zip directory: the
// heap never holds what they declare.
func TestConcurrentBombsStayBounded(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), &Options{MaxCompileBytes: 4 << 20, ConcurrentRequests: -1})
	bomb := compileBody("pytorch", zipBomb(t, 64<<20), "")
	goruntime.GC()
	var before goruntime.MemStats
	goruntime.ReadMemStats(&before)
	stop := make(chan struct{})
	sampled := make(chan uint64)
	go func() {
		var m goruntime.MemStats
		high := uint64(0)
		for {
			select {
			case <-stop:
				sampled <- high
				return
			case <-time.After(time.Millisecond):
				goruntime.ReadMemStats(&m)
				high = max(high, m.HeapInuse)
			}
		}
	}()
	codes := make(chan int, 16)
	for i := 0; i < 16; i++ {
		go func() { codes <- do(s, "POST", "/v1/compile", keyAlice, bomb).Code }()
	}
	for i := 0; i < 16; i++ {
		if c := <-codes; c != 400 {
			t.Errorf("a bomb got %d", c)
		}
	}
	close(stop)
	high := <-sampled
	grew := int64(high) - int64(before.HeapInuse)
	t.Logf("16 concurrent 64 MiB bombs: heap in use grew by %d MiB at most", grew>>20)
	if grew > 64<<20 {
		t.Errorf("heap grew by %d MiB", grew>>20)
	}
}

// A request for a model that does not exist is counted as an error, but
// names no by_model entry.
func TestUnknownModelMakesNoTelemetryEntry(t *testing.T) {
	s := newTestServer(t, newTestRuntime(t, nil, 2), nil)
	checkError(t, do(s, "POST", "/v1/chat/completions", keyAlice, `{"model":"gpt-4","messages":[{"role":"user","content":"hi"}]}`), 404, typeNotFound, "model_not_found", "")
	var tel struct {
		Requests struct{ Errors int }
		ByModel  map[string]any `json:"by_model"`
	}
	json.Unmarshal(do(s, "GET", "/v1/telemetry", keyAlice, nil).Body.Bytes(), &tel)
	if tel.Requests.Errors != 1 || tel.ByModel["gpt-4"] != nil {
		t.Errorf("telemetry %+v", tel)
	}
}

// A deployment id that is not a safe path segment is 400 naming id: "."
// and ".." could never be addressed, yet would count against the quota
// and be stored as files.
func TestUnsafeDeploymentIDs(t *testing.T) {
	s := newTestServer(t, newTestRuntime(t, nil, 2), nil)
	for _, id := range []string{".", "..", ".x", "a/b", "a%2Fb", strings.Repeat("a", 65)} {
		w := do(s, "POST", "/v1/deployments", keyAlice, `{"model":"neuro-1-lite","id":"`+id+`"}`)
		checkError(t, w, 400, typeInvalidRequest, "invalid_value", "id")
	}
	w := do(s, "GET", "/v1/deployments", keyAlice, nil)
	if strings.Contains(w.Body.String(), `"id":"."`) || strings.Contains(w.Body.String(), `"id":".."`) {
		t.Errorf("listed: %s", w.Body)
	}
}

// Two Authorization headers are refused, in either order: the server
// does not guess which one the caller meant.
func TestTwoAuthorizationHeaders(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), nil)
	for _, keys := range [][]string{{keyAlice, "wrong"}, {"wrong", keyAlice}, {keyAlice, keyAlice}} {
		req := httptest.NewRequest("GET", "/v1/models", nil)
		for _, k := range keys {
			req.Header.Add("Authorization", "Bearer "+k)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != 401 || !strings.Contains(w.Body.String(), "more than one Authorization header") {
			t.Errorf("headers %q: %d %s", keys, w.Code, w.Body)
		}
	}
	if w := do(s, "GET", "/v1/models", keyAlice, nil); w.Code != 200 {
		t.Errorf("one header: %d %s", w.Code, w.Body)
	}
}

// A network's name is shown as it is (listings, the console): control
// characters and bidirectional overrides are refused, naming the field.
func TestCompileNamesAreShowable(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), nil)
	onnx := readFixture(t, "compile/testdata/digits/mlp.onnx")
	for _, name := range []string{`a\u0000b`, `two\nlines`, `abc\u202Egnp.exe`, `\u2066isolated\u2069`, `bell\u0007`, strings.Repeat("x", 257)} {
		w := do(s, "POST", "/v1/compile", keyAlice, compileBody("onnx", onnx, `,"name":"`+name+`"`))
		if w.Code != 400 || !strings.Contains(w.Body.String(), `"param":"name"`) {
			t.Errorf("name %s: %d %s", name, w.Code, w.Body)
		}
	}
	if w := do(s, "POST", "/v1/compile", keyAlice, compileBody("onnx", onnx, `,"name":"chiffres – ünïcode ✓"`)); w.Code != 200 {
		t.Errorf("a plain Unicode name: %d %s", w.Code, w.Body)
	}
}

// slowUpload starts a compile upload that declares declared bytes and
// sends only sent of them; closing the writer ends it.
func slowUpload(t *testing.T, url, key string, declared int64, sent []byte) (*io.PipeWriter, <-chan *http.Response) {
	t.Helper()
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", url+"/v1/compile", pr)
	req.ContentLength = declared
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	done := make(chan *http.Response, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			resp = nil
		}
		done <- resp
	}()
	pw.Write(sent) // then nothing, for now
	return pw, done
}

// One key's slow uploads hold at most its share of the compile memory:
// its upload past the share is 429 at once, and another key's compile
// goes through meanwhile.
func TestCompileMemoryShareOfOneKey(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), &Options{CompileMemory: 2 << 20, CompileMemoryPerKey: 512 << 10, CompileWait: 5 * time.Second})
	srv := httptest.NewServer(s)
	defer srv.Close()
	head := []byte(`{"model_format":"onnx","model_file":"`)
	first, firstDone := slowUpload(t, srv.URL, keyAlice, 400<<10, append(head, bytes.Repeat([]byte("A"), 300<<10)...))
	defer first.Close()
	time.Sleep(100 * time.Millisecond) // the first upload holds what its 300 KiB needed
	second, secondDone := slowUpload(t, srv.URL, keyAlice, 400<<10, head)
	defer second.Close()
	select {
	case resp := <-secondDone:
		if resp == nil || resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("alice's second upload over her share: %v", resp)
		}
		resp.Body.Close()
	case <-time.After(2 * time.Second):
		t.Fatal("alice's second upload over her share was not refused at once")
	}
	if w := do(s, "POST", "/v1/compile", keyBob, compileBody("onnx", readFixture(t, "compile/testdata/digits/mlp.onnx"), "")); w.Code != 200 {
		t.Fatalf("bob's compile while alice uploads: %d %s", w.Code, w.Body)
	}
	first.Close()
	if resp := <-firstDone; resp != nil {
		resp.Body.Close()
	}
}

// Uploads hold compile memory for the bytes they have sent, not for the
// length they declare: five stalled uploads that declare the whole
// budget between them leave room for another key's compile, even where
// one key may hold all of it.
func TestCompileMemoryHeldAsBytesArrive(t *testing.T) {
	s := newTestServer(t, runtime.New(nil), &Options{CompileMemory: 2 << 20, CompileMemoryPerKey: 2 << 20, CompileWait: 3 * time.Second})
	srv := httptest.NewServer(s)
	defer srv.Close()
	for range 5 {
		pw, done := slowUpload(t, srv.URL, keyAlice, 1<<20, []byte(`{"model_format":"onnx","model_file":"`))
		defer func() {
			pw.Close()
			if resp := <-done; resp != nil {
				resp.Body.Close()
			}
		}()
	}
	time.Sleep(100 * time.Millisecond) // the five uploads have begun
	if w := do(s, "POST", "/v1/compile", keyBob, compileBody("onnx", readFixture(t, "compile/testdata/digits/mlp.onnx"), "")); w.Code != 200 {
		t.Fatalf("bob's compile while alice's uploads stall: %d %s", w.Code, w.Body)
	}
}
