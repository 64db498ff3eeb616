package cluster_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

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
	onA := admitted("a", 25)
	eventually(t, 10*time.Second, "b hears of a's requests", func() error {
		if got := targets["b"].seen.Load(); got < int64(onA) {
			return fmt.Errorf("b has heard of %d of %d", got, onA)
		}
		return nil
	})
	onB := admitted("b", 25)
	t.Logf("limit 30 a minute: %d admitted on a, then %d on b", onA, onB)
	if onA != 25 || onA+onB > 32 {
		t.Errorf("admitted %d on a and %d on b: the limit of 30 does not hold across the nodes", onA, onB)
	}
}
