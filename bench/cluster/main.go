// Command cluster measures a Neuro cluster on NATS JetStream, in one
// process on loopback (bench/RESULTS.md, "Cluster"):
//
//	go run ./bench/cluster
//
// It starts three NATS servers in one JetStream cluster, in this process
// (with -nats-process, in a child process of their own), and three
// Neuro nodes in this process whose runtimes register the same small
// test language model (runtime/runtimetest, the 1k-token tokenizer),
// then reports:
//
//   - the routing overhead per request: a one-token generation called
//     on the node that runs the deployment, and through another node;
//   - the overhead per streamed token: the same with -tokens tokens,
//     less the per-request difference, per token;
//   - the floor under a routed call: a bare NATS request and reply
//     between the same two nodes;
//   - the throughput (completion tokens per second) of 1, 2 and 3
//     nodes, each running one deployment, with -workers streaming
//     clients calling each deployment through another node.
//
// All of it shares this machine's cores, so more nodes add routing
// work and no compute: the throughput figures measure the cost of the
// cluster, not its scaling.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/neuro-go/neuro/cluster"
	"github.com/neuro-go/neuro/internal/natstest"
	"github.com/neuro-go/neuro/models/tokenizers"
	"github.com/neuro-go/neuro/runtime"
	_ "github.com/neuro-go/neuro/runtime/hal/cpu"
	"github.com/neuro-go/neuro/runtime/runtimetest"
	"github.com/neuro-go/neuro/tokenizer"
)

func main() {
	n := flag.Int("n", 300, "requests per latency measurement")
	tokens := flag.Int("tokens", 64, "tokens of the streamed request")
	workers := flag.Int("workers", 4, "streaming clients per deployment in the throughput runs")
	secs := flag.Float64("seconds", 5, "length of each throughput run")
	child := flag.Bool("nats-process", false, "run the NATS servers in a child process, not beside the nodes in this one")
	serve := flag.String("serve-nats", "", "(the child process) serve NATS from this directory until standard input closes")
	flag.Parse()
	if *serve != "" {
		if err := serveNATS(*serve); err != nil {
			fmt.Fprintln(os.Stderr, "cluster:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*n, *tokens, *workers, time.Duration(*secs*float64(time.Second)), !*child); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

type node struct {
	nc   *nats.Conn
	rt   *runtime.Runtime
	node *cluster.Node
}

// serveNATS is the child process: it starts the servers, prints their
// client URLs on one line and serves until its parent closes standard
// input (or exits).
func serveNATS(dir string) error {
	servers, err := natstest.Start(dir, 3)
	if err != nil {
		return err
	}
	fmt.Println(natstest.URLs(servers))
	io.Copy(io.Discard, os.Stdin)
	for _, s := range servers {
		s.Shutdown()
	}
	return nil
}

// startNATS starts the servers, in this process or in a child, and
// returns their client URLs and what stops them.
func startNATS(dir string, here bool) ([]string, func(), error) {
	if here {
		servers, err := natstest.Start(dir, 3)
		if err != nil {
			return nil, nil, err
		}
		return strings.Split(natstest.URLs(servers), ","), func() {
			for _, s := range servers {
				s.Shutdown()
			}
		}, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(self, "-serve-nats", dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() { stdin.Close(); cmd.Wait() }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("the NATS servers' process: %w", err)
	}
	return strings.Split(strings.TrimSpace(line), ","), stop, nil
}

func run(n, tokens, workers int, secs time.Duration, here bool) error {
	dir, err := os.MkdirTemp("", "neuro-bench-cluster")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	urls, stop, err := startNATS(dir, here)
	if err != nil {
		return err
	}
	defer stop()
	tok, err := tokenizers.Load("neuro-bpe-1k")
	if err != nil {
		return err
	}
	ctx := context.Background()
	var nodes []*node
	for i, url := range urls {
		nc, err := nats.Connect(url)
		if err != nil {
			return err
		}
		rt := runtime.New(nil)
		if err := rt.RegisterModel(&runtime.Model{ID: "lm", Program: runtimetest.Program("lm", tok.VocabSize(), 64, 1, 0), Tokenizer: tok}); err != nil {
			return err
		}
		var nd *cluster.Node
		for try := 0; ; try++ { // JetStream elects its leaders first
			jctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			nd, err = cluster.Join(jctx, nc, rt, &cluster.Options{Name: fmt.Sprintf("n%d", i+1), Devices: []string{"cpu"}, Replicas: 3})
			cancel()
			if err == nil || try == 20 {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil {
			return err
		}
		defer func() { nd.Close(); nc.Close(); rt.Close() }()
		nodes = append(nodes, &node{nc, rt, nd})
	}
	for i, nd := range nodes {
		if _, err := nodes[0].node.CreateDeployment(ctx, runtime.DeploymentSpec{ID: fmt.Sprintf("lm-%d", i+1), Model: "lm", Node: nd.node.Name(), MaxBatch: 8, Owner: "bench"}, 10*time.Second); err != nil {
			return err
		}
	}
	time.Sleep(500 * time.Millisecond) // every node sees every lease
	bias := map[int]float64{}
	stops, _ := tok.StopIDs()
	if id, ok := tok.SpecialID(tokenizer.EndOfText); ok {
		stops = append(stops, id)
	}
	for _, id := range stops {
		bias[id] = -100 // every request generates exactly its tokens
	}
	req := func(dep string, max int) *runtime.Request {
		seed := int64(1)
		return &runtime.Request{Deployment: dep, Prompt: "Once upon a time", MaxTokens: max,
			Sampling: runtime.Sampling{Temperature: 1, Seed: &seed, LogitBias: bias}, Principal: "bench"}
	}
	// Latency: lm-1 runs on n1; direct is n1, routed is n2 -> n1.
	measure := func(be *cluster.Node, max int, stream bool) ([]time.Duration, error) {
		var fn func(runtime.Event) error
		if stream {
			fn = func(runtime.Event) error { return nil }
		}
		out := make([]time.Duration, 0, n)
		for i := range n + n/10 {
			t0 := time.Now()
			res, err := be.Generate(ctx, req("lm-1", max), fn)
			if err != nil {
				return nil, err
			}
			if res.Usage.CompletionTokens != max {
				return nil, fmt.Errorf("%d tokens, want %d", res.Usage.CompletionTokens, max)
			}
			if i >= n/10 { // the first tenth warms up
				out = append(out, time.Since(t0))
			}
		}
		return out, nil
	}
	fmt.Printf("%d requests each, lm-1 on node n1; direct = called on n1, routed = called on n2\n\n", n)
	fmt.Println("| request | direct p50 | routed p50 | direct mean | routed mean | overhead (mean) |")
	fmt.Println("|---|---|---|---|---|---|")
	var perReq time.Duration
	for _, c := range []struct {
		name   string
		max    int
		stream bool
	}{{"1 token", 1, false}, {"1 token, streamed", 1, true}, {fmt.Sprintf("%d tokens, streamed", tokens), tokens, true}} {
		d, err := measure(nodes[0].node, c.max, c.stream)
		if err != nil {
			return err
		}
		r, err := measure(nodes[1].node, c.max, c.stream)
		if err != nil {
			return err
		}
		over := mean(r) - mean(d)
		fmt.Printf("| %s | %v | %v | %v | %v | %v |\n", c.name, round(percentile(d, 0.5)), round(percentile(r, 0.5)), round(mean(d)), round(mean(r)), round(over))
		if c.max == 1 && c.stream {
			perReq = over
		}
		if c.max == tokens {
			fmt.Printf("\nper streamed token: %v routed overhead ((%v - %v) / %d)\n", round((over-perReq)/time.Duration(tokens-1)), round(over), round(perReq), tokens-1)
		}
	}
	// The floor under a routed call: one NATS request and reply between
	// the same two nodes, through their two servers.
	echo, err := nodes[0].nc.Subscribe("bench.echo", func(m *nats.Msg) { m.Respond(nil) })
	if err != nil {
		return err
	}
	defer echo.Unsubscribe()
	nodes[0].nc.Flush()
	time.Sleep(100 * time.Millisecond) // the interest reaches n2's server
	rtt := make([]time.Duration, 0, n)
	for i := range n + n/10 {
		t0 := time.Now()
		if _, err := nodes[1].nc.Request("bench.echo", nil, time.Second); err != nil {
			return err
		}
		if i >= n/10 {
			rtt = append(rtt, time.Since(t0))
		}
	}
	fmt.Printf("\nNATS request and reply n2 -> n1: p50 %v, mean %v\n", round(percentile(rtt, 0.5)), round(mean(rtt)))

	// Throughput: k deployments on k nodes, each called through the next node.
	fmt.Printf("\n| nodes | clients | completion tokens/s | requests/s |\n|---|---|---|---|\n")
	for k := 1; k <= 3; k++ {
		var toks, reqs atomic.Int64
		deadline := time.Now().Add(secs)
		var wg sync.WaitGroup
		var firstErr atomic.Value
		for d := range k {
			entry := nodes[(d+1)%k].node
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(deadline) {
						res, err := entry.Generate(ctx, req(fmt.Sprintf("lm-%d", d+1), tokens), func(runtime.Event) error { return nil })
						if err != nil {
							firstErr.CompareAndSwap(nil, err)
							return
						}
						toks.Add(int64(res.Usage.CompletionTokens))
						reqs.Add(1)
					}
				}()
			}
		}
		wg.Wait()
		if err, _ := firstErr.Load().(error); err != nil {
			return err
		}
		fmt.Printf("| %d | %d | %.0f | %.1f |\n", k, k*workers, float64(toks.Load())/secs.Seconds(), float64(reqs.Load())/secs.Seconds())
	}
	return nil
}

func mean(xs []time.Duration) time.Duration {
	var s time.Duration
	for _, x := range xs {
		s += x
	}
	return s / time.Duration(len(xs))
}

func round(d time.Duration) time.Duration {
	if d < 0 {
		return -round(-d)
	}
	switch {
	case d < 10*time.Microsecond:
		return d.Round(100 * time.Nanosecond)
	case d < time.Millisecond:
		return d.Round(time.Microsecond)
	}
	return d.Round(10 * time.Microsecond)
}

func percentile(xs []time.Duration, q float64) time.Duration {
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	return xs[int(q*float64(len(xs)-1))]
}
