package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal"
)

// Model finds a model by id or alias: every node registers every model
// (the program's own, and each network stored in the cluster). For one
// it does not know, it looks again once its view of the networks has
// caught up with the cluster's: the network may have been compiled a
// moment ago on another node.
func (n *Node) Model(id string) (*runtime.Model, error) {
	m, err := n.rt.Model(id)
	if errors.Is(err, runtime.ErrModelNotFound) && n.catchUp(n.nets) {
		m, err = n.rt.Model(id)
	}
	return m, err
}

// Models lists the models, sorted by ID.
func (n *Node) Models() []*runtime.Model { return n.rt.Models() }

// ModelInfo describes a model as this node's runtime does (every node
// registers every model, so the size and the devices that fit it are
// the same on all of them), with the devices of its ready deployments
// anywhere in the cluster. A model it does not know it looks for as
// Model does.
func (n *Node) ModelInfo(id string) (runtime.ModelInfo, error) {
	m, err := n.Model(id)
	if err != nil {
		return runtime.ModelInfo{}, err
	}
	info, err := n.rt.ModelInfo(m.ID)
	if err != nil {
		return info, err
	}
	for _, d := range n.DeploymentInfos() {
		if d.Model != nil && d.Model.ID == m.ID && d.Status == runtime.StatusReady && !slices.Contains(info.Devices, d.Device.Name) {
			info.Devices = append(info.Devices, d.Device.Name)
		}
	}
	slices.Sort(info.Devices)
	return info, nil
}

// Devices lists the devices this node's program linked (its runtime's),
// which a deployment may name; whether a member offers the device is
// checked when the deployment is placed.
func (n *Node) Devices() []string { return n.rt.Devices() }

// CreateDeployment records a deployment as desired state in the cluster
// and waits up to wait for a node to claim and load it: on the node
// spec.Node names, else on one of the nodes that have the device. A
// load that fails in that time is deleted and its error returned; one
// still loading (or not yet claimed) is reported loading.
func (n *Node) CreateDeployment(ctx context.Context, ds runtime.DeploymentSpec, wait time.Duration) (runtime.DeploymentInfo, error) {
	if ds.Dev != nil {
		return runtime.DeploymentInfo{}, &runtime.ParamError{Param: "device", Msg: "a cluster deployment names its device; it cannot be a device value"}
	}
	if ds.Owner == "" {
		return runtime.DeploymentInfo{}, &runtime.ParamError{Param: "owned_by", Msg: "a cluster deployment needs an owner"}
	}
	if ds.ID == "" {
		return runtime.DeploymentInfo{}, &runtime.ParamError{Param: "id", Msg: "the deployment needs an ID"}
	}
	// The device's configuration (Precision among it) travels as its
	// options; a bad one is refused here, not by the node that claims it.
	cfg, err := ds.DeviceConfig()
	if err != nil {
		return runtime.DeploymentInfo{}, err
	}
	m, err := n.rt.Model(ds.Model)
	if err != nil {
		return runtime.DeploymentInfo{}, err
	}
	if err := n.applyQuota(ctx); err != nil {
		return runtime.DeploymentInfo{}, err
	}
	if err := n.checkDeploymentQuota(ds.Owner); err != nil {
		return runtime.DeploymentInfo{}, err
	}
	if ds.Device == "" {
		ds.Device = "cpu"
	}
	if ds.MaxBatch == 0 {
		ds.MaxBatch = 8
	}
	if ds.Replicas == 0 {
		ds.Replicas = 1
	}
	s := spec{ID: ds.ID, Model: m.ID, Device: ds.Device, MaxBatch: ds.MaxBatch, Replicas: ds.Replicas, Owner: ds.Owner, Node: ds.Node, Created: time.Now(),
		Options: cfg.Options}
	if err := n.checkPlacement(s); err != nil {
		return runtime.DeploymentInfo{}, err
	}
	if _, err := n.rt.Deployment(ds.ID); err == nil {
		return runtime.DeploymentInfo{}, fmt.Errorf("%w: deployment %q", runtime.ErrDuplicate, ds.ID)
	}
	q := n.rt.Quota()
	err = n.changeUsage(ctx, "deployments", s.Owner, n.knownDeployments(s.Owner), func(u *usage) error {
		if slices.ContainsFunc(u.Entries, func(x useEntry) bool { return x.ID == s.ID }) {
			return fmt.Errorf("%w: deployment %q", runtime.ErrDuplicate, s.ID)
		}
		if q.Deployments >= 0 && len(u.Entries)+1 > q.Deployments {
			return fmt.Errorf("%w: %s has %d deployments in the cluster, the limit is %d", runtime.ErrQuota, s.Owner, len(u.Entries), q.Deployments)
		}
		u.Entries = append(u.Entries, useEntry{ID: s.ID})
		return nil
	})
	if err != nil {
		return runtime.DeploymentInfo{}, err
	}
	b, _ := json.Marshal(s)
	rev, err := n.deps.Create(ctx, s.ID, b)
	if err != nil {
		n.releaseUsage(ctx, "deployments", s.Owner, s.ID)
		if conflict(err) {
			return runtime.DeploymentInfo{}, fmt.Errorf("%w: deployment %q", runtime.ErrDuplicate, ds.ID)
		}
		return runtime.DeploymentInfo{}, fmt.Errorf("%w: the cluster cannot record the deployment: %v", runtime.ErrDeviceUnavailable, err)
	}
	n.mu.Lock()
	n.specs[s.ID] = s
	n.mu.Unlock()
	n.poke()
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		info, err := n.DeploymentInfo(s.ID)
		if err != nil {
			return info, err
		}
		switch info.Status {
		case runtime.StatusReady:
			// Every node knows it, and knows it ready, before we say so.
			n.awaitApplied(n.deps, rev)
			n.awaitApplied(n.leases, 0)
			return info, nil
		case runtime.StatusFailed:
			n.deleteSpec(s)
			return runtime.DeploymentInfo{}, info.Failure
		}
		select {
		case <-wctx.Done():
			n.awaitApplied(n.deps, rev)
			return info, nil
		case <-t.C:
		}
	}
}

// knownDeployments seeds an owner's deployments record from this node's
// view.
func (n *Node) knownDeployments(owner string) func() []useEntry {
	return func() []useEntry {
		n.mu.Lock()
		defer n.mu.Unlock()
		var out []useEntry
		for id, s := range n.specs {
			if s.Owner == owner {
				out = append(out, useEntry{ID: id})
			}
		}
		return out
	}
}

// checkPlacement refuses a deployment no node could take: a device no
// member has, a node that is not a member or lacks the device, or an
// owner over the quota.
func (n *Node) checkPlacement(s spec) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if lim := n.o.MaxDeployments; lim >= 0 {
		k := 0
		for _, o := range n.specs {
			if o.Owner == s.Owner {
				k++
			}
		}
		if k >= lim {
			return fmt.Errorf("%w: %s has %d deployments, the limit is %d", runtime.ErrQuota, s.Owner, k, lim)
		}
	}
	if s.Node != "" {
		m, ok := n.memberOf[s.Node]
		if !ok {
			return &runtime.ParamError{Param: "node", Msg: fmt.Sprintf("no node %q in the cluster", s.Node)}
		}
		if !contains(m.Devices, s.Device) {
			return &runtime.ParamError{Param: "node", Msg: fmt.Sprintf("node %q has no device %q", s.Node, s.Device)}
		}
		return nil
	}
	for _, m := range n.memberOf {
		if contains(m.Devices, s.Device) {
			return nil
		}
	}
	return &runtime.ParamError{Param: "device", Msg: fmt.Sprintf("no node of the cluster has device %q", s.Device)}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// deleteSpec deletes a deployment's desired state from the cluster and
// releases its place in its owner's quota.
func (n *Node) deleteSpec(s spec) error {
	ctx, cancel := context.WithTimeout(n.ctx, 5*time.Second)
	defer cancel()
	if err := n.deps.Delete(ctx, s.ID); err != nil {
		return fmt.Errorf("cluster: deleting deployment %s: %w", s.ID, err)
	}
	n.mu.Lock()
	delete(n.specs, s.ID)
	n.mu.Unlock()
	// The owner comes from the spec in hand: this node's watch may have
	// applied the deletion already.
	n.releaseUsage(ctx, "deployments", s.Owner, s.ID)
	n.poke()
	n.awaitApplied(n.deps, 0)
	return nil
}

// Undeploy deletes an owner's deployment from the cluster: its node
// lets the work it took finish, then releases the device. The
// program's own deployments are the local runtime's.
func (n *Node) Undeploy(id, owner string) error {
	n.mu.Lock()
	s, ok := n.specs[id]
	n.mu.Unlock()
	if !ok && n.catchUp(n.deps) {
		n.mu.Lock()
		s, ok = n.specs[id]
		n.mu.Unlock()
	}
	if !ok {
		return n.rt.Undeploy(id, owner)
	}
	if s.Owner != owner {
		return fmt.Errorf("%w: %q", runtime.ErrDeploymentNotFound, id)
	}
	return n.deleteSpec(s)
}

// DeploymentInfo reports a deployment, wherever it runs.
func (n *Node) DeploymentInfo(id string) (runtime.DeploymentInfo, error) {
	n.waitReplay()
	n.mu.Lock()
	s, ok := n.specs[id]
	l, leased := n.leaseOf[id]
	_, mine := n.owned[id]
	_, retiring := n.stopping[id]
	_, served := n.subs[id]
	pinnedUp := n.up(s.Node)
	n.mu.Unlock()
	if !ok && (mine || retiring) {
		// Deleted in the cluster; this node's copy is finishing its work.
		return runtime.DeploymentInfo{}, fmt.Errorf("%w: %q", runtime.ErrDeploymentNotFound, id)
	}
	if !ok || mine {
		info, err := n.rt.DeploymentInfo(id)
		if err == nil {
			info.Node = n.o.Name
			if mine && info.Status == runtime.StatusReady && !n.readyEverywhere(served, l, leased) {
				info.Status = runtime.StatusLoading
			}
			return info, nil
		}
		if !ok {
			return info, err
		}
	}
	return n.remoteInfo(s, l, leased, pinnedUp), nil
}

// readyEverywhere tells whether a deployment ready on this node can be
// reported ready: it is on its subject (served), so other nodes reach
// it, and its lease as this node's watch has applied it says so, so a
// node that has applied the same revisions (awaitApplied) says so too.
func (n *Node) readyEverywhere(served bool, l leaseEntry, leased bool) bool {
	return served && leased && l.Node == n.o.Name && l.Status == runtime.StatusReady
}

// up tells whether a node has renewed its presence within LeaseTTL; n.mu
// is held.
func (n *Node) up(name string) bool {
	a, ok := n.aliveSeen[name]
	return ok && time.Since(a.seen) < n.o.LeaseTTL
}

// remoteInfo reports a deployment this node does not run; pinnedUp is
// whether the node it is pinned to, if any, is answering.
func (n *Node) remoteInfo(s spec, l leaseEntry, leased, pinnedUp bool) runtime.DeploymentInfo {
	info := runtime.DeploymentInfo{ID: s.ID, Status: runtime.StatusLoading, Created: s.Created, Replicas: s.Replicas,
		MaxBatch: s.MaxBatch, Owner: s.Owner}
	info.Model, _ = n.rt.Model(s.Model)
	if dev, err := hal.Open(s.Device, hal.Config{Options: s.Options}); err == nil {
		info.Device = dev.Capabilities()
	} else {
		info.Device = hal.Capabilities{Name: s.Device}
	}
	if leased && time.Since(l.seen) <= n.o.LeaseTTL {
		info.Node, info.Status, info.Active, info.Queued = l.Node, l.Status, l.Active, l.Queued
		if l.Failure != "" {
			info.Failure = errors.New(l.Failure)
		}
		return info
	}
	switch {
	case s.Node != "" && !pinnedUp:
		info.Waiting = fmt.Sprintf("pinned to node %s, which is not answering: it runs once that node is back (delete it and create it without node to run it elsewhere)", s.Node)
	case s.Node != "":
		info.Waiting = fmt.Sprintf("pinned to node %s, which has not started it yet", s.Node)
	default:
		info.Waiting = fmt.Sprintf("for a node with device %s to start it", s.Device)
	}
	return info
}

// DeploymentInfos reports every deployment: the cluster's, and this
// node's own (the program's, which every node has), sorted by ID.
func (n *Node) DeploymentInfos() []runtime.DeploymentInfo {
	n.waitReplay()
	byID := map[string]runtime.DeploymentInfo{}
	n.mu.Lock()
	for _, info := range n.rt.DeploymentInfos() {
		_, mine := n.owned[info.ID]
		if _, ok := n.specs[info.ID]; mine && !ok {
			continue // deleted in the cluster, finishing its work here
		}
		if l, leased := n.leaseOf[info.ID]; mine && info.Status == runtime.StatusReady && !n.readyEverywhere(n.subs[info.ID] != nil, l, leased) {
			info.Status = runtime.StatusLoading
		}
		info.Node = n.o.Name
		byID[info.ID] = info
	}
	for id, s := range n.specs {
		if _, mine := n.owned[id]; mine && byID[id].ID != "" {
			continue
		}
		l, leased := n.leaseOf[id]
		byID[id] = n.remoteInfo(s, l, leased, n.up(s.Node))
	}
	n.mu.Unlock()
	out := make([]runtime.DeploymentInfo, 0, len(byID))
	for _, info := range byID {
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
