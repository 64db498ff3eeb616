// Package cluster runs several Neuro nodes as one service on NATS
// JetStream. A Node wraps a node's *runtime.Runtime and implements
// httpapi.Backend, so the REST surface is the same alone and in a
// cluster, and any node answers any call.
//
// # Overview
//
//	nc, _ := nats.Connect("nats://h1:4222,nats://h2:4222")
//	node, err := cluster.Join(ctx, nc, rt, &cluster.Options{Name: "n1"})
//	keys, _ := node.Keys()
//	srv, _ := httpapi.New(node, &httpapi.Options{KeyStore: keys})
//
// What lives where (Prefix "neuro"):
//
//   - compiled programs: object store neuro_programs, named by the
//     SHA-256 of the program file; their records (owner, report,
//     program) in KV neuro_networks. Every node registers every network
//     in its runtime, so model lookups are local everywhere.
//   - deployments: desired state in KV neuro_deployments; who runs each
//     in KV neuro_leases (TTL LeaseTTL), claimed with compare-and-set
//     and renewed every LeaseTTL/3 with the deployment's status.
//   - members in KV neuro_members, and which are alive in neuro_alive
//     (TTL LeaseTTL).
//   - API keys (their SHA-256) in KV neuro_keys.
//   - telemetry records in the stream neuro_telemetry (subjects
//     neuro.telemetry.<node>), written in batches of up to 20 ms and
//     read back whole by every node.
//   - calls for a deployment on subject neuro.dep.<id> ('.' in the id
//     written '~'), queue group "neuro": accepted at once by request and
//     reply, then events, heartbeats and the result on the caller's
//     inbox neuro.call.<caller>.<id>, cancels on neuro.cancel.<server>;
//     each node subscribes to both once, when it joins.
//
// # Invariants
//
//   - A deployment runs on at most one node at a time, except for at
//     most LeaseTTL after a node is cut off from NATS: the cut-off node
//     stops serving once it could not renew for LeaseTTL, and no call
//     reaches it meanwhile, since calls travel over NATS.
//   - A routed call ends: with its result, its error, or, when the
//     serving node stops answering for 3 heartbeats,
//     runtime.ErrDeviceUnavailable. It never hangs.
//   - Each request is recorded once, by the node that ran it (or, when
//     it never reached one, by the node that routed it).
package cluster
