package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuro-go/neuro/runtime"
)

// Stored responses live in the responses bucket, under
// "<owner digest>.<id>", so that a conversation started on one node
// continues on any other. Each owner's use of the quota is one record in
// the response_use bucket, changed only by compare-and-set, so that two
// nodes storing at once cannot both pass the quota.

// responseUse is an owner's stored responses as the quota counts them.
type responseUse struct {
	Entries []useEntry `json:"entries"`
}

type useEntry struct {
	ID      string    `json:"id"`
	Bytes   int64     `json:"bytes"`
	Expires time.Time `json:"expires"`
}

func ownerDigest(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return hex.EncodeToString(sum[:8])
}

func responseKey(owner, id string) string { return ownerDigest(owner) + "." + id }

// changeUse applies change to an owner's use record by compare-and-set,
// first dropping the entries that have expired; change returns an error
// to leave the record as it was.
func (n *Node) changeUse(ctx context.Context, owner string, change func(u *responseUse) error) error {
	key := ownerDigest(owner)
	for attempt := 0; ; attempt++ {
		var u responseUse
		var rev uint64
		e, err := n.respUse.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("cluster: reading %s's stored responses: %w", owner, err)
		default:
			rev = e.Revision()
			if err := json.Unmarshal(e.Value(), &u); err != nil {
				return fmt.Errorf("cluster: %s's stored responses record: %w", owner, err)
			}
		}
		now := time.Now()
		u.Entries = slices.DeleteFunc(u.Entries, func(x useEntry) bool { return !x.Expires.After(now) })
		if err := change(&u); err != nil {
			return err
		}
		b, err := json.Marshal(u)
		if err != nil {
			return err
		}
		if rev == 0 {
			_, err = n.respUse.Create(ctx, key, b)
		} else {
			_, err = n.respUse.Update(ctx, key, b, rev)
		}
		if err == nil {
			return nil
		}
		if !conflict(err) || attempt >= 20 {
			return fmt.Errorf("cluster: recording %s's stored responses: %w", owner, err)
		}
	}
}

// checkUse refuses one more response of size bytes past the quota.
func checkUse(q runtime.Quota, owner string, u *responseUse, size int64) error {
	var bytes int64
	for _, x := range u.Entries {
		bytes += x.Bytes
	}
	if q.Responses > 0 && len(u.Entries)+1 > q.Responses {
		return fmt.Errorf("%w: %s has %d stored responses in the cluster, the limit is %d (delete some, or send store: false)", runtime.ErrQuota, owner, len(u.Entries), q.Responses)
	}
	if q.ResponseBytes > 0 && bytes+max(size, 1) > q.ResponseBytes {
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
	e, err := n.respUse.Get(ctx, ownerDigest(owner))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cluster: reading %s's stored responses: %w", owner, err)
	}
	var u responseUse
	if err := json.Unmarshal(e.Value(), &u); err != nil {
		return fmt.Errorf("cluster: %s's stored responses record: %w", owner, err)
	}
	now := time.Now()
	u.Entries = slices.DeleteFunc(u.Entries, func(x useEntry) bool { return !x.Expires.After(now) })
	return checkUse(n.rt.Quota(), owner, &u, 0)
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
	err = n.changeUse(ctx, rec.Owner, func(u *responseUse) error {
		if err := checkUse(q, rec.Owner, u, int64(len(b))); err != nil {
			return err
		}
		u.Entries = append(u.Entries, useEntry{ID: rec.ID, Bytes: int64(len(b)), Expires: rec.Expires})
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := n.responses.Create(ctx, responseKey(rec.Owner, rec.ID), b); err != nil {
		n.changeUse(ctx, rec.Owner, func(u *responseUse) error {
			u.Entries = slices.DeleteFunc(u.Entries, func(x useEntry) bool { return x.ID == rec.ID })
			return nil
		})
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
	return n.changeUse(ctx, owner, func(u *responseUse) error {
		u.Entries = slices.DeleteFunc(u.Entries, func(x useEntry) bool { return x.ID == id })
		return nil
	})
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
