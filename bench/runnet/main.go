// Command runnet measures the run endpoint against snnTorch on the same
// network and inputs, in one run (bench/runnet/compare.sh runs both):
// snnTorch_run.py saves a keyword-spotting-sized snnTorch network
// (700-256-20, Leaky) and 64 samples of sparse input spikes, and times
// snnTorch; this program compiles the saved file through POST
// /v1/compile of a server in the same process, deploys it on cpu, checks
// that every sample's output spike counts equal snnTorch's, and times
// POST /v1/deployments/{id}/run at batch 1 (one sample per request, one
// request at a time) and at a full batch (64 samples per request), then
// the same through Runtime.Run in-process, and over REST again with the
// events in compact form (events_packed). -cpuprofile profiles all six.
//
//	go run ./bench/runnet -dir /tmp/runnet
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	_ "github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/httpapi/client"
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
)

// profile, when set, receives a CPU profile of the timed runs.
var profile *os.File

type snntorchResult struct {
	Library   string  `json:"library"`
	Threads   int     `json:"threads"`
	Timesteps int     `json:"timesteps"`
	Batch     int     `json:"batch"`
	Batch1    float64 `json:"samples_per_second_batch1"`
	FullBatch float64 `json:"samples_per_second_full_batch"`
	Counts    [][]int `json:"counts"`
}

func main() {
	dir := flag.String("dir", "/tmp/runnet", "the directory snntorch_run.py wrote")
	seconds := flag.Float64("seconds", 3, "how long to time each case")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed runs to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "runnet:", err)
			os.Exit(1)
		}
		defer f.Close()
		profile = f
	}
	if err := run(context.Background(), *dir, time.Duration(*seconds*float64(time.Second))); err != nil {
		fmt.Fprintln(os.Stderr, "runnet:", err)
		os.Exit(1)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func run(ctx context.Context, dir string, budget time.Duration) error {
	var ref snntorchResult
	var inputs [][][]int
	for name, v := range map[string]any{"snntorch.json": &ref, "inputs.json": &inputs} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	file, err := os.ReadFile(filepath.Join(dir, "net.pt"))
	if err != nil {
		return err
	}
	rt := runtime.New(nil)
	defer rt.Close()
	srv, err := httpapi.New(rt, &httpapi.Options{Keys: map[string]string{"sk-bench": "bench"}, RequestsPerMinute: -1, ConcurrentRequests: -1})
	if err != nil {
		return err
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c, err := client.New(hs.URL, &client.Options{APIKey: "sk-bench"})
	if err != nil {
		return err
	}
	net, err := c.Compile(ctx, &client.CompileRequest{Format: "pytorch", File: file})
	if err != nil {
		return err
	}
	if _, err := c.CreateDeployment(ctx, &client.CreateDeploymentRequest{Model: net.ID, ID: "kws", MaxBatchSize: ref.Batch}); err != nil {
		return err
	}
	// The inputs as events: the run endpoint's form for sparse spikes.
	samples := make([]any, len(inputs))
	for k, x := range inputs {
		ev := client.EventSample{Timesteps: len(x)}
		for t, row := range x {
			for i, v := range row {
				if v != 0 {
					ev.Events = append(ev.Events, [2]int{t, i})
				}
			}
		}
		samples[k] = ev
	}
	res, err := c.Run(ctx, "kws", &client.RunRequest{Inputs: samples[:ref.Batch]})
	if err != nil {
		return err
	}
	// float32 sums in another order (events gathered by column, against
	// torch's dense product) can put a membrane on the other side of the
	// threshold: count the outputs that differ, and by how much.
	differ, worst, total := 0, 0, 0
	for k, o := range res.Outputs {
		for i, v := range o.SpikeCounts {
			total++
			if d := abs(int(v) - ref.Counts[k][i]); d > 0 {
				differ++
				worst = max(worst, d)
			}
		}
	}
	// The same runs in-process (Runtime.Run): what HTTP, JSON and the
	// client add is the difference.
	direct := make([]runtime.Sample, len(samples))
	for k, x := range samples {
		ev := x.(client.EventSample)
		s := runtime.Sample{Timesteps: ev.Timesteps, Events: make([]runtime.SpikeEvent, len(ev.Events))}
		for j, e := range ev.Events {
			s.Events[j] = runtime.SpikeEvent{T: e[0], I: e[1]}
		}
		direct[k] = s
	}
	rate := func(batch int, call func(lo, hi int) error) (float64, error) {
		n, start := 0, time.Now()
		for time.Since(start) < budget || n == 0 {
			lo := (n * batch) % len(samples)
			if err := call(lo, min(lo+batch, len(samples))); err != nil {
				return 0, err
			}
			n++
		}
		return float64(n*batch) / time.Since(start).Seconds(), nil
	}
	overHTTP := func(lo, hi int) error {
		_, err := c.Run(ctx, "kws", &client.RunRequest{Inputs: samples[lo:hi]})
		return err
	}
	packed := make([]any, len(samples))
	for k, x := range samples {
		packed[k] = x.(client.EventSample).Pack()
	}
	overHTTPPacked := func(lo, hi int) error {
		_, err := c.Run(ctx, "kws", &client.RunRequest{Inputs: packed[lo:hi]})
		return err
	}
	inProcess := func(lo, hi int) error {
		_, err := rt.Run(ctx, &runtime.RunRequest{Deployment: "kws", Samples: direct[lo:hi], Principal: "bench"})
		return err
	}
	if profile != nil {
		if err := pprof.StartCPUProfile(profile); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var rates [6]float64
	for i, c := range []struct {
		batch int
		call  func(lo, hi int) error
	}{{1, overHTTP}, {ref.Batch, overHTTP}, {1, inProcess}, {ref.Batch, inProcess}, {1, overHTTPPacked}, {ref.Batch, overHTTPPacked}} {
		if rates[i], err = rate(c.batch, c.call); err != nil {
			return err
		}
	}
	one, full := rates[0], rates[1]
	out := map[string]any{
		"network":       "700-256-20 Leaky (snnTorch), 100 timesteps, 5% input spikes as events",
		"output_counts": total, "output_counts_differing": differ, "largest_difference": worst,
		"samples_per_second_batch1": one, "samples_per_second_full_batch": full, "batch": ref.Batch,
		"snntorch": ref.Library, "snntorch_threads": ref.Threads,
		"snntorch_samples_per_second_batch1": ref.Batch1, "snntorch_samples_per_second_full_batch": ref.FullBatch,
		"ratio_batch1": one / ref.Batch1, "ratio_full_batch": full / ref.FullBatch,
		"in_process_samples_per_second_batch1": rates[2], "in_process_samples_per_second_full_batch": rates[3],
		"packed_samples_per_second_batch1": rates[4], "packed_samples_per_second_full_batch": rates[5],
		"ratio_packed_batch1": rates[4] / ref.Batch1, "ratio_packed_full_batch": rates[5] / ref.FullBatch,
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return nil
}
