package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// An owner's use of each quota that spans the cluster (networks,
// deployments, stored responses) is one record in the usage bucket,
// "<kind>.<owner digest>", listing what counts against it. It changes
// only by compare-and-set, so that two nodes adding at once cannot both
// pass the quota: the second reads the first's entry and checks again.

// usage is what counts against one of an owner's quotas.
type usage struct {
	Entries []useEntry `json:"entries"`
}

type useEntry struct {
	ID    string `json:"id"`
	Bytes int64  `json:"bytes,omitempty"`
	// Expires, when set, is when the entry stops counting (a stored
	// response's TTL).
	Expires time.Time `json:"expires,omitzero"`
}

func (u *usage) bytes() int64 {
	var b int64
	for _, x := range u.Entries {
		b += x.Bytes
	}
	return b
}

func usageKey(kind, owner string) string { return kind + "." + ownerDigest(owner) }

// readUsage reads an owner's record of kind and its revision (0 when
// there is none yet; then seed, if set, gives the entries this node
// knows of), without the entries that have expired.
func (n *Node) readUsage(ctx context.Context, kind, owner string, seed func() []useEntry) (*usage, uint64, error) {
	u := &usage{}
	var rev uint64
	e, err := n.usage.Get(ctx, usageKey(kind, owner))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		if seed != nil {
			u.Entries = seed()
		}
	case err != nil:
		return nil, 0, fmt.Errorf("cluster: reading %s's %s: %w", owner, kind, err)
	default:
		rev = e.Revision()
		if err := json.Unmarshal(e.Value(), u); err != nil {
			return nil, 0, fmt.Errorf("cluster: %s's %s record: %w", owner, kind, err)
		}
	}
	now := time.Now()
	u.Entries = slices.DeleteFunc(u.Entries, func(x useEntry) bool { return !x.Expires.IsZero() && !x.Expires.After(now) })
	return u, rev, nil
}

// changeUsage applies change to an owner's record of kind by
// compare-and-set, reading it again when another node changed it
// meanwhile; change returns an error to leave the record as it was.
func (n *Node) changeUsage(ctx context.Context, kind, owner string, seed func() []useEntry, change func(u *usage) error) error {
	for attempt := 0; ; attempt++ {
		u, rev, err := n.readUsage(ctx, kind, owner, seed)
		if err != nil {
			return err
		}
		if err := change(u); err != nil {
			return err
		}
		b, err := json.Marshal(u)
		if err != nil {
			return err
		}
		if rev == 0 {
			_, err = n.usage.Create(ctx, usageKey(kind, owner), b)
		} else {
			_, err = n.usage.Update(ctx, usageKey(kind, owner), b, rev)
		}
		if err == nil {
			return nil
		}
		if !conflict(err) || attempt >= 20 {
			return fmt.Errorf("cluster: recording %s's %s: %w", owner, kind, err)
		}
		// Another node changed the record since it was read, or the read
		// came from a replica behind the stream's leader (a KV read may be
		// answered by any replica): wait a moment, longer after each
		// conflict, so that the next read finds the change.
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: recording %s's %s: %w", owner, kind, ctx.Err())
		case <-time.After(time.Duration(1+rand.IntN(attempt+1)) * time.Millisecond):
		}
	}
}

// releaseUsage removes id from an owner's record of kind.
func (n *Node) releaseUsage(ctx context.Context, kind, owner, id string) error {
	return n.changeUsage(ctx, kind, owner, nil, func(u *usage) error {
		u.Entries = slices.DeleteFunc(u.Entries, func(x useEntry) bool { return x.ID == id })
		return nil
	})
}
