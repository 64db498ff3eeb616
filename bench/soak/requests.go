package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/runtime"
)

// convLeaky is a Conv2d(1, 4, 3) and an snnTorch Leaky as torch.save
// writes their state_dict (testdata/make_conv.py): 2 KB whose declared
// input shape (options.layers) sets the network's size.
//
//go:embed testdata/conv_leaky.pt
var convLeaky []byte

const otherKey = "sk-soak-other"

// costly are the attacks in which a small request asks for a large
// amount of memory or CPU. Each runs twice in one process: against the
// server as it ships ("limits") and with the limit that stops it lifted
// ("lifted": what the request buys without it). Per run: the statuses,
// wall and CPU seconds, and the peak RSS over the run's start.
func costlyRequests(s *server) error {
	lifted, err := httpapi.New(s.rt, &httpapi.Options{Keys: map[string]string{key: "soak", otherKey: "other"},
		RequestsPerMinute: -1, ConcurrentRequests: -1, MaxRunOutputValues: 1 << 40, MaxRunBodyBytes: 128 << 20,
		RunMemory: 1 << 40, MaxRunValues: 1 << 40, CompileMemory: 200 << 20, CompileMemoryPerKey: 200 << 20,
		BodyReadTimeout: 2 * time.Second, MinBodyRate: 1024})
	if err != nil {
		return err
	}
	liftedURL, stop := listen(lifted)
	defer stop()
	both := func(name string, limits, lift func() (map[string]any, error)) error {
		for _, c := range []struct {
			mode string
			f    func() (map[string]any, error)
		}{{"limits", limits}, {"lifted", lift}} {
			out, err := measured(c.f)
			if err != nil {
				return fmt.Errorf("%s (%s): %w", name, c.mode, err)
			}
			report(name+"_"+c.mode, out)
		}
		return nil
	}
	layers := func(h int) string {
		return fmt.Sprintf(`{"model_format":"pytorch","model_file":%q,"name":"conv%d","options":{"layers":[{"name":"0","kind":"conv2d","shape":[1,%d,%d]},{"name":"1","kind":"snntorch.leaky"}]}}`,
			base64.StdEncoding.EncodeToString(convLeaky), h, h, h)
	}

	// 1. A 2 KB convolution declaring a 768×768 input.
	err = both("conv_declared_768",
		func() (map[string]any, error) { return statusOf(post(s.url+"/v1/compile", layers(768))) },
		func() (map[string]any, error) {
			n, err := s.rt.Compile(context.Background(), &runtime.CompileRequest{Format: "pytorch", Data: convLeaky, Owner: "soak", Name: "conv768",
				Import: compile.ImportOptions{MaxValues: 1 << 40, Layers: []compile.LayerSpec{{Name: "0", Kind: "conv2d", Shape: []int{1, 768, 768}}, {Name: "1", Kind: "snntorch.leaky"}}}})
			if err != nil {
				// The program's own size limit refuses it in the end,
				// after the work.
				return map[string]any{"refused_after_the_work": err.Error()}, nil
			}
			defer s.rt.DeleteNetwork(n.ID, "soak")
			return map[string]any{"program_bytes": n.StoredBytes}, nil
		})
	if err != nil {
		return err
	}

	// The largest such network under the limit (330×330: 969,572 values
	// a sample), for the next attacks.
	var net struct {
		ID string `json:"id"`
	}
	if err := postJSON(s.url+"/v1/compile", layers(330), &net); err != nil {
		return err
	}
	deploy := func(url string, batch, replicas int) (map[string]any, error) {
		body := fmt.Sprintf(`{"model":%q,"max_batch_size":%d,"replicas":%d}`, net.ID, batch, replicas)
		resp, err := post(url+"/v1/deployments", body)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		var d struct {
			ID string `json:"id"`
		}
		json.NewDecoder(resp.Body).Decode(&d)
		if d.ID != "" {
			defer del(url + "/v1/deployments/" + d.ID)
		}
		return map[string]any{"status": resp.StatusCode}, nil
	}
	// 2. That network deployed with 256 slots and 4 replicas.
	q := s.rt.Quota()
	err = both("deployment_256x4",
		func() (map[string]any, error) { return deploy(s.url, 256, 4) },
		func() (map[string]any, error) {
			s.rt.SetQuota(runtime.Quota{DeploymentBytes: -1, ServerDeploymentBytes: -1})
			defer s.rt.SetQuota(q)
			return deploy(liftedURL, 256, 4)
		})
	if err != nil {
		return err
	}

	// 3. A 1 KB run of 32 empty samples on it: its answer holds every
	// output neuron's count and state.
	var dep struct {
		ID string `json:"id"`
	}
	if err := postJSON(s.url+"/v1/deployments", fmt.Sprintf(`{"model":%q,"max_batch_size":8}`, net.ID), &dep); err != nil {
		return err
	}
	defer del(s.url + "/v1/deployments/" + dep.ID)
	empty := `{"inputs":[` + strings.TrimSuffix(strings.Repeat(`{"events":[],"timesteps":1},`, 32), ",") + `]}`
	err = both("run_answer_32_empty",
		func() (map[string]any, error) { return statusOf(post(s.url+"/v1/deployments/"+dep.ID+"/run", empty)) },
		func() (map[string]any, error) {
			return statusOf(post(liftedURL+"/v1/deployments/"+dep.ID+"/run", empty))
		})
	if err != nil {
		return err
	}

	// 4. One sample of 60,000 events in descending step order, on the
	// digits classifier (64 inputs, 1,000 steps): the server's sort now,
	// and the insertion sort it replaced on the same events.
	events := make([][2]int, 60_000)
	for k := range events {
		events[k] = [2]int{999 - k*1000/len(events), k % 64}
	}
	eb, _ := json.Marshal(map[string]any{"inputs": []any{map[string]any{"events": events, "timesteps": 1000}}})
	err = both("events_60k_descending",
		func() (map[string]any, error) {
			return statusOf(post(s.url+"/v1/deployments/neuro-1-digits-cpu/run", string(eb)))
		},
		func() (map[string]any, error) {
			insertionSort(events)
			return map[string]any{"what": "the insertion sort alone, in process"}, nil
		})
	if err != nil {
		return err
	}

	// 5. One key trickles five compiles that declare 40 MiB each at 24
	// KB/s; another key's 2 KB compile, 3 s later. Lifted, the budget is
	// 200 MiB with no share per key, as one key could once fill it.
	lockout := func(url string) (map[string]any, error) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for range 5 {
			go trickle(ctx, url, 40<<20, 24<<10)
		}
		time.Sleep(3 * time.Second)
		t0 := time.Now()
		req, _ := http.NewRequest("POST", url+"/v1/compile", strings.NewReader(layers(16)))
		req.Header.Set("Authorization", "Bearer "+otherKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		var n struct {
			ID string `json:"id"`
		}
		json.NewDecoder(resp.Body).Decode(&n)
		resp.Body.Close()
		if n.ID != "" {
			s.rt.DeleteNetwork(n.ID, "other")
		}
		return map[string]any{"other_key_status": resp.StatusCode, "other_key_seconds": time.Since(t0).Seconds()}, nil
	}
	err = both("compile_lockout", func() (map[string]any, error) { return lockout(s.url) }, func() (map[string]any, error) { return lockout(liftedURL) })
	if err != nil {
		return err
	}

	// 6. 16 concurrent 30 MB run bodies from one key, on the digits
	// classifier: 256 samples of 900 steps × 64 inputs each.
	row := "[" + strings.TrimSuffix(strings.Repeat("0,", 64), ",") + "]"
	sample := "[" + strings.TrimSuffix(strings.Repeat(row+",", 900), ",") + "]"
	big := `{"inputs":[` + strings.TrimSuffix(strings.Repeat(sample+",", 256), ",") + `]}`
	bodies := func(url string) (map[string]any, error) {
		var wg sync.WaitGroup
		codes := make([]int, 16)
		for i := range codes {
			wg.Go(func() {
				if resp, err := post(url+"/v1/deployments/neuro-1-digits-cpu/run", big); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					codes[i] = resp.StatusCode
				}
			})
		}
		wg.Wait()
		return map[string]any{"body_bytes": len(big), "status": codes}, nil
	}
	return both("run_bodies_16x30MB", func() (map[string]any, error) { return bodies(s.url) }, func() (map[string]any, error) { return bodies(liftedURL) })
}

// measured runs f, adding its wall and CPU seconds and the peak RSS over
// its start.
func measured(f func() (map[string]any, error)) (map[string]any, error) {
	start := measure()
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
				if v := int64(measure().RSSMiB); v > peak.Load() {
					peak.Store(v)
				}
			}
		}
	}()
	cpu0, t0 := cpuSeconds(), time.Now()
	out, err := f()
	close(done)
	if err != nil {
		return nil, err
	}
	out["seconds"] = time.Since(t0).Seconds()
	out["cpu_seconds"] = cpuSeconds() - cpu0
	out["peak_rss_over_start_mib"] = max(float64(peak.Load())-start.RSSMiB, 0)
	return out, nil
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func statusOf(resp *http.Response, err error) (map[string]any, error) {
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	n, _ := io.Copy(io.Discard, resp.Body)
	return map[string]any{"status": resp.StatusCode, "answer_bytes": n}, nil
}

func postJSON(url, body string, out any) error {
	resp, err := post(url, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

func del(url string) {
	req, _ := http.NewRequest("DELETE", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

// listen serves h on a loopback port.
func listen(h http.Handler) (string, func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	hs := &http.Server{Handler: h}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String(), func() { hs.Close() }
}

// trickle sends a compile that declares size bytes and sends rate bytes
// a second until ctx ends.
func trickle(ctx context.Context, url string, size, rate int) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/compile HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", key, size)
	chunk := bytes.Repeat([]byte{' '}, rate/10)
	for ctx.Err() == nil {
		if _, err := conn.Write(chunk); err != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// insertionSort orders events by step as the run path once did: stable,
// quadratic in the events out of order.
func insertionSort(ev [][2]int) {
	for i := 1; i < len(ev); i++ {
		for j := i; j > 0 && ev[j][0] < ev[j-1][0]; j-- {
			ev[j], ev[j-1] = ev[j-1], ev[j]
		}
	}
}
