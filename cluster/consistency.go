package cluster

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// What one node has answered, every node must say. A node's view of a
// bucket comes from its watch, which delivers another node's change a
// few milliseconds after it is stored. So a node that changes a bucket
// (a deployment created, ready or deleted; a network stored or deleted)
// answers only once every live node has applied the change
// (awaitApplied: each is asked on <prefix>.applied.<node> and answers
// when its watch has caught up), within catchUpWait: the next request,
// on any node, sees it. Reads then cost nothing. A node that finds no
// route for a deployment it does not know still catches up before it
// answers (catchUp), and a call that finds no node serving a deployment
// the cluster has is tried again while it moves (retryUnserved).

// catchUpWait bounds how long a request waits for this node's view to
// reach the cluster's.
const catchUpWait = 2 * time.Second

// catchUp waits until the watch of kv has applied every revision the
// bucket held when it was called; it reports whether it got there.
func (n *Node) catchUp(kv jetstream.KeyValue) bool {
	ctx, cancel := context.WithTimeout(n.ctx, catchUpWait)
	defer cancel()
	st, err := kv.Status(ctx)
	if err != nil {
		return false
	}
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok {
		return false
	}
	last := bs.StreamInfo().State.LastSeq
	w := n.watcherOf(kv.Bucket())
	if w == nil {
		return false
	}
	for w.last.Load() < last {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(2 * time.Millisecond):
		}
	}
	return true
}

// waitReplay waits, within catchUpWait, while a watch replays its bucket
// after a stall: its view is partial until the replay is applied.
func (n *Node) waitReplay() {
	if n.replaying.Load() == 0 {
		return
	}
	deadline := time.Now().Add(catchUpWait)
	for n.replaying.Load() > 0 && time.Now().Before(deadline) && n.ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
}

// appliedReq asks a node to answer once its watch of Bucket has applied
// revision Rev.
type appliedReq struct {
	Bucket string `json:"bucket"`
	Rev    uint64 `json:"rev"`
}

// answerApplied answers an appliedReq when the watch has caught up, or
// after catchUpWait.
func (n *Node) answerApplied(m *nats.Msg) {
	var req appliedReq
	if decode(m.Data, &req) != nil {
		return
	}
	w := n.watcherOf(req.Bucket)
	if w == nil {
		m.Respond(nil)
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		deadline := time.Now().Add(catchUpWait)
		for w.last.Load() < req.Rev && time.Now().Before(deadline) && n.ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		m.Respond(nil)
	}()
}

func (n *Node) watcherOf(bucket string) *watcher {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, w := range n.watchers {
		if w.kv.Bucket() == bucket {
			return w
		}
	}
	return nil
}

// awaitApplied waits until every live node has applied revision rev of
// kv (0: the bucket's last revision now), within catchUpWait. A node
// that does not answer in time (dead, cut off) is not waited for longer.
func (n *Node) awaitApplied(kv jetstream.KeyValue, rev uint64) {
	ctx, cancel := context.WithTimeout(n.ctx, catchUpWait)
	defer cancel()
	if rev == 0 {
		st, err := kv.Status(ctx)
		if err != nil {
			return
		}
		bs, ok := st.(*jetstream.KeyValueBucketStatus)
		if !ok {
			return
		}
		rev = bs.StreamInfo().State.LastSeq
	}
	body, _ := encode(appliedReq{Bucket: kv.Bucket(), Rev: rev})
	n.mu.Lock()
	var nodes []string
	for name := range n.memberOf {
		if n.up(name) {
			nodes = append(nodes, name)
		}
	}
	n.mu.Unlock()
	var wg sync.WaitGroup
	for _, name := range nodes {
		wg.Go(func() { n.nc.RequestWithContext(ctx, n.subject("applied", name), body) })
	}
	wg.Wait()
}

// retryUnserved calls f again while it fails because no node serves a
// deployment that the cluster says exists (it is moving, or its new
// holder is subscribing), within catchUpWait.
func (n *Node) retryUnserved(ctx context.Context, id string, f func() error) error {
	deadline := time.Now().Add(catchUpWait)
	for {
		err := f()
		if !errors.Is(err, errUnserved) || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		n.catchUp(n.leases)
		n.mu.Lock()
		_, known := n.specs[id]
		n.mu.Unlock()
		if !known {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}
