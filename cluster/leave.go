package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/neuro-go/neuro/runtime"
)

// Leave hands this node's deployments over before it stops: the node
// claims nothing more, marks its leases for handover (another node with
// the device claims each at once and loads it), serves each deployment
// until its new holder reports it ready or ctx ends, then stops it once
// the requests running on it have finished. A deployment pinned to this
// node cannot move: it is stopped the same way, after its running
// requests. Call Leave before the program's HTTP server stops, so that
// requests keep being answered throughout, and Close after it.
func (n *Node) Leave(ctx context.Context) error {
	n.mu.Lock()
	if n.left || n.leaving {
		n.mu.Unlock()
		return nil
	}
	n.leaving = true
	n.handing = map[string]owned{}
	n.mu.Unlock()
	n.log.Info("leaving the cluster: handing the deployments over")
	n.poke() // the loop renews every lease with Handover set
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for !n.handoverDone() {
		select {
		case <-ctx.Done():
			pending := n.pendingHandovers()
			n.log.Warn("leaving before every deployment was ready elsewhere", "pending", pending, "err", ctx.Err())
			n.stopHanded()
			return fmt.Errorf("cluster: leaving: %w (not yet ready elsewhere: %s)", ctx.Err(), strings.Join(pending, ", "))
		case <-t.C:
			n.poke()
		}
	}
	n.stopHanded()
	return nil
}

// handedOver records a deployment whose lease another node took while
// this one leaves: it keeps serving until the new copy is ready.
func (n *Node) handedOver(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ow, ok := n.owned[id]; ok {
		delete(n.owned, id)
		n.handing[id] = *ow
		n.log.Info("handed a deployment over", "deployment", id, "to", n.leaseOf[id].Node)
	}
}

// handoverDone reports whether every deployment this node held is either
// pinned here or ready on another node.
func (n *Node) handoverDone() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, ow := range n.owned {
		if ow.spec.Node != n.o.Name {
			return false // not taken yet
		}
	}
	for id := range n.handing {
		if l := n.leaseOf[id]; l.Node == n.o.Name || l.Status != runtime.StatusReady {
			return false
		}
	}
	return true
}

// pendingHandovers names the deployments not yet ready elsewhere, with
// what their leases say.
func (n *Node) pendingHandovers() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for id, ow := range n.owned {
		if ow.spec.Node != n.o.Name {
			out = append(out, id+" (not claimed)")
		}
	}
	for id := range n.handing {
		if l := n.leaseOf[id]; l.Node == n.o.Name || l.Status != runtime.StatusReady {
			out = append(out, fmt.Sprintf("%s (%s on %q)", id, l.Status, l.Node))
		}
	}
	sort.Strings(out)
	return out
}

// stopHanded stops the deployments handed over, each after the calls
// it accepted have ended, waiting for that at most catchUpWait.
func (n *Node) stopHanded() {
	n.mu.Lock()
	handing := n.handing
	n.handing = map[string]owned{}
	n.mu.Unlock()
	var stopped []<-chan struct{}
	for id, ow := range handing {
		stopped = append(stopped, n.retire(id, ow.spec.Owner))
	}
	deadline := time.NewTimer(catchUpWait)
	defer deadline.Stop()
	for _, done := range stopped {
		select {
		case <-done:
		case <-deadline.C:
			return
		}
	}
}

// retire stops this node's copy of a deployment without failing a call
// routed to it. The copy leaves its subject, and a call that still
// arrives is answered "gone" (its node tries the one that holds the
// deployment now). The copy is undeployed once the calls it accepted
// have ended, or when the node closes; the channel returned closes then.
// Until it does, the node does not claim the deployment again.
func (n *Node) retire(id, owner string) <-chan struct{} {
	n.mu.Lock()
	done, first := n.retireLocked(id)
	n.mu.Unlock()
	if first {
		n.finishRetire(id, owner, done)
	}
	return done
}

// retireLocked marks a copy retiring and takes it off its subject, with
// n.mu held. first is false when the copy was retiring already; when it
// is true, the caller then calls finishRetire.
func (n *Node) retireLocked(id string) (done chan struct{}, first bool) {
	if done, ok := n.stopping[id]; ok {
		return done, false
	}
	done = make(chan struct{})
	n.stopping[id] = done
	if sub, ok := n.subs[id]; ok {
		sub.Unsubscribe()
		delete(n.subs, id)
	}
	return done, true
}

// finishRetire undeploys a retiring copy now when no call is counted on
// it, else once the last one ends, on a goroutine of its own.
func (n *Node) finishRetire(id, owner string, done chan struct{}) {
	busy := func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		return n.serving[id] > 0
	}
	finish := func() {
		n.rt.Undeploy(id, owner)
		n.mu.Lock()
		delete(n.stopping, id)
		n.mu.Unlock()
		close(done)
	}
	if !busy() {
		finish()
		return
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for busy() && n.ctx.Err() == nil {
			select {
			case <-n.ctx.Done():
			case <-t.C:
			}
		}
		finish()
		n.poke() // the deployment may be claimed here again
	}()
}
