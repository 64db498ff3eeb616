// Command soak runs the server under sustained and hostile load, in
// process, and reports whether its resources stay flat and its
// accounting stays exact (bench/RESULTS.md, "Soak" and "Hostile"):
//
//	go run ./bench/soak -hostile                 # the hostile cases, about a minute
//	go run ./bench/soak -minutes 10 -clients 64  # the soak
//
// The soak runs -clients streaming chat clients for -minutes against the
// built-in models (-mock for mock devices), a tenth of them dropping
// their stream part-way, beside a compile and a telemetry read every
// second. A request refused with 503 and Retry-After (a full queue: 64
// clients are more than the deployments' batches) is counted apart and
// retried a second later. Every 10 s it prints the heap, goroutines and open
// descriptors; at the end it checks that the callers' telemetry totals
// equal Prometheus' request counters and that every request was
// answered.
//
// -hostile measures: the heap and RSS while 16 compiles of a deflated
// bomb run at once; how long a body trickled at 1 byte a second is held;
// goroutines and descriptors before and after 100 slow connections; the
// small requests that ask for much memory or CPU (requests.go), each
// against the server as it ships and with its limit lifted; and how long
// a graceful shutdown takes with a slow connection open.
package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/neuro-go/neuro/compile/onnx"
	_ "github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/httpapi/prom"
	"github.com/neuro-go/neuro/models"
	_ "github.com/neuro-go/neuro/models/all" // the neuro-1 language models
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	_ "github.com/neuro-go/neuro/runtime/hal/loihi"
)

const key = "sk-soak"

func main() {
	minutes := flag.Float64("minutes", 10, "how long the soak runs")
	clients := flag.Int("clients", 64, "streaming clients")
	mock := flag.Bool("mock", false, "mock devices (nothing runs)")
	hostile := flag.Bool("hostile", false, "run the hostile cases instead of the soak")
	flag.Parse()
	srv, err := start(*mock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
	defer srv.close()
	if *hostile {
		err = hostileCases(srv)
	} else {
		err = soak(srv, time.Duration(*minutes*float64(time.Minute)), *clients)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

type server struct {
	rt  *runtime.Runtime
	hs  *http.Server
	url string
	ln  net.Listener
}

func start(mock bool) (*server, error) {
	rt := runtime.New(nil)
	if err := models.Register(rt); err != nil {
		return nil, err
	}
	if _, err := models.Deploy(context.Background(), rt, &models.DeployOptions{Mock: mock}); err != nil {
		return nil, err
	}
	h, err := httpapi.New(rt, &httpapi.Options{Keys: map[string]string{key: "soak", otherKey: "other"}, Metrics: prom.New(),
		RequestsPerMinute: -1, ConcurrentRequests: -1, BodyReadTimeout: 2 * time.Second, MinBodyRate: 1024})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return &server{rt: rt, hs: hs, url: "http://" + ln.Addr().String(), ln: ln}, nil
}

func (s *server) close() {
	s.hs.Close()
	s.rt.Close()
}

// vitals are the process's resources now.
type vitals struct {
	HeapMiB    float64 `json:"heap_mib"`
	RSSMiB     float64 `json:"rss_mib"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	Goroutines int     `json:"goroutines"`
	FDs        int     `json:"fds"`
}

func measure() vitals {
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	v := vitals{HeapMiB: float64(m.HeapInuse) / (1 << 20), Goroutines: goruntime.NumGoroutine()}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && (f[0] == "VmRSS:" || f[0] == "VmHWM:") {
				kb, _ := strconv.ParseFloat(f[1], 64)
				if f[0] == "VmRSS:" {
					v.RSSMiB = kb / 1024
				} else {
					v.PeakRSSMiB = kb / 1024
				}
			}
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		v.FDs = len(fds)
	}
	return v
}

func report(what string, v any) {
	b, _ := json.Marshal(map[string]any{what: v})
	fmt.Println(string(b))
}

func post(url, body string) (*http.Response, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

func hostileCases(s *server) error {
	goruntime.GC()
	idle := measure()
	report("idle", idle)

	// 16 compiles of a 1 MB upload whose one entry inflates to 380 MB.
	bomb := bombPT(380 << 20)
	body := `{"model_format":"pytorch","model_file":"` + base64.StdEncoding.EncodeToString(bomb) + `"}`
	var wg sync.WaitGroup
	codes := make([]int, 16)
	stop := make(chan struct{})
	var peakHeap atomic.Int64
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				var m goruntime.MemStats
				goruntime.ReadMemStats(&m)
				if h := int64(m.HeapInuse); h > peakHeap.Load() {
					peakHeap.Store(h)
				}
			}
		}
	}()
	t0 := time.Now()
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if resp, err := post(s.url+"/v1/compile", body); err == nil {
				codes[i] = resp.StatusCode
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	close(stop)
	after := measure()
	report("hostile_compiles", map[string]any{"uploads": 16, "upload_bytes": len(bomb), "declared_inflated_bytes": 380 << 20,
		"status": codes, "seconds": time.Since(t0).Seconds(), "peak_heap_over_idle_mib": float64(peakHeap.Load())/(1<<20) - idle.HeapMiB,
		"peak_rss_mib": after.PeakRSSMiB, "idle_rss_mib": idle.RSSMiB})

	// One body trickled at a byte a second.
	t0 = time.Now()
	code, err := slowBody(s.url, time.Second)
	if err != nil {
		return err
	}
	report("slow_body", map[string]any{"status": code, "held_seconds": time.Since(t0).Seconds()})

	// 100 slow connections at once.
	goruntime.GC()
	before := measure()
	wg = sync.WaitGroup{}
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slowBody(s.url, time.Second)
		}()
	}
	time.Sleep(500 * time.Millisecond)
	during := measure()
	wg.Wait()
	time.Sleep(1500 * time.Millisecond) // the clients' writers notice the closed connections
	goruntime.GC()
	report("slow_connections", map[string]any{"connections": 100, "before": before, "during": during, "after": measure()})

	// Small requests that ask for much memory or CPU.
	if err := costlyRequests(s); err != nil {
		return err
	}

	// Shutdown with one slow connection open.
	go slowBody(s.url, 10*time.Second)
	time.Sleep(200 * time.Millisecond)
	t0 = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = s.hs.Shutdown(ctx)
	report("shutdown", map[string]any{"seconds": time.Since(t0).Seconds(), "error": fmt.Sprint(err)})
	return nil
}

// slowBody sends a compile whose body comes a byte per interval, and
// returns the status the server answers with.
func slowBody(url string, every time.Duration) (int, error) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/compile HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", key)
	go func() {
		for i := 0; i < 100000; i++ {
			if _, err := conn.Write([]byte{' '}); err != nil {
				return
			}
			time.Sleep(every)
		}
	}()
	conn.SetReadDeadline(time.Now().Add(5 * time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// bombPT is a .pt-shaped zip whose data.pkl declares and inflates to n
// zero bytes.
func bombPT(n int) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "archive/data.pkl", Method: zip.Deflate})
	zero := make([]byte, 1<<20)
	for i := 0; i < n>>20; i++ {
		w.Write(zero)
	}
	zw.Close()
	return buf.Bytes()
}

func soak(s *server, d time.Duration, clients int) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	onnx, err := os.ReadFile("compile/testdata/digits/mlp.onnx")
	if err != nil {
		return fmt.Errorf("run from the repository root: %w", err)
	}
	var sent, answered, dropped, refused, failed atomic.Int64
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			for ctx.Err() == nil {
				drop := rng.IntN(10) == 0
				sent.Add(1)
				switch err := stream(ctx, s.url, models.Names()[rng.IntN(3)], drop); {
				case errors.Is(err, errRefused):
					// Backpressure: the deployment's queue is full, and the
					// answer says when to come back.
					refused.Add(1)
					time.Sleep(time.Second)
				case drop:
					dropped.Add(1)
				case err == nil:
					answered.Add(1)
				case ctx.Err() != nil:
					sent.Add(-1) // cut by the end of the soak, not answered
				default:
					failed.Add(1)
					fmt.Fprintln(os.Stderr, "stream:", err)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // a compile and a telemetry read every second
		defer wg.Done()
		body := `{"model_format":"onnx","model_file":"` + base64.StdEncoding.EncodeToString(onnx) + `"}`
		for ctx.Err() == nil {
			if resp, err := post(s.url+"/v1/compile", body); err == nil {
				var n struct{ ID string }
				json.NewDecoder(resp.Body).Decode(&n)
				resp.Body.Close()
				req, _ := http.NewRequest("DELETE", s.url+"/v1/models/"+n.ID, nil)
				req.Header.Set("Authorization", "Bearer "+key)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}
			get(s.url + "/v1/telemetry")
			time.Sleep(time.Second)
		}
	}()
	t0 := time.Now()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			report("vitals", map[string]any{"seconds": int(time.Since(t0).Seconds()), "streams": sent.Load(), "vitals": measure()})
		}
	}
	wg.Wait()
	time.Sleep(time.Second) // the last requests reach telemetry
	var tel struct {
		Requests struct {
			Total      int            `json:"total"`
			ByEndpoint map[string]int `json:"by_endpoint"`
		} `json:"requests"`
	}
	if err := json.Unmarshal(get(s.url+"/v1/telemetry"), &tel); err != nil {
		return err
	}
	metrics := string(get(s.url + "/metrics"))
	promChat := 0.0
	for _, line := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(line, `neuro_http_requests_total{code=`) && strings.Contains(line, `endpoint="/v1/chat/completions"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			promChat += v
		}
	}
	report("totals", map[string]any{"streams_sent": sent.Load(), "answered": answered.Load(), "dropped_by_client": dropped.Load(),
		"refused_503_with_retry_after": refused.Load(), "failed": failed.Load(), "telemetry_chat_requests": tel.Requests.ByEndpoint["/v1/chat/completions"], "prometheus_chat_requests": promChat,
		"agree": float64(tel.Requests.ByEndpoint["/v1/chat/completions"]) == promChat})
	goruntime.GC()
	report("end", measure())
	return nil
}

func get(url string) []byte {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b
}

var errRefused = errors.New("refused with 503 and Retry-After")

// stream runs one streamed chat; with drop it reads two events and hangs
// up.
func stream(ctx context.Context, url, model string, drop bool) error {
	body := `{"model":"` + model + `","messages":[{"role":"user","content":"Tell me a story"}],"max_tokens":48,"stream":true}`
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == 503 && resp.Header.Get("Retry-After") != "" {
		return errRefused
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	events := 0
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		events++
		if drop && events == 2 {
			return nil
		}
		if line == "data: [DONE]" {
			return nil
		}
		if strings.Contains(line, `"error"`) {
			return fmt.Errorf("error event: %s", line)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return fmt.Errorf("the stream ended without [DONE]")
}
