package cluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/httpapi"
	"github.com/neuro-go/neuro/runtime"
)

// TestHTTPThroughANode: the REST API of one node, over the cluster
// backend, creates a deployment on another node, lists it with its node,
// streams a chat from it, and reports the nodes in /health.
func TestHTTPThroughANode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three NATS servers")
	}
	tc := startCluster(t)
	defer tc.close()
	tc.join("a")
	b := tc.join("b")
	srv, err := httpapi.New(b.node, &httpapi.Options{Keys: map[string]string{"sk-alice": owner}})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer sk-alice")
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		return w
	}
	if w := do("POST", "/v1/deployments", `{"model":"neuro-1-lite","id":"lite-on-a","node":"a"}`); w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		var rec struct{ Status, Node string }
		json.Unmarshal(do("GET", "/v1/deployments/lite-on-a", "").Body.Bytes(), &rec)
		if rec.Status == string(runtime.StatusReady) {
			if rec.Node != "a" {
				t.Fatalf("lite-on-a runs on %q, want a", rec.Node)
			}
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("lite-on-a is %+v", rec)
		case <-time.After(50 * time.Millisecond):
		}
	}
	w := do("POST", "/v1/deployments/lite-on-a/chat/completions", `{"messages":[{"role":"user","content":"Hello"}],"max_tokens":6,"stream":true,"temperature":0}`)
	if w.Code != 200 {
		t.Fatalf("chat: %d %s", w.Code, w.Body)
	}
	events, done := 0, false
	sc := bufio.NewScanner(w.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "data: [DONE]" {
			done = true
		} else if strings.HasPrefix(line, "data: ") {
			if strings.Contains(line, `"error"`) {
				t.Fatalf("error event %s", line)
			}
			events++
		}
	}
	if !done || events < 3 {
		t.Fatalf("%d events, [DONE] %v", events, done)
	}
	var health struct {
		Nodes []struct {
			Name string
			Up   bool
		}
	}
	json.Unmarshal(do("GET", "/health", "").Body.Bytes(), &health)
	up := 0
	for _, n := range health.Nodes {
		if n.Up {
			up++
		}
	}
	if up != 2 {
		t.Errorf("health nodes %+v", health.Nodes)
	}
	if w := do("DELETE", "/v1/deployments/lite-on-a", ""); w.Code != 200 {
		t.Errorf("delete: %d %s", w.Code, w.Body)
	}
}
