package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/runtime"
)

// netMeta is a compiled network as the networks bucket holds it: what
// compiling it found, its owner, and the program's object, named by the
// SHA-256 of its bytes (two equal programs are stored once).
type netMeta struct {
	Network *runtime.Network `json:"network"`
	Created time.Time        `json:"created"`
	Program string           `json:"program"` // the program's SHA-256, hex
	// Object names the program in the object store: the network's ID, so
	// that each network's program is its own, and deleting one network
	// cannot take another's program with it. Records written without it
	// name the object by Program.
	Object string `json:"object,omitempty"`
	Node   string `json:"node"` // where it was compiled
}

// object is the name of m's program in the object store.
func (m netMeta) object() string {
	if m.Object != "" {
		return m.Object
	}
	return m.Program
}

// applyNetwork registers in the local runtime a network another node
// stored, or deletes one deleted.
func (n *Node) applyNetwork(e jetstream.KeyValueEntry) {
	id := e.Key()
	if deleted(e) {
		n.mu.Lock()
		m, ok := n.netOf[id]
		delete(n.netOf, id)
		n.mu.Unlock()
		if ok {
			if err := n.rt.DeleteNetwork(id, m.Network.Owner); err != nil && !errors.Is(err, runtime.ErrModelNotFound) {
				n.log.Error("cannot delete a network the cluster deleted", "network", id, "err", err)
			}
		}
		return
	}
	m, err := decodeNetMeta(id, e.Value())
	if err != nil {
		n.log.Error("a network's record is damaged", "network", id, "err", err)
		return
	}
	m.Network.Created = m.Created
	n.mu.Lock()
	n.netOf[id] = m
	n.mu.Unlock()
	if _, err := n.rt.Model(id); err == nil {
		return // compiled here
	}
	if err := n.fetchNetwork(m); err != nil {
		n.log.Error("cannot load a network from the cluster", "network", id, "err", err)
	}
}

// decodeNetMeta reads the record another node stored under key in the
// networks bucket: it must describe the network of that ID.
func decodeNetMeta(key string, b []byte) (netMeta, error) {
	var m netMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return netMeta{}, fmt.Errorf("cluster: network record %q: %w", key, err)
	}
	if m.Network == nil || m.Network.ID != key {
		return netMeta{}, fmt.Errorf("cluster: network record %q describes no network of that ID", key)
	}
	return m, nil
}

func (n *Node) fetchNetwork(m netMeta) error {
	ctx, cancel := context.WithTimeout(n.ctx, 30*time.Second)
	defer cancel()
	// The program was stored before its record, but a read may be
	// answered by a replica of the object store that has not applied it
	// yet: a program not found is read again for a moment.
	b, err := n.programs.GetBytes(ctx, m.object())
	for deadline := time.Now().Add(catchUpWait); errors.Is(err, jetstream.ErrObjectNotFound) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		b, err = n.programs.GetBytes(ctx, m.object())
	}
	if err != nil {
		return err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != m.Program {
		return errors.New("cluster: the stored program does not match its SHA-256")
	}
	prog, err := compile.Load(bytes.NewReader(b), int64(len(b)), nil)
	if err != nil {
		return err
	}
	nw := *m.Network
	nw.Created = m.Created
	model, err := runtime.NetworkModel(&nw, prog)
	if err != nil {
		return err
	}
	return n.rt.RegisterModel(model)
}

// Compile compiles a network on this node and stores it in the cluster:
// the program in the object store, its record in the networks bucket,
// from which every node registers it. The owner's quota counts every
// network in the cluster, since every node registers them all.
func (n *Node) Compile(ctx context.Context, req *runtime.CompileRequest) (*runtime.Network, error) {
	if err := n.applyQuota(ctx); err != nil {
		return nil, err
	}
	nw, err := n.rt.Compile(ctx, req)
	if err != nil {
		return nil, err
	}
	q := n.rt.Quota()
	err = n.changeUsage(ctx, "networks", nw.Owner, n.knownNetworks(nw.Owner, nw.ID), func(u *usage) error {
		if q.Networks >= 0 && len(u.Entries)+1 > q.Networks {
			return fmt.Errorf("%w: %s has %d networks in the cluster, the limit is %d", runtime.ErrQuota, nw.Owner, len(u.Entries), q.Networks)
		}
		if b := u.bytes(); q.NetworkBytes >= 0 && b+nw.StoredBytes > q.NetworkBytes {
			return fmt.Errorf("%w: %s's networks would hold %d bytes in the cluster, the limit is %d", runtime.ErrQuota, nw.Owner, b+nw.StoredBytes, q.NetworkBytes)
		}
		u.Entries = append(u.Entries, useEntry{ID: nw.ID, Bytes: nw.StoredBytes})
		return nil
	})
	if err == nil {
		if err = n.storeNetwork(ctx, nw); err != nil {
			n.releaseUsage(ctx, "networks", nw.Owner, nw.ID)
		}
	}
	if err != nil {
		n.rt.DeleteNetwork(nw.ID, nw.Owner)
		return nil, err
	}
	return nw, nil
}

// knownNetworks seeds an owner's networks record from this node's view,
// the compile in hand (except) aside.
func (n *Node) knownNetworks(owner, except string) func() []useEntry {
	return func() []useEntry {
		n.mu.Lock()
		defer n.mu.Unlock()
		var out []useEntry
		for id, m := range n.netOf {
			if m.Network.Owner == owner && id != except {
				out = append(out, useEntry{ID: id, Bytes: m.Network.StoredBytes})
			}
		}
		return out
	}
}

func (n *Node) storeNetwork(ctx context.Context, nw *runtime.Network) error {
	m, err := n.rt.Model(nw.ID)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := m.Program.Save(&buf); err != nil {
		return err
	}
	sum := sha256.Sum256(buf.Bytes())
	meta := netMeta{Network: nw, Created: nw.Created, Program: hex.EncodeToString(sum[:]), Object: nw.ID, Node: n.o.Name}
	if _, err := n.programs.PutBytes(ctx, meta.Object, buf.Bytes()); err != nil {
		return fmt.Errorf("cluster: storing program %s: %w", nw.ID, err)
	}
	rec, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.netOf[nw.ID] = meta
	n.mu.Unlock()
	rev, err := n.nets.Create(ctx, nw.ID, rec)
	if err != nil {
		return fmt.Errorf("cluster: storing network %s: %w", nw.ID, err)
	}
	n.awaitApplied(n.nets, rev)
	return nil
}

// DeleteNetwork deletes an owner's network from the cluster (every node
// unregisters it) and its program when no other network shares it. A
// network a deployment uses anywhere is runtime.ErrInUse.
func (n *Node) DeleteNetwork(id, owner string) error {
	n.mu.Lock()
	m, ok := n.netOf[id]
	if !ok || m.Network.Owner != owner {
		n.mu.Unlock()
		return n.rt.DeleteNetwork(id, owner) // not the cluster's: the runtime's answer
	}
	for _, s := range n.specs {
		if s.Model == id {
			n.mu.Unlock()
			return fmt.Errorf("%w: network %q is deployed as %q", runtime.ErrInUse, id, s.ID)
		}
	}
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(n.ctx, 10*time.Second)
	defer cancel()
	if err := n.nets.Delete(ctx, id); err != nil {
		return fmt.Errorf("cluster: deleting network %s: %w", id, err)
	}
	n.releaseUsage(ctx, "networks", owner, id)
	n.awaitApplied(n.nets, 0)
	n.mu.Lock()
	delete(n.netOf, id)
	n.mu.Unlock()
	if err := n.rt.DeleteNetwork(id, owner); err != nil && !errors.Is(err, runtime.ErrModelNotFound) {
		return err
	}
	if m.Object != "" { // a program named by its digest alone may be another network's too
		if err := n.programs.Delete(ctx, m.Object); err != nil {
			n.log.Warn("cannot delete a program", "object", m.Object, "err", err)
		}
	}
	return nil
}
