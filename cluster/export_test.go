package cluster

// StallWatch stops n's watch of one of its buckets ("deployments",
// "leases", ...) without telling it, as a watch stalls when its NATS
// server is lost: the node's view of that bucket stops changing until
// the node notices.
func StallWatch(n *Node, bucket string) {
	if w := n.watcherOf(n.bucket(bucket)); w != nil {
		w.cancel()
	}
}
