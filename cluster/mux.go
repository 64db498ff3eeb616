package cluster

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// A node's routed calls share two subscriptions made when it joins, so
// that a call makes and removes none (each subscription is gossiped to
// every NATS server):
//
//   - <prefix>.call.<node>.> takes what serving nodes send back: a
//     call's accept, events and result on <prefix>.call.<node>.<id>,
//     and the serving node's heartbeats on <prefix>.call.<node>.<id>.hb,
//     which it answers (gone, when the call has ended);
//   - <prefix>.cancel.<node> takes the calls that a caller abandons,
//     its body naming the call's inbox.
//
// The dispatcher only queues each message on its call, so a slow
// consumer (a stream written to a slow HTTP client) holds up no other
// call.

// callGone answers a heartbeat for a call its caller no longer waits
// for.
var callGone = []byte("gone")

// maxQueued bounds the bytes a call may have waiting to be read: a
// consumer that falls this far behind loses the call.
const maxQueued = 256 << 20

// mux demultiplexes the messages to a node's calls by id.
type mux struct {
	prefix string // <prefix>.call.<node>.
	next   atomic.Uint64

	mu    sync.Mutex
	calls map[string]*pending
}

// pending is one call's queue of messages.
type pending struct {
	heard atomic.Int64 // when the serving node was last heard, UnixNano
	ready chan struct{}

	mu      sync.Mutex
	queue   []*nats.Msg
	bytes   int
	overrun bool
}

func newMux(prefix string) *mux {
	return &mux{prefix: prefix + ".", calls: map[string]*pending{}}
}

// open starts a call: its inbox, and the queue its messages arrive on.
func (x *mux) open() (string, *pending) {
	id := strconv.FormatUint(x.next.Add(1), 36)
	p := &pending{ready: make(chan struct{}, 1)}
	p.heard.Store(time.Now().UnixNano())
	x.mu.Lock()
	x.calls[id] = p
	x.mu.Unlock()
	return x.prefix + id, p
}

// close ends a call: what still arrives for it is dropped, and its
// serving node's next heartbeat hears that it is gone.
func (x *mux) close(inbox string) {
	x.mu.Lock()
	delete(x.calls, strings.TrimPrefix(inbox, x.prefix))
	x.mu.Unlock()
}

// dispatch takes every message of the node's calls.
func (x *mux) dispatch(m *nats.Msg) {
	rest, ok := strings.CutPrefix(m.Subject, x.prefix)
	if !ok {
		return
	}
	id, hb := strings.CutSuffix(rest, ".hb")
	x.mu.Lock()
	p := x.calls[id]
	x.mu.Unlock()
	if hb {
		if p == nil {
			m.Respond(callGone)
			return
		}
		p.heard.Store(time.Now().UnixNano())
		m.Respond(nil)
		return
	}
	if p == nil {
		return
	}
	p.heard.Store(time.Now().UnixNano())
	p.mu.Lock()
	if p.bytes += len(m.Data); p.bytes > maxQueued {
		p.overrun, p.queue = true, nil
	} else if !p.overrun {
		p.queue = append(p.queue, m)
	}
	p.mu.Unlock()
	select {
	case p.ready <- struct{}{}:
	default:
	}
}

// errOverrun ends a call whose consumer fell more than maxQueued bytes
// behind.
var errOverrun = fmt.Errorf("more than %d MiB of the call's messages waiting to be read", maxQueued>>20)

// next waits up to d for the call's next message.
func (p *pending) next(ctx context.Context, d time.Duration) (*nats.Msg, error) {
	var t *time.Timer
	for {
		p.mu.Lock()
		if p.overrun {
			p.mu.Unlock()
			return nil, errOverrun
		}
		if len(p.queue) > 0 {
			m := p.queue[0]
			p.queue[0] = nil
			p.queue = p.queue[1:]
			p.bytes -= len(m.Data)
			p.mu.Unlock()
			return m, nil
		}
		p.mu.Unlock()
		if t == nil {
			t = time.NewTimer(d)
			defer t.Stop()
		}
		select {
		case <-p.ready:
		case <-t.C:
			return nil, nats.ErrTimeout
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// cancels holds the cancel functions of the calls a node serves, by the
// caller's inbox.
type cancels struct {
	mu sync.Mutex
	m  map[string]context.CancelFunc
}

func (c *cancels) add(inbox string, cancel context.CancelFunc) {
	c.mu.Lock()
	c.m[inbox] = cancel
	c.mu.Unlock()
}

func (c *cancels) remove(inbox string) {
	c.mu.Lock()
	delete(c.m, inbox)
	c.mu.Unlock()
}

// receive cancels the call a caller abandoned.
func (c *cancels) receive(m *nats.Msg) {
	c.mu.Lock()
	cancel := c.m[string(m.Data)]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}
