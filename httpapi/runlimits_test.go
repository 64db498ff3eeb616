package httpapi

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/neuro-go/neuro/runtime"
	"github.com/neuro-go/neuro/runtime/hal/haltest"
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
