package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/neuro-go/neuro/runtime"
)

// errUnserved is wrapped when no node answers a deployment's subject.
var errUnserved = errors.New("unserved")

// acceptTimeout bounds the wait for a serving node to take a call.
const acceptTimeout = 5 * time.Second

// route says where a request for a deployment (or, with id empty, for
// a model) runs: here (the runtime then answers, errors included), or
// on another node, through the subject returned. A call that runs on
// this node's copy of a cluster deployment counts as served until done
// is called, so that the copy is not retired under it.
func (n *Node) route(id, model string) (subject string, remote bool, done func()) {
	n.waitReplay()
	done = func() {}
	if id != "" {
		local, ok := n.holdLocal(id)
		if local && ok {
			done = func() { n.served(id) }
		}
		if !local && !ok && n.catchUp(n.deps) { // created a moment ago on another node?
			n.mu.Lock()
			_, ok = n.specs[id]
			n.mu.Unlock()
		}
		if local || !ok {
			return "", false, done
		}
		return n.subject("dep", token(id)), true, done
	}
	if _, err := n.rt.DeploymentFor(model); err == nil {
		return "", false, done
	}
	m, err := n.rt.Model(model)
	if err != nil {
		return "", false, done
	}
	best, load := "", 0
	n.mu.Lock()
	for dep, s := range n.specs {
		l, ok := n.leaseOf[dep]
		if s.Model != m.ID || !ok || l.Status != runtime.StatusReady || time.Since(l.seen) > n.o.LeaseTTL {
			continue
		}
		if best == "" || l.Active+l.Queued < load || l.Active+l.Queued == load && dep < best {
			best, load = dep, l.Active+l.Queued
		}
	}
	n.mu.Unlock()
	if best == "" {
		return "", false, done
	}
	return n.subject("dep", token(best)), true, done
}

// holdLocal reports whether a call for deployment id runs on this
// node's copy, and whether id is a cluster deployment (this node's view
// of it). A copy still loading (this node takes it over) leaves the calls
// to the node that serves it now, and a copy retiring leaves them to the
// new holder. A call on a cluster deployment's copy is counted as served.
func (n *Node) holdLocal(id string) (local, cluster bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, cluster = n.specs[id]
	_, retiring := n.stopping[id]
	d, err := n.rt.Deployment(id)
	local = err == nil && !retiring && (d.Status() == runtime.StatusReady || !cluster)
	if local && cluster {
		n.serving[id]++
	}
	return local, cluster
}

// served ends a call counted on deployment id.
func (n *Node) served(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.serving[id]--; n.serving[id] == 0 {
		delete(n.serving, id)
	}
}

// Generate runs a request here or on the node that serves its
// deployment, streaming the events token by token. A serving node that
// stops answering ends the request with runtime.ErrDeviceUnavailable
// after 3 heartbeats.
func (n *Node) Generate(ctx context.Context, req *runtime.Request, fn func(runtime.Event) error) (*runtime.Result, error) {
	subj, remote, done := n.route(req.Deployment, req.Model)
	defer done()
	if !remote {
		return n.rt.Generate(ctx, req, fn)
	}
	start := time.Now()
	var rep *reply
	err := n.retryUnserved(ctx, req.Deployment, func() (err error) {
		rep, err = n.call(ctx, subj, &call{Kind: "gen", Gen: req, Stream: fn != nil}, fn)
		return err
	})
	if err != nil && rep == nil {
		n.tel.RecordError(req.Principal, req.Endpoint, req.Model, time.Since(start))
	}
	if err != nil {
		return nil, err
	}
	return rep.Result, nil
}

// Run runs samples on a network's deployment, here or where it runs.
func (n *Node) Run(ctx context.Context, req *runtime.RunRequest) (*runtime.RunResult, error) {
	subj, remote, done := n.route(req.Deployment, "")
	defer done()
	if !remote {
		return n.rt.Run(ctx, req)
	}
	start := time.Now()
	var rep *reply
	err := n.retryUnserved(ctx, req.Deployment, func() (err error) {
		rep, err = n.call(ctx, subj, &call{Kind: "run", Run: req}, nil)
		return err
	})
	if err != nil && rep == nil {
		n.tel.RecordError(req.Principal, req.Endpoint, req.Model, time.Since(start))
	}
	if err != nil {
		return nil, err
	}
	return rep.Run, nil
}

// call sends a call to whichever node serves subj and waits for its
// result, passing events to fn. The reply is nil when the call never
// reached an answer (no node, a node that stopped answering): then the
// serving node has recorded nothing, and the caller records the error.
func (n *Node) call(ctx context.Context, subj string, c *call, fn func(runtime.Event) error) (*reply, error) {
	inbox, p := n.mux.open()
	defer n.mux.close(inbox)
	c.Inbox = inbox
	body, err := encode(c)
	if err != nil {
		return nil, err
	}
	actx, cancel := context.WithTimeout(ctx, acceptTimeout)
	msg, err := n.nc.RequestWithContext(actx, subj, body)
	cancel()
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil, fmt.Errorf("%w: %w: no node serves %s now (it may be moving to another node)", runtime.ErrDeviceUnavailable, errUnserved, subj)
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, fmt.Errorf("%w: routing to %s: %v", runtime.ErrDeviceUnavailable, subj, err)
	}
	var acc accept
	if err := decode(msg.Data, &acc); err != nil {
		return nil, fmt.Errorf("%w: a bad answer from %s", runtime.ErrDeviceUnavailable, subj)
	}
	if acc.Gone {
		return nil, fmt.Errorf("%w: %w: node %s no longer serves %s", runtime.ErrDeviceUnavailable, errUnserved, acc.Node, subj)
	}
	if acc.Err != nil {
		return &reply{}, acc.Err.err()
	}
	abandon := func() {
		if nameRE.MatchString(acc.Node) {
			n.nc.Publish(n.subject("cancel", acc.Node), []byte(inbox))
		}
	}
	silence := 3 * n.o.Heartbeat
	for {
		m, err := p.next(ctx, n.o.Heartbeat)
		if err != nil {
			if ctx.Err() != nil {
				abandon()
				return &reply{}, ctx.Err() // the serving node records the cancelled request
			}
			if errors.Is(err, nats.ErrTimeout) && time.Since(time.Unix(0, p.heard.Load())) < silence {
				continue
			}
			if errors.Is(err, nats.ErrTimeout) {
				err = fmt.Errorf("node %s stopped answering", acc.Node)
			}
			abandon()
			return nil, fmt.Errorf("%w: %v", runtime.ErrDeviceUnavailable, err)
		}
		var r reply
		if err := decode(m.Data, &r); err != nil {
			abandon()
			return nil, fmt.Errorf("%w: a bad message from node %s", runtime.ErrDeviceUnavailable, acc.Node)
		}
		if r.Done {
			return &r, r.Err.err()
		}
		if r.Event != nil && fn != nil {
			if err := fn(*r.Event); err != nil {
				abandon()
				return &reply{}, err
			}
		}
		if ctx.Err() != nil {
			abandon()
			return &reply{}, ctx.Err()
		}
	}
}

// syncSubscriptions serves, on the deployment's subject, each local
// deployment that is ready, and stops serving the others. Nodes that
// serve one deployment (the program's own, which every node has) share
// a queue group: NATS gives each call to one of them.
func (n *Node) syncSubscriptions() {
	ready := map[string]bool{}
	for _, d := range n.rt.Deployments() {
		if d.Status() == runtime.StatusReady {
			ready[d.ID] = true
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.left {
		return
	}
	for id, s := range n.subs {
		if !ready[id] {
			s.Unsubscribe()
			delete(n.subs, id)
		}
	}
	for id := range ready {
		if _, ok := n.subs[id]; ok || n.stopping[id] != nil {
			continue
		}
		s, err := n.nc.QueueSubscribe(n.subject("dep", token(id)), "neuro", n.serve)
		if err != nil {
			n.log.Error("cannot serve a deployment", "deployment", id, "err", err)
			continue
		}
		n.subs[id] = s
	}
}

// serve takes a call and runs it on its own goroutine (a subscription's
// handler runs one message at a time).
func (n *Node) serve(m *nats.Msg) {
	var c call
	if err := decode(m.Data, &c); err != nil || c.Inbox == "" || (c.Gen == nil) == (c.Run == nil) {
		b, _ := encode(&accept{Node: n.o.Name, Err: toWire(&runtime.ParamError{Param: "call", Msg: "a malformed call"})})
		m.Respond(b)
		return
	}
	id := c.deployment()
	n.mu.Lock()
	_, err := n.rt.Deployment(id)
	_, retiring := n.stopping[id]
	gone := id != "" && (err != nil || retiring)
	if id != "" && !gone {
		n.serving[id]++ // retire waits for it
	}
	n.mu.Unlock()
	if gone {
		// Handed over or dropped since the call was routed here.
		b, _ := encode(&accept{Node: n.o.Name, Gone: true})
		m.Respond(b)
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.run(m, &c)
		if id != "" {
			n.served(id)
		}
	}()
}

// deployment is the deployment a call names, if any.
func (c *call) deployment() string {
	if c.Gen != nil {
		return c.Gen.Deployment
	}
	return c.Run.Deployment
}

func (n *Node) run(m *nats.Msg, c *call) {
	ctx, cancel := context.WithCancel(n.ctx)
	defer cancel()
	n.cancels.add(c.Inbox, cancel)
	defer n.cancels.remove(c.Inbox)
	b, _ := encode(&accept{Node: n.o.Name})
	if err := m.Respond(b); err != nil {
		return
	}
	go n.ping(ctx, c.Inbox+".hb", cancel)
	var (
		r   reply
		err error
	)
	switch c.Kind {
	case "gen":
		var fn func(runtime.Event) error
		if c.Stream {
			fn = func(ev runtime.Event) error {
				b, err := encode(&reply{Event: &ev})
				if err != nil {
					return err
				}
				// A publish that fails is this node's connection going
				// (a write to a closed socket): the caller must see the
				// node unavailable, as when it stops answering.
				if err := n.nc.Publish(c.Inbox, b); err != nil {
					return fmt.Errorf("%w: streaming to the caller: %v", runtime.ErrDeviceUnavailable, err)
				}
				return nil
			}
		}
		r.Result, err = n.rt.Generate(ctx, c.Gen, fn)
	case "run":
		r.Run, err = n.rt.Run(ctx, c.Run)
	default:
		err = &runtime.ParamError{Param: "call", Msg: fmt.Sprintf("unknown kind %q", c.Kind)}
	}
	r.Err, r.Done = toWire(err), true
	out, err := encode(&r)
	if err == nil {
		err = n.nc.Publish(c.Inbox, out)
	}
	if err != nil { // too large for the connection's max_payload, say
		out, _ = encode(&reply{Done: true, Err: toWire(fmt.Errorf("%w: cannot send the result: %v", runtime.ErrInvalidRequest, err))})
		n.nc.Publish(c.Inbox, out)
	}
}

// ping tells the caller this node is alive every heartbeat, and cancels
// the call when the caller is gone (its node no longer waits for the
// call, or no one listens on its inbox) or has not answered 3 pings in
// a row.
func (n *Node) ping(ctx context.Context, subj string, cancel func()) {
	t := time.NewTicker(n.o.Heartbeat)
	defer t.Stop()
	missed := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m, err := n.nc.Request(subj, nil, n.o.Heartbeat)
		switch {
		case err == nil && bytes.Equal(m.Data, callGone):
			cancel()
			return
		case err == nil:
			missed = 0
		case errors.Is(err, nats.ErrNoResponders):
			cancel()
			return
		default:
			if missed++; missed >= 3 {
				cancel()
				return
			}
		}
	}
}
