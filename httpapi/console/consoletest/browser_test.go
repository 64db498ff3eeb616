package consoletest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	_ "github.com/neuro-go/neuro/compile/onnx" // the fixture the suite compiles
	_ "github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/httpapi/console"
	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all" // the neuro-1 language models
	neuro "github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	_ "github.com/neuro-go/neuro/runtime/hal/loihi"
)

const apiKey = "sk-console-test"

// browserPath is Debian's Chromium unless NEURO_CHROMIUM names another.
func browserPath() string {
	if p := os.Getenv("NEURO_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// newServer serves the console beside the API over a real runtime with the
// built-in models deployed on their real devices (cpu and the loihi
// emulator): the chat raster needs a model that really spikes. rec sees
// every request to the API.
func newServer(t *testing.T, rec *recorder) *httptest.Server {
	t.Helper()
	rt := neuro.New(nil)
	t.Cleanup(func() { rt.Close() })
	if err := models.Register(rt); err != nil {
		t.Fatal(err)
	}
	if _, err := models.Deploy(context.Background(), rt, nil); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(rt, &httpapi.Options{Keys: map[string]string{apiKey: "key-console"}})
	if err != nil {
		t.Fatal(err)
	}
	ui, err := console.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(ui.Beside(rec.wrap(api)))
	t.Cleanup(ts.Close)
	return ts
}

// recorder keeps the bodies of the requests to POST /v1/responses.
type recorder struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func (rc *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/responses" {
			b, _ := io.ReadAll(r.Body)
			var m map[string]any
			json.Unmarshal(b, &m)
			rc.mu.Lock()
			rc.bodies = append(rc.bodies, m)
			rc.mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		next.ServeHTTP(w, r)
	})
}

// take returns the bodies recorded since the last take.
func (rc *recorder) take() []map[string]any {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	b := rc.bodies
	rc.bodies = nil
	return b
}

// watcher collects what the browser reports: errors on its console,
// uncaught exceptions, requests to anywhere but the server, and the bytes
// transferred.
type watcher struct {
	origin string
	mu     sync.Mutex
	errs   []string
	bytes  float64
	reqs   int
}

func (w *watcher) add(format string, args ...any) {
	w.mu.Lock()
	w.errs = append(w.errs, fmt.Sprintf(format, args...))
	w.mu.Unlock()
}

func (w *watcher) listen(ctx context.Context) func(ev any) {
	return func(ev any) {
		switch ev := ev.(type) {
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError {
				w.add("console %s: %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			}
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type == cdpruntime.ConsoleAPICalledTypeError || ev.Type == cdpruntime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, a.Description+string(a.Value))
				}
				w.add("console.%s: %s", ev.Type, strings.Join(parts, " "))
			}
		case *cdpruntime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			w.add("uncaught: %s at %s:%d", msg, d.URL, d.LineNumber+1)
		case *network.EventRequestWillBeSent:
			u := ev.Request.URL
			if !strings.HasPrefix(u, w.origin+"/") && u != w.origin && !strings.HasPrefix(u, "data:") {
				w.add("request outside the server: %s", u)
			}
			w.mu.Lock()
			w.reqs++
			w.mu.Unlock()
		case *network.EventLoadingFinished:
			w.mu.Lock()
			w.bytes += ev.EncodedDataLength
			w.mu.Unlock()
		case *page.EventJavascriptDialogOpening:
			// confirm() before a delete: accept, off the reading goroutine.
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}
}

// check fails t for every error collected since the last check, except
// those that contain one of the expected strings.
func (w *watcher) check(t *testing.T, expected ...string) {
	t.Helper()
	w.mu.Lock()
	errs := w.errs
	w.errs = nil
	w.mu.Unlock()
next:
	for _, e := range errs {
		for _, x := range expected {
			if strings.Contains(e, x) {
				continue next
			}
		}
		t.Errorf("browser: %s", e)
	}
}

func (w *watcher) traffic() (bytes float64, reqs int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bytes, w.reqs
}

func (w *watcher) resetTraffic() {
	w.mu.Lock()
	w.bytes, w.reqs = 0, 0
	w.mu.Unlock()
}

// must runs a step of the suite and stops the suite when it fails: each
// step needs the state the one before left.
func must(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, f) {
		t.FailNow()
	}
}

func tid(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }

// js evaluates expr and returns its value as T.
func js[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// wait polls expr until it is truthy.
func wait(t *testing.T, ctx context.Context, what, expr string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(timeout))); err != nil {
		shot(t, ctx, "failed-"+strings.ReplaceAll(what, " ", "-"))
		if watching != nil {
			watching.check(t)
		}
		t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// setValue sets a form field's value and fires its input and change
// events, as a person choosing or typing would.
func setValue(sel, value string) chromedp.Action[chromedp.Void] {
	q, _ := json.Marshal(sel)
	v, _ := json.Marshal(value)
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const el = document.querySelector(%s); el.value = %s;
  el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true})); })()`, q, v))
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

var (
	artifacts string
	watching  *watcher // the suite's, for the errors behind a timeout
)

// shot keeps a screenshot of the whole page as name.png.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	p := filepath.Join(artifacts, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	t.Logf("screenshot: %s", p)
}

func TestConsole(t *testing.T) {
	bin := browserPath()
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("browser suite skipped: no Chromium at %s (install Debian's: apt-get install -y chromium; or set NEURO_CHROMIUM)", bin)
	}
	if testing.Short() {
		t.Skip("browser suite skipped in -short mode")
	}
	artifacts = os.Getenv("NEURO_CONSOLE_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	} else if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	ts := newServer(t, rec)

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoFirstRun,
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("mute-audio", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	w := &watcher{origin: ts.URL}
	watching = w
	if err := chromedp.Listen(ctx, w.listen(ctx)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdpruntime.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	// Every step below has its own deadline; the whole suite has this one.
	ctx, cancelRun := context.WithTimeout(ctx, 4*time.Minute)
	defer cancelRun()
	do(t, ctx, chromedp.EmulateViewport(1280, 800))

	figures := map[string]any{}

	must(t, "key", func(t *testing.T) {
		w.resetTraffic()
		do(t, ctx, chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(tid("api-key")))
		bytes, reqs := w.traffic()
		figures["first_load_bytes"], figures["first_load_requests"] = bytes, reqs
		shot(t, ctx, "01-key")
		// A wrong key is refused with the API's message.
		do(t, ctx, chromedp.SendKeys(tid("api-key"), "sk-wrong\r"))
		wait(t, ctx, "the wrong-key message", `!document.getElementById('login-error').hidden`, 10*time.Second)
		msg := js[string](t, ctx, `document.getElementById('login-error').textContent`)
		if !strings.Contains(msg, "not accepted") {
			t.Errorf("wrong key: message %q", msg)
		}
		shot(t, ctx, "02-wrong-key")
		w.check(t, "401") // the refused request is logged by the browser
		do(t, ctx, setValue(`[data-testid="api-key"]`, ""), chromedp.SendKeys(tid("api-key"), apiKey+"\r"))
		wait(t, ctx, "the chat page", `!document.getElementById('page-chat').hidden && document.querySelectorAll('[data-testid=model-select] option').length > 0`, 10*time.Second)
		if k := js[string](t, ctx, `sessionStorage.getItem('neuro.apiKey')`); k != apiKey {
			t.Errorf("sessionStorage key = %q", k)
		}
		if n := js[int](t, ctx, `localStorage.length`); n != 0 {
			t.Errorf("localStorage holds %d items; the key must stay in sessionStorage", n)
		}
		w.check(t)
	})

	must(t, "load", func(t *testing.T) {
		// From navigation to a chat that can be used, with the key already
		// in the session (a reload), as a user sees it: cold (no cache)
		// and warm (the browser revalidates by ETag); the median of 5.
		for _, cold := range []bool{true, false} {
			if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: cold}); err != nil {
				t.Fatal(err)
			}
			var times []float64
			var bytes float64
			var reqs int
			for range 5 {
				w.resetTraffic()
				do(t, ctx, chromedp.Reload())
				wait(t, ctx, "an interactive chat", `document.querySelectorAll('[data-testid=model-select] option').length > 0 && (window.__chatReady ??= performance.now())`, 10*time.Second)
				times = append(times, js[float64](t, ctx, `window.__chatReady`))
				bytes, reqs = w.traffic()
			}
			slices.Sort(times)
			name := map[bool]string{true: "cold", false: "warm"}[cold]
			figures[name+"_load_to_chat_ms"] = times[len(times)/2]
			figures[name+"_bytes"], figures[name+"_requests"] = bytes, reqs
			t.Logf("%s reload to an interactive chat: median %.0f ms of %v; %d requests, %.0f bytes", name, times[len(times)/2], times, reqs, bytes)
		}
		w.check(t)
	})

	must(t, "chat", func(t *testing.T) {
		do(t, ctx, setValue(`[data-testid="model-select"]`, "model:neuro-1-lite"),
			setValue("#chat-max-tokens", "24"),
			chromedp.SendKeys(tid("chat-input"), "Once upon a time\r"))
		wait(t, ctx, "the streamed answer's cost", `document.querySelector('[data-testid=chat-output] .msg.assistant .cost')`, 60*time.Second)
		answer := js[string](t, ctx, `document.querySelector('[data-testid=chat-output] .msg.assistant .text').textContent`)
		if strings.TrimSpace(answer) == "" {
			t.Error("the answer is empty")
		}
		// The raster draws, and sets its data attributes, on the next
		// animation frame, which a busy headless browser may run a moment
		// after the answer's cost is shown.
		wait(t, ctx, "the raster's first draw", `+document.querySelector('[data-testid=activity-raster]').dataset.columns > 0`, 5*time.Second)
		cols := js[int](t, ctx, `+document.querySelector('[data-testid=activity-raster]').dataset.columns`)
		spikes := js[int](t, ctx, `+document.querySelector('[data-testid=activity-raster]').dataset.spikes`)
		if spikes > 0 {
			wait(t, ctx, "the raster's pixels", litPixels+" > 0", 5*time.Second)
		}
		lit := js[int](t, ctx, litPixels)
		if cols == 0 || spikes == 0 || lit == 0 {
			t.Errorf("the raster did not fill: %d columns, %d spikes, %d pixels lit", cols, spikes, lit)
		}
		cost := js[string](t, ctx, `document.querySelector('[data-testid=chat-output] .msg.assistant .cost').textContent`)
		for _, want := range []string{"tokens", "timesteps", "spikes", "µJ"} {
			if !strings.Contains(cost, want) {
				t.Errorf("the answer's cost %q does not give %s", cost, want)
			}
		}
		t.Logf("answer %q; raster %d tokens, %d spikes; cost %s", answer, cols, spikes, cost)
		first := rec.take()
		if len(first) != 1 || first[0]["input"] != "Once upon a time" || first[0]["previous_response_id"] != nil ||
			first[0]["store"] != true || first[0]["stream"] != true {
			t.Fatalf("the first turn's requests: %v", first)
		}
		w.check(t)
	})

	must(t, "conversation", func(t *testing.T) {
		// The second turn continues from the first's stored state: only
		// the new message is sent.
		turn(t, ctx, "And then?", 2)
		r := rec.take()
		prev, _ := r[0]["previous_response_id"].(string)
		if len(r) != 1 || prev == "" || prev != responseID(t, ctx, 1) || r[0]["input"] != "And then?" {
			t.Fatalf("the second turn's requests: %v", r)
		}
		cost := js[string](t, ctx, `document.querySelectorAll('[data-testid=chat-cost]')[1].textContent`)
		m := regexp.MustCompile(`resumed (\d+) of (\d+) tokens`).FindStringSubmatch(cost)
		if m == nil {
			t.Fatalf("the second answer's cost %q does not say what was resumed", cost)
		}
		if resumed, _ := strconv.Atoi(m[1]); resumed == 0 {
			t.Errorf("nothing resumed: %q", cost)
		}
		// The state is gone (deleted here, as an expired one is): the
		// console starts over with the whole conversation.
		id := responseID(t, ctx, 2)
		if code := apiCall(t, "DELETE", ts.URL+"/v1/responses/"+id); code != http.StatusOK {
			t.Fatalf("DELETE %s: %d", id, code)
		}
		turn(t, ctx, "Who was there?", 3)
		r = rec.take()
		if len(r) != 2 || r[0]["previous_response_id"] != id || r[1]["previous_response_id"] != nil {
			t.Fatalf("after a deleted state: %v", r)
		}
		if items, _ := r[1]["input"].([]any); len(items) != 5 {
			t.Fatalf("the conversation sent again has %d items, want 5: %v", len(items), r[1]["input"])
		}
		// Another model starts over too; this one is a deployment on the
		// neuromorphic emulator, the message sent with the button.
		do(t, ctx, setValue(`[data-testid="model-select"]`, "deployment:neuro-1-lite-loihi"),
			chromedp.SendKeys(tid("chat-input"), "and then"), chromedp.Click(tid("chat-send")))
		wait(t, ctx, "the fourth answer", `document.querySelectorAll('[data-testid=chat-cost]').length == 4`, 60*time.Second)
		r = rec.take()
		if items, _ := r[0]["input"].([]any); len(r) != 1 || r[0]["model"] != "neuro-1-lite-loihi" || r[0]["previous_response_id"] != nil || len(items) != 7 {
			t.Fatalf("after switching model: %v", r)
		}
		if n := js[int](t, ctx, `document.querySelectorAll('[data-testid=chat-output] .msg.failed').length`); n != 0 {
			t.Errorf("%d answers failed", n)
		}
		shot(t, ctx, "03-chat")
		// New chat forgets the conversation; a system prompt goes with
		// every turn, as instructions.
		do(t, ctx, chromedp.Click(chromedp.ID("chat-new")), setValue("#chat-instructions", "Answer briefly."))
		turn(t, ctx, "Hello", 1)
		turn(t, ctx, "Bye", 2)
		r = rec.take()
		if len(r) != 2 || r[0]["input"] != "Hello" || r[0]["previous_response_id"] != nil ||
			r[1]["input"] != "Bye" || r[1]["previous_response_id"] != responseID(t, ctx, 1) ||
			r[0]["instructions"] != "Answer briefly." || r[1]["instructions"] != "Answer briefly." {
			t.Fatalf("a new chat with a system prompt: %v", r)
		}
		do(t, ctx, setValue("#chat-instructions", ""))
		w.check(t, "404") // the deleted state's refusal is logged by the browser
	})

	must(t, "digits", func(t *testing.T) {
		do(t, ctx, chromedp.Navigate(ts.URL+"/#/networks"))
		wait(t, ctx, "the digits devices", `document.querySelectorAll('#digit-device option').length >= 2`, 10*time.Second)
		do(t, ctx, chromedp.ScrollIntoView(tid("digit-canvas")))
		for _, c := range []struct{ device, digit string }{{"neuro-1-digits-cpu", "0"}, {"neuro-1-digits-loihi", "0"}} {
			do(t, ctx, chromedp.Click(chromedp.ID("digit-clear")))
			drawZero(t, ctx)
			do(t, ctx, setValue("#digit-device", c.device), chromedp.Click(tid("digit-run")))
			wait(t, ctx, "the prediction", `document.querySelector('[data-testid=digit-prediction]').dataset.state == 'done'`, 20*time.Second)
			got := js[string](t, ctx, `document.querySelector('[data-testid=digit-prediction]').textContent`)
			inputs := js[[]int](t, ctx, `Array.from(document.getElementById('digit-preview').getContext('2d').getImageData(0,0,128,128).data.filter((_, i) => i % 64 == 0 && Math.floor(i/4/128) % 16 == 0).slice(0, 64))`)
			if got != c.digit {
				t.Errorf("%s: drew a %s, predicted %q (preview %v)", c.device, c.digit, got, inputs)
			}
			if bars := js[int](t, ctx, `document.querySelectorAll('#digit-counts .bar-row').length`); bars != 10 {
				t.Errorf("%s: %d output bars, want 10", c.device, bars)
			}
			do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid=digit-prediction]').dataset.state = ''`))
		}
		shot(t, ctx, "04-digits")
		// The keyboard draws too: a vertical bar painted cell by cell, then R runs it.
		do(t, ctx, chromedp.Focus(tid("digit-canvas")), chromedp.SendKeys(tid("digit-canvas"), "c"))
		keys := ""
		for range 6 {
			keys += " " + kb.ArrowDown
		}
		do(t, ctx, chromedp.SendKeys(tid("digit-canvas"), kb.ArrowUp+kb.ArrowUp+kb.ArrowUp+keys+"r"))
		wait(t, ctx, "a prediction from the keyboard", `document.querySelector('[data-testid=digit-prediction]').dataset.state == 'done'`, 20*time.Second)
		if js[bool](t, ctx, `document.getElementById('digit-cursor').hidden`) {
			t.Error("the keyboard cursor is not shown on the pad")
		}
		w.check(t)
	})

	var netDeployment string
	must(t, "compile", func(t *testing.T) {
		// The file goes into the input through a DataTransfer, as a drop
		// would put it there: Chromium's file chooser cannot read a file
		// under /tmp, where CI may have cloned the repository.
		fixture, err := os.ReadFile("../../../compile/testdata/digits/mlp.onnx")
		if err != nil {
			t.Fatal(err)
		}
		if !js[bool](t, ctx, `(() => {
			const bin = atob("`+base64.StdEncoding.EncodeToString(fixture)+`");
			const bytes = new Uint8Array(bin.length);
			for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
			const dt = new DataTransfer();
			dt.items.add(new File([bytes], "mlp.onnx"));
			const input = document.getElementById('compile-file');
			input.files = dt.files;
			input.dispatchEvent(new Event('change', { bubbles: true }));
			return input.files.length === 1;
		})()`) {
			t.Fatal("the file did not reach the input")
		}
		if f := js[string](t, ctx, `document.getElementById('compile-format').value`); f != "onnx" {
			t.Errorf("format guessed from .onnx: %q", f)
		}
		js[bool](t, ctx, `(document.getElementById('compile-submit').click(), true)`) // by script, as the deploy button below
		wait(t, ctx, "the compile report", `document.querySelector('#compile-report h3') || !document.getElementById('compile-error').hidden`, 60*time.Second)
		if e := js[string](t, ctx, `document.getElementById('compile-error').textContent`); e != "" {
			t.Fatalf("compile: %s", e)
		}
		report := js[string](t, ctx, `document.getElementById('compile-report').textContent`)
		for _, want := range []string{"Neurons", "Synapses", "Layers", "Fit per device", "cpu"} {
			if !strings.Contains(report, want) {
				t.Errorf("the report does not show %s: %s", want, report)
			}
		}
		// A click by script: a coordinate click can land on the sticky
		// header when the page has scrolled the button under it.
		js[bool](t, ctx, `(document.querySelector('#compile-report .row button').click(), true)`)
		wait(t, ctx, "the deployment", `/Deployment \S+ is/.test(document.querySelector('#compile-report .row .hint').textContent) || !document.getElementById('compile-error').hidden`, 30*time.Second)
		if e := js[string](t, ctx, `document.getElementById('compile-error').textContent`); e != "" {
			t.Fatalf("deploy: %s", e)
		}
		netDeployment = js[string](t, ctx, `document.getElementById('run-deployment').value`)
		shot(t, ctx, "05-compile")
		wait(t, ctx, "the deployment ready", `/\(net-.* on cpu\)$/.test(document.getElementById('run-deployment').selectedOptions[0]?.textContent || '')`, 30*time.Second)
		do(t, ctx, chromedp.Click(chromedp.CSS("#run-form button[type=submit]")))
		wait(t, ctx, "the run's result", `document.querySelector('#run-result table') || !document.getElementById('run-error').hidden`, 30*time.Second)
		if e := js[string](t, ctx, `document.getElementById('run-error').textContent`); e != "" {
			t.Fatalf("run: %s", e)
		}
		if n := js[int](t, ctx, `document.querySelectorAll('#mynets tbody tr code').length`); n < 1 {
			t.Error("the compiled network is not listed under Your networks")
		}
		shot(t, ctx, "06-run")
		w.check(t)
	})

	must(t, "deployments", func(t *testing.T) {
		do(t, ctx, chromedp.Navigate(ts.URL+"/#/deployments"))
		wait(t, ctx, "the deployments", `document.querySelectorAll('#deployments tbody tr').length >= 6 && document.querySelectorAll('#deploy-model option').length > 0`, 10*time.Second)
		if n := js[int](t, ctx, `document.querySelectorAll('#deployments tbody tr[data-id="neuro-1-lite-cpu"] button').length`); n != 0 {
			t.Error("a system deployment offers Delete")
		}
		do(t, ctx, setValue("#deploy-model", "neuro-1-digits"), setValue("#deploy-device", "cpu"), setValue("#deploy-precision", "int8"),
			chromedp.SendKeys(chromedp.ID("deploy-id"), "console-digits\r"))
		wait(t, ctx, "the new deployment ready", `document.querySelector('#deployments tr[data-id="console-digits"] .status.ready')`, 30*time.Second)
		if dev := js[string](t, ctx, `document.querySelector('#deployments tr[data-id="console-digits"] td:nth-of-type(2)').textContent`); !strings.Contains(dev, "int8 simulator") {
			t.Errorf("the int8 deployment's device reads %q", dev)
		}
		// A taken id: the API's message, shown as is.
		do(t, ctx, chromedp.SendKeys(chromedp.ID("deploy-id"), "console-digits\r"))
		wait(t, ctx, "the conflict message", `!document.getElementById('deploy-error').hidden`, 10*time.Second)
		if msg := js[string](t, ctx, `document.getElementById('deploy-error').textContent`); !strings.Contains(msg, "console-digits") {
			t.Errorf("conflict message %q", msg)
		}
		w.check(t, "409")
		shot(t, ctx, "07-deployments")
		for _, id := range []string{"console-digits", netDeployment} {
			if id == "" {
				continue
			}
			do(t, ctx, chromedp.Click(chromedp.CSS(`#deployments tr[data-id="`+id+`"] button.danger`)))
			wait(t, ctx, "the deletion of "+id, `!document.querySelector('#deployments tr[data-id="`+id+`"]')`, 15*time.Second)
		}
		w.check(t)
	})

	must(t, "telemetry", func(t *testing.T) {
		do(t, ctx, chromedp.Navigate(ts.URL+"/#/telemetry"))
		wait(t, ctx, "three telemetry samples", `+document.querySelector('[data-testid=telemetry-chart]').dataset.points >= 3`, 20*time.Second)
		if n := js[int](t, ctx, `document.querySelectorAll('[data-testid=telemetry-chart] .uplot canvas').length`); n < 4 {
			t.Errorf("%d charts drawn, want 4", n)
		}
		cards := js[string](t, ctx, `document.getElementById('telemetry-cards').textContent`)
		for _, want := range []string{"Latency", "Time to first token", "Tokens", "Spikes", "Energy"} {
			if !strings.Contains(cards, want) {
				t.Errorf("telemetry cards lack %s: %s", want, cards)
			}
		}
		// uPlot draws on an animation frame, which a busy browser may run
		// after the samples' count is set: wait for the line itself.
		wait(t, ctx, "the latency chart's line", litChart+" > 0", 10*time.Second)
		shot(t, ctx, "08-telemetry")
		do(t, ctx, setValue("#telemetry-window", "1m"))
		wait(t, ctx, "a sample of the 1-minute window", `+document.querySelector('[data-testid=telemetry-chart]').dataset.points >= 1`, 10*time.Second)
		w.check(t)
	})

	must(t, "phone", func(t *testing.T) {
		do(t, ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
		for _, p := range []string{"chat", "networks", "deployments", "telemetry"} {
			do(t, ctx, chromedp.Navigate(ts.URL+"/#/"+p))
			wait(t, ctx, p, `!document.getElementById('page-`+p+`').hidden`, 10*time.Second)
			do(t, ctx, chromedp.Sleep(300*time.Millisecond))
			if over := js[int](t, ctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 1 {
				wide := js[[]string](t, ctx, `[...document.querySelectorAll('#page-`+p+` *')].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest('.table-wrap *')).map(e => e.tagName + '#' + e.id + '.' + e.className).slice(0, 8)`)
				t.Errorf("%s: %d px wider than a 390 px screen: %v", p, over, wide)
			}
			if p == "chat" || p == "networks" {
				shot(t, ctx, "09-phone-"+p)
			}
		}
		do(t, ctx, chromedp.EmulateViewport(1280, 800))
		w.check(t)
	})

	must(t, "signout", func(t *testing.T) {
		do(t, ctx, chromedp.Click(chromedp.ID("signout")))
		wait(t, ctx, "the key prompt", `!document.getElementById('page-login').hidden && !sessionStorage.getItem('neuro.apiKey')`, 5*time.Second)
		w.check(t)
	})

	figures["note"] = "written by TestConsole; see bench/RESULTS.md, Console"
	b, _ := json.MarshalIndent(figures, "", "  ")
	os.WriteFile(filepath.Join(artifacts, "console-figures.json"), b, 0o644)
	t.Logf("figures: %s", b)
}

// turn sends a message with Enter and waits for the nth answer's text and
// cost.
func turn(t *testing.T, ctx context.Context, text string, n int) {
	t.Helper()
	do(t, ctx, chromedp.SendKeys(tid("chat-input"), text+"\r"))
	wait(t, ctx, fmt.Sprintf("answer %d", n), fmt.Sprintf(`document.querySelectorAll('[data-testid=chat-cost]').length == %d`, n), 60*time.Second)
	if a := js[string](t, ctx, fmt.Sprintf(`document.querySelectorAll('[data-testid=chat-output] .msg.assistant .text')[%d].textContent`, n-1)); strings.TrimSpace(a) == "" {
		t.Errorf("answer %d is empty", n)
	}
}

// responseID is the id of the stored response behind the nth answer
// shown.
func responseID(t *testing.T, ctx context.Context, n int) string {
	t.Helper()
	return js[string](t, ctx, fmt.Sprintf(`document.querySelectorAll('[data-testid=chat-output] .msg.assistant')[%d].dataset.responseId || ''`, n-1))
}

func apiCall(t *testing.T, method, url string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// litPixels counts the raster's pixels in any layer's colour.
const litPixels = `(() => {
  const c = document.querySelector('[data-testid=activity-raster]');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  // A lit pixel is saturated, as the layers' colours are, even blended
  // with the background where a neuron's row is under a pixel high; the
  // background and the labels are near grey.
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (Math.max(d[i], d[i+1], d[i+2]) - Math.min(d[i], d[i+1], d[i+2]) > 40) n++;
  return n;
})()`

// litChart counts the pixels of the first chart's first series colour.
const litChart = `(() => {
  const c = document.querySelector('[data-testid=telemetry-chart] .uplot canvas');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - 0x4f) < 24 && Math.abs(d[i+1] - 0x8c) < 24 && d[i+2] > 0xd0) n++;
  return n;
})()`

// drawZero draws a 0 on the pad with the mouse: an ellipse, as a person
// would, pressed, moved and released.
func drawZero(t *testing.T, ctx context.Context) {
	t.Helper()
	r := js[[]float64](t, ctx, `(() => { const b = document.querySelector('[data-testid=digit-canvas]').getBoundingClientRect(); return [b.left, b.top, b.width, b.height]; })()`)
	cx, cy, rx, ry := r[0]+r[2]/2, r[1]+r[3]/2, r[2]*0.22, r[3]*0.36
	held := func(p *input.DispatchMouseEventParams) { p.Buttons = 1; p.Button = input.MouseButtonLeft }
	steps := []chromedp.Action[chromedp.Void]{chromedp.MouseEvent(chromedp.MousePressed, cx, cy-ry, held, chromedp.ClickCount(1))}
	for k := 1; k <= 40; k++ {
		a := 2 * math.Pi * float64(k) / 40
		steps = append(steps, chromedp.MouseEvent(chromedp.MouseMoved, cx+rx*math.Sin(a), cy-ry*math.Cos(a), held))
	}
	steps = append(steps, chromedp.MouseEvent(chromedp.MouseReleased, cx, cy-ry, held, chromedp.ClickCount(1)))
	do(t, ctx, steps...)
}
