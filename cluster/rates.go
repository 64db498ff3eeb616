package cluster

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// RateInterval is how often a node tells the others how many requests
// each key made on it.
const RateInterval = 200 * time.Millisecond

// RateShare makes each key's rate limit hold across the cluster: give it
// to httpapi.Options.RateShare, then Attach the server it serves. Every
// RateInterval the node publishes how many requests each key made on it,
// and counts what the other nodes publish against its own buckets, so
// that every node's bucket for a key drains at the key's cluster-wide
// rate.
//
// The tolerance: a key can exceed its limit by what the other nodes admit
// for it within one interval (plus the message's flight); a burst that
// reaches every node at once, before any report, can take each node's
// full bucket (a minute's worth) once.
type RateShare struct {
	n      *Node
	mu     sync.Mutex
	counts map[string]int
	target interface{ SpentElsewhere(principal string, n int) }
	sub    *nats.Subscription
}

type rateReport struct {
	Node   string         `json:"node"`
	Counts map[string]int `json:"counts"`
}

// RateShare returns the node's sharer of rate limits; it runs until the
// node leaves.
func (n *Node) RateShare() (*RateShare, error) {
	r := &RateShare{n: n, counts: map[string]int{}}
	sub, err := n.nc.Subscribe(n.subject("rate"), r.receive)
	if err != nil {
		return nil, err
	}
	// The node's server has the subscription when this returns; the
	// other servers hear of it a moment later, and reports sent before
	// that are not delivered here (within the tolerance above).
	if err := n.nc.Flush(); err != nil {
		sub.Unsubscribe()
		return nil, err
	}
	r.sub = sub
	n.wg.Add(1)
	go r.publish()
	return r, nil
}

// Admitted counts a request this node admitted (httpapi.RateShare).
func (r *RateShare) Admitted(principal string) {
	r.mu.Lock()
	r.counts[principal]++
	r.mu.Unlock()
}

// Attach names the server whose buckets the other nodes' requests
// drain.
func (r *RateShare) Attach(s interface{ SpentElsewhere(principal string, n int) }) {
	r.mu.Lock()
	r.target = s
	r.mu.Unlock()
}

func (r *RateShare) publish() {
	defer r.n.wg.Done()
	defer r.sub.Unsubscribe()
	t := time.NewTicker(RateInterval)
	defer t.Stop()
	for {
		select {
		case <-r.n.ctx.Done():
			return
		case <-t.C:
		}
		// The map is taken, or left, under the lock: Admitted writes
		// to the one left.
		var counts map[string]int
		r.mu.Lock()
		if len(r.counts) > 0 {
			counts, r.counts = r.counts, map[string]int{}
		}
		r.mu.Unlock()
		if counts == nil {
			continue
		}
		b, err := json.Marshal(rateReport{Node: r.n.o.Name, Counts: counts})
		if err == nil {
			err = r.n.nc.Publish(r.n.subject("rate"), b)
		}
		if err != nil {
			r.n.log.Warn("publishing rate counts", "err", err)
		}
	}
}

func (r *RateShare) receive(m *nats.Msg) {
	rep, err := decodeRateReport(m.Data)
	if err != nil || rep.Node == r.n.o.Name {
		return
	}
	r.mu.Lock()
	target := r.target
	r.mu.Unlock()
	if target == nil {
		return
	}
	for p, c := range rep.Counts {
		target.SpentElsewhere(p, c)
	}
}

// decodeRateReport reads another node's counts of requests per key.
func decodeRateReport(b []byte) (rateReport, error) {
	var rep rateReport
	if err := json.Unmarshal(b, &rep); err != nil {
		return rateReport{}, fmt.Errorf("cluster: rate report: %w", err)
	}
	return rep, nil
}
