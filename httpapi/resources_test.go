package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

type digitsFixture struct {
	Test struct {
		Inputs [][]float32 `json:"inputs"`
		Labels []int       `json:"labels"`
	} `json:"test"`
	Calibration struct {
		Inputs [][]float32 `json:"inputs"`
	} `json:"calibration"`
}

func readDigits(t testing.TB) *digitsFixture {
	t.Helper()
	var d digitsFixture
	if err := json.Unmarshal(readFixture(t, "compile/testdata/digits/digits_test.json"), &d); err != nil {
		t.Fatal(err)
	}
	return &d
}

// compileDigits compiles the digits MLP for key and returns its id.
func compileDigits(t testing.TB, s *Server, key string) string {
	t.Helper()
	calib, _ := json.Marshal(readDigits(t).Calibration.Inputs[:64])
	w := do(s, "POST", "/v1/compile", key, compileBody("onnx", readFixture(t, "compile/testdata/digits/mlp.onnx"),
		`,"name":"digits","options":{"timesteps":32,"calibration":{"samples":`+string(calib)+`}}`))
	if w.Code != 200 {
		t.Fatalf("compile: %d %s", w.Code, w.Body)
	}
	var res wire.CompiledNetwork
	json.Unmarshal(w.Body.Bytes(), &res)
	return res.ID
}

func decodeRun(t *testing.T, w *httptest.ResponseRecorder) *wire.Run {
	t.Helper()
	if w.Code != 200 {
		t.Fatalf("run: %d %s", w.Code, w.Body)
	}
	var res wire.Run
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	return &res
}

func vec(v []float32) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestDeployAndRunOwnNetwork(t *testing.T) {
	dir := t.TempDir()
	rt := newTestRuntime(t, &runtime.Options{DataDir: dir}, 2)
	s := newTestServer(t, rt, &Options{MaxRunSamples: 8, MaxRunTimesteps: 100})
	net := compileDigits(t, s, keyAlice)
	digits := readDigits(t)

	w := do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`","device":"cpu","id":"alice-digits","max_batch_size":4,"precision":"int8"}`)
	if w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	var rec wire.Deployment
	json.Unmarshal(w.Body.Bytes(), &rec)
	if rec.Status != "ready" || rec.OwnedBy != "alice" || rec.Model != net || rec.MaxBatchSize != 4 || rec.Device.Name != "cpu" ||
		rec.Device.Model != "int8 simulator" {
		t.Fatalf("record %+v", rec)
	}

	// Three test digits together, then each alone: the same counts.
	body := fmt.Sprintf(`{"inputs":[%s,%s,%s],"record":["spikes"]}`, vec(digits.Test.Inputs[0]), vec(digits.Test.Inputs[1]), vec(digits.Test.Inputs[2]))
	together := decodeRun(t, do(s, "POST", "/v1/deployments/alice-digits/run", keyAlice, body))
	if len(together.Outputs) != 3 || together.Object != "network.run" || together.Usage.Samples != 3 || together.Usage.Timesteps != 96 ||
		together.Usage.Spikes <= 0 || together.Usage.EnergyUJ <= 0 || !strings.HasPrefix(together.ID, "run-") {
		t.Fatalf("run: %+v", together)
	}
	correct := 0
	for k, o := range together.Outputs {
		alone := decodeRun(t, do(s, "POST", "/v1/deployments/alice-digits/run", keyAlice, `{"inputs":[`+vec(digits.Test.Inputs[k])+`]}`))
		if !slices.Equal(alone.Outputs[0].SpikeCounts, o.SpikeCounts) || alone.Outputs[0].Prediction != o.Prediction {
			t.Errorf("sample %d: alone %v, batched %v", k, alone.Outputs[0].SpikeCounts, o.SpikeCounts)
		}
		if o.Prediction == digits.Test.Labels[k] {
			correct++
		}
		if o.Spikes == nil {
			t.Errorf("sample %d: no recorded spikes", k)
		}
	}
	if correct < 2 {
		t.Errorf("%d of 3 digits right: %+v", correct, together.Outputs)
	}

	// The same input as a T × n matrix, and as events.
	rows := make([]string, 32)
	for i := range rows {
		rows[i] = vec(digits.Test.Inputs[0])
	}
	m := decodeRun(t, do(s, "POST", "/v1/deployments/alice-digits/run", keyAlice, `{"inputs":[[`+strings.Join(rows, ",")+`]]}`))
	if !slices.Equal(m.Outputs[0].SpikeCounts, together.Outputs[0].SpikeCounts) {
		t.Errorf("matrix %v, vector %v", m.Outputs[0].SpikeCounts, together.Outputs[0].SpikeCounts)
	}
	ev := decodeRun(t, do(s, "POST", "/v1/deployments/alice-digits/run", keyAlice, `{"inputs":[{"events":[[0,5],[3,7],[3,9]],"timesteps":10}],"record":["membrane"]}`))
	if ev.Usage.Timesteps != 10 || len(ev.Outputs[0].Membrane) != 10 {
		t.Errorf("events: %+v", ev)
	}
	packed, _ := json.Marshal(wire.EventSample{Events: [][2]int{{0, 5}, {3, 7}, {3, 9}}, Timesteps: 10}.Pack())
	pv := decodeRun(t, do(s, "POST", "/v1/deployments/alice-digits/run", keyAlice, `{"inputs":[`+string(packed)+`],"record":["membrane"]}`))
	if !reflect.DeepEqual(pv.Outputs, ev.Outputs) {
		t.Errorf("packed events %+v, as JSON %+v", pv.Outputs, ev.Outputs)
	}
	raster, err := wire.EventSample{Events: [][2]int{{0, 5}, {3, 7}, {3, 9}}, Timesteps: 10}.Raster(64)
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := json.Marshal(raster)
	rv := decodeRun(t, do(s, "POST", "/v1/deployments/alice-digits/run", keyAlice, `{"inputs":[`+string(rb)+`],"record":["membrane"]}`))
	if !reflect.DeepEqual(rv.Outputs, ev.Outputs) {
		t.Errorf("a raster %+v, events as JSON %+v", rv.Outputs, ev.Outputs)
	}

	// Bad input names the sample.
	good := vec(digits.Test.Inputs[0])
	for _, tc := range []struct{ name, body, param string }{
		{"wrong width", `{"inputs":[` + good + `,[1,2,3]]}`, "inputs[1]"},
		{"matrix rows against timesteps", `{"inputs":[[` + good + `,` + good + `]],"timesteps":3}`, "inputs[0]"},
		{"event input out of range", `{"inputs":[{"events":[[0,64]],"timesteps":4}]}`, "inputs[0]"},
		{"event after the end", `{"inputs":[{"events":[[4,1]],"timesteps":4}]}`, "inputs[0]"},
		{"raster of the wrong length", `{"inputs":[` + good + `,{"raster":"AAAA","timesteps":4}]}`, "inputs[1]"},
		{"raster beside events", `{"inputs":[{"raster":"","events":[],"timesteps":4}]}`, "inputs[0]"},
		{"negative step", `{"inputs":[` + good + `,{"events":[[-1,1]],"timesteps":4}]}`, "inputs[1]"},
		{"infinite value", `{"inputs":[[1e39` + strings.Repeat(",0", 63) + `]]}`, "inputs[0]"},
		{"too many samples", `{"inputs":[` + strings.Repeat(good+",", 8) + good + `]}`, "inputs"},
		{"too many timesteps", `{"inputs":[` + good + `],"timesteps":101}`, "timesteps"},
		{"not a sample", `{"inputs":["seven"]}`, "inputs[0]"},
		{"two forms", `{"inputs":[{"events":[],"timesteps":0}]}`, "inputs[0]"},
		{"unknown recording", `{"inputs":[` + good + `],"record":["voltage"]}`, "record"},
	} {
		w := do(s, "POST", "/v1/deployments/alice-digits/run", keyAlice, tc.body)
		if w.Code != 400 || !strings.Contains(w.Body.String(), `"param":"`+tc.param+`"`) {
			t.Errorf("%s: %d %s", tc.name, w.Code, w.Body)
		}
	}
	checkError(t, do(s, "POST", "/v1/deployments/neuro-1-lite-cpu/run", keyAlice, `{"inputs":[[1]]}`), 400, typeInvalidRequest, "not_a_network", "")
	checkError(t, do(s, "POST", "/v1/deployments/alice-digits/chat/completions", keyAlice, `{"messages":[{"role":"user","content":"hi"}]}`),
		400, typeInvalidRequest, "not_a_language_model", "model")

	// Another key sees none of it.
	for _, tc := range []struct{ method, path, body, code string }{
		{"GET", "/v1/deployments/alice-digits", "", "deployment_not_found"},
		{"POST", "/v1/deployments/alice-digits/run", `{"inputs":[` + good + `]}`, "deployment_not_found"},
		{"DELETE", "/v1/deployments/alice-digits", "", "deployment_not_found"},
		{"POST", "/v1/deployments", `{"model":"` + net + `","device":"cpu"}`, "model_not_found"},
		{"DELETE", "/v1/models/" + net, "", "model_not_found"},
		{"GET", "/v1/models/" + net, "", "model_not_found"},
		{"POST", "/v1/chat/completions", `{"model":"` + net + `","messages":[{"role":"user","content":"hi"}]}`, "model_not_found"},
		{"POST", "/v1/completions", `{"model":"` + net + `","prompt":"hi"}`, "model_not_found"},
	} {
		w := do(s, tc.method, tc.path, keyBob, tc.body)
		if w.Code != 404 || !strings.Contains(w.Body.String(), tc.code) || strings.Contains(w.Body.String(), "compiled network") {
			t.Errorf("bob %s %s: %d %s", tc.method, tc.path, w.Code, w.Body)
		}
	}
	var list struct{ Data []wire.Deployment }
	json.Unmarshal(do(s, "GET", "/v1/deployments", keyBob, nil).Body.Bytes(), &list)
	for _, d := range list.Data {
		if d.ID == "alice-digits" || d.OwnedBy != "system" {
			t.Errorf("bob lists %+v", d)
		}
	}

	// Creating: the cases API.md names.
	checkError(t, do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`","device":"cpu","id":"alice-digits"}`), 409, typeInvalidRequest, "deployment_exists", "id")
	checkError(t, do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`","device":"tpu"}`), 400, typeInvalidRequest, "invalid_value", "device")
	checkError(t, do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`","id":"a b"}`), 400, typeInvalidRequest, "invalid_value", "id")
	checkError(t, do(s, "POST", "/v1/deployments", keyAlice, `{"model":"gpt-4"}`), 404, typeNotFound, "model_not_found", "")
	checkError(t, do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`","replicas":99}`), 400, typeInvalidRequest, "invalid_value", "replicas")
	checkError(t, do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`","precision":"int4"}`), 400, typeInvalidRequest, "invalid_value", "precision")
	checkError(t, do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`","precision":8}`), 400, typeInvalidRequest, "invalid_type", "precision")
	checkError(t, do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`","device":"loihi","precision":"int8"}`), 400, typeInvalidRequest, "invalid_value", "precision")

	// Deleting: in use, the server's own, then in order.
	checkError(t, do(s, "DELETE", "/v1/models/"+net, keyAlice, nil), 409, typeInvalidRequest, "model_in_use", "")
	checkError(t, do(s, "DELETE", "/v1/deployments/neuro-1-lite-cpu", keyAlice, nil), 403, typeInvalidRequest, "permission_denied", "")
	checkError(t, do(s, "DELETE", "/v1/models/neuro-1-lite", keyAlice, nil), 403, typeInvalidRequest, "permission_denied", "")

	// A restart with the data directory brings the deployment back.
	rt2 := newTestRuntime(t, &runtime.Options{DataDir: dir}, 2)
	if err := rt2.RestoreDeployments(context.Background()); err != nil {
		t.Fatal(err)
	}
	d2, err := rt2.Deployment("alice-digits")
	if err != nil || d2.Owner != "alice" || d2.Wait(context.Background()) != nil || d2.Device.Model != "int8 simulator" {
		t.Fatalf("after a restart: %v %v", d2, err)
	}
	again := decodeRun(t, do(newTestServer(t, rt2, nil), "POST", "/v1/deployments/alice-digits/run", keyAlice, `{"inputs":[`+good+`]}`))
	if !slices.Equal(again.Outputs[0].SpikeCounts, together.Outputs[0].SpikeCounts) {
		t.Errorf("after a restart %v, before %v", again.Outputs[0].SpikeCounts, together.Outputs[0].SpikeCounts)
	}
	rt2.Undeploy("alice-digits", "alice")

	w = do(s, "DELETE", "/v1/deployments/alice-digits", keyAlice, nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"deleted":true`) {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	checkError(t, do(s, "GET", "/v1/deployments/alice-digits", keyAlice, nil), 404, typeNotFound, "deployment_not_found", "")
	if w := do(s, "DELETE", "/v1/models/"+net, keyAlice, nil); w.Code != 200 {
		t.Fatalf("delete model: %d %s", w.Code, w.Body)
	}
	checkError(t, do(s, "GET", "/v1/models/"+net, keyAlice, nil), 404, typeNotFound, "model_not_found", "")
	if left, _ := filepath.Glob(filepath.Join(dir, "*", "*")); len(left) != 0 {
		t.Errorf("left on disk: %v", left)
	}

	// Runs are telemetry like any request.
	var tel struct {
		Requests struct {
			ByEndpoint map[string]int `json:"by_endpoint"`
		}
		Neuromorphic struct{ Spikes float64 }
	}
	json.Unmarshal(do(s, "GET", "/v1/telemetry", keyAlice, nil).Body.Bytes(), &tel)
	if tel.Requests.ByEndpoint[epDeploymentRun] < 5 || tel.Neuromorphic.Spikes <= 0 {
		t.Errorf("telemetry %+v", tel)
	}
	if b := do(s, "GET", "/metrics", "", nil).Body.String(); !strings.Contains(b, "neuro_samples_total") {
		t.Error("metrics lack neuro_samples_total")
	}
	os.RemoveAll(dir)
}

func TestQuotas(t *testing.T) {
	rt := newTestRuntime(t, &runtime.Options{Quota: runtime.Quota{Deployments: 1, Networks: 2}}, 2)
	s := newTestServer(t, rt, nil)
	net := compileDigits(t, s, keyAlice)
	compileDigits(t, s, keyAlice)
	w := do(s, "POST", "/v1/compile", keyAlice, compileBody("onnx", readFixture(t, "compile/testdata/digits/mlp.onnx"), ""))
	checkError(t, w, 429, typeRateLimit, "insufficient_quota", "")
	if w.Header().Get("Retry-After") != "" {
		t.Error("a quota is not a rate limit: no Retry-After")
	}
	compileDigits(t, s, keyBob) // bob's quota is his own
	if w := do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`"}`); w.Code != 201 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	checkError(t, do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`"}`), 429, typeRateLimit, "insufficient_quota", "")
}
