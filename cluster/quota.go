package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/neuro-go/neuro/runtime"
)

// SetQuota makes q what each owner may keep, on every node of the
// cluster (the "config" bucket, key "quota").
func (n *Node) SetQuota(ctx context.Context, q runtime.Quota) error {
	b, err := json.Marshal(q)
	if err != nil {
		return err
	}
	if _, err := n.config.Put(ctx, "quota", b); err != nil {
		return fmt.Errorf("cluster: storing the quota: %w", err)
	}
	n.rt.SetQuota(q)
	return nil
}

// applyQuota gives the node's runtime the cluster's quota, when one is
// set. It is read where it is enforced (compiles and deployments are
// rare), so a change reaches every node at its next one.
func (n *Node) applyQuota(ctx context.Context) error {
	e, err := n.config.Get(ctx, "quota")
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: reading the cluster's quota: %v", runtime.ErrDeviceUnavailable, err)
	}
	q, err := decodeQuota(e.Value())
	if err != nil {
		return err
	}
	n.rt.SetQuota(q)
	return nil
}

// decodeQuota reads the quota stored in the config bucket.
func decodeQuota(b []byte) (runtime.Quota, error) {
	var q runtime.Quota
	if err := json.Unmarshal(b, &q); err != nil {
		return runtime.Quota{}, fmt.Errorf("cluster: the stored quota: %w", err)
	}
	return q, nil
}

// checkDeploymentQuota counts owner's deployments in the whole cluster
// (the runtime counts only the ones its node runs).
func (n *Node) checkDeploymentQuota(owner string) error {
	limit := n.rt.Quota().Deployments
	if limit < 0 {
		return nil
	}
	n.mu.Lock()
	have := 0
	for _, s := range n.specs {
		if s.Owner == owner {
			have++
		}
	}
	n.mu.Unlock()
	if have >= limit {
		return fmt.Errorf("%w: %s has %d deployments in the cluster, the limit is %d", runtime.ErrQuota, owner, have, limit)
	}
	return nil
}
