package httpapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/httpapi/prom"
	"github.com/neuro-go/neuro/runtime"
)

// /metrics answers without a key: it names no caller's network, and
// networks made and deleted leave no series behind them.
func TestMetricsNameNoCallersNetwork(t *testing.T) {
	rt := newTestRuntime(t, &runtime.Options{}, 2)
	s := newTestServer(t, rt, &Options{Metrics: prom.New()})
	var ids []string
	for k := range 3 {
		net := compileDigits(t, s, keyAlice)
		ids = append(ids, net)
		dep := fmt.Sprintf("d%d", k)
		if w := do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`","device":"cpu","id":"`+dep+`"}`); w.Code != 201 {
			t.Fatalf("deploy: %d %s", w.Code, w.Body)
		}
		if w := do(s, "POST", "/v1/deployments/"+dep+"/run", keyAlice, `{"inputs":[{"events":[[0,1]],"timesteps":4}]}`); w.Code != 200 {
			t.Fatalf("run: %d %s", w.Code, w.Body)
		}
		do(s, "DELETE", "/v1/deployments/"+dep, keyAlice, nil)
		do(s, "DELETE", "/v1/models/"+net, keyAlice, nil)
	}
	w := do(s, "GET", "/metrics", "", nil)
	if w.Code != 200 {
		t.Fatalf("/metrics: %d", w.Code)
	}
	body := w.Body.String()
	for _, id := range ids {
		if strings.Contains(body, id) {
			t.Errorf("/metrics names the network %s", id)
		}
	}
	var series []string
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "neuro_samples_total{") {
			series = append(series, line)
		}
	}
	if len(series) != 1 || !strings.Contains(series[0], `model="network"`) || !strings.HasSuffix(series[0], " 3") {
		t.Errorf("neuro_samples_total series %q, want one for model=\"network\" counting 3 samples", series)
	}
}
