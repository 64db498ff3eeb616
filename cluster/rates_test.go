package cluster_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/neuro-go/neuro/cluster"
	"github.com/neuro-go/neuro/httpapi"
)

// TestRateLimitAcrossNodes: a key's requests on one node count against
// its limit on the other, once a report has crossed (RateInterval).
func TestRateLimitAcrossNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three NATS servers")
	}
	tc := startCluster(t)
	defer tc.close()
	servers := map[string]http.Handler{}
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
		share.Attach(srv)
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
	time.Sleep(10 * cluster.RateInterval) // reports cross, with room for a loaded machine
	onB := admitted("b", 25)
	t.Logf("limit 30 a minute: %d admitted on a, then %d on b", onA, onB)
	if onA != 25 || onA+onB > 32 {
		t.Errorf("admitted %d on a and %d on b: the limit of 30 does not hold across the nodes", onA, onB)
	}
}
