package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
)

// A node's connection to NATS is its presence: the server drops the
// node's subscriptions with the connection, at once when the process
// dies. Every node probes the nodes that hold leases, on the heartbeat
// subject of a call that does not exist (<prefix>.call.<node>.probe.hb),
// which a live node answers "gone". A probe that finds no responders
// counts a miss; missesToGone in a row mark the node gone, and its
// deployments are claimed without waiting for their leases to lapse. A
// probe that times out (a node paused, or its CPU saturated) is not a
// miss: only a connection that is gone moves deployments early.

// missesToGone is how many probes in a row must find no responders.
const missesToGone = 3

// probeHolders runs until the node leaves.
func (n *Node) probeHolders() {
	defer n.wg.Done()
	every := n.o.LeaseTTL / 20
	t := time.NewTicker(every)
	defer t.Stop()
	misses := map[string]int{}
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
		for _, holder := range n.holders() {
			ctx, cancel := context.WithTimeout(n.ctx, max(every, 200*time.Millisecond))
			_, err := n.nc.RequestWithContext(ctx, n.subject("call", holder, "probe", "hb"), nil)
			cancel()
			switch {
			case errors.Is(err, nats.ErrNoResponders):
				misses[holder]++
			case err == nil:
				misses[holder] = 0
				n.setGone(holder, false)
			default: // a timeout, or this node's own connection: no verdict
				misses[holder] = 0
			}
			if misses[holder] == missesToGone {
				n.log.Info("a node's connection is gone; its deployments will move", "node", holder)
				n.setGone(holder, true)
				n.poke()
			}
		}
	}
}

// holders are the other nodes that hold leases.
func (n *Node) holders() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, l := range n.leaseOf {
		if l.Node != "" && l.Node != n.o.Name && !seen[l.Node] {
			seen[l.Node] = true
			out = append(out, l.Node)
		}
	}
	return out
}

func (n *Node) setGone(node string, gone bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if gone {
		n.goneAt[node] = time.Now()
	} else {
		delete(n.goneAt, node)
	}
}

// goneSince reports whether node was found gone after it last wrote l's
// revision; n.mu is held.
func (n *Node) goneSince(l leaseEntry) bool {
	at, ok := n.goneAt[l.Node]
	return ok && at.After(l.seen)
}
