// Command runnet measures running networks against snnTorch on the same
// networks and inputs, in one run (bench/runnet/compare.sh runs both):
// snntorch_run.py saves three snnTorch networks (shd: 700-256-20 Leaky;
// conv: a Conv2d over 2×32×32 into Leaky, then Linear into Leaky; rec:
// 700-256-20 with an RLeaky hidden layer), 64 samples of input spikes at
// 1%, 5% and 20% activity, and snnTorch's own timings and output spike
// counts. This program compiles each saved file through POST /v1/compile
// of a server in the same process, deploys it on cpu, compares every
// sample's output spike counts with snnTorch's, and times each network
// and activity eight ways: POST /v1/deployments/{id}/run at batch 1 (one
// sample per request, one request at a time) and at a full batch (64
// samples per request), with the events as JSON pairs, in compact form
// (events_packed) and as a raster of bits (raster), and Runtime.Run
// in-process at both batches. It
// prints one JSON line per network and activity. -cpuprofile profiles
// each case to a file of its own.
//
//	go run ./bench/runnet -dir /tmp/runnet
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	_ "github.com/neuro-go/neuro/compile/pytorch"
	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/httpapi/client"
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
)

// profile, when set, is the prefix of the CPU profiles of the timed
// cases: one file for each, named prefix.net_activity.case.
var profile string

// startProfile starts the CPU profile of one case, if asked for, and
// returns what stops it.
func startProfile(name string) (func(), error) {
	if profile == "" {
		return func() {}, nil
	}
	f, err := os.Create(profile + "." + name)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// snntorchResult is what snntorch_run.py writes.
type snntorchResult struct {
	Library   string `json:"library"`
	Threads   int    `json:"threads"`
	Timesteps int    `json:"timesteps"`
	Batch     int    `json:"batch"`
	Nets      map[string]struct {
		Shape      []int `json:"shape"`
		Activities map[string]struct {
			Batch1    float64 `json:"samples_per_second_batch1"`
			FullBatch float64 `json:"samples_per_second_full_batch"`
			Counts    [][]int `json:"counts"`
		} `json:"activities"`
	} `json:"nets"`
}

// layers describes the networks whose state_dict does not say all of
// their architecture: the conv network's input shape, its Conv2d's
// stride and padding, and the Flatten between it and the Linear.
var layers = map[string][]map[string]any{
	"conv": {
		{"name": "0", "kind": "conv2d", "shape": []int{2, 32, 32}, "params": map[string]float64{"stride": 2, "padding": 1}},
		{"name": "1", "kind": "snntorch.leaky"},
		{"name": "2", "kind": "flatten"},
		{"name": "3", "kind": "linear"},
		{"name": "4", "kind": "snntorch.leaky"},
	},
}

var descriptions = map[string]string{
	"shd":  "700-256-20, Leaky",
	"conv": "Conv2d 2→8 (3×3, stride 2) over 2×32×32, Leaky, Linear 2048→10, Leaky",
	"rec":  "700-256-20, RLeaky (all-to-all) hidden layer, Leaky output",
}

func main() {
	dir := flag.String("dir", "/tmp/runnet", "the directory snntorch_run.py wrote")
	seconds := flag.Float64("seconds", 1, "how long to time each case")
	nets := flag.String("nets", "shd,conv,rec", "the networks to run, comma-separated")
	activities := flag.String("activities", "1,5,20", "the input activities to run, in percent, comma-separated")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of each timed case to `prefix`.net_activity.case")
	flag.Parse()
	profile = *cpuprofile
	if err := run(context.Background(), *dir, time.Duration(*seconds*float64(time.Second)),
		strings.Split(*nets, ","), strings.Split(*activities, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "runnet:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir string, budget time.Duration, nets, activities []string) error {
	var ref snntorchResult
	b, err := os.ReadFile(filepath.Join(dir, "snntorch.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		return fmt.Errorf("snntorch.json: %w", err)
	}
	rt := runtime.New(nil)
	defer rt.Close()
	srv, err := httpapi.New(rt, &httpapi.Options{Keys: map[string]string{"sk-bench": "bench"}, RequestsPerMinute: -1, ConcurrentRequests: -1,
		MaxRunBodyBytes: 64 << 20}) // the conv network at 20% sends 31 MB of JSON a batch
	if err != nil {
		return err
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c, err := client.New(hs.URL, &client.Options{APIKey: "sk-bench"})
	if err != nil {
		return err
	}
	for _, name := range nets {
		net, ok := ref.Nets[name]
		if !ok {
			return fmt.Errorf("snntorch.json has no network %q", name)
		}
		file, err := os.ReadFile(filepath.Join(dir, name+".pt"))
		if err != nil {
			return err
		}
		req := &client.CompileRequest{Format: "pytorch", File: file}
		if l, ok := layers[name]; ok {
			req.Options = map[string]any{"layers": l}
		}
		compiled, err := c.Compile(ctx, req)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := c.CreateDeployment(ctx, &client.CreateDeploymentRequest{Model: compiled.ID, ID: name, MaxBatchSize: ref.Batch}); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, pct := range activities {
			a, ok := net.Activities[pct]
			if !ok {
				return fmt.Errorf("snntorch.json has no activity %s%% for %s", pct, name)
			}
			samples, err := readInputs(filepath.Join(dir, name+"_"+pct+".bin"), len(a.Counts), ref.Timesteps)
			if err != nil {
				return err
			}
			line, err := measure(ctx, c, rt, name, samples, a.Counts, ref.Batch, budget, name+"_"+pct)
			if err != nil {
				return fmt.Errorf("%s at %s%%: %w", name, pct, err)
			}
			line["network"], line["description"], line["activity_percent"] = name, descriptions[name], pct
			line["snntorch"], line["snntorch_threads"] = ref.Library, ref.Threads
			line["snntorch_batch1"], line["snntorch_full_batch"] = a.Batch1, a.FullBatch
			for _, k := range []string{"rest", "packed", "raster", "in_process"} {
				line["ratio_"+k+"_batch1"] = line[k+"_batch1"].(float64) / a.Batch1
				line["ratio_"+k+"_full_batch"] = line[k+"_full_batch"].(float64) / a.FullBatch
			}
			b, _ := json.Marshal(line)
			fmt.Println(string(b))
		}
	}
	return nil
}

// readInputs reads snntorch_run.py's input spikes: little-endian int32
// triples (sample, step, input), as events of samples samples.
func readInputs(path string, samples, steps int) ([]client.EventSample, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b)%12 != 0 {
		return nil, fmt.Errorf("%s: %d bytes, not whole triples of int32", path, len(b))
	}
	out := make([]client.EventSample, samples)
	for k := range out {
		out[k].Timesteps = steps
	}
	for i := 0; i < len(b); i += 12 {
		k := int(int32(binary.LittleEndian.Uint32(b[i:])))
		t := int(int32(binary.LittleEndian.Uint32(b[i+4:])))
		in := int(int32(binary.LittleEndian.Uint32(b[i+8:])))
		if k < 0 || k >= samples {
			return nil, fmt.Errorf("%s: sample %d of %d", path, k, samples)
		}
		out[k].Events = append(out[k].Events, [2]int{t, in})
	}
	return out, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// measure checks one network's outputs at one activity against
// snnTorch's counts and times the eight cases.
func measure(ctx context.Context, c *client.Client, rt *runtime.Runtime, id string, events []client.EventSample,
	counts [][]int, batch int, budget time.Duration, tag string) (map[string]any, error) {
	d, err := rt.Deployment(id)
	if err != nil {
		return nil, err
	}
	inputs, _ := d.Model.Ports()
	samples := make([]any, len(events))
	packed := make([]any, len(events))
	raster := make([]any, len(events))
	direct := make([]runtime.Sample, len(events))
	nEvents := 0
	for k, ev := range events {
		if raster[k], err = ev.Raster(inputs); err != nil {
			return nil, err
		}
		samples[k], packed[k] = ev, ev.Pack()
		s := runtime.Sample{Timesteps: ev.Timesteps, Events: make([]runtime.SpikeEvent, len(ev.Events))}
		for j, e := range ev.Events {
			s.Events[j] = runtime.SpikeEvent{T: e[0], I: e[1]}
		}
		direct[k] = s
		nEvents += len(ev.Events)
	}
	res, err := c.Run(ctx, id, &client.RunRequest{Inputs: samples[:batch]})
	if err != nil {
		return nil, err
	}
	byRaster, err := c.Run(ctx, id, &client.RunRequest{Inputs: raster[:batch]})
	if err != nil {
		return nil, err
	}
	for k, o := range byRaster.Outputs {
		if !slices.Equal(o.SpikeCounts, res.Outputs[k].SpikeCounts) {
			return nil, fmt.Errorf("%s: sample %d's counts as a raster %v, as events %v", tag, k, o.SpikeCounts, res.Outputs[k].SpikeCounts)
		}
	}
	// float32 sums in another order (events gathered by column, against
	// torch's dense product) can put a membrane on the other side of the
	// threshold: count the outputs that differ, and by how much.
	differ, worst, total, spikes := 0, 0, 0, 0
	for k, o := range res.Outputs {
		for i, v := range o.SpikeCounts {
			total++
			spikes += int(v)
			if d := abs(int(v) - counts[k][i]); d > 0 {
				differ++
				worst = max(worst, d)
			}
		}
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
	over := func(inputs []any) func(lo, hi int) error {
		return func(lo, hi int) error {
			_, err := c.Run(ctx, id, &client.RunRequest{Inputs: inputs[lo:hi]})
			return err
		}
	}
	inProcess := func(lo, hi int) error {
		_, err := rt.Run(ctx, &runtime.RunRequest{Deployment: id, Samples: direct[lo:hi], Principal: "bench"})
		return err
	}
	line := map[string]any{
		"events_per_sample": float64(nEvents) / float64(len(events)), "batch": batch,
		"output_counts": total, "output_spikes": spikes, "output_counts_differing": differ, "largest_difference": worst,
	}
	for _, cs := range []struct {
		name  string
		batch int
		call  func(lo, hi int) error
	}{{"rest_batch1", 1, over(samples)}, {"rest_full_batch", batch, over(samples)},
		{"packed_batch1", 1, over(packed)}, {"packed_full_batch", batch, over(packed)},
		{"raster_batch1", 1, over(raster)}, {"raster_full_batch", batch, over(raster)},
		{"in_process_batch1", 1, inProcess}, {"in_process_full_batch", batch, inProcess}} {
		stop, err := startProfile(tag + "." + cs.name)
		if err != nil {
			return nil, err
		}
		r, err := rate(cs.batch, cs.call)
		stop()
		if err != nil {
			return nil, err
		}
		line[cs.name] = r
	}

	return line, nil
}
