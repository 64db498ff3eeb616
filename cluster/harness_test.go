package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuro-go/neuro/cluster"
	"github.com/neuro-go/neuro/httpapi/client/clienttest"
	"github.com/neuro-go/neuro/runtime"
)

// testCluster is three NATS servers in one JetStream cluster on
// loopback, and Neuro nodes that reach each server through a proxy of
// their own, so that a test can cut one node off (a partition) or kill
// a server.
type testCluster struct {
	t       *testing.T
	servers []*server.Server
	nodes   map[string]*testNode
}

type testNode struct {
	name    string
	nc      *nats.Conn
	rt      *runtime.Runtime
	node    *cluster.Node
	proxies []*proxy
	dead    bool
}

// startCluster starts the servers one after another on ports the system
// picks, read back once each listens (never a port found free and
// released, which another process could take before the server binds
// it). Each server routes to those started before it, and the routes
// they gossip make the mesh whole. JetStream will not start a clustered
// server that has no route configured, so the first names the hang-up
// listener, which the test holds while the cluster lives.
func startCluster(t *testing.T) *testCluster {
	t.Helper()
	tc := &testCluster{t: t, nodes: map[string]*testNode{}}
	hangUp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := hangUp.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { hangUp.Close() })
	t.Cleanup(tc.close) // runs before hangUp closes: cleanups run last first
	routes := []*url.URL{{Scheme: "nats", Host: hangUp.Addr().String()}}
	for i := range 3 {
		o := &server.Options{
			ServerName: fmt.Sprintf("s%d", i), Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true,
			JetStream: true, StoreDir: t.TempDir(), JetStreamMaxMemory: 64 << 20, JetStreamMaxStore: 4 << 30,
			Cluster: server.ClusterOpts{Name: "neuro-test", Host: "127.0.0.1", Port: server.RANDOM_PORT, NoAdvertise: true},
			Routes:  slices.Clone(routes),
		}
		s, err := server.NewServer(o)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		if !s.ReadyForConnections(10 * time.Second) {
			t.Fatalf("NATS server %d did not start", i)
		}
		tc.servers = append(tc.servers, s)
		if i == 0 {
			routes = routes[:0]
		}
		routes = append(routes, &url.URL{Scheme: "nats", Host: s.ClusterAddr().String()})
	}
	// Wait for JetStream's meta leader: a replicated bucket can be made.
	nc, err := nats.Connect(tc.servers[0].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "probe", Replicas: 3})
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("JetStream cluster not ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return tc
}

// join starts a Neuro node whose runtime serves the test models (each
// deployed on cpu as the program's own, "<id>-cpu").
func (tc *testCluster) join(name string) *testNode {
	t := tc.t
	t.Helper()
	n := &testNode{name: name}
	urls := ""
	for i, s := range tc.servers {
		if !s.Running() {
			continue
		}
		p := newProxy(t, s.ClientURL()[len("nats://"):])
		n.proxies = append(n.proxies, p)
		if i > 0 && urls != "" {
			urls += ","
		}
		urls += "nats://" + p.ln.Addr().String()
	}
	var err error
	n.nc, err = nats.Connect(urls, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.IgnoreDiscoveredServers(), nats.DontRandomize(), nats.Timeout(time.Second), nats.PingInterval(500*time.Millisecond), nats.MaxPingsOutstanding(2))
	if err != nil {
		t.Fatal(err)
	}
	n.rt = runtime.New(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := clienttest.AddModels(ctx, n.rt, &clienttest.ModelOptions{MaxBatch: 4}); err != nil {
		t.Fatal(err)
	}
	n.node, err = cluster.Join(ctx, n.nc, n.rt, &cluster.Options{Name: name, Devices: []string{"cpu"}, Replicas: 3,
		LeaseTTL: 1500 * time.Millisecond, Heartbeat: 100 * time.Millisecond, Logger: testLogger(t, name)})
	if err != nil {
		t.Fatal(err)
	}
	tc.nodes[name] = n
	return n
}

// kill stops a node as a crash would: its connection drops, nothing is
// handed over.
func (tc *testCluster) kill(name string) {
	n := tc.nodes[name]
	n.dead = true
	for _, p := range n.proxies {
		p.cut(true)
	}
	n.nc.Close()
	n.node.Close()
	n.rt.Close()
}

// partition cuts a node off from every NATS server, or heals it.
func (tc *testCluster) partition(name string, cut bool) {
	for _, p := range tc.nodes[name].proxies {
		p.cut(cut)
	}
}

func (tc *testCluster) close() {
	for _, n := range tc.nodes {
		if !n.dead {
			n.node.Close()
			n.nc.Close()
			n.rt.Close()
		}
		for _, p := range n.proxies {
			p.close()
		}
	}
	for _, s := range tc.servers {
		s.Shutdown()
	}
}

// eventually polls cond until it holds, or fails the test after d.
func eventually(t *testing.T, d time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, d, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// proxy forwards TCP connections to a NATS server until it is cut.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	isCut  bool
	conns  map[net.Conn]bool
	// stalled holds every byte in both directions without closing the
	// connections, as a paused process does.
	stalled sync.RWMutex
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	go p.serve()
	return p
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.isCut
		p.mu.Unlock()
		if cut {
			c.Close()
			continue
		}
		d, err := net.DialTimeout("tcp", p.target, time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[d] = true, true
		p.mu.Unlock()
		pipe := func(a, b net.Conn) {
			buf := make([]byte, 32<<10)
			for {
				n, err := b.Read(buf)
				if n > 0 {
					p.stalled.RLock() // waits while the proxy is stalled
					_, werr := a.Write(buf[:n])
					p.stalled.RUnlock()
					if werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			a.Close()
			b.Close()
		}
		go pipe(c, d)
		go pipe(d, c)
	}
}

func (p *proxy) cut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isCut = cut
	if cut {
		for c := range p.conns {
			c.Close()
		}
		p.conns = map[net.Conn]bool{}
	}
}

// stall holds a node's traffic for d, as a process stopped for d would.
func (tc *testCluster) stall(name string, d time.Duration) {
	ps := tc.nodes[name].proxies
	for _, p := range ps {
		p.stalled.Lock()
	}
	time.Sleep(d)
	for _, p := range ps {
		p.stalled.Unlock()
	}
}

func (p *proxy) close() {
	p.ln.Close()
	p.cut(true)
}

// testLogger logs to the test's output with -v and NEURO_CLUSTER_LOG set.
func testLogger(t *testing.T, name string) *slog.Logger {
	if os.Getenv("NEURO_CLUSTER_LOG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test_node", name)
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}
