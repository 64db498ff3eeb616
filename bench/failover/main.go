// Command failover measures a Neuro cluster of real server processes
// under faults (bench/RESULTS.md, "Cluster under faults"):
//
//	go run ./bench/failover [-kills 10] [-consistency 20] [-only consistency]
//
// It starts three NATS servers (JetStream, in this process) and three
// processes of the example server (built from ./examples/server) joined
// to them, creates a deployment of the digits classifier, and runs
// three scenarios while a client runs the deployment through the nodes
// every 500 ms (the deployment's owner's key, under its rate limit),
// retrying a 503 or 429 as the project's clients do (after a second, at
// most 3 times):
//
//   - kills: -kills times, SIGKILL the node that holds the deployment,
//     and time until another node reports it ready and answers a run;
//     then start the killed node again;
//   - pause: SIGSTOP the holder for 2 s (below the 10 s lease), then
//     SIGCONT: the deployment must not move;
//   - saturation: a busy loop on every core for 20 s: no move either;
//   - rolling restart: SIGTERM each node in turn and start it again,
//     while 4 clients stream chats and 4 run the deployment through the
//     nodes that are up: no request may fail, no stream be cut;
//   - consistency: -consistency runs of the run-networks checks, each
//     request on the next node (consistency.go): every answer must see
//     what the node before answered.
//
// It prints what the client saw in each: calls, failures after retries.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/neuro-go/neuro/bench/roofline"
	"github.com/neuro-go/neuro/internal/natstest"
)

const key = "sk-failover-bench"

// clientKeys are the keys of the load's clients, one each, so that each
// stays under a key's rate limit (600 a minute) at its pace.
var clientKeys = func() []string {
	var ks []string
	for i := range 9 {
		ks = append(ks, fmt.Sprintf("%s-%d", key, i))
	}
	return ks
}()

var nextKey atomic.Int32

type proc struct {
	name string
	addr string
	cmd  *exec.Cmd
}

type bench struct {
	bin, nats, dir string
	mu             sync.Mutex
	procs          []*proc
}

func main() {
	kills := flag.Int("kills", 10, "SIGKILLs of the holding node")
	runs := flag.Int("consistency", 20, "runs of the run-networks checks through the nodes in turn")
	only := flag.String("only", "", "run one scenario: kills, pause, busy, rolling or consistency")
	flag.Parse()
	if err := run(*kills, *runs, *only); err != nil {
		fmt.Fprintln(os.Stderr, "failover:", err)
		os.Exit(1)
	}
}

func run(kills, consRuns int, only string) error {
	doing := func(scenario string) bool { return only == "" || only == scenario }
	dir, err := os.MkdirTemp("", "neuro-failover")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b := &bench{bin: filepath.Join(dir, "server"), dir: dir}
	if out, err := exec.Command("go", "build", "-o", b.bin, "./examples/server").CombinedOutput(); err != nil {
		return fmt.Errorf("building the server: %v\n%s", err, out)
	}
	servers, err := natstest.Start(filepath.Join(dir, "nats"), 3)
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range servers {
			s.Shutdown()
		}
	}()
	b.nats = natstest.URLs(servers)
	for i := range 3 {
		p := &proc{name: fmt.Sprintf("n%d", i), addr: fmt.Sprintf("127.0.0.1:%d", natstest.FreePort())}
		b.procs = append(b.procs, p)
		if err := b.start(p); err != nil {
			return err
		}
	}
	defer func() {
		for _, p := range b.procs {
			if p.cmd != nil && p.cmd.Process != nil {
				p.cmd.Process.Kill()
				p.cmd.Wait()
			}
		}
	}()
	if code, body := b.call(b.procs[0], "POST", "/v1/deployments", `{"model":"neuro-1-digits","id":"fo","max_batch_size":4}`); code != 201 {
		return fmt.Errorf("creating the deployment: %d %s", code, body)
	}
	fmt.Printf("three server processes, NATS in process, LeaseTTL 10 s (the default); %s, %d cores\n", roofline.CPUName(), goruntime.NumCPU())

	if doing("consistency") && consRuns > 0 {
		passed, failures, err := b.consistency(consRuns)
		if err != nil {
			return err
		}
		for _, f := range failures {
			fmt.Println("  " + f)
		}
		if len(failures) > 0 {
			for _, c := range b.complaints() {
				fmt.Println("  log " + c)
			}
		}
		fmt.Printf("consistency: %d of %d runs of the run-networks checks passed, each request on the next node\n", passed, consRuns)
	}

	// Kills.
	var times []time.Duration
	if !doing("kills") {
		kills = 0
	}
	for k := range kills {
		holder := b.holder()
		if holder == nil {
			return errors.New("no node holds the deployment")
		}
		calls := b.caller(func(p *proc) bool { return p != holder })
		t0 := time.Now()
		holder.cmd.Process.Kill()
		holder.cmd.Wait()
		holder.cmd = nil
		moved := false
		for time.Since(t0) < 30*time.Second {
			if h := b.holder(); h != nil && h != holder {
				if code, _ := b.call(h, "POST", "/v1/deployments/fo/run", runBody); code == 200 {
					moved = true
					break
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		d := time.Since(t0)
		n, failed := calls.stop()
		if !moved {
			return fmt.Errorf("kill %d: the deployment did not move in 30 s", k+1)
		}
		times = append(times, d)
		fmt.Printf("kill %2d: ready elsewhere and answering after %v; the client's calls meanwhile: %d, failed after retries: %d\n", k+1, d.Round(time.Millisecond), n, failed)
		if err := b.start(holder); err != nil {
			return err
		}
	}
	if len(times) > 0 {
		slices.Sort(times)
		fmt.Printf("failover over %d kills: median %v, worst %v\n", len(times), times[len(times)/2].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond))
	}

	if doing("pause") {
		if err := b.pause(); err != nil {
			return err
		}
	}
	if doing("busy") {
		b.busy()
	}
	if doing("rolling") {
		return b.rolling()
	}
	return nil
}

// pause stops the holder for 2 s, below the lease: the deployment must
// not move.
func (b *bench) pause() error {
	holder := b.holder()
	if holder == nil {
		return errors.New("no node holds the deployment")
	}
	calls := b.caller(func(p *proc) bool { return p != holder })
	holder.cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(2 * time.Second)
	holder.cmd.Process.Signal(syscall.SIGCONT)
	stayed := true
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if h := b.holder(); h != nil && h != holder {
			stayed = false
		}
	}
	n, failed := calls.stop()
	fmt.Printf("SIGSTOP 2 s of the holder: the deployment stayed: %v; the client's calls: %d, failed after retries: %d\n", stayed, n, failed)
	return nil
}

// busy keeps every core busy for 20 s: the deployment must not move.
func (b *bench) busy() {
	holder := b.holder()
	calls := b.caller(func(*proc) bool { return true })
	var spin atomic.Bool
	for range goruntime.NumCPU() {
		go func() {
			for x := 0; !spin.Load(); x++ {
			}
		}()
	}
	stayed := true
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if h := b.holder(); h != nil && h != holder {
			stayed = false
		}
	}
	spin.Store(true)
	n, failed := calls.stop()
	fmt.Printf("every core busy for 20 s: the deployment stayed: %v; the client's calls: %d, failed after retries: %d\n", stayed, n, failed)
}

// rolling stops each node with SIGTERM and starts it again, one after
// another, under load: no request may fail, no stream be cut.
func (b *bench) rolling() error {
	var down atomic.Pointer[proc]
	up := func(p *proc) bool { return p != down.Load() && p.cmd != nil }
	runs := []*caller{b.caller(up), b.caller(up), b.caller(up), b.caller(up)}
	var chats []*caller
	for range 4 {
		chats = append(chats, b.chatter(up))
	}
	t0 := time.Now()
	for _, p := range b.procs {
		down.Store(p)
		time.Sleep(200 * time.Millisecond) // the load balancer takes it out first
		p.cmd.Process.Signal(syscall.SIGTERM)
		p.cmd.Wait()
		p.cmd = nil
		if err := b.start(p); err != nil {
			return err
		}
		down.Store(nil)
		time.Sleep(500 * time.Millisecond)
	}
	var total, fails int
	for i, c := range append(runs, chats...) {
		n, f := c.stop()
		total, fails = total+n, fails+f
		if f > 0 {
			fmt.Printf("  client %d: %d of %d failed; the first attempt that failed: %v\n", i, f, n, c.why.Load())
		}
	}
	fmt.Printf("rolling restart of 3 nodes in %v under 4 running and 4 streaming clients: %d requests, %d failed or cut\n",
		time.Since(t0).Round(100*time.Millisecond), total, fails)
	// The cluster's telemetry of each chat client's key counts what the
	// client sent, whichever node answered, the restarted ones included.
	time.Sleep(2 * time.Second)
	for _, c := range chats {
		code, body := b.callAs(c.key, b.procs[0], "GET", "/v1/telemetry?window=1h", "")
		var tel struct {
			Requests struct {
				ByEndpoint map[string]int `json:"by_endpoint"`
			} `json:"requests"`
		}
		json.Unmarshal(body, &tel)
		fmt.Printf("  a chat client's key: it sent %d requests that a node answered; the cluster's telemetry counts %d (%d)\n",
			c.answered.Load(), tel.Requests.ByEndpoint["/v1/chat/completions"], code)
	}
	return nil
}

var runBody = `{"inputs":[[` + strings.TrimSuffix(strings.Repeat("0.5,", 64), ",") + `]]}`

// start starts a node process and waits until it serves.
func (b *bench) start(p *proc) error {
	cmd := exec.Command(b.bin, "-cluster", b.nats, "-node", p.name, "-addr", p.addr, "-console=false", "-grace", "20s")
	cmd.Env = append(os.Environ(), "NEURO_API_KEYS="+strings.Join(append([]string{key}, clientKeys...), ","))
	out, _ := cmd.StdoutPipe()
	logf, err := os.OpenFile(filepath.Join(b.dir, p.name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own descriptor
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		return err
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "Serving on") {
				ready <- true
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		return fmt.Errorf("node %s did not start", p.name)
	}
	b.mu.Lock()
	p.cmd = cmd
	b.mu.Unlock()
	return nil
}

func (b *bench) call(p *proc, method, path, body string) (int, []byte) {
	return b.callAs(key, p, method, path, body)
}

func (b *bench) callAs(k string, p *proc, method, path, body string) (int, []byte) {
	req, _ := http.NewRequest(method, "http://"+p.addr+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+k)
	req.Header.Set("Content-Type", "application/json")
	c := http.Client{Timeout: 30 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b2, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b2
}

// complaints returns the warnings and errors the nodes have logged.
func (b *bench) complaints() []string {
	var out []string
	for _, p := range b.procs {
		raw, _ := os.ReadFile(filepath.Join(b.dir, p.name+".log"))
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
				out = append(out, p.name+": "+line)
			}
		}
	}
	return out
}

// holder is the process that holds the deployment, as a live node says.
func (b *bench) holder() *proc {
	for _, p := range b.procs {
		if p.cmd == nil {
			continue
		}
		code, body := b.call(p, "GET", "/v1/deployments/fo", "")
		if code != 200 {
			continue
		}
		var d struct {
			Node   string `json:"node"`
			Status string `json:"status"`
		}
		json.Unmarshal(body, &d)
		for _, q := range b.procs {
			if q.name == d.Node && d.Status == "ready" {
				return q
			}
		}
		return nil
	}
	return nil
}

// caller runs the deployment every 500 ms through a node that use
// allows, retrying a 503 or a refused connection after a second, at
// most 3 times, as the project's clients do.
type caller struct {
	stopped      atomic.Bool
	done         chan struct{}
	calls, fails atomic.Int64
	why          atomic.Value // the first failure, for the report
	key          string       // the key its requests are made with
	// answered counts the HTTP requests a node answered, whatever their
	// status: what the key's telemetry must count.
	answered atomic.Int64
}

func (c *caller) stop() (int, int) {
	c.stopped.Store(true)
	<-c.done
	return int(c.calls.Load()), int(c.fails.Load())
}

func (b *bench) pick(use func(*proc) bool) *proc {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ok []*proc
	for _, p := range b.procs {
		if use(p) && p.cmd != nil {
			ok = append(ok, p)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	return ok[rand.IntN(len(ok))]
}

func (b *bench) caller(use func(*proc) bool) *caller {
	// The deployment is its owner's: every run client shares the key,
	// at a pace that keeps them together under its rate limit.
	return b.loop(use, 500*time.Millisecond, func(p *proc) (int, bool) {
		code, _ := b.call(p, "POST", "/v1/deployments/fo/run", runBody)
		return code, code == 200
	})
}

// chatter streams chats of 32 tokens; a stream that ends without [DONE]
// is cut.
func (b *bench) chatter(use func(*proc) bool) *caller {
	k := clientKeys[int(nextKey.Add(1))%len(clientKeys)]
	c := b.loop(use, 150*time.Millisecond, func(p *proc) (int, bool) {
		req, _ := http.NewRequest("POST", "http://"+p.addr+"/v1/chat/completions",
			strings.NewReader(`{"model":"neuro-1-lite","messages":[{"role":"user","content":"Tell me a story."}],"max_tokens":32,"stream":true}`))
		req.Header.Set("Authorization", "Bearer "+k)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, false
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return resp.StatusCode, false
		}
		all, _ := io.ReadAll(resp.Body)
		return 200, bytes.Contains(all, []byte("data: [DONE]")) && !bytes.Contains(all, []byte(`"error"`))
	})
	c.key = k
	return c
}

func (b *bench) loop(use func(*proc) bool, every time.Duration, once func(*proc) (int, bool)) *caller {
	c := &caller{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for !c.stopped.Load() {
			c.calls.Add(1)
			ok := false
			for try := 0; try < 4 && !ok; try++ {
				p := b.pick(use)
				if p == nil {
					time.Sleep(100 * time.Millisecond)
					continue
				}
				code, good := once(p)
				ok = good
				if code != 0 {
					c.answered.Add(1)
				}
				if !ok {
					c.why.CompareAndSwap(nil, fmt.Sprintf("%d from %s", code, p.name))
				}
				if !ok && code != 503 && code != 429 && code != 0 {
					break // not an error a client retries
				}
				if !ok {
					time.Sleep(time.Second)
				}
			}
			if !ok {
				c.fails.Add(1)
			}
			time.Sleep(every) // under a key's 600 a minute
		}
	}()
	return c
}
