package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuro-go/neuro/runtime"
)

// Stored responses live in the responses bucket, under
// "<owner digest>.<id>", so that a conversation started on one node
// continues on any other. Their quota is the owner's "responses" usage
// record (usage.go).

func ownerDigest(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(sum[:8])
}

func responseKey(owner, id string) string { return ownerDigest(owner) + "." + id }

// checkResponses refuses one more response of size bytes past the quota.
func checkResponses(q runtime.Quota, owner string, u *usage, size int64) error {
	if q.Responses > 0 && len(u.Entries)+1 > q.Responses {
		return fmt.Errorf("%w: %s has %d stored responses in the cluster, the limit is %d (delete some, or send store: false)", runtime.ErrQuota, owner, len(u.Entries), q.Responses)
	}
	if bytes := u.bytes(); q.ResponseBytes > 0 && bytes+max(size, 1) > q.ResponseBytes {
		return fmt.Errorf("%w: %s's stored responses would hold %d bytes in the cluster, the limit is %d", runtime.ErrQuota, owner, bytes+size, q.ResponseBytes)
	}
	return nil
}

// CheckResponseQuota reports whether owner may store no more responses
// in the cluster.
func (n *Node) CheckResponseQuota(owner string) error {
	ctx, cancel := n.opCtx()
	defer cancel()
	if err := n.applyQuota(ctx); err != nil {
		return err
	}
	u, _, err := n.readUsage(ctx, "responses", owner, nil)
	if err != nil {
		return err
	}
	return checkResponses(n.rt.Quota(), owner, u, 0)
}

// StoreResponse keeps a response in the cluster, within its owner's
// quota, counted cluster-wide.
func (n *Node) StoreResponse(ctx context.Context, rec *runtime.StoredResponse) error {
	if err := n.applyQuota(ctx); err != nil {
		return err
	}
	q := n.rt.Quota()
	if rec.Expires.IsZero() {
		rec.Expires = time.Now().Add(q.ResponseTTL)
	}
	b, err := rec.MarshalBinary()
	if err != nil {
		return err
	}
	err = n.changeUsage(ctx, "responses", rec.Owner, nil, func(u *usage) error {
		if err := checkResponses(q, rec.Owner, u, int64(len(b))); err != nil {
			return err
		}
		u.Entries = append(u.Entries, useEntry{ID: rec.ID, Bytes: int64(len(b)), Expires: rec.Expires})
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := n.responses.Create(ctx, responseKey(rec.Owner, rec.ID), b); err != nil {
		n.releaseUsage(ctx, "responses", rec.Owner, rec.ID)
		return fmt.Errorf("cluster: storing response %s: %w", rec.ID, err)
	}
	return nil
}

// Response finds an owner's stored response, wherever it was made.
func (n *Node) Response(ctx context.Context, id, owner string) (*runtime.StoredResponse, error) {
	if !validKeyToken(id) {
		return nil, fmt.Errorf("%w: %q", runtime.ErrResponseNotFound, id)
	}
	e, err := n.responses.Get(ctx, responseKey(owner, id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: %q", runtime.ErrResponseNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("cluster: reading response %s: %w", id, err)
	}
	rec, err := runtime.UnmarshalStoredResponse(e.Value())
	if err != nil {
		return nil, err
	}
	if rec.Owner != owner || rec.ID != id || !rec.Expires.After(time.Now()) {
		return nil, fmt.Errorf("%w: %q", runtime.ErrResponseNotFound, id)
	}
	return rec, nil
}

// DeleteResponse deletes an owner's stored response from the cluster.
func (n *Node) DeleteResponse(ctx context.Context, id, owner string) error {
	if _, err := n.Response(ctx, id, owner); err != nil {
		return err
	}
	if err := n.responses.Delete(ctx, responseKey(owner, id)); err != nil {
		return fmt.Errorf("cluster: deleting response %s: %w", id, err)
	}
	return n.releaseUsage(ctx, "responses", owner, id)
}

// validKeyToken accepts what may stand in a key of a bucket: letters,
// digits, '_' and '-'.
func validKeyToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

// CacheStats reports this node's prefix-state cache: each node keeps its
// own.
func (n *Node) CacheStats() runtime.CacheStats { return n.rt.CacheStats() }

// ResponseStats reports the responses stored in the cluster and their
// bytes, as the bucket counts them.
func (n *Node) ResponseStats() (count int, bytes int64) {
	ctx, cancel := n.opCtx()
	defer cancel()
	st, err := n.responses.Status(ctx)
	if err != nil {
		return 0, 0
	}
	return int(st.Values()), int64(st.Bytes())
}
