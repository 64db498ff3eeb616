package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/compile"
	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal/haltest"
	"github.com/neuro-go/neuro/snn"
)

// deployNetwork registers haltest's network with 4 inputs and the given
// outputs as id, and deploys it on the cpu simulator as id-cpu.
func deployNetwork(t *testing.T, rt *runtime.Runtime, id string, outputs, batch int) {
	t.Helper()
	if err := rt.RegisterModel(&runtime.Model{ID: id, Program: haltest.Program(4, outputs)}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Deploy(context.Background(), runtime.DeploymentSpec{ID: id + "-cpu", Model: id, MaxBatch: batch}); err != nil {
		t.Fatal(err)
	}
}

// emptySamples is a run of k event samples with no events, one step
// each: a body of a few bytes per sample.
func emptySamples(k int) string {
	return `{"inputs":[` + strings.TrimSuffix(strings.Repeat(`{"events":[],"timesteps":1},`, k), ",") + `]}`
}

// The answer's size is bounded before anything runs: spike_counts and
// final_state are a value per output neuron each, for every sample,
// whatever the request's own size.
func TestRunAnswerIsBounded(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	deployNetwork(t, rt, "wide", 300, 8)
	s := newTestServer(t, rt, &Options{MaxRunOutputValues: 16_384})
	// 27 × 2 × 300 = 16,200 values fit; 32 × 2 × 300 = 19,200 do not.
	res := decodeRun(t, do(s, "POST", "/v1/deployments/wide-cpu/run", keyAlice, emptySamples(27)))
	if len(res.Outputs) != 27 || len(res.Outputs[0].SpikeCounts) != 300 || len(res.Outputs[0].FinalState) != 300 {
		t.Fatalf("%d outputs", len(res.Outputs))
	}
	w := do(s, "POST", "/v1/deployments/wide-cpu/run", keyAlice, emptySamples(32))
	checkError(t, w, 400, typeInvalidRequest, "invalid_value", "inputs")
	if !strings.Contains(w.Body.String(), "16384") || !strings.Contains(w.Body.String(), "MaxRunOutputValues") {
		t.Errorf("the refusal does not name the limit: %s", w.Body)
	}
	// Recordings count as well: 2 samples of 20 steps recording spikes
	// and membrane are 2 × (600 + 2 × 20 × 300) = 25,200 values.
	w = do(s, "POST", "/v1/deployments/wide-cpu/run", keyAlice, `{"inputs":[[0,0,0,0],[0,0,0,0]],"timesteps":20,"record":["spikes","membrane"]}`)
	checkError(t, w, 400, typeInvalidRequest, "invalid_value", "inputs")
}

// The documented MaxRunSamples holds on a deployment of a small batch:
// its queue holds a whole run.
func TestRunOfMaxSamplesOnSmallBatch(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	deployNetwork(t, rt, "small", 3, 2)
	s := newTestServer(t, rt, nil)
	res := decodeRun(t, do(s, "POST", "/v1/deployments/small-cpu/run", keyAlice, emptySamples(DefaultMaxRunSamples)))
	if len(res.Outputs) != DefaultMaxRunSamples {
		t.Fatalf("%d outputs", len(res.Outputs))
	}
	w := do(s, "POST", "/v1/deployments/small-cpu/run", keyAlice, emptySamples(DefaultMaxRunSamples+1))
	checkError(t, w, 400, typeInvalidRequest, "invalid_value", "inputs")
	if !strings.Contains(w.Body.String(), fmt.Sprint(DefaultMaxRunSamples)) {
		t.Errorf("the refusal does not name the limit: %s", w.Body)
	}
}

// A run's body is bounded by MaxRunBodyBytes, 16 MiB, not by what
// MaxRunValues would allow in text.
func TestRunBodyLimit(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	deployNetwork(t, rt, "small", 3, 2)
	s := newTestServer(t, rt, nil)
	run := `{"inputs":[[0,0,0,0]]}`
	decodeRun(t, do(s, "POST", "/v1/deployments/small-cpu/run", keyAlice, run+strings.Repeat(" ", 2<<20)))
	w := do(s, "POST", "/v1/deployments/small-cpu/run", keyAlice, run+strings.Repeat(" ", DefaultMaxRunBodyBytes))
	checkError(t, w, 413, typeInvalidRequest, "request_too_large", "")
	if !strings.Contains(w.Body.String(), fmt.Sprint(DefaultMaxRunBodyBytes)) {
		t.Errorf("the refusal does not name the limit: %s", w.Body)
	}
}

// Runs hold at most RunMemory at once, server-wide: their bodies, and
// then what their inputs and answers take. A run that cannot reserve
// its share in time is 503 with Retry-After, naming the limit.
func TestRunMemoryBudget(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	deployNetwork(t, rt, "wide", 300, 8)
	const budget = 64 << 10
	s := newTestServer(t, rt, &Options{RunMemory: budget, CompileWait: 20 * time.Millisecond})
	run := `{"inputs":[[0,0,0,0]]}` // an answer of 600 values: about 21 KiB held
	decodeRun(t, do(s, "POST", "/v1/deployments/wide-cpu/run", keyAlice, run))

	for _, taken := range []int64{budget, budget - 1000} { // no room for the body; room for the body, not the answer
		if err := s.runBytes.Acquire(context.Background(), taken); err != nil {
			t.Fatal(err)
		}
		w := do(s, "POST", "/v1/deployments/wide-cpu/run", keyAlice, run)
		checkError(t, w, 503, typeServer, "overloaded", "")
		if w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "RunMemory") {
			t.Errorf("taken %d: %s %v", taken, w.Body, w.Header())
		}
		s.runBytes.Release(taken)
	}
	decodeRun(t, do(s, "POST", "/v1/deployments/wide-cpu/run", keyAlice, run))
	// Every run has given its reservation back.
	if !s.runBytes.TryAcquire(budget) {
		t.Error("runs still hold memory")
	}
}

// overflowing registers a network of 4 inputs whose LIF layer of 2
// neurons sums them with weight 1 and a subtractive reset: inputs near
// float32's largest overflow its membrane to +Inf.
func overflowing(t *testing.T, rt *runtime.Runtime) {
	t.Helper()
	w := snn.NewTensor(2, 4)
	for i := range w.Data {
		w.Data[i] = 1
	}
	lif := &snn.LIF{Tau: []float64{20e-3}, R: []float64{1}, VLeak: []float64{0}, VThreshold: []float64{1}, VReset: []float64{0}, Reset: snn.ResetSubtract}
	g := snn.NewGraph().Add("in", &snn.Input{Shape: []int{4}}).Add("fc", &snn.Linear{Weight: w}).Add("lif", lif).Add("out", &snn.Output{}).
		Connect("in", "fc", "lif", "out")
	if err := rt.RegisterModel(&runtime.Model{ID: "overflow", Program: &compile.Program{Name: "overflow", Graph: g, Dt: 1e-3, Timesteps: 2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Deploy(context.Background(), runtime.DeploymentSpec{ID: "overflow-cpu", Model: "overflow"}); err != nil {
		t.Fatal(err)
	}
}

// Inputs within float32's range that overflow the network's state are
// 422 naming the sample and the value, not a 500.
func TestRunOverflowIs422(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	overflowing(t, rt)
	s := newTestServer(t, rt, nil)
	decodeRun(t, do(s, "POST", "/v1/deployments/overflow-cpu/run", keyAlice, `{"inputs":[[1,2,3,4]]}`))
	w := do(s, "POST", "/v1/deployments/overflow-cpu/run", keyAlice, `{"inputs":[[1,2,3,4],[3.4e38,3.4e38,3.4e38,3.4e38]],"timesteps":2}`)
	checkError(t, w, 422, typeInvalidRequest, "numeric_overflow", "inputs[1]")
	if !strings.Contains(w.Body.String(), "overflowed float32") {
		t.Errorf("%s", w.Body)
	}
}

// failingRuns is a backend whose runs fail with an error the server
// does not know.
type failingRuns struct{ *runtime.Runtime }

func (failingRuns) Run(context.Context, *runtime.RunRequest) (*runtime.RunResult, error) {
	return nil, errors.New("the device caught fire")
}

// failingBackend fails generations and stored responses with errors the
// API does not know.
type failingBackend struct{ Backend }

func (failingBackend) Generate(context.Context, *runtime.Request, func(runtime.Event) error) (*runtime.Result, error) {
	return nil, errors.New("the generator caught fire")
}

func (failingBackend) Response(context.Context, string, string) (*runtime.StoredResponse, error) {
	return nil, errors.New("the store caught fire")
}

// Every 500 of the generation and response endpoints is logged with its
// request's id, streamed or not.
func TestInternalGenerationErrorsAreLogged(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	var log bytes.Buffer
	s, err := New(failingBackend{rt}, &Options{Keys: testKeys, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ method, path, body, fire string }{
		{"POST", "/v1/chat/completions", `{"model":"neuro-1-lite","messages":[{"role":"user","content":"hi"}]}`, "generator"},
		{"POST", "/v1/chat/completions", `{"model":"neuro-1-lite","messages":[{"role":"user","content":"hi"}],"stream":true}`, "generator"},
		{"POST", "/v1/completions", `{"model":"neuro-1-lite","prompt":"hi"}`, "generator"},
		{"POST", "/v1/responses", `{"model":"neuro-1-lite","input":"hi"}`, "generator"},
		{"POST", "/v1/responses", `{"model":"neuro-1-lite","input":"hi","stream":true}`, "generator"},
		{"GET", "/v1/responses/resp_x", "", "store"},
		{"POST", "/v1/responses", `{"model":"neuro-1-lite","input":"hi","previous_response_id":"resp_x"}`, "store"},
	} {
		log.Reset()
		var body any
		if c.body != "" {
			body = c.body
		}
		w := do(s, c.method, c.path, keyAlice, body)
		checkError(t, w, 500, typeServer, "internal_error", "")
		if id := w.Header().Get("X-Request-Id"); !strings.Contains(log.String(), "the "+c.fire+" caught fire") || !strings.Contains(log.String(), id) {
			t.Errorf("%s %s: log %q lacks the error or the request id %s", c.method, c.path, log.String(), id)
		}
	}
}

// A 500 says it has been logged: it is, through the server's logger,
// with the request's id.
func TestInternalErrorsAreLogged(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	deployNetwork(t, rt, "small", 3, 2)
	var log bytes.Buffer
	s, err := New(failingRuns{rt}, &Options{Keys: testKeys, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w := do(s, "POST", "/v1/deployments/small-cpu/run", keyAlice, `{"inputs":[[0,0,0,0]]}`)
	checkError(t, w, 500, typeServer, "internal_error", "")
	if id := w.Header().Get("X-Request-Id"); !strings.Contains(log.String(), "the device caught fire") || !strings.Contains(log.String(), id) {
		t.Errorf("log %q lacks the error or the request id %s", log.String(), id)
	}
}

// A deployment over its owner's memory budget is refused as the other
// quotas are: 429 insufficient_quota, naming the limit.
func TestDeploymentMemoryQuota(t *testing.T) {
	rt := newTestRuntime(t, &runtime.Options{Quota: runtime.Quota{DeploymentBytes: 1 << 20}}, 2)
	deployNetwork(t, rt, "wide", 300, 8)
	s := newTestServer(t, rt, nil)
	if w := do(s, "POST", "/v1/deployments", keyAlice, `{"model":"wide","max_batch_size":4}`); w.Code != 201 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	w := do(s, "POST", "/v1/deployments", keyAlice, `{"model":"wide","max_batch_size":256}`)
	checkError(t, w, 429, typeRateLimit, "insufficient_quota", "")
	if !strings.Contains(w.Body.String(), "Quota.DeploymentBytes") || !strings.Contains(w.Body.String(), "256 slots") {
		t.Errorf("%s", w.Body)
	}
}

// Deployment ids are scoped by key: bob creating alice's id gets what a
// free id gets (201, a deployment of his own under that id), so he
// cannot learn which ids alice uses; each then reaches only their own.
func TestDeploymentIDsCannotBeProbed(t *testing.T) {
	rt := newTestRuntime(t, nil, 2)
	deployNetwork(t, rt, "small", 3, 2)
	s := newTestServer(t, rt, nil)
	create := func(key, id string) *wire.Deployment {
		t.Helper()
		w := do(s, "POST", "/v1/deployments", key, `{"model":"small","id":"`+id+`"}`)
		if w.Code != 201 || w.Header().Get("Location") != "/v1/deployments/"+id {
			t.Fatalf("%s creating %s: %d %s", key, id, w.Code, w.Body)
		}
		var rec wire.Deployment
		json.Unmarshal(w.Body.Bytes(), &rec)
		return &rec
	}
	create(keyAlice, "net")
	taken, free := create(keyBob, "net"), create(keyBob, "other")
	if taken.ID != "net" || taken.OwnedBy != free.OwnedBy || taken.Status != free.Status || taken.Model != free.Model {
		t.Errorf("alice's id %+v, a free id %+v", taken, free)
	}
	// Each key's own id: a second create is 409 for each alike.
	for _, key := range []string{keyAlice, keyBob} {
		checkError(t, do(s, "POST", "/v1/deployments", key, `{"model":"small","id":"net"}`), 409, typeInvalidRequest, "deployment_exists", "id")
	}
	// The server's ids are everyone's.
	checkError(t, do(s, "POST", "/v1/deployments", keyBob, `{"model":"small","id":"small-cpu"}`), 409, typeInvalidRequest, "deployment_exists", "id")

	if w := do(s, "DELETE", "/v1/deployments/net", keyBob, nil); w.Code != 200 {
		t.Fatalf("bob deleting his net: %d %s", w.Code, w.Body)
	}
	w := do(s, "GET", "/v1/deployments/net", keyAlice, nil)
	var rec wire.Deployment
	json.Unmarshal(w.Body.Bytes(), &rec)
	if w.Code != 200 || rec.OwnedBy != "alice" {
		t.Errorf("alice's net after bob deleted his: %d %s", w.Code, w.Body)
	}
	checkError(t, do(s, "GET", "/v1/deployments/net", keyBob, nil), 404, typeNotFound, "deployment_not_found", "")
	checkError(t, do(s, "POST", "/v1/deployments/net/run", keyBob, `{"inputs":[[0,0,0,0]]}`), 404, typeNotFound, "deployment_not_found", "")
	decodeRun(t, do(s, "POST", "/v1/deployments/net/run", keyAlice, `{"inputs":[[0,0,0,0]]}`))
}
