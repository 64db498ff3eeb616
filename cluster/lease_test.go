package cluster_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/neuro-go/neuro/runtime"
)

// TestLeasesRenewedOnSchedule: an idle cluster writes each deployment's
// lease once every LeaseTTL/3, as the loop renews it. Every lease written
// wakes every node's loop, and a loop that wrote its own leases each time
// it woke kept the cluster writing thousands of leases a second.
func TestLeasesRenewedOnSchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS cluster")
	}
	tc := startCluster(t)
	a, b, c := tc.join("a"), tc.join("b"), tc.join("c")
	for _, n := range []*testNode{a, b, c} {
		spec := runtime.DeploymentSpec{ID: "chat-" + n.name, Model: "neuro-1-lite", Node: n.name, Owner: "o"}
		if _, err := a.node.CreateDeployment(context.Background(), spec, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	var writes atomic.Int64
	sub, err := b.nc.Subscribe("$KV.>", func(m *nats.Msg) {
		if strings.Contains(m.Subject, "leases.chat-") {
			writes.Add(1)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	const idle = 3 * time.Second
	time.Sleep(idle)
	// LeaseTTL is 1.5 s here: a renewal every 0.5 s, 6 for each of the
	// 3 deployments in 3 s.
	if got := writes.Load(); got < 9 || got > 30 {
		t.Errorf("3 idle deployments' leases were written %d times in %v, want about 18", got, idle)
	}
}
