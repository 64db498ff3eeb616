package cluster_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neuro-go/neuro/cluster"
	"github.com/neuro-go/neuro/httpapi"
)

// countingTarget passes the other nodes' counts to a server and adds
// them up, so that a test can wait for a report to arrive.
type countingTarget struct {
	srv  *httpapi.Server
	seen atomic.Int64
}

func (c *countingTarget) SpentElsewhere(principal string, n int) {
	c.srv.SpentElsewhere(principal, n)
	c.seen.Add(int64(n))
}

// TestRateLimitAcrossNodes: a key's requests on one node count against
// its limit on the other, once a report has crossed (RateInterval).
func TestRateLimitAcrossNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three NATS servers")
	}
	tc := startCluster(t)
	defer tc.close()
	servers := map[string]http.Handler{}
	targets := map[string]*countingTarget{}
	for _, name := range []string{"a", "b"} {
		n := tc.join(name)
		share, err := n.node.RateShare()
		if err != nil {
			t.Fatal(err)
		}
		srv, err := httpapi.New(n.node, &httpapi.Options{Keys: map[string]string{"sk-alice": "alice"}, RequestsPerMinute: 30, RateShare: share})
		if err != nil {
			t.Fatal(err)
		}
		targets[name] = &countingTarget{srv: srv}
		share.Attach(targets[name])
		servers[name] = srv
	}
	admitted := func(name string, n int) int {
		ok := 0
		for i := 0; i < n; i++ {
			r := httptest.NewRequest("GET", "/v1/models", nil)
			r.Header.Set("Authorization", "Bearer sk-alice")
			w := httptest.NewRecorder()
			servers[name].ServeHTTP(w, r)
			if w.Code == 200 {
				ok++
			}
		}
		return ok
	}
	// b's subscription reaches a's server a moment after b joins, and
	// core NATS drops a report sent before it arrives there,
	hears := func(want int64) func() error {
		return func() error {
			if got := targets["b"].seen.Load(); got < want {
				return fmt.Errorf("b has heard of %d of %d", got, want)
			}
			return nil
		}
	}
	// so send a request at a time, one a report interval, until b hears
	// of one; then b must hear of every request after them.
	warm := 0
	eventually(t, 10*time.Second, "b hears of a request on a", func() error {
		if err := hears(1)(); err == nil {
			return nil
		}
		warm += admitted("a", 1)
		time.Sleep(cluster.RateInterval)
		return hears(1)()
	})
	if warm > 5 {
		t.Fatalf("%d requests on a before b heard of one", warm)
	}
	heard := targets["b"].seen.Load()
	onA := warm + admitted("a", 25-warm)
	eventually(t, 10*time.Second, "b hears of a's requests", hears(heard+int64(onA-warm)))
	onB := admitted("b", 25)
	t.Logf("limit 30 a minute: %d admitted on a, then %d on b", onA, onB)
	if onA != 25 || onA+onB > 32 {
		t.Errorf("admitted %d on a and %d on b: the limit of 30 does not hold across the nodes", onA, onB)
	}
}
