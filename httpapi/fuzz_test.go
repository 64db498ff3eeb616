package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/neuro-go/neuro/httpapi/wire"
	"github.com/neuro-go/neuro/runtime"
)

// FuzzChatBody: any body gets a 200 or an OpenAI-shaped 4xx, never a
// panic or a 5xx.
func FuzzChatBody(f *testing.F) {
	for _, s := range []string{
		`{"model":"neuro-1","messages":[{"role":"user","content":"hi"}],"max_tokens":3}`,
		`{"model":"neuro-1","messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"stop":["x"],"n":2,"logprobs":true,"top_logprobs":2}`,
		`{"model":"neuro-1","messages":[],"temperature":1e309}`,
		`{"model":"neuro-1","messages":[{"role":"user","content":"x"}],"stream":true,"stream_options":{"include_usage":true}}`,
		`[[[[`, `{"max_tokens":1.5}`, "\xff", `{"logit_bias":{"1":100}}`,
		`{"model":"neuro-1","prompt":[1,2,3],"max_tokens":0,"echo":true,"logprobs":1}`, `{"model":"neuro-1","prompt":[[5],[-1]]}`,
	} {
		f.Add([]byte(s))
	}
	s := newTestServer(f, newMockRuntime(f), &Options{Mock: true, MaxTokens: 64})
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
			w := do(s, "POST", path, keyAlice, body)
			if w.Code == 200 {
				continue
			}
			if w.Code >= 500 || w.Code < 400 {
				t.Fatalf("%s %q: %d %s", path, body, w.Code, w.Body)
			}
			var e apiErr
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Type == "" {
				t.Fatalf("%s %q: body %s", path, body, w.Body)
			}
		}
	})
}

// FuzzCompileUpload: any base64 text and format is refused with a 4xx or
// compiled, never a panic or a 5xx.
// FuzzResponseBody: any body to POST /v1/responses is answered or
// refused with a 4xx in the API's error shape, never a 5xx or a panic;
// a stream, once started, ends with its last event.
func FuzzResponseBody(f *testing.F) {
	for _, s := range []string{
		`{"model":"neuro-1-lite","input":"hi","max_output_tokens":3}`,
		`{"model":"neuro-1-lite","input":[{"role":"user","content":[{"type":"input_text","text":"a"}]}],"instructions":"x","store":false}`,
		`{"model":"neuro-1-lite","input":"x","stream":true,"max_output_tokens":2,"metadata":{"a":"b"}}`,
		`{"model":"neuro-1-lite","input":"x","previous_response_id":"resp_00","tools":[]}`,
		`{"model":"neuro-1-lite","input":"x","text":{"format":{"type":"text"}},"truncation":"auto"}`,
		`[`, `{"input":1e999}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	s := newTestServer(f, newMockRuntime(f), &Options{Mock: true, MaxTokens: 16})
	f.Fuzz(func(t *testing.T, body []byte) {
		w := do(s, "POST", "/v1/responses", keyAlice, body)
		switch {
		case w.Code == 200:
			if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") &&
				!strings.Contains(w.Body.String(), "event: response.completed") && !strings.Contains(w.Body.String(), "event: response.incomplete") {
				t.Fatalf("%q: a stream without its last event: %s", body, w.Body)
			}
		case w.Code >= 500 || w.Code < 400:
			t.Fatalf("%q: %d %s", body, w.Code, w.Body)
		default:
			var e apiErr
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Type == "" {
				t.Fatalf("%q: body %s", body, w.Body)
			}
		}
	})
}

func FuzzCompileUpload(f *testing.F) {
	f.Add("onnx", "AAEC")
	f.Add("pytorch", "UEsDBBQAAAAIAA==")
	f.Add("torchscript", "=====")
	f.Add("nir", "iUhERg0KGgo")
	s := newTestServer(f, runtime.New(nil), &Options{MaxCompileBytes: 1 << 16})
	f.Fuzz(func(t *testing.T, format, file string) {
		b, _ := json.Marshal(map[string]string{"model_format": format, "model_file": file})
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/v1/compile", strings.NewReader(string(b)))
		r.Header.Set("Authorization", "Bearer "+keyAlice)
		s.ServeHTTP(w, r)
		if w.Code >= 500 || w.Code != 200 && w.Code < 400 {
			t.Fatalf("%q %q: %d %s", format, file, w.Code, w.Body)
		}
	})
}

// FuzzCompileOptions feeds arbitrary JSON to the parsers of /v1/compile's
// options: each either reads it, within its bounds, or refuses it with a
// 400 that names the field.
func FuzzCompileOptions(f *testing.F) {
	f.Add(`{"timesteps":32,"weight_bits":8,"calibration":{"samples":[[0.5,1]],"percentile":99}}`)
	f.Add(`{"layers":[{"name":"0","kind":"linear","shape":[4,2]}],"dt":0.001}`)
	f.Add(`{"ranges":[[[1,0],[0,1]],[[0.5,0.5]]]}`)
	f.Add(`{"ranges":[[1,0]]}`)
	f.Add(`{"ranges":[],"calibration":{"samples":[]}}`)
	f.Add(`[]`)
	f.Add(`{"task":"causal-lm","tokenizer":"gpt2","chat_template":"chatml","context_length":4096}`)
	f.Add(`{"task":"causal-lm","tokenizer_file":"e30=","context_length":0}`)
	f.Add(`{"tokenizer":"gpt2"}`)
	f.Fuzz(func(t *testing.T, options string) {
		raw := json.RawMessage(options)
		if !json.Valid(raw) {
			return // decodeObject refuses the whole body first
		}
		_, iopts, ranges, e := parseCompileOptions(raw)
		if e == nil {
			lm, le := parseLanguageModel(raw)
			if le != nil && (le.Status/100 != 4 || le.Param == "" || le.Message == "") {
				t.Fatalf("%s: %+v", options, le)
			}
			if lm != nil && (lm.ContextLength < 0 || lm.ContextLength > runtime.MaxContextLength || len(lm.Tokenizer) > maxTokenizerBytes) {
				t.Fatalf("%s: over the bounds: %+v", options, lm)
			}
		}
		if e == nil {
			n := values(iopts.Conversion.Calibration)
			for _, seq := range ranges {
				n += values(seq)
			}
			if len(iopts.Layers) > maxLayers || len(ranges) > maxRangeSequences || n > maxCalibrationValues {
				t.Fatalf("over the bounds: %d layers, %d range sequences, %d calibration and range values", len(iopts.Layers), len(ranges), n)
			}
		}
		if e != nil && (e.Status != 400 || e.Param == "" || e.Message == "") {
			t.Fatalf("%s: %+v", options, e)
		}
	})
}

// checkAPIResponse fails unless w is one of want or an OpenAI-shaped
// 4xx: never a 5xx, whatever the body.
func checkAPIResponse(t *testing.T, what string, body []byte, w *httptest.ResponseRecorder, want int) {
	t.Helper()
	if w.Code == want {
		return
	}
	if w.Code >= 500 || w.Code < 400 {
		t.Fatalf("%s %q: %d %s", what, body, w.Code, w.Body)
	}
	var e apiErr
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Type == "" || e.Error.Message == "" {
		t.Fatalf("%s %q: error body %s", what, body, w.Body)
	}
}

// FuzzDeploymentBody: any body to POST /v1/deployments creates a
// deployment (201, removed again at once) or is refused with an
// OpenAI-shaped 4xx; never a panic or a 5xx.
func FuzzDeploymentBody(f *testing.F) {
	for _, s := range []string{
		`{"model":"neuro-1-lite"}`,
		`{"model":"neuro-1-lite","device":"cpu","id":"fz.1","replicas":2,"max_batch_size":4,"precision":"int8"}`,
		`{"model":"neuro-1-lite","device":"loihi"}`,
		`{"model":"neuro-1-lite","device":"loihi","precision":"bfloat16"}`,
		`{"model":"neuro-1","device":"tpu","id":"a b"}`,
		`{"model":"neuro-1-lite","node":"n1"}`,
		`{"model":"neuro-1-lite","replicas":1e300,"max_batch_size":-1}`,
		`{"model":"neuro-1-lite","id":"` + strings.Repeat("x", 65) + `"}`,
		`{"model":null,"precision":8}`, `{"model":"neuro-1-lite","model":"x"}`, `[]`, `{`, "\xff", ``,
	} {
		f.Add([]byte(s))
	}
	s := newTestServer(f, newTestRuntime(f, nil, 2), &Options{MaxReplicas: 2, MaxBatchSize: 8})
	f.Fuzz(func(t *testing.T, body []byte) {
		w := do(s, "POST", "/v1/deployments", keyAlice, body)
		checkAPIResponse(t, "create", body, w, 201)
		if w.Code != 201 {
			return
		}
		var rec wire.Deployment
		if err := json.Unmarshal(w.Body.Bytes(), &rec); err != nil || rec.ID == "" || rec.OwnedBy != "alice" {
			t.Fatalf("create %q: record %s", body, w.Body)
		}
		if d := do(s, "DELETE", "/v1/deployments/"+rec.ID, keyAlice, nil); d.Code != 200 {
			t.Fatalf("delete %s: %d %s", rec.ID, d.Code, d.Body)
		}
	})
}

// FuzzRunBody: any body to POST /v1/deployments/{id}/run on a network's
// deployment runs (200) or is refused with an OpenAI-shaped 4xx, within
// the server's bounds; never a panic or a 5xx.
func FuzzRunBody(f *testing.F) {
	for _, s := range []string{
		`{"inputs":[[` + strings.Repeat("0.5,", 63) + `1]]}`,
		`{"inputs":[[[` + strings.Repeat("1,", 63) + `0],[` + strings.Repeat("0,", 63) + `1]]],"record":["spikes","membrane"],"seed":-9}`,
		`{"inputs":[[[0,1],[1,0]]],"timesteps":2}`,
		`{"inputs":[{"events":[[0,5],[3,7]],"timesteps":10}],"record":["membrane"]}`,
		`{"inputs":[{"events":[[0,64],[-1,1],[1e20,0]],"timesteps":4}]}`,
		`{"inputs":[[1e39]],"timesteps":0}`, `{"inputs":[[ ]]}`, `{"inputs":[[[ ]]]}`, `{"inputs":[{}]}`,
		`{"inputs":[],"model":"x"}`, `{"inputs":"seven"}`, `{"inputs":[null]}`, `{"record":[1]}`, `[`, ``,
	} {
		f.Add([]byte(s))
	}
	s := newTestServer(f, newTestRuntime(f, nil, 2), &Options{MaxRunSamples: 4, MaxRunTimesteps: 64, MaxRunValues: 1 << 12, MaxRecordedValues: 1 << 12})
	net := compileDigits(f, s, keyAlice)
	if w := do(s, "POST", "/v1/deployments", keyAlice, `{"model":"`+net+`","id":"fz-digits","max_batch_size":4}`); w.Code != 201 {
		f.Fatalf("deploy: %d %s", w.Code, w.Body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		w := do(s, "POST", "/v1/deployments/fz-digits/run", keyAlice, body)
		checkAPIResponse(t, "run", body, w, 200)
		if w.Code != 200 {
			return
		}
		var res wire.Run
		if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || len(res.Outputs) == 0 || len(res.Outputs) > 4 {
			t.Fatalf("run %q: response %s", body, w.Body)
		}
	})
}
