package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// Keys is an httpapi.KeyStore read from the cluster's keys bucket: every
// node sees the same keys, and a key added or revoked on one node counts
// on every node as soon as the change reaches it (milliseconds). The
// bucket holds the SHA-256 of each key, never the key.
type Keys struct {
	kv     jetstream.KeyValue
	mu     sync.RWMutex
	byHash map[string]string // hex SHA-256 of the key -> principal
}

type keyRecord struct {
	Principal string `json:"principal"`
}

// Keys returns the cluster's key store, following the bucket until the
// node leaves.
func (n *Node) Keys() (*Keys, error) {
	k := &Keys{kv: n.keys, byHash: map[string]string{}}
	ready := make(chan error, 1)
	n.watch(n.keys, k.apply, func() {
		k.mu.Lock()
		k.byHash = map[string]string{}
		k.mu.Unlock()
	}, ready)
	if err := <-ready; err != nil {
		return nil, err
	}
	return k, nil
}

func (k *Keys) apply(e jetstream.KeyValueEntry) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if deleted(e) {
		delete(k.byHash, e.Key())
		return
	}
	if p, err := decodeKeyRecord(e.Value()); err == nil {
		k.byHash[e.Key()] = p
	}
}

// decodeKeyRecord reads the principal of a key from its record in the
// keys bucket.
func decodeKeyRecord(b []byte) (string, error) {
	var r keyRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return "", fmt.Errorf("cluster: key record: %w", err)
	}
	if r.Principal == "" {
		return "", errors.New("cluster: key record without a principal")
	}
	return r.Principal, nil
}

func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Principal returns the principal of a key. The lookup is by the key's
// hash, so its timing depends on the hash, which tells nothing of the
// key.
func (k *Keys) Principal(key string) (string, bool) {
	h := hashKey(key)
	k.mu.RLock()
	defer k.mu.RUnlock()
	p, ok := k.byHash[h]
	return p, ok
}

// Add stores a key for a principal in the cluster.
func (k *Keys) Add(ctx context.Context, key, principal string) error {
	if key == "" || principal == "" {
		return errors.New("cluster: a key and its principal must not be empty")
	}
	b, _ := json.Marshal(keyRecord{Principal: principal})
	if _, err := k.kv.Put(ctx, hashKey(key), b); err != nil {
		return fmt.Errorf("cluster: adding a key: %w", err)
	}
	k.mu.Lock()
	k.byHash[hashKey(key)] = principal
	k.mu.Unlock()
	return nil
}

// Revoke deletes a key from the cluster.
func (k *Keys) Revoke(ctx context.Context, key string) error {
	if err := k.kv.Delete(ctx, hashKey(key)); err != nil {
		return fmt.Errorf("cluster: revoking a key: %w", err)
	}
	k.mu.Lock()
	delete(k.byHash, hashKey(key))
	k.mu.Unlock()
	return nil
}
