package cluster

import (
	"context"

	"github.com/neuro-go/neuro/runtime"
)

// StallWatch stops n's watch of one of its buckets ("deployments",
// "leases", ...) without telling it, as a watch stalls when its NATS
// server is lost: the node's view of that bucket stops changing until
// the node notices.
func StallWatch(n *Node, bucket string) {
	if w := n.watcherOf(n.bucket(bucket)); w != nil {
		w.cancel()
	}
}

// FailLeaseReads makes n's reads of a lease after a lost compare-and-set
// fail with err, as a read fails when its NATS server is slow; nil reads
// again.
func FailLeaseReads(n *Node, err error) { n.failReads.Store(&err) }

// TouchLease writes deployment id's lease again with the value it holds,
// as a write of its holder's that timed out there and landed late does:
// the holder's next renewal loses its compare-and-set.
func TouchLease(ctx context.Context, n *Node, id string) error {
	e, err := n.leases.Get(ctx, id)
	if err != nil {
		return err
	}
	_, err = n.leases.Put(ctx, id, e.Value())
	return err
}

// QueueRecords hands records to n's telemetry writer, as its runtime
// does with each request's.
func QueueRecords(n *Node, recs []runtime.Record) {
	for _, rec := range recs {
		n.telq <- rec
	}
}

// TelemetryStream is the name of the stream n writes its records to.
func TelemetryStream(n *Node) string { return n.bucket("telemetry") }

// HoldCall counts a call to deployment id as accepted on n, as serve does
// before the call reaches the runtime; release ends it.
func HoldCall(n *Node, id string) (release func()) {
	n.mu.Lock()
	n.serving[id]++
	n.mu.Unlock()
	return func() { n.served(id) }
}

// Drop stops n's copy of deployment id, as when its lease is lost.
func Drop(n *Node, id string) { n.drop(id, "a test drops it") }
