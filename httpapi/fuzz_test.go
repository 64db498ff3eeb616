package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

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
	f.Fuzz(func(t *testing.T, options string) {
		raw := json.RawMessage(options)
		if !json.Valid(raw) {
			return // decodeObject refuses the whole body first
		}
		_, iopts, ranges, e := parseCompileOptions(raw)
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
