package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/neuro-go/neuro/cluster"
	"github.com/neuro-go/neuro/httpapi"
	neuro "github.com/neuro-go/neuro/runtime"
)

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "neuro"
	}
	if i := strings.IndexByte(h, '.'); i > 0 {
		h = h[:i]
	}
	return h
}

// joinCluster connects to NATS and joins the cluster (-cluster, -node).
// The keys of NEURO_API_KEYS (or this run's generated key) are added to
// the cluster's key store, which every node reads. When ctx ends (SIGINT,
// SIGTERM) the node hands its deployments over, and it leaves the cluster
// when run calls c.exits, after the HTTP server's last request.
func joinCluster(ctx context.Context, c *config, rt *neuro.Runtime, log *slog.Logger, stdout io.Writer) (httpapi.Backend, httpapi.KeyStore, *cluster.RateShare, error) {
	nc, err := nats.Connect(c.cluster, nats.Name("neuro-"+c.node), nats.MaxReconnects(-1),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { log.Warn("NATS disconnected", "err", err) }),
		nats.ReconnectHandler(func(nc *nats.Conn) { log.Info("NATS reconnected", "server", nc.ConnectedUrlRedacted()) }))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-cluster: %w", err)
	}
	node, err := cluster.Join(ctx, nc, rt, &cluster.Options{Name: c.node, Logger: log})
	if err != nil {
		nc.Close()
		return nil, nil, nil, err
	}
	keys, err := node.Keys()
	if err == nil {
		for k, p := range c.keys {
			if err = keys.Add(ctx, k, p); err != nil {
				break
			}
		}
	}
	var share *cluster.RateShare
	if err == nil {
		share, err = node.RateShare()
	}
	if err != nil {
		node.Close()
		nc.Close()
		return nil, nil, nil, err
	}
	// On SIGINT or SIGTERM the node hands its deployments over while the
	// HTTP server finishes its running requests (within -grace), and
	// leaves the cluster once they have finished.
	context.AfterFunc(ctx, func() {
		lctx, cancel := context.WithTimeout(context.Background(), c.grace)
		defer cancel()
		node.Leave(lctx)
	})
	c.exits = append(c.exits, func() {
		node.Close()
		nc.Drain()
	})
	fmt.Fprintf(stdout, "Joined the cluster at %s as node %q\n", nc.ConnectedUrlRedacted(), c.node)
	return node, keys, share, nil
}
