package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal"
)

// claimStagger delays a node's claim of a new deployment by this much
// per deployment it already runs, so that new deployments spread over
// the nodes that can run them instead of going to the quickest.
const claimStagger = 50 * time.Millisecond

// loop renews the node's presence and leases and reconciles the
// deployments every LeaseTTL/3, and whenever a bucket changes.
func (n *Node) loop() {
	defer n.wg.Done()
	t := time.NewTicker(n.o.LeaseTTL / 3)
	defer t.Stop()
	n.renewPresence()
	n.reconcile()
	watched := time.Now()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
			n.renewPresence()
			if time.Since(watched) > n.o.LeaseTTL/2 {
				n.checkWatches()
				n.checkTelemetry()
				watched = time.Now()
			}
			n.reconcile()
		case <-n.kick:
			n.reconcile()
		}
	}
}

func (n *Node) opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(n.ctx, n.o.LeaseTTL/3)
}

func (n *Node) renewPresence() error {
	ctx, cancel := n.opCtx()
	defer cancel()
	_, err := n.alive.Put(ctx, n.o.Name, []byte(time.Now().UTC().Format(time.RFC3339Nano)))
	if err != nil {
		n.log.Warn("cannot renew presence", "err", err)
	}
	return err
}

// reconcile brings this node's share of the cluster to the desired
// state: it renews the leases it holds (dropping a deployment whose
// lease it lost or could not renew in time), claims deployments whose
// lease has lapsed or that have none, and stops those deleted.
func (n *Node) reconcile() {
	if n.replaying.Load() > 0 {
		return // a watch is rebuilding its view; it pokes when done
	}
	now := time.Now()
	n.mu.Lock()
	if n.left {
		n.mu.Unlock()
		return
	}
	specs := make([]spec, 0, len(n.specs))
	for _, s := range n.specs {
		specs = append(specs, s)
	}
	leases := make(map[string]leaseEntry, len(n.leaseOf))
	for k, v := range n.leaseOf {
		leases[k] = v
	}
	mine := make(map[string]owned, len(n.owned))
	for k, v := range n.owned {
		mine[k] = *v
	}
	gone := map[string]bool{}
	for id, l := range leases {
		gone[id] = n.goneSince(l)
	}
	retiring := map[string]bool{}
	for id := range n.stopping {
		retiring[id] = true
	}
	leaving := n.leaving
	n.mu.Unlock()

	wanted := map[string]bool{}
	for _, s := range specs {
		wanted[s.ID] = true
		l, leased := leases[s.ID]
		if ow, ok := mine[s.ID]; ok {
			if leased && l.Node != n.o.Name && l.rev > ow.rev {
				n.taken(s.ID, ow, leaving, l.Node)
				continue
			}
			n.renew(s.ID, ow)
			continue
		}
		// A lease lapses when it is not renewed, at once when its
		// holder's connection is gone (presence.go), or when its holder
		// is leaving and hands it over.
		lapsed := !leased || now.Sub(l.seen) > n.o.LeaseTTL || gone[s.ID] || l.Handover && l.Node != n.o.Name
		// A copy still retiring here goes before another is claimed.
		if !lapsed || leaving || retiring[s.ID] || !n.canRun(s) {
			continue
		}
		if wait := time.Duration(len(mine)) * claimStagger; !leased && now.Sub(s.Created) < wait {
			time.AfterFunc(wait, n.poke)
			continue
		}
		n.claim(s, l, leased)
	}
	for id := range mine {
		if !wanted[id] {
			n.drop(id, "deleted")
		}
	}
	n.syncSubscriptions()
}

func (n *Node) canRun(s spec) bool {
	if s.Node != "" && s.Node != n.o.Name || !n.hasDevice(s.Device) {
		return false
	}
	_, err := n.rt.Model(s.Model)
	return err == nil
}

// claim takes a deployment's lease with compare-and-set, and starts it.
func (n *Node) claim(s spec, old leaseEntry, leased bool) {
	ctx, cancel := n.opCtx()
	defer cancel()
	b, _ := json.Marshal(lease{Node: n.o.Name, Status: runtime.StatusLoading})
	var rev uint64
	var err error
	if leased {
		// The holder stopped renewing: take over the revision we saw.
		rev, err = n.leases.Update(ctx, s.ID, b, old.rev)
		if err != nil {
			rev, err = n.leases.Create(ctx, s.ID, b) // it may have expired meanwhile
		}
	} else {
		rev, err = n.leases.Create(ctx, s.ID, b)
	}
	if err != nil {
		if !conflict(err) {
			n.log.Debug("claim failed", "deployment", s.ID, "err", err)
		}
		return
	}
	n.log.Info("claimed a deployment", "deployment", s.ID, "model", s.Model, "device", s.Device, "from", old.Node)
	// A copy left from an earlier claim (before a partition) goes first.
	n.rt.Undeploy(s.ID, s.Owner)
	_, err = n.rt.Start(n.ctx, runtime.DeploymentSpec{ID: s.ID, Model: s.Model, Device: s.Device,
		Config: hal.Config{Options: s.Options}, MaxBatch: s.MaxBatch, Replicas: s.Replicas, Owner: s.Owner})
	n.mu.Lock()
	n.owned[s.ID] = &owned{rev: rev, renewed: time.Now(), last: lease{Node: n.o.Name, Status: runtime.StatusLoading}, spec: s}
	if cur := n.leaseOf[s.ID]; cur.rev < rev { // before the watch brings it
		n.leaseOf[s.ID] = leaseEntry{lease: lease{Node: n.o.Name, Status: runtime.StatusLoading}, rev: rev, seen: time.Now()}
	}
	n.mu.Unlock()
	if err != nil {
		n.log.Error("cannot start a claimed deployment", "deployment", s.ID, "err", err)
		n.writeLease(s.ID, lease{Node: n.o.Name, Status: runtime.StatusFailed, Failure: err.Error()})
		return
	}
	n.wg.Add(1)
	go func() { // report ready (or failed) as soon as the load ends
		defer n.wg.Done()
		if d, err := n.rt.Deployment(s.ID); err == nil {
			d.Wait(n.ctx)
			n.poke()
		}
	}()
}

// renew writes the lease again with the deployment's state now, when
// it is due. A revision conflict means another node took it: the local
// copy goes. A node that cannot renew for a whole LeaseTTL (cut off from
// NATS) stops serving, since another node may have taken over.
func (n *Node) renew(id string, ow owned) {
	n.mu.Lock()
	leaving := n.leaving
	n.mu.Unlock()
	l := lease{Node: n.o.Name, Status: runtime.StatusFailed, Failure: "not running", Handover: leaving}
	if d, err := n.rt.Deployment(id); err == nil {
		info := d.Info()
		l = lease{Node: n.o.Name, Status: info.Status, Active: info.Active, Queued: info.Queued, Handover: leaving}
		if info.Failure != nil {
			l.Failure = info.Failure.Error()
		}
	}
	if !renewalDue(ow, l, n.o.LeaseTTL) {
		return
	}
	err := n.writeLease(id, l)
	switch {
	case err == nil:
	case conflict(err):
		n.settleConflict(id, ow, leaving)
	case time.Since(ow.renewed) > n.o.LeaseTTL:
		n.drop(id, "its lease could not be renewed: "+err.Error())
	}
}

// settleConflict reads a lease whose compare-and-set failed and acts on
// what it says, not on the failure alone:
//   - this node wrote its latest revision (a write that timed out here
//     and landed late, after a pause): that revision is the node's from
//     now on;
//   - another node holds it: a leaving node has handed it over, any
//     other stops its copy;
//   - the lease is gone: the deployment was deleted.
//
// When the lease cannot be read, nothing changes and the next renewal
// tries again, so that a slow read never hands over or drops a
// deployment this node still holds.
func (n *Node) settleConflict(id string, ow owned, leaving bool) {
	ctx, cancel := n.opCtx()
	defer cancel()
	e, err := n.leases.Get(ctx, id)
	if f := n.failReads.Load(); f != nil && *f != nil {
		err = *f
	}
	var l lease
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		n.drop(id, "its lease was deleted")
		return
	case err != nil:
		if time.Since(ow.renewed) > n.o.LeaseTTL {
			n.drop(id, "its lease could not be read: "+err.Error())
		}
		return
	case json.Unmarshal(e.Value(), &l) != nil:
		n.drop(id, "its lease is unreadable")
		return
	}
	if l.Node == n.o.Name {
		n.mu.Lock()
		if cur, ok := n.owned[id]; ok {
			cur.rev, cur.renewed = e.Revision(), time.Now()
		}
		n.mu.Unlock()
		return
	}
	n.taken(id, ow, leaving, l.Node)
}

// taken acts on another node's holding a lease this node held: a leaving
// node serves its copy until the new one is ready (leave.go), any other
// stops it.
func (n *Node) taken(id string, ow owned, leaving bool, holder string) {
	if leaving && ow.spec.Node != n.o.Name {
		n.handedOver(id)
		return
	}
	n.drop(id, "its lease was taken by "+holder)
}

// renewalDue reports whether a held lease must be written: what other
// nodes act on (its holder, status, failure, handover) has changed; its
// load (Active, Queued), which routing by model reads, has changed and
// was last written LeaseTTL/30 ago or more; or it was last written
// LeaseTTL/6 ago or more, so that the loop's renewal every LeaseTTL/3
// always writes it. Every lease written wakes every node's loop, which
// reconciles: a loop that wrote its own leases each time would keep the
// others writing theirs without end.
func renewalDue(ow owned, l lease, ttl time.Duration) bool {
	since := time.Since(ow.renewed)
	was := ow.last
	if was == l {
		return since >= ttl/6
	}
	was.Active, was.Queued = l.Active, l.Queued
	if was == l {
		return since >= ttl/30
	}
	return true
}

func (n *Node) writeLease(id string, l lease) error {
	n.mu.Lock()
	ow, ok := n.owned[id]
	n.mu.Unlock()
	if !ok {
		return nil
	}
	ctx, cancel := n.opCtx()
	defer cancel()
	b, _ := json.Marshal(l)
	rev, err := n.leases.Update(ctx, id, b, ow.rev)
	if err != nil {
		return err
	}
	n.mu.Lock()
	if cur, ok := n.owned[id]; ok && cur == ow {
		cur.rev, cur.renewed, cur.last = rev, time.Now(), l
	}
	n.mu.Unlock()
	return nil
}

// drop stops this node's copy of a cluster deployment.
func (n *Node) drop(id, why string) {
	n.mu.Lock()
	ow, ok := n.owned[id]
	delete(n.owned, id)
	var done chan struct{}
	var first bool
	if ok { // retiring from the moment it is no longer owned
		done, first = n.retireLocked(id)
	}
	n.mu.Unlock()
	if !ok {
		return
	}
	n.log.Info("dropping a deployment", "deployment", id, "why", why)
	if first {
		n.finishRetire(id, ow.spec.Owner, done)
	}
	if why == "deleted" {
		ctx, cancel := n.opCtx()
		defer cancel()
		n.leases.Delete(ctx, id, jetstream.LastRevision(ow.rev))
	}
}

// conflict reports a compare-and-set that lost: the key is there, or at
// another revision, or gone.
func conflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyNotFound)
}
