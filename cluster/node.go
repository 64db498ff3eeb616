package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal"
)

// ErrNotJoined is returned by a Node that has left its cluster.
var ErrNotJoined = errors.New("cluster: node has left the cluster")

// Options configure a Node. Only Name is required.
type Options struct {
	// Name identifies the node in the cluster: letters, digits, '-'
	// and '_'. Two live nodes must not share one.
	Name string
	// Devices are the devices this node can place deployments on.
	// Default: every device the program linked (hal.Devices).
	Devices []string
	// Prefix starts every subject, bucket and stream name, so that
	// several clusters can share one NATS account. Default "neuro".
	Prefix string
	// Replicas is how many NATS servers keep each bucket, stream and
	// object. Default: 3, or fewer when fewer servers are known.
	Replicas int
	// LeaseTTL is how long a deployment stays with a node that stopped
	// renewing its lease (a dead or cut-off node), and so bounds how
	// long a failover takes. The lease is renewed every LeaseTTL/3.
	// Default 10 s.
	LeaseTTL time.Duration
	// Heartbeat is how often a node serving a routed call tells its
	// caller it is alive; a caller that hears nothing for 3 heartbeats
	// ends the call with an error. Default 1 s.
	Heartbeat time.Duration
	// MaxDeployments bounds the deployments one owner may have in the
	// cluster. Default runtime.DefaultQuotaDeployments; negative is
	// unlimited.
	MaxDeployments int
	// Logger receives operational events; nil is silent.
	Logger *slog.Logger
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Validate reports an option that cannot work.
func (o *Options) Validate() error {
	if !nameRE.MatchString(o.Name) {
		return fmt.Errorf("cluster: node name %q: want 1 to 64 of A-Z, a-z, 0-9, '-' and '_'", o.Name)
	}
	if o.Prefix != "" && !nameRE.MatchString(o.Prefix) {
		return fmt.Errorf("cluster: prefix %q: want 1 to 64 of A-Z, a-z, 0-9, '-' and '_'", o.Prefix)
	}
	if o.LeaseTTL < 0 || o.Heartbeat < 0 || o.Replicas < 0 || o.Replicas > 5 {
		return errors.New("cluster: LeaseTTL, Heartbeat and Replicas (at most 5) must not be negative")
	}
	return nil
}

// spec is a deployment's desired state, as the deployments bucket holds
// it.
type spec struct {
	ID       string    `json:"id"`
	Model    string    `json:"model"`
	Device   string    `json:"device"`
	MaxBatch int       `json:"max_batch_size"`
	Replicas int       `json:"replicas"`
	Owner    string    `json:"owned_by"`
	Node     string    `json:"node,omitempty"` // required node, if any
	Created  time.Time `json:"created"`
	// Options are the device's (DeploymentSpec.Config.Options).
	Options map[string]string `json:"device_options,omitempty"`
}

// lease is who runs a deployment, and how it is doing there.
type lease struct {
	Node    string         `json:"node"`
	Status  runtime.Status `json:"status"`
	Failure string         `json:"failure,omitempty"`
	Active  int            `json:"active"`
	Queued  int            `json:"queued"`
	// Handover says the holder is leaving: another node may claim the
	// deployment at once, and the holder serves it until that node's copy
	// is ready (Leave).
	Handover bool `json:"handover,omitempty"`
}

type leaseEntry struct {
	lease
	rev  uint64
	seen time.Time // when this revision arrived
}

// member is a node as the members bucket remembers it, alive or not.
type member struct {
	Devices []string  `json:"devices"`
	Joined  time.Time `json:"joined"`
}

// Node is one Neuro node in a cluster: it wraps the node's runtime and
// answers every httpapi.Backend call for the whole cluster. It is safe
// for concurrent use.
type Node struct {
	o   Options
	log *slog.Logger
	rt  *runtime.Runtime
	nc  *nats.Conn
	js  jetstream.JetStream
	tel *runtime.Telemetry // the cluster's records

	nets, deps, leases, alive, members, keys, config jetstream.KeyValue
	responses, usage                                 jetstream.KeyValue // stored responses; quota records (usage.go)
	programs                                         jetstream.ObjectStore

	ctx    context.Context // ends when the node leaves
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan struct{}
	telq   chan runtime.Record
	// telStop asks the telemetry writer to write what is queued and
	// end; telDone is closed when it has.
	telStop, telDone chan struct{}

	mu        sync.Mutex
	specs     map[string]spec
	leaseOf   map[string]leaseEntry
	netOf     map[string]netMeta
	memberOf  map[string]member
	aliveSeen map[string]aliveEntry
	// The views before a watch's replay, whose revisions keep their times.
	leaseBefore map[string]leaseEntry
	aliveBefore map[string]aliveEntry
	goneAt      map[string]time.Time          // nodes whose connection a probe found gone (presence.go)
	replaying   atomic.Int32                  // watches replaying their bucket after a stall
	leaving     bool                          // Leave: claim nothing, hand everything over
	failReads   atomic.Pointer[error]         // tests: settleConflict's reads of a lease fail with this
	handing     map[string]owned              // handed over, served until the new holder is ready (leave.go)
	serving     map[string]int                // calls accepted per deployment, not yet finished
	stopping    map[string]chan struct{}      // copies retiring once their calls end; closed when undeployed (leave.go)
	owned       map[string]*owned             // deployments this node runs for the cluster
	subs        map[string]*nats.Subscription // the deployments this node serves
	watchers    []*watcher

	mux     *mux                 // the calls this node makes
	cancels cancels              // the calls this node serves
	own     []*nats.Subscription // of mux and cancels
	left    bool

	telRead   atomic.Value  // jetstream.ConsumeContext of the telemetry reader
	telSeq    atomic.Uint64 // the last stream sequence read
	telBehind time.Time     // since when the reader has been behind (loop only)
}

// owned is a cluster deployment this node holds the lease of.
type owned struct {
	rev     uint64    // the lease's revision
	renewed time.Time // last successful renewal
	last    lease     // what that renewal wrote
	spec    spec
}

var _ httpapi.Backend = (*Node)(nil)
var _ httpapi.NodeLister = (*Node)(nil)

// Join joins the cluster that nc reaches, with rt as this node's
// runtime: it creates the buckets and streams it needs (or uses those
// there), registers every network stored in the cluster in rt, and
// starts serving. rt keeps the program's own models and deployments
// (those every node has); the cluster's are added to it as they come.
// The caller keeps nc and rt, and closes them after Close.
func Join(ctx context.Context, nc *nats.Conn, rt *runtime.Runtime, opts *Options) (*Node, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Prefix == "" {
		o.Prefix = "neuro"
	}
	if o.Devices == nil {
		o.Devices = hal.Devices()
	}
	if o.LeaseTTL == 0 {
		o.LeaseTTL = 10 * time.Second
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = time.Second
	}
	if o.MaxDeployments == 0 {
		o.MaxDeployments = runtime.DefaultQuotaDeployments
	}
	if o.Replicas == 0 {
		o.Replicas = min(3, max(1, len(nc.Servers())))
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	n := &Node{o: o, log: log.With("node", o.Name), rt: rt, nc: nc, js: js,
		tel: runtime.NewTelemetry(0, nil), kick: make(chan struct{}, 1), telq: make(chan runtime.Record, 4096), telStop: make(chan struct{}),
		specs: map[string]spec{}, leaseOf: map[string]leaseEntry{}, netOf: map[string]netMeta{},
		memberOf: map[string]member{}, aliveSeen: map[string]aliveEntry{}, goneAt: map[string]time.Time{}, serving: map[string]int{}, stopping: map[string]chan struct{}{}, owned: map[string]*owned{}, subs: map[string]*nats.Subscription{}}
	if err := n.open(ctx); err != nil {
		return nil, err
	}
	if err := n.listen(); err != nil {
		return nil, err
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	// Watch every bucket, and wait for what each holds now.
	type w struct {
		kv    jetstream.KeyValue
		apply func(jetstream.KeyValueEntry)
		reset func()
	}
	clear := func(m func()) func() {
		return func() {
			n.mu.Lock()
			m()
			n.mu.Unlock()
		}
	}
	ready := make(chan error, 6)
	// Specs and networks are not forgotten before a replay: an empty
	// view would stop deployments and unregister networks.
	for _, x := range []w{{n.nets, n.applyNetwork, nil}, {n.deps, n.applySpec, nil},
		// A replay delivers old revisions again: they keep the time they
		// first arrived (leaseBefore, aliveBefore), or a dead node's last
		// lease and presence would look fresh.
		{n.leases, n.applyLease, clear(func() { n.leaseBefore, n.leaseOf = n.leaseOf, map[string]leaseEntry{} })},
		{n.members, n.applyMember, clear(func() { n.memberOf = map[string]member{} })},
		{n.alive, n.applyAlive, clear(func() { n.aliveBefore, n.aliveSeen = n.aliveSeen, map[string]aliveEntry{} })}} {
		n.watch(x.kv, x.apply, x.reset, ready)
	}
	for range 5 {
		select {
		case err := <-ready:
			if err != nil {
				n.stop()
				return nil, err
			}
		case <-ctx.Done():
			n.stop()
			return nil, ctx.Err()
		}
	}
	if err := n.startTelemetry(ctx); err != nil {
		n.stop()
		return nil, err
	}
	me, _ := json.Marshal(member{Devices: o.Devices, Joined: time.Now()})
	if err := retry(ctx, func(ctx context.Context) error { _, err := n.members.Put(ctx, o.Name, me); return err }); err != nil {
		n.stop()
		return nil, fmt.Errorf("cluster: joining: %w", err)
	}
	n.wg.Add(2)
	go n.loop()
	go n.probeHolders()
	n.log.Info("joined the cluster", "devices", o.Devices, "replicas", o.Replicas, "lease_ttl", o.LeaseTTL)
	return n, nil
}

// Name is the node's name.
func (n *Node) Name() string { return n.o.Name }

// Runtime is the node's own runtime.
func (n *Node) Runtime() *runtime.Runtime { return n.rt }

// listen makes the node's two long-lived subscriptions for routed
// calls (mux.go).
func (n *Node) listen() error {
	n.mux = newMux(n.subject("call", n.o.Name))
	n.cancels.m = map[string]context.CancelFunc{}
	calls, err := n.nc.Subscribe(n.subject("call", n.o.Name, ">"), n.mux.dispatch)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	calls.SetPendingLimits(-1, -1) // dispatch only queues: each call bounds its own
	cancels, err := n.nc.Subscribe(n.subject("cancel", n.o.Name), n.cancels.receive)
	if err != nil {
		calls.Unsubscribe()
		return fmt.Errorf("cluster: %w", err)
	}
	applied, err := n.nc.Subscribe(n.subject("applied", n.o.Name), n.answerApplied)
	if err != nil {
		calls.Unsubscribe()
		cancels.Unsubscribe()
		return fmt.Errorf("cluster: %w", err)
	}
	n.own = []*nats.Subscription{calls, cancels, applied}
	return nil
}

func (n *Node) unlisten() {
	for _, s := range n.own {
		s.Unsubscribe()
	}
}

func (n *Node) bucket(s string) string { return n.o.Prefix + "_" + s }

func (n *Node) subject(parts ...string) string {
	s := n.o.Prefix
	for _, p := range parts {
		s += "." + p
	}
	return s
}

// open creates (or finds) the buckets, the object store and the
// telemetry stream.
func (n *Node) open(ctx context.Context) error {
	kv := func(name string, ttl time.Duration) (jetstream.KeyValue, error) {
		cfg := jetstream.KeyValueConfig{Bucket: n.bucket(name), History: 1, TTL: ttl, Replicas: n.o.Replicas, Storage: jetstream.FileStorage}
		var b jetstream.KeyValue
		err := retry(ctx, func(ctx context.Context) (err error) {
			b, err = n.js.CreateOrUpdateKeyValue(ctx, cfg)
			return err
		})
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrJetStreamNotEnabled) {
			return nil, fmt.Errorf("cluster: the NATS servers run without JetStream; start them with -js: %w", err)
		}
		if err != nil {
			return nil, fmt.Errorf("cluster: bucket %s: %w", cfg.Bucket, err)
		}
		return b, nil
	}
	var err error
	if n.nets, err = kv("networks", 0); err != nil {
		return err
	}
	if n.deps, err = kv("deployments", 0); err != nil {
		return err
	}
	if n.leases, err = kv("leases", n.o.LeaseTTL); err != nil {
		return err
	}
	if n.alive, err = kv("alive", n.o.LeaseTTL); err != nil {
		return err
	}
	if n.members, err = kv("members", 0); err != nil {
		return err
	}
	if n.keys, err = kv("keys", 0); err != nil {
		return err
	}
	if n.config, err = kv("config", 0); err != nil {
		return err
	}
	// A stored response's own expiry is checked when it is read; the
	// bucket's TTL removes it in the end.
	if n.responses, err = kv("responses", n.rt.Quota().ResponseTTL); err != nil {
		return err
	}
	if n.usage, err = kv("usage", 0); err != nil {
		return err
	}
	err = retry(ctx, func(ctx context.Context) (err error) {
		n.programs, err = n.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: n.bucket("programs"), Replicas: n.o.Replicas, Storage: jetstream.FileStorage})
		return err
	})
	if err != nil {
		return fmt.Errorf("cluster: object store: %w", err)
	}
	err = retry(ctx, func(ctx context.Context) error {
		_, err := n.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
			Name: n.bucket("telemetry"), Subjects: []string{n.subject("telemetry", ">")}, Replicas: n.o.Replicas,
			Storage: jetstream.FileStorage, MaxAge: 7 * 24 * time.Hour, MaxBytes: 1 << 30, Discard: jetstream.DiscardOld,
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("cluster: telemetry stream: %w", err)
	}
	return nil
}

// adminAttempt is how long one JetStream request made while joining
// waits for its answer. A request that reaches the cluster while it
// elects a new meta or stream leader (a server was just lost) gets no
// answer at all; it is sent again rather than left to wait out the
// caller's whole deadline.
const adminAttempt = 3 * time.Second

// retry runs f, each try under a deadline of adminAttempt, until it
// succeeds, fails in a way another try cannot mend, or ctx ends.
func retry(ctx context.Context, f func(context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, adminAttempt)
		err := f(actx)
		cancel()
		if err == nil || ctx.Err() != nil || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// transient tells whether a JetStream request may succeed when sent
// again: it got no answer, or the cluster said it is briefly
// unavailable. No responders at all means the servers run without
// JetStream, which another try does not mend.
func transient(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) {
		return api.Code == 503 && api.ErrorCode != jetstream.JSErrCodeJetStreamNotEnabled && api.ErrorCode != jetstream.JSErrCodeJetStreamNotEnabledForAccount
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) || errors.Is(err, jetstream.ErrNoStreamResponse)
}

// watcher follows one bucket into the node's view of it.
type watcher struct {
	kv     jetstream.KeyValue
	apply  func(jetstream.KeyValueEntry)
	reset  func() // forgets the view before a replay
	cancel context.CancelFunc
	last   atomic.Uint64 // the last revision applied
	behind time.Time     // since when the bucket has had newer ones
}

// watch applies every change of a bucket, beginning with what it holds
// now; ready gets nil once that is applied.
func (n *Node) watch(kv jetstream.KeyValue, apply func(jetstream.KeyValueEntry), reset func(), ready chan<- error) {
	w := &watcher{kv: kv, apply: apply, reset: reset}
	n.mu.Lock()
	n.watchers = append(n.watchers, w)
	n.mu.Unlock()
	n.follow(w, ready, false)
}

// follow starts a watch; replaying says the view was reset and
// n.replaying counts this watch until its replay is applied.
func (n *Node) follow(w *watcher, ready chan<- error, replaying bool) {
	ctx, cancel := context.WithCancel(n.ctx)
	w.cancel = cancel
	done := func() {
		if replaying {
			replaying = false
			n.replaying.Add(-1)
		}
	}
	kw, err := w.kv.WatchAll(ctx)
	if err != nil {
		done()
		if ready != nil {
			ready <- fmt.Errorf("cluster: watching %s: %w", w.kv.Bucket(), err)
		}
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		defer kw.Stop()
		defer done()
		initial := true
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-kw.Updates():
				if !ok {
					return
				}
				if e == nil {
					if initial && ready != nil {
						ready <- nil
					}
					initial = false
					done()
					n.poke()
					continue
				}
				w.apply(e)
				w.last.Store(e.Revision()) // after: awaitApplied reads it as done
				n.poke()
			}
		}
	}()
}

// checkWatches starts a watch again when its bucket has held newer
// revisions than it applied for a LeaseTTL: a watch can stall when the
// NATS server it was reading from is lost.
func (n *Node) checkWatches() {
	n.mu.Lock()
	ws := slices.Clone(n.watchers)
	n.mu.Unlock()
	for _, w := range ws {
		ctx, cancel := n.opCtx()
		st, err := w.kv.Status(ctx)
		cancel()
		bs, ok := st.(*jetstream.KeyValueBucketStatus)
		if err != nil || !ok {
			continue
		}
		if bs.StreamInfo().State.LastSeq <= w.last.Load() {
			w.behind = time.Time{}
			continue
		}
		if w.behind.IsZero() {
			w.behind = time.Now()
			continue
		}
		if time.Since(w.behind) > n.o.LeaseTTL {
			n.log.Warn("a watch stalled; starting it again", "bucket", w.kv.Bucket())
			w.behind = time.Time{}
			w.cancel()
			// Until the replay is applied the view is partial: reconcile
			// waits, or it would stop deployments it no longer sees.
			n.replaying.Add(1)
			if w.reset != nil {
				w.reset()
			}
			n.follow(w, nil, true)
		}
	}
}

// poke asks the loop to reconcile soon.
func (n *Node) poke() {
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

func deleted(e jetstream.KeyValueEntry) bool {
	return e.Operation() == jetstream.KeyValueDelete || e.Operation() == jetstream.KeyValuePurge
}

func (n *Node) applySpec(e jetstream.KeyValueEntry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if deleted(e) {
		delete(n.specs, e.Key())
		return
	}
	s, err := decodeSpec(e.Key(), e.Value())
	if err != nil {
		n.log.Error("a deployment's record is damaged", "deployment", e.Key(), "err", err)
		return
	}
	n.specs[e.Key()] = s
}

// decodeSpec reads the record another node stored under key in the
// deployments bucket. The node keeps specs by key and acts on them by
// ID, so the two must agree.
func decodeSpec(key string, b []byte) (spec, error) {
	var s spec
	if err := json.Unmarshal(b, &s); err != nil {
		return spec{}, fmt.Errorf("cluster: deployment record %q: %w", key, err)
	}
	if s.ID != key {
		return spec{}, fmt.Errorf("cluster: deployment record %q names deployment %q", key, s.ID)
	}
	return s, nil
}

func (n *Node) applyLease(e jetstream.KeyValueEntry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if deleted(e) {
		delete(n.leaseOf, e.Key())
		return
	}
	l, err := decodeLease(e.Value())
	if err != nil {
		return
	}
	le := leaseEntry{lease: l, rev: e.Revision(), seen: time.Now()}
	if old, ok := n.leaseBefore[e.Key()]; ok && old.rev == le.rev {
		le.seen = old.seen
	}
	n.leaseOf[e.Key()] = le
}

// decodeLease reads a lease another node stored in the leases bucket.
func decodeLease(b []byte) (lease, error) {
	var l lease
	if err := json.Unmarshal(b, &l); err != nil {
		return lease{}, fmt.Errorf("cluster: lease: %w", err)
	}
	return l, nil
}

func (n *Node) applyMember(e jetstream.KeyValueEntry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if deleted(e) {
		delete(n.memberOf, e.Key())
		return
	}
	if m, err := decodeMember(e.Value()); err == nil {
		n.memberOf[e.Key()] = m
	}
}

// decodeMember reads a node's record in the members bucket.
func decodeMember(b []byte) (member, error) {
	var m member
	if err := json.Unmarshal(b, &m); err != nil {
		return member{}, fmt.Errorf("cluster: member: %w", err)
	}
	return m, nil
}

// aliveEntry is a revision of a node's presence and when it arrived.
type aliveEntry struct {
	rev  uint64
	seen time.Time
}

func (n *Node) applyAlive(e jetstream.KeyValueEntry) {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := e.Key()
	if deleted(e) {
		delete(n.aliveSeen, k)
		return
	}
	a := aliveEntry{rev: e.Revision(), seen: time.Now()}
	if old, ok := n.aliveBefore[k]; ok && old.rev == a.rev {
		a.seen = old.seen
	}
	n.aliveSeen[k] = a
}

// Nodes lists the nodes that have joined and not left, with whether
// each is answering now (it renewed its presence within LeaseTTL).
func (n *Node) Nodes() []httpapi.NodeStatus {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]httpapi.NodeStatus, 0, len(n.memberOf))
	for name := range n.memberOf {
		out = append(out, httpapi.NodeStatus{Name: name, Up: n.up(name), Self: name == n.o.Name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Close leaves the cluster: the node gives up its deployments' leases,
// so that other nodes take them over at once, stops serving, and
// forgets itself. It does not close the runtime or the connection.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.left {
		n.mu.Unlock()
		return nil
	}
	n.left = true
	subs := n.subs
	n.subs = map[string]*nats.Subscription{}
	mine := n.owned
	n.owned = map[string]*owned{}
	n.mu.Unlock()
	n.rt.Telemetry().Forward(nil)
	n.tel.Forward(nil)
	n.flushTelemetry()
	for _, s := range subs {
		s.Unsubscribe()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for id, ow := range mine {
		n.rt.Undeploy(id, ow.spec.Owner)
		if !n.nc.IsClosed() {
			n.leases.Delete(ctx, id, jetstream.LastRevision(ow.rev))
		}
	}
	if !n.nc.IsClosed() {
		n.alive.Delete(ctx, n.o.Name)
		n.members.Delete(ctx, n.o.Name)
	}
	n.stop()
	return nil
}

// stop ends the node's goroutines and subscriptions.
func (n *Node) stop() {
	n.cancel()
	n.unlisten()
	n.wg.Wait()
}

func (n *Node) hasDevice(d string) bool { return slices.Contains(n.o.Devices, d) }
